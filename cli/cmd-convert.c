/* SPDX-License-Identifier: MIT */
/*
 * cmd-convert.c - tracekit convert: a trace in a format other tools open.
 *
 *   tracekit convert --to FORMAT [-o OUT] [DIR]
 *                    [--events PATTERN] [--pid PID] [--tid TID] [--comm GLOB]
 *                    [--from T] [--until T] [--ts mono|raw]
 *
 * Parses the options and hands over to the format (export/export.h);
 * convert-select.c keeps the events the options select.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "convert-select.h"
#include "export/export.h"
#include "options.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracekit convert --to FORMAT [-o OUT] [DIR]\n\n"
		"Write the trace in DIR (default " TK_DEFAULT_OUTPUT ") as FORMAT, to OUT\n"
		"(default DIR with the format's suffix; '-' for standard output).\n"
		"The file appears only when complete.\n\n"
		"formats:\n");
	for (unsigned i = 0; tk_export_formats[i]; i++)
		fprintf(f, "  %-8s %s\n", tk_export_formats[i]->name,
			tk_export_formats[i]->summary);
	fprintf(f,
		"\n"
		"  --to FORMAT   the format (above)\n"
		"  -o OUT        the output file\n"
		"  --calls       folded, svg: weigh function_graph stacks by calls,\n"
		"                not by self time in ns\n"
		"  --on-cpu      folded, svg: weigh them by self time on a CPU: without\n"
		"                the time the thread was switched out (asleep, blocked,\n"
		"                waiting to run) inside the call, which the default,\n"
		"                wall-clock self time, includes; needs sched_switch\n"
		"                (record -e sched:sched_switch)\n"
		"  --stacks      folded, svg: use the stacks recorded with events\n"
		"                (--stack, --func-stack) even when the trace has\n"
		"                function_graph calls (each stack weighs 1)\n"
		"  --title TEXT  svg: the flame graph's title\n"
		"  --ts MODE     tracedat: timestamps in ns of CLOCK_MONOTONIC (mono,\n"
		"                the default) or the recorded clock ticks (raw)\n"
		"  -q            no progress line\n\n"
		"Which events, as report selects them (every format the same):\n"
		"  --events PATTERN   only events matching PATTERN (provider:event, globs;\n"
		"                     repeatable)\n"
		"  --pid PID[,PID]    only events of these processes (a process's kernel\n"
		"                     events: of its threads with user events)\n"
		"  --tid TID[,TID]    only events of these threads\n"
		"  --comm GLOB        only events of threads whose name matches GLOB\n"
		"  --from T, --until T  only events from time T, up to time T (included):\n"
		"                     seconds as report prints them (ticks with --ts raw),\n"
		"                     or +SECONDS after the trace's first event\n");
}

int cmd_convert(int argc, char **argv)
{
	struct tk_export_opts o = { .dir = TK_DEFAULT_OUTPUT };
	const struct tk_export_ops *ops;
	struct convert_select sel = { 0 };
	const char *to = NULL;
	char *out = NULL, *err = NULL, *warn = NULL;
	enum ts_mode ts = TS_MONO;
	bool quiet = false;
	struct opt_parser p;
	int c, ret = TK_EXIT_USAGE;

	opt_init(&p, "convert");
	while ((c = opt_next(&p, argc, argv)) != -1) {
		switch (c) {
		case OPT_TO:
			to = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'i':
			o.dir = optarg;
			break;
		case OPT_CALLS:
			o.weight_calls = true;
			break;
		case OPT_ON_CPU:
			o.on_cpu = true;
			break;
		case OPT_STACKS:
			o.stacks = true;
			break;
		case OPT_TITLE:
			o.title = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case OPT_EVENTS:
		case OPT_PID:
		case OPT_TID:
		case OPT_COMM:
		case OPT_FROM:
		case OPT_UNTIL:
			if (report_select_option(&sel.sel, c, optarg) < 0)
				goto out;
			break;
		case OPT_TS:
			if (strcmp(optarg, "mono") && strcmp(optarg, "raw")) {
				tk_error("--ts '%s': use mono or raw", optarg);
				goto out;
			}
			ts = strcmp(optarg, "raw") ? TS_MONO : TS_RAW;
			break;
		case 'h':
			usage(stdout);
			ret = 0;
			goto out;
		default:
			goto out;
		}
	}
	if (!opt_operands_max(&p, argc, argv, 1))
		goto out;
	if (optind < argc)
		o.dir = argv[optind];
	if (!to) {
		tk_error("convert needs --to FORMAT (see 'tracekit convert --help')");
		goto out;
	}
	if (report_select_window(&sel.sel, ts) < 0)
		goto out;
	ops = tk_export_find(to);
	if (!ops) {
		char names[256] = "";

		for (unsigned i = 0; tk_export_formats[i]; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names),
				 "%s%s", i ? ", " : "", tk_export_formats[i]->name);
		tk_error("unknown format '%s' (formats: %s)", to, names);
		goto out;
	}
	if (ops->seeks && o.output && !strcmp(o.output, "-")) {
		tk_error("--to %s writes its file with seeks: it cannot go to standard output (give -o FILE)",
			 ops->name);
		goto out;
	}
	if (o.on_cpu && (o.weight_calls || o.stacks)) {
		tk_error("--on-cpu weighs function_graph calls by time: not with %s",
			 o.weight_calls ? "--calls" : "--stacks");
		goto out;
	}
	if (o.on_cpu && ops != &tk_export_folded && ops != &tk_export_svg) {
		tk_error("--on-cpu: only --to folded and --to svg weigh stacks");
		goto out;
	}
	if (ts == TS_RAW && ops != &tk_export_tracedat) {
		tk_error("--ts raw: only --to tracedat writes the recorded clock ticks");
		goto out;
	}
	o.raw_ts = ts == TS_RAW;
	if (!o.output) {
		size_t n = strlen(o.dir);

		while (n > 1 && o.dir[n - 1] == '/')
			n--;
		if (asprintf(&out, "%.*s%s", (int)n, o.dir, ops->suffix) < 0) {
			out = NULL;
			goto nomem;
		}
		o.output = out;
	}
	o.progress = !quiet && isatty(STDERR_FILENO);
	o.select = convert_select_prepare(&sel);
	ret = tk_export_run(ops, &o, &err, &warn) < 0 ? TK_EXIT_FAILURE : 0;
	if (ret)
		tk_error("%s", err ? err : "conversion failed");
	tk_warn_lines(warn);
	free(err);
	free(warn);
	goto out;
nomem:
	tk_error("out of memory");
	ret = TK_EXIT_FAILURE;
out:
	convert_select_free(&sel);
	free(out);
	return ret;
}
