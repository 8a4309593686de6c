/* SPDX-License-Identifier: MIT */
/*
 * ringbuf-layout.h - the shared memory of a process's buffers (its arena).
 *
 * A process that records has one arena per session, made by the process
 * (lib/arena.c), sealed against shrinking and growing, and mapped by the
 * recorder (cli/consumer.c).  It is two memfds, a control part and the
 * pool:
 *
 *   control memfd
 *   +--------------------------------------+  0
 *   | struct tk_arena                      |  geometry, the recorder's
 *   |                                      |  sleeping word, queue ends,
 *   |                                      |  process-level counters
 *   +--------------------------------------+  chunk_ring
 *   | u32 stack[ring_size]: free chunks    |  recorder -> writers
 *   +--------------------------------------+  stream_ring
 *   | u32 ring[ring_size]: fresh streams   |  recorder -> writers
 *   +--------------------------------------+  recycle_ring
 *   | u32 ring[ring_size]: streams reused  |  recorder -> writers
 *   +--------------------------------------+  produced
 *   | u64 produced[streams_max]            |  packets closed, per stream
 *   +--------------------------------------+  streams
 *   | struct tk_rb_stream, stream_size B   |  one per thread using it:
 *   |   ring of `slots` slots, then its    |  ring of `slots` slots, and
 *   |   inline packet page                 |  a page for a small packet
 *   +--------------------------------------+  control_size
 *
 *   pool memfd: chunks_max chunks, sparse (pages exist only once made)
 *   +-------------+-------------+----
 *   | chunk 0     | chunk 1     | ...    chunk_size bytes each: one packet
 *   +-------------+-------------+----    (CTF packet header, then events)
 *
 * The process makes the first pages of the pool (faulted in at once) and
 * puts those chunks in the free chunk stack; the recorder makes more, in
 * its own mapping, ahead of the writers (a thread of its own faults the
 * pages in) and puts them in the stack as they are made: the pool grows
 * with the bursts, not with the thread count, and no writer waits for it.
 *
 * A chunk is named by its number, or
 * TK_CHUNK_INLINE for the stream's own inline page: a thread's first
 * packet goes there (so that a thousand threads that start together need
 * no chunk each, and a thread that fires now and then holds a page, not a
 * chunk), and any packet when the pool is empty and the page is free
 * (inline_busy = 0: the recorder has written what it held).
 *
 * A thread's stream is a ring of `slots` slots: packet n (counted from 0
 * for the stream's life) is described by slot n % slots and lives in the
 * chunk that slot names.  The writer fills packet `seq`; when an event
 * does not fit it closes it (slot commit and events, then produced[s],
 * release) and opens the next with a chunk from the free chunk stack.
 *
 * Discard mode: the writer may open packet n only if n - consumed < slots
 * and it gets a free chunk; otherwise the event is lost and counted.  The
 * recorder reads a closed slot, advances consumed (the slot is free
 * again), writes the chunk to disk and gives the chunk back to the free
 * chunk stack when the write has completed.  Overwrite mode: nothing is drained
 * while recording; a writer whose ring is full, or that gets no chunk,
 * reuses the chunk of its own oldest packet and counts its events as
 * lost; the recorder then checks slot.seq before and after copying a
 * packet (a seqlock) and drops a copy that was overwritten meanwhile.
 *
 * Each event is committed by storing the packet's byte count in its
 * slot's commit (release), so whatever the program did next (crash,
 * SIGKILL), the bytes up to commit are whole events.
 *
 * The free stream rings have one producer, the recorder, and many
 * consumers, the writers: a writer reads ring[head % ring_size] and takes
 * it by a compare-and-swap of head from head to head + 1; the recorder
 * stores ring[tail % ring_size], then tail + 1 (release), after checking
 * tail - head < ring_size.  Positions only grow (64 bits), so a stale
 * head cannot be taken twice.  The free chunk stack has one pusher, the
 * recorder (it alone knows when a chunk is written out), and many
 * poppers, the writers: a writer reads stack[count - 1] and takes it by a
 * compare-and-swap of top to count - 1; the recorder stores stack[count],
 * then swaps top to count + 1.  Each swap bumps top's tag (32 bits), so
 * an entry popped and pushed again while a writer looked cannot be taken
 * twice; the chunk given back last is taken first, so writers store into
 * chunks whose lines are still cached.
 *
 * Everything here is written by a program the recorder must not trust:
 * the recorder copies the geometry once and bounds every number it reads
 * again.  Every descriptor is in the fresh stream ring from the start (a
 * descriptor of zeros is ready for use); the recorder faults their pages
 * in a few descriptors ahead of the ring's head, so that a thread's first
 * event rarely meets a fresh page.  A descriptor whose thread has left is
 * offered again in the recycle ring, which writers try first: threads
 * that come and go one after the other use the same few descriptors.  docs/design-notes.md lists each
 * barrier and the one it pairs with.
 */
