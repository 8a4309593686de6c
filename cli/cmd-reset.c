/* SPDX-License-Identifier: MIT */
/*
 * cmd-reset.c - tracekit reset: remove tracekit's instances, and with
 * them everything they had set (events, filters, tracer, buffers).
 *
 *   tracekit reset [-B NAME]   NAME (default "tracekit"), and the
 *                              instances of recorders that are gone
 *   tracekit reset -a          every instance whose name starts with
 *                              "tracekit", but a running recorder's
 *
 * A recorder removes its own "tracekit-PID" instance, and the dynamic
 * probes it defined (groups "tracekit_PID_*" of uprobe_events), on every
 * way out but SIGKILL; reset cleans up after that.  Whether a recorder
 * is gone is asked of kernel/instance.c (tk_kinstance_is_stale).  What
 * is removed is said on standard output, a line each.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "instance-args.h"
#include "options.h"
#include "kernel/kernel.h"

static int remove_instance(const char *name)
{
	struct tk_kinstance k;
	char err[256];
	int ret = tk_kinstance_open(&k, name, err, sizeof(err));

	if (ret < 0) {
		tk_error("%s", err);
		return ret;
	}
	ret = tk_kinstance_destroy(&k);
	if (ret < 0)
		tk_error("cannot remove instance '%s': %s", name, strerror(-ret));
	else if (tk_kinstance_owner(name))
		printf("removed instance '%s' (recorder %d is gone)\n", name,
		       (int)tk_kinstance_owner(name));
	else
		printf("removed instance '%s'\n", name);
	return ret;
}

/* The probes of recorders that are gone (the instance that enabled them
 * was removed first).  Returns how many groups' owners were removed, or
 * -1 (said). */
static int remove_stale_probes(void)
{
	pid_t *owners;
	unsigned n;
	int removed = 0;

	if (tk_uprobe_owners(&owners, &n) < 0) {
		tk_error("cannot read the kernel's uprobe_events: %s", strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < n && removed >= 0; i++) {
		char name[64];
		int ret;

		snprintf(name, sizeof(name), TK_KINSTANCE_PREFIX "-%d", (int)owners[i]);
		if (!tk_kinstance_is_stale(name))
			continue;
		ret = tk_uprobes_remove(owners[i]);
		if (ret < 0) {
			tk_error("cannot remove the probes of group '" TK_UPROBE_GROUP_PREFIX "%d_*': %s",
				 (int)owners[i], strerror(-ret));
			removed = -1;
		} else {
			printf("removed probes '" TK_UPROBE_GROUP_PREFIX "%d_*' (recorder %d is gone)\n",
			       (int)owners[i], (int)owners[i]);
			removed++;
		}
	}
	free(owners);
	return removed;
}

int cmd_reset(int argc, char **argv)
{
	const char *name = NULL;
	struct tk_tracefs fs;
	char err[512] = "", **names;
	bool all = false, removed = false;
	struct opt_parser p;
	int c, ret = 0;

	opt_init(&p, "reset");
	while ((c = opt_next(&p, argc, argv)) != -1) {
		if (c == 'B') {
			if (!instance_name_ok(optarg))
				return TK_EXIT_USAGE;
			name = optarg;
		} else if (c == 'a') {
			all = true;
		} else if (c == 'h') {
			printf("usage: tracekit reset [-B NAME | -a]\n\n"
			       "Remove instance NAME (default " TK_KINSTANCE_PREFIX
			       ") and those of recorders that are gone,\n"
			       "with the probes (uprobe:, usdt:) they defined;\n"
			       "-a: every instance named " TK_KINSTANCE_PREFIX
			       "*, but a running recorder's.\n");
			return 0;
		} else {
			return TK_EXIT_USAGE;
		}
	}
	if (all && name) {
		tk_error("give -B NAME or -a, not both");
		return TK_EXIT_USAGE;
	}
	if (!opt_operands_max(&p, argc, argv, 0))
		return TK_EXIT_USAGE;
	if (tk_tracefs_open(&fs, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return TK_EXIT_FAILURE;
	}
	if (name) {
		ret = remove_instance(name);
		goto out;
	}
	ret = tk_kinstance_names(&names);
	if (ret < 0) {
		/* not "no instance": reset as a user who cannot read tracefs */
		tk_error("cannot read '%s/instances': %s", fs.dir, strerror(-ret));
		ret = -1;
		goto out;
	}
	for (unsigned i = 0; names[i]; i++) {
		bool ours = !strcmp(names[i], TK_KINSTANCE_PREFIX);

		if (tk_kinstance_owner(names[i]) && !tk_kinstance_is_stale(names[i])) {
			if (all)
				tk_warn("instance '%s' belongs to a running recorder: left alone",
					names[i]);
			continue;
		}
		if (!all && !ours && !tk_kinstance_owner(names[i]))
			continue;
		if (remove_instance(names[i]) < 0)
			ret = -1;
		else
			removed = true;
	}
	tk_kinstance_names_free(names);
	switch (remove_stale_probes()) {
	case -1:
		ret = -1;
		break;
	case 0:
		break;
	default:
		removed = true;
	}
	if (!all && !removed && !ret) {
		tk_error("no instance '%s'", TK_KINSTANCE_PREFIX);
		ret = -1;
	}
out:
	tk_tracefs_close(&fs);
	return ret < 0 ? TK_EXIT_FAILURE : 0;
}
