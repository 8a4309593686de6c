/* SPDX-License-Identifier: MIT */
/*
 * kernel-print.c - the field text of kernel events (kernel-print.h).
 *
 * Three printers:
 *   stack  ftrace's kernel_stack: "<stack trace>" then one
 *          "\n => func+0xoff/0xsize" per caller; user_stack: "<user stack
 *          trace>" then "\n => func+0xoff (object)", named from the maps
 *          and symbols saved with the trace (format/symbols.h)
 *   fast   the print fmt compiled once into steps (kprint-compile.c),
 *          after what a libtraceevent plugin prints first or instead
 *          (kprint-plugins.c), run on the record with no trace_seq
 *   tep    everything else: tep_print_event(), which also runs the
 *          plugins trace-cmd loads; and any record the fast steps give
 *          back (a case they do not mirror)
 * The fast printer is compiled when the event is first printed, so a
 * trace pays only for the events it holds.  Before any printer reads a
 * record, its fixed fields must fit in it and its dynamic fields must
 * point inside it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include <trace-seq.h>
#include "kernel-print.h"
#include "kprint-compile.h"
#include "kprint-plugins.h"
#include "symbols.h"
#include "ustack-check.h"

enum printer { PRINT_TEP, PRINT_STACK, PRINT_USTACK, PRINT_FAST };

struct tk_kprint {
	enum printer how;
	struct tk_kprint_env *env;
	struct tep_handle *tep;
	struct tep_event *ev;
	bool compiled, needs_symbols, saves_comms;
	uint64_t tep_prints; /* records printed by libtraceevent */
	unsigned min_size; /* fixed fields end here */
	unsigned ndyn;
	unsigned *dyn_off; /* offsets of __data_loc words to check */
	unsigned *dyn_rel; /* 1 for __rel_loc (relative to the word's end) */
	unsigned stack_size_off, stack_caller_off, stack_tgid_off;
	struct tk_kprog *prog;     /* NULL: the plugin prints it all */
	struct tk_kplugin *plugin;
};

static int scan_fields(struct tk_kprint *p)
{
	struct tep_format_field **fields = tep_event_fields(p->ev);
	unsigned n = 0;

	for (struct tep_format_field **f = fields; f && *f; f++)
		n++;
	p->dyn_off = calloc(n + 1, sizeof(*p->dyn_off));
	p->dyn_rel = calloc(n + 1, sizeof(*p->dyn_rel));
	if (!p->dyn_off || !p->dyn_rel) {
		free(fields);
		return -ENOMEM;
	}
	for (struct tep_format_field **fp = fields; fp && *fp; fp++) {
		const struct tep_format_field *f = *fp;
		unsigned end = (unsigned)f->offset + (unsigned)f->size;

		if (f->offset < 0 || f->size < 0)
			continue;
		if (f->flags & TEP_FIELD_IS_DYNAMIC) {
			p->dyn_off[p->ndyn] = (unsigned)f->offset;
			p->dyn_rel[p->ndyn++] = !!(f->flags & TEP_FIELD_IS_RELATIVE);
			end = (unsigned)f->offset + 4;
		}
		if (end > p->min_size)
			p->min_size = end;
	}
	free(fields);
	return 0;
}

/* PRINT_STACK, PRINT_USTACK, or PRINT_TEP for other events. */
static enum printer stack_kind(struct tk_kprint *p)
{
	struct tep_format_field *size, *caller, *tgid;
	bool user;

	if (strcmp(p->ev->system, "ftrace") ||
	    (strcmp(p->ev->name, "kernel_stack") && strcmp(p->ev->name, "user_stack")))
		return PRINT_TEP;
	user = !strcmp(p->ev->name, "user_stack");
	size = tep_find_field(p->ev, "size");
	tgid = tep_find_field(p->ev, "tgid");
	caller = tep_find_field(p->ev, "caller");
	if (!caller || caller->offset < 0)
		return PRINT_TEP;
	p->stack_size_off = size ? (unsigned)size->offset : 0;
	p->stack_caller_off = (unsigned)caller->offset;
	if (user) {
		/* no size field: the callers end at the first 0 */
		if (!tgid || tgid->size != 4 || tgid->offset < 0)
			return PRINT_TEP;
		p->stack_tgid_off = (unsigned)tgid->offset;
		return PRINT_USTACK;
	}
	return size && size->size == 4 ? PRINT_STACK : PRINT_TEP;
}

