/* SPDX-License-Identifier: MIT */
/*
 * tracekit/functrace.h - a program's hold on its own function tracer.
 *
 * `tracekit record -p function|function_graph` patches the entries of the
 * functions it selects when the program starts (or attaches) and unpatches
 * them when recording stops.  A program linked with libtracekit may pause
 * and resume that in between, around code it does not want traced.
 */
#ifndef TRACEKIT_FUNCTRACE_H
#define TRACEKIT_FUNCTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Patch again the entries the recording selected (also in objects loaded
 * since); returns how many functions are traced, or -ENOENT when no
 * recording asked for a function tracer. */
int tk_functrace_enable(void);

/* Put every entry back to its NOP; the recording goes on.  Returns 0 or
 * -ENOENT. */
int tk_functrace_disable(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_FUNCTRACE_H */
