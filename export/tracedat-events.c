/* SPDX-License-Identifier: MIT */
/*
 * tracedat-events.c - user events as trace.dat events
 * (tracedat-events.h).
 *
 * A user event `app:request {s32 id; string path; u64 len}` printed with
 * "id=%d path=%s len=%lu" gets the format file
 *
 *   name: request
 *   ID: 1204
 *   format:
 *   	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
 *   	... common_flags, common_preempt_count, common_pid
 *
 *   	field:s32 id;	offset:8;	size:4;	signed:1;
 *   	field:__data_loc char[] path;	offset:12;	size:4;	signed:0;
 *   	field:u64 len;	offset:16;	size:8;	signed:0;
 *
 *   print fmt: "id=%lld path=%s len=%llu", REC->id, __get_str(path), REC->len
 *
 * Integers sit at offsets aligned to their size; strings and byte arrays
 * are __data_loc fields (u16 offset, u16 length) whose bytes follow the
 * fixed part, as the kernel stores __string(); char arrays are inline,
 * one char longer than recorded so that a NUL always ends them.
 * libtraceevent cannot print a double, so a double field is stored as the
 * text the print format shows it with (its first conversion, else %g).
 * Each conversion of the print format is written as the C conversion
 * that prints what `tracekit report` prints (format/printfmt.h's pieces).
 *
 * Events of the same name whose formats differ (markers of one name at
 * several call sites, processes built from other sources) and names the
 * kernel part already has get a suffix: request_2, request_3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include "format/number.h"
#include "format/printfmt.h"
#include "format/symbols.h"
#include "calls.h"
#include "tracedat-events.h"

#define TD_COMMON 8 /* common_type, _flags, _preempt_count, _pid */
#define TD_SYM_BASE 0x100000000000ull /* synthetic symbols, user half */
#define TD_SYM_STEP (1ull << 24)      /* a function's range */

enum td_type { TD_USER, TD_FUNCTION, TD_ENTRY, TD_EXIT, TD_SKIP };

struct td_field {
	uint8_t kind;
	uint16_t off;    /* fixed part: the value, or the __data_loc word */
	uint8_t size;
	uint32_t chars;  /* TK_KIND_CHARS: its length */
	char dspec[32];  /* TK_KIND_DOUBLE: how its text is written */
};

struct td_kind {
	enum td_type type;
	uint16_t id;
	char *system, *name;
	const char *ev_name; /* the user event's own name (name may differ) */
	char *body;          /* the format after its ID line (user kinds) */
	unsigned nfields;
	struct td_field *f;
	unsigned fixed;      /* bytes before the dynamic data */
	/* function tracer kinds: offsets of (ip | func), (parent_ip | depth),
	 * overrun, calltime, rettime; -1 when absent */
	int o[5];
	unsigned depth_size;
};

struct td_sym {
	char *name;
	uint64_t addr;
};

struct td_call {
	uint64_t func, ts;
	uint32_t depth;
};

struct td_open {
	struct td_call *c;
	unsigned n, cap;
};

static const char common_fields[] =
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

/* ftrace's own formats (kernel/trace/trace_entries.h), for a trace whose
 * kernel part does not hold them */
static const struct {
	const char *name;
	const char *fields;
	const char *print;
	int o[5];
	unsigned depth_size;
} ftrace_formats[] = {
	{ "function",
	  "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned long parent_ip;\toffset:16;\tsize:8;\tsigned:0;\n",
	  "\" %ps <-- %ps\", (void *)REC->ip, (void *)REC->parent_ip",
	  { 8, 16, -1, -1, -1 }, 0 },
	{ "funcgraph_entry",
	  "\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned int depth;\toffset:16;\tsize:4;\tsigned:0;\n",
	  "\"--> %ps (%u)\", (void *)REC->func, REC->depth",
	  { 8, 16, -1, -1, -1 }, 4 },
	{ "funcgraph_exit",
	  "\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned int depth;\toffset:16;\tsize:4;\tsigned:0;\n"
	  "\tfield:unsigned int overrun;\toffset:20;\tsize:4;\tsigned:0;\n"
	  "\tfield:unsigned long long calltime;\toffset:24;\tsize:8;\tsigned:0;\n"
	  "\tfield:unsigned long long rettime;\toffset:32;\tsize:8;\tsigned:0;\n",
	  "\"<-- %ps (%u) (start: %llx  end: %llx) over: %u\", (void *)REC->func, "
	  "REC->depth, REC->calltime, REC->rettime, REC->overrun",
	  { 8, 16, 20, 24, 32 }, 4 },
};

