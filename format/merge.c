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

static void heap_push(struct tk_merge *m, unsigned src)
{
	struct tk_merge_node *h = m->heap;
	struct tk_merge_node x = { source_ts(m, src), src };
	unsigned i = m->heap_len++;

	while (i && tk_merge_less(&x, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
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
	heap_push(m, src);
	return 0;
}

int tk_merge_prime(struct tk_merge *m, char *err, size_t errlen)
{
	while (m->primed < m->nsources) {
		int ret = prime_one(m, err, errlen);

		if (ret < 0)
			return ret;
	}
	return 0;
}

void tk_merge_drop_top(struct tk_merge *m)
{
	if (--m->heap_len)
		tk_merge_down(m, 0, m->heap[m->heap_len]);
}

void tk_merge_close(struct tk_merge *m)
{
	for (unsigned i = 0; m->readers && i < m->nreaders; i++)
		tk_stream_close(&m->readers[i]);
	free(m->readers);
	free(m->heap);
	memset(m, 0, sizeof(*m));
}
