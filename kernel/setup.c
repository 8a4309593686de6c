/* SPDX-License-Identifier: MIT */
/*
 * setup.c - apply a whole configuration to a new instance: what record
 * and start share.
 *
 * Order matters: tracing off first (a new instance starts on), the pid
 * filter before any event is enabled (so no other process's event slips
 * in), each filter before its event is enabled, the tracer last.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h>
#include "kernel.h"

/* The kernel's reason for refusing @filter, in one line (kparse.c). */
static void filter_error(struct tk_kinstance *k, const char *event,
			 const char *filter, int e, char *err, size_t errlen)
{
	char *log = tracefs_error_last(k->inst);

	tk_kerror_filter(log, event, filter, e, err, errlen);
	free(log);
}

static int enable_event(struct tk_kinstance *k, const char *name,
			const char *filter, char *err, size_t errlen)
{
	char system[256], shown[512];
	const char *event = strchr(name, ':'), *kind;
	size_t n = event ? (size_t)(event - name) : 0;

	if (!event || n >= sizeof(system))
		return -EINVAL;
	memcpy(system, name, n);
	system[n] = '\0';
	event++;
	/* a probe's group is the recorder's: messages say it as -e and
	 * report do (uprobe:f) */
	kind = tk_uprobe_kind_of(system);
	snprintf(shown, sizeof(shown), "%s:%s", kind ? kind : system, event);
	if (filter) {
		tracefs_error_clear(k->inst);
		if (tracefs_event_file_write(k->inst, system, event, "filter",
					     filter) < 0) {
			int e = errno ? errno : EINVAL;

			filter_error(k, shown, filter, e, err, errlen);
			return -e;
		}
	}
	if (tracefs_event_file_write(k->inst, system, event, "enable", "1") < 0) {
		int e = errno ? errno : EIO;

		snprintf(err, errlen, "cannot enable kernel event '%s': %s", shown,
			 strerror(e));
		return -e;
	}
	return 0;
}

static int apply_rules(struct tk_kinstance *k, const struct tk_kevents *all,
		       const struct tk_kconfig *c, char *err, size_t errlen)
{
	int ret = 0;

	for (unsigned i = 0; i < c->nrules && !ret; i++) {
		struct tk_kevents sel;

		ret = tk_kevents_select(all, c->rules[i].pattern, &sel);
		if (ret == 0) {
			snprintf(err, errlen, "unknown kernel event '%s'",
				 c->rules[i].pattern);
			return -ENOENT;
		}
		for (unsigned j = 0; ret > 0 && j < sel.count; j++)
			if (enable_event(k, sel.name[j], c->rules[i].filter, err,
					 errlen) < 0)
				ret = -EINVAL;
		tk_kevents_free(&sel);
		ret = ret < 0 ? ret : 0;
	}
	return ret;
}

int tk_kinstance_apply(struct tk_kinstance *k, const struct tk_kevents *all,
		       const struct tk_kconfig *c, char *err, size_t errlen)
{
	int ret;

	ret = tk_kinstance_tracing_on(k, false);
	if (ret < 0) {
		snprintf(err, errlen, "cannot stop tracing in instance '%s': %s",
			 k->name, strerror(-ret));
		return ret;
	}
	if (c->clock && (ret = tk_kinstance_set_clock(k, c->clock, err, errlen)))
		return ret;
	if ((ret = tk_kinstance_set_buffer_kb(k, c->buffer_kb, err, errlen)) ||
	    (ret = tk_kinstance_set_option(k, "overwrite", c->overwrite, err,
					   errlen)))
		return ret;
	if (c->stack &&
	    (ret = tk_kinstance_set_option(k, "stacktrace", true, err, errlen)))
		return ret;
	if (c->user_stack &&
	    (ret = tk_kinstance_set_option(k, "userstacktrace", true, err, errlen)))
		return ret;
	if ((ret = tk_kinstance_set_pids(k, c->pids, c->npids, c->event_fork, err,
					 errlen)))
		return ret;
	if ((ret = apply_rules(k, all, c, err, errlen)))
		return ret;
	if ((ret = tk_kinstance_func_file(k, "set_ftrace_filter", c->func_filter,
					  c->nfunc_filter, err, errlen)) ||
	    (ret = tk_kinstance_func_file(k, "set_ftrace_notrace", c->func_notrace,
					  c->nfunc_notrace, err, errlen)) ||
	    (ret = tk_kinstance_func_file(k, "set_graph_function", c->graph_funcs,
					  c->ngraph_funcs, err, errlen)))
		return ret;
	if (c->tracer && strcmp(c->tracer, "nop") &&
	    (ret = tk_kinstance_set_tracer(k, c->tracer, err, errlen)))
		return ret;
	return 0;
}