/* ---- text ---------------------------------------------------------------- */

struct text {
	char *s;
	size_t len, cap;
	int error;
};

static void text_add(struct text *t, const char *s, size_t n)
{
	if (t->error)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = (t->len + n + 1) * 2;
		char *p = realloc(t->s, cap);

		if (!p) {
			t->error = -ENOMEM;
			return;
		}
		t->s = p;
		t->cap = cap;
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = 0;
}

static void text_printf(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void text_printf(struct text *t, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		text_add(t, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* Literal text of a print format, inside its C string. */
static void text_literal(struct text *t, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '"':
			text_add(t, "\\\"", 2);
			break;
		case '\\':
			text_add(t, "\\\\", 2);
			break;
		case '\n':
			text_add(t, "\\n", 2);
			break;
		case '\t':
			text_add(t, "\\t", 2);
			break;
		case '%':
			text_add(t, "%%", 2);
			break;
		default:
			text_add(t, (unsigned char)s[i] < ' ' ? "?" : s + i, 1);
			break;
		}
	}
}

/* ---- user kinds ---------------------------------------------------------- */

static const char *int_type(unsigned kind, unsigned size)
{
	static const char *const s[] = { "s8", "s16", "s32", "s64" };
	static const char *const u[] = { "u8", "u16", "u32", "u64" };
	unsigned i = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;

	return kind == TK_KIND_INT ? s[i] : u[i];
}

/* The fields' places, and the format's field lines into @t. */
static int lay_out(struct td_kind *k, const struct tk_event_info *ev,
		   struct text *t)
{
	unsigned off = TD_COMMON;

	k->nfields = ev->nfields;
	k->f = calloc(ev->nfields + 1, sizeof(*k->f));
	if (!k->f)
		return -ENOMEM;
	for (unsigned i = 0; i < ev->nfields; i++) {
		const struct tk_field_desc *fd = &ev->fields[i];
		struct td_field *f = &k->f[i];
		unsigned size;

		f->kind = fd->kind;
		switch (fd->kind) {
		case TK_KIND_INT:
		case TK_KIND_UINT:
		case TK_KIND_PTR:
			size = fd->kind == TK_KIND_PTR ? 8 : fd->size;
			if (size != 1 && size != 2 && size != 4)
				size = 8;
			off = (off + size - 1) & ~(size - 1);
			f->off = (uint16_t)off;
			f->size = (uint8_t)size;
			if (fd->kind == TK_KIND_PTR)
				text_printf(t, "\tfield:unsigned long %s;\toffset:%u;\tsize:8;\tsigned:0;\n",
					    fd->name, off);
			else
				text_printf(t, "\tfield:%s %s;\toffset:%u;\tsize:%u;\tsigned:%d;\n",
					    int_type(fd->kind, size), fd->name, off, size,
					    fd->kind == TK_KIND_INT);
			off += size;
			break;
		case TK_KIND_CHARS:
			/* one more char, always NUL, so that readers stop */
			f->off = (uint16_t)off;
			f->chars = fd->array_len;
			text_printf(t, "\tfield:char %s[%u];\toffset:%u;\tsize:%u;\tsigned:0;\n",
				    fd->name, fd->array_len + 1, off, fd->array_len + 1);
			off += fd->array_len + 1;
			break;
		default: /* STRING, BYTES, DOUBLE: __data_loc */
			off = (off + 3) & ~3u;
			f->off = (uint16_t)off;
			text_printf(t, "\tfield:__data_loc %s[] %s;\toffset:%u;\tsize:4;\tsigned:0;\n",
				    fd->kind == TK_KIND_BYTES ? "u8" : "char", fd->name, off);
			off += 4;
			break;
		}
		if (off > 65535)
			return -E2BIG;
	}
	k->fixed = off;
	return 0;
}

/* @spec with its "ll" made the length of a field of @size bytes:
 * libtraceevent passes the value cast to that length's type (char for
 * hh, short for h, int for none), which is what sign-extends a small
 * signed field and cuts a negative one to its size for %x. */
static void size_spec(char *spec, unsigned size)
{
	char *ll = strstr(spec, "ll");
	const char *mod = size == 1 ? "hh" : size == 2 ? "h" : size == 4 ? "" : "ll";

	if (!ll)
		return;
	memmove(ll + strlen(mod), ll + 2, strlen(ll + 2) + 1);
	memcpy(ll, mod, strlen(mod));
}

/* The print fmt line, from the event's print format. */
static int print_line(struct td_kind *k, const struct tk_event_info *ev,
		      struct text *t)
{
	struct tk_print *p = NULL;
	struct tk_print_piece pc;
	struct text args = { 0 };
	char err[256];

	if (tk_print_prepare(ev->fmt, ev->args, ev->fields, ev->nfields, &p, err,
			     sizeof(err)) < 0 &&
	    tk_print_prepare("", "", ev->fields, ev->nfields, &p, err, sizeof(err)) < 0)
		return -ENOMEM;
	for (unsigned i = 0; i < ev->nfields; i++)
		if (k->f[i].kind == TK_KIND_DOUBLE)
			strcpy(k->f[i].dspec, "%g");
	/* a double's text is written with its first conversion */
	for (unsigned i = tk_print_npieces(p); i-- > 0;) {
		tk_print_piece(p, i, &pc);
		if (pc.as == TK_PRINT_DOUBLE)
			snprintf(k->f[pc.field].dspec, sizeof(k->f[pc.field].dspec),
				 "%s", pc.spec);
	}
	text_add(t, "\nprint fmt: \"", 13);
	for (unsigned i = 0; i < tk_print_npieces(p); i++) {
		const char *name;

		tk_print_piece(p, i, &pc);
		if (pc.as == TK_PRINT_LITERAL) {
			text_literal(t, pc.text, pc.len);
			continue;
		}
		name = ev->fields[pc.field].name;
		switch (pc.as) {
		case TK_PRINT_DOUBLE:
			text_add(t, "%s", 2);
			text_printf(&args, ", __get_str(%s)", name);
			break;
		case TK_PRINT_BYTES:
			text_add(t, "%s", 2);
			text_printf(&args, ", __print_array(__get_dynamic_array(%s), "
					   "__get_dynamic_array_len(%s), 1)", name, name);
			break;
		case TK_PRINT_STR:
			text_add(t, pc.spec, strlen(pc.spec));
			if (ev->fields[pc.field].kind == TK_KIND_STRING)
				text_printf(&args, ", __get_str(%s)", name);
			else
				text_printf(&args, ", REC->%s", name);
			break;
		default:
			if (k->f[pc.field].kind != TK_KIND_PTR)
				size_spec(pc.spec, k->f[pc.field].size);
			text_add(t, pc.spec, strlen(pc.spec));
			text_printf(&args, ", REC->%s", name);
			break;
		}
	}
	text_add(t, "\"", 1);
	if (args.s)
		text_add(t, args.s, args.len);
	text_add(t, "\n", 1);
	free(args.s);
	tk_print_free(p);
	return t->error ? t->error : args.error;
}

static struct td_kind *new_kind(struct td_events *e)
{
	if (e->nkinds == e->kinds_cap) {
		unsigned cap = e->kinds_cap ? e->kinds_cap * 2 : 32;
		struct td_kind *k = realloc(e->kinds, cap * sizeof(*k));

		if (!k)
			return NULL;
		e->kinds = k;
		e->kinds_cap = cap;
	}
	memset(&e->kinds[e->nkinds], 0, sizeof(e->kinds[0]));
	for (unsigned i = 0; i < 5; i++)
		e->kinds[e->nkinds].o[i] = -1;
	return &e->kinds[e->nkinds++];
}

static void free_kind(struct td_kind *k)
{
	free(k->system);
	free(k->name);
	free(k->body);
	free(k->f);
}

/* Whether @system:@name is taken by the kernel part or another kind. */
static bool name_taken(const struct td_events *e, struct tep_handle *ktep,
		       const char *system, const char *name, unsigned upto)
{
	if (ktep && tep_find_event_by_name(ktep, system, name))
		return true;
	for (unsigned i = 0; i < upto; i++)
		if (!strcmp(e->kinds[i].system, system) && !strcmp(e->kinds[i].name, name))
			return true;
	return false;
}

/* The kind of user event @ev: an existing one with the same name and
 * format, else a new one.  Returns its index + 1, or -errno. */
static int user_kind(struct td_events *e, const struct tk_event_info *ev,
		     struct tep_handle *ktep, unsigned *next_id)
{
	struct td_kind probe = { .type = TD_USER };
	struct text body = { 0 };
	struct td_kind *k;
	int ret;

	ret = lay_out(&probe, ev, &body);
	if (!ret && probe.fixed > e->max_record)
		ret = -E2BIG;
	if (!ret)
		ret = print_line(&probe, ev, &body);
	if (ret < 0) {
		free(probe.f);
		free(body.s);
		return ret;
	}
	for (unsigned i = 0; i < e->nkinds; i++) {
		k = &e->kinds[i];
		if (k->type == TD_USER && !strcmp(k->system, ev->provider) &&
		    !strcmp(k->ev_name, ev->name) && !strcmp(k->body, body.s)) {
			free(probe.f);
			free(body.s);
			return (int)i + 1;
		}
	}
	k = new_kind(e);
	if (!k) {
		free(probe.f);
		free(body.s);
		return -ENOMEM;
	}
	*k = probe;
	k->body = body.s;
	k->ev_name = ev->name;
	k->id = (uint16_t)(*next_id)++;
	k->system = strdup(ev->provider);
	k->name = strdup(ev->name);
	if (!k->system || !k->name)
		return -ENOMEM;
	for (unsigned n = 2; name_taken(e, ktep, k->system, k->name, e->nkinds - 1); n++) {
		free(k->name);
		if (asprintf(&k->name, "%s_%u", ev->name, n) < 0) {
			k->name = NULL;
			return -ENOMEM;
		}
	}
	return (int)e->nkinds;
}

/* ---- function tracer kinds ----------------------------------------------- */

static enum td_type ftrace_type(const struct tk_event_info *ev)
{
	switch (tk_ft_kind_of(ev)) {
	case TK_FT_NONE:
		return TD_USER;
	case TK_FT_FUNCTION:
		return TD_FUNCTION;
	case TK_FT_ENTRY:
		return TD_ENTRY;
	case TK_FT_EXIT:
		return TD_EXIT;
	default:
		return TD_SKIP; /* user_stack: the kernel's has room for 8 frames */
	}
}

static int field_off(struct tep_event *te, const char *name, unsigned *size)
{
	struct tep_format_field *f = tep_find_field(te, name);

	if (!f)
		return -1;
	if (size)
		*size = (unsigned)f->size;
	return f->offset;
}

/* The kind of a function tracer event: ftrace's format, the kernel's if
 * the trace has it.  Returns its index + 1, or -errno. */
static int ftrace_kind(struct td_events *e, enum td_type type,
		       struct tep_handle *ktep, unsigned *next_id)
{
	unsigned which = type == TD_FUNCTION ? 0 : type == TD_ENTRY ? 1 : 2;
	struct tep_event *te = ktep ? tep_find_event_by_name(ktep, "ftrace",
							     ftrace_formats[which].name) : NULL;
	struct td_kind *k;

	for (unsigned i = 0; i < e->nkinds; i++)
		if (e->kinds[i].type == type)
			return (int)i + 1;
	k = new_kind(e);
	if (!k)
		return -ENOMEM;
	k->type = type;
	k->system = strdup("ftrace");
	k->name = strdup(ftrace_formats[which].name);
	if (!k->system || !k->name)
		return -ENOMEM;
	if (te) {
		static const char *const names[3][5] = {
			{ "ip", "parent_ip" },
			{ "func", "depth" },
			{ "func", "depth", "overrun", "calltime", "rettime" },
		};

		k->id = (uint16_t)te->id;
		k->fixed = TD_COMMON;
		for (unsigned i = 0; i < 5 && names[which][i]; i++) {
			unsigned size = 0;

			k->o[i] = field_off(te, names[which][i], &size);
			if (i == 1 && which)
				k->depth_size = size;
			if (k->o[i] >= 0 && (unsigned)k->o[i] + size > k->fixed)
				k->fixed = (unsigned)k->o[i] + size;
		}
		if (k->o[0] < 0 || k->o[1] < 0 || (which && k->depth_size != 4))
			k->type = TD_SKIP; /* a layout this writer does not know */
		return (int)e->nkinds;
	}
	k->id = (uint16_t)(*next_id)++;
	memcpy(k->o, ftrace_formats[which].o, sizeof(k->o));
	k->depth_size = ftrace_formats[which].depth_size;
	k->fixed = which == 2 ? 40 : 24;
	if (asprintf(&k->body, "%s%s\nprint fmt: %s\n", common_fields,
		     ftrace_formats[which].fields, ftrace_formats[which].print) < 0) {
		k->body = NULL;
		return -ENOMEM;
	}
	return (int)e->nkinds;
}

/* ---- init ------------------------------------------------------------------ */

int td_events_init(struct td_events *e, const struct tk_trace *t,
		   struct tep_handle *ktep, unsigned max_record, bool ns,
		   char *err, size_t errlen)
{
	unsigned next_id = 32;
	bool functions = false;
	int ret = -ENOMEM;

	memset(e, 0, sizeof(*e));
	e->trace = t;
	e->max_record = max_record;
	e->ns = ns;
	if (ktep) {
		struct tep_event **evs = tep_list_events(ktep, TEP_EVENT_SORT_ID);

		for (; evs && *evs; evs++)
			if ((*evs)->id >= 0 && (unsigned)(*evs)->id >= next_id)
				next_id = (unsigned)(*evs)->id + 1;
	}
	e->buf = calloc(1, max_record + 8);
	e->of = calloc(t->nprocesses + 1, sizeof(*e->of));
	e->open = calloc(t->nstreams + 1, sizeof(*e->open));
	if (!e->buf || !e->of || !e->open)
		goto fail;
	for (unsigned i = 0; i < t->nprocesses; i++) {
		const struct tk_trace_process *p = &t->processes[i];

		e->of[i] = calloc(p->nevents + 1, sizeof(**e->of));
		if (!e->of[i])
			goto fail;
		for (unsigned j = 0; j < p->nevents; j++) {
			const struct tk_event_info *ev = &p->events[j];
			enum td_type type = ftrace_type(ev);
			int r;

			if (type == TD_SKIP)
				continue;
			if (type == TD_USER)
				r = user_kind(e, ev, ktep, &next_id);
			else
				r = ftrace_kind(e, type, ktep, &next_id);
			if (r < 0) {
				ret = r;
				if (r == -E2BIG) {
					snprintf(err, errlen, "event '%s' of process %u has fields too large for a trace.dat event",
						 ev->full_name, p->pid);
					return -E2BIG;
				}
				goto fail;
			}
			functions |= type != TD_USER;
			e->of[i][j] = (unsigned)r;
		}
	}
	if (next_id > 65535) {
		snprintf(err, errlen, "trace has too many event formats for a trace.dat (%u)",
			 next_id);
		return -E2BIG;
	}
	e->formats = calloc(e->nkinds + 1, sizeof(*e->formats));
	if (!e->formats)
		goto fail;
	for (unsigned i = 0; i < e->nkinds; i++) {
		struct td_kind *k = &e->kinds[i];

		if (!k->body)
			continue;
		if (asprintf(&e->formats[e->nformats].text, "name: %s\nID: %u\n%s%s", k->name,
			     k->id, k->type == TD_USER ? common_fields : "", k->body) < 0)
			goto fail;
		e->formats[e->nformats++].system = k->system;
	}
	if (functions) {
		ret = tk_symbols_load(t->dir, &e->syms, err, errlen);
		if (ret < 0)
			return ret;
	}
	return 0;
fail:
	snprintf(err, errlen, "out of memory preparing the trace.dat formats");
	return ret;
}

static struct td_kind *kind_of(const struct td_events *e, unsigned proc,
			       unsigned event)
{
	unsigned r = e->of[proc][event];

	return r ? &e->kinds[r - 1] : NULL;
}

/* ---- records --------------------------------------------------------------- */

static void put_int(unsigned char *at, uint64_t v, unsigned size)
{
	switch (size) {
	case 1: {
		uint8_t x = (uint8_t)v;

		memcpy(at, &x, 1);
		break;
	}
	case 2: {
		uint16_t x = (uint16_t)v;

		memcpy(at, &x, 2);
		break;
	}
	case 4: {
		uint32_t x = (uint32_t)v;

		memcpy(at, &x, 4);
		break;
	}
	default:
		memcpy(at, &v, 8);
		break;
	}
}

static void put_common(unsigned char *b, uint16_t id, int tid)
{
	int32_t pid = tid;

	memcpy(b, &id, 2);
	b[2] = b[3] = 0;
	memcpy(b + 4, &pid, 4);
}

/* Append @n bytes (and a NUL if @nul) as the dynamic data of the
 * __data_loc word at @loc; cut to the room left. */
static unsigned put_dynamic(struct td_events *e, unsigned len, unsigned loc,
			    const void *s, size_t n, bool nul)
{
	size_t room = e->max_record - len;
	uint32_t word;

	if (n + nul > room) {
		e->truncated++;
		n = room > nul ? room - nul : 0;
	}
	memcpy(e->buf + len, s, n);
	if (nul && room)
		e->buf[len + n++] = 0;
	word = (uint32_t)n << 16 | len;
	memcpy(e->buf + loc, &word, 4);
	return len + (unsigned)n;
}

static unsigned user_record(struct td_events *e, const struct td_kind *k,
			    int tid, const struct tk_value *v)
{
	unsigned char *b = e->buf;
	unsigned len = k->fixed;

	memset(b, 0, k->fixed);
	put_common(b, k->id, tid);
	for (unsigned i = 0; i < k->nfields; i++) {
		const struct td_field *f = &k->f[i];
		char text[512];
		int n;

		switch (f->kind) {
		case TK_KIND_INT:
		case TK_KIND_UINT:
		case TK_KIND_PTR:
			put_int(b + f->off, v[i].u, f->size);
			break;
		case TK_KIND_CHARS:
			if (v[i].str)
				memcpy(b + f->off, v[i].str, v[i].len < f->chars ? v[i].len : f->chars);
			break;
		case TK_KIND_DOUBLE:
			n = snprintf(text, sizeof(text), f->dspec, v[i].d);
			if (n < 0)
				n = 0;
			len = put_dynamic(e, len, f->off, text,
					  (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1,
					  true);
			break;
		case TK_KIND_STRING:
			if (v[i].str)
				len = put_dynamic(e, len, f->off, v[i].str, v[i].len, true);
			else
				len = put_dynamic(e, len, f->off, "(null)", 6, true);
			break;
		default: /* TK_KIND_BYTES */
			len = put_dynamic(e, len, f->off, v[i].str, v[i].str ? v[i].len : 0,
					  false);
			break;
		}
	}
	return len;
}

/* The synthetic address of @name. */
static uint64_t sym_intern(struct td_events *e, const char *name)
{
	size_t h = 5381;

	for (const char *s = name; *s; s++)
		h = h * 33 + (unsigned char)*s;
	if (2 * (e->nsym + 1) > e->sym_cap) {
		unsigned cap = e->sym_cap ? e->sym_cap * 2 : 256;
		struct td_sym *t = calloc(cap, sizeof(*t));

		if (!t)
			return 0;
		for (unsigned i = 0; i < e->sym_cap; i++) {
			size_t g = 5381;

			if (!e->sym[i].name)
				continue;
			for (const char *s = e->sym[i].name; *s; s++)
				g = g * 33 + (unsigned char)*s;
			while (t[g & (cap - 1)].name)
				g++;
			t[g & (cap - 1)] = e->sym[i];
		}
		free(e->sym);
		e->sym = t;
		e->sym_cap = cap;
	}
	for (;; h++) {
		struct td_sym *s = &e->sym[h & (e->sym_cap - 1)];

		if (!s->name) {
			s->name = strdup(name);
			if (!s->name)
				return 0;
			s->addr = TD_SYM_BASE + e->nsym++ * TD_SYM_STEP;
			return s->addr;
		}
		if (!strcmp(s->name, name))
			return s->addr;
	}
}

/* Where @addr of process @pid is among the synthetic symbols; @ret: it
 * is a return address (its call is the instruction before). */
static uint64_t sym_addr(struct td_events *e, uint32_t pid, uint64_t addr,
			 bool ret)
{
	uint64_t off = 0;
	const char *name = e->syms ? tk_symbols_lookup(e->syms, pid, ret ? addr - 1 : addr,
						       &off) : NULL;
	char hex[2 + TK_NUM_MAX];

	if (!name) {
		/* "0x" and its hex digits */
		char *s = tk_num_hex(hex + sizeof(hex) - 1, addr, false);

		hex[sizeof(hex) - 1] = '\0';
		*--s = 'x';
		*--s = '0';
		name = s;
		off = 0;
	} else if (ret) {
		off++;
	}
	if (off >= TD_SYM_STEP)
		off = TD_SYM_STEP - 1;
	return sym_intern(e, name) + off;
}

static void push_call(struct td_open *o, uint64_t func, uint64_t ts,
		      uint32_t depth)
{
	if (o->n == o->cap) {
		unsigned cap = o->cap ? o->cap * 2 : 64;
		struct td_call *c = realloc(o->c, cap * sizeof(*c));

		if (!c)
			return;
		o->c = c;
		o->cap = cap;
	}
	o->c[o->n++] = (struct td_call){ func, ts, depth };
}

/* The entry time of the call of @depth that returns at @ts (@ts itself
 * when its entry was not recorded); calls above it never returned. */
static uint64_t pop_call(struct td_open *o, uint64_t func, uint32_t depth,
			 uint64_t ts)
{
	while (o->n && o->c[o->n - 1].depth > depth)
		o->n--;
	if (!o->n || o->c[o->n - 1].depth != depth || o->c[o->n - 1].func != func)
		return ts;
	return o->c[--o->n].ts;
}

static unsigned ftrace_record(struct td_events *e, const struct td_kind *k,
			      uint32_t pid, unsigned stream, int tid,
			      const struct tk_value *v, uint64_t ts)
{
	unsigned char *b = e->buf;
	uint64_t a = v[0].u;

	memset(b, 0, k->fixed);
	put_common(b, k->id, tid);
	if (k->type == TD_FUNCTION) {
		put_int(b + k->o[0], sym_addr(e, pid, a, false), 8);
		put_int(b + k->o[1], v[1].u ? sym_addr(e, pid, v[1].u, true) : 0, 8);
		return k->fixed;
	}
	put_int(b + k->o[0], sym_addr(e, pid, a, false), 8);
	put_int(b + k->o[1], v[1].u, 4);
	if (k->type == TD_ENTRY) {
		push_call(&e->open[stream], a, ts, (uint32_t)v[1].u);
		return k->fixed;
	}
	uint64_t call = pop_call(&e->open[stream], a, (uint32_t)v[1].u, ts);

	if (k->o[3] >= 0)
		put_int(b + k->o[3], call, 8);
	if (k->o[4] >= 0)
		put_int(b + k->o[4], ts, 8);
	return k->fixed;
}

unsigned td_events_record(struct td_events *e, const struct tk_trace_process *proc,
			  const struct tk_event_info *ev, unsigned stream,
			  int tid, const struct tk_value *values, uint64_t ts_out)
{
	const struct td_kind *k = kind_of(e, (unsigned)(proc - e->trace->processes),
					  (unsigned)(ev - proc->events));

	if (!k || k->type == TD_SKIP) {
		e->skipped++;
		return 0;
	}
	if (k->type == TD_USER)
		return user_record(e, k, tid, values);
	return ftrace_record(e, k, proc->pid, stream, tid, values, ts_out);
}

int td_events_kallsyms(const struct td_events *e, char **buf, size_t *len)
{
	struct text t = { .s = *buf, .len = *len, .cap = *len };

	for (unsigned i = 0; i < e->sym_cap; i++) {
		const struct td_sym *s = &e->sym[i];
		char hex[TK_NUM_MAX], *end = hex + sizeof(hex), *h;

		if (!s->name)
			continue;
		/* the address in 16 hex digits */
		h = tk_num_hex(end, s->addr, false);
		for (long pad = 16 - (end - h); pad > 0; pad--)
			text_add(&t, "0", 1);
		text_add(&t, h, (size_t)(end - h));
		text_add(&t, " t ", 3);
		/* a kallsyms name is one word: C++ signatures lose their blanks */
		for (const char *c = s->name; *c; c++)
			if (*c != ' ')
				text_add(&t, c, 1);
			else if (c == s->name || c[-1] != ',')
				text_add(&t, "_", 1);
		text_add(&t, "\n", 1);
	}
	*buf = t.s;
	*len = t.len;
	return t.error;
}

void td_events_free(struct td_events *e)
{
	for (unsigned i = 0; i < e->nkinds; i++)
		free_kind(&e->kinds[i]);
	free(e->kinds);
	for (unsigned i = 0; e->of && i < e->trace->nprocesses; i++)
		free(e->of[i]);
	free(e->of);
	for (unsigned i = 0; i < e->nformats; i++)
		free(e->formats[i].text);
	free(e->formats);
	for (unsigned i = 0; e->open && i < e->trace->nstreams; i++)
		free(e->open[i].c);
	free(e->open);
	for (unsigned i = 0; i < e->sym_cap; i++)
		free(e->sym[i].name);
	free(e->sym);
	tk_symbols_free(e->syms);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}
