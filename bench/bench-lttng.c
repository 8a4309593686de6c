/* SPDX-License-Identifier: MIT */
/*
 * bench-lttng.c - an LTTng-UST tracepoint, in the harness's loop.
 *
 *   bench-lttng site N [T [PACE]]
 *
 * The event bench:event records nothing unless an lttng session enabled
 * it before the program started.  Build (bench/run does):
 *   cc -O2 -I bench bench-lttng.c bench-lttng-tp.c -llttng-ust -ldl -lpthread
 */
#define _GNU_SOURCE
#include "bench-lttng-tp.h"

#define BENCH_SITES(X)                                                       \
	X(site, lttng_ust_tracepoint(bench, event, (int64_t)i, (int64_t)idx, \
				     "hello world!"))
#include "bench-harness.h"
