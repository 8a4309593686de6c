/* SPDX-License-Identifier: MIT */
/*
 * arena.h - the process's side of its buffers (layout: ringbuf-layout.h).
 *
 * arena.c makes the memory (the control thread, or the fork handler of a
 * child: never a writer; the recorder makes more of the pool later);
 * stream.c writes into it.  What only this
 * process needs (addresses, the writer's state of each stream) stays in
 * private memory, never in the shared mapping.
 */
#ifndef TK_ARENA_H
#define TK_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/ringbuf-layout.h"

struct tk__thread;

/* What the session asks for (CONFIG). */
struct tk_arena_geom {
	uint32_t mode;        /* enum tk_rb_mode */
	uint32_t chunk_size;  /* bytes per chunk (sub-buffer) */
	uint32_t slots;       /* chunks one thread may hold */
	uint32_t streams_max; /* threads at once */
	uint32_t pool_init;   /* chunks made at the start (by the process) */
	uint32_t pool_max;    /* chunks the pool may grow to */
	uint32_t block_ms;    /* --block: wait this long for space, 0: never */
};

/* The writer's private side of one stream. */
struct tk_wstream {
	struct tk_arena_map *arena;
	struct tk_rb_stream *desc;
	uint32_t index;
	uint32_t payload_max; /* largest event (header included) a packet takes */
	uint64_t seq;         /* number of the packet being written */
	uint64_t oldest;      /* overwrite: oldest packet still holding a chunk */
	uint64_t consumed;    /* discard: the recorder's consumed, last seen */
	bool pool_low;        /* the last chunk taken left few in the ring */
	uint32_t backoff;     /* events to lose before looking for room again */
	uint64_t lost;        /* lost by this thread outside signal nesting */
	struct tk__thread *thread;
	/* the CTF packet being written: the chunk's first, or a later one
	 * when the thread moved to another CPU (stream.c packet_split) */
	struct tk_packet_header *ctf;
	uint64_t ctf_seq; /* CTF packets begun in the stream */
	uint64_t instance; /* its CTF stream instance (tk_rb_stream.instance) */
	/* the stream class the packet's headers carry, 0: not known yet
	 * when the packet was opened (the recorder completes them) */
	uint32_t class_id;
};

struct tk_arena_map {
	struct tk_arena *hdr; /* the control mapping */
	size_t control_size;
	struct tk_arena_geom geom;
	uint32_t *chunk_ring, *stream_ring, *recycle_ring;
	uint64_t *produced;
	char *streams;
	char *pool;             /* the pool mapping, chunks_max chunks */
	size_t pool_size;
	uint32_t mapped;        /* chunks mapped here (control thread) */
	uint32_t ring_size;     /* entries of each free ring */
	uint32_t wake_batch;    /* tk_rb_wake_batch() */
	struct tk_wstream *w;   /* [streams_max] */
	uint64_t gen;           /* the session generation it serves */
	uint32_t users;         /* streams open in it (atomic) */
	bool retired;           /* its session is over */
	int fds[2];             /* control, pool: until handed over */
	struct tk_arena_map *next; /* retired arenas */
};

/* Make an arena for @g; its first pool_init chunks are made and in the
 * free chunk stack, every descriptor in the free ring, the pages a first
 * event writes of the first @touch of them faulted in (the recorder
 * faults in the next ones ahead of the threads that take them).  Returns it, or NULL with errno set and *what naming the step
 * that failed ("memfd_create" ...).  Not for a writer: it allocates and
 * makes system calls. */
struct tk_arena_map *tk_arena_create(const struct tk_arena_geom *g,
				     uint32_t touch, uint64_t gen,
				     const char **what);
/* Drop the mappings without a single store (a forked child's copy of its
 * parent's arena), and free the private parts. */
void tk_arena_forget(struct tk_arena_map *a);

static inline struct tk_rb_stream *tk_arena_stream(const struct tk_arena_map *a,
						   uint32_t i)
{
	return (struct tk_rb_stream *)(a->streams +
				       (size_t)i * a->hdr->stream_size);
}

/* The address of chunk @id, or NULL when it names none. */
static inline char *tk_arena_chunk(const struct tk_arena_map *a, uint32_t id)
{
	if (id >= a->geom.pool_max)
		return NULL;
	return a->pool + (size_t)id * a->geom.chunk_size;
}

/* Take one number from a free ring; false when it is empty; *left (if
 * not NULL) says how many were left after it.  The recorder is the
 * ring's only producer (cli/consumer.c:ring_put()). */
static inline bool tk_ring_take(struct tk_ring_ends *e, const uint32_t *ring,
				uint32_t size, uint32_t *out, uint64_t *left)
{
	uint64_t head = __atomic_load_n(&e->head, __ATOMIC_RELAXED);

	for (;;) {
		/* pairs with the RELEASE store of tail in
		 * cli/consumer.c:ring_put(): the entries below it are there */
		uint64_t tail = __atomic_load_n(&e->tail, __ATOMIC_ACQUIRE);
		uint32_t v;

		if (head >= tail)
			return false;
		v = __atomic_load_n(&ring[head & (size - 1)], __ATOMIC_RELAXED);
		/* its RELEASE pairs with the ACQUIRE load of head in
		 * cli/consumer.c:ring_put(): the entry is read before the
		 * recorder may fill its place again (its ACQUIRE half, with
		 * the writer's that moved head before, is not needed) */
		if (__atomic_compare_exchange_n(&e->head, &head, head + 1, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			*out = v;
			if (left)
				*left = tail - head - 1;
			return true;
		}
	}
}

/* Take the chunk given back last from the free chunk stack; false when it
 * is empty; *left (if not NULL) says how many were left after it.  The
 * recorder is the only one that pushes (cli/consumer.c:stack_push()). */
static inline bool tk_stack_take(struct tk_chunk_stack *s, const uint32_t *stack,
				 uint32_t size, uint32_t *out, uint64_t *left)
{
	/* pairs with the RELEASE of the compare-and-swap in
	 * cli/consumer.c:stack_push(): the entries below count are there,
	 * and the chunks they name written out */
	uint64_t top = __atomic_load_n(&s->top, __ATOMIC_ACQUIRE);

	for (;;) {
		uint32_t n = TK_STACK_COUNT(top), v;

		if (n == 0 || n > size)
			return false; /* empty, or scribbled on */
		/* may be overwritten by a push once others popped it: then
		 * the tag moved and the compare-and-swap below fails */
		v = __atomic_load_n(&stack[n - 1], __ATOMIC_RELAXED);
		/* its ACQUIRE (on failure too) pairs with the RELEASE of
		 * stack_push()'s; its RELEASE with the ACQUIRE load of top
		 * there: the entry is read before the recorder may fill its
		 * place again */
		if (__atomic_compare_exchange_n(&s->top, &top,
						TK_STACK_NEXT(top, n - 1), false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			*out = v;
			if (left)
				*left = n - 1;
			return true;
		}
	}
}

#endif /* TK_ARENA_H */
