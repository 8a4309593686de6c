/* SPDX-License-Identifier: MIT */
/*
 * ringbuf-layout.h - the shared memory of one thread's buffer.
 *
 * A thread's buffer is one memfd, mapped by the thread (the only writer)
 * and by the recorder (the only reader):
 *
 *   +-----------------------------+  0
 *   | struct tk_rb_header         |  identity, geometry, counters
 *   |   produced  (writer line)   |  packets closed by the writer
 *   |   consumed  (reader line)   |  packets drained by the recorder
 *   |   slot[nsub]                |  per packet: seq, commit, events
 *   +-----------------------------+  header_size (page multiple)
 *   | packet 0 (subbuf_size)      |  struct tk_packet_header, then events
 *   | packet 1                    |
 *   | ...                         |
 *   +-----------------------------+
 *
 * Packet number n (counted from 0 for the stream's life) lives in slot
 * n % nsub.  The writer fills packet `produced`; when it does not fit it
 * closes it (fills the packet header, stores slot.commit, then `produced`
 * with release) and opens the next.  In discard mode it may open packet n
 * only if n - consumed < nsub; otherwise the event is lost and counted.  In
 * overwrite mode it always opens and counts the events of the packet it
 * overwrites as lost; the reader then checks slot.seq before and after
 * copying (a seqlock) and drops a copy that was overwritten meanwhile.
 *
 * Each event is committed by storing the packet's byte count in
 * slot[n % nsub].commit (release), so whatever the program did next (crash,
 * SIGKILL), the bytes up to commit are whole events.
 *
 * The packet header is the CTF packet header and context described by the
 * trace's TSDL metadata (format/ctf-metadata.c); the recorder rewrites its
 * stream_id, packet_size and, for a packet still open, content_size and
 * timestamp_end as it writes the packet to disk.
 */
#ifndef TK_RINGBUF_LAYOUT_H
#define TK_RINGBUF_LAYOUT_H

#include <stdint.h>

#define TK_RB_MAGIC 0x42524b54u /* "TKRB" */
#define TK_RB_VERSION 2
#define TK_RB_MAX_SUBBUF 128
#define TK_CTF_MAGIC 0xc1fc1fc1u

enum tk_rb_mode {
	TK_RB_DISCARD = 0,
	TK_RB_OVERWRITE = 1,
};

struct tk_rb_slot {
	uint64_t seq;    /* packet number held, UINT64_MAX when none yet */
	uint64_t commit; /* bytes of the packet that are whole events */
	uint64_t events; /* events in the packet, set when it is closed */
	uint64_t pad[5];
};

struct tk_rb_header {
	uint32_t magic;
	uint32_t version;
	uint32_t pid;
	uint32_t tid;
	uint32_t nsub;
	uint32_t subbuf_size;
	uint32_t header_size;
	uint32_t mode; /* enum tk_rb_mode */
	char comm[16];
	uint64_t pad0[2];

	/* written by the writer, at packet boundaries */
	uint64_t produced __attribute__((aligned(64)));
	uint64_t lost_full;   /* no free packet (discard mode) */
	uint64_t lost_nested; /* fired inside another event on this thread */
	uint64_t lost_big;    /* larger than a packet */
	uint64_t lost_overwritten; /* in packets overwritten (overwrite mode) */
	uint64_t events;      /* events in closed packets */
	uint32_t closed;      /* the thread has exited */
	uint32_t pad1;

	/* written by the reader */
	uint64_t consumed __attribute__((aligned(64)));
	/* 1 while the recorder sleeps; the writer that closes a packet then
	 * clears it and wakes the recorder (docs/design-notes.md) */
	uint32_t sleeping;

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
 * Each event: a header, then its fields packed.  The header is
 *
 *   compact   u16 id, u32 low bits of the timestamp         (6 bytes)
 *   extended  u16 0xffff, u16 id, u64 timestamp             (12 bytes)
 *
 * compact while less than 2^32 ticks have passed since the previous event
 * of the stream (or the packet's timestamp_begin, for its first event); a
 * reader carries the high bits over, adding 2^32 when the low bits go
 * backwards, as CTF does for a clock field narrower than the clock.
 */
#define TK_ID_EXTENDED 0xffff
#define TK_EVENT_HEADER_MIN 6

/* Decode the header at p[0..avail) after an event stamped @last: returns
 * the header's size, or 0 when it does not fit in avail. */
static inline unsigned tk_event_header_decode(const char *p, size_t avail,
					      uint64_t last, uint16_t *id,
					      uint64_t *ts)
{
	uint16_t tag;
	uint32_t lo;
	uint64_t t;

	if (avail < 6)
		return 0;
	__builtin_memcpy(&tag, p, 2);
	if (tag != TK_ID_EXTENDED) {
		__builtin_memcpy(&lo, p + 2, 4);
		t = (last & ~(uint64_t)0xffffffff) | lo;
		if (t < last)
			t += (uint64_t)1 << 32;
		*id = tag;
		*ts = t;
		return 6;
	}
	if (avail < 12)
		return 0;
	__builtin_memcpy(id, p + 2, 2);
	__builtin_memcpy(ts, p + 4, 8);
	return 12;
}

#endif /* TK_RINGBUF_LAYOUT_H */
