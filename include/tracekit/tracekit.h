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

/*
 * Record events matching @pattern ("provider:event", globs, or "all") into
 * the session's buffers, or stop recording them.  Without a recording
 * session the events are enabled for probes only.  Returns the number of
 * events matched, or -errno.
 */
int tk_enable(const char *pattern);
int tk_disable(const char *pattern);

/* Library version, "MAJOR.MINOR.PATCH". */
const char *tk_version(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_TRACEKIT_H */
