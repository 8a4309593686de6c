/* SPDX-License-Identifier: MIT */
/*
 * tracekit/tracekit.h - the instrumentation API of libtracekit.
 *
 * Include this header, define events with TK_EVENT (tracepoint.h) or use
 * tk_mark (marker.h), link with `pkg-config --libs tracekit`.  Events are
 * turned on by `tracekit record`, or from the program with tk_enable().
 */
#ifndef TRACEKIT_TRACEKIT_H
#define TRACEKIT_TRACEKIT_H

#include "runtime.h"
#include "tracepoint.h"
#include "marker.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * tk_enable() - Record the events a pattern names, from the program itself.
 * @pattern: "provider:event", a glob in either part ("app:req_*"), a
 *	provider ("app") or "all".
 *
 * The events are recorded into the session's buffers while a recorder is
 * attached; without one they are switched on for their probes only.  The
 * rule also applies to events of objects loaded later.
 *
 * Context: any thread, not a signal handler (it takes the registry lock).
 * Return: the number of events the pattern matches now, -EINVAL for a
 * NULL @pattern, or -ENOMEM.
 */
int tk_enable(const char *pattern);

/**
 * tk_disable() - Stop recording the events a pattern names.
 * @pattern: as for tk_enable(); it also removes every rule of tk_enable()
 *	that it covers ("app:*" removes "app:req").
 *
 * Rules a recorder set are not touched.
 *
 * Context: any thread, not a signal handler (it takes the registry lock).
 * Return: the number of events the pattern matches, or -EINVAL.
 */
int tk_disable(const char *pattern);

/**
 * tk_version() - The library's version.
 *
 * Return: a static string, "MAJOR.MINOR.PATCH".
 */
const char *tk_version(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_TRACEKIT_H */
