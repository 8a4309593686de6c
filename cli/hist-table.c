/* SPDX-License-Identifier: MIT */
/*
 * hist-table.c - `tracekit hist -e EVENT --key ...`: one entry per
 * distinct key, with its hit count and the sums of --val fields, printed
 * as ftrace prints a hist trigger:
 *
 *   { id:          7, comm: worker } hitcount:         12  len:       4096
 *
 * Entries live in arrays (key records, counts, sums) indexed through a
 * hist_map; memory grows with the number of distinct keys, not with the
 * trace.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "common/filter.h"
#include "filter-check.h"
#include "hist.h"

struct table {
	struct hist_map map;
	unsigned nvals;
	uint64_t *counts;
	uint64_t *sums; /* cap * nvals: integers, or doubles' bits */
	size_t cap;
};

/* The entry of key record @k, made if new; -1 when out of memory. */
static long table_entry(struct table *t, const unsigned char *k)
{
	bool added;
	long i = hist_map_get(&t->map, k, &added);

	if (i < 0)
		return -1;
	if (t->map.cap != t->cap) {
		uint64_t *counts = realloc(t->counts, t->map.cap * sizeof(*counts));
		uint64_t *sums;

		if (!counts)
			return -1;
		t->counts = counts;
		sums = realloc(t->sums, t->map.cap * (t->nvals ? t->nvals : 1) * sizeof(*sums));
		if (!sums)
			return -1;
		t->sums = sums;
		t->cap = t->map.cap;
	}
	if (added) {
		t->counts[i] = 0;
		memset(t->sums + (size_t)i * t->nvals, 0, t->nvals * sizeof(*t->sums));
	}
	return i;
}

/* --sort: what each item compares and in which direction. */
struct sort_item {
	int what; /* -1 count, 0.. key index, 1000.. value index */
	bool descending;
};

struct sort_ctx {
	const struct table *t;
	const struct hist_table_opts *o;
	struct sort_item items[HIST_MAX_KEYS * 2 + 2];
	unsigned nitems;
};

static int parse_sort(const char *spec, const struct hist_table_opts *o,
		      struct sort_ctx *s)
{
	char *copy = strdup(spec), *save = NULL;

	if (!copy)
		return -1;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct sort_item it = { -2, false };
		char *dot = strrchr(tok, '.');
		int dir = 0;

		if (dot && (!strcmp(dot, ".descending") || !strcmp(dot, ".desc")))
			dir = 1;
		else if (dot && (!strcmp(dot, ".ascending") || !strcmp(dot, ".asc")))
			dir = -1;
		if (dir)
			*dot = 0;
		if (!strcmp(tok, "count") || !strcmp(tok, "hitcount")) {
			it.what = -1;
			it.descending = true;
		}
		for (unsigned i = 0; it.what == -2 && i < o->nkeys; i++)
			if (!strcmp(tok, o->keys[i].name))
				it.what = (int)i;
		for (unsigned i = 0; it.what == -2 && i < o->nvals; i++)
			if (!strcmp(tok, o->vals[i].name)) {
				it.what = 1000 + (int)i;
				it.descending = true;
			}
		if (it.what == -2 || s->nitems == sizeof(s->items) / sizeof(s->items[0])) {
			tk_error("--sort '%s': '%s' is neither count nor a key or value", spec,
				 tok);
			free(copy);
			return -1;
		}
		if (dir)
			it.descending = dir > 0;
		s->items[s->nitems++] = it;
	}
	free(copy);
	return 0;
}

