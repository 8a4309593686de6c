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
#include "format/event-info.h"

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
	{ "recover", cmd_recover, "make the trace of a recorder that was killed whole for every reader" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tracekit COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'tracekit COMMAND --help' describes a command's options.\n");
}

/* One line for a verb that is not ours, naming the nearest one, as git
 * does for a typo. */
static void unknown_command(const char *name)
{
	const char *names[sizeof(commands) / sizeof(commands[0])];
	const char *near;

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		names[i] = commands[i].name;
	near = tk_closest_name(name, names, sizeof(names) / sizeof(names[0]));
	if (near)
		tk_error("unknown command '%s' (did you mean '%s'?)", name, near);
	else
		tk_error("unknown command '%s' (see 'tracekit --help')", name);
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
	unknown_command(argv[1]);
	return TK_EXIT_USAGE;
}
