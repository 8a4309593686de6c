/* SPDX-License-Identifier: MIT */
/*
 * report-graph.c - the function tracer's events as ftrace prints them.
 *
 *   function:             leaf <-mid
 *   funcgraph_entry:                  |  mid() {
 *   funcgraph_entry:        0.120 us  |    leaf();
 *   funcgraph_exit:       + 12.340 us |  }
 *   user_stack:           <user stack trace>
 *    => mid+0x1b
 *
 * (closing braces also name their function in a C comment, as ftrace's
 * funcgraph-tail option does).
 * A call whose exit is the next event of its thread is a leaf, printed on
 * one line.  Durations come from the timestamps of entry and exit; the
 * mark before one says it is long, as ftrace marks them: + over 10 us,
 * ! over 100 us, # over 1 ms, * over 10 ms, @ over 100 ms, $ over 1 s.
 * Which exit ends which call, and the times, are export/calls.h's, the
 * walk convert's formats make: an exit matches the open call of its
 * depth, and calls left open above it (longjmp) end unfinished, without a
 * time here.  Addresses are resolved with the symbols saved in the trace
 * (format/symbols.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "export/calls.h"
#include "report-graph.h"
#include "report-profile.h"
#include "report.h"
#include "format/symbols.h"
#include "format/ustack-check.h"

#define TK_USTACK_FRAMES 256

struct ftrace_view {
	const struct tk_trace *t;
	struct tk_symbols *syms;
	struct tk_ustack_check *check;
	bool profile;
	struct ftrace_profile *prof;
	struct tk_calls *calls;
	bool ended;        /* the last call tk_calls ended returned */
	uint64_t ended_ns; /* and its time */
	struct {
		uint32_t pid;
		uint64_t addr;
		const char *name;
		uint64_t off;
	} cache[1024];
	struct {
		const struct tk_event_info *ev;
		enum tk_ft_kind kind;
	} kinds[64]; /* tk_ft_kind_of per event, looked up per record */
	char num[32];
};

static enum tk_ft_kind kind_cached(struct ftrace_view *v,
				const struct tk_event_info *ev)
{
	unsigned h = (unsigned)((uintptr_t)ev >> 4) & 63;

	if (v->kinds[h].ev != ev) {
		v->kinds[h].ev = ev;
		v->kinds[h].kind = tk_ft_kind_of(ev);
	}
	return v->kinds[h].kind;
}

bool ftrace_view_owns(const struct tk_event_info *ev)
{
	return tk_ft_kind_of(ev) != TK_FT_NONE;
}

static int call_ended(void *ctx, const struct tk_trace_stream *s,
		      const struct tk_call *c, uint64_t end, bool finished);

struct ftrace_view *ftrace_view_open(const struct tk_trace *t, bool profile)
{
	struct ftrace_view *v = calloc(1, sizeof(*v));
	char err[256];

	if (!v)
		return NULL;
	v->t = t;
	v->profile = profile;
	if (profile)
		v->prof = ftrace_profile_new();
	if ((profile && !v->prof) ||
	    tk_symbols_load(t->dir, &v->syms, err, sizeof(err)) < 0 ||
	    !(v->check = tk_ustack_check_new(v->syms)) ||
	    !(v->calls = tk_calls_new(t, v->syms, call_ended, v))) {
		ftrace_view_close(v);
		return NULL;
	}
	return v;
}

/* "0x..." in v->num: the name of an address without a symbol. */
static const char *hex_name(struct ftrace_view *v, uint64_t addr)
{
	struct tk_obuf o;

	tk_obuf_init(&o, v->num, sizeof(v->num) - 1);
	tk_oput(&o, "0x", 2);
	tk_ohex(&o, addr);
	v->num[o.n] = '\0';
	return v->num;
}

/* The symbol of @addr (cached), its offset in *off; a number if unknown. */
static const char *name_of(struct ftrace_view *v, uint32_t pid, uint64_t addr,
			   uint64_t *off)
{
	unsigned h = (unsigned)((addr ^ pid) * 0x9e3779b1u >> 22) & 1023;
	const char *name;

	if (v->cache[h].name && v->cache[h].addr == addr && v->cache[h].pid == pid) {
		*off = v->cache[h].off;
		return v->cache[h].name;
	}
	name = tk_symbols_lookup(v->syms, pid, addr, off);
	if (!name) {
		*off = 0;
		return hex_name(v, addr);
	}
	v->cache[h].pid = pid;
	v->cache[h].addr = addr;
	v->cache[h].name = name;
	v->cache[h].off = *off;
	return name;
}

/* The function a return address (call site) is in: the call before it
 * may be the last instruction of its function (a call that the compiler
 * knows does not return). */
static const char *caller_of(struct ftrace_view *v, uint32_t pid, uint64_t ret,
			     uint64_t *off)
{
	const char *name = name_of(v, pid, ret - 1, off);

	if (name == v->num) {
		*off = 0;
		return hex_name(v, ret);
	}
	(*off)++;
	return name;
}

/* A call has ended (calls.h): its time, for the line that shows it and
 * for the profile (a call that did not return is counted, not timed). */