#ifndef TK_RINGBUF_LAYOUT_H
#define TK_RINGBUF_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include "tracekit/runtime.h" /* the event header, written inline */

#define TK_ARENA_MAGIC 0x4e524b54u /* "TKRN" */
#define TK_ARENA_VERSION 4
#define TK_CTF_MAGIC 0xc1fc1fc1u

#define TK_RB_MIN_SLOTS 2
#define TK_RB_MAX_SLOTS 4096
#define TK_ARENA_MAX_STREAMS 65536
#define TK_CHUNK_MIN 4096u
#define TK_CHUNK_MAX (16u << 20)
/* The most a process's pool may hold, and so one thread's buffer (record
 * -b, --pool): record refuses more up front, the runtime a CONFIG that
 * asks for more (lib/config.c), the recorder an arena that says more
 * (cli/consumer.c).  Sparse: only what is made takes memory. */
#define TK_POOL_MAX (64ull << 30)
/* The chunk id of a stream's own first-packet page (see tk_rb_stream). */
#define TK_CHUNK_INLINE 0xffffffffu
#define TK_INLINE_SIZE 4096u
/* A closed packet is padded to a multiple of this in its chunk (and so
 * in the file: O_DIRECT writes whole blocks). */
#define TK_PACKET_ALIGN 4096u

enum tk_rb_mode {
	TK_RB_DISCARD = 0,
	TK_RB_OVERWRITE = 1,
};

/* The ends of a free ring (see above). */
struct tk_ring_ends {
	uint64_t head __attribute__((aligned(64))); /* writers: next to take */
	uint64_t tail __attribute__((aligned(64))); /* recorder: next to fill */
};

/* The top of the free chunk stack: the chunk given back last is the next
 * taken, so that writers store into lines still in the cache rather than
 * cycling through the whole pool.  Entries below `count` are free chunks;
 * the high half is bumped by every push and pop, so that a writer's
 * compare-and-swap fails if the stack moved under it (ABA). */
struct tk_chunk_stack {
	uint64_t top __attribute__((aligned(64))); /* tag << 32 | count */
	uint64_t pad __attribute__((aligned(64)));
};
#define TK_STACK_COUNT(top) ((uint32_t)(top))
#define TK_STACK_NEXT(top, count) \
	((((top) >> 32) + 1) << 32 | (uint64_t)(uint32_t)(count))

struct tk_arena {
	uint32_t magic;
	uint32_t version;
	uint32_t pid;
	uint32_t mode;         /* enum tk_rb_mode */
	uint32_t chunk_size;   /* bytes per chunk: a packet's largest size */
	uint32_t slots;        /* slots per stream: the chunks a thread may hold */
	uint32_t streams_max;  /* stream descriptors */
	uint32_t ring_size;    /* entries of each free ring (power of 2) */
	uint32_t stream_size;  /* bytes per stream descriptor */
	uint32_t chunks_max;   /* chunks of the pool memfd */
	uint64_t chunk_ring;   /* offsets in the control memfd */
	uint64_t stream_ring;
	uint64_t recycle_ring;
	uint64_t produced;
	uint64_t streams;
	uint64_t control_size; /* bytes of the control memfd */

