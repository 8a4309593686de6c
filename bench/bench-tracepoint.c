/* SPDX-License-Identifier: MIT */
/*
 * bench-tracepoint.c - cost of a tracekit call site, disabled and enabled.
 *
 *   bench-tracepoint empty N          the loop alone
 *   bench-tracepoint disabled N       a site whose event is off
 *   bench-tracepoint enabled N T      T threads x N events (run it under
 *                                     `tracekit record` so they are on)
 *
 * Prints "ns_per_event X" (for T threads: each thread's own time per
 * event, the median thread) and "events N".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench-events.h"

static uint64_t per_thread;
static double thread_ns[64];
static pthread_barrier_t barrier;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *fire(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg;
	double start;

	pthread_barrier_wait(&barrier);
	start = now_ns();
	for (uint64_t i = 0; i < per_thread; i++)
		tk_trace(bench, event, (int64_t)i, (int64_t)idx, "hello world!");
	thread_ns[idx] = (now_ns() - start) / (double)per_thread;
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000;
	double start, ns;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "empty") || !strcmp(argv[1], "disabled")) {
		int site = !strcmp(argv[1], "disabled");

		start = now_ns();
		for (uint64_t i = 0; i < n; i++) {
			if (site)
				tk_trace(bench, event, (int64_t)i, 0, "hello world!");
			__asm__ __volatile__("" ::: "memory");
		}
		ns = (now_ns() - start) / (double)n;
		printf("ns_per_event %.3f\nevents %llu\n", ns, (unsigned long long)n);
		return 0;
	}
	if (!strcmp(argv[1], "enabled")) {
		unsigned t = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
		pthread_t th[64];

		if (t < 1 || t > 64)
			return 2;
		per_thread = n;
		pthread_barrier_init(&barrier, NULL, t);
		for (unsigned i = 0; i < t; i++)
			pthread_create(&th[i], NULL, fire, (void *)(uintptr_t)i);
		for (unsigned i = 0; i < t; i++)
			pthread_join(th[i], NULL);
		qsort(thread_ns, t, sizeof(double), cmp);
		printf("ns_per_event %.3f\nevents %llu\n", thread_ns[t / 2],
		       (unsigned long long)(n * t));
		return 0;
	}
	return 2;
}
