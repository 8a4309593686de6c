/* SPDX-License-Identifier: MIT */
/*
 * calls.c - the function tracer's calls per thread (calls.h).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "calls.h"
#include "format/symbols.h"

/* Open calls a thread keeps at most.  The function tracer records at
 * most 1,024 nested frames (lib/functrace/frames.h); a trace deeper than
 * this was made by something else (or scribbled over), and an entry
 * past it ends the innermost open call, as if its exit were lost: the
 * memory stays bounded, and so does the length of a folded stack. */
#define MAX_OPEN 4096

struct thread_calls {
	struct tk_call *call;
	unsigned n, cap;
	uint64_t last_ts;
};

#define NAME_CACHE 4096 /* a power of two */

struct tk_calls {
	const struct tk_trace *t;
	bool own_syms;
	tk_call_closed_fn closed;
	void *ctx;
	struct tk_symbols *syms;
	struct thread_calls *thread; /* per stream of the trace */
	struct {
		uint32_t pid;
		uint64_t addr;
		const char *name;
	} cache[NAME_CACHE];
	struct {
		const struct tk_event_info *ev;
		enum tk_ft_kind kind;
	} kinds[64];
	char num[32];
};

enum tk_ft_kind tk_ft_kind_of(const struct tk_event_info *ev)
{
	if (strcmp(ev->provider, "ftrace"))
		return TK_FT_NONE;
	if (!strcmp(ev->name, "function") && ev->nfields == 2)
		return TK_FT_FUNCTION;
	if (!strcmp(ev->name, "funcgraph_entry") && ev->nfields == 2)
		return TK_FT_ENTRY;
	if (!strcmp(ev->name, "funcgraph_exit") && ev->nfields == 2)
		return TK_FT_EXIT;
	if (!strcmp(ev->name, "user_stack") && ev->nfields == 1 &&
	    ev->fields[0].kind == TK_KIND_BYTES)
		return TK_FT_STACK;
	if (!strcmp(ev->name, "event_stack") && ev->nfields == 1 &&
	    ev->fields[0].kind == TK_KIND_BYTES)
		return TK_FT_EVENT_STACK;
	return TK_FT_NONE;
}

enum tk_ft_kind tk_calls_kind(struct tk_calls *c, const struct tk_event_info *ev)
{
	unsigned h = (unsigned)((uintptr_t)ev >> 4) & 63;

	if (c->kinds[h].ev != ev) {
		c->kinds[h].ev = ev;
		c->kinds[h].kind = tk_ft_kind_of(ev);
	}
	return c->kinds[h].kind;
}

struct tk_calls *tk_calls_new(const struct tk_trace *t, struct tk_symbols *syms,
			      tk_call_closed_fn closed, void *ctx)
{
	struct tk_calls *c = calloc(1, sizeof(*c));
	char err[256];

	if (!c)
		return NULL;
	c->t = t;
	c->closed = closed;
	c->ctx = ctx;
	c->syms = syms;
	c->own_syms = !syms;
	c->thread = calloc(t->nstreams + 1, sizeof(*c->thread));
	if (!c->thread ||
	    (!syms && tk_symbols_load(t->dir, &c->syms, err, sizeof(err)) < 0)) {
		tk_calls_free(c);
		return NULL;
	}
	return c;
}

void tk_calls_free(struct tk_calls *c)
{
	if (!c)
		return;
	for (unsigned i = 0; c->thread && i < c->t->nstreams; i++)
		free(c->thread[i].call);
	free(c->thread);
	if (c->own_syms)
		tk_symbols_free(c->syms);
	free(c);
}

static struct thread_calls *thread_of(struct tk_calls *c,
				      const struct tk_trace_stream *s)
{
	return &c->thread[s - c->t->streams];
}

const struct tk_call *tk_calls_open(const struct tk_calls *c,
				    const struct tk_trace_stream *s, unsigned *n)
{
	const struct thread_calls *t = &c->thread[s - c->t->streams];

	*n = t->n;
	return t->call;
}

struct tk_call *tk_calls_top(struct tk_calls *c, const struct tk_trace_stream *s)
{
	struct thread_calls *t = thread_of(c, s);

	return t->n ? &t->call[t->n - 1] : NULL;
}

void tk_calls_seen(struct tk_calls *c, const struct tk_trace_stream *s,
		   uint64_t ts)
{
	thread_of(c, s)->last_ts = ts;
}

uint64_t tk_calls_ns(const struct tk_calls *c, const struct tk_call *call,
		     uint64_t end_ts, uint64_t *self_ns)
{
	uint64_t ns = tk_clock_to_mono(&c->t->clock, end_ts) -
		      tk_clock_to_mono(&c->t->clock, call->ts);

	if (self_ns)
		*self_ns = ns > call->child_ns ? ns - call->child_ns : 0;
	return ns;
}

