/* SPDX-License-Identifier: MIT */
/*
 * merge.h - every event of a trace directory in time order: the user
 * streams (stream-read.h) and the kernel's CPUs (kernel-read.h), each
 * already in order, merged with a min-heap on their current timestamps.
 *
 *     sources:  user stream 0 .. n-1 | kernel cpu 0 .. m-1
 *     heap:     source indexes, the one with the earliest event on top;
 *               equal timestamps go in source order (user first)
 *
 * tk_merge_next() moves the source of the event it returned last to its
 * next event and returns the earliest one.  Memory is one reader per
 * source, whatever the trace's length.  A source that fails (a malformed
 * packet or page) ends there; the others go on.
 */
#ifndef TK_MERGE_H
#define TK_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel-read.h"
#include "stream-read.h"
#include "trace.h"

struct tk_merge {
	const struct tk_trace *trace;
	struct tk_kernel *kernel; /* NULL: user streams only */
	struct tk_stream_reader *readers;
	unsigned nreaders;
	unsigned nsources; /* nreaders, then the kernel's CPUs */
	unsigned *heap;
	unsigned heap_len;
	unsigned primed;  /* sources opened and moved to their first event */
	unsigned current; /* source of the last event returned, or ~0u */
};

/* The event tk_merge_next() returned: a user stream's (user set, its
 * ts/event/values current) or a kernel CPU's (kcpu set). */
struct tk_merge_event {
	uint64_t ts;
	struct tk_stream_reader *user;
	struct tk_kernel_cpu *kcpu;
};

/* Merge the user streams of @t and the CPUs of @k (may be NULL; @k stays
 * the caller's, open until tk_merge_close).  Streams are opened by the
 * first tk_merge_next() calls.  Returns 0 or -ENOMEM. */
int tk_merge_open(struct tk_merge *m, const struct tk_trace *t,
		  struct tk_kernel *k);

/* The next event in time order: 1 with *ev set, 0 at the end of every
 * source, -errno when a source cannot be opened or turned out malformed
 * (err[errlen] says which file and where; that source ends there: call
 * again for the others). */
int tk_merge_next(struct tk_merge *m, struct tk_merge_event *ev, char *err,
		  size_t errlen);

void tk_merge_close(struct tk_merge *m);

#endif /* TK_MERGE_H */
