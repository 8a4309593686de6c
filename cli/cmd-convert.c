/* SPDX-License-Identifier: MIT */
/*
 * cmd-convert.c - tracekit convert: a trace in a format other tools open.
 *
 *   tracekit convert --to FORMAT [-o OUT] [DIR]
 *
 * Parses the options and hands over to the format (export/export.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
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
		"  --stacks      folded, svg: use the stacks recorded with events\n"
		"                (--stack, --func-stack) even when the trace has\n"
		"                function_graph calls (each stack weighs 1)\n"
		"  --title TEXT  svg: the flame graph's title\n"
		"  -q            no progress line\n");
}

int cmd_convert(int argc, char **argv)
{
	struct tk_export_opts o = { .dir = TK_DEFAULT_OUTPUT };
	const struct tk_export_ops *ops;
	const char *to = NULL;
	char *out = NULL, *err = NULL;
	bool quiet = false;
	struct opt_parser p;
	int c, ret;

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
		case OPT_STACKS:
			o.stacks = true;
			break;
		case OPT_TITLE:
			o.title = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return TK_EXIT_USAGE;
		}
	}
	if (optind < argc)
		o.dir = argv[optind++];
	if (optind < argc) {
		tk_error("unexpected argument '%s'", argv[optind]);
		return TK_EXIT_USAGE;
	}
	if (!to) {
		tk_error("convert needs --to FORMAT (see 'tracekit convert --help')");
		return TK_EXIT_USAGE;
	}
	ops = tk_export_find(to);
	if (!ops) {
		char names[256] = "";

		for (unsigned i = 0; tk_export_formats[i]; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names),
				 "%s%s", i ? ", " : "", tk_export_formats[i]->name);
		tk_error("unknown format '%s' (formats: %s)", to, names);
		return TK_EXIT_USAGE;
	}
	if (!o.output) {
		size_t n = strlen(o.dir);

		while (n > 1 && o.dir[n - 1] == '/')
			n--;
		if (asprintf(&out, "%.*s%s", (int)n, o.dir, ops->suffix) < 0) {
			tk_error("out of memory");
			return TK_EXIT_FAILURE;
		}
		o.output = out;
	}
	o.progress = !quiet && isatty(STDERR_FILENO);
	ret = tk_export_run(ops, &o, &err);
	if (ret < 0)
		tk_error("%s", err ? err : "conversion failed");
	free(err);
	free(out);
	return ret < 0 ? TK_EXIT_FAILURE : 0;
}