	/* written by the recorder; cleared by the writer that wakes it */
	uint32_t sleeping __attribute__((aligned(64)));
	/* --block: bumped by the recorder when it gives space back; writers
	 * wait on it (futex) while `waiters` > 0 */
	uint32_t space;
	uint32_t waiters;
	/* the process's CTF stream class, set by the recorder when it takes
	 * the arena; 0 before (the writers then leave the packet headers'
	 * ids to it, see tk_rb_slot.sealed) */
	uint32_t class_id;

	struct tk_chunk_stack free_chunks;
	struct tk_ring_ends free_streams;   /* fresh */
	struct tk_ring_ends reused_streams; /* recycled */

	/* written by writers (atomic adds): events lost with no stream to
	 * count them in (no descriptor, or no chunk for a thread's first
	 * packet) */
	uint64_t lost_nobuf __attribute__((aligned(64)));
	/* written by writers (atomic add): the times one woke the recorder
	 * (record -v says them) */
	uint64_t wakeups;
	/* set by a writer that found no free chunk, cleared by the
	 * recorder, which then grows the pool */
	uint32_t starved;
	/* the first chunk never handed out: taken (compare-and-swap) by the
	 * recorder for the chunks it made, or by a writer that found the
	 * free stack empty (it then makes the chunk's pages itself, by
	 * touching them), up to chunks_max */
	uint32_t fresh;
};

enum tk_rb_state {
	TK_RB_FREE = 0,   /* in a free ring, or not offered yet */
	TK_RB_OPEN = 1,   /* a thread writes it */
	TK_RB_CLOSED = 2, /* its thread left it: nothing more comes */
};

/* A descriptor of zeros is a fresh one: no slot holds a packet. */
struct tk_rb_slot {
	uint64_t seq;    /* packet number held + 1, 0 when none */
	uint64_t commit; /* bytes of the packet that are whole events */
	uint32_t chunk;  /* where the packet is */
	uint32_t events; /* events in the packet, set when it is closed */
	/* set when it is closed: 1 if the writer completed every packet
	 * header in the chunk (stream class and instance, the last one's
	 * packet_size up to TK_PACKET_ALIGN, zeros after commit): the
	 * recorder writes the chunk as it is, without a store into it */
	uint32_t sealed;
	uint32_t pad;
};

/* One thread's stream (its descriptor), stream_size bytes: this, the
 * slots, then from stream_size - TK_INLINE_SIZE its inline page. */
struct tk_rb_stream {
	/* set by the writer when it takes the descriptor */
	uint32_t state; /* enum tk_rb_state, release stores */
	uint32_t tid;
	char comm[16]; /* the thread's name at birth */
	uint32_t pid;
	/* 1 while the inline page holds a packet not yet written: set by
	 * the writer when it opens one there, cleared by the recorder */
	uint32_t inline_busy;
	/* the thread's name when it ends (lib/stream.c stream_name_final),
	 * 0 before: two relaxed atomic words, read by the recorder while
	 * the thread may still write them */
	uint64_t comm_last[2];
	/* the CTF stream instance of the thread that takes it: set by the
	 * recorder before it offers a recycled descriptor; 0 in a fresh one,
	 * whose instance is its index + 1 */
	uint64_t instance;

	/* written by the writer, at packet boundaries */
	uint64_t lost_full __attribute__((aligned(64))); /* no free slot or chunk */
	uint64_t lost_nested; /* fired inside another event on this thread */
	uint64_t lost_big;    /* larger than a packet */
	uint64_t lost_overwritten; /* in packets overwritten (overwrite mode) */

	/* written by the recorder */
	uint64_t consumed __attribute__((aligned(64)));

	struct tk_rb_slot slot[] __attribute__((aligned(64)));
};