/* End the top call of @t at @ts. */
static int close_top(struct tk_calls *c, const struct tk_trace_stream *s,
		     struct thread_calls *t, uint64_t ts, bool finished)
{
	struct tk_call *call = &t->call[--t->n];
	uint64_t end = ts > call->ts ? ts : call->ts;

	if (t->n)
		t->call[t->n - 1].child_ns += tk_calls_ns(c, call, end, NULL);
	return c->closed(c->ctx, s, call, end, finished);
}

/* End the calls above @keep open calls, all left unfinished by time @ts:
 * the innermost first, a nanosecond apart, the outermost at @ts - @gap
 * steps (viewers order ends that tie by chance, and may get a nesting
 * wrong). */
static int close_above(struct tk_calls *c, const struct tk_trace_stream *s,
		       struct thread_calls *t, unsigned keep, uint64_t ts, unsigned gap)
{
	const struct tk_trace_clock *clk = &c->t->clock;
	uint64_t step = clk->tsc && clk->freq > 1000000000u
				? (clk->freq + 999999999u) / 1000000000u : 1;

	while (t->n > keep) {
		uint64_t back = (uint64_t)(t->n - keep - 1 + gap) * step;
		int ret = close_top(c, s, t, ts > back ? ts - back : 0, false);

		if (ret < 0)
			return ret;
	}
	return 0;
}

struct tk_call *tk_calls_entry(struct tk_calls *c, const struct tk_stream_reader *rd)
{
	struct thread_calls *t = thread_of(c, rd->stream);
	uint32_t depth = (uint32_t)rd->values[1].u;

	unsigned keep = t->n;

	t->last_ts = rd->ts;
	while (keep && t->call[keep - 1].depth >= depth)
		keep--;
	if (close_above(c, rd->stream, t, keep, rd->ts, 0) < 0 ||
	    (t->n >= MAX_OPEN && close_above(c, rd->stream, t, t->n - 1, rd->ts, 0) < 0))
		return NULL;
	if (t->n == t->cap) {
		unsigned cap = t->cap ? 2 * t->cap : 64;
		struct tk_call *grown = realloc(t->call, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		t->call = grown;
		t->cap = cap;
	}
	t->call[t->n] = (struct tk_call){ .func = rd->values[0].u, .ts = rd->ts, .depth = depth };
	return &t->call[t->n++];
}

int tk_calls_exit(struct tk_calls *c, const struct tk_stream_reader *rd)
{
	struct thread_calls *t = thread_of(c, rd->stream);
	uint32_t depth = (uint32_t)rd->values[1].u;
	unsigned keep = t->n;
	bool mine;
	int ret;

	t->last_ts = rd->ts;
	while (keep && t->call[keep - 1].depth > depth)
		keep--;
	/* an exit whose entry was not recorded ends nothing */
	mine = keep && t->call[keep - 1].depth == depth &&
	       t->call[keep - 1].func == rd->values[0].u;
	ret = close_above(c, rd->stream, t, keep, rd->ts, mine);
	if (ret < 0 || !mine)
		return ret;
	return close_top(c, rd->stream, t, rd->ts, true);
}

int tk_calls_finish(struct tk_calls *c)
{
	for (unsigned i = 0; i < c->t->nstreams; i++) {
		int ret = close_above(c, &c->t->streams[i], &c->thread[i], 0,
				      c->thread[i].last_ts, 0);

		if (ret < 0)
			return ret;
	}
	return 0;
}

const char *tk_calls_name(struct tk_calls *c, uint32_t pid, uint64_t addr)
{
	unsigned h = (unsigned)((addr ^ pid) * 0x9e3779b97f4a7c15ull >> 52) &
		     (NAME_CACHE - 1);
	const char *name;
	uint64_t off;

	if (c->cache[h].name && c->cache[h].addr == addr && c->cache[h].pid == pid)
		return c->cache[h].name;
	name = tk_symbols_lookup(c->syms, pid, addr, &off);
	if (!name) {
		snprintf(c->num, sizeof(c->num), "0x%" PRIx64, addr);
		return c->num;
	}
	c->cache[h].pid = pid;
	c->cache[h].addr = addr;
	c->cache[h].name = name;
	return name;
}

struct tk_symbols *tk_calls_symbols(struct tk_calls *c)
{
	return c->syms;
}

const char *tk_calls_caller(struct tk_calls *c, uint32_t pid, uint64_t ret)
{
	const char *name = tk_calls_name(c, pid, ret - 1);

	if (name == c->num)
		snprintf(c->num, sizeof(c->num), "0x%" PRIx64, ret);
	return name;
}
