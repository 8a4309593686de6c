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
 *   cpu_ns_per_call X the process's own CPU time (user + system) per call:
 *                     what the events cost where they are written, without
 *                     the time other tasks took the CPU away
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
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
	struct rusage ru;
	double t0, t1, cpu;

	if (argc != 2 || (calls = strtoull(argv[1], NULL, 10)) == 0) {
		fprintf(stderr, "usage: bench-kgetppid CALLS\n");
		return 2;
	}
	t0 = now_ns();
	for (i = 0; i < calls; i++)
		syscall(SYS_getppid);
	t1 = now_ns();
	getrusage(RUSAGE_SELF, &ru);
	cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
	printf("pid %d\ncalls %llu\nns %.0f\nns_per_call %.3f\ncpu_ns_per_call %.3f\n",
	       (int)getpid(), calls, t1 - t0, (t1 - t0) / (double)calls,
	       cpu / (double)calls);
	return 0;
}
