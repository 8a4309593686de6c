/* SPDX-License-Identifier: MIT */
/*
 * cmd-stop.c - tracekit stop [-B NAME]: pause tracing in an instance set
 * up by 'start' (its tracing_on to 0); what it holds stays for 'show'.
 */
#define _GNU_SOURCE
#include <string.h>
#include "cli.h"
#include "instance-args.h"

int cmd_stop(int argc, char **argv)
{
	struct tk_tracefs fs;
	struct tk_kinstance k;
	const char *name;
	int ret = instance_args("stop",
				"usage: tracekit stop [-B NAME]\n\n"
				"Stop tracing in instance NAME (default " TK_KINSTANCE_PREFIX
				"); 'show' prints what it holds.\n",
				argc, argv, &name);

	if (ret)
		return ret == 1 ? 0 : ret;
	if (instance_open(name, &fs, &k) < 0)
		return TK_EXIT_FAILURE;
	ret = tk_kinstance_tracing_on(&k, false);
	if (ret < 0)
		tk_error("cannot stop tracing in instance '%s': %s", name, strerror(-ret));
	instance_close(&fs, &k);
	return ret < 0 ? TK_EXIT_FAILURE : 0;
}
