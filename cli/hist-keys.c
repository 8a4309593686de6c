/* SPDX-License-Identifier: MIT */
/*
 * hist-keys.c - `tracekit hist`'s keys: which event a name stands for,
 * which field (or special key) a key names, its value as key bytes and
 * as text (hist.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include "cli.h"
#include "common/filter.h"
#include "filter-check.h"
#include "format/symbols.h"
#include "hist.h"

static const struct {
	const char *name;
	enum hist_src src;
	bool user_only;
} specials[] = {
	{ "common_pid", SRC_TID, false }, { "tid", SRC_TID, false },
	{ "pid", SRC_PID, true },         { "comm", SRC_COMM, false },
	{ "common_comm", SRC_COMM, false }, { "cpu", SRC_CPU, false },
	{ "common_cpu", SRC_CPU, false },
};

#define NSPECIALS (sizeof(specials) / sizeof(specials[0]))

/* Whether special @s is a field of @kind's (pid only for user events). */
static bool special_of(size_t s, const struct tk_cursor_kind *kind)
{
	return !specials[s].user_only || !kind->kernel;
}

int hist_filters_compile(struct tk_cursor *c, const char *filter,
			 const struct hist_event *e, struct hist_filter *hf)
{
	unsigned most = 0;

	for (unsigned i = 0; filter && i < e->nkinds; i++) {
		const struct tk_cursor_kind *kind = e->kinds[i];
		struct tk_field_desc *all = calloc(kind->nfields + NSPECIALS, sizeof(*all));
		struct filter_check fc = { 0 };
		struct tk_filter_error fe;
		unsigned n = kind->nfields;
		char msg[512];
		int ret;

		if (!all) {
			tk_error("out of memory");
			return -1;
		}
		if (n)
			memcpy(all, kind->fields, n * sizeof(*all));
		for (size_t s = 0; s < NSPECIALS; s++) {
			if (!special_of(s, kind))
				continue;
			snprintf(all[n].name, sizeof(all[n].name), "%s", specials[s].name);
			all[n].kind = specials[s].src == SRC_COMM ? TK_KIND_STRING :
				      specials[s].src == SRC_CPU ? TK_KIND_UINT : TK_KIND_INT;
			all[n].size = specials[s].src == SRC_COMM ? 0 : 4;
			n++;
		}
		most = n > most ? n : most;
		/* as its keys, the filter holds for each kind of the event */
		ret = tk_filter_compile_named(filter, all, n, hist_filter_namer, c, &hf->f[i], &fe);
		free(all);
		if (ret < 0) {
			filter_check_note(&fc, e->name, &fe);
			filter_check_result(&fc, filter, msg, sizeof(msg));
			tk_error("%s", msg);
			return -1;
		}
	}
	if (most && !(hf->values = calloc(most, sizeof(*hf->values)))) {
		tk_error("out of memory");
		return -1;
	}
	return 0;
}

bool hist_filter_match(struct tk_cursor *c, struct hist_filter *hf, unsigned ki,
		       const struct tk_value *values)
{
	const struct tk_cursor_kind *kind = c->kind;
	struct tk_value *v = hf->values;
	unsigned n = kind->nfields;

	if (!hf->f[ki])
		return true;
	if (n)
		memcpy(v, values, n * sizeof(*v));
	for (size_t s = 0; s < NSPECIALS; s++) {
		if (!special_of(s, kind))
			continue;
		switch (specials[s].src) {
		case SRC_TID:
			v[n].i = c->tid;
			break;
		case SRC_PID:
			v[n].i = c->pid;
			break;
		case SRC_CPU:
			v[n].u = c->cpu;
			break;
		case SRC_COMM:
			v[n].str = tk_cursor_comm(c);
			v[n].len = (uint32_t)strlen(v[n].str);
			break;
		default:
			break;
		}
		n++;
	}
	return tk_filter_match(hf->f[ki], v);
}

void hist_filter_free(struct hist_filter *hf)
{
	for (unsigned i = 0; i < HIST_MAX_KINDS; i++)
		tk_filter_free(hf->f[i]);
	free(hf->values);
	memset(hf, 0, sizeof(*hf));
}

