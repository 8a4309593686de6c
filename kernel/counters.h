/* SPDX-License-Identifier: MIT */
/*
 * counters.h - how many times kernel events fire, counted by the kernel
 * itself (perf_event_open, PERF_TYPE_TRACEPOINT): nothing is recorded.
 *
 * Two scopes, as perf stat has them: one task and the children it forks
 * from then on (inherit; counting starts when the task calls exec), or
 * every CPU (the whole system).  Event names are "system:event"; their
 * ids come from tracefs (events/SYSTEM/EVENT/id), so tracefs must be
 * reachable (tk_tracefs_open).
 */
#ifndef TK_COUNTERS_H
#define TK_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tk_counter {
	char *name;   /* "system:event" */
	uint64_t id;  /* tracefs event id */
	int *fds;     /* one per CPU (system-wide) or one (a task) */
	uint64_t count;
};

struct tk_counters {
	unsigned n;
	struct tk_counter *c;
	unsigned nfds; /* per counter */
};

/* Open a disabled counter per name: for task @pid (and its future
 * children; counting starts at its next exec) or, with @pid < 0, on every
 * online CPU.  Returns 0, or -errno with err[errlen] naming the event and
 * what failed.  Free with tk_counters_close() in every case. */
int tk_counters_open(struct tk_counters *cs, char *const *names, unsigned n,
		     pid_t pid, char *err, size_t errlen);

/* Start (system-wide) / stop counting. */
void tk_counters_enable(struct tk_counters *cs);
void tk_counters_disable(struct tk_counters *cs);

/* Read every counter into c[i].count (sums over CPUs).  Returns 0 or
 * -errno. */
int tk_counters_read(struct tk_counters *cs);

void tk_counters_close(struct tk_counters *cs);

#endif /* TK_COUNTERS_H */
