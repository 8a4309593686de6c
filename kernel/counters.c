/* SPDX-License-Identifier: MIT */
/*
 * counters.c - count kernel events with perf_event_open (counters.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <tracefs.h>
#include "counters.h"

static int event_id(const char *name, uint64_t *id)
{
	char sys[256], *text, *end;
	const char *colon = strchr(name, ':');

	if (!colon || (size_t)(colon - name) >= sizeof(sys))
		return -EINVAL;
	memcpy(sys, name, (size_t)(colon - name));
	sys[colon - name] = '\0';
	text = tracefs_event_file_read(NULL, sys, colon + 1, "id", NULL);
	if (!text)
		return errno ? -errno : -ENOENT;
	*id = strtoull(text, &end, 10);
	free(text);
	return end == text ? -EINVAL : 0;
}

static int open_one(uint64_t id, pid_t pid, int cpu)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = id;
	attr.disabled = 1;
	if (pid >= 0) {
		attr.inherit = 1;
		attr.enable_on_exec = 1;
	}
	return (int)syscall(SYS_perf_event_open, &attr, pid, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

int tk_counters_open(struct tk_counters *cs, char *const *names, unsigned n,
		     pid_t pid, char *err, size_t errlen)
{
	long ncpus = pid >= 0 ? 1 : sysconf(_SC_NPROCESSORS_CONF);

	memset(cs, 0, sizeof(*cs));
	if (ncpus < 1)
		ncpus = 1;
	cs->c = calloc(n + 1, sizeof(*cs->c));
	if (!cs->c)
		return -ENOMEM;
	cs->nfds = (unsigned)ncpus;
	for (unsigned i = 0; i < n; i++) {
		struct tk_counter *c = &cs->c[cs->n++];
		int ret;

		c->name = strdup(names[i]);
		c->fds = malloc(cs->nfds * sizeof(*c->fds));
		if (!c->name || !c->fds)
			return -ENOMEM;
		for (unsigned j = 0; j < cs->nfds; j++)
			c->fds[j] = -1;
		ret = event_id(names[i], &c->id);
		if (ret) {
			snprintf(err, errlen, "cannot read the id of kernel event '%s': %s",
				 names[i], strerror(-ret));
			return ret;
		}
		for (unsigned j = 0; j < cs->nfds; j++) {
			c->fds[j] = open_one(c->id, pid, pid >= 0 ? -1 : (int)j);
			/* an offline CPU cannot be counted on, and need not be */
			if (c->fds[j] < 0 && pid < 0 && errno == ENODEV)
				continue;
			if (c->fds[j] < 0) {
				ret = -errno;
				snprintf(err, errlen, "cannot count kernel event '%s' (perf_event_open): %s",
					 names[i], strerror(errno));
				return ret;
			}
		}
	}
	return 0;
}

static void ioctl_all(struct tk_counters *cs, unsigned long req)
{
	for (unsigned i = 0; i < cs->n; i++)
		for (unsigned j = 0; j < cs->nfds; j++)
			if (cs->c[i].fds && cs->c[i].fds[j] >= 0)
				ioctl(cs->c[i].fds[j], req, 0);
}

void tk_counters_enable(struct tk_counters *cs)
{
	ioctl_all(cs, PERF_EVENT_IOC_ENABLE);
}

void tk_counters_disable(struct tk_counters *cs)
{
	ioctl_all(cs, PERF_EVENT_IOC_DISABLE);
}

int tk_counters_read(struct tk_counters *cs)
{
	for (unsigned i = 0; i < cs->n; i++) {
		struct tk_counter *c = &cs->c[i];

		c->count = 0;
		for (unsigned j = 0; j < cs->nfds; j++) {
			uint64_t v;

			if (c->fds[j] < 0)
				continue;
			if (read(c->fds[j], &v, sizeof(v)) != (ssize_t)sizeof(v))
				return -errno;
			c->count += v;
		}
	}
	return 0;
}

void tk_counters_close(struct tk_counters *cs)
{
	for (unsigned i = 0; i < cs->n; i++) {
		for (unsigned j = 0; cs->c[i].fds && j < cs->nfds; j++)
			if (cs->c[i].fds[j] >= 0)
				close(cs->c[i].fds[j]);
		free(cs->c[i].fds);
		free(cs->c[i].name);
	}
	free(cs->c);
	memset(cs, 0, sizeof(*cs));
}
