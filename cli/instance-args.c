/* SPDX-License-Identifier: MIT */
/*
 * instance-args.c - "-B NAME" and opening the instance, for the verbs
 * that act on an instance 'start' made (stop, show); the check of a
 * name that every -B gets.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include "cli.h"
#include "instance-args.h"
#include "options.h"

int instance_args(const char *verb, const char *help, int argc, char **argv,
		  const char **name)
{
	struct opt_parser p;
	int c;

	*name = TK_KINSTANCE_PREFIX;
	opt_init(&p, verb);
	while ((c = opt_next(&p, argc, argv)) != -1) {
		if (c == 'B') {
			*name = optarg;
		} else if (c == 'h') {
			fputs(help, stdout);
			return 1;
		} else {
			return TK_EXIT_USAGE;
		}
	}
	if (!opt_operands_max(&p, argc, argv, 0))
		return TK_EXIT_USAGE;
	return instance_name_ok(*name) ? 0 : TK_EXIT_USAGE;
}

bool instance_name_ok(const char *name)
{
	const char *why = tk_kinstance_name_invalid(name);

	if (why)
		tk_error("-B '%s': %s", name, why);
	return !why;
}

int instance_open(const char *name, struct tk_tracefs *fs, struct tk_kinstance *k)
{
	char err[512] = "";

	if (tk_kinstance_find(fs, k, name, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return -1;
	}
	return 0;
}

void instance_close(struct tk_tracefs *fs, struct tk_kinstance *k)
{
	tk_kinstance_close(k);
	tk_tracefs_close(fs);
}
