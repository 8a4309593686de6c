/* SPDX-License-Identifier: MIT */
/*
 * pids.c - kernel events of chosen processes only: set_event_pid, and
 * options/event-fork so that their children are added as they fork.
 *
 * This is the filtering a locked-down kernel still allows (set_ftrace_pid
 * is refused there), so -F and -P rest on it alone.
 *
 * A command that record forks runs the recorder's own code until its
 * exec (restoring signals, setting its environment: system calls,
 * malloc): tracing in the instance is turned on by the command's exec,
 * a traceon trigger on sched:sched_process_exec, so that its events are
 * the command's from the exec on.  (The kernel evaluates a trigger's
 * condition while tracing is off, in a buffer of its own.)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h>
#include "kernel.h"

int tk_pid_threads(pid_t pid, pid_t **tids, unsigned *count)
{
	char path[64];
	struct dirent *de;
	pid_t *list = NULL, *grown;
	unsigned n = 0;
	DIR *d;

	*tids = NULL;
	*count = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		grown = realloc(list, (n + 1) * sizeof(*list));
		if (!grown) {
			free(list);
			closedir(d);
			return -ENOMEM;
		}
		list = grown;
		list[n++] = (pid_t)tid;
	}
	closedir(d);
	if (!n) {
		free(list);
		return -ESRCH; /* a zombie: no threads left */
	}
	*tids = list;
	*count = n;
	return 0;
}

int tk_kinstance_set_pids(struct tk_kinstance *k, const pid_t *pids,
			  unsigned count, bool fork, char *err, size_t errlen)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f;
	int ret;

	if (!count)
		return 0;
	f = open_memstream(&text, &size);
	if (!f)
		return -ENOMEM;
	for (unsigned i = 0; i < count; i++)
		fprintf(f, "%s%d", i ? " " : "", (int)pids[i]);
	if (fclose(f) != 0)
		return -ENOMEM;
	ret = tracefs_instance_file_write(k->inst, "set_event_pid", text);
	if (ret < 0) {
		ret = errno ? -errno : -EIO;
		snprintf(err, errlen, "cannot write pids '%s' into 'set_event_pid': %s",
			 text, strerror(-ret));
		free(text);
		return ret;
	}
	free(text);
	return tk_kinstance_set_option(k, "event-fork", fork, err, errlen);
}

int tk_kinstance_on_exec(struct tk_kinstance *k, pid_t pid, char *err, size_t errlen)
{
	char text[64];

	snprintf(text, sizeof(text), "traceon if pid == %d", (int)pid);
	if (tracefs_event_file_write(k->inst, "sched", "sched_process_exec", "trigger",
				     text) < 0) {
		int e = errno ? errno : EIO;

		snprintf(err, errlen, "cannot write '%s' into 'events/sched/sched_process_exec/trigger' of instance '%s': %s",
			 text, k->name, strerror(e));
		return -e;
	}
	return 0;
}
