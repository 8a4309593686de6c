/* SPDX-License-Identifier: MIT */
/*
 * stream.c - per-thread streams: the slow path of the writer.
 *
 * The fast path (runtime.h) only ever writes inside the current packet.
 * Everything else happens here, on the thread that fires the event:
 *
 *   - first event of a thread in a session: take a stream descriptor and
 *     a chunk from the process's arena (arena.h: made ahead by the
 *     control thread; a compare-and-swap each, no system call, no
 *     allocation, no lock: safe in a signal handler that interrupted
 *     malloc);
 *   - packet full: close it (CTF packet context, slot commit, produced),
 *     wake the recorder if it sleeps, open the next one with a free chunk
 *     or, with none in discard mode, count the event as lost (or, with
 *     --block, wait for the recorder a while);
 *   - thread moved to another CPU: end the CTF packet where it is and
 *     begin one for the new CPU in the same chunk (packet_split);
 *   - session changed (tk_session_gen moved): close the packet, leave the
 *     stream, start again in the new session's arena;
 *   - thread exit: close the packet and mark the stream closed;
 *   - fork: the child forgets the parent's arenas without touching them.
 *
 * The layout is in ringbuf-layout.h, the barriers and what they pair with
 * in docs/design-notes.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "arena.h"

TK_EXPORT __thread struct tk__thread tk__thread
	__attribute__((tls_model("initial-exec")));

uint64_t tk_session_gen = 1;
uint32_t tk_clock_mono;
/* Held by a thread that exits and by whoever walks the streams to send
 * their threads to the slow path: a walker never writes into the TLS of a
 * thread that is gone. */
static pthread_mutex_t exit_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
/* Events lost without a look at the shared memory after one found no
 * room (discard mode, no --block): in a flood each look is a cache miss
 * on what the recorder just wrote, and half the events are lost there;
 * 63 events are ~1 us of a writer's time. */
#define LOST_BACKOFF 63
/* reap_retired_locked: how long it waits for threads in arena_hold */
#define REAP_WAIT_YIELDS 10000
static struct tk_arena_map *arena_cur; /* the session's, or NULL */
static struct tk_arena_map *retired;   /* past sessions', under exit_lock */
static uint64_t lost_nobuf;            /* events lost with no arena, this session */
static uint32_t opening;               /* threads in arena_hold */

static struct tk_rb_slot *slot_of(struct tk_wstream *w, uint64_t seq)
{
	return &w->desc->slot[seq % w->arena->geom.slots];
}

/* Count @n more events lost in the stream's counter @c.  Only this
 * thread writes it (an event of a signal handler never gets this far),
 * but the recorder reads it at any time: relaxed atomic accesses, no
 * read-modify-write. */
static void count_lost(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static uint64_t lost_so_far(struct tk_wstream *w)
{
	return w->lost + __atomic_load_n(&w->desc->lost_nested, __ATOMIC_RELAXED);
}

/* A packet was just closed (or a stream): if the recorder sleeps and
 * should not (@worth: a batch of packets waits, the pool runs low, the
 * stream closed), wake it, once.  The SEQ_CST fence pairs with the
 * SEQ_CST fence in cli/consumer.c:consumer_sleep_begin(), between its
 * store of sleeping and its loads of produced: either it sees what we
 * did or we see it sleeping. */
static void wake_recorder(struct tk_arena *h, bool worth)
{
	static const uint64_t one = 1;
	int fd;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!worth || !__atomic_load_n(&h->sleeping, __ATOMIC_RELAXED) ||
	    !__atomic_exchange_n(&h->sleeping, 0, __ATOMIC_RELAXED))
		return;
	__atomic_fetch_add(&h->wakeups, 1, __ATOMIC_RELAXED);
	/* pairs with the RELEASE store of tk_wake_fd in
	 * lib/control.c:set_wake_fd() */
	fd = __atomic_load_n(&tk_wake_fd, __ATOMIC_ACQUIRE);
	if (fd >= 0 && tk_wake_fd_ours(fd) && write(fd, &one, sizeof(one)) < 0) {
		/* a full eventfd wakes the recorder anyway */
	}
}