struct tk_kprint *tk_kprint_prepare(struct tk_kprint_env *env,
				    struct tep_event *ev, bool tep_only)
{
	struct tk_kprint *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->env = env;
	p->tep = env->tep;
	p->ev = ev;
	if (scan_fields(p) < 0) {
		tk_kprint_free(p);
		return NULL;
	}
	p->saves_comms = tk_kplugin_saves_comms(ev);
	p->needs_symbols = true;
	if (tep_only) {
		p->how = PRINT_TEP;
		p->compiled = true;
	} else if ((p->how = stack_kind(p)) != PRINT_TEP) {
		p->min_size = p->stack_caller_off; /* callers: as many as fit */
		p->compiled = true;
		p->needs_symbols = p->how == PRINT_STACK;
	} else {
		p->needs_symbols = ev->handler || tk_kplugin_serves(ev) ||
				   tk_kprog_needs_symbols(ev);
	}
	return p;
}

/* Pick the fast printer if the event allows it (first print). */
static void compile(struct tk_kprint *p)
{
	bool known;

	p->compiled = true;
	p->how = PRINT_TEP;
	p->plugin = tk_kplugin_prepare(p->tep, p->ev, p->env->syms, &known);
	if (p->ev->handler && !known)
		return; /* a handler we do not mirror prints it */
	p->prog = tk_kprog_compile(p->tep, p->ev, p->env->sym_addr, p->env->sym_ctx,
				   p->env->syms);
	if (p->prog || (p->plugin && !tk_kplugin_prefix(p->plugin)))
		p->how = PRINT_FAST;
}

bool tk_kprint_needs_symbols(const struct tk_kprint *p)
{
	return p->needs_symbols;
}

uint64_t tk_kprint_tep_count(const struct tk_kprint *p)
{
	return p->tep_prints;
}

/* Append printf output to out[*n..room). */
static void put(char *out, size_t room, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *out, size_t room, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (*n >= room)
		return;
	va_start(ap, fmt);
	len = vsnprintf(out + *n, room - *n, fmt, ap);
	va_end(ap);
	if (len > 0)
		*n += (size_t)len < room - *n ? (size_t)len : room - *n - 1;
}

static size_t print_stack(const struct tk_kprint *p, const unsigned char *data,
			  unsigned size, char *out, size_t room)
{
	int32_t count;
	unsigned max = (size - p->stack_caller_off) / 8;
	size_t n = 0;

	memcpy(&count, data + p->stack_size_off, 4);
	if (count >= 0 && (unsigned)count < max)
		max = (unsigned)count;
	put(out, room, &n, "<stack trace>");
	for (unsigned i = 0; i < max; i++) {
		uint64_t addr;
		const char *name;
		unsigned long long start;
		unsigned long fsize;

		memcpy(&addr, data + p->stack_caller_off + 8 * i, 8);
		if (addr == 0 || addr == ~0ull)
			break;
		if (tep_find_function_info(p->tep, addr, &name, &start, &fsize))
			put(out, room, &n, "\n => %s+0x%llx/0x%lx", name, addr - start,
			    fsize);
		else
			put(out, room, &n, "\n => 0x%" PRIx64, addr);
	}
	return n;
}

#define TK_KPRINT_USTACK_MAX 128

static size_t print_user_stack(const struct tk_kprint *p, const unsigned char *data,
			       unsigned size, char *out, size_t room)
{
	unsigned max = (size - p->stack_caller_off) / 8, valid = 0;
	struct tk_symbols *syms = p->env->user_syms;
	uint64_t addrs[TK_KPRINT_USTACK_MAX], got[TK_KPRINT_USTACK_MAX];
	uint32_t tgid;
	size_t n = 0;

	memcpy(&tgid, data + p->stack_tgid_off, 4);
	put(out, room, &n, "<user stack trace>");
	while (valid < max && valid < TK_KPRINT_USTACK_MAX) {
		memcpy(&got[valid], data + p->stack_caller_off + 8 * valid, 8);
		if (got[valid] == 0 || got[valid] == ~0ull)
			break;
		valid++;
	}
	valid = tk_ustack_with_caller(p->env->user_check, tgid, got, valid,
				      p->env->user_caller, addrs, TK_KPRINT_USTACK_MAX);
	for (unsigned i = 0; i < valid; i++) {
		uint64_t addr = addrs[i], off = 0;
		const char *name, *object;

		/* a return address names its caller: look one byte before,
		 * except for the first, where the thread was */
		name = tk_symbols_lookup(syms, tgid, i ? addr - 1 : addr, &off);
		object = tk_symbols_object(syms, tgid, addr);
		if (name)
			put(out, room, &n, "\n => %s+0x%" PRIx64, name, off + (i ? 1 : 0));
		else
			put(out, room, &n, "\n => 0x%" PRIx64, addr);
		if (object)
			put(out, room, &n, " (%s)", object);
	}
	return n;
}

