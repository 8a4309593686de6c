/* SPDX-License-Identifier: MIT */
/*
 * stream-read.c - decode one user stream file (stream-read.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/regular-file.h"
#include "stream-read.h"
#include "common/ringbuf-layout.h"

int tk_stream_open(struct tk_stream_reader *r, const struct tk_trace *t,
		   const struct tk_trace_stream *s, char *err, size_t errlen)
{
	struct stat st;
	int fd, ret;

	memset(r, 0, sizeof(*r));
	r->stream = s;
	r->incomplete = t->incomplete;
	r->process = tk_trace_process_of(t, s->class_id);
	if (asprintf(&r->path, "%s/%s", t->dir, s->file) < 0)
		return -ENOMEM;
	if (!r->process) {
		snprintf(err, errlen, "'%s': no process has class %u", r->path,
			 s->class_id);
		return -EINVAL;
	}
	fd = tk_open_regular(r->path);
	if (fd < 0 && errno == ENOENT && !s->bytes)
		return 0; /* never made (the recorder had no descriptor
			   * left): nothing was written, what it lost is
			   * in its counts */
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open '%s': %s", r->path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	r->size = (size_t)st.st_size;
	if (r->size) {
		r->map = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (r->map == MAP_FAILED) {
			ret = -errno;
			snprintf(err, errlen, "cannot map '%s': %s", r->path,
				 strerror(errno));
			close(fd);
			r->map = NULL;
			return ret;
		}
		madvise((void *)r->map, r->size, MADV_SEQUENTIAL);
	}
	close(fd);
	return 0;
}

static int bad(struct tk_stream_reader *r, size_t off, const char *why,
	       char *err, size_t errlen)
{
	snprintf(err, errlen, "'%s' offset %zu: %s", r->path, off, why);
	r->pos = r->content_end = r->packet = r->size; /* stop here */
	r->truncated = false;
	return -EINVAL;
}

/* Enter the packet at r->packet (== r->pos when the previous ended). */
static int enter_packet(struct tk_stream_reader *r, char *err, size_t errlen)
{
	struct tk_packet_header ph;
	uint64_t content, size;

	if (r->size - r->packet < sizeof(ph))
		return bad(r, r->packet, "truncated packet header", err, errlen);
	memcpy(&ph, r->map + r->packet, sizeof(ph));
	if (!ph.magic && r->incomplete) {
		/* space the recorder allocated ahead of its writes, never
		 * written: it was killed; what it wrote ends here */
		r->pos = r->content_end = r->packet = r->size;
		return 0;
	}
	if (ph.magic != TK_CTF_MAGIC)
		return bad(r, r->packet, "bad packet magic", err, errlen);
	content = ph.content_size / 8;
	size = ph.packet_size / 8;
	if (ph.content_size % 8 || ph.packet_size % 8 || content > size ||
	    content < sizeof(ph))
		return bad(r, r->packet, "bad packet size", err, errlen);
	if (size > r->size - r->packet) {
		/* the file was cut: read the events that are there */
		r->truncated = true;
		size = r->size - r->packet;
		if (content > size)
			content = size;
	}
	if (ph.stream_id != r->stream->class_id)
		return bad(r, r->packet, "packet of another stream class", err,
			   errlen);
	r->content_end = r->packet + content;
	r->pos = r->packet + sizeof(ph);
	r->last_ts = ph.timestamp_begin;
	r->cpu = ph.cpu_id;
	r->discarded = ph.events_discarded;
	r->packet += size;
	return 0;
}

int tk_stream_next(struct tk_stream_reader *r, char *err, size_t errlen)
{
	const struct tk_event_info *ev;
	unsigned hsize;
	uint16_t id;
	uint64_t ts;
	long n;

	while (r->pos >= r->content_end) {
		int ret;

		if (r->truncated && r->incomplete)
			return 0; /* the recorder was killed while writing it */
		if (r->truncated)
			return bad(r, r->size, "the file ends inside a packet (truncated)",
				   err, errlen);
		if (r->packet >= r->size)
			return 0;
		ret = enter_packet(r, err, errlen);
		if (ret)
			return ret;
	}
	hsize = tk_event_header_decode(r->map + r->pos, r->content_end - r->pos,
				       r->last_ts, &id, &ts);
	if (!hsize && r->truncated && r->incomplete)
		return 0;
	if (!hsize)
		return bad(r, r->pos, "truncated event header", err, errlen);
	ev = tk_process_event(r->process, id);
	if (!ev)
		return bad(r, r->pos, "event of unknown id", err, errlen);
	/* never NULL, even for an event of no field: NULL values would say
	 * "no record" to a reader (tk_cursor_values) */
	if (!r->values || r->values_cap < ev->nfields) {
		unsigned cap = ev->nfields ? ev->nfields : 1;
		struct tk_value *v = realloc(r->values, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->values = v;
		r->values_cap = cap;
	}
	r->payload = r->map + r->pos + hsize;
	n = tk_record_decode(ev, r->payload, r->content_end - r->pos - hsize,
			     r->values);
	if (n < 0 && r->truncated && r->incomplete)
		return 0;
	if (n < 0)
		return bad(r, r->pos, "malformed event record", err, errlen);
	r->payload_size = (size_t)n;
	r->event = ev;
	r->ts = ts;
	r->last_ts = ts;
	r->pos += hsize + (size_t)n;
	return 1;
}

void tk_stream_close(struct tk_stream_reader *r)
{
	if (r->map)
		munmap((void *)r->map, r->size);
	free(r->values);
	free(r->path);
	memset(r, 0, sizeof(*r));
}
