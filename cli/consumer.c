/* SPDX-License-Identifier: MIT */
/*
 * consumer.c - drain the processes' buffers into the trace directory.
 *
 * Each process hands over its arena (common/ringbuf-layout.h): a control
 * memfd and pool segments.  The recorder offers stream descriptors and
 * gives chunks back through the free chunk stack, finds each thread's
 * stream by its descriptor's state, and:
 *
 * Discard mode: every packet a writer has closed (slot < produced) is
 * written straight from its chunk (drain.c: io_uring, O_DIRECT): its
 * packet header completed in place (stream id, instance, sizes), the
 * padding up to the next block zeroed, consecutive packets of a stream in
 * one write.  The slot goes back to the writer as soon as it is read
 * (consumed), the chunk when its write has completed.  A stream whose
 * thread has left is recycled once written: file closed, descriptor
 * offered again.  At the end (stop, or the process gone) each open
 * packet is copied, cut after its last whole event, and written.
 * Overwrite mode: nothing is drained while recording; at the end (or when
 * its thread leaves) the newest packets still in a stream's ring are
 * copied, each checked against its slot's sequence number so that a
 * packet overwritten while being copied is dropped.
 *
 * The arena is shared with a program we do not trust to be sane (it may
 * have crashed mid-write, or scribble on it): the geometry is checked
 * once, when the memfds come (sealed, of the sizes it says), and every
 * size, counter and chunk number read later is bounded; a counter that
 * cannot be right stops the reading of that stream (said in the
 * summary), and no loop runs longer than the geometry allows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "session.h"
#include "common/unix-socket.h"
#include "common/visible.h"
#include "tracekit/runtime.h"

/* Descriptors made ready ahead, and kept ready, in the free ring. */
#define OFFER_BATCH 32 /* descriptors touched ahead */
/* A counter larger than this was not counted by a writer. */
#define COUNT_MAX (1ull << 48)
/* Closed packets fewer than a batch are written this often at least. */
#define CONSUMER_LAZY_US 50000
/* Bytes the recorder has in writes not completed, at most, while it
 * records: enough to keep a disk busy (four 2 MiB writes), and half a
 * process's pool at most.  More would not make it faster: packets
 * beyond it stay in their writers' rings (-b), or go through the page
 * cache when half a ring waits (spill_at()), rather than grow the pool
 * for writes that only queue. */
#define IN_FLIGHT_MAX (8u << 20)

