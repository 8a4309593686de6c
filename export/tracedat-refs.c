/* SPDX-License-Identifier: MIT */
/*
 * tracedat-refs.c - the symbols and tasks a trace.dat's events refer to
 * (tracedat-refs.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include "tracedat-refs.h"

/* A kallsyms line: "ADDR TYPE NAME [MODULE]". */
struct td_ksym {
	uint64_t addr;
	uint32_t off, len; /* the line in the text, without its newline */
	bool keep;
};

/* Where an event's pids are: common_pid, then its *pid fields. */
struct td_pidfields {
	unsigned n;
	uint32_t off[];
};

#define TD_MAX_PID (1u << 22) /* the kernel's PID_MAX_LIMIT on 64-bit */
#define TD_MAX_ID 65536       /* common_type is 16 bits */

static int ksym_cmp(const void *a, const void *b)
{
	const struct td_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->off > y->off) - (x->off < y->off);
}

/* The lines of the text, sorted by address; lines that do not start
 * with an address, and address 0 (a table read without the right to see
 * addresses), name nothing and are left out. */
static int parse_kallsyms(struct td_refs *r)
{
	size_t cap = 0;

	for (size_t at = 0; at < r->kallsyms_len;) {
		const char *line = r->kallsyms + at;
		const char *nl = memchr(line, '\n', r->kallsyms_len - at);
		size_t len = nl ? (size_t)(nl - line) : r->kallsyms_len - at;
		char *end;
		uint64_t addr = strtoull(line, &end, 16);

		if (end > line && end < line + len && *end == ' ' && addr) {
			if (r->nsym == cap) {
				struct td_ksym *s = realloc(r->sym, (cap = cap * 2 + 4096) * sizeof(*s));

				if (!s)
					return -ENOMEM;
				r->sym = s;
			}
			r->sym[r->nsym++] = (struct td_ksym){ .addr = addr, .off = (uint32_t)at,
							      .len = (uint32_t)len };
		}
		at += len + 1;
	}
	if (r->nsym) {
		qsort(r->sym, r->nsym, sizeof(*r->sym), ksym_cmp);
		r->lo = r->sym[0].addr;
		r->hi = r->sym[r->nsym - 1].addr;
	}
	return 0;
}

int td_refs_init(struct td_refs *r, struct tep_handle *tep, unsigned pid_off,
		 char *kallsyms, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->tep = tep;
	r->pid_off = pid_off;
	r->kallsyms = kallsyms;
	r->kallsyms_len = kallsyms && len <= UINT32_MAX ? len : 0;
	return parse_kallsyms(r);
}

/* Keep the symbols at address sym[i].addr (all of them: which of several
 * names libtraceevent picks is its own choice). */
static void keep_at(struct td_refs *r, unsigned i)
{
	uint64_t addr = r->sym[i].addr;

	while (i > 0 && r->sym[i - 1].addr == addr)
		i--;
	for (; i < r->nsym && r->sym[i].addr == addr; i++)
		r->sym[i].keep = true;
}