int hist_event_find(struct tk_cursor *c, const char *name, struct hist_event *e)
{
	const char **names;
	const char *close;

	memset(e, 0, sizeof(*e));
	e->name = name;
	e->nkinds = tk_cursor_find(c, name, e->kinds, HIST_MAX_KINDS);
	if (e->nkinds > HIST_MAX_KINDS) {
		tk_error("event '%s' is defined by more than %d processes of trace '%s'",
			 name, HIST_MAX_KINDS, c->trace.dir);
		return -1;
	}
	if (e->nkinds)
		return 0;
	names = tk_cursor_names(c);
	close = names ? tk_closest_name(name, names, c->nkinds) : NULL;
	if (close)
		tk_error("event '%s' is not in trace '%s' (did you mean '%s'?)",
			 name, c->trace.dir, close);
	else
		tk_error("event '%s' is not in trace '%s'", name, c->trace.dir);
	free(names);
	return -1;
}

static int parse_mod(const char *spec, const char *mod, struct hist_key *k)
{
	char *end;

	if (!strcmp(mod, "hex"))
		k->mod = MOD_HEX;
	else if (!strcmp(mod, "log2"))
		k->mod = MOD_LOG2;
	else if (!strcmp(mod, "execname"))
		k->mod = MOD_EXECNAME;
	else if (!strcmp(mod, "sym"))
		k->mod = MOD_SYM;
	else if (!strncmp(mod, "buckets=", 8)) {
		k->mod = MOD_BUCKETS;
		errno = 0;
		k->buckets = strtoull(mod + 8, &end, 0);
		if (errno || *end || !k->buckets || mod[8] == '-') {
			tk_error("key '%s': buckets=N needs a positive number", spec);
			return -1;
		}
	} else {
		tk_error("key '%s': unknown modifier '.%s' (use hex, log2, buckets=N, execname or sym)",
			 spec, mod);
		return -1;
	}
	return 0;
}

static void no_field(const struct hist_event *e, const struct tk_cursor_kind *kind,
		     const char *field)
{
	const char **names = calloc(kind->nfields + NSPECIALS + 1,
				    sizeof(*names));
	unsigned n = 0;
	const char *close = NULL;

	if (names) {
		for (unsigned i = 0; i < kind->nfields; i++)
			names[n++] = kind->fields[i].name;
		for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
			if (!specials[i].user_only || !kind->kernel)
				names[n++] = specials[i].name;
		close = tk_closest_name(field, names, n);
	}
	if (close)
		tk_error("event '%s' has no field '%s' (did you mean '%s'?)", e->name,
			 field, close);
	else
		tk_error("event '%s' has no field '%s'", e->name, field);
	free(names);
}

int hist_key_parse(const char *spec, const struct hist_event *e,
		   struct hist_key *k, const char *dir)
{
	const char *dot = strchr(spec, '.');
	size_t len = dot ? (size_t)(dot - spec) : strlen(spec);

	(void)dir;
	memset(k, 0, sizeof(*k));
	if (!len || len >= sizeof(k->name)) {
		tk_error("bad key '%s'", spec);
		return -1;
	}
	memcpy(k->name, spec, len);
	if (dot && parse_mod(spec, dot + 1, k) < 0)
		return -1;
	for (unsigned i = 0; i < e->nkinds; i++) {
		const struct tk_cursor_kind *kind = e->kinds[i];
		bool string = false, sign = false, dbl = false;
		int f = -1;

		for (unsigned j = 0; j < kind->nfields; j++)
			if (!strcmp(kind->fields[j].name, k->name)) {
				f = (int)j;
				break;
			}
		if (f >= 0) {
			switch (kind->fields[f].kind) {
			case TK_KIND_INT:
				sign = true;
				break;
			case TK_KIND_UINT:
				break;
			case TK_KIND_PTR:
				k->pointer = true;
				break;
			case TK_KIND_DOUBLE:
				dbl = true;
				break;
			case TK_KIND_CHARS:
			case TK_KIND_STRING:
				string = true;
				break;
			default:
				tk_error("field '%s' of event '%s' is a byte array: it cannot be a key or a value",
					 k->name, e->name);
				return -1;
			}
			k->src[i] = SRC_FIELD;
			k->field[i] = f;
		} else {
			size_t s;

			for (s = 0; s < sizeof(specials) / sizeof(specials[0]); s++)
				if (!strcmp(specials[s].name, k->name) &&
				    (!specials[s].user_only || !kind->kernel))
					break;
			if (s == sizeof(specials) / sizeof(specials[0])) {
				no_field(e, kind, k->name);
				return -1;
			}
			k->src[i] = specials[s].src;
			string = specials[s].src == SRC_COMM;
		}
		if (i && (string != k->string || dbl != k->is_double)) {
			tk_error("field '%s' of event '%s' is a number in one process and a string in another",
				 k->name, e->name);
			return -1;
		}
		k->string = string;
		k->is_signed = sign;
		k->is_double = dbl;
	}
	if (k->mod && (k->string || k->is_double)) {
		tk_error("key '%s': '%s' is not an integer field", spec, k->name);
		return -1;
	}
	k->size = k->string ? HIST_STR_MAX : 8;
	return 0;
}

