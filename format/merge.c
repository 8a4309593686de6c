/* SPDX-License-Identifier: MIT */
/*
 * merge.c - a trace's user streams and kernel CPUs in time order
 * (merge.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "merge.h"

int tk_merge_open(struct tk_merge *m, const struct tk_trace *t,
		  struct tk_kernel *k)
{
	unsigned ncpus = k ? k->ncpus : 0;

	memset(m, 0, sizeof(*m));
	m->trace = t;
	m->kernel = k;
	m->current = ~0u;
	m->readers = calloc(t->nstreams + 1, sizeof(*m->readers));
	m->heap = calloc(t->nstreams + ncpus + 1, sizeof(*m->heap));
	if (!m->readers || !m->heap) {
		tk_merge_close(m);
		return -ENOMEM;
	}
	m->nreaders = t->nstreams;
	m->nsources = t->nstreams + ncpus;
	return 0;
}

static uint64_t source_ts(const struct tk_merge *m, unsigned src)
{
	if (src < m->nreaders)
		return m->readers[src].ts;
	return m->kernel->cpus[src - m->nreaders].ts;
}

static bool heap_less(const struct tk_merge *m, unsigned a, unsigned b)
{
	uint64_t x = source_ts(m, m->heap[a]), y = source_ts(m, m->heap[b]);

	if (x != y)
		return x < y;
	return m->heap[a] < m->heap[b];
}

static void heap_swap(struct tk_merge *m, unsigned a, unsigned b)
{
	unsigned t = m->heap[a];

	m->heap[a] = m->heap[b];
	m->heap[b] = t;
}

static void heap_down(struct tk_merge *m, unsigned i)
{
	for (;;) {
		unsigned l = 2 * i + 1, s = i;

		if (l < m->heap_len && heap_less(m, l, s))
			s = l;
		if (l + 1 < m->heap_len && heap_less(m, l + 1, s))
			s = l + 1;
		if (s == i)
			return;
		heap_swap(m, i, s);
		i = s;
	}
}

static void heap_up(struct tk_merge *m, unsigned i)
{
	while (i && heap_less(m, i, (i - 1) / 2)) {
		heap_swap(m, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

/* Move @src to its next event: 1, 0 at its end, -errno. */
static int advance(struct tk_merge *m, unsigned src, char *err, size_t errlen)
{
	if (src < m->nreaders)
		return tk_stream_next(&m->readers[src], err, errlen);
	return tk_kernel_next(m->kernel, &m->kernel->cpus[src - m->nreaders], err,
			      errlen);
}

/* Open source m->primed and put it in the heap at its first event. */
static int prime_one(struct tk_merge *m, char *err, size_t errlen)
{
	unsigned src = m->primed++;
	int ret;

	if (src < m->nreaders) {
		const struct tk_trace *t = m->trace;

		ret = tk_stream_open(&m->readers[src], t, &t->streams[src], err,
				     errlen);
		if (ret < 0) {
			if (ret == -ENOMEM)
				snprintf(err, errlen, "out of memory opening '%s/%s'",
					 t->dir, t->streams[src].file);
			tk_stream_close(&m->readers[src]);
			return ret;
		}
	}
	ret = advance(m, src, err, errlen);
	if (ret <= 0)
		return ret;
	m->heap[m->heap_len++] = src;
	heap_up(m, m->heap_len - 1);
	return 0;
}

int tk_merge_next(struct tk_merge *m, struct tk_merge_event *ev, char *err,
		  size_t errlen)
{
	unsigned src;
	int ret;

	while (m->primed < m->nsources) {
		ret = prime_one(m, err, errlen);
		if (ret < 0)
			return ret;
	}
	if (m->current != ~0u) {
		/* the top is still the source returned last: move it on */
		m->current = ~0u;
		ret = advance(m, m->heap[0], err, errlen);
		if (ret <= 0)
			m->heap[0] = m->heap[--m->heap_len];
		heap_down(m, 0);
		if (ret < 0)
			return ret;
	}
	if (!m->heap_len)
		return 0;
	src = m->current = m->heap[0];
	memset(ev, 0, sizeof(*ev));
	ev->ts = source_ts(m, src);
	if (src < m->nreaders)
		ev->user = &m->readers[src];
	else
		ev->kcpu = &m->kernel->cpus[src - m->nreaders];
	return 1;
}

void tk_merge_close(struct tk_merge *m)
{
	for (unsigned i = 0; m->readers && i < m->nreaders; i++)
		tk_stream_close(&m->readers[i]);
	free(m->readers);
	free(m->heap);
	memset(m, 0, sizeof(*m));
}