static void note_addr(struct td_refs *r, uint64_t addr)
{
	unsigned lo = 0, hi = r->nsym;

	/* the last symbol at or below addr */
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;

		if (r->sym[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (r->sym[lo].keep && (hi == r->nsym || r->sym[hi].keep))
		return;
	keep_at(r, lo);
	if (hi < r->nsym)
		keep_at(r, hi);
}

void td_refs_pid(struct td_refs *r, int pid)
{
	unsigned p = (unsigned)pid;

	if (pid <= 0 || p >= TD_MAX_PID)
		return;
	if (p >= r->pids_bits) {
		unsigned bits = r->pids_bits ? r->pids_bits : 32768;
		uint8_t *b;

		while (bits <= p)
			bits *= 2;
		b = realloc(r->pids, bits / 8);
		if (!b)
			return; /* the pid keeps no name: trace-cmd prints <...> */
		memset(b + r->pids_bits / 8, 0, (bits - r->pids_bits) / 8);
		r->pids = b;
		r->pids_bits = bits;
	}
	r->pids[p / 8] |= (uint8_t)(1u << (p % 8));
}

static bool pid_noted(const struct td_refs *r, unsigned long p)
{
	return p < r->pids_bits && (r->pids[p / 8] >> (p % 8) & 1);
}

/* The offsets of event @id's pids, made on first use; NULL when the
 * event is unknown or memory is short (its common_pid is still noted). */
static const struct td_pidfields *pid_fields(struct td_refs *r, int id)
{
	struct td_pidfields *pf;
	struct tep_format_field **fields;
	struct tep_event *ev;
	unsigned n = 0;

	if (id < 0 || id >= TD_MAX_ID)
		return NULL;
	if ((unsigned)id >= r->nids) {
		unsigned nids = (unsigned)id + 256;
		struct td_pidfields **by = realloc(r->by_id, nids * sizeof(*by));

		if (!by)
			return NULL;
		memset(by + r->nids, 0, (nids - r->nids) * sizeof(*by));
		r->by_id = by;
		r->nids = nids;
	}
	if (r->by_id[id])
		return r->by_id[id];
	ev = tep_find_event(r->tep, id);
	fields = ev ? tep_event_fields(ev) : NULL;
	for (unsigned i = 0; fields && fields[i]; i++)
		n++;
	pf = malloc(sizeof(*pf) + (n + 1) * sizeof(pf->off[0]));
	if (!pf) {
		free(fields);
		return NULL;
	}
	pf->n = 0;
	pf->off[pf->n++] = r->pid_off;
	for (unsigned i = 0; fields && fields[i]; i++) {
		const struct tep_format_field *f = fields[i];
		size_t len = strlen(f->name);

		if (f->size == 4 && f->offset >= 0 && len >= 3 &&
		    !strcmp(f->name + len - 3, "pid") &&
		    !(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC | TEP_FIELD_IS_POINTER)))
			pf->off[pf->n++] = (uint32_t)f->offset;
	}
	free(fields);
	r->by_id[id] = pf;
	return pf;
}

void td_refs_kernel(struct td_refs *r, const unsigned char *data, unsigned size)
{
	const struct td_pidfields *pf;
	int id;

	for (unsigned off = 0; r->nsym && off + 8 <= size; off += 4) {
		uint64_t v;

		memcpy(&v, data + off, 8);
		if (v >= r->lo && v <= r->hi)
			note_addr(r, v);
	}
	if (!r->tep || size < 2)
		return;
	id = tep_data_type(r->tep, &(struct tep_record){ .data = (void *)data, .size = (int)size });
	pf = pid_fields(r, id);
	for (unsigned i = 0; pf && i < pf->n; i++) {
		int32_t pid;

		if (pf->off[i] + 4 <= size) {
			memcpy(&pid, data + pf->off[i], 4);
			td_refs_pid(r, pid);
		}
	}
	if (!pf && r->pid_off + 4 <= size) {
		int32_t pid;

		memcpy(&pid, data + r->pid_off, 4);
		td_refs_pid(r, pid);
	}
}

char *td_refs_kallsyms(const struct td_refs *r, size_t *len)
{
	size_t n = 0;
	char *buf, *at;

	for (unsigned i = 0; i < r->nsym; i++)
		if (r->sym[i].keep)
			n += r->sym[i].len + 1;
	buf = malloc(n + 1);
	if (!buf)
		return NULL;
	at = buf;
	for (unsigned i = 0; i < r->nsym; i++) {
		if (!r->sym[i].keep)
			continue;
		memcpy(at, r->kallsyms + r->sym[i].off, r->sym[i].len);
		at += r->sym[i].len;
		*at++ = '\n';
	}
	*at = '\0';
	*len = n;
	return buf;
}

void td_refs_cmdlines(const struct td_refs *r, char *buf, size_t *len)
{
	size_t out = 0;

	for (size_t at = 0; at < *len;) {
		char *line = buf + at, *end;
		const char *nl = memchr(line, '\n', *len - at);
		size_t n = nl ? (size_t)(nl - line) + 1 : *len - at;
		unsigned long pid = strtoul(line, &end, 10);

		if (end > line && end < line + n && *end == ' ' && pid_noted(r, pid)) {
			memmove(buf + out, line, n);
			out += n;
		}
		at += n;
	}
	*len = out;
	if (buf)
		buf[out] = '\0';
}

void td_refs_free(struct td_refs *r)
{
	for (unsigned i = 0; i < r->nids; i++)
		free(r->by_id[i]);
	free(r->by_id);
	free(r->pids);
	free(r->sym);
	free(r->kallsyms);
	memset(r, 0, sizeof(*r));
}
