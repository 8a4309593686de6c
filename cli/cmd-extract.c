/* SPDX-License-Identifier: MIT */
/*
 * cmd-extract.c - tracekit extract [-B NAME] [-o DIR]: make a trace
 * directory of what an instance made by 'start' holds, that report,
 * convert and babeltrace2 (user part: none) read like a recording
 * (trace-cmd extract's sense).
 *
 * The instance's per-CPU pages are moved out of trace_pipe_raw, which
 * takes them out of the instance, with the formats of its enabled events,
 * kallsyms, saved_cmdlines and each CPU's counts (kernel/save.c,
 * kernel/capture.c, as record saves them); the manifest's clock pairs are
 * taken now (clock-now.c), the instance having no record of its start.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "clock-now.h"
#include "common/clock.h"
#include "format/trace.h"
#include "instance-args.h"
#include "options.h"
#include "kernel/kernel.h"

struct extract {
	const char *name;
	const char *dir;
	struct tk_tracefs fs;
	struct tk_kinstance k;
	struct tk_kevents events; /* enabled in the instance */
	struct tk_kcapture *cap;
	struct tk_trace_kernel m;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracekit extract [-B NAME] [-o DIR]\n\n"
		"Move what instance NAME (default " TK_KINSTANCE_PREFIX ") holds into a trace\n"
		"directory that report reads; the events leave the instance.\n\n"
		"  -B NAME   the instance\n"
		"  -o DIR    trace directory, new (default " TK_DEFAULT_OUTPUT ")\n");
}

static int parse(struct extract *x, int argc, char **argv)
{
	struct opt_parser p;
	int c;

	x->name = TK_KINSTANCE_PREFIX;
	x->dir = TK_DEFAULT_OUTPUT;
	opt_init(&p, "extract");
	while ((c = opt_next(&p, argc, argv)) != -1) {
		switch (c) {
		case 'B':
			x->name = optarg;
			break;
		case 'o':
			x->dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return TK_EXIT_USAGE;
		}
	}
	if (!opt_operands_max(&p, argc, argv, 0))
		return TK_EXIT_USAGE;
	return 0;
}

/* The enabled events ("system:event" lines of set_event) into x->events,
 * and as the manifest's comma separated list. */
static int enabled_events(struct extract *x)
{
	char *text = tk_kinstance_file_text(&x->k, "set_event"), *save = NULL, *line;

	if (!text)
		return -ENOMEM;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char **grown = realloc(x->events.name,
				       (x->events.count + 1) * sizeof(*grown));

		if (grown)
			x->events.name = grown;
		if (!grown || !(grown[x->events.count] = strdup(line))) {
			free(text);
			return -ENOMEM;
		}
		x->events.count++;
	}
	free(text);
	text = NULL;
	for (unsigned i = 0; i < x->events.count; i++) {
		char *joined;

		if (asprintf(&joined, "%s%s%s", text ? text : "", text ? "," : "",
			     x->events.name[i]) < 0)
			return -ENOMEM;
		free(text);
		text = joined;
	}
	x->m.events = text ? text : strdup("");
	return x->m.events ? 0 : -ENOMEM;
}

/* The kernel record of the manifest, as record writes it. */
static int describe(struct extract *x, struct tk_trace_clock *c)
{
	char clock[32], *opt;

	tk_kinstance_clock(&x->k, clock, sizeof(clock));
	if (!strcmp(clock, TK_KCLOCK_TSC) && TK_CLOCK_TSC) {
		clock_now(c);
	} else if (!strcmp(clock, TK_KCLOCK_MONO)) {
		clock_now(c); /* ticks are ns: a clock of rate 1e9 */
		c->tsc = false;
		c->tsc_start = c->mono_start;
		c->tsc_stop = c->mono_stop;
		c->freq = 1000000000u;
	} else {
		tk_error("instance '%s' counts time with trace_clock '%s': only %s and %s convert to the times report prints (start -C)",
			 x->name, clock, TK_KINSTANCE_CLOCK, TK_KCLOCK_MONO);
		return -1;
	}
	x->m.instance = strdup(x->name);
	x->m.clock = strdup(clock);
	x->m.cpus = (uint32_t)tk_kinstance_cpus(&x->k);
	x->m.buffer_kb = tk_kinstance_buffer_kb(&x->k);
	x->m.tracer = tk_kinstance_file_text(&x->k, "current_tracer");
	x->m.pid_filter = tk_kinstance_file_text(&x->k, "set_event_pid");
	for (char *p = x->m.pid_filter; p && *p; p++)
		if (*p == '\n' || *p == ' ')
			*p = ',';
	opt = tk_kinstance_file_text(&x->k, "options/event-fork");
	x->m.event_fork = opt && !strcmp(opt, "1");
	free(opt);
	opt = tk_kinstance_file_text(&x->k, "options/stacktrace");
	x->m.stack = opt && !strcmp(opt, "1");
	free(opt);
	if (!x->m.instance || !x->m.clock || !x->m.tracer || !x->m.pid_filter ||
	    enabled_events(x) < 0) {
		tk_error("out of memory");
		return -1;
	}
	return 0;
}

