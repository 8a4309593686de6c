/* SPDX-License-Identifier: MIT */
/*
 * cmd-start.c - tracekit start: set up kernel tracing in a named instance
 * and return, leaving it running (trace-cmd start's sense).
 *
 *   tracekit start [-B NAME] [-e EVENT [-f FILTER]]... [-p TRACER]
 *                  [-l/-n/-g FUNC]... [--kernel-buffer KB] [-C CLOCK] [-P PID]
 *                  [--stack]
 *
 * 'stop' pauses it, 'show' prints what it holds, 'reset' removes it.
 * Only the instance is written; if anything fails it is removed again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "clock-now.h"
#include "instance-args.h"
#include "options.h"
#include "common/clock.h"
#include "format/event-info.h"
#include "kernel/kernel.h"

#define DEFAULT_INSTANCE TK_KINSTANCE_PREFIX

struct start {
	const char *name;
	struct opt_rules rules; /* -e, -f */
	struct tk_kconfig c;
	pid_t pid;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracekit start [OPTIONS]\n\n"
		"Trace kernel events into a tracefs instance, and return.\n\n"
		"  -B NAME        the instance (default " DEFAULT_INSTANCE ")\n"
		"  -e EVENT       a kernel event: SYSTEM:EVENT, SYSTEM or a glob\n"
		"  -f FILTER      the kernel's filter for the preceding -e\n"
		"  -p TRACER      a kernel tracer (see available_tracers)\n"
		"  -l/-n FUNC     function tracers: only / not these functions\n"
		"  -g FUNC        function_graph: only FUNC and what it calls\n"
		"  --kernel-buffer KB, -b KB   ring buffer per CPU in KiB, as\n"
		"                 record's --kernel-buffer (default: the kernel's);\n"
		"                 -b, trace-cmd's letter, is the same option\n"
		"  -C CLOCK       trace_clock (default: the clock of tracekit's user\n"
		"                 events, so that traces merge: " TK_KINSTANCE_CLOCK " where the TSC\n"
		"                 is usable, else mono; " TK_CLOCK_ENV "=mono forces it)\n"
		"  -P PID         only events of process PID (and its children)\n"
		"  --stack        kernel stack trace with each event\n");
}

