/* SPDX-License-Identifier: MIT */
/*
 * report-graph.h - how tracekit report shows the function tracer's events
 * (ftrace:*): function lines "func <-caller", function_graph as ftrace
 * draws it, user stacks, and the --profile table (gathered here, kept
 * in report-profile.c).
 */
#ifndef TK_REPORT_GRAPH_H
#define TK_REPORT_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/stream-read.h"
#include "format/trace.h"

struct ftrace_view;

/* A view of trace @t (symbols loaded from its directory); @profile: only
 * gather the per-function table.  NULL on allocation failure. */
struct ftrace_view *ftrace_view_open(const struct tk_trace *t, bool profile);

/* Whether @ev is one of the function tracer's events. */
bool ftrace_view_owns(const struct tk_event_info *ev);

/* Show (or count) the event @rd is on; @prefix[0..plen) is the line's
 * start ("comm-tid [cpu] time: ").  May move @rd one event further (the
 * exit of a leaf call, shown on the entry's line). */
void ftrace_view_event(struct ftrace_view *v, struct tk_stream_reader *rd,
		       const char *prefix, size_t plen);

/* Print the profile if asked for, and free. */
void ftrace_view_close(struct ftrace_view *v);

#endif /* TK_REPORT_GRAPH_H */
