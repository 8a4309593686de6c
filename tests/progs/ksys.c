/* SPDX-License-Identifier: MIT */
/*
 * ksys.c - test program for kernel events: user events around system
 * calls and sleeps the tests can count exactly.
 *
 *   prog-ksys [-n N] [-s MS] [-f] [-p US] [-c FILE] [-r FILE]
 *
 * Everything below runs in one worker thread, so that its system calls
 * are exactly these (the main thread's include the runtime's own, such as
 * the sockets of its handshake with the recorder):
 *
 *   -n N      kb:begin, then exactly N getppid() system calls, then kb:end
 *             (default 0: none of the three)
 *   -s MS     kb:sleep, then a sleep of MS milliseconds, then kb:woke
 *   -f        forever: kb:tick(seq), then one getppid(), until killed
 *             (after -n and -s)
 *   -p US     with -f, sleep US microseconds after each getppid()
 *   -c FILE   with -f, after each getppid() store the number of ticks done
 *             in FILE (8 bytes, shared mapping): what it has committed,
 *             readable after the program is killed
 *   -r FILE   write "ready PID TID" to FILE before -f's loop starts
 *
 * Prints "pid PID", "ppid PPID", "tid TID" (the worker's) and "tasks
 * TID..." (every thread of the process once the worker runs) first
 * (stdout, flushed).  getppid() is made with syscall(2), so that no C
 * library can answer it from a cache.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <tracekit/tracekit.h>
#include "counter.h"

/* kb:NAME with one integer field. */
#define KB_EVENT(name, type, field, fmt)                                      \
	TK_EVENT(kb, name,                                                    \
		TK_PROTO(type field),                                         \
		TK_ARGS(field),                                               \
		TK_FIELDS(tk_field_int(type, field, field)),                  \
		TK_PRINT(#field "=" fmt, field))

KB_EVENT(begin, uint64_t, n, "%lu")
KB_EVENT(end, uint64_t, n, "%lu")
KB_EVENT(sleep, uint32_t, ms, "%u")
KB_EVENT(woke, uint32_t, ms, "%u")
KB_EVENT(tick, uint64_t, seq, "%lu")

static uint64_t n;
static unsigned ms, pause_us;
static int forever;
static const char *ready;
static volatile uint64_t *committed;

static void *work(void *arg)
{
	int tid = (int)syscall(SYS_gettid);
	uint64_t i;

	(void)arg;
	printf("tid %d\n", tid);
	fflush(stdout);
	if (n) {
		tk_trace(kb, begin, n);
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
		tk_trace(kb, end, n);
	}
	if (ms) {
		struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

		tk_trace(kb, sleep, ms);
		nanosleep(&ts, NULL);
		tk_trace(kb, woke, ms);
	}
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (!f)
			exit(3);
		fprintf(f, "ready %d %d\n", (int)getpid(), tid);
		fclose(f);
	}
	for (i = 0; forever; i++) {
		tk_trace(kb, tick, i);
		syscall(SYS_getppid);
		if (committed)
			*committed = i + 1;
		if (pause_us)
			usleep(pause_us);
	}
	return NULL;
}

/* "tasks TID...": every thread of the process (the runtime's too). */
static void print_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char line[1024];
	size_t len = snprintf(line, sizeof(line), "tasks");

	while (d && (e = readdir(d)) && len < sizeof(line) - 16)
		if (e->d_name[0] != '.')
			len += snprintf(line + len, sizeof(line) - len, " %s", e->d_name);
	if (d)
		closedir(d);
	printf("%s\n", line);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	pthread_t th;
	int c;

	while ((c = getopt(argc, argv, "n:s:fp:c:r:")) != -1) {
		switch (c) {
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 's': ms = (unsigned)atoi(optarg); break;
		case 'f': forever = 1; break;
		case 'p': pause_us = (unsigned)atoi(optarg); break;
		case 'c': committed = map_counter(optarg); break;
		case 'r': ready = optarg; break;
		default: return 2;
		}
	}
	printf("pid %d\nppid %d\n", (int)getpid(), (int)getppid());
	fflush(stdout);
	if (pthread_create(&th, NULL, work, NULL) != 0)
		return 3;
	print_tasks();
	pthread_join(th, NULL);
	return 0;
}