static int add_glob(const char *const **list, unsigned *n, const char *glob)
{
	const char **grown = realloc((void *)*list, (*n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	grown[(*n)++] = glob;
	*list = grown;
	return 0;
}

static int parse(struct start *st, int argc, char **argv)
{
	struct tk_kconfig *c = &st->c;
	struct opt_parser p;
	int ch;

	st->name = DEFAULT_INSTANCE;
	c->clock = NULL;
	opt_init(&p, "start");
	while ((ch = opt_next(&p, argc, argv)) != -1) {
		switch (ch) {
		case 'B':
			if (!instance_name_ok(optarg))
				return -1;
			st->name = optarg;
			break;
		case 'e':
		case 'f':
			if (opt_rules_add(&st->rules, ch, optarg) < 0)
				return -1;
			break;
		case 'p':
			c->tracer = !strncmp(optarg, "kernel:", 7) ? optarg + 7 : optarg;
			break;
		case 'l':
		case 'n':
		case 'g':
			if (add_glob(ch == 'l' ? &c->func_filter : ch == 'n' ? &c->func_notrace
									     : &c->graph_funcs,
				     ch == 'l' ? &c->nfunc_filter : ch == 'n' ? &c->nfunc_notrace
									      : &c->ngraph_funcs,
				     optarg) < 0)
				return -1;
			break;
		case 'b':
			if (!opt_kernel_kb(optarg, &c->buffer_kb))
				return -1;
			break;
		case 'C':
			c->clock = optarg;
			break;
		case 'P':
			if (!opt_pid(optarg, &st->pid))
				return -1;
			break;
		case OPT_STACK:
			c->stack = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	if (!opt_operands_max(&p, argc, argv, 0))
		return -1;
	if (!st->rules.count && !c->tracer) {
		tk_error("nothing to trace: give -e EVENT or -p TRACER");
		return -1;
	}
	if (!c->clock) {
		char why[192];
		bool tsc;

		if (clock_choose(&tsc, why, sizeof(why)) < 0) {
			tk_error("%s", why);
			return -1;
		}
		c->clock = tsc ? TK_KINSTANCE_CLOCK : TK_KCLOCK_MONO;
	}
	return 0;
}

/* One line: what traces where, and what to do next. */
static void say_started(const struct start *st)
{
	fprintf(stderr, "tracekit: tracing ");
	for (unsigned i = 0; i < st->rules.count; i++)
		fprintf(stderr, "%s%s", i ? "," : "", st->rules.rule[i].pattern);
	if (st->c.tracer)
		fprintf(stderr, "%stracer %s", st->rules.count ? " and " : "", st->c.tracer);
	if (st->pid)
		fprintf(stderr, " of process %d", (int)st->pid);
	fprintf(stderr, " in instance '%s'; 'tracekit show%s%s' prints it, 'extract' saves it, 'stop' and 'reset' end it\n",
		st->name, strcmp(st->name, DEFAULT_INSTANCE) ? " -B " : "",
		strcmp(st->name, DEFAULT_INSTANCE) ? st->name : "");
}

/* Each -e must name kernel events; say which is closest if not. */
static int check_events(const struct start *st, const struct tk_kevents *all)
{
	for (unsigned i = 0; i < st->rules.count; i++) {
		struct tk_kevents sel;
		const char *near;

		if (tk_kevents_select(all, st->rules.rule[i].pattern, &sel) > 0) {
			tk_kevents_free(&sel);
			continue;
		}
		near = tk_closest_name(st->rules.rule[i].pattern,
				       (const char *const *)all->name, all->count);
		tk_error("unknown kernel event '%s'%s%s%s", st->rules.rule[i].pattern,
			 near ? " (did you mean '" : "", near ? near : "",
			 near ? "'?)" : "");
		return -1;
	}
	return 0;
}

int cmd_start(int argc, char **argv)
{
	struct start st = { 0 };
	struct tk_tracefs fs;
	struct tk_kinstance k = { 0 };
	struct tk_kevents all = { 0 };
	char err[512] = "";
	int ret = TK_EXIT_FAILURE;

	if (parse(&st, argc, argv) < 0)
		return TK_EXIT_USAGE;
	if (tk_tracefs_open(&fs, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return TK_EXIT_FAILURE;
	}
	if (tk_kevents_read(&all) < 0) {
		tk_error("cannot read the kernel's events in '%s'", fs.dir);
		goto out;
	}
	if (check_events(&st, &all) < 0)
		goto out;
	if (st.pid) {
		pid_t *tids;
		unsigned n;

		if (tk_pid_threads(st.pid, &tids, &n) < 0) {
			tk_error("no process with pid %d", (int)st.pid);
			goto out;
		}
		st.c.pids = tids;
		st.c.npids = n;
		st.c.event_fork = true;
	}
	st.c.rules = st.rules.rule;
	st.c.nrules = st.rules.count;
	if (tk_kinstance_create(&k, st.name, err, sizeof(err)) == -EEXIST) {
		tk_error("%s ('tracekit reset -B %s' removes it)", err, st.name);
		goto out;
	} else if (!k.inst) {
		tk_error("%s", err);
		goto out;
	}
	if (tk_kinstance_apply(&k, &all, &st.c, err, sizeof(err)) < 0 ||
	    tk_kinstance_tracing_on(&k, true) < 0) {
		tk_error("%s", err[0] ? err : "cannot turn tracing on");
		tk_kinstance_destroy(&k);
		goto out;
	}
	say_started(&st);
	opt_kernel_kb_made(st.c.buffer_kb, tk_kinstance_buffer_kb(&k));
	tk_kinstance_close(&k);
	ret = 0;
out:
	tk_kevents_free(&all);
	free((void *)st.c.pids);
	free((void *)st.c.func_filter);
	free((void *)st.c.func_notrace);
	free((void *)st.c.graph_funcs);
	opt_rules_free(&st.rules);
	tk_tracefs_close(&fs);
	return ret;
}
