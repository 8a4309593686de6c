/* SPDX-License-Identifier: MIT */
/*
 * convert-select.c - which events convert keeps (convert-select.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include "common/pattern.h"
#include "convert-select.h"

static bool in_window(const struct convert_select *s, const struct tk_export *x,
		      uint64_t ts)
{
	return report_select_in_window(&s->sel, &x->trace->clock, x->first_ts, ts);
}

static bool sel_stream(void *arg, const struct tk_export *x,
		       const struct tk_trace_stream *st)
{
	struct convert_select *s = arg;

	s->sel.who.trace = x->trace; /* for a kernel thread's process */
	return report_who_selects(&s->sel.who, st->pid, st->tid, st->comm);
}

static bool sel_user(void *arg, const struct tk_export *x,
		     const struct tk_stream_reader *rd)
{
	struct convert_select *s = arg;

	return report_selected(s->sel.patterns, s->sel.npatterns, rd->event->full_name) &&
	       in_window(s, x, rd->ts);
}

/* Whether --events keeps kernel event @id (looked up once per id). */
static bool kernel_id_kept(struct convert_select *s, const struct tk_kernel *k, int id)
{
	struct tep_event *e;
	char *name;
	bool kept;

	if (!s->sel.npatterns)
		return true;
	if (id < 0)
		return false;
	if ((unsigned)id >= s->nids) {
		unsigned n = (unsigned)id + 64;
		unsigned char *p = realloc(s->kernel_ids, n);

		if (!p)
			return false;
		memset(p + s->nids, 0, n - s->nids);
		s->kernel_ids = p;
		s->nids = n;
	}
	if (s->kernel_ids[id])
		return s->kernel_ids[id] == 1;
	e = tep_find_event(k->tep, id);
	if (!e || asprintf(&name, "%s:%s", e->system, e->name) < 0)
		return false;
	kept = report_selected(s->sel.patterns, s->sel.npatterns, name);
	free(name);
	s->kernel_ids[id] = kept ? 1 : 2;
	return kept;
}

static bool sel_kernel(void *arg, const struct tk_export *x,
		       const struct tk_kernel_cpu *c)
{
	struct convert_select *s = arg;
	const struct tk_kernel *k = x->kernel;
	int pid;

	if (!kernel_id_kept(s, k, tk_kernel_event_id(k, c->data)))
		return false;
	if (!report_who_all(&s->sel.who)) {
		s->sel.who.trace = x->trace;
		pid = tk_kernel_pid(k, c->data);
		if (!report_who_selects(&s->sel.who, 0, (uint32_t)pid,
					s->sel.who.comm ? tep_data_comm_from_pid(k->tep, pid)
						    : NULL))
			return false;
	}
	return in_window(s, x, c->ts);
}

const struct tk_export_select *convert_select_prepare(struct convert_select *s)
{
	if (!s->sel.what[0])
		return NULL;
	s->ops.stream = sel_stream;
	s->ops.user = sel_user;
	s->ops.kernel = sel_kernel;
	s->ops.arg = s;
	s->ops.what = s->sel.what;
	return &s->ops;
}

void convert_select_free(struct convert_select *s)
{
	report_select_free(&s->sel);
	free(s->kernel_ids);
}
