/* SPDX-License-Identifier: MIT */
/*
 * calls.h - the function tracer's events (ftrace:*, docs/functrace.md)
 * as calls: per thread, the calls open at each moment, each closed by its
 * exit with its duration, or left unfinished.
 *
 * An entry at depth d ends the open calls at depth >= d: they left by
 * longjmp or an exception, or their exits were lost; they end by that
 * entry's time, marked unfinished.  An exit at depth d ends the calls
 * above d the same way, then its own call.  What is still open after the
 * last event ends by its thread's last event, unfinished.  Calls ended
 * together end a nanosecond apart, the innermost first.  So calls always
 * nest, and strictly, as viewers need them to.
 */
#ifndef TK_EXPORT_CALLS_H
#define TK_EXPORT_CALLS_H

#include <stdbool.h>
#include <stdint.h>
#include "export.h"

enum tk_ft_kind {
	TK_FT_NONE,     /* not the function tracer's */
	TK_FT_FUNCTION, /* ftrace:function {ip, parent_ip} */
	TK_FT_ENTRY,    /* ftrace:funcgraph_entry {func, depth} */
	TK_FT_EXIT,     /* ftrace:funcgraph_exit {func, depth} */
	TK_FT_STACK,    /* ftrace:user_stack {stack}: callers of the last entry */
	TK_FT_EVENT_STACK, /* ftrace:event_stack {stack}: the frame-pointer
			    * walk after a user event (record --ustack) */
};

enum tk_ft_kind tk_ft_kind_of(const struct tk_event_info *ev);

struct tk_call {
	uint64_t func;
	uint64_t ts;       /* entry */
	uint32_t depth;
	uint64_t child_ns; /* time in the calls it made */
	void *user;        /* the format's */
};

struct tk_calls;
struct tk_symbols;

/* A call has ended at @end_ts (@finished: by its own exit). */
typedef int (*tk_call_closed_fn)(void *ctx, const struct tk_trace_stream *s,
				 const struct tk_call *c, uint64_t end_ts,
				 bool finished);

/* Calls of @x's trace; @closed is told of each call that ends.  NULL when
 * out of memory.  Symbols come from the trace's symbols/. */
struct tk_calls *tk_calls_new(struct tk_export *x, tk_call_closed_fn closed,
			      void *ctx);
void tk_calls_free(struct tk_calls *c);

/* tk_ft_kind_of(@ev), remembered (a conversion asks once per event). */
enum tk_ft_kind tk_calls_kind(struct tk_calls *c, const struct tk_event_info *ev);

/* An entry / exit on stream @rd (its current event).  tk_calls_entry
 * gives the new open call (for its user field), NULL if out of memory;
 * tk_calls_exit returns <0 when @closed failed. */
struct tk_call *tk_calls_entry(struct tk_calls *c, const struct tk_stream_reader *rd);
int tk_calls_exit(struct tk_calls *c, const struct tk_stream_reader *rd);

/* The open calls of @rd's stream, outermost first. */
const struct tk_call *tk_calls_open(const struct tk_calls *c,
				    const struct tk_trace_stream *s, unsigned *n);

/* Note @ts as the stream's latest event (where unfinished calls end). */
void tk_calls_seen(struct tk_calls *c, const struct tk_trace_stream *s,
		   uint64_t ts);

/* End every call still open. */
int tk_calls_finish(struct tk_calls *c);

/* The name of function @addr of process @pid; of the function a return
 * address @ret is in.  Unknown: "0x..." (valid until the next call). */
const char *tk_calls_name(struct tk_calls *c, uint32_t pid, uint64_t addr);
const char *tk_calls_caller(struct tk_calls *c, uint32_t pid, uint64_t ret);
/* The trace's symbols the names come from (owned by @c). */
struct tk_symbols *tk_calls_symbols(struct tk_calls *c);

#endif /* TK_EXPORT_CALLS_H */