/* ftrace's log2 key: the power of two at or above the value */
static uint64_t log2_bucket(uint64_t v)
{
	unsigned n = 0;

	if (v <= 1)
		return 0;
	v--;
	while (v) {
		v >>= 1;
		n++;
	}
	return n;
}

bool hist_key_encode(const struct hist_key *k, unsigned kind_index,
		     struct tk_cursor *c, const struct tk_value *values,
		     unsigned char *rec)
{
	unsigned char *p = rec + k->off;
	uint64_t u = 0;

	switch (k->src[kind_index]) {
	case SRC_FIELD: {
		const struct tk_value *v = &values[k->field[kind_index]];

		if (k->string) {
			size_t n = v->len < HIST_STR_MAX - 1 ? v->len : HIST_STR_MAX - 1;

			memcpy(p, v->str, n);
			memset(p + n, 0, HIST_STR_MAX - n);
			return true;
		}
		u = v->u;
		break;
	}
	case SRC_TID:
		u = (uint64_t)(int64_t)c->tid;
		break;
	case SRC_PID:
		u = (uint64_t)(int64_t)c->pid;
		break;
	case SRC_CPU:
		u = c->cpu;
		break;
	case SRC_COMM: {
		const char *comm = tk_cursor_comm(c);

		memset(p, 0, HIST_STR_MAX);
		strncpy((char *)p, comm, HIST_STR_MAX - 1);
		return true;
	}
	}
	if (k->mod == MOD_LOG2)
		u = log2_bucket(u);
	else if (k->mod == MOD_BUCKETS)
		u = u / k->buckets * k->buckets;
	memcpy(p, &u, 8);
	return true;
}

/* A pid's command name: the kernel's saved cmdlines, else a user stream
 * of that thread. */
static const char *pid_comm(struct tk_cursor *c, int pid)
{
	if (c->has_kernel && tep_is_pid_registered(c->kernel.tep, pid))
		return tep_data_comm_from_pid(c->kernel.tep, pid);
	for (unsigned i = 0; i < c->trace.nstreams; i++)
		if ((int)c->trace.streams[i].tid == pid)
			return c->trace.streams[i].comm;
	return "<...>";
}

/* The symbols saved with the trace (format/symbols.h), loaded at the
 * first user address named, and the last names found (a filter on a
 * function's name asks for the same few functions again and again). */
static struct tk_symbols *user_syms;
static bool user_syms_tried;
static struct {
	uint64_t addr, off;
	uint32_t pid;
	const char *name;
} user_cache[256];

void hist_symbols_free(void)
{
	tk_symbols_free(user_syms);
	user_syms = NULL;
	user_syms_tried = false;
	memset(user_cache, 0, sizeof(user_cache));
}

/* The function holding user address @addr of process @pid; with no
 * process (a key record holds none, a kernel event has none), each of
 * the trace's processes is asked in turn (their code is mapped at
 * different addresses). */
