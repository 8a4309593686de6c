/* SPDX-License-Identifier: MIT */
/*
 * report-profile.c - tracekit report --profile: per function, the number
 * of calls, total time (entry to exit, callees included), self time
 * (without the traced callees), average and maximum, sorted by total, as
 * ftrace's function profiler (trace_stat/function*) shows them.  Calls
 * whose exit was not recorded (longjmp, still running at the end, -p
 * function) are counted but not timed.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report-profile.h"

struct prof_entry {
	char *name;
	uint64_t calls, timed, total, self, max;
};

struct ftrace_profile {
	struct prof_entry *e; /* open addressing on the name */
	unsigned cap, count;
	const char *last_name; /* names are stable: pointer cache */
	struct prof_entry *last;
};

static unsigned hash(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

struct ftrace_profile *ftrace_profile_new(void)
{
	struct ftrace_profile *p = calloc(1, sizeof(*p));

	if (p) {
		p->cap = 1024;
		p->e = calloc(p->cap, sizeof(*p->e));
		if (!p->e) {
			free(p);
			return NULL;
		}
	}
	return p;
}

static struct prof_entry *slot(struct prof_entry *e, unsigned cap,
			       const char *name)
{
	unsigned h = hash(name) & (cap - 1);

	while (e[h].name && strcmp(e[h].name, name))
		h = (h + 1) & (cap - 1);
	return &e[h];
}

static int grow(struct ftrace_profile *p)
{
	unsigned cap = p->cap * 2;
	struct prof_entry *e = calloc(cap, sizeof(*e));

	if (!e)
		return -1;
	for (unsigned i = 0; i < p->cap; i++)
		if (p->e[i].name)
			*slot(e, cap, p->e[i].name) = p->e[i];
	free(p->e);
	p->e = e;
	p->cap = cap;
	p->last_name = NULL;
	return 0;
}

void ftrace_profile_add(struct ftrace_profile *p, const char *name, bool timed,
			uint64_t total_ns, uint64_t self_ns)
{
	struct prof_entry *e;

	if (p->last_name == name) {
		e = p->last;
	} else {
		if (p->count * 2 >= p->cap && grow(p) < 0)
			return;
		e = slot(p->e, p->cap, name);
		if (!e->name) {
			e->name = strdup(name);
			if (!e->name)
				return;
			p->count++;
		}
		/* names from the symbol tables stay put; numbers do not */
		p->last_name = strncmp(name, "0x", 2) ? name : NULL;
		p->last = e;
	}
	e->calls++;
	if (!timed)
		return;
	e->timed++;
	e->total += total_ns;
	e->self += self_ns;
	if (total_ns > e->max)
		e->max = total_ns;
}

static int by_total(const void *a, const void *b)
{
	const struct prof_entry *x = *(struct prof_entry *const *)a;
	const struct prof_entry *y = *(struct prof_entry *const *)b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void put_us(FILE *f, uint64_t ns, bool known)
{
	if (known)
		fprintf(f, " %11" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
	else
		fprintf(f, " %15s", "-");
}

void ftrace_profile_print(struct ftrace_profile *p, FILE *f)
{
	struct prof_entry **sorted = calloc(p->count + 1, sizeof(*sorted));
	unsigned n = 0;

	if (!sorted)
		return;
	for (unsigned i = 0; i < p->cap; i++)
		if (p->e[i].name)
			sorted[n++] = &p->e[i];
	if (!n) { /* nothing to show: report says why, on stderr */
		free(sorted);
		return;
	}
	qsort(sorted, n, sizeof(*sorted), by_total);
	fprintf(f, "  %-32s %10s %15s %15s %15s %15s\n", "Function", "Calls",
		"Total (us)", "Self (us)", "Avg (us)", "Max (us)");
	fprintf(f, "  %-32s %10s %15s %15s %15s %15s\n", "--------", "-----",
		"----------", "---------", "--------", "--------");
	for (unsigned i = 0; i < n; i++) {
		const struct prof_entry *e = sorted[i];
		bool t = e->timed > 0;

		fprintf(f, "  %-32s %10" PRIu64, e->name, e->calls);
		put_us(f, e->total, t);
		put_us(f, e->self, t);
		put_us(f, t ? e->total / e->timed : 0, t);
		put_us(f, e->max, t);
		fputc('\n', f);
	}
	free(sorted);
}

void ftrace_profile_free(struct ftrace_profile *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->cap; i++)
		free(p->e[i].name);
	free(p->e);
	free(p);
}