/* The CTF packet header and packet context, as laid out in each packet. */
struct tk_packet_header {
	uint32_t magic;     /* TK_CTF_MAGIC */
	uint32_t stream_id; /* CTF stream class: one per process */
	uint64_t stream_instance_id;
	uint64_t timestamp_begin;
	uint64_t timestamp_end;
	uint64_t content_size; /* bits */
	uint64_t packet_size;  /* bits */
	uint64_t packet_seq_num;
	uint64_t events_discarded; /* lost so far in this stream */
	uint32_t cpu_id;
	uint32_t pid;
	uint32_t tid;
	uint32_t pad;
};

/*
 * A chunk holds one CTF packet, or more when its thread moved to another
 * CPU while it filled it: the writer then ends the packet where it is
 * (content_size and packet_size set, packet_size up to the next multiple
 * of 8 bytes, zeros between) and begins one for the new CPU right after
 * (lib/stream.c packet_split).  The last packet's sizes are set by the
 * writer when it closes the chunk (a sealed slot), else by the recorder,
 * to what it writes.  The recorder walks them with
 * tk_packet_next: the offset of the packet after the one at @off, in the
 * first @commit bytes of @chunk, or 0 if that one is the last.  @off is a
 * multiple of 8 and @chunk a page.
 */
static inline uint64_t tk_packet_next(const char *chunk, uint64_t off,
				      uint64_t commit)
{
	const struct tk_packet_header *ph =
		(const struct tk_packet_header *)(chunk + off);
	uint64_t size = __atomic_load_n(&ph->packet_size, __ATOMIC_RELAXED) / 8;

	if (size % 8 || size < sizeof(*ph) || commit - off < sizeof(*ph) ||
	    size > commit - off - sizeof(*ph))
		return 0;
	return off + size;
}

/*
 * Discard mode drains packets in batches: a writer wakes a sleeping
 * recorder when its stream has this many closed packets the recorder has
 * not taken (or the pool runs low, or the stream closes), and the
 * recorder writes them in one go: ~2 MiB per write, so that a virtual
 * disk that counts its operations is not asked for one per packet, and
 * the recorder (its wake-up, its context switches, its system calls) runs
 * once per 2 MiB of a busy stream, not per packet.
 */
#define TK_WAKE_BATCH_BYTES (2u << 20)
#define TK_POOL_LOW 16 /* free chunks: a writer that sees fewer wakes it */

static inline uint32_t tk_rb_wake_batch(uint32_t chunk_size, uint32_t slots)
{
	uint32_t b = TK_WAKE_BATCH_BYTES / chunk_size;

	if (b > slots / 2)
		b = slots / 2;
	return b ? b : 1;
}

/* Bytes of a stream descriptor with @slots slots, its inline page
 * included (pages: the page is aligned for O_DIRECT writes). */
static inline uint32_t tk_rb_stream_size(uint32_t slots)
{
	uint64_t n = sizeof(struct tk_rb_stream) +
		     (uint64_t)slots * sizeof(struct tk_rb_slot);

	return (uint32_t)(((n + 4095) & ~(uint64_t)4095) + TK_INLINE_SIZE);
}

/* Fault in the two pages of the descriptor at @d (@stream_size bytes)
 * that a thread's first event writes: its first (state, names, the first
 * slots) and its inline page; the slots beyond the first page are made
 * by the stores of a thread that gets that far (a page per 128 packets).
 * By the process for its first descriptors (lib/arena.c), by the
 * recorder for the next ones, ahead of the threads (cli/consumer.c). */
static inline void tk_rb_populate_descriptor(void *d, uint32_t stream_size)
{
	madvise(d, 4096, MADV_POPULATE_WRITE);
	madvise((char *)d + stream_size - TK_INLINE_SIZE, TK_INLINE_SIZE,
		MADV_POPULATE_WRITE);
}