static const char *user_symbol(struct tk_cursor *c, uint32_t pid, uint64_t addr,
			       uint64_t *off)
{
	unsigned h = (unsigned)((addr ^ pid) * 0x9e3779b97f4a7c15ull >> 56);
	const char *name = NULL;
	char err[256];

	if (user_cache[h].name && user_cache[h].addr == addr && user_cache[h].pid == pid) {
		*off = user_cache[h].off;
		return user_cache[h].name;
	}
	if (!user_syms_tried) {
		user_syms_tried = true;
		if (tk_symbols_load(c->trace.dir, &user_syms, err, sizeof(err)) < 0)
			user_syms = NULL;
	}
	if (pid)
		name = tk_symbols_lookup(user_syms, pid, addr, off);
	for (unsigned i = 0; !pid && !name && user_syms && i < c->trace.nprocesses; i++)
		name = tk_symbols_lookup(user_syms, c->trace.processes[i].pid, addr, off);
	if (name) {
		user_cache[h].addr = addr;
		user_cache[h].pid = pid;
		user_cache[h].off = *off;
		user_cache[h].name = name;
	}
	return name;
}

const char *hist_function_name(struct tk_cursor *c, uint32_t pid, uint64_t addr,
			       uint64_t *off)
{
	const char *fn;

	*off = 0;
	if (addr < TK_KERNEL_ADDR_MIN)
		return user_symbol(c, pid, addr, off);
	if (!c->has_kernel)
		return NULL;
	tk_kernel_load_symbols(&c->kernel);
	fn = tep_find_function(c->kernel.tep, addr);
	if (fn)
		*off = addr - tep_find_function_address(c->kernel.tep, addr);
	return fn;
}

const char *hist_filter_namer(void *cursor, uint64_t addr)
{
	struct tk_cursor *c = cursor;
	uint64_t off;

	return hist_function_name(c, c->pid > 0 ? (uint32_t)c->pid : 0, addr, &off);
}

size_t hist_key_format(const struct hist_key *k, const unsigned char *rec,
		       struct tk_cursor *c, char *buf, size_t size)
{
	struct tk_obuf t;
	uint64_t off = 0;

	hist_text_start(&t, buf, size);
	const unsigned char *p = rec + k->off;
	uint64_t u;

	if (k->string) {
		tk_oput(&t, (const char *)p, strnlen((const char *)p, HIST_STR_MAX));
		return hist_text_end(&t);
	}
	memcpy(&u, p, 8);
	switch (k->mod) {
	case MOD_HEX:
		tk_oput(&t, "0x", 2);
		tk_ohex(&t, u);
		break;
	case MOD_LOG2:
		tk_oputs(&t, "~ 2^");
		tk_oudec(&t, u);
		break;
	case MOD_BUCKETS:
		tk_oudec(&t, u);
		tk_oputs(&t, " ~ ");
		tk_oudec(&t, u + k->buckets - 1);
		break;
	case MOD_EXECNAME:
		tk_oputs(&t, pid_comm(c, (int)u));
		tk_oputs(&t, " [");
		tk_oudec(&t, u);
		tk_oputs(&t, "]");
		break;
	case MOD_SYM: {
		const char *fn = hist_function_name(c, 0, u, &off);

		if (fn) {
			tk_oputs(&t, fn);
			if (off) {
				tk_oput(&t, "+0x", 3);
				tk_ohex(&t, off);
			}
		} else {
			tk_oput(&t, "0x", 2);
			tk_ohex(&t, u);
		}
		break;
	}
	default:
		if (k->is_double) {
			double d;
			int n;

			memcpy(&d, &u, 8);
			n = snprintf(buf, size, "%g", d); /* number.h writes integers */
			return n > 0 ? (size_t)n < size ? (size_t)n : size - 1 : 0;
		}
		if (k->is_signed)
			tk_odec(&t, (int64_t)u);
		else
			tk_oudec(&t, u);
	}
	return hist_text_end(&t);
}

uint64_t hist_ticks_to_ns(const struct tk_trace_clock *clk, uint64_t ticks)
{
	if (!clk->freq || clk->freq == 1000000000u)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / clk->freq);
}

void hist_print_lost(FILE *f, const struct tk_cursor *c)
{
	uint64_t user = 0, kernel = c->has_kernel ? tk_kernel_lost(&c->kernel) : 0;

	for (unsigned i = 0; i < c->trace.nstreams; i++)
		user += tk_stream_lost(&c->trace.streams[i]);
	if (user || kernel) {
		char a[TK_NUM_MAX], b[TK_NUM_MAX];

		fprintf(f, "# warning: the recording lost %s user and %s kernel events: counts are short of them\n",
			hist_u64(a, user), hist_u64(b, kernel));
	}
}