static int call_ended(void *ctx, const struct tk_trace_stream *s,
		      const struct tk_call *c, uint64_t end, bool finished)
{
	struct ftrace_view *v = ctx;
	uint64_t off, self, ns = tk_calls_ns(v->calls, c, end, &self);

	v->ended = finished;
	v->ended_ns = ns;
	if (v->prof)
		ftrace_profile_add(v->prof, name_of(v, s->pid, c->func, &off), finished,
				   ns, self);
	return 0;
}

/* Give the exit @rd is on to the calls: true when it ended its own call,
 * whose time is then in *ns. */
static bool call_exit(struct ftrace_view *v, const struct tk_stream_reader *rd,
		      uint64_t *ns)
{
	v->ended = false;
	if (tk_calls_exit(v->calls, rd) < 0 || !v->ended)
		return false;
	*ns = v->ended_ns;
	return true;
}

/* "%c %7llu.%03u us |  " or, unknown, 16 blanks and " |  " (ftrace's
 * duration column), without printf: a report prints one per line. */
static void put_duration(struct tk_obuf *o, uint64_t ns, bool known)
{
	static const struct { uint64_t over; char mark; } marks[] = {
		{ 1000000000u, '$' }, { 100000000u, '@' }, { 10000000u, '*' },
		{ 1000000u, '#' }, { 100000u, '!' }, { 10000u, '+' },
	};
	char mark = ' ';

	if (!known) {
		tk_oput(o, "                 |  ", 20);
		return;
	}
	for (unsigned i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (ns > marks[i].over) {
			mark = marks[i].mark;
			break;
		}
	tk_oput(o, &mark, 1);
	tk_oput(o, " ", 1);
	tk_onum(o, ns / 1000, false, 10, false, 7, false);
	tk_oput(o, ".", 1);
	tk_onum(o, ns % 1000, false, 10, false, 3, true);
	tk_oput(o, " us |  ", 7);
}

static void indent(struct tk_obuf *o, uint32_t depth)
{
	tk_opad(o, ' ', depth > 200 ? 400 : depth * 2);
}

/* A line: the prefix ("comm-tid [cpu] time: "), the event's label, then
 * its text, which holds TEXT_MAX bytes at most. */
#define TEXT_MAX 1024

static void line_start(struct tk_obuf *o, char *buf, size_t size,
		       const char *prefix, size_t plen, const char *label)
{
	report_line_start(o, buf, size);
	tk_oput(o, prefix, plen);
	tk_oputs(o, label);
	if (o->room > o->n + TEXT_MAX)
		o->room = o->n + TEXT_MAX;
}

/* Room for the longest prefix (cmd-report.c's), label and text. */
#define LINE_MAX (128 + 32 + TEXT_MAX + 1)

/* An entry: a leaf when the thread's next event is its exit. */
static void show_entry(struct ftrace_view *v, struct tk_stream_reader *rd,
		       const char *prefix, size_t plen)
{
	uint64_t func = rd->values[0].u, off, ns = 0;
	uint32_t depth = (uint32_t)rd->values[1].u, pid = rd->stream->pid;
	struct tk_stream_reader peek = *rd;
	struct tk_value vals[4];
	char line[LINE_MAX], err[64];
	struct tk_obuf o;
	bool leaf = false;

	peek.values = vals;
	peek.values_cap = 4;
	if (tk_stream_next(&peek, err, sizeof(err)) == 1 &&
	    kind_cached(v, peek.event) == TK_FT_EXIT && peek.values[0].u == func &&
	    peek.values[1].u == depth)
		leaf = true;
	if (peek.values != vals)
		free(peek.values);
	tk_calls_entry(v->calls, rd);
	/* a leaf's exit is shown on this line: step onto it */
	if (leaf && tk_stream_next(rd, err, sizeof(err)) == 1)
		leaf = call_exit(v, rd, &ns);
	line_start(&o, line, sizeof(line), prefix, plen, "funcgraph_entry: ");
	put_duration(&o, ns, leaf);
	indent(&o, depth);
	tk_oput_cut(&o, name_of(v, pid, func, &off), leaf ? "();" : "() {");
	report_line_end(&o);
}

static void show_exit(struct ftrace_view *v, struct tk_stream_reader *rd,
		      const char *prefix, size_t plen)
{
	uint64_t func = rd->values[0].u, ns = 0, off;
	uint32_t depth = (uint32_t)rd->values[1].u;
	bool known = call_exit(v, rd, &ns);
	char line[LINE_MAX];
	struct tk_obuf o;

	line_start(&o, line, sizeof(line), prefix, plen, "funcgraph_exit:  ");
	put_duration(&o, ns, known);
	indent(&o, depth);
	tk_oput_cut(&o, "} /* ", "");
	tk_oput_cut(&o, name_of(v, rd->stream->pid, func, &off), " */");
	report_line_end(&o);
}

static void show_function(struct ftrace_view *v, const struct tk_stream_reader *rd,
			  const char *prefix, size_t plen)
{
	uint32_t pid = rd->stream->pid;
	uint64_t off;
	char line[LINE_MAX];
	struct tk_obuf o;

	line_start(&o, line, sizeof(line), prefix, plen, "function:             ");
	/* in this order: both may use v->num */
	tk_oput_cut(&o, name_of(v, pid, rd->values[0].u, &off), " <-");
	tk_oput_cut(&o, caller_of(v, pid, rd->values[1].u, &off), "");
	report_line_end(&o);
}

static void show_stack(struct ftrace_view *v, const struct tk_stream_reader *rd,
		       const char *prefix, size_t plen)
{
	const struct tk_value *b = &rd->values[0];
	char line[LINE_MAX];
	struct tk_obuf o;

	line_start(&o, line, sizeof(line), prefix, plen, "user_stack:           ");
	tk_oputs(&o, "<user stack trace>");
	report_line_end(&o);
	for (uint32_t i = 0; i + 8 <= b->len; i += 8) {
		uint64_t a, off;
		const char *name;

		memcpy(&a, b->str + i, 8);
		char where[TK_NUM_MAX + 4];
		struct tk_obuf w;

		memcpy(&a, b->str + i, 8);
		name = caller_of(v, rd->stream->pid, a, &off);
		tk_obuf_init(&w, where, sizeof(where));
		if (name != v->num) { /* no symbol: the address alone */
			tk_oput(&w, "+0x", 3);
			tk_ohex(&w, off);
		}
		where[w.n] = '\0';
		line_start(&o, line, sizeof(line), " => ", 4, "");
		tk_oput_cut(&o, name, where);
		report_line_end(&o);
	}
}

/* --ustack with user events: as the kernel's user stacks print, cut
 * where the frame-pointer walk stops being the stack. */
static void show_event_stack(struct ftrace_view *v, const struct tk_stream_reader *rd,
			     const char *prefix, size_t plen)
{
	const struct tk_value *b = &rd->values[0];
	uint32_t pid = rd->stream->pid;
	uint64_t addr[TK_USTACK_FRAMES];
	char line[LINE_MAX];
	struct tk_obuf o;
	unsigned n = 0;

	for (uint32_t i = 0; i + 8 <= b->len && n < TK_USTACK_FRAMES; i += 8)
		memcpy(&addr[n++], b->str + i, 8);
	if (v->check)
		n = tk_ustack_trusted(v->check, pid, addr, n, false);
	line_start(&o, line, sizeof(line), prefix, plen, "user_stack:           ");
	tk_oputs(&o, "<user stack trace>");
	report_line_end(&o);
	for (unsigned i = 0; i < n; i++) {
		const char *object = tk_symbols_object(v->syms, pid, addr[i]);
		char where[TK_NUM_MAX + 4 + 512];
		uint64_t off;
		const char *name = caller_of(v, pid, addr[i], &off);
		struct tk_obuf w;

		tk_obuf_init(&w, where, sizeof(where) - 1);
		if (name != v->num) { /* no symbol: the address alone */
			tk_oput(&w, "+0x", 3);
			tk_ohex(&w, off);
		}
		if (object) {
			tk_oput(&w, " (", 2);
			tk_oputs(&w, object);
			tk_oput(&w, ")", 1);
		}
		where[w.n] = '\0';
		line_start(&o, line, sizeof(line), " => ", 4, "");
		tk_oput_cut(&o, name, where);
		report_line_end(&o);
	}
}

/* --profile: the same bookkeeping, nothing printed. */
static void count(struct ftrace_view *v, const struct tk_stream_reader *rd,
		  enum tk_ft_kind k)
{
	uint64_t off, ns;

	switch (k) {
	case TK_FT_FUNCTION:
		ftrace_profile_add(v->prof, name_of(v, rd->stream->pid, rd->values[0].u, &off),
				   false, 0, 0);
		break;
	case TK_FT_ENTRY:
		tk_calls_entry(v->calls, rd);
		break;
	case TK_FT_EXIT:
		call_exit(v, rd, &ns);
		break;
	default:
		break;
	}
}

void ftrace_view_event(struct ftrace_view *v, struct tk_stream_reader *rd,
		       const char *prefix, size_t plen)
{
	enum tk_ft_kind k = kind_cached(v, rd->event);

	if (v->profile) {
		count(v, rd, k);
		return;
	}
	switch (k) {
	case TK_FT_FUNCTION:
		show_function(v, rd, prefix, plen);
		break;
	case TK_FT_ENTRY:
		show_entry(v, rd, prefix, plen);
		break;
	case TK_FT_EXIT:
		show_exit(v, rd, prefix, plen);
		break;
	case TK_FT_STACK:
		show_stack(v, rd, prefix, plen);
		break;
	case TK_FT_EVENT_STACK:
		show_event_stack(v, rd, prefix, plen);
		break;
	default:
		break;
	}
}

void ftrace_view_close(struct ftrace_view *v)
{
	if (!v)
		return;
	if (v->prof) {
		/* calls still open at the end: counted, not timed */
		if (v->calls)
			tk_calls_finish(v->calls);
		ftrace_profile_print(v->prof, stdout);
		ftrace_profile_free(v->prof);
	}
	tk_calls_free(v->calls);
	tk_ustack_check_free(v->check);
	tk_symbols_free(v->syms);
	free(v);
}