static size_t page_up(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

/* ---------------------------------------------------------------- arenas */

/* Whether @fd is a memfd of @size bytes that can neither shrink nor grow:
 * one that could shrink under our mapping would be a SIGBUS. */
static bool sealed_memfd(int fd, size_t size)
{
	struct statfs sfs;
	struct stat sb;
	int seals = fcntl(fd, F_GET_SEALS);

	return seals >= 0 && (seals & F_SEAL_SHRINK) && (seals & F_SEAL_GROW) &&
	       fstatfs(fd, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC &&
	       fstat(fd, &sb) == 0 && (uint64_t)sb.st_size == size;
}

static void *map_fd(int fd, size_t size)
{
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* The geometry in @h against what we asked (@o: the CONFIG every
 * process and forked child records with) and the sizes the process made
 * (lib/arena.c lays it out so).  A pool larger than --pool would be made
 * by us (the maker) as the process says it starves. */
static const char *check_geometry(const struct tk_arena *h, size_t size,
				  uint32_t pid, const struct rec_options *o)
{
	uint64_t off;

	if (h->magic != TK_ARENA_MAGIC || h->version != TK_ARENA_VERSION)
		return "not a tracekit arena of this version";
	if (h->pid != pid)
		return "made by another process";
	if (h->mode != (o->overwrite ? TK_RB_OVERWRITE : TK_RB_DISCARD) ||
	    h->chunk_size != o->subbuf_kb * 1024 || h->slots != o->slots ||
	    h->streams_max != o->streams_max || h->chunks_max != o->pool_max)
		return "geometry not the one asked for";
	if (!tk_rb_geometry_ok(h->mode, h->chunk_size, h->slots, h->streams_max,
			       h->chunks_max) ||
	    h->stream_size != tk_rb_stream_size(h->slots) ||
	    h->ring_size != pow2_at_least(h->chunks_max > h->streams_max ?
					  h->chunks_max : h->streams_max))
		return "geometry out of range";
	off = page_up(sizeof(*h));
	if (h->chunk_ring != off || h->stream_ring != off + page_up((size_t)h->ring_size * 4) ||
	    h->recycle_ring != off + 2 * page_up((size_t)h->ring_size * 4) ||
	    h->produced != off + 3 * page_up((size_t)h->ring_size * 4) ||
	    h->streams != h->produced + page_up((size_t)h->streams_max * 8) ||
	    h->control_size != size ||
	    tk_arena_control_size(h->ring_size, h->streams_max, h->slots) != size)
		return "layout out of range";
	return NULL;
}

/* -------------------------------------------------------------- the maker
 *
 * A thread of the recorder makes pool chunks (faults their pages in, in
 * our mapping of the process's pool memfd) ahead of the writers: the
 * drain loop asks for more when a pool runs low (ask_growth), finds what
 * was made in rec_arena.made and offers it.  Faulting in costs ~2 us per
 * page on the machines this was measured on: never in the drain loop,
 * never in a writer. */
#define MAKE_STEP (1u << 20) /* bytes made between two looks */

struct rec_maker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* work, or an arena no longer made */
	struct rec_session *s;
	struct rec_arena *work; /* arenas asked for chunks */
	bool stop;
};

/* An arena with chunks to make, under m->lock (done ones leave the list). */
static struct rec_arena *maker_pick(struct rec_maker *m)
{
	for (struct rec_arena **pp = &m->work; *pp;) {
		struct rec_arena *a = *pp;

		if (__atomic_load_n(&a->made, __ATOMIC_RELAXED) < a->target ||
		    a->premapped < a->premap_to)
			return a;
		*pp = a->make_next;
		a->in_make_list = false;
	}
	return NULL;
}

static void *maker_main(void *arg)
{
	struct rec_maker *m = arg;
	static const uint64_t one = 1;

	pthread_mutex_lock(&m->lock);
	for (;;) {
		struct rec_arena *a;
		uint32_t from, to, step;
		bool premap;

		while (!m->stop && !(a = maker_pick(m)))
			pthread_cond_wait(&m->cond, &m->lock);
		if (m->stop)
			break;
		step = MAKE_STEP / a->chunk_size ? MAKE_STEP / a->chunk_size : 1;
		premap = a->premapped < a->premap_to;
		if (premap) {
			/* what the process made: in our page tables too, so
			 * that the drain loop takes no fault on it */
			from = a->premapped;
			to = a->premap_to - from < step ? a->premap_to : from + step;
		} else {
			from = a->made;
			to = a->target - from < step ? a->target : from + step;
		}
		a->making = true;
		pthread_mutex_unlock(&m->lock);
		madvise(a->pool + (size_t)from * a->chunk_size,
			(size_t)(to - from) * a->chunk_size, MADV_POPULATE_WRITE);
		pthread_mutex_lock(&m->lock);
		a->making = false;
		if (premap) {
			a->premapped = to;
			pthread_cond_broadcast(&m->cond);
			continue;
		}
		/* pairs with the ACQUIRE loads of made in offer_made() and
		 * arena_has_work(), which read it without the lock */
		__atomic_store_n(&a->made, to, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&m->cond);
		/* the drain loop offers them */
		if (write(m->s->wake_fd, &one, sizeof(one)) < 0) {
			/* it looks anyway at its next pass */
		}
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

int consumer_init(struct rec_session *s)
{
	struct rec_maker *m = calloc(1, sizeof(*m));
	sigset_t all, old;
	int err;

	if (!m)
		return -ENOMEM;
	m->s = s;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&m->thread, NULL, maker_main, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		free(m);
		errno = err;
		return -err;
	}
	s->maker = m;
	return 0;
}

void consumer_free(struct rec_session *s)
{
	struct rec_maker *m = s->maker;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	free(m);
	s->maker = NULL;
}

/* Ask the maker for chunks up to @target of @a. */
static void maker_ask(struct rec_session *s, struct rec_arena *a, uint32_t target)
{
	struct rec_maker *m = s->maker;

	if (!m || (target <= a->target && !a->premap_to))
		return;
	pthread_mutex_lock(&m->lock);
	if (target > a->target)
		a->target = target;
	if (!a->in_make_list) {
		a->make_next = m->work;
		m->work = a;
		a->in_make_list = true;
	}
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

/* @a is about to go: the maker must not be inside it. */
static void maker_forget(struct rec_session *s, struct rec_arena *a)
{
	struct rec_maker *m = s->maker;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	a->target = 0;
	a->premap_to = 0;
	while (a->making)
		pthread_cond_wait(&m->cond, &m->lock);
	for (struct rec_arena **pp = &m->work; *pp; pp = &(*pp)->make_next)
		if (*pp == a) {
			*pp = a->make_next;
			break;
		}
	a->in_make_list = false;
	pthread_mutex_unlock(&m->lock);
}

static uint64_t bounded(uint64_t v)
{
	return v < COUNT_MAX ? v : 0;
}

/* Register @a's pool made so far with the drain's ring, so that the
 * kernel pins its pages once, not at every write (measured: 22-38 % of
 * the drain loop's CPU in get_user_pages for O_DIRECT writes of 2 MiB).
 * Where it cannot (no support, the locked-memory limit), writes go as
 * before. */
static void pool_register(struct rec_session *s, struct rec_arena *a)
{
	unsigned slot = 0;

	if (a->fixed < 0) {
		while (slot < DRAIN_FIXED_MAX && s->fixed_used[slot])
			slot++;
		if (slot == DRAIN_FIXED_MAX)
			return;
	} else {
		slot = (unsigned)a->fixed;
	}
	if (drain_fixed_set(&s->drain, slot, a->pool,
			    (size_t)a->chunks * a->chunk_size) < 0) {
		s->fixed_used[slot] = false;
		a->fixed = -1;
		a->fixed_chunks = UINT32_MAX; /* not tried again */
		return;
	}
	s->fixed_used[slot] = true;
	a->fixed = (int)slot;
	a->fixed_chunks = a->chunks;
}

/* The chunks handed out so far, by us or by writers that found the free
 * stack empty (lib/stream.c take_fresh), in a->chunks: never less than
 * before, never more than the pool (the program may scribble on fresh). */
static void see_fresh(struct rec_arena *a)
{
	uint32_t f = __atomic_load_n(&a->hdr->fresh, __ATOMIC_RELAXED);

	if (f > a->chunks_max)
		f = a->chunks_max;
	if (f > a->chunks)
		a->chunks = f;
}

static void arena_unmap(struct rec_session *s, struct rec_arena *a)
{
	if (a->fixed >= 0) {
		drain_fixed_set(&s->drain, (unsigned)a->fixed, NULL, 0);
		s->fixed_used[a->fixed] = false;
	}
	s->wakeups_gone += bounded(__atomic_load_n(&a->hdr->wakeups,
						   __ATOMIC_RELAXED));
	see_fresh(a);
	if (a->chunks > a->chunks_first + a->chunks_ours)
		s->writers_took += (uint64_t)(a->chunks - a->chunks_first -
					      a->chunks_ours) * a->chunk_size;
	maker_forget(s, a);
	munmap(a->hdr, a->control_size);
	munmap(a->pool, a->pool_size);
	free(a->cur);
	free(a->instance);
	free(a);
}

int consumer_add_arena(struct rec_session *s, struct rec_process *p,
		       const int fds[2], uint32_t made)
{
	struct rec_arena *a = NULL;
	struct tk_arena *h = NULL;
	const char *why = NULL;
	struct stat sb;
	size_t size = 0, pool_size = 0;
	if (p->arena)
		why = "a second arena";
	else if (fstat(fds[0], &sb) < 0 || sb.st_size < 4096 ||
		 (uint64_t)sb.st_size > tk_arena_control_max())
		why = "its control part has no sane size";
	else if (!sealed_memfd(fds[0], size = (size_t)sb.st_size))
		why = "its control part is not a sealed memfd";
	else if (!(h = map_fd(fds[0], size)))
		why = strerror(errno);
	else if ((why = check_geometry(h, size, p->pid, s->opt)))
		;
	else if (!made || made > h->chunks_max)
		why = "its pool has no sane size";
	else if (!sealed_memfd(fds[1], pool_size = (size_t)h->chunks_max * h->chunk_size))
		why = "its pool is not a sealed memfd of its size";
	else if (!(a = calloc(1, sizeof(*a))) ||
		 !(a->cur = calloc(h->streams_max, sizeof(*a->cur))) ||
		 !(a->instance = calloc(h->streams_max, sizeof(*a->instance))))
		why = "out of memory";
	else if (!(a->pool = map_fd(fds[1], pool_size)))
		why = strerror(errno);
	if (why) {
		if (h)
			munmap(h, size);
		if (a) {
			free(a->cur);
			free(a->instance);
		}
		free(a);
		close(fds[0]);
		close(fds[1]);
		fprintf(stderr, "tracekit: process %u: buffers refused: %s\n", p->pid,
			why);
		return -EINVAL;
	}
	close(fds[0]);
	close(fds[1]);
	a->hdr = h;
	a->control_size = size;
	/* copied once: the program may scribble over the header later */
	a->mode = h->mode;
	a->chunk_size = h->chunk_size;
	a->slots = h->slots;
	a->streams_max = h->streams_max;
	a->ring_size = h->ring_size;
	a->stream_size = h->stream_size;
	a->chunks_max = h->chunks_max;
	a->wake_batch = tk_rb_wake_batch(a->chunk_size, a->slots);
	a->chunk_ring = (uint32_t *)((char *)h + h->chunk_ring);
	a->stream_ring = (uint32_t *)((char *)h + h->stream_ring);
	a->recycle_ring = (uint32_t *)((char *)h + h->recycle_ring);
	a->produced = (uint64_t *)((char *)h + h->produced);
	a->streams = (char *)h + h->streams;
	a->pool_size = pool_size;
	a->chunks = a->made = a->target = a->told = made;
	a->chunks_first = made;
	see_fresh(a); /* writers may have taken chunks already */
	/* the process filled the rings: the chunks it made, every
	 * descriptor; we produce from there on */
	a->stream_tail = a->streams_max;
	a->next_instance = (uint64_t)a->streams_max + 1;
	a->fixed = -1;
	/* the writers stamp their packet headers with it from now on, and
	 * seal them (lib/stream.c packet_seal): a value only */
	__atomic_store_n(&h->class_id, p->class_id, __ATOMIC_RELAXED);
	p->arena = a;
	/* what the process made, mapped on our side (a forked child: as it
	 * needs; most exec or exit at once); more only once it writes
	 * (ask_growth): most processes of a recording may never fire */
	if (!p->forked) {
		a->premap_to = made;
		a->start_chunks = s->opt->pool_start < a->chunks_max ?
					  s->opt->pool_start : a->chunks_max;
		/* the recorded command: up to -b at once, as it starts */
		a->writing = p == s->command;
		maker_ask(s, a, a->writing && a->start_chunks > made ? a->start_chunks
								     : made);
	}
	return 0;
}

/* Put @v in a free ring (we are its only producer; the writers take
 * from it in lib/arena.h:tk_ring_take()). */
static bool ring_put(struct rec_arena *a, struct tk_ring_ends *e,
		     uint32_t *ring, uint64_t *tail, uint32_t v)
{
	/* pairs with the RELEASE of the compare-and-swap of head in
	 * lib/arena.h:tk_ring_take(): the entries below head are read, their
	 * places ours again */
	uint64_t head = __atomic_load_n(&e->head, __ATOMIC_ACQUIRE);

	if (head > *tail || *tail - head >= a->ring_size)
		return false; /* full, or scribbled on: the value is dropped */
	__atomic_store_n(&ring[*tail & (a->ring_size - 1)], v, __ATOMIC_RELAXED);
	(*tail)++;
	/* pairs with the ACQUIRE load of tail in lib/arena.h:tk_ring_take():
	 * the entry, and what it names, are there first */
	__atomic_store_n(&e->tail, *tail, __ATOMIC_RELEASE);
	a->gave_back = true;
	return true;
}

static struct tk_rb_stream *desc_at(const struct rec_arena *a, uint32_t i)
{
	return (struct tk_rb_stream *)(a->streams + (size_t)i * a->stream_size);
}

/* Put chunk @v on top of the free chunk stack, the next one a writer
 * takes (lib/arena.h:tk_stack_take(); we are the only one that pushes,
 * the writers pop concurrently). */
static bool stack_push(struct rec_arena *a, uint32_t v)
{
	struct tk_chunk_stack *st = &a->hdr->free_chunks;
	/* pairs with the RELEASE of the compare-and-swap in
	 * lib/arena.h:tk_stack_take(): the entries above count are read,
	 * their places ours again */
	uint64_t top = __atomic_load_n(&st->top, __ATOMIC_ACQUIRE);

	for (;;) {
		uint32_t n = TK_STACK_COUNT(top);

		if (n >= a->ring_size)
			return false; /* full, or scribbled on: dropped */
		__atomic_store_n(&a->chunk_ring[n], v, __ATOMIC_RELAXED);
		/* its RELEASE pairs with the ACQUIRE load of top in
		 * lib/arena.h:tk_stack_take(): the entry, and what it names
		 * (its write completed), are there first; its ACQUIRE (on
		 * failure too) as the load above */
		if (__atomic_compare_exchange_n(&st->top, &top,
						TK_STACK_NEXT(top, n + 1), false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			break;
	}
	a->gave_back = true;
	return true;
}

/* Chunk @id is the writers' again (stream @index's inline page when it is
 * TK_CHUNK_INLINE).  The RELEASE store of inline_busy pairs with the
 * ACQUIRE load of it in lib/stream.c:take_inline(); a pool chunk goes
 * through stack_push(). */
static void chunk_give_back(struct rec_arena *a, uint32_t index, uint32_t id)
{
	if (id == TK_CHUNK_INLINE)
		__atomic_store_n(&desc_at(a, index)->inline_busy, 0,
				 __ATOMIC_RELEASE);
	else
		stack_push(a, id);
}

/* Free chunks in the stack as far as we can tell (bounded). */
static uint64_t chunks_free(const struct rec_arena *a)
{
	/* a count only (nothing is read on its strength) */
	uint32_t n = TK_STACK_COUNT(__atomic_load_n(&a->hdr->free_chunks.top,
						    __ATOMIC_RELAXED));

	return n > a->ring_size ? 0 : n;
}

/* Tell the process what the maker has made since the last look (its
 * control thread maps them: the writers then take no page fault there),
 * and offer them to its writers at once: a burst must not wait for that
 * thread, which the writers may keep from running. */
static void offer_made(struct rec_session *s, struct rec_process *p,
		       struct rec_arena *a)
{
	/* pairs with the RELEASE store of made in maker_main() */
	uint32_t made = __atomic_load_n(&a->made, __ATOMIC_ACQUIRE);

	if (made > a->told && p->fd >= 0) {
		struct tk_msg_made m = { { TK_MSG_MADE, sizeof(m) }, made, 0 };

		if (tk_send_fds(p->fd, &m, sizeof(m), NULL, 0, MSG_DONTWAIT) == 0)
			a->told = made;
	}
	see_fresh(a);
	while (a->chunks < made && a->chunks < a->chunks_max) {
		uint32_t id = a->chunks;

		/* ours once fresh moved past it; else a writer took it
		 * (or the program scribbled on fresh: offer nothing more) */
		if (!__atomic_compare_exchange_n(&a->hdr->fresh, &id, id + 1,
						 false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED)) {
			uint32_t was = a->chunks;

			see_fresh(a);
			if (a->chunks == was)
				break;
			continue;
		}
		a->chunks = id + 1;
		a->chunks_ours++;
		if (!stack_push(a, id))
			break;
	}
	if ((uint64_t)a->chunks * a->chunk_size > s->pool_most)
		s->pool_most = (uint64_t)a->chunks * a->chunk_size;
}

/* Where chunk @id of stream @index is, and its size in *size. */
static char *chunk_addr(struct rec_arena *a, uint32_t index, uint32_t id,
			uint32_t *size)
{
	if (id == TK_CHUNK_INLINE) {
		*size = TK_INLINE_SIZE;
		return (char *)desc_at(a, index) + a->stream_size - TK_INLINE_SIZE;
	}
	if (id >= a->chunks)
		see_fresh(a); /* a writer took it since our last look: its
			       * compare-and-swap came before the slot's
			       * RELEASE, which our caller ACQUIREd */
	if (id >= a->chunks)
		return NULL;
	*size = a->chunk_size;
	return a->pool + (size_t)id * a->chunk_size;
}

/* Fault in the pages of the descriptors the next threads will take (the
 * next few in the free ring), without changing a byte: a thread may be
 * taking one just now.  Numbers come out of the ring in order the first
 * time (then recycled ones, lower), so every descriptor below `touched`
 * is made, and those are all that may be in use.  The last one taken
 * counts too: once the ring is empty there is nothing ahead, and the
 * threads that emptied it since the last look must still be seen. */
static void touch_ahead(struct rec_arena *a)
{
	/* a position only, as in chunks_free(): pairs with the
	 * compare-and-swap of head in lib/arena.h:tk_ring_take() */
	uint64_t head = __atomic_load_n(&a->hdr->free_streams.head, __ATOMIC_ACQUIRE);
	uint32_t want = a->touched;
	/* as many ahead as threads came so far, OFFER_BATCH at most: a
	 * process of one thread (most forked children) costs two */
	uint64_t ahead = head + 2 < OFFER_BATCH ? head + 2 : OFFER_BATCH;

	if (head > a->stream_tail)
		return; /* scribbled on: nothing to learn from it */
	for (uint64_t pos = head ? head - 1 : 0;
	     pos < a->stream_tail && pos < head + ahead; pos++) {
		uint32_t i = __atomic_load_n(&a->stream_ring[pos & (a->ring_size - 1)],
					     __ATOMIC_RELAXED);

		if (i < a->streams_max && i >= want)
			want = i + 1;
	}
	if (want <= a->touched)
		return;
	for (uint32_t i = a->touched; i < want; i++)
		tk_rb_populate_descriptor(desc_at(a, i), a->stream_size);
	a->touched = want;
}

/* ---------------------------------------------------------------- streams */
/* The file of @st: user/PID-TID, or where a stream of that thread id
 * has one already (a descriptor used again by a thread of the same id:
 * ids wrap at pid_max, 32768 on many machines, and a program may write
 * any id there) user/PID-TID.INSTANCE, the stream's instance, which no
 * other stream of the process has.  (Numbered .1 to .999, the 1000th
 * stream of one thread id failed the recording, every process's.) */
static int create_output(struct rec_session *s, struct rec_stream *st)
{
	char *path;

	for (unsigned n = 0; n < 1000; n++) {
		int len;

		free(st->file);
		if (!n)
			len = asprintf(&st->file, "user/%u-%u", st->proc->pid,
				       st->tid);
		else if (n == 1)
			len = asprintf(&st->file, "user/%u-%u.%llu", st->proc->pid,
				       st->tid, (unsigned long long)st->instance);
		else /* (a process of the same pid before this one) */
			len = asprintf(&st->file, "user/%u-%u.%llu.%u",
				       st->proc->pid, st->tid,
				       (unsigned long long)st->instance, n);
		if (len < 0) {
			st->file = NULL;
			return -ENOMEM;
		}
		if (asprintf(&path, "%s/%s", s->dir, st->file) < 0)
			return -ENOMEM;
		st->out_fd = drain_open(&s->drain, path, &st->direct);
		free(path);
		if (st->out_fd >= 0)
			return 0;
		errno = -st->out_fd;
		if (errno != EEXIST)
			break;
	}
	return -errno;
}

/* Close the files of idle streams (no write in flight: the ring writes
 * at offsets, pwrite's, so a file closed is opened again where it was),
 * a few, from where the last look stopped: more streams than the
 * descriptors we may have (RLIMIT_NOFILE) ended the recording.  Returns
 * how many were closed. */
static void close_output(struct rec_session *s, struct rec_stream *st);

static unsigned park_idle(struct rec_session *s, const struct rec_stream *keep)
{
	unsigned parked = 0;

	for (unsigned k = 0; k < s->nstreams && parked < 16; k++) {
		struct rec_stream *st = s->streams[(s->park_next + k) % s->nstreams];
		uint64_t end = st->cut < st->off ? st->cut : st->off;

		if (st == keep || st->out_fd < 0 || st->inflight || st->alloc_busy)
			continue;
		/* the file ends where its contents do (the room allocated
		 * ahead goes back, a cut is made), as at the stream's end */
		close_output(s, st);
		if (st->alloc > end)
			st->alloc = end;
		st->parked = true;
		parked++;
		s->parked++;
	}
	if (s->nstreams)
		s->park_next = (s->park_next + 16) % s->nstreams;
	return parked;
}

/* @st's file, made (create_output) or opened again after park_idle(). */
static int open_once(struct rec_session *s, struct rec_stream *st)
{
	char *path;
	int fd;

	if (!st->parked)
		return create_output(s, st);
	if (asprintf(&path, "%s/%s", s->dir, st->file) < 0)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CLOEXEC | (st->direct ? O_DIRECT : 0));
	free(path);
	if (fd < 0)
		return -errno;
	st->out_fd = fd;
	st->parked = false;
	return 0;
}

static int open_output(struct rec_session *s, struct rec_stream *st)
{
	int ret = open_once(s, st);

	if (ret == -EMFILE || ret == -ENFILE) {
		/* out of descriptors: idle streams give theirs back (all
		 * idle once their writes are done, if none is now) */
		if (!park_idle(s, st)) {
			drain_wait_all(&s->drain);
			drain_reap(&s->drain);
			park_idle(s, st);
		}
		ret = open_once(s, st);
	}
	if (!ret)
		return 0;
	snprintf(s->error, sizeof(s->error), "cannot %s '%s/%s': %s",
		 st->parked ? "open" : "create", s->dir, st->file, strerror(-ret));
	s->failed = true;
	return ret;
}

/* The writer's loss counts, as far as they can be believed. */
static void read_lost(struct rec_stream *st)
{
	const struct tk_rb_stream *d = st->desc;
	uint64_t full, nested, big, overwritten;

	if (!d)
		return;
	/* each read once: the writer may be counting meanwhile */
	full = __atomic_load_n(&d->lost_full, __ATOMIC_RELAXED);
	nested = __atomic_load_n(&d->lost_nested, __ATOMIC_RELAXED);
	big = __atomic_load_n(&d->lost_big, __ATOMIC_RELAXED);
	overwritten = __atomic_load_n(&d->lost_overwritten, __ATOMIC_RELAXED);
	st->lost_full = bounded(full);
	st->lost_nested = bounded(nested);
	st->lost_big = bounded(big);
	st->lost_overwritten = bounded(overwritten);
	if (full >= COUNT_MAX || nested >= COUNT_MAX || big >= COUNT_MAX ||
	    overwritten >= COUNT_MAX)
		st->corrupt = st->corrupt ? st->corrupt
					  : "a loss counter no writer could reach";
}

static uint64_t stream_lost(struct rec_stream *st)
{
	read_lost(st);
	return st->lost_full + st->lost_nested + st->lost_big + st->lost_overwritten;
}

static struct rec_stream *stream_new(struct rec_session *s, struct rec_process *p,
				     struct rec_arena *a, uint32_t i)
{
	struct tk_rb_stream *d = desc_at(a, i);
	struct rec_stream *st = calloc(1, sizeof(*st));
	struct rec_stream **grown = realloc(s->streams,
					    (s->nstreams + 1) * sizeof(*grown));

	if (grown)
		s->streams = grown;
	if (!st || !grown) {
		free(st);
		return NULL;
	}
	st->session = s;
	st->proc = p;
	st->arena = a;
	st->index = i;
	st->desc = d;
	st->tid = d->tid;
	memcpy(st->comm, d->comm, 16);
	st->comm[16] = '\0';
	tk_visible_name(st->comm); /* the program's bytes */
	memcpy(st->made_comm, st->comm, sizeof(st->comm));
	st->out_fd = -1;
	st->spill_fd = -1;
	st->cut = UINT64_MAX;
	/* as the writer stamps it (lib/stream.c stream_open) */
	st->instance = a->instance[i] ? a->instance[i] : (uint64_t)i + 1;
	a->cur[i] = st;
	s->streams[s->nstreams++] = st;
	p->nstreams++;
	if (st->tid == p->pid && !p->main_stream)
		p->main_stream = st;
	return st;
}

/* Stop reading @st: the program has made its counters impossible. */
static void stream_corrupt(struct rec_stream *st, const char *why)
{
	if (!st->corrupt)
		st->corrupt = why;
	st->done = true;
}

static void stamp_header(const struct rec_stream *st, struct tk_packet_header *ph)
{
	ph->magic = TK_CTF_MAGIC;
	ph->stream_id = st->proc->class_id;
	ph->stream_instance_id = st->instance;
}

/* The last CTF packet of the first @content bytes of chunk @pkt (one
 * per CPU its thread ran on while filling it). */
static uint64_t last_packet(const char *pkt, uint64_t content)
{
	uint64_t off = 0, next;

	while ((next = tk_packet_next(pkt, off, content)))
		off = next;
	return off;
}

/* Complete the headers of the CTF packets in chunk @pkt: the last one
 * ends at @content, and takes @size bytes with the padding. */
static void fix_headers(const struct rec_stream *st, char *pkt,
			uint64_t content, uint64_t size)
{
	uint64_t off = 0, next;
	struct tk_packet_header *ph;

	while ((next = tk_packet_next(pkt, off, content))) {
		stamp_header(st, (struct tk_packet_header *)(pkt + off));
		off = next;
	}
	ph = (struct tk_packet_header *)(pkt + off);
	stamp_header(st, ph);
	ph->content_size = (content - off) * 8;
	ph->packet_size = (size - off) * 8;
}

/* Events a packet of @commit bytes can hold at most: a program may say
 * anything in slot.events. */
static uint64_t events_bound(uint64_t events, uint64_t commit)
{
	uint64_t most = (commit - sizeof(struct tk_packet_header)) /
			TK__HEADER_COMPACT;

	return events < most ? events : most;
}

static void write_failed(struct rec_session *s, struct rec_stream *st,
			 int err)
{
	if (!s->failed)
		snprintf(s->error, sizeof(s->error), "cannot write '%s/%s': %s",
			 s->dir, st->file, strerror(err));
	s->failed = true;
}

/* Bytes a packet of @content bytes takes in the file. */
static size_t padded(const struct rec_stream *st, size_t content)
{
	return st->direct ? (content + DRAIN_ALIGN - 1) & ~(size_t)(DRAIN_ALIGN - 1)
			  : content;
}

/* O_DIRECT writes past the end of a file change its size, which ext4
 * does under an exclusive lock with a journal update, one write at a
 * time: measured here, 200-500 MB/s and 0.4-1.5 ms of CPU per MB.  Into
 * space allocated ahead, 400-700 MB/s and 0.1-0.3 ms/MB.  So the file
 * grows ahead of the writes, by half what it has (PREALLOC_MIN to
 * PREALLOC_MAX at a time), a step before the writes reach its end, and
 * is cut to its contents at the end.  The allocation is a request of the
 * drain (drain_alloc), never a wait of this loop: the journal it takes
 * waits for the disk, and the writers' rings fill meanwhile. */
#define PREALLOC_MIN (4u << 20)
#define PREALLOC_MAX (64u << 20)

struct rec_alloc {
	struct drain_req req; /* first: the drain gives it back */
	struct rec_stream *st;
};

static void alloc_done(struct drain_req *r, int res)
{
	struct rec_alloc *a = (struct rec_alloc *)r;
	struct rec_stream *st = a->st;

	st->inflight--;
	st->alloc_busy = false;
	if (res < 0)
		st->alloc = UINT64_MAX; /* writes extend the file as they go */
	free(a);
}

static void prealloc(struct rec_session *s, struct rec_stream *st, size_t len)
{
	struct rec_alloc *a;
	uint64_t step, want;

	if (!st->direct || st->alloc == UINT64_MAX || st->alloc_busy)
		return;
	step = st->alloc / 2;
	step = step < PREALLOC_MIN ? PREALLOC_MIN
	       : step > PREALLOC_MAX ? PREALLOC_MAX : step;
	want = st->off + len + step;
	if (want <= st->alloc)
		return;
	a = calloc(1, sizeof(*a));
	if (!a)
		return; /* the writes extend the file */
	while (st->alloc < want)
		st->alloc += step;
	a->st = st;
	a->req.done = alloc_done;
	a->req.fd = st->out_fd;
	a->req.fixed = -1;
	a->req.off = st->alloc;
	st->alloc_busy = true;
	st->inflight++;
	drain_alloc(&s->drain, &a->req);
}

static struct rec_write *write_get(struct rec_session *s)
{
	struct rec_write *w = s->free_writes;

	if (w)
		s->free_writes = w->next;
	else
		w = malloc(sizeof(*w));
	if (w)
		memset(w, 0, sizeof(*w));
	return w;
}

static void write_put(struct rec_session *s, struct rec_write *w)
{
	w->next = s->free_writes;
	s->free_writes = w;
}

/* Note the header of the last CTF packet of the @content bytes at @pkt,
 * about to be written: what the stream's final packet follows. */
static void note_last(struct rec_stream *st, const char *pkt, size_t content)
{
	const struct tk_packet_header *ph =
		(const struct tk_packet_header *)(pkt + last_packet(pkt, content));

	st->any_packet = true;
	st->last_cpu = ph->cpu_id;
	st->last_seq = ph->packet_seq_num;
	if (ph->timestamp_end > st->last_end)
		st->last_end = ph->timestamp_end;
	if (ph->events_discarded > st->last_discarded)
		st->last_discarded = ph->events_discarded;
}

/* Add the packet at @pkt, @content bytes of it, with @events events, to
 * the write @w: its header completed in place, the padding after it
 * zeroed.  @pkt has room for the padding (a whole chunk, or a copy as
 * large). */
static void add_packet(struct rec_stream *st, struct rec_write *w, char *pkt,
		       size_t content, uint64_t events, uint32_t chunk)
{
	size_t len = padded(st, content);

	fix_headers(st, pkt, content, len);
	note_last(st, pkt, content);
	memset(pkt + content, 0, len - content);
	w->req.iov[w->req.niov++] = (struct iovec){ pkt, len };
	w->chunk[w->count++] = chunk;
	w->events += events;
}

/* The same for a packet its writer sealed (lib/stream.c packet_seal):
 * written as it is, up to the next TK_PACKET_ALIGN, without a look
 * inside.  Its headers are the program's, as its events are. */
static void add_sealed(struct rec_write *w, char *pkt, size_t content,
		       uint64_t events, uint32_t chunk)
{
	size_t len = (content + TK_PACKET_ALIGN - 1) & ~(size_t)(TK_PACKET_ALIGN - 1);

	w->req.iov[w->req.niov++] = (struct iovec){ pkt, len };
	w->chunk[w->count++] = chunk;
	w->events += events;
}

static void packet_written(struct drain_req *r, int res);

/* Whether the CTF packets of the sealed chunk @pkt (@commit bytes of
 * events) are @st's as far as readers go: each header's magic, stream
 * class and instance the recorder's, its sizes within the chunk, the
 * last one's running to the next TK_PACKET_ALIGN.  The writer stamped
 * them from the arena's class_id, which the program can rewrite (one
 * store, and babeltrace2 read none of a trace of many processes: no
 * stream class of that id).  The same header lines note_last() reads:
 * no page the recorder does not touch anyway. */
static bool sealed_headers_ok(const struct rec_stream *st, const char *pkt,
			      uint64_t commit)
{
	uint64_t len = (commit + TK_PACKET_ALIGN - 1) & ~(uint64_t)(TK_PACKET_ALIGN - 1);
	uint64_t off = 0, next;

	for (;;) {
		const struct tk_packet_header *ph =
			(const struct tk_packet_header *)(pkt + off);
		/* the program's memory: each read once */
		uint64_t content = __atomic_load_n(&ph->content_size, __ATOMIC_RELAXED) / 8;
		uint64_t size = __atomic_load_n(&ph->packet_size, __ATOMIC_RELAXED) / 8;

		if (__atomic_load_n(&ph->magic, __ATOMIC_RELAXED) != TK_CTF_MAGIC ||
		    __atomic_load_n(&ph->stream_id, __ATOMIC_RELAXED) != st->proc->class_id ||
		    __atomic_load_n(&ph->stream_instance_id, __ATOMIC_RELAXED) != st->instance ||
		    content < sizeof(*ph) || content > size)
			return false;
		next = tk_packet_next(pkt, off, commit);
		if (!next)
			return content == commit - off && size == len - off;
		off = next;
	}
}

/* Start the write @w of st's next packets. */
static void start_write(struct rec_session *s, struct rec_stream *st,
			struct rec_write *w)
{
	size_t len = 0;

	for (unsigned i = 0; i < w->req.niov; i++)
		len += w->req.iov[i].iov_len;
	prealloc(s, st, len);
	w->st = st;
	w->req.done = packet_written;
	w->req.fd = w->spill && st->spill_fd >= 0 ? st->spill_fd : st->out_fd;
	if (w->spill)
		s->spilled += len;
	w->req.fixed = !w->copy && st->arena ? st->arena->fixed : -1;
	w->req.off = st->off;
	st->off += len;
	s->inflight_bytes += len;
	if (st->arena && !w->copy)
		st->arena->inflight_bytes += len;
	st->inflight++;
	if (st->arena && !w->copy)
		st->arena->inflight++;
	drain_write(&s->drain, &w->req);
}

static void packet_written(struct drain_req *r, int res)
{
	struct rec_write *w = (struct rec_write *)r;
	struct rec_stream *st = w->st;
	struct rec_session *s = st->session;

	if (res < 0 || r->off >= st->cut) {
		/* a failed write may have left part of its packets in
		 * the file (a short write, then a full disk): the file is
		 * cut where it began, and what follows it is lost too */
		if (res < 0)
			write_failed(s, st, -res);
		if (res < 0 && r->off < st->cut)
			st->cut = r->off;
		st->lost_write += w->events;
	} else {
		st->bytes += r->len;
		st->packets += w->count;
		st->events += w->events;
	}
	st->inflight--;
	s->inflight_bytes -= r->len;
	if (w->copy) {
		free(w->copy);
	} else if (st->arena) {
		/* the chunks are the writers' again */
		for (unsigned i = 0; i < w->count; i++)
			chunk_give_back(st->arena, st->index, w->chunk[i]);
		st->arena->inflight--;
		st->arena->inflight_bytes -= r->len;
	}
	write_put(s, w);
}

/* The header of an empty packet of @st at @ts, number @seq, saying
 * @lost events lost so far, into @at. */
static void empty_packet(const struct rec_stream *st, char *at, uint64_t ts,
			 uint64_t seq, uint64_t lost)
{
	struct tk_packet_header *ph = (struct tk_packet_header *)at;

	memset(ph, 0, sizeof(*ph));
	ph->timestamp_begin = ts;
	ph->timestamp_end = ts;
	ph->packet_seq_num = seq;
	ph->events_discarded = lost;
	ph->cpu_id = st->last_cpu;
	ph->pid = st->proc->pid;
	ph->tid = st->tid;
}

/* Write an empty packet of @st (as empty_packet() says); false if it
 * cannot be (the recording failed, no memory). */
static bool write_empty(struct rec_session *s, struct rec_stream *st, uint64_t ts,
			uint64_t seq, uint64_t lost)
{
	struct rec_write *w;
	char *copy;

	if (s->failed || (st->out_fd < 0 && open_output(s, st) < 0) ||
	    posix_memalign((void **)&copy, DRAIN_ALIGN, DRAIN_ALIGN))
		return false;
	if (!(w = write_get(s))) {
		free(copy);
		return false;
	}
	empty_packet(st, copy, ts, seq, lost);
	w->copy = copy;
	add_packet(st, w, copy, sizeof(struct tk_packet_header), 0, 0);
	start_write(s, st, w);
	return true;
}

/* Before @st's first packet @pkt, when it already counts losses (events
 * too large before it, or packets overwritten): an empty packet that
 * counts none, numbered just before it, so that readers can count them
 * (babeltrace2 gives no number for losses before a stream's first
 * packet).  Not when @pkt is number 0 (lost before the first event). */
static void lead_in(struct rec_session *s, struct rec_stream *st, const char *pkt)
{
	const struct tk_packet_header *ph = (const struct tk_packet_header *)pkt;

	if (!st->any_packet && ph->events_discarded && ph->packet_seq_num)
		write_empty(s, st, ph->timestamp_begin, ph->packet_seq_num - 1, 0);
}

/* Whether more writes from @a may start while recording (IN_FLIGHT_MAX). */
static bool may_write(const struct rec_session *s, const struct rec_arena *a)
{
	return s->inflight_bytes < IN_FLIGHT_MAX &&
	       a->inflight_bytes < (uint64_t)a->chunks * a->chunk_size / 2;
}

/* Packets waiting in a stream's ring from which, with the writes in
 * flight at their bound, the rest goes through the page cache: half the
 * ring.  The disk is behind (a flood faster than it, or a virtual disk
 * whose host stalls it for 100-350 ms), and the writer would soon find
 * its ring full and lose its events.  A buffered write copies (~0.3 ms
 * of CPU per MB here) into memory the kernel has, and gives the chunks
 * back as soon as it is done, where an O_DIRECT write holds them until
 * the disk took them. */
static uint64_t spill_at(const struct rec_arena *a)
{
	return a->slots / 2 ? a->slots / 2 : 1;
}

/* @st's file opened again without O_DIRECT, for spilled writes (an
 * O_DIRECT one only: the others are buffered already).  Returns false
 * if it cannot be. */
static bool spill_open(struct rec_session *s, struct rec_stream *st)
{
	char *path;

	if (!st->direct || st->spill_fd >= 0)
		return true;
	if (asprintf(&path, "%s/%s", s->dir, st->file) < 0)
		return false;
	st->spill_fd = open(path, O_WRONLY | O_CLOEXEC);
	free(path);
	return st->spill_fd >= 0;
}

/* Submit the writes of the packets closed since the last look, those
 * that follow each other in one write: at most one ring's worth, whatever
 * the counters say; a batch at least, unless @force; while recording
 * (@capped), as long as may_write() says, or through the page cache from
 * spill_at() packets waiting on. */
static unsigned drain_stream(struct rec_session *s, struct rec_stream *st,
			     bool force, bool capped)
{
	struct rec_arena *a = st->arena;
	struct tk_rb_stream *d = st->desc;
	struct rec_write *w = NULL;
	uint64_t produced;
	unsigned n = 0;
	bool spill = false;

	if (st->done || !a || a->mode != TK_RB_DISCARD)
		return 0;
	/* pairs with the RELEASE store of produced in
	 * lib/stream.c:packet_close(): the slots below it are complete */
	produced = __atomic_load_n(&a->produced[st->index], __ATOMIC_ACQUIRE);
	if (produced < st->submitted || produced - st->submitted > a->slots) {
		stream_corrupt(st, "its produced counter is out of range");
		return 0;
	}
	if (produced == st->submitted ||
	    (!force && produced - st->submitted < a->wake_batch))
		return 0;
	if (st->out_fd < 0 && open_output(s, st) < 0)
		return 0;
	while (st->submitted < produced && !s->failed &&
	       (w || drain_room(&s->drain))) {
		struct tk_rb_slot *sl = &d->slot[st->submitted % a->slots];

		/* the slot is below produced: ordered by the ACQUIRE load
		 * of produced above, as its chunk and events */
		uint64_t commit = __atomic_load_n(&sl->commit, __ATOMIC_RELAXED);
		uint32_t chunk = __atomic_load_n(&sl->chunk, __ATOMIC_RELAXED);
		uint64_t events = __atomic_load_n(&sl->events, __ATOMIC_RELAXED);
		bool sealed = __atomic_load_n(&sl->sealed, __ATOMIC_RELAXED) == 1;
		uint32_t size = 0;
		char *pkt = chunk_addr(a, st->index, chunk, &size);

		if (!w && !spill && capped && !may_write(s, a)) {
			if (produced - st->submitted < spill_at(a) ||
			    !spill_open(s, st))
				break;
			spill = true;
		}
		if (commit < sizeof(struct tk_packet_header) || commit > size ||
		    !pkt) {
			stream_corrupt(st, "a packet's size or place is out of range");
			break;
		}
		st->submitted++;
		/* pairs with the ACQUIRE load of consumed in
		 * lib/stream.c:packet_open(): we have read the slot */
		__atomic_store_n(&d->consumed, st->submitted, __ATOMIC_RELEASE);
		a->gave_back = true;
		events = events_bound(events, commit);
		if (!events) { /* nothing to write: the chunk back at once */
			chunk_give_back(a, st->index, chunk);
			continue;
		}
		if (!w && !(w = write_get(s)))
			break;
		w->spill = spill;
		lead_in(s, st, pkt);
		if (sealed && !sealed_headers_ok(st, pkt, commit)) {
			/* completed as an unsealed one: the recorder's
			 * class, instance and sizes; and the class back
			 * where the writers take it from */
			sealed = false;
			st->restamped++;
			__atomic_store_n(&a->hdr->class_id, st->proc->class_id,
					 __ATOMIC_RELAXED);
		}
		if (sealed) {
			add_sealed(w, pkt, (size_t)commit, events, chunk);
			note_last(st, pkt, (size_t)commit);
		} else
			add_packet(st, w, pkt, (size_t)commit, events, chunk);
		n++;
		if (w->req.niov == DRAIN_IOV_MAX) {
			start_write(s, st, w);
			w = NULL;
		}
	}
	if (w)
		start_write(s, st, w);
	return n;
}

/* The whole events of the CTF packet at @start in @pkt, which ends at
 * @end: walk them with the process's descriptors, stop at the first that
 * does not decode.  Returns the bytes they cover and counts them. */
static uint64_t whole_events_in(const struct rec_stream *st, const char *pkt,
				uint64_t start, uint64_t end, uint64_t *count)
{
	const struct rec_process *p = st->proc;
	struct tk_value vals[256];
	uint64_t off = start + sizeof(struct tk_packet_header);
	uint64_t last = ((const struct tk_packet_header *)(pkt + start))->timestamp_begin;
	uint64_t commit = end;

	while (commit - off >= TK__HEADER_COMPACT) {
		const struct tk_event_info *ev;
		unsigned hsize;
		uint16_t id;
		uint64_t ts;
		long n;

		hsize = tk_event_header_decode(pkt + off, commit - off, last, &id,
					       &ts);
		if (!hsize)
			break;
		/* by its id: a scan of a process's events (65,534 announced)
		 * for each of the 6,545 events of each open packet held the
		 * recorder 0.6 s a stream at the end */
		ev = session_event(p, id);
		if (!ev || ev->nfields > 256)
			break;
		n = tk_record_decode(ev, pkt + off + hsize, commit - off - hsize,
				     vals);
		if (n < 0)
			break;
		off += hsize + (uint64_t)n;
		last = ts;
		(*count)++;
	}
	return off;
}

/* The whole events of an open chunk, in each of its CTF packets: the
 * bytes they cover, and their count. */
static uint64_t whole_events_of(const struct rec_stream *st, const char *pkt,
				uint64_t commit, uint64_t *count)
{
	uint64_t off = 0, next, end;

	*count = 0;
	for (;;) {
		const struct tk_packet_header *ph =
			(const struct tk_packet_header *)(pkt + off);
		uint64_t content = ph->content_size / 8;

		next = tk_packet_next(pkt, off, commit);
		if (!next || content < sizeof(*ph) || content > next - off)
			return whole_events_in(st, pkt, off, commit, count);
		end = whole_events_in(st, pkt, off, off + content, count);
		if (end < off + content)
			return end;
		off = next;
	}
}

/* The copy of a seqlock's data: the writer may be rewriting it
 * meanwhile, and write_copy() keeps the copy only if the slot's number
 * did not change.  A function of its own, never inlined, so that
 * tests/unit/test-ringbuf.c can tell ThreadSanitizer that this one copy
 * races by design, and no other access of write_copy(). */
static __attribute__((noinline)) void seqlock_copy(void *dst, const void *src,
						  size_t len)
{
	memcpy(dst, src, len);
}

/* Copy packet @seq out of @st's ring and write it, if it is still there
 * (overwrite mode, or an open packet).  With @give, its chunk goes back to
 * the pool afterwards (the thread has left). */
static void write_copy(struct rec_session *s, struct rec_stream *st,
		       uint64_t seq, bool open, bool give)
{
	struct rec_arena *a = st->arena;
	struct tk_rb_slot *sl = &st->desc->slot[seq % a->slots];
	uint64_t commit, count, end;
	struct tk_packet_header *ph;
	struct rec_write *w;
	uint32_t chunk, events, size = 0;
	char *copy, *pkt;

	/* Seqlock: pairs with the RELEASE store of seq in
	 * lib/stream.c:packet_open() (the slot's chunk and commit are the
	 * packet's), and as below with reuse_oldest() */
	if (__atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE) != seq + 1)
		return;
	/* pairs with the RELEASE stores of commit in
	 * include/tracekit/runtime.h:tk__commit() and lib/stream.c:
	 * packet_open(), packet_close(): the bytes below it are whole
	 * events */
	commit = __atomic_load_n(&sl->commit, __ATOMIC_ACQUIRE);
	/* ordered by the ACQUIRE loads of seq and commit above */
	chunk = __atomic_load_n(&sl->chunk, __ATOMIC_RELAXED);
	events = __atomic_load_n(&sl->events, __ATOMIC_RELAXED);
	pkt = chunk_addr(a, st->index, chunk, &size);
	if (commit < sizeof(*ph) || commit > size || !pkt)
		return;
	if (posix_memalign((void **)&copy, DRAIN_ALIGN, a->chunk_size))
		return;
	/* The header: the writer may be closing the packet (packet_close()
	 * fills it).  The events below commit: in discard mode no writer
	 * touches them again before the chunk comes back from us; in
	 * overwrite mode reuse_oldest() may hand it to the next packet. */
	seqlock_copy(copy, pkt, sizeof(*ph));
	if (a->mode == TK_RB_OVERWRITE)
		seqlock_copy(copy + sizeof(*ph), pkt + sizeof(*ph),
			     commit - sizeof(*ph));
	else
		memcpy(copy + sizeof(*ph), pkt + sizeof(*ph),
		       commit - sizeof(*ph));
	/* pairs with the RELEASE fence in lib/stream.c:reuse_oldest(): if
	 * the copy saw a byte written after it, the load below sees the
	 * number it took away */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&sl->seq, __ATOMIC_RELAXED) != seq + 1) {
		free(copy); /* overwritten while we copied */
		return;
	}
	if (give)
		chunk_give_back(a, st->index, chunk);
	if (open) {
		end = whole_events_of(st, copy, commit, &count);
		ph = (struct tk_packet_header *)(copy + last_packet(copy, end));
		ph->timestamp_end = clock_read(s->clock.tsc);
		ph->events_discarded = stream_lost(st);
	} else {
		end = commit;
		count = events_bound(events, commit);
	}
	if (count && (s->failed || (st->out_fd < 0 && open_output(s, st) < 0) ||
		      !(w = write_get(s)))) {
		/* the recording failed (disk full, no descriptor): what
		 * it could not write is counted lost, not dropped */
		st->lost_write += count;
		count = 0;
		/* in the manifest, with its losses (a file that is not
		 * there holds nothing: tk_stream_open()) */
		if (!st->file && asprintf(&st->file, "user/%u-%u", st->proc->pid,
					  st->tid) < 0)
			st->file = NULL;
	}
	if (!count) {
		free(copy);
		return;
	}
	w->copy = copy;
	lead_in(s, st, copy);
	add_packet(st, w, copy, (size_t)end, count, 0);
	start_write(s, st, w);
}

/* End @st with a packet of no event whose events_discarded counts what
 * its thread lost after its last packet, as LTTng ends its streams: CTF
 * 1.8's events_discarded is a running count, which readers take as lost
 * between a packet and the one before, so without it babeltrace2 and
 * `convert` would never see those losses.  A stream that has no packet
 * (its thread lost every event) gets one before it that counts none, as
 * lead_in() says.  Nothing when the last packet counts them all. */
static void write_final(struct rec_session *s, struct rec_stream *st)
{
	uint64_t lost = stream_lost(st) + st->lost_write, now;

	if (lost <= st->last_discarded || st->corrupt)
		return;
	now = clock_read(s->clock.tsc);
	if (now < st->last_end)
		now = st->last_end;
	if ((!st->any_packet && !write_empty(s, st, now, 0, 0)) ||
	    !write_empty(s, st, now, st->last_seq + 1, lost)) {
		/* in the manifest, with its losses, all the same */
		if (!st->file && asprintf(&st->file, "user/%u-%u", st->proc->pid,
					  st->tid) < 0)
			st->file = NULL;
	}
}

/* Write what @st holds that was not written yet: closed packets, then the
 * open one (or, in overwrite mode, the newest packets of the ring).  With
 * @give (its thread has left) the chunks go back to the pool. */
static void flush_stream(struct rec_session *s, struct rec_stream *st,
			 bool give)
{
	struct rec_arena *a = st->arena;
	uint64_t produced, first;

	if (st->done || !a)
		return;
	/* closed packets first (a few rings' worth at most: the program was
	 * told to stop, or is gone) */
	for (unsigned k = 0; k < 4 && !st->done && !s->failed; k++) {
		if (!drain_room(&s->drain))
			drain_wait_all(&s->drain);
		if (!drain_stream(s, st, true, false))
			break;
		drain_submit(&s->drain);
	}
	if (st->done)
		return;
	/* pairs with the RELEASE store of produced in
	 * lib/stream.c:packet_close() */
	produced = __atomic_load_n(&a->produced[st->index], __ATOMIC_ACQUIRE);
	/* The ring holds packets produced - slots .. produced: the oldest
	 * is gone if the writer has opened `produced` (write_copy checks). */
	first = st->submitted;
	if (a->mode == TK_RB_OVERWRITE)
		first = produced > a->slots ? produced - a->slots : 0;
	/* (UINT64_MAX: the loop below would never end) */
	if (produced < first || produced - first > a->slots || produced >= COUNT_MAX) {
		stream_corrupt(st, "its produced counter is out of range");
		return;
	}
	/* (once the recording has failed, write_copy() counts them) */
	for (uint64_t seq = first; seq <= produced; seq++) {
		if (!s->failed && !drain_room(&s->drain))
			drain_wait_all(&s->drain);
		write_copy(s, st, seq, seq == produced, give);
	}
	if (!s->failed && !drain_room(&s->drain))
		drain_wait_all(&s->drain);
	write_final(s, st);
	drain_submit(&s->drain);
	st->submitted = produced + 1;
	st->done = true;
}

/* The file of a stream that is done: cut to its contents and closed
 * (its writes have completed; its allocation too, waited for here: one
 * that completed after the cut would make the file its size again). */
static void close_output(struct rec_session *s, struct rec_stream *st)
{
	uint64_t end;

	while (st->alloc_busy && s->drain.inflight)
		drain_wait_all(&s->drain);
	end = st->cut < st->off ? st->cut : st->off;
	if (st->out_fd < 0)
		return;
	if ((st->alloc > end || st->cut != UINT64_MAX) &&
	    ftruncate(st->out_fd, (off_t)end) < 0)
		write_failed(s, st, errno);
	close(st->out_fd);
	st->out_fd = -1;
	if (st->spill_fd >= 0)
		close(st->spill_fd);
	st->spill_fd = -1;
}

/* The name the thread wrote when it ended (lib/stream.c
 * stream_name_final) into @out, "" if none yet. */
static void desc_last_name(const struct tk_rb_stream *d, char out[17])
{
	uint64_t name[2] = {
		__atomic_load_n(&d->comm_last[0], __ATOMIC_RELAXED),
		__atomic_load_n(&d->comm_last[1], __ATOMIC_RELAXED),
	};

	memcpy(out, name, 16);
	out[16] = '\0';
	tk_visible_name(out); /* the program's bytes */
}

/* A name written when the thread ended wins over what /proc last said;
 * none (the thread may have died without writing it) says nothing. */
void consumer_header_name(struct rec_stream *st)
{
	char comm[sizeof(st->comm)];

	if (!st->desc)
		return;
	desc_last_name(st->desc, comm);
	if (comm[0] && strcmp(comm, st->made_comm))
		memcpy(st->comm, comm, sizeof(comm));
}

/* @st's thread has left and everything of it is written: keep its counts,
 * close its file, offer its descriptor to the next thread. */
static void stream_recycle(struct rec_session *s, struct rec_stream *st)
{
	struct rec_arena *a = st->arena;
	struct tk_rb_stream *d = st->desc;

	read_lost(st);
	/* its name when it left (lib/stream.c stream_finish): a thread
	 * renamed after its first event goes by its last name */
	{
		char comm[sizeof(st->comm)];

		desc_last_name(d, comm);
		if (comm[0])
			memcpy(st->comm, comm, sizeof(comm));
	}
	close_output(s, st);
	a->cur[st->index] = NULL;
	st->arena = NULL;
	st->desc = NULL;
	st->done = true;
	memset(d, 0, a->stream_size);
	a->instance[st->index] = a->next_instance++;
	d->instance = a->instance[st->index];
	__atomic_store_n(&a->produced[st->index], 0, __ATOMIC_RELAXED);
	/* the RELEASE store of tail in ring_put() publishes both to the
	 * thread that takes the descriptor (lib/arena.h:tk_ring_take()) */
	ring_put(a, &a->hdr->reused_streams, a->recycle_ring, &a->recycle_tail,
		 st->index);
}

/* Whether a writer has taken a chunk of the pool: a thread on its way
 * past its first packet (which goes to its stream's inline page).  Values
 * only: a program that scribbles on them gets its pool grown, no more. */
static bool pool_touched(const struct rec_arena *a)
{
	return __atomic_load_n(&a->hdr->fresh, __ATOMIC_RELAXED) > a->chunks ||
	       chunks_free(a) < a->chunks;
}

/* Whether @a's pool should grow: the process has begun writing into it
 * (the first growth), or a writer found none free since the last look,
 * or an eighth of it is left (what the writers' rings and the writes in
 * flight, IN_FLIGHT_MAX, hold in a flood leaves more: a pool grown then
 * would only hold writes that queue); and it is not growing already. */
static bool wants_growth(const struct rec_arena *a)
{
	if (a->target > a->chunks || a->chunks >= a->chunks_max)
		return false;
	if (!a->writing)
		return pool_touched(a);
	return chunks_free(a) <= a->chunks / 8 ||
	       __atomic_load_n(&a->hdr->starved, __ATOMIC_RELAXED);
}

/* The process begins writing into its pool: ask the maker for -b of it
 * (rec_options.pool_start), ahead of the writers, which have only the few
 * chunks the process made at the start (a forked child: as much again
 * as it has; most write little before they exec or exit).  Later, the
 * pool runs low: ask for as much again as it has.  Making memory is cheap for the maker
 * (~0.4 ms of CPU per MiB on the VM this was measured on) and fast enough
 * for a burst; what costs is the first touch of each new page by the
 * writers (~2 ms per MiB there, hidden in their stores), so the pool
 * grows no more than a burst takes. */
static void ask_growth(struct rec_session *s, struct rec_arena *a)
{
	uint32_t to;

	if (!wants_growth(a))
		return;
	__atomic_store_n(&a->hdr->starved, 0, __ATOMIC_RELAXED);
	to = a->chunks_max - a->chunks < a->chunks ? a->chunks_max
						    : 2 * a->chunks;
	if (!a->writing) {
		a->writing = true;
		if (a->start_chunks > to)
			to = a->start_chunks;
	}
	maker_ask(s, a, to);
}

/* Writers waiting for space (--block): wake them if we gave some back.
 * The FUTEX_WAKE pairs with the FUTEX_WAIT in lib/stream.c:wait_space(). */
static void wake_blocked(struct rec_arena *a)
{
	if (!a->gave_back)
		return;
	a->gave_back = false;
	/* between the stores that gave the space back (consumed, tail) and
	 * the load of waiters: a store followed by a load of another
	 * variable may pass it otherwise (x86 does), and a writer that has
	 * just counted itself in and missed the space would wait; pairs
	 * with the SEQ_CST fence after the increment of waiters in
	 * lib/stream.c:wait_space() */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&a->hdr->waiters, __ATOMIC_SEQ_CST))
		return;
	/* pairs with the ACQUIRE load of space in lib/stream.c:wait_space() */
	__atomic_fetch_add(&a->hdr->space, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &a->hdr->space, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* One look at every stream of @p's arena: new streams, closed packets,
 * threads that left. */
/* Few free chunks: partial batches are written too, to get theirs back. */
static bool pool_low(const struct rec_arena *a)
{
	uint64_t free = chunks_free(a);

	return free < 2 * TK_POOL_LOW || free <= a->chunks / 4;
}

static unsigned drain_process(struct rec_session *s, struct rec_process *p)
{
	struct rec_arena *a = p->arena;
	unsigned n = 0;
	bool force;

	if (!a || a->corrupt)
		return 0;
	touch_ahead(a);
	offer_made(s, p, a);
	force = s->lazy_due || pool_low(a);
	for (uint32_t i = 0; i < a->touched && !s->failed; i++) {
		struct rec_stream *st = a->cur[i];
		/* pairs with the RELEASE stores of the state in
		 * lib/stream.c:stream_open() and stream_finish() */
		uint32_t state = __atomic_load_n(&desc_at(a, i)->state,
						 __ATOMIC_ACQUIRE);

		if (state == TK_RB_FREE && !st)
			continue;
		if (!st && !(st = stream_new(s, p, a, i)))
			continue;
		n += drain_stream(s, st, force || state == TK_RB_CLOSED, true);
		if (state != TK_RB_CLOSED || st->inflight)
			continue;
		/* (the ACQUIRE load of produced pairs as in drain_stream()) */
		if (a->mode == TK_RB_OVERWRITE && !st->done)
			flush_stream(s, st, true);
		else if (a->mode == TK_RB_DISCARD && !st->done &&
			 st->submitted != __atomic_load_n(&a->produced[i],
							  __ATOMIC_ACQUIRE))
			continue;
		if (!st->done) {
			/* discard mode, every packet written: its end */
			if (!drain_room(&s->drain))
				continue;
			write_final(s, st);
			st->done = true;
		}
		if (!st->inflight)
			stream_recycle(s, st);
	}
	ask_growth(s, a);
	wake_blocked(a);
	return n;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

unsigned consumer_drain(struct rec_session *s)
{
	unsigned n = drain_reap(&s->drain);
	uint64_t now = now_us();

	/* what waits in partial batches goes out this often too */
	s->lazy_due = now >= s->lazy_next;
	for (unsigned i = 0; i < s->nprocs; i++)
		n += drain_process(s, s->procs[i]);
	if (s->lazy_due)
		s->lazy_next = now + CONSUMER_LAZY_US;
	drain_submit(&s->drain);
	return n;
}

static void set_sleeping(struct rec_session *s, uint32_t v)
{
	for (unsigned i = 0; i < s->nprocs; i++) {
		struct rec_arena *a = s->procs[i]->arena;

		if (a)
			__atomic_store_n(&a->hdr->sleeping, v, __ATOMIC_RELAXED);
	}
}

/* Whether @a has something for us: a new stream, a batch of closed
 * packets not taken (discard mode; any, when the pool runs low), a thread
 * that left, a pool to grow.  *partial: closed packets wait, fewer than a
 * batch.  *reap: writes that complete should wake us, since what they
 * give back is wanted soon (the pool runs low, writers wait for space
 * with --block, a stream that left waits for them to be recycled);
 * otherwise they are reaped at the next wake-up. */
static bool arena_has_work(const struct rec_session *s, struct rec_arena *a,
			   bool *partial, bool *reap)
{
	bool low = pool_low(a), capped = !may_write(s, a);

	if ((low || __atomic_load_n(&a->hdr->waiters, __ATOMIC_RELAXED)) &&
	    a->inflight)
		*reap = true;

	/* the ACQUIRE loads here pair as in offer_made() (made),
	 * drain_process() (state) and drain_stream() (produced) */
	if (__atomic_load_n(&a->made, __ATOMIC_ACQUIRE) > a->told ||
	    wants_growth(a))
		return true;
	for (uint32_t i = 0; i < a->touched; i++) {
		const struct rec_stream *st = a->cur[i];
		uint32_t state = __atomic_load_n(&desc_at(a, i)->state,
						 __ATOMIC_ACQUIRE);

		if (!st) {
			if (state != TK_RB_FREE)
				return true;
			continue;
		}
		if (st->done)
			continue;
		if (a->mode == TK_RB_DISCARD) {
			uint64_t pending = __atomic_load_n(&a->produced[i],
							   __ATOMIC_ACQUIRE) -
					   st->submitted;

			if (pending >= spill_at(a) && capped)
				return true; /* spilled (drain_stream) */
			else if (pending && capped)
				*reap = true; /* for room to write them */
			else if (pending >= a->wake_batch || (pending && low))
				return true;
			else if (pending)
				*partial = true;
		}
		if (state == TK_RB_CLOSED && !st->inflight)
			return true;
		if (state == TK_RB_CLOSED)
			*reap = true;
	}
	return false;
}

/* Register the pools that grew since their last registration
 * (pool_register), when this loop has nothing else to do and the pool
 * has room for what the writers make meanwhile: pinning the pages takes
 * the ring's lock, and ~0.4 ms per MiB here (28 ms for a pool grown to
 * 64 MiB, in which two writers of 4 M events/s filled their rings and
 * lost 85,000 events).  Until then, writes from the new chunks pin their
 * pages each. */
static void register_when_idle(struct rec_session *s)
{
	for (unsigned i = 0; i < s->nprocs; i++) {
		struct rec_arena *a = s->procs[i]->arena;

		if (a && !a->corrupt && a->fixed_chunks != UINT32_MAX &&
		    a->chunks > a->fixed_chunks && !pool_low(a) &&
		    chunks_free(a) >= a->chunks / 2)
			pool_register(s, a);
	}
}

int consumer_sleep_begin(struct rec_session *s, int timeout_us)
{
	bool partial = false, reap = false;
	uint64_t now;

	register_when_idle(s);
	set_sleeping(s, 1);
	/* pairs with the SEQ_CST fence in lib/stream.c:wake_recorder(): either
	 * we see what it did, or it sees sleeping and wakes us */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < s->nprocs; i++) {
		struct rec_arena *a = s->procs[i]->arena;

		if (a && arena_has_work(s, a, &partial, &reap)) {
			set_sleeping(s, 0);
			return 0;
		}
	}
	s->reap_wakes = reap;
	if (!partial)
		return timeout_us;
	/* partial batches: out at the next lazy time, at the latest */
	now = now_us();
	if (now >= s->lazy_next) {
		set_sleeping(s, 0);
		return 0;
	}
	return s->lazy_next - now < (uint64_t)timeout_us ? (int)(s->lazy_next - now)
							 : timeout_us;
}

void consumer_sleep_end(struct rec_session *s)
{
	uint64_t n;

	set_sleeping(s, 0);
	if (read(s->wake_fd, &n, sizeof(n)) < 0) {
		/* nothing was signalled (EAGAIN) */
	}
}

/* Whether writes of @a's streams have not completed. */
static bool writes_pending(const struct rec_arena *a)
{
	for (uint32_t i = 0; i < a->touched; i++)
		if (a->cur[i] && a->cur[i]->inflight)
			return true;
	return a->inflight;
}

/* Write out every stream of @p, wait for the writes, let the memory go. */
static void process_flush(struct rec_session *s, struct rec_process *p)
{
	struct rec_arena *a = p->arena;

	if (!a)
		return;
	drain_process(s, p); /* streams opened since the last look */
	for (uint32_t i = 0; i < a->touched; i++)
		if (a->cur[i])
			flush_stream(s, a->cur[i], false);
	/* the writes from its memory, and those of copies (the packets that
	 * end streams) before their files are closed */
	while (writes_pending(a)) {
		drain_wait_all(&s->drain);
		drain_reap(&s->drain);
	}
	for (uint32_t i = 0; i < a->touched; i++) {
		struct rec_stream *st = a->cur[i];

		if (!st)
			continue;
		read_lost(st);
		/* the buffers handed over at stop come after the last look */
		consumer_header_name(st);
		close_output(s, st);
		st->arena = NULL;
		st->desc = NULL;
	}
	p->lost_nobuf += bounded(__atomic_load_n(&a->hdr->lost_nobuf,
						  __ATOMIC_RELAXED));
	p->arena = NULL;
	arena_unmap(s, a);
}

void consumer_process_gone(struct rec_session *s, struct rec_process *p)
{
	process_flush(s, p);
}

void consumer_process_free(struct rec_session *s, struct rec_process *p)
{
	if (!p->arena)
		return;
	for (uint32_t i = 0; i < p->arena->touched; i++)
		if (p->arena->cur[i]) {
			p->arena->cur[i]->arena = NULL;
			p->arena->cur[i]->desc = NULL;
		}
	arena_unmap(s, p->arena);
	p->arena = NULL;
}

uint64_t consumer_wakeups(const struct rec_session *s)
{
	uint64_t n = s->wakeups_gone;

	for (unsigned i = 0; i < s->nprocs; i++)
		if (s->procs[i]->arena)
			n += bounded(__atomic_load_n(&s->procs[i]->arena->hdr->wakeups,
						     __ATOMIC_RELAXED));
	return n;
}

uint64_t consumer_lost_nobuf(const struct rec_process *p)
{
	uint64_t n = p->lost_nobuf + bounded(p->nobuf_msg_lost);

	if (p->arena)
		n += bounded(__atomic_load_n(&p->arena->hdr->lost_nobuf,
					     __ATOMIC_RELAXED));
	return n;
}

void consumer_flush_all(struct rec_session *s)
{
	for (unsigned i = 0; i < s->nprocs; i++)
		process_flush(s, s->procs[i]);
	drain_wait_all(&s->drain);
	drain_reap(&s->drain);
	for (unsigned i = 0; i < s->nstreams; i++) {
		struct rec_stream *st = s->streams[i];

		close_output(s, st);
	}
	/* the data went with O_DIRECT; the sizes and extents need the
	 * journal: one sync of the file system for every file */
	if (s->nstreams) {
		int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd < 0 || syncfs(dfd) < 0) {
			if (!s->failed)
				snprintf(s->error, sizeof(s->error),
					 "cannot sync '%s': %s", s->dir,
					 strerror(errno));
			s->failed = true;
		}
		if (dfd >= 0)
			close(dfd);
	}
}

/* The events committed so far in the open packet of slot @sl, packet
 * @seq (discard mode, the live line): walked in the shared memory, where
 * no writer changes the bytes below commit. */
static uint64_t open_events(const struct rec_stream *st,
			    const struct tk_rb_slot *sl, uint64_t seq)
{
	uint64_t commit, count = 0;
	uint32_t size = 0;
	const char *pkt;

	/* pairs with the RELEASE store of seq in lib/stream.c:packet_open():
	 * the slot's chunk is this packet's */
	if (__atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE) != seq + 1)
		return 0;
	/* pairs with the RELEASE store of commit in
	 * include/tracekit/runtime.h:tk__commit(): the bytes below are
	 * whole events */
	commit = __atomic_load_n(&sl->commit, __ATOMIC_ACQUIRE);
	pkt = chunk_addr(st->arena, st->index,
			 __atomic_load_n(&sl->chunk, __ATOMIC_RELAXED), &size);
	if (pkt && commit >= sizeof(struct tk_packet_header) && commit <= size)
		whole_events_of(st, pkt, commit, &count);
	return count;
}

