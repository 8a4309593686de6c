/* SPDX-License-Identifier: MIT */
/*
 * stream-read.h - the events of one user stream file, in order.
 *
 * A stream file is a sequence of CTF packets (common/ringbuf-layout.h): a
 * struct tk_packet_header, then events of an 8-byte header (id, low 48
 * bits of the timestamp) and packed fields.  Everything is checked against
 * the file's size and the process's descriptors; a bad packet or record
 * stops the stream with a message naming the file and offset.
 */
#ifndef TK_STREAM_READ_H
#define TK_STREAM_READ_H

#include "trace.h"

struct tk_stream_reader {
	const struct tk_trace_stream *stream;
	const struct tk_trace_process *process;
	char *path;
	const char *map;
	size_t size;
	size_t packet;     /* offset of the current packet */
	size_t unmapped;   /* map pages below it given back (map-drop.h) */
	size_t content_end; /* end of its events */
	size_t pos;        /* next event */
	uint64_t last_ts;
	uint32_t cpu;
	uint64_t discarded; /* events_discarded of the current packet */
	bool truncated;     /* the current packet goes past the file's end */
	bool incomplete;    /* of a trace whose recorder never finished: the
			     * file may end inside a packet, or an event */

	/* the current event, after tk_stream_next() returned 1 */
	uint64_t ts;
	const struct tk_event_info *event;
	const char *payload;
	size_t payload_size;
	struct tk_value *values; /* one per field of event; never NULL */
	unsigned values_cap;
};

/* Open @s of trace @t.  Returns 0 or -errno with err[errlen] set. */
int tk_stream_open(struct tk_stream_reader *r, const struct tk_trace *t,
		   const struct tk_trace_stream *s, char *err, size_t errlen);

/* Advance to the next event: 1 when there is one, 0 at the end, -EINVAL
 * on a malformed packet or record (err[errlen] says where). */
int tk_stream_next(struct tk_stream_reader *r, char *err, size_t errlen);

void tk_stream_close(struct tk_stream_reader *r);

/* The whole packets at the start of a stream file. */
struct tk_stream_packets {
	uint64_t end;       /* offset past the last */
	uint64_t packets;   /* how many */
	uint64_t discarded; /* the last one's events_discarded: lost so far */
};

/* Walk the packet headers of the stream file open as @fd, of CTF stream
 * class @class_id, from its start to the first that is not whole: no
 * magic (a killed recorder's file ends in space allocated ahead, never
 * written: zeros), another class, or a size past the file's end.
 * Returns 0, or -errno from reading. */
int tk_stream_whole_packets(int fd, uint32_t class_id, struct tk_stream_packets *sp);

#endif /* TK_STREAM_READ_H */
