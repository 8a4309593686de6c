/* SPDX-License-Identifier: MIT */
/*
 * arena.c - make the process's buffers (layout: ringbuf-layout.h).
 *
 * Called by the control thread when a session starts (CONFIG), and by the
 * fork handler of a child that follows the session: never by a writer, so
 * that a thread's first event takes memory made ahead and makes no system
 * call.  Both memfds are sealed against shrinking and growing before the
 * recorder sees them (the recorder refuses one that is not: a buffer that
 * shrinks under a reader is a SIGBUS).  The pool is sized for its limit
 * but only its first pool_init chunks are made here (pre-faulted, so that
 * a thread's first packets take no fault on a fresh page): little, since
 * most processes of a recording may never fire an event.  The recorder
 * makes the rest once a writer takes a chunk, ahead of the writers, and
 * more as bursts need it (cli/consumer.c); the pool keeps what it was
 * grown to until the session ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "internal.h"
#include "arena.h"

#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static size_t page_up(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* A sealed memfd of @size bytes, mapped shared, its first @populate bytes
 * faulted in; returns the fd and sets *map, or -1 with errno and *what. */
static int make_memfd(size_t size, size_t populate, void **map,
		      const char **what)
{
	int fd = memfd_create("tracekit-buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int err;

	if (fd < 0) {
		*what = "memfd_create";
		return -1;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		*what = "ftruncate";
		goto fail;
	}
	*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*map == MAP_FAILED) {
		*what = "mmap";
		goto fail;
	}
	if (populate && madvise(*map, populate, MADV_POPULATE_WRITE) < 0) {
		*what = "MADV_POPULATE_WRITE";
		err = errno;
		munmap(*map, size);
		errno = err;
		goto fail;
	}
	if (fcntl(fd, F_ADD_SEALS, SEALS) < 0) {
		*what = "F_ADD_SEALS";
		err = errno;
		munmap(*map, size);
		errno = err;
		goto fail;
	}
	return fd;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

struct tk_arena_map *tk_arena_create(const struct tk_arena_geom *g,
				     uint32_t touch, uint64_t gen,
				     const char **what)
{
	struct tk_arena_map *a = calloc(1, sizeof(*a));
	uint32_t ring = pow2_at_least(g->pool_max > g->streams_max ? g->pool_max
								 : g->streams_max);
	uint32_t stream_size = tk_rb_stream_size(g->slots);
	uint32_t touched = g->streams_max < touch ? g->streams_max : touch;
	struct tk_arena *h;
	size_t off, size;
	void *map;
	int err;

	if (!a) {
		*what = "malloc";
		return NULL;
	}
	a->fds[0] = a->fds[1] = -1;
	a->geom = *g;
	a->gen = gen;
	a->ring_size = ring;
	a->wake_batch = tk_rb_wake_batch(g->chunk_size, g->slots);
	a->w = calloc(g->streams_max, sizeof(*a->w));
	if (!a->w) {
		*what = "malloc";
		goto fail;
	}
	off = page_up(sizeof(*h));
	size = off + 3 * page_up((size_t)ring * 4) +
	       page_up((size_t)g->streams_max * 8) +
	       (size_t)g->streams_max * stream_size;
	size = page_up(size);
	a->fds[0] = make_memfd(size, 0, &map, what);
	if (a->fds[0] < 0)
		goto fail;
	h = a->hdr = map;
	a->control_size = size;
	h->magic = TK_ARENA_MAGIC;
	h->version = TK_ARENA_VERSION;
	h->pid = tk_self_pid();
	h->mode = g->mode;
	h->chunk_size = g->chunk_size;
	h->slots = g->slots;
	h->streams_max = g->streams_max;
	h->ring_size = ring;
	h->stream_size = stream_size;
	h->chunks_max = g->pool_max;
	h->chunk_ring = off;
	off += page_up((size_t)ring * 4);
	h->stream_ring = off;
	off += page_up((size_t)ring * 4);
	h->recycle_ring = off;
	off += page_up((size_t)ring * 4);
	h->produced = off;
	off += page_up((size_t)g->streams_max * 8);
	h->streams = off;
	h->control_size = size;
	a->chunk_ring = (uint32_t *)((char *)map + h->chunk_ring);
	a->stream_ring = (uint32_t *)((char *)map + h->stream_ring);
	a->recycle_ring = (uint32_t *)((char *)map + h->recycle_ring);
	a->produced = (uint64_t *)((char *)map + h->produced);
	a->streams = (char *)map + h->streams;

	a->pool_size = (size_t)g->pool_max * g->chunk_size;
	a->fds[1] = make_memfd(a->pool_size, (size_t)g->pool_init * g->chunk_size,
			       &map, what);
	if (a->fds[1] < 0)
		goto fail;
	a->pool = map;
	a->mapped = g->pool_init;
	/* chunk 0 on top: the first taken */
	for (uint32_t i = 0; i < g->pool_init; i++)
		a->chunk_ring[i] = g->pool_init - 1 - i;
	h->free_chunks.top = g->pool_init;
	h->fresh = g->pool_init;
	/* the descriptors the first threads take: made now (the memfd is
	 * zeros already), so that a first event meets no fresh page */
	for (uint32_t i = 0; i < touched; i++)
		tk_rb_populate_descriptor(a->streams + (size_t)i * stream_size,
					  stream_size);
	for (uint32_t i = 0; i < g->streams_max; i++)
		a->stream_ring[i] = i;
	h->free_streams.tail = g->streams_max;
	return a;
fail:
	err = errno;
	tk_arena_forget(a);
	errno = err;
	return NULL;
}

void tk_arena_forget(struct tk_arena_map *a)
{
	if (!a)
		return;
	if (a->hdr)
		munmap(a->hdr, a->control_size);
	if (a->pool)
		munmap(a->pool, a->pool_size);
	for (int i = 0; i < 2; i++)
		if (a->fds[i] >= 0)
			close(a->fds[i]);
	free(a->w);
	free(a);
}
