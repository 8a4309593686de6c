/* SPDX-License-Identifier: MIT */
/*
 * merge-heap.h - merge sources of events by timestamp: a binary min-heap
 * of (timestamp, source) pairs, ties broken by the source's index so that
 * equal timestamps come out in a stable order (user streams before the
 * kernel's CPUs, each in its own order).
 *
 *   tk_heap_push(h, src, ts)      a source with an event at ts
 *   tk_heap_top(h)                the source whose event comes next
 *   tk_heap_replace_top(h, ts)    that source moved on to an event at ts
 *   tk_heap_pop(h)                that source has no more events
 *
 * The timestamp is kept beside the index, so a comparison reads no
 * source: a merge of a few streams costs a few nanoseconds an event.
 */
#ifndef TK_MERGE_HEAP_H
#define TK_MERGE_HEAP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

struct tk_heap_node {
	uint64_t ts;
	unsigned src;
};

struct tk_heap {
	struct tk_heap_node *n;
	unsigned len, cap;
};

static inline int tk_heap_init(struct tk_heap *h, unsigned cap)
{
	h->n = calloc(cap + 1, sizeof(*h->n));
	h->len = 0;
	h->cap = cap;
	return h->n ? 0 : -ENOMEM;
}

static inline void tk_heap_free(struct tk_heap *h)
{
	free(h->n);
	h->n = NULL;
	h->len = h->cap = 0;
}

static inline bool tk_heap_less(const struct tk_heap_node *a,
				const struct tk_heap_node *b)
{
	return a->ts != b->ts ? a->ts < b->ts : a->src < b->src;
}

static inline void tk_heap_down(struct tk_heap *h, unsigned i)
{
	struct tk_heap_node x = h->n[i];

	for (;;) {
		unsigned l = 2 * i + 1, m = l;

		if (l >= h->len)
			break;
		if (l + 1 < h->len && tk_heap_less(&h->n[l + 1], &h->n[l]))
			m = l + 1;
		if (!tk_heap_less(&h->n[m], &x))
			break;
		h->n[i] = h->n[m];
		i = m;
	}
	h->n[i] = x;
}

static inline void tk_heap_push(struct tk_heap *h, unsigned src, uint64_t ts)
{
	unsigned i = h->len++;
	struct tk_heap_node x = { ts, src };

	while (i && tk_heap_less(&x, &h->n[(i - 1) / 2])) {
		h->n[i] = h->n[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->n[i] = x;
}

static inline unsigned tk_heap_top(const struct tk_heap *h)
{
	return h->n[0].src;
}

static inline void tk_heap_replace_top(struct tk_heap *h, uint64_t ts)
{
	h->n[0].ts = ts;
	tk_heap_down(h, 0);
}

static inline void tk_heap_pop(struct tk_heap *h)
{
	h->n[0] = h->n[--h->len];
	if (h->len)
		tk_heap_down(h, 0);
}

#endif /* TK_MERGE_HEAP_H */
