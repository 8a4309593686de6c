/* SPDX-License-Identifier: MIT */
/*
 * bench-libcall.c - library calls through the PLT (bench/probes.sh).
 *
 *   bench-libcall N   calls strlen() on a short string N times, through
 *                     the program's PLT, and prints "NS ns/call"
 *
 * Built plain (uftrace record --force traces its library calls alone)
 * and with -fpatchable-function-entry=5 (tracekit hooks the PLT of
 * objects it traces; -l strlen selects that call only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* what the compiler cannot see through: strlen stays a call */
const char *volatile bench_str = "hello";

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	size_t s = 0;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		s += strlen(bench_str);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.2f ns/call (sum %zu)\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n,
	       s);
	return 0;
}