/* End the CTF packet being written at t->pos, at time @tsc. */
static void ctf_end(struct tk_wstream *w, struct tk__thread *t, uint64_t tsc)
{
	struct tk_packet_header *ph = w->ctf;
	uint64_t bytes = (uint64_t)(t->pos - (char *)ph);

	ph->timestamp_end = tsc;
	ph->content_size = bytes * 8;
	ph->packet_size = bytes * 8;
	ph->events_discarded = lost_so_far(w);
}

/* Begin a CTF packet at @at for the thread's events from @tsc on, on
 * CPU @cpu: the header, then t->pos after it. */
static void ctf_begin(struct tk_wstream *w, struct tk__thread *t, char *at,
		      uint64_t tsc, int32_t cpu)
{
	struct tk_packet_header *ph = (struct tk_packet_header *)at;

	memset(ph, 0, sizeof(*ph));
	ph->magic = TK_CTF_MAGIC;
	ph->stream_id = w->class_id;
	ph->stream_instance_id = w->instance;
	ph->timestamp_begin = tsc;
	ph->packet_seq_num = w->ctf_seq++;
	ph->cpu_id = (uint32_t)cpu;
	ph->pid = w->desc->pid;
	ph->tid = w->desc->tid;
	w->ctf = ph;
	t->cpu = cpu;
	t->last_tsc = tsc; /* the packet's timestamp_begin: readers start here */
	t->pos = at + sizeof(*ph);
}

/* Seal the packet's chunk for the recorder, which then writes it as it
 * is: the last CTF packet takes the chunk up to the next TK_PACKET_ALIGN
 * (zeros after its events).  The writer has these lines in its cache;
 * the recorder would have to fetch them, and on some VMs pay a fault for
 * its first touch of each page. */
static bool packet_seal(struct tk_wstream *w, struct tk__thread *t)
{
	size_t bytes = (size_t)(t->pos - t->packet);
	size_t padded = (bytes + TK_PACKET_ALIGN - 1) & ~(size_t)(TK_PACKET_ALIGN - 1);

	if (!w->class_id)
		return false;
	memset(t->pos, 0, padded - bytes);
	w->ctf->packet_size = (uint64_t)(t->packet + padded - (char *)w->ctf) * 8;
	return true;
}

static void packet_close(struct tk_wstream *w, struct tk__thread *t,
			 uint64_t tsc)
{
	struct tk_rb_slot *sl = slot_of(w, w->seq);
	uint64_t bytes = (uint64_t)(t->pos - t->packet);

	ctf_end(w, t, tsc);
	/* ordered by the RELEASE stores of commit and produced below */
	__atomic_store_n(&sl->sealed, packet_seal(w, t), __ATOMIC_RELAXED);
	__atomic_store_n(&sl->events, (uint32_t)t->events, __ATOMIC_RELAXED);
	/* pairs with the ACQUIRE load of commit in cli/consumer.c:
	 * write_copy() (a packet closed while it is copied);
	 * drain_stream() reads the slot after the ACQUIRE of produced */
	__atomic_store_n(&sl->commit, bytes, __ATOMIC_RELEASE);
	w->seq++;
	/* pairs with the ACQUIRE load of produced in
	 * cli/consumer.c:drain_stream() (and flush_stream(), drain_process(),
	 * arena_has_work()): the slot and the packet are complete */
	__atomic_store_n(&w->arena->produced[w->index], w->seq, __ATOMIC_RELEASE);
	wake_recorder(w->arena->hdr,
		      w->pool_low || (w->arena->geom.mode == TK_RB_DISCARD &&
				      w->seq - w->consumed >= w->arena->wake_batch));
	t->packet = NULL;
	t->pos = NULL;
	__atomic_store_n(&t->end, NULL, __ATOMIC_RELAXED);
}

/* The pool should grow: tell the recorder, once until it has seen it
 * (with no packet open, no packet_close() of ours would).  A value
 * only. */
static void pool_starved(struct tk_arena *h)
{
	if (!__atomic_load_n(&h->starved, __ATOMIC_RELAXED)) {
		__atomic_store_n(&h->starved, 1, __ATOMIC_RELAXED);
		wake_recorder(h, true);
	}
}

