/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the event clock as the tools name it.
 *
 * User events are stamped by tk__clock() (tracekit/runtime.h): the TSC
 * where TK_CLOCK_TSC, else CLOCK_MONOTONIC in ns (clock.c).  Kernel
 * events recorded beside them are stamped by the tracefs trace_clock
 * that counts the same way, so that both merge by timestamp with no
 * conversion.
 */
#ifndef TK_COMMON_CLOCK_H
#define TK_COMMON_CLOCK_H

#include "tracekit/runtime.h"

/* The trace_clock of a trace stamped with the TSC, or with the monotonic
 * clock (struct tk_trace_clock's tsc). */
#define TK_KCLOCK_TSC "x86-tsc"
#define TK_KCLOCK_MONO "mono"

/* The trace_clock of the kernel instances this build records into. */
#if TK_CLOCK_TSC
#define TK_KINSTANCE_CLOCK TK_KCLOCK_TSC
#else
#define TK_KINSTANCE_CLOCK TK_KCLOCK_MONO
#endif

#endif /* TK_COMMON_CLOCK_H */
