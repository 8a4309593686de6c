/* SPDX-License-Identifier: MIT */
/*
 * main.c - the tracekit command: one binary, a subcommand per verb, as
 * trace-cmd and perf do.  Each verb lives in cmd-<verb>.c.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const struct tk_command commands[] = {
	{ "record", cmd_record, "run a command (or attach to a process) and record its events" },
	{ "report", cmd_report, "print the events of a trace in time order" },
	{ "convert", cmd_convert, "write a trace as Chrome JSON, folded stacks, a flame graph or a trace.dat" },
	{ "list", cmd_list, "list events (user and kernel), tracers, functions, options" },
	{ "hist", cmd_hist, "histograms of an event's fields, latencies between two events" },
	{ "stat", cmd_stat, "count how many times events fire, for a command or system-wide" },
	{ "start", cmd_start, "start kernel tracing into a named instance and return" },
	{ "stop", cmd_stop, "stop tracing in an instance started by 'start'" },
	{ "show", cmd_show, "print what an instance started by 'start' holds" },
	{ "extract", cmd_extract, "make a trace directory of what an instance started by 'start' holds" },
	{ "reset", cmd_reset, "remove an instance started by 'start'" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tracekit COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'tracekit COMMAND --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return TK_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tracekit %s\n", TK_VERSION_STRING);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	tk_error("unknown command '%s' (see 'tracekit --help')", argv[1]);
	return TK_EXIT_USAGE;
}
