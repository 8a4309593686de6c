/* SPDX-License-Identifier: MIT */
/*
 * fork.c - test program: events around fork().
 *
 *   prog-fork [-a A] [-b B] [-c M] [-k K] [-t] [-w F]
 *
 *   -a A   events the parent fires before forking (default 100)
 *   -b B   events the parent fires after the children exited (default 100)
 *   -c M   events each child fires before it exits (default 50)
 *   -k K   children, forked one after the other (default 1)
 *   -w F   waits: the parent writes "ready PID" to F and waits for
 *          SIGUSR1 before it forks; each child fires half its events,
 *          writes "half PID" to F.half, waits for F.half to be removed,
 *          then fires the rest
 *   -t     threads: the forking is done by a second thread ("forker")
 *          while a third one ("bg") fires fork:bg events without pause
 *          (1 us apart) until the last child has been waited for
 *
 * The parent's events are fork:parent with seq 0..A+B-1 (phase "before"
 * or "after"); a child renames itself "fork-child" (PR_SET_NAME) and fires
 * fork:child with its index and seq 0..M-1, then exits.  The parent prints
 *
 *   parent PID TID COUNT    (the thread that forks, events it fired)
 *   child PID STATUS        (each child, its exit status as waitpid saw it)
 *   bg TID COUNT            (with -t)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <tracekit/tracekit.h>

TK_EVENT(fork, parent,
	TK_PROTO(uint64_t seq, const char *phase),
	TK_ARGS(seq, phase),
	TK_FIELDS(
		tk_field_int(uint64_t, seq, seq)
		tk_field_string(phase, phase)),
	TK_PRINT("seq=%lu phase=%s", seq, phase))

TK_EVENT(fork, child,
	TK_PROTO(uint32_t child, uint64_t seq),
	TK_ARGS(child, seq),
	TK_FIELDS(
		tk_field_int(uint32_t, child, child)
		tk_field_int(uint64_t, seq, seq)),
	TK_PRINT("child=%u seq=%lu", child, seq))

TK_EVENT(fork, bg,
	TK_PROTO(uint64_t seq, uint64_t check),
	TK_ARGS(seq, check),
	TK_FIELDS(
		tk_field_int(uint64_t, seq, seq)
		tk_field_int(uint64_t, check, check)),
	TK_PRINT("seq=%lu check=%lu", seq, check))

static unsigned before = 100, after = 100, per_child = 50, children = 1;
static int bg_stop;
static uint64_t bg_count;
static pid_t bg_tid;
static const char *wait_file;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *bg(void *arg)
{
	uint64_t i;

	(void)arg;
	pthread_setname_np(pthread_self(), "bg");
	__atomic_store_n(&bg_tid, gettid_(), __ATOMIC_RELEASE);
	for (i = 0; !__atomic_load_n(&bg_stop, __ATOMIC_RELAXED); i++) {
		uint64_t until = now_ns() + 1000;

		tk_trace(fork, bg, i, i * 7 + 3);
		while (now_ns() < until) /* 1 us apart: the buffer keeps up */
			;
	}
	bg_count = i;
	return NULL;
}

/* Write "WORD PID\n" to @path (written whole, then renamed there). */
static void say(const char *path, const char *word)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%s %d\n", word, (int)getpid()) < 0 || fclose(f) ||
	    rename(tmp, path)) {
		perror(path);
		exit(3);
	}
}

/* -w: half the child's events, then wait for the test to remove F.half. */
static void child_wait(unsigned k, unsigned *i)
{
	char half[4096];

	for (; *i < per_child / 2; (*i)++)
		tk_trace(fork, child, k, *i);
	snprintf(half, sizeof(half), "%s.half", wait_file);
	say(half, "half");
	while (access(half, F_OK) == 0)
		usleep(1000);
}

static void *forker(void *arg)
{
	uint64_t seq = 0;
	char line[64 * 1024];
	size_t used = 0;

	if (arg) /* before its first event: the stream takes the name */
		pthread_setname_np(pthread_self(), (const char *)arg);
	for (unsigned i = 0; i < before; i++)
		tk_trace(fork, parent, seq++, "before");
	if (wait_file) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		say(wait_file, "ready");
		sigwait(&set, &sig);
	}
	for (unsigned k = 0; k < children; k++) {
		pid_t pid;
		int status = -1;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			exit(3);
		}
		if (pid == 0) {
			unsigned i = 0;

			prctl(PR_SET_NAME, "fork-child", 0, 0, 0);
			if (wait_file)
				child_wait(k, &i);
			for (; i < per_child; i++)
				tk_trace(fork, child, k, i);
			exit(0);
		}
		if (waitpid(pid, &status, 0) != pid)
			status = -1;
		if (used < sizeof(line) - 64)
			used += (size_t)snprintf(line + used, sizeof(line) - used,
						 "child %d %d\n", (int)pid, status);
	}
	for (unsigned i = 0; i < after; i++)
		tk_trace(fork, parent, seq++, "after");
	printf("parent %d %d %llu\n", (int)getpid(), (int)gettid_(),
	       (unsigned long long)seq);
	fputs(line, stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 0, c;
	pthread_t tb, tf;

	while ((c = getopt(argc, argv, "a:b:c:k:tw:")) != -1) {
		switch (c) {
		case 'a': before = (unsigned)atoi(optarg); break;
		case 'b': after = (unsigned)atoi(optarg); break;
		case 'c': per_child = (unsigned)atoi(optarg); break;
		case 'k': children = (unsigned)atoi(optarg); break;
		case 't': threads = 1; break;
		case 'w': wait_file = optarg; break;
		default: return 2;
		}
	}
	if (!threads) {
		forker(NULL);
		fflush(stdout);
		return 0;
	}
	if (pthread_create(&tb, NULL, bg, NULL) != 0)
		return 3;
	/* Fork only once bg is firing. */
	while (!__atomic_load_n(&bg_tid, __ATOMIC_ACQUIRE))
		usleep(100);
	usleep(1000);
	if (pthread_create(&tf, NULL, forker, (void *)"forker") != 0)
		return 3;
	pthread_join(tf, NULL);
	__atomic_store_n(&bg_stop, 1, __ATOMIC_RELAXED);
	pthread_join(tb, NULL);
	printf("bg %d %llu\n", (int)bg_tid, (unsigned long long)bg_count);
	fflush(stdout);
	return 0;
}
