/* SPDX-License-Identifier: MIT */
/*
 * events.c - the kernel's event list, and which events a pattern names.
 *
 * Patterns have the user side's syntax (common/pattern.c): "system:event",
 * "system", a glob in either part.  "all" stays a user-side word: it would
 * otherwise switch on every one of the kernel's thousands of events.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h>
#include "kernel.h"
#include "common/pattern.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int push(struct tk_kevents *l, char *name)
{
	char **grown;

	if (!name)
		return -ENOMEM;
	/* room for 64, doubled each time a power of two >= 64 is full */
	if (l->count == 0 || (l->count >= 64 && !(l->count & (l->count - 1)))) {
		grown = realloc(l->name, (l->count ? l->count * 2 : 64) *
					 sizeof(*grown));
		if (!grown) {
			free(name);
			return -ENOMEM;
		}
		l->name = grown;
	}
	l->name[l->count++] = name;
	return 0;
}

int tk_kevents_read(struct tk_kevents *all)
{
	char **systems = tracefs_event_systems(NULL);
	int ret = 0;

	memset(all, 0, sizeof(*all));
	if (!systems)
		return errno ? -errno : -ENOENT;
	for (unsigned i = 0; systems[i] && !ret; i++) {
		char **events = tracefs_system_events(NULL, systems[i]);
		char *name;

		for (unsigned j = 0; events && events[j] && !ret; j++) {
			if (asprintf(&name, "%s:%s", systems[i], events[j]) < 0)
				name = NULL;
			ret = push(all, name);
		}
		tracefs_list_free(events);
	}
	tracefs_list_free(systems);
	if (ret) {
		tk_kevents_free(all);
		return ret;
	}
	if (all->count)
		qsort(all->name, all->count, sizeof(*all->name), by_name);
	return 0;
}

int tk_kevents_select(const struct tk_kevents *all, const char *pattern,
		      struct tk_kevents *out)
{
	memset(out, 0, sizeof(*out));
	if (!strcmp(pattern, "all"))
		return 0;
	for (unsigned i = 0; i < all->count; i++) {
		if (!tk_pattern_match(pattern, all->name[i]))
			continue;
		if (push(out, strdup(all->name[i])) < 0) {
			tk_kevents_free(out);
			return -ENOMEM;
		}
	}
	return (int)out->count;
}

void tk_kevents_free(struct tk_kevents *l)
{
	for (unsigned i = 0; i < l->count; i++)
		free(l->name[i]);
	free(l->name);
	memset(l, 0, sizeof(*l));
}
