/* SPDX-License-Identifier: MIT */
/*
 * bench-kgetppid.c - the kernel benchmark's workload (bench/kernel.py): a
 * system-call-heavy loop, nothing else.
 *
 *   bench-kgetppid CALLS
 *
 * Makes CALLS getppid() system calls (through syscall(2), so that no C
 * library answers from a cache) and times the loop with CLOCK_MONOTONIC.
 * Each call fires two kernel events when syscalls:sys_enter_getppid and
 * syscalls:sys_exit_getppid are enabled.  Prints:
 *
 *   pid PID
 *   calls N
 *   ns X              the loop's wall time
 *   ns_per_call X
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long long calls, i;
	double t0, t1;

	if (argc != 2 || (calls = strtoull(argv[1], NULL, 10)) == 0) {
		fprintf(stderr, "usage: bench-kgetppid CALLS\n");
		return 2;
	}
	t0 = now_ns();
	for (i = 0; i < calls; i++)
		syscall(SYS_getppid);
	t1 = now_ns();
	printf("pid %d\ncalls %llu\nns %.0f\nns_per_call %.3f\n", (int)getpid(), calls,
	       t1 - t0, (t1 - t0) / (double)calls);
	return 0;
}
