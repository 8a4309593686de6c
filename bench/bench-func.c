/* SPDX-License-Identifier: MIT */
/*
 * bench-func.c - the function tracer's benchmark program (bench/functrace.sh).
 *
 *   bench-func N     calls bench_leaf() N times in a loop and prints
 *                    "NS ns/call" (wall time of the loop / N)
 *
 * Built plain, with -fpatchable-function-entry=5 (tracekit, uftrace -P)
 * and with -pg (uftrace's mcount).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) long bench_leaf(long x)
{
	__asm__ __volatile__("" ::: "memory");
	return x + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, s = 0;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		s += bench_leaf(i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.2f ns/call (sum %ld)\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n,
	       s);
	return 0;
}