/* What stream @st has so far, for the live line: events written, in
 * closed packets not yet written and in the open one, bytes written and
 * committed in its ring (the open packet too), and lost; everything
 * read from the shared memory bounded, nothing changed. */
void consumer_stream_progress(const struct rec_stream *st, uint64_t *events,
			      uint64_t *bytes, uint64_t *lost)
{
	const struct rec_arena *a = st->arena;
	const struct tk_rb_stream *d = st->desc;
	uint64_t produced;

	*events += st->events;
	*bytes += st->bytes;
	*lost += st->lost_write;
	if (st->done || !a || !d) {
		*lost += st->lost_full + st->lost_nested + st->lost_big +
			 st->lost_overwritten;
		return;
	}
	*lost += bounded(__atomic_load_n(&d->lost_full, __ATOMIC_RELAXED)) +
		 bounded(__atomic_load_n(&d->lost_nested, __ATOMIC_RELAXED)) +
		 bounded(__atomic_load_n(&d->lost_big, __ATOMIC_RELAXED)) +
		 bounded(__atomic_load_n(&d->lost_overwritten, __ATOMIC_RELAXED));
	/* pairs with the RELEASE store of produced in
	 * lib/stream.c:packet_close() */
	produced = __atomic_load_n(&a->produced[st->index], __ATOMIC_ACQUIRE);
	if (a->mode != TK_RB_DISCARD || produced < st->submitted ||
	    produced - st->submitted > a->slots)
		return;
	for (uint64_t seq = st->submitted; seq <= produced; seq++) {
		const struct tk_rb_slot *sl = &d->slot[seq % a->slots];
		uint64_t commit = __atomic_load_n(&sl->commit, __ATOMIC_RELAXED);

		if (__atomic_load_n(&sl->seq, __ATOMIC_RELAXED) != seq + 1 ||
		    commit > a->chunk_size || commit < sizeof(struct tk_packet_header))
			continue;
		*bytes += commit;
		if (seq < produced)
			*events += events_bound(
				__atomic_load_n(&sl->events, __ATOMIC_RELAXED),
				commit);
		else
			*events += open_events(st, sl, seq);
	}
}

void consumer_stream_stats(const struct rec_stream *st,
			   struct tk_trace_stream *out)
{
	memset(out, 0, sizeof(*out));
	out->file = st->file;
	out->pid = st->proc->pid;
	out->tid = st->tid;
	out->class_id = st->proc->class_id;
	memcpy(out->comm, st->comm, sizeof(out->comm));
	out->instance = st->instance;
	out->events = st->events;
	out->bytes = st->bytes;
	out->packets = st->packets;
	out->lost_full = st->lost_full + st->lost_write;
	out->lost_nested = st->lost_nested;
	out->lost_big = st->lost_big;
	out->lost_overwritten = st->lost_overwritten;
}