/* A chunk never handed out, when the free stack is empty and the pool
 * may still grow: a burst faster than the recorder makes chunks takes
 * them itself rather than losing its events.  Its pages are made by
 * this thread's first stores (page faults: slower, never a wait for
 * the recorder).  The recorder learns of it from `fresh` (its
 * compare-and-swap there is the other taker). */
static bool take_fresh(struct tk_arena_map *a, uint32_t *id)
{
	uint32_t v = __atomic_load_n(&a->hdr->fresh, __ATOMIC_RELAXED);

	while (v < a->geom.pool_max)
		if (__atomic_compare_exchange_n(&a->hdr->fresh, &v, v + 1, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			*id = v;
			pool_starved(a->hdr);
			return true;
		}
	return false;
}

static bool take_chunk(struct tk_wstream *w, uint32_t *id, char **pkt)
{
	struct tk_arena_map *a = w->arena;
	uint64_t left = 0;
	bool got = tk_stack_take(&a->hdr->free_chunks, a->chunk_ring,
				 a->ring_size, id, &left);

	w->pool_low = !got || left < TK_POOL_LOW;
	if (!got && !take_fresh(a, id))
		return false;
	*pkt = tk_arena_chunk(a, *id);
	return *pkt != NULL;
}

static char *inline_page(struct tk_wstream *w)
{
	return (char *)w->desc + w->arena->hdr->stream_size - TK_INLINE_SIZE;
}

/* The stream's inline page, if the recorder has written what it held and
 * an event of @size bytes fits.  The ACQUIRE load of inline_busy pairs
 * with the RELEASE store of it in cli/consumer.c:chunk_give_back(): the
 * write of what the page held has completed. */
static bool take_inline(struct tk_wstream *w, uint32_t size, uint32_t *id,
			char **pkt)
{
	struct tk_rb_stream *d = w->desc;

	if (size > TK_INLINE_SIZE - sizeof(struct tk_packet_header) ||
	    __atomic_load_n(&d->inline_busy, __ATOMIC_ACQUIRE))
		return false;
	d->inline_busy = 1;
	*id = TK_CHUNK_INLINE;
	*pkt = inline_page(w);
	return true;
}

/* A chunk for the next packet, for an event of @size bytes: a thread's
 * first packet goes to its inline page, the others to the pool, the
 * inline page when the pool is empty. */
static bool take_any(struct tk_wstream *w, uint32_t size, uint32_t *id,
		     char **pkt)
{
	if (w->seq == 0 && take_inline(w, size, id, pkt))
		return true;
	return take_chunk(w, id, pkt) || take_inline(w, size, id, pkt);
}

static char *inline_page(struct tk_wstream *w);

/* Overwrite mode: a chunk for packet w->seq, taken from the thread's own
 * oldest packet when its ring is full or the pool is empty; that packet's
 * events are lost. */
static bool reuse_oldest(struct tk_wstream *w, uint32_t *id, char **pkt)
{
	struct tk_rb_slot *old;

	if (w->seq == w->oldest)
		return false;
	old = slot_of(w, w->oldest);
	count_lost(&w->desc->lost_overwritten, old->events);
	w->lost += old->events;
	*id = old->chunk;
	/* Seqlock: the old packet's number is gone before any of its bytes
	 * change.  The RELEASE fence pairs with the ACQUIRE fence in
	 * cli/consumer.c:write_copy(), which reads the number again after
	 * copying. */
	__atomic_store_n(&old->seq, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	w->oldest++;
	*pkt = *id == TK_CHUNK_INLINE ? inline_page(w) : tk_arena_chunk(w->arena, *id);
	return *pkt != NULL;
}

/* Open packet w->seq for an event of @size bytes. */
static int packet_open(struct tk_wstream *w, struct tk__thread *t,
		       uint64_t tsc, uint32_t size)
{
	struct tk_arena_map *a = w->arena;
	struct tk_rb_slot *sl = slot_of(w, w->seq);
	uint32_t id;
	char *pkt;

	if (a->geom.mode == TK_RB_DISCARD) {
		/* pairs with the RELEASE store of consumed in
		 * cli/consumer.c:drain_stream(): the recorder has read the
		 * slot */
		uint64_t consumed = __atomic_load_n(&w->desc->consumed,
						    __ATOMIC_ACQUIRE);

		w->consumed = consumed;
		if (w->seq - consumed >= a->geom.slots)
			return -ENOSPC;
		if (!take_any(w, size, &id, &pkt)) {
			pool_starved(a->hdr); /* the pool is at its limit */
			return -ENOSPC;
		}
	} else if (w->seq - w->oldest >= a->geom.slots) {
		if (!reuse_oldest(w, &id, &pkt))
			return -ENOSPC;
	} else if (!take_any(w, size, &id, &pkt) &&
		   !reuse_oldest(w, &id, &pkt)) {
		return -ENOSPC;
	}
	if (id == TK_CHUNK_INLINE &&
	    size > TK_INLINE_SIZE - sizeof(struct tk_packet_header)) {
		/* overwrite mode reused its inline page: too small for this
		 * event; it is empty now (its events were counted lost) */
		__atomic_store_n(&sl->seq, 0, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	/* The packet that held this slot, or this chunk, has lost its number
	 * already (reuse_oldest(), or the recorder consumed it): the slot is
	 * filled first, its number published last. */
	/* the stream class, once the recorder has the arena: a value only,
	 * nothing is read on its strength */
	w->class_id = __atomic_load_n(&a->hdr->class_id, __ATOMIC_RELAXED);
	/* ordered by the RELEASE stores of commit and seq below */
	__atomic_store_n(&sl->chunk, id, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->events, 0, __ATOMIC_RELAXED);
	ctf_begin(w, t, pkt, tsc, tk_cpu_now(t->cpu_src));
	/* pairs with the ACQUIRE load of commit in cli/consumer.c:write_copy():
	 * the header is there in a copy of the open packet */
	__atomic_store_n(&sl->commit, sizeof(struct tk_packet_header),
			 __ATOMIC_RELEASE);
	/* Seqlock: pairs with the ACQUIRE load of seq in
	 * cli/consumer.c:write_copy(): a reader that sees the number sees
	 * the slot's chunk and commit, not those of the packet before */
	__atomic_store_n(&sl->seq, w->seq + 1, __ATOMIC_RELEASE);
	t->packet = pkt;
	t->commit = &sl->commit;
	t->events = 0;
	__atomic_store_n(&t->end, pkt + (id == TK_CHUNK_INLINE ? TK_INLINE_SIZE
							      : a->geom.chunk_size),
			 __ATOMIC_RELAXED);
	return 0;
}

/* Bytes after t->pos up to where a packet header may begin: headers are
 * 8-byte aligned in their chunk (chunks and inline pages are pages). */
static size_t split_pad(const struct tk__thread *t)
{
	return (size_t)(-(uintptr_t)t->pos & 7);
}

/* The thread moved to CPU @cpu: its events from @tsc on go to a CTF
 * packet of their own, in the same chunk (common/ringbuf-layout.h
 * tk_packet_next).  A move costs a packet header, not a chunk. */
static void packet_split(struct tk_wstream *w, struct tk__thread *t,
			 uint64_t tsc, int32_t cpu)
{
	size_t pad = split_pad(t);

	ctf_end(w, t, tsc);
	memset(t->pos, 0, pad);
	w->ctf->packet_size += pad * 8;
	ctf_begin(w, t, t->pos + pad, tsc, cpu);
}

/* Write the thread's name, as it is now, into its stream descriptor: the
 * recorder, which reads names from /proc, takes this one once the thread
 * is gone (cli/consumer.c, consumer_header_name), so a thread renamed just
 * before it ends is known by its last name. */
static void stream_name_final(struct tk_wstream *w)
{
	uint64_t name[2] = { 0, 0 };

	if (prctl(PR_GET_NAME, (char *)name, 0, 0, 0) == 0 && name[0]) {
		__atomic_store_n(&w->desc->comm_last[0], name[0], __ATOMIC_RELAXED);
		__atomic_store_n(&w->desc->comm_last[1], name[1], __ATOMIC_RELAXED);
	}
}

/* Leave the thread's stream for good: last packet, closed. */
static void stream_finish(struct tk__thread *t, uint64_t tsc)
{
	struct tk_wstream *w = t->stream;
	struct tk_arena_map *a;

	if (!w)
		return;
	a = w->arena;
	if (t->packet)
		packet_close(w, t, tsc);
	w->thread = NULL;
	stream_name_final(w);
	/* Once closed, the recorder may read the stream's counts for the
	 * last time and give its descriptor to another thread: a signal
	 * handler's event from here on is counted by tk__lost_nested in
	 * lost_pending (the thread's next stream takes it), never in this
	 * one; those of before are this stream's. */
	t->stream = NULL;
	t->commit = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_fetch_add(&w->desc->lost_nested,
			   __atomic_exchange_n(&t->lost_pending, 0, __ATOMIC_RELAXED),
			   __ATOMIC_RELAXED);
	/* pairs with the ACQUIRE loads of the state in
	 * cli/consumer.c:drain_process() and arena_has_work(): every packet
	 * of the stream is closed, its name written */
	__atomic_store_n(&w->desc->state, TK_RB_CLOSED, __ATOMIC_RELEASE);
	wake_recorder(a->hdr, true);
	/* pairs with the ACQUIRE load of users in reap_retired_locked():
	 * this thread is done with the arena before it is unmapped */
	__atomic_fetch_sub(&a->users, 1, __ATOMIC_RELEASE);
}

/* The session's arena, held (users) so that it is not freed under us, or
 * NULL.  Between reading arena_cur and holding what it gave, the arena
 * may be retired by the control thread: `opening` says that a thread is
 * there, and reap_retired_locked frees nothing meanwhile.  The SEQ_CST
 * pairs with the exchange of arena_cur in tk_streams_set_arena and the
 * load of `opening` in reap_retired_locked: either that load sees us, or
 * we read the arena that replaced it. */
static struct tk_arena_map *arena_hold(void)
{
	struct tk_arena_map *a;

	__atomic_fetch_add(&opening, 1, __ATOMIC_SEQ_CST);
	a = __atomic_load_n(&arena_cur, __ATOMIC_SEQ_CST);
	if (a)
		__atomic_fetch_add(&a->users, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&opening, 1, __ATOMIC_RELEASE);
	return a;
}

static void arena_drop(struct tk_arena_map *a)
{
	/* pairs with the ACQUIRE load of users in reap_retired_locked() */
	__atomic_fetch_sub(&a->users, 1, __ATOMIC_RELEASE);
}

/* Take a stream in the session's arena for the calling thread: memory
 * made ahead, a compare-and-swap, two cheap system calls (tid, name). */
static struct tk_wstream *stream_open(struct tk__thread *t, uint64_t gen)
{
	struct tk_arena_map *a;
	struct tk_rb_stream *d;
	struct tk_wstream *w;
	uint32_t i;

	if (!tk_config_geometry().active)
		return NULL; /* the session ended: nothing to count in */
	a = arena_hold();
	if (!a || a->gen != gen) {
		if (a)
			arena_drop(a);
		__atomic_fetch_add(&lost_nobuf, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	/* a descriptor a thread has left first: its pages are made */
	if ((!tk_ring_take(&a->hdr->reused_streams, a->recycle_ring,
			   a->ring_size, &i, NULL) &&
	     !tk_ring_take(&a->hdr->free_streams, a->stream_ring,
			   a->ring_size, &i, NULL)) ||
	    i >= a->geom.streams_max) {
		__atomic_fetch_add(&a->hdr->lost_nobuf, 1, __ATOMIC_RELAXED);
		arena_drop(a);
		return NULL;
	}
	w = &a->w[i];
	d = tk_arena_stream(a, i);
	memset(w, 0, sizeof(*w));
	w->arena = a;
	w->desc = d;
	w->index = i;
	w->payload_max = a->geom.chunk_size - (uint32_t)sizeof(struct tk_packet_header);
	w->thread = t;
	/* written before the recorder offered the descriptor (ordered by
	 * tk_ring_take()'s ACQUIRE load of tail) */
	w->instance = d->instance ? d->instance : i + 1;
	t->cpu_src = tk_cpu_source();
	d->pid = a->hdr->pid;
	d->tid = tk_self_tid();
	prctl(PR_GET_NAME, d->comm, 0, 0, 0);
	/* the hold taken by arena_hold() is the stream's, until
	 * stream_finish() drops it */
	/* pairs with the ACQUIRE load of the state in
	 * cli/consumer.c:drain_process(): tid and name are there when
	 * stream_new() reads them */
	__atomic_store_n(&d->state, TK_RB_OPEN, __ATOMIC_RELEASE);
	/* An event of a signal handler meanwhile is counted by
	 * tk__lost_nested: in lost_pending until t->stream is set, in the
	 * stream after.  The pending ones are taken once it is set, so that
	 * none falls between the two. */
	t->stream = w;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_fetch_add(&d->lost_nested,
			   __atomic_exchange_n(&t->lost_pending, 0, __ATOMIC_RELAXED),
			   __ATOMIC_RELAXED);
	pthread_setspecific(exit_key, w);
	return w;
}

/* --block: wait up to the session's time for the recorder to give space
 * back (cli/consumer.c:wake_blocked() bumps `space`), then try once
 * more.  Only on the thread's own path: an event fired inside another
 * one (a signal handler's) never gets here (busy).  */
static int wait_space(struct tk_wstream *w, struct tk__thread *t, uint64_t tsc,
		      uint32_t size)
{
	struct tk_arena *h = w->arena->hdr;
	struct timespec now, end;
	int ret = -ENOSPC;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += w->arena->geom.block_ms / 1000;
	end.tv_nsec += (long)(w->arena->geom.block_ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	/* The SEQ_CST fence after counting ourselves in pairs with the
	 * SEQ_CST fence before the load of waiters in
	 * cli/consumer.c:wake_blocked() (each side stores, fences, then
	 * loads what the other stored): either it sees us counted in, or
	 * the ACQUIRE loads of packet_open() below see the space it gave
	 * back.  A SEQ_CST add alone would not order those later loads in
	 * C11 (x86's locked add happens to). */
	__atomic_fetch_add(&h->waiters, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (;;) {
		/* pairs with the RELEASE add to space in
		 * cli/consumer.c:wake_blocked() */
		uint32_t seen = __atomic_load_n(&h->space, __ATOMIC_ACQUIRE);
		struct timespec left;

		ret = packet_open(w, t, tsc, size);
		if (!ret)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = end.tv_sec - now.tv_sec;
		left.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000;
		}
		if (left.tv_sec < 0 ||
		    __atomic_load_n(&tk_session_gen, __ATOMIC_RELAXED) !=
			    w->arena->gen)
			break;
		/* pairs with the FUTEX_WAKE in cli/consumer.c:wake_blocked():
		 * no wait if space moved since `seen` */
		syscall(SYS_futex, &h->space, FUTEX_WAIT, seen, &left, NULL, 0);
	}
	__atomic_fetch_sub(&h->waiters, 1, __ATOMIC_RELAXED);
	return ret;
}

/* Whether an event of @size bytes (a compact header's counted: the
 * caller's, tk__reserve) at @tsc fits in the open packet as it is: then
 * the fast path came here because the thread changed CPU. */
static bool moved_only(const struct tk__thread *t, uint32_t size, uint64_t tsc)
{
	char *end = __atomic_load_n(&t->end, __ATOMIC_RELAXED);
	uint32_t hsize = (tsc - t->last_tsc) >> 32 ? TK__HEADER_EXTENDED
						   : TK__HEADER_COMPACT;

	return end && (size_t)(end - t->pos) >= size - TK__HEADER_COMPACT + hsize;
}

TK_EXPORT char *tk__reserve_slow(uint32_t size, uint64_t tsc)
{
	struct tk__thread *t = &tk__thread;
	struct tk_wstream *w = t->stream;
	/* pairs with the SEQ_CST increment in tk_streams_session_changed() */
	uint64_t gen = __atomic_load_n(&tk_session_gen, __ATOMIC_SEQ_CST);

	uint32_t mono = __atomic_load_n(&tk_clock_mono, __ATOMIC_RELAXED);

	if (w && w->arena->gen != gen) {
		stream_finish(t, tsc);
		w = NULL;
	}
	if (TK__UNLIKELY(t->mono != mono)) {
		/* the session's clock (a thread's first event, or a session
		 * on another clock): this event's time again, on it */
		t->mono = mono;
		tsc = tk__clock_of(t);
	}
	if (!w) {
		w = stream_open(t, gen);
		if (!w)
			return NULL;
	}
	if (size > w->payload_max) {
		count_lost(&w->desc->lost_big, 1);
		w->lost++;
		return NULL;
	}
	if (t->packet && moved_only(t, size, tsc)) {
		int32_t cpu = tk_cpu_now(t->cpu_src);
		char *end = __atomic_load_n(&t->end, __ATOMIC_RELAXED);

		/* the event fits: here for the CPU (or, without rseq, for
		 * every event).  The caller stamps the event with last_tsc:
		 * its time, in a compact header unless 2^32 ticks passed
		 * since the last event, which a new packet covers. */
		if (cpu == t->cpu && !((tsc - t->last_tsc) >> 32)) {
			t->last_tsc = tsc;
			return t->pos;
		}
		if ((size_t)(end - t->pos) >=
		    split_pad(t) + sizeof(struct tk_packet_header) + size) {
			packet_split(w, t, tsc, cpu);
			return t->pos;
		}
	}
	if (!t->packet && w->backoff) {
		/* no room a moment ago: lost without a look at the shared
		 * memory, which the recorder is writing meanwhile */
		w->backoff--;
		count_lost(&w->desc->lost_full, 1);
		w->lost++;
		return NULL;
	}
	if (t->packet)
		packet_close(w, t, tsc);
	if (packet_open(w, t, tsc, size) < 0 &&
	    (!w->arena->geom.block_ms || wait_space(w, t, tsc, size) < 0)) {
		if (!w->arena->geom.block_ms)
			w->backoff = LOST_BACKOFF;
		count_lost(&w->desc->lost_full, 1);
		w->lost++;
		return NULL;
	}
	/* A session change racing with the store of end above: make sure
	 * the next event looks again.  The SEQ_CST fence pairs with the
	 * SEQ_CST increment of tk_session_gen in
	 * tk_streams_session_changed(): either we see the new generation
	 * here, or its store of end = NULL (send_threads_to_slow_path())
	 * comes after ours. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&tk_session_gen, __ATOMIC_SEQ_CST) != w->arena->gen)
		__atomic_store_n(&t->end, NULL, __ATOMIC_RELAXED);
	return t->pos;
}

void tk_stream_prepare(void)
{
	struct tk__thread *t = &tk__thread;

	if (t->stream || t->busy)
		return;
	t->busy = 1; /* an event of a signal handler meanwhile is counted lost */
	/* the generation: pairs as in tk__reserve_slow() */
	stream_open(t, __atomic_load_n(&tk_session_gen, __ATOMIC_SEQ_CST));
	/* no other thread reads busy: the RELEASE orders the stream's
	 * opening before it for this thread's own signal handlers */
	__atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}

TK_EXPORT void tk__lost_nested(void)
{
	struct tk_wstream *w = tk__thread.stream;

	/* Same thread as the interrupted writer: an atomic add is the only
	 * safe way to count, and this is far from the fast path.  Without a
	 * stream yet (it is being opened), the count waits in the thread. */
	if (w)
		__atomic_fetch_add(&w->desc->lost_nested, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&tk__thread.lost_pending, 1, __ATOMIC_RELAXED);
}

/* Free the retired arenas no thread uses any more; with exit_lock.  A
 * thread in arena_hold may have read one and not hold it yet: wait for it
 * to (a few instructions; it never blocks there), or, if it is kept from
 * running that long, leave them all to the next call. */
static void reap_retired_locked(void)
{
	for (unsigned k = 0; retired && __atomic_load_n(&opening, __ATOMIC_SEQ_CST);
	     k++) {
		if (k == REAP_WAIT_YIELDS)
			return;
		sched_yield();
	}
	for (struct tk_arena_map **pp = &retired; *pp;) {
		struct tk_arena_map *a = *pp;

		/* pairs with the RELEASE decrement of users in
		 * stream_finish() and arena_drop(): the last thread is done
		 * with it */
		if (__atomic_load_n(&a->users, __ATOMIC_ACQUIRE)) {
			pp = &a->next;
			continue;
		}
		*pp = a->next;
		tk_arena_forget(a);
	}
}

static void send_threads_to_slow_path(struct tk_arena_map *a)
{
	for (uint32_t i = 0; a && i < a->geom.streams_max; i++)
		if (a->w[i].thread) /* pairs with the SEQ_CST fence in
				     * tk__reserve_slow() */
			__atomic_store_n(&a->w[i].thread->end, NULL,
					 __ATOMIC_SEQ_CST);
}

void tk_streams_session_changed(void)
{
	/* pairs with the SEQ_CST fence and load of tk_session_gen in
	 * tk__reserve_slow() */
	__atomic_fetch_add(&tk_session_gen, 1, __ATOMIC_SEQ_CST);
	/* what a session lost with no arena is its own: told to its
	 * recorder (ARENA, NOBUF), never to the next one */
	__atomic_store_n(&lost_nobuf, 0, __ATOMIC_RELAXED);
	pthread_mutex_lock(&exit_lock);
	send_threads_to_slow_path(arena_cur);
	for (struct tk_arena_map *a = retired; a; a = a->next)
		send_threads_to_slow_path(a);
	reap_retired_locked();
	pthread_mutex_unlock(&exit_lock);
}

void tk_streams_set_arena(struct tk_arena_map *a)
{
	struct tk_arena_map *old;

	pthread_mutex_lock(&exit_lock);
	/* pairs with the SEQ_CST load of arena_cur in arena_hold() and the
	 * ACQUIRE load in tk_streams_arena(): the arena is made before it is
	 * seen; with the SEQ_CST load of `opening` in reap_retired_locked() */
	old = __atomic_exchange_n(&arena_cur, a, __ATOMIC_SEQ_CST);
	if (old) {
		old->retired = true;
		old->next = retired;
		retired = old;
	}
	reap_retired_locked();
	pthread_mutex_unlock(&exit_lock);
}

struct tk_arena_map *tk_streams_arena(void)
{
	/* pairs with the exchange in tk_streams_set_arena() */
	return __atomic_load_n(&arena_cur, __ATOMIC_ACQUIRE);
}

uint64_t tk_streams_lost_nobuf(void)
{
	return __atomic_load_n(&lost_nobuf, __ATOMIC_RELAXED);
}

static void thread_exit(void *arg)
{
	struct tk__thread *t = &tk__thread;

	(void)arg;
	/* Events fired by later destructors count as nested and are
	 * dropped: the stream is closed. */
	t->busy = 1;
	pthread_mutex_lock(&exit_lock);
	stream_finish(t, tk__clock_of(t));
	pthread_mutex_unlock(&exit_lock);
}

/* The thread that calls exit() runs no thread_exit: its stream stays open
 * (the recorder flushes it), but its last name is written all the same. */
__attribute__((destructor)) static void streams_at_exit(void)
{
	struct tk_wstream *w = tk__thread.stream;

	if (w)
		stream_name_final(w);
}

static void fork_prepare(void)
{
	tk_registry_lock();
	pthread_mutex_lock(&exit_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&exit_lock);
	tk_registry_unlock();
}

static void fork_child(void)
{
	struct tk__thread *t = &tk__thread;

	/* The parent's arenas are shared memory the parent still writes:
	 * drop our mappings without a single store into them. */
	tk_arena_forget(arena_cur);
	arena_cur = NULL;
	while (retired) {
		struct tk_arena_map *next = retired->next;

		tk_arena_forget(retired);
		retired = next;
	}
	memset(t, 0, sizeof(*t));
	pthread_setspecific(exit_key, NULL);
	lost_nobuf = 0;
	opening = 0; /* threads of the parent's: not here */
	tk_session_gen++;
	pthread_mutex_unlock(&exit_lock);
	tk_registry_unlock();
	tk_session_after_fork_child();
}

void tk_streams_init(void)
{
	pthread_key_create(&exit_key, thread_exit);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
