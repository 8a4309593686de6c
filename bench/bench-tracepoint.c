/* SPDX-License-Identifier: MIT */
/*
 * bench-tracepoint.c - a tracekit call site, in the harness's loop.
 *
 *   bench-tracepoint empty N             the loop alone
 *   bench-tracepoint site N [T [PACE]]   the bench:event site (off unless
 *                                        run under `tracekit record`)
 *
 * See bench-harness.h for the output.  Built twice by meson: as is (the
 * library's default site: a static key where tracekit has them) and with
 * -DTK_NO_STATIC_KEYS (the predicted branch on the event's enabled byte).
 * The line "site_kind static-key|branch" tells which one this binary has.
 */
#define _GNU_SOURCE
#include "bench-events.h"

#if defined(TK_HAVE_STATIC_KEYS) && !defined(TK_NO_STATIC_KEYS)
#define BENCH_SITE_KIND "static-key"
#else
#define BENCH_SITE_KIND "branch"
#endif

#define BENCH_INFO "site_kind " BENCH_SITE_KIND
#define BENCH_SITES(X)                                                       \
	X(site, tk_trace(bench, event, (int64_t)i, (int64_t)idx, "hello world!"))
#include "bench-harness.h"
