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

/**
 * tk_functrace_enable() - Trace the selected functions again.
 *
 * Patches again the entries the recording selected (-l, -n, -g), in the
 * objects loaded since as well.
 *
 * Context: any thread, not a signal handler (it takes a lock).
 * Return: how many function entries are traced, or -ENOENT when no
 * recording asked for a function tracer.
 */
int tk_functrace_enable(void);

/**
 * tk_functrace_disable() - Pause the function tracer.
 *
 * Puts every entry back to its NOP; the recording goes on with the other
 * events.
 *
 * Context: any thread, not a signal handler (it takes a lock).
 * Return: 0, or -ENOENT when no recording asked for a function tracer.
 */
int tk_functrace_disable(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_FUNCTRACE_H */