/* The record must hold the fixed fields, and the dynamic ones must lie
 * inside it. */
static bool record_fits(const struct tk_kprint *p, const unsigned char *data,
			unsigned size)
{
	if (size < p->min_size)
		return false;
	for (unsigned i = 0; i < p->ndyn; i++) {
		uint32_t loc;
		unsigned off;

		memcpy(&loc, data + p->dyn_off[i], 4);
		off = (loc & 0xffff) + (p->dyn_rel[i] ? p->dyn_off[i] + 4 : 0);
		if (off + (loc >> 16) > size)
			return false;
	}
	return true;
}

static size_t print_tep(struct tk_kprint *p, struct trace_seq *seq,
			const unsigned char *data, unsigned size, unsigned cpu,
			uint64_t ts, char *out, size_t room)
{
	struct tep_record rec;
	size_t n;

	p->tep_prints++;
	memset(&rec, 0, sizeof(rec));
	rec.ts = ts;
	rec.data = (void *)data;
	rec.size = (int)size;
	rec.record_size = (int)size;
	rec.cpu = (int)cpu;
	trace_seq_reset(seq);
	tep_print_event(p->tep, seq, &rec, "%s", TEP_PRINT_INFO);
	if (p->saves_comms)
		p->env->comm_gen++; /* it may have named a pid */
	n = seq->len < room ? seq->len : room;
	memcpy(out, seq->buffer, n);
	return n;
}

/* The plugin's text, then the print fmt's when the plugin asks; -1 when
 * the record goes to libtraceevent. */
static long print_fast(struct tk_kprint *p, const unsigned char *data, unsigned size,
		       char *out, size_t room)
{
	long n = 0, m;
	bool then_fmt = true, new_comm = false;

	if (p->plugin) {
		n = tk_kplugin_run(p->plugin, data, size, out, room, &then_fmt, &new_comm);
		if (new_comm)
			p->env->comm_gen++;
		if (n < 0 || !then_fmt)
			return n;
	}
	m = tk_kprog_run(p->prog, data, size, out + n, room - (size_t)n);
	return m < 0 ? -1 : n + m;
}

size_t tk_kprint_format(struct tk_kprint *p, struct trace_seq *seq,
			const unsigned char *data, unsigned size, unsigned cpu,
			uint64_t ts, char *out, size_t room)
{
	size_t n = 0;
	long m;

	if (!record_fits(p, data, size)) {
		put(out, room, &n, "[malformed record: %u bytes]", size);
		return n;
	}
	if (!p->compiled)
		compile(p);
	if (p->how == PRINT_STACK)
		return print_stack(p, data, size, out, room);
	if (p->how == PRINT_USTACK)
		return print_user_stack(p, data, size, out, room);
	if (p->how == PRINT_FAST && (m = print_fast(p, data, size, out, room)) >= 0)
		return (size_t)m;
	return print_tep(p, seq, data, size, cpu, ts, out, room);
}

void tk_kprint_note_comms(struct tk_kprint *p, struct trace_seq *seq,
			  const unsigned char *data, unsigned size, unsigned cpu,
			  uint64_t ts)
{
	char scratch[256];

	if (!p->compiled)
		compile(p);
	if (p->saves_comms || (p->plugin && tk_kplugin_names_pids(p->plugin)))
		(void)tk_kprint_format(p, seq, data, size, cpu, ts, scratch,
				       sizeof(scratch));
}

void tk_kprint_free(struct tk_kprint *p)
{
	if (!p)
		return;
	tk_kprog_free(p->prog);
	free(p->plugin);
	free(p->dyn_off);
	free(p->dyn_rel);
	free(p);
}
