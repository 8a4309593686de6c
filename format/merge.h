/* SPDX-License-Identifier: MIT */
/*
 * merge.h - every event of a trace directory in time order: the user
 * streams (stream-read.h) and the kernel's CPUs (kernel-read.h), each
 * already in order, merged with a min-heap on their current timestamps.
 *
 *     sources:  user stream 0 .. n-1 | kernel cpu 0 .. m-1
 *     heap:     (timestamp, source) pairs, the earliest event on top;
 *               equal timestamps go in source order (user first)
 *
 * The timestamp is kept beside the source's index, so that ordering the
 * heap reads no reader: a few nanoseconds an event for a few sources.
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

struct tk_merge_node {
	uint64_t ts;  /* the source's current event */
	unsigned src; /* user stream 0 .. nreaders-1, then the kernel's CPUs */
};

struct tk_merge {
	const struct tk_trace *trace;
	struct tk_kernel *kernel; /* NULL: user streams only */
	struct tk_stream_reader *readers;
	unsigned nreaders;
	unsigned nsources; /* nreaders, then the kernel's CPUs */
	struct tk_merge_node *heap;
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

void tk_merge_close(struct tk_merge *m);

/* merge.c, for tk_merge_next(): open the next sources and put them in
 * the heap (0, or -errno for one that cannot be opened: it is left
 * out); take the top source out of the heap. */
int tk_merge_prime(struct tk_merge *m, char *err, size_t errlen);
void tk_merge_drop_top(struct tk_merge *m);

static inline bool tk_merge_less(const struct tk_merge_node *a,
				 const struct tk_merge_node *b)
{
	return a->ts != b->ts ? a->ts < b->ts : a->src < b->src;
}

/* Put node @x at @i of the heap or below, where it belongs. */
static inline void tk_merge_down(struct tk_merge *m, unsigned i,
				 struct tk_merge_node x)
{
	struct tk_merge_node *h = m->heap;

	for (;;) {
		unsigned l = 2 * i + 1, s = l;

		if (l >= m->heap_len)
			break;
		if (l + 1 < m->heap_len && tk_merge_less(&h[l + 1], &h[l]))
			s = l + 1;
		if (!tk_merge_less(&h[s], &x))
			break;
		h[i] = h[s];
		i = s;
	}
	h[i] = x;
}

/*
 * The next event in time order: 1 with *ev set, 0 at the end of every
 * source, -errno when a source cannot be opened or turned out malformed
 * (err[errlen] says which file and where; that source ends there: call
 * again for the others).  Inline: a conversion or a histogram calls it
 * for every event, and the call and the event's copy cost as much as
 * the heap.
 */
static inline int tk_merge_next(struct tk_merge *m, struct tk_merge_event *ev,
				char *err, size_t errlen)
{
	unsigned src = m->current;
	int ret;

	if (m->primed < m->nsources) {
		ret = tk_merge_prime(m, err, errlen);
		if (ret < 0)
			return ret;
	} else if (src != ~0u) {
		/* the top is still the source returned last: move it on */
		uint64_t ts;

		m->current = ~0u;
		if (src < m->nreaders) {
			ret = tk_stream_next(&m->readers[src], err, errlen);
			ts = m->readers[src].ts;
		} else {
			struct tk_kernel_cpu *c = &m->kernel->cpus[src - m->nreaders];

			ret = tk_kernel_next(m->kernel, c, err, errlen);
			ts = c->ts;
		}
		if (ret > 0) {
			tk_merge_down(m, 0, (struct tk_merge_node){ ts, src });
		} else {
			tk_merge_drop_top(m);
			if (ret < 0)
				return ret;
		}
	}
	if (!m->heap_len)
		return 0;
	src = m->current = m->heap[0].src;
	ev->ts = m->heap[0].ts;
	if (src < m->nreaders) {
		ev->user = &m->readers[src];
		ev->kcpu = NULL;
	} else {
		ev->user = NULL;
		ev->kcpu = &m->kernel->cpus[src - m->nreaders];
	}
	return 1;
}

#endif /* TK_MERGE_H */