/* The pages, then the counts of each CPU (what the kernel lost). */
static int move_pages(struct extract *x)
{
	struct tk_kcpu *cpus;
	char err[512] = "";
	unsigned n;

	if (tk_ksave_start(x->dir, &x->events, &x->m.page_size, err, sizeof(err)) < 0 ||
	    tk_kcapture_start(&x->k, x->dir, false, &x->cap, err, sizeof(err)) < 0 ||
	    tk_kcapture_stop(x->cap, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return -1;
	}
	cpus = tk_kcapture_cpus(x->cap, &n);
	if (tk_ksave_end(&x->k, x->dir, cpus, n, NULL, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return -1;
	}
	x->m.kcpu = calloc(n ? n : 1, sizeof(*x->m.kcpu));
	if (!x->m.kcpu) {
		tk_error("out of memory");
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		struct tk_trace_kcpu *k = &x->m.kcpu[x->m.nkcpu++];

		k->cpu = cpus[i].cpu;
		k->file = strdup(cpus[i].file);
		k->bytes = cpus[i].bytes;
		k->pages = x->m.page_size ? cpus[i].bytes / x->m.page_size : 0;
		k->entries = cpus[i].entries;
		k->overrun = cpus[i].overrun;
		k->dropped = cpus[i].dropped;
	}
	return 0;
}

static void extract_free(struct extract *x)
{
	for (unsigned i = 0; i < x->m.nkcpu; i++)
		free(x->m.kcpu[i].file);
	free(x->m.kcpu);
	free(x->m.instance);
	free(x->m.clock);
	free(x->m.tracer);
	free(x->m.events);
	free(x->m.pid_filter);
	tk_kevents_free(&x->events);
	tk_kcapture_free(x->cap);
}

int cmd_extract(int argc, char **argv)
{
	struct extract x;
	struct tk_trace t;
	char err[512] = "", *mode;
	uint64_t events = 0, lost = 0;
	int ret;

	memset(&x, 0, sizeof(x));
	memset(&t, 0, sizeof(t));
	ret = parse(&x, argc, argv);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (instance_open(x.name, &x.fs, &x.k) < 0)
		return TK_EXIT_FAILURE;
	ret = TK_EXIT_FAILURE;
	if (mkdir(x.dir, 0700) < 0) {
		tk_error("cannot create trace directory '%s': %s", x.dir,
			 errno == EEXIST ? "it exists (give another -o)" : strerror(errno));
		goto out;
	}
	t.dir = (char *)x.dir;
	t.kernel = &x.m;
	gethostname(t.host, sizeof(t.host) - 1);
	if (describe(&x, &t.clock) < 0)
		goto fail;
	mode = tk_kinstance_file_text(&x.k, "options/overwrite");
	snprintf(t.mode, sizeof(t.mode), "%s",
		 mode && !strcmp(mode, "0") ? "discard" : "overwrite");
	free(mode);
	if (move_pages(&x) < 0)
		goto fail;
	if (tk_trace_write_index(&t, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		goto fail;
	}
	for (unsigned i = 0; i < x.m.nkcpu; i++) {
		events += x.m.kcpu[i].entries;
		lost += x.m.kcpu[i].overrun + x.m.kcpu[i].dropped;
	}
	fprintf(stderr, "tracekit: %llu kernel events (%llu lost) of instance '%s' extracted to '%s'\n",
		(unsigned long long)events, (unsigned long long)lost, x.name, x.dir);
	ret = 0;
	goto out;
fail:
	tk_remove_tree(x.dir);
out:
	extract_free(&x);
	instance_close(&x.fs, &x.k);
	return ret;
}
