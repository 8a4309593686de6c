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
 * nest, and strictly, as viewers need them to.  A thread keeps at most
 * 4,096 calls open (four times what the function tracer nests): an
 * entry past them ends the innermost, unfinished.
 *
 * Every view of the function tracer's calls is made from this one walk:
 * report's function graph and --profile, convert's Chrome slices and its
 * flame graphs' self times (folded, svg), so they count the same calls
 * with the same times (tk_calls_ns).
 */
#ifndef TK_EXPORT_CALLS_H
#define TK_EXPORT_CALLS_H

#include <stdbool.h>
#include <stdint.h>
#include "format/stream-read.h"
#include "format/trace.h"

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
	uint64_t off_cpu_ns; /* its thread's time off a CPU while it was the
			      * innermost call (flame_source.c --on-cpu) */
	void *user;        /* the format's */
};

struct tk_calls;
struct tk_symbols;

/* A call has ended at @end_ts (@finished: by its own exit). */
typedef int (*tk_call_closed_fn)(void *ctx, const struct tk_trace_stream *s,
				 const struct tk_call *c, uint64_t end_ts,
				 bool finished);

/* Calls of trace @t; @closed is told of each call that ends.  Names come
 * from @syms (the caller's, kept until tk_calls_free) or, when NULL, from
 * the trace's symbols/, loaded here.  NULL when out of memory or the
 * symbols cannot be read. */
struct tk_calls *tk_calls_new(const struct tk_trace *t, struct tk_symbols *syms,
			      tk_call_closed_fn closed, void *ctx);
void tk_calls_free(struct tk_calls *c);

/* tk_ft_kind_of(@ev), remembered (a conversion asks once per event). */
enum tk_ft_kind tk_calls_kind(struct tk_calls *c, const struct tk_event_info *ev);

/* An entry / exit on stream @rd (its current event).  tk_calls_entry
 * gives the new open call (for its user field), NULL if out of memory;
 * tk_calls_exit returns <0 when @closed failed. */
struct tk_call *tk_calls_entry(struct tk_calls *c, const struct tk_stream_reader *rd);
int tk_calls_exit(struct tk_calls *c, const struct tk_stream_reader *rd);

/* The innermost open call of stream @s, NULL if none. */
struct tk_call *tk_calls_top(struct tk_calls *c, const struct tk_trace_stream *s);

/* The open calls of @rd's stream, outermost first. */
const struct tk_call *tk_calls_open(const struct tk_calls *c,
				    const struct tk_trace_stream *s, unsigned *n);

/* Note @ts as the stream's latest event (where unfinished calls end). */
void tk_calls_seen(struct tk_calls *c, const struct tk_trace_stream *s,
		   uint64_t ts);

/* The time of call @call, ended at @end_ts, in nanoseconds, and in
 * *self_ns without the time of the calls it made: the difference of its
 * ends' CLOCK_MONOTONIC times, the times report prints (not the
 * difference in clock ticks converted, which can be 1 ns shorter: then a
 * call and the calls it made would not add up).  Wall time: a thread
 * that slept or waited for a CPU inside a call counts that time in it. */
uint64_t tk_calls_ns(const struct tk_calls *c, const struct tk_call *call,
		     uint64_t end_ts, uint64_t *self_ns);

/* End every call still open. */
int tk_calls_finish(struct tk_calls *c);

/* The name of function @addr of process @pid; of the function a return
 * address @ret is in.  Unknown: "0x..." (valid until the next call). */
const char *tk_calls_name(struct tk_calls *c, uint32_t pid, uint64_t addr);
const char *tk_calls_caller(struct tk_calls *c, uint32_t pid, uint64_t ret);
/* The trace's symbols the names come from (owned by @c). */
struct tk_symbols *tk_calls_symbols(struct tk_calls *c);

#endif /* TK_EXPORT_CALLS_H */
