/* SPDX-License-Identifier: MIT */
/*
 * bench-floor.c - what any recorder of a timestamped event must pay at
 * least on this machine, and its parts:
 *
 *   bench-floor floor N [T]      rdtsc, a 24-byte record (timestamp and two
 *                                64-bit values) stored at the thread's
 *                                position in a per-thread buffer, then the
 *                                new position published with a release
 *                                store (what a reader would poll)
 *   bench-floor rdtsc N          rdtsc alone
 *   bench-floor clock N          clock_gettime(CLOCK_MONOTONIC) alone
 *
 * The buffer is 2 MiB per thread (tracekit's default), pre-faulted; the
 * writer wraps to its start when full.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#define FLOOR_BUF (2u << 20)

struct floor_buf {
	char *pos;
	char *end;
	char *start;
	uint64_t *commit; /* published offset, read by a consumer */
};

static __thread struct floor_buf floor_tls;
static uint64_t floor_commit[64][8] __attribute__((aligned(64)));

static inline uint64_t floor_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static void floor_init(unsigned idx)
{
	char *b = aligned_alloc(4096, FLOOR_BUF);

	if (!b)
		abort();
	memset(b, 0, FLOOR_BUF); /* pre-fault */
	floor_tls.start = floor_tls.pos = b;
	floor_tls.end = b + FLOOR_BUF;
	floor_tls.commit = floor_commit[idx];
}

static inline void floor_event(uint64_t a, uint64_t b)
{
	struct floor_buf *f = &floor_tls;
	char *p = f->pos;
	uint64_t ts;

	if (__builtin_expect(p + 24 > f->end, 0))
		p = f->start;
	ts = floor_rdtsc();
	memcpy(p, &ts, 8);
	memcpy(p + 8, &a, 8);
	memcpy(p + 16, &b, 8);
	f->pos = p + 24;
	__atomic_store_n(f->commit, (uint64_t)(p + 24 - f->start), __ATOMIC_RELEASE);
}

static inline void floor_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	__asm__ __volatile__("" ::"r"(ts.tv_nsec));
}

#define BENCH_THREAD_INIT(idx) floor_init(idx)
#define BENCH_SITES(X)                                                       \
	X(floor, floor_event(i, idx))                                        \
	X(rdtsc, __asm__ __volatile__("" ::"r"(floor_rdtsc())))              \
	X(clock, floor_clock())
#include "bench-harness.h"
