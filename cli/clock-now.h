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

/* The environment variable that forces the event clock: "mono"
 * (CLOCK_MONOTONIC) or "tsc"; read once, when a recording or an instance
 * starts. */
#define TK_CLOCK_ENV "TRACEKIT_CLOCK"

/* Which clock to stamp events with: the TSC (*tsc true) where this build
 * has it and it is usable here (the CPU says constant_tsc and nonstop_tsc
 * in /proc/cpuinfo, or the kernel's clocksource is the TSC), else
 * CLOCK_MONOTONIC, with why[len] saying why not (empty when the TSC is
 * used, or the build has none); TRACEKIT_CLOCK decides when set.
 * Returns -1 with the error in why[] when TRACEKIT_CLOCK is neither. */
int clock_choose(bool *tsc, char *why, size_t len);

#endif /* TK_CLOCK_NOW_H */