static int cmp_u(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_num(const struct hist_key *k, uint64_t a, uint64_t b)
{
	if (k->is_double) {
		double x, y;

		memcpy(&x, &a, 8);
		memcpy(&y, &b, 8);
		return x < y ? -1 : x > y;
	}
	if (k->is_signed && !k->mod)
		return (int64_t)a < (int64_t)b ? -1 : (int64_t)a > (int64_t)b;
	return cmp_u(a, b);
}

static int entry_cmp(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *s = arg;
	const struct table *t = s->t;
	size_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	for (unsigned i = 0; i < s->nitems; i++) {
		const struct sort_item *it = &s->items[i];
		int r;

		if (it->what == -1) {
			r = cmp_u(t->counts[a], t->counts[b]);
		} else if (it->what >= 1000) {
			unsigned v = (unsigned)it->what - 1000;

			r = cmp_num(&s->o->vals[v], t->sums[a * t->nvals + v],
				    t->sums[b * t->nvals + v]);
		} else {
			const struct hist_key *k = &s->o->keys[it->what];
			const unsigned char *ka = t->map.keys + a * t->map.keysize + k->off;
			const unsigned char *kb = t->map.keys + b * t->map.keysize + k->off;

			if (k->string) {
				r = strncmp((const char *)ka, (const char *)kb, HIST_STR_MAX);
			} else {
				uint64_t x, y;

				memcpy(&x, ka, 8);
				memcpy(&y, kb, 8);
				r = cmp_num(k, x, y);
			}
		}
		if (r)
			return it->descending ? -r : r;
	}
	/* then by the keys, for a stable output */
	return memcmp(t->map.keys + a * t->map.keysize, t->map.keys + b * t->map.keysize, t->map.keysize);
}

static void format_sum(const struct hist_key *v, uint64_t sum, char *buf, size_t size)
{
	struct tk_obuf t;

	if (v->is_double) {
		double d;

		memcpy(&d, &sum, 8);
		snprintf(buf, size, "%g", d); /* number.h writes integers */
		return;
	}
	hist_text_start(&t, buf, size);
	if (v->is_signed) {
		tk_odec(&t, (int64_t)sum);
	} else if (v->mod == MOD_HEX) {
		tk_oput(&t, "0x", 2);
		tk_ohex(&t, sum);
	} else {
		tk_oudec(&t, sum);
	}
	hist_text_end(&t);
}

static void print_table(struct tk_cursor *c, const struct table *t,
			const struct hist_event *e, const struct hist_table_opts *o,
			const uint32_t *order, size_t shown, uint64_t hits,
			uint64_t filtered)
{
	int widths[HIST_MAX_KEYS] = { 0 };
	char buf[256], num[TK_NUM_MAX];

	printf("# event histogram of %s\n#\n# keys: ", e->name);
	for (unsigned i = 0; i < o->nkeys; i++)
		printf("%s%s", i ? "," : "", o->keys[i].name);
	printf("  values: hitcount");
	for (unsigned i = 0; i < o->nvals; i++)
		printf(",%s", o->vals[i].name);
	printf("  sort: %s", o->sort ? o->sort : "count");
	if (o->filter)
		printf("  filter: %s", o->filter);
	printf("\n#\n");
	hist_print_lost(stdout, c);
	for (size_t i = 0; i < shown; i++)
		for (unsigned k = 0; k < o->nkeys; k++) {
			int n = (int)hist_key_format(&o->keys[k], t->map.keys + order[i] * t->map.keysize,
						     c, buf, sizeof(buf));

			if (n > widths[k])
				widths[k] = n;
		}
	for (size_t i = 0; i < shown; i++) {
		size_t idx = order[i];

		printf("{ ");
		for (unsigned k = 0; k < o->nkeys; k++) {
			const struct hist_key *key = &o->keys[k];

			hist_key_format(key, t->map.keys + idx * t->map.keysize, c, buf, sizeof(buf));
			printf("%s%s: %*s", k ? ", " : "", key->name,
			       key->string || key->mod == MOD_EXECNAME || key->mod == MOD_SYM
				       ? -widths[k] : widths[k],
			       buf);
		}
		printf(" } hitcount: %10s", hist_u64(num, t->counts[idx]));
		for (unsigned v = 0; v < o->nvals; v++) {
			format_sum(&o->vals[v], t->sums[idx * t->nvals + v], buf, sizeof(buf));
			printf("  %s: %10s", o->vals[v].name, buf);
		}
		printf("\n");
	}
	printf("\nTotals:\n    Hits: %s\n", hist_u64(num, hits));
	printf("    Entries: %s\n", hist_u64(num, t->map.n));
	if (shown < t->map.n)
		printf("    Shown: %s\n", hist_u64(num, shown));
	if (o->filter)
		printf("    Filtered out: %s\n", hist_u64(num, filtered));
}

int hist_filters_compile(struct tk_cursor *c, const char *filter,
			 const struct hist_event *e, struct tk_filter **out)
{
	for (unsigned i = 0; filter && i < e->nkinds; i++) {
		struct filter_check fc = { 0 };
		struct tk_filter_error fe;
		char msg[512];

		/* as its keys, the filter holds for each kind of the event */
		if (tk_filter_compile_named(filter, e->kinds[i]->fields,
					    e->kinds[i]->nfields, hist_filter_namer, c,
					    &out[i], &fe) < 0) {
			filter_check_note(&fc, e->name, &fe);
			filter_check_result(&fc, filter, msg, sizeof(msg));
			tk_error("%s", msg);
			return -1;
		}
	}
	return 0;
}

int hist_table_run(struct tk_cursor *c, const struct hist_event *e,
		   const struct hist_table_opts *o, const char *dir)
{
	struct tk_filter *filters[HIST_MAX_KINDS] = { 0 };
	struct table t = { 0 };
	struct sort_ctx s = { 0 };
	unsigned char *rec = NULL;
	uint32_t *order = NULL;
	uint64_t hits = 0, filtered = 0, short_records = 0;
	int ret = -1;

	for (unsigned i = 0; i < o->nkeys; i++)
		t.map.keysize += o->keys[i].size;
	t.map.keysize = (t.map.keysize + 7) & ~(size_t)7;
	t.nvals = o->nvals;
	s.t = &t;
	s.o = o;
	if (parse_sort(o->sort ? o->sort : "count", o, &s) < 0)
		goto out;
	if (hist_filters_compile(c, o->filter, e, filters) < 0)
		goto out;
	rec = calloc(1, t.map.keysize + 8);
	if (!rec)
		goto nomem;
	for (unsigned i = 0; i < e->nkinds; i++)
		e->kinds[i]->user = (void *)(uintptr_t)(i + 1);
	while (tk_cursor_next(c) > 0) {
		const struct tk_value *values;
		unsigned ki;
		long idx;

		if (!c->kind->user)
			continue;
		ki = (unsigned)(uintptr_t)c->kind->user - 1;
		values = tk_cursor_values(c);
		if (!values) {
			short_records++;
			continue;
		}
		if (filters[ki] && !tk_filter_match(filters[ki], values)) {
			filtered++;
			continue;
		}
		for (unsigned k = 0; k < o->nkeys; k++)
			hist_key_encode(&o->keys[k], ki, c, values, rec);
		idx = table_entry(&t, rec);
		if (idx < 0)
			goto nomem;
		t.counts[idx]++;
		hits++;
		for (unsigned v = 0; v < o->nvals; v++) {
			const struct hist_key *val = &o->vals[v];
			uint64_t *sum = &t.sums[(size_t)idx * t.nvals + v];
			uint64_t x = values[val->field[ki]].u;

			if (val->is_double) {
				double d, a;

				memcpy(&d, sum, 8);
				memcpy(&a, &x, 8);
				d += a;
				memcpy(sum, &d, 8);
			} else {
				*sum += x;
			}
		}
	}
	if (c->nerrors)
		tk_error("%s", c->error);
	if (short_records)
		tk_warn("%" PRIu64 " '%s' records were too short for their format", short_records,
			e->name);
	if (!hits && !filtered) {
		tk_error("no '%s' event in trace '%s'", e->name, dir);
		goto out;
	}
	order = malloc((t.map.n + 1) * sizeof(*order));
	if (!order)
		goto nomem;
	for (size_t i = 0; i < t.map.n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, t.map.n, sizeof(*order), entry_cmp, &s);
	print_table(c, &t, e, o, order, o->limit && o->limit < t.map.n ? o->limit : t.map.n, hits,
		    filtered);
	ret = c->nerrors ? -1 : 0;
	goto out;
nomem:
	tk_error("out of memory reading trace '%s'", dir);
out:
	for (unsigned i = 0; i < e->nkinds; i++)
		tk_filter_free(filters[i]);
	free(order);
	free(rec);
	hist_map_free(&t.map);
	free(t.counts);
	free(t.sums);
	return ret;
}
