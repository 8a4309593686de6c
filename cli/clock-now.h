/* SPDX-License-Identifier: MIT */
/*
 * clock-now.h - the clock pairs of a trace made from what the kernel
 * holds now (show, extract): no recorder took them at the start.
 */
#ifndef TK_CLOCK_NOW_H
#define TK_CLOCK_NOW_H

#include "format/trace.h"

/* Fill @c for the event clock (the TSC, or CLOCK_MONOTONIC): a start
 * pair now and a stop pair 200 ms later, the rate measured between them.
 * Events stamped before the start convert as well (docs/format.md). */
void clock_now(struct tk_trace_clock *c);

#endif /* TK_CLOCK_NOW_H */
