/* SPDX-License-Identifier: MIT */
/*
 * bench-ustack.c - events fired DEPTH frames deep (bench/probes.sh, part
 * C): what the user stack (record --ustack) adds to each.
 *
 *   bench-ustack syscall N DEPTH   DEPTH nested calls, then N getppid()
 *                                  system calls (a kernel event each)
 *   bench-ustack event N DEPTH     the same, then N bench:event (a user
 *                                  event each)
 *
 * Built with frame pointers and no sibling calls (bench/meson.build), so
 * that every level is a frame the walks follow.  Prints "NS ns/call".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "bench-events.h"

static long n_calls;
static int user_events;

__attribute__((noinline)) static long nest(int depth)
{
	struct timespec a, b;
	volatile long keep = 0;

	if (depth > 1)
		return nest(depth - 1) + keep;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n_calls; i++) {
		if (user_events)
			tk_trace(bench, event, i, depth, "hello world!");
		else
			syscall(SYS_getppid);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.2f ns/call\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) /
		       (double)n_calls);
	return keep;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "syscall") && strcmp(argv[1], "event"))) {
		fprintf(stderr, "usage: bench-ustack syscall|event N DEPTH\n");
		return 2;
	}
	user_events = !strcmp(argv[1], "event");
	n_calls = atol(argv[2]);
	return (int)nest(atoi(argv[3]));
}
