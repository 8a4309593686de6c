/* SPDX-License-Identifier: MIT */
/* bench-events.h - the benchmark's event: two 64-bit integers and a
 * 12-character string, the shape used to compare tracers. */
#ifndef BENCH_EVENTS_H
#define BENCH_EVENTS_H

#include <tracekit/tracekit.h>

TK_EVENT(bench, event,
	TK_PROTO(int64_t a, int64_t b, const char *s),
	TK_ARGS(a, b, s),
	TK_FIELDS(
		tk_field_int(int64_t, a, a)
		tk_field_int(int64_t, b, b)
		tk_field_string(s, s)),
	TK_PRINT("a=%ld b=%ld s=%s", a, b, s))

#endif
