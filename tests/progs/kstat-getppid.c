/* SPDX-License-Identifier: MIT */
/*
 * kstat-getppid.c - test program for kernel events: exactly N getppid()
 * system calls between two user events.
 *
 *   prog-kstat-getppid [N] [SLEEP_MS] [all]
 *
 * Fires test:phase "start", makes N (default 10) getppid() calls (with
 * "all", N getpid() and N gettid() calls after them), sleeps
 * SLEEP_MS milliseconds if given (so that sched_switch shows it leaving
 * and coming back), fires test:phase "end", and prints "ppid P calls N".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "test-events.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10;
	long sleep_ms = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	int all = argc > 3 && !strcmp(argv[3], "all");
	long ppid = 0;

	tk_trace(test, phase, "start");
	/* syscall(): the C library must not answer from a cache */
	for (long i = 0; i < n; i++)
		ppid = syscall(SYS_getppid);
	for (long i = 0; all && i < n; i++)
		syscall(SYS_getpid);
	for (long i = 0; all && i < n; i++)
		syscall(SYS_gettid);
	if (sleep_ms > 0) {
		struct timespec ts = { sleep_ms / 1000, sleep_ms % 1000 * 1000000 };

		nanosleep(&ts, NULL);
	}
	tk_trace(test, phase, "end");
	printf("ppid %ld calls %ld\n", ppid, n);
	return 0;
}
