/* SPDX-License-Identifier: MIT */
/* bench-lttng-tp.h - the benchmark's event for LTTng-UST: the same shape
 * as bench-events.h (two 64-bit integers and a string). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./bench-lttng-tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(bench, event,
	LTTNG_UST_TP_ARGS(int64_t, a, int64_t, b, const char *, s),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int64_t, a, a)
		lttng_ust_field_integer(int64_t, b, b)
		lttng_ust_field_string(s, s)))

#endif

#include <lttng/tracepoint-event.h>