/* Whether a geometry is within the limits above: the runtime checks the
 * CONFIG it is sent (lib/config.c), the recorder the arena a process
 * hands it (cli/consumer.c). */
static inline bool tk_rb_geometry_ok(uint32_t mode, uint32_t chunk_size,
				     uint32_t slots, uint32_t streams_max,
				     uint32_t chunks_max)
{
	return mode <= TK_RB_OVERWRITE && chunk_size >= TK_CHUNK_MIN &&
	       chunk_size <= TK_CHUNK_MAX && chunk_size % 4096 == 0 &&
	       slots >= TK_RB_MIN_SLOTS && slots <= TK_RB_MAX_SLOTS &&
	       streams_max >= 1 && streams_max <= TK_ARENA_MAX_STREAMS &&
	       chunks_max >= 1 && (uint64_t)chunks_max * chunk_size <= TK_POOL_MAX;
}

/* Bytes of an arena's control part (see the top of this file; lib/arena.c
 * lays it out): the header's page, three free rings of @ring_size 4-byte
 * ids, a produced count per stream, then @streams_max descriptors of
 * @slots slots, the whole rounded up to a page. */
static inline uint64_t tk_arena_control_size(uint32_t ring_size,
					     uint32_t streams_max,
					     uint32_t slots)
{
	uint64_t ring = ((uint64_t)ring_size * 4 + 4095) & ~(uint64_t)4095;
	uint64_t n = ((sizeof(struct tk_arena) + 4095) & ~(uint64_t)4095) +
		     3 * ring + (((uint64_t)streams_max * 8 + 4095) & ~(uint64_t)4095) +
		     (uint64_t)streams_max * tk_rb_stream_size(slots);

	return (n + 4095) & ~(uint64_t)4095;
}

/* The largest control part the limits allow (its rings hold as many ids
 * as the largest pool has chunks, a power of 2): the recorder refuses a
 * larger one before mapping it. */
static inline uint64_t tk_arena_control_max(void)
{
	return tk_arena_control_size((uint32_t)(TK_POOL_MAX / TK_CHUNK_MIN),
				     TK_ARENA_MAX_STREAMS, TK_RB_MAX_SLOTS);
}

/*
 * Each event: a header, then its fields packed.  The header is
 *
 *   compact   u16 id, u32 low bits of the timestamp         (6 bytes)
 *   extended  u16 0xffff, u16 id, u64 timestamp             (12 bytes)
 *
 * compact while less than 2^32 ticks have passed since the previous event
 * of the stream (or the packet's timestamp_begin, for its first event); a
 * reader carries the high bits over, adding 2^32 when the low bits go
 * backwards, as CTF does for a clock field narrower than the clock.
 * The instrumented program writes it inline, so its constants are the
 * public header's: TK__ID_EXTENDED, TK__HEADER_COMPACT and
 * TK__HEADER_EXTENDED (tracekit/runtime.h).
 */

/* Decode the header at p[0..avail) after an event stamped @last: returns
 * the header's size, or 0 when it does not fit in avail. */
static inline unsigned tk_event_header_decode(const char *p, size_t avail,
					      uint64_t last, uint16_t *id,
					      uint64_t *ts)
{
	uint16_t tag;
	uint32_t lo;
	uint64_t t;

	if (avail < TK__HEADER_COMPACT)
		return 0;
	__builtin_memcpy(&tag, p, 2);
	if (tag != TK__ID_EXTENDED) {
		__builtin_memcpy(&lo, p + 2, 4);
		t = (last & ~(uint64_t)0xffffffff) | lo;
		if (t < last)
			t += (uint64_t)1 << 32;
		*id = tag;
		*ts = t;
		return TK__HEADER_COMPACT;
	}
	if (avail < TK__HEADER_EXTENDED)
		return 0;
	__builtin_memcpy(id, p + 2, 2);
	__builtin_memcpy(ts, p + 4, 8);
	return TK__HEADER_EXTENDED;
}

#endif /* TK_RINGBUF_LAYOUT_H */
