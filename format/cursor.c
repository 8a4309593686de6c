/* SPDX-License-Identifier: MIT */
/*
 * cursor.c - a whole trace in time order (cursor.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include "cursor.h"

static int make_kinds(struct tk_cursor *c)
{
	const struct tk_trace *t = &c->trace;
	struct tep_event **evs = NULL;
	unsigned n = 0, nk = 0;
	int max = -1;

	for (unsigned i = 0; i < t->nprocesses; i++)
		n += t->processes[i].nevents;
	if (c->has_kernel) {
		evs = tep_list_events(c->kernel.tep, TEP_EVENT_SORT_ID);
		for (struct tep_event **e = evs; e && *e; e++) {
			if ((*e)->id < 0 || (*e)->id >= 65536)
				continue;
			nk++;
			if ((*e)->id > max)
				max = (*e)->id;
		}
	}
	c->kinds = calloc(n + nk + 1, sizeof(*c->kinds));
	c->nids = (unsigned)(max + 1);
	c->kernel_by_id = calloc(c->nids + 1, sizeof(*c->kernel_by_id));
	if (!c->kinds || !c->kernel_by_id)
		return -ENOMEM;
	for (unsigned i = 0; i < t->nprocesses; i++) {
		for (unsigned j = 0; j < t->processes[i].nevents; j++) {
			struct tk_event_info *ev = &t->processes[i].events[j];
			struct tk_cursor_kind *k = &c->kinds[c->nkinds++];

			k->name = ev->full_name;
			k->info = ev;
			k->fields = ev->fields;
			k->nfields = ev->nfields;
			ev->user = k;
		}
	}
	for (struct tep_event **e = evs; e && *e; e++) {
		struct tk_cursor_kind *k;

		if ((*e)->id < 0 || (*e)->id >= 65536)
			continue;
		k = &c->kinds[c->nkinds++];
		k->kernel = true;
		k->tep = *e;
		if (asprintf(&k->kname, "%s:%s", (*e)->system, (*e)->name) < 0 ||
		    tk_kfields_init(&k->kf, *e) < 0)
			return -ENOMEM;
		k->name = k->kname;
		k->fields = k->kf.fields;
		k->nfields = k->kf.nfields;
		c->kernel_by_id[(*e)->id] = k;
	}
	c->unknown.name = "kernel:unknown";
	c->unknown.kernel = true;
	return 0;
}

int tk_cursor_open(struct tk_cursor *c, const char *dir, char *err,
		   size_t errlen)
{
	int ret;

	memset(c, 0, sizeof(*c));
	ret = tk_trace_read_index(dir, &c->trace, err, errlen);
	if (ret < 0)
		return ret;
	ret = tk_kernel_open(dir, &c->kernel, err, errlen);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	c->has_kernel = ret == 0;
	if (c->has_kernel)
		tk_kernel_name_threads(&c->kernel, &c->trace);
	if (make_kinds(c) < 0 ||
	    tk_merge_open(&c->merge, &c->trace, c->has_kernel ? &c->kernel : NULL) < 0) {
		snprintf(err, errlen, "out of memory reading '%s'", dir);
		return -ENOMEM;
	}
	c->src = ~0u;
	return 0;
}

int tk_cursor_next(struct tk_cursor *c)
{
	struct tk_merge_event ev;
	char err[512];
	int ret;

	/* a source that fails ends there; the others go on */
	while ((ret = tk_merge_next(&c->merge, &ev, err, sizeof(err))) < 0)
		if (!c->nerrors++)
			snprintf(c->error, sizeof(c->error), "%s",
				 ret == -ENOMEM ? "out of memory" : err);
	if (!ret) {
		c->src = ~0u;
		c->kind = NULL;
		c->reader = NULL;
		return 0;
	}
	c->src = c->merge.current;
	c->ts = ev.ts;
	c->reader = ev.user;
	if (ev.user) {
		struct tk_stream_reader *r = ev.user;

		c->kind = r->event->user;
		c->cpu = r->cpu;
		c->tid = (int)r->stream->tid;
		c->pid = (int)r->stream->pid;
		c->missed = 0;
		c->data = NULL;
		c->values_ready = true;
	} else {
		struct tk_kernel_cpu *kc = ev.kcpu;
		int id = tk_kernel_event_id(&c->kernel, kc->data);

		c->kind = id >= 0 && (unsigned)id < c->nids && c->kernel_by_id[id]
				  ? c->kernel_by_id[id] : &c->unknown;
		c->cpu = kc->cpu;
		c->tid = tk_kernel_pid(&c->kernel, kc->data);
		c->pid = -1;
		c->missed = kc->missed;
		c->data = kc->data;
		c->data_size = kc->data_size;
		c->values_ready = false;
	}
	return 1;
}

const struct tk_value *tk_cursor_values(struct tk_cursor *c)
{
	const struct tk_cursor_kind *k = c->kind;

	if (c->reader)
		return c->reader->values;
	if (c->values_ready)
		return c->values;
	if (!c->values || k->nfields > c->values_cap) {
		unsigned cap = k->nfields ? k->nfields : 1;
		struct tk_value *v = realloc(c->values, cap * sizeof(*v));

		if (!v)
			return NULL;
		c->values = v;
		c->values_cap = cap;
	}
	if (!tk_kfields_values(&k->kf, c->data, c->data_size, c->values))
		return NULL;
	c->values_ready = true;
	return c->values;
}

const char *tk_cursor_comm_of(const struct tk_cursor *c, unsigned src, int tid)
{
	if (src < c->merge.nreaders)
		return c->merge.readers[src].stream->comm;
	return tep_data_comm_from_pid(c->kernel.tep, tid);
}

const char *tk_cursor_comm(const struct tk_cursor *c)
{
	return tk_cursor_comm_of(c, c->src, c->tid);
}

unsigned tk_cursor_find(const struct tk_cursor *c, const char *name,
			struct tk_cursor_kind **out, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->nkinds; i++) {
		if (strcmp(c->kinds[i].name, name))
			continue;
		if (n < max)
			out[n] = &c->kinds[i];
		n++;
	}
	return n;
}

const char **tk_cursor_names(const struct tk_cursor *c)
{
	const char **names = calloc(c->nkinds + 1, sizeof(*names));

	for (unsigned i = 0; names && i < c->nkinds; i++)
		names[i] = c->kinds[i].name;
	return names;
}

void tk_cursor_close(struct tk_cursor *c)
{
	tk_merge_close(&c->merge);
	for (unsigned i = 0; i < c->nkinds; i++) {
		tk_kfields_free(&c->kinds[i].kf);
		free(c->kinds[i].kname);
	}
	free(c->kinds);
	free(c->kernel_by_id);
	free(c->values);
	tk_kernel_close(&c->kernel);
	tk_trace_free(&c->trace);
	memset(c, 0, sizeof(*c));
}
