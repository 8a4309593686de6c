/* SPDX-License-Identifier: MIT */
/*
 * consumer.c - drain thread buffers into the trace directory.
 *
 * Discard mode: every packet a writer has closed (slot < produced) is
 * written out and handed back by advancing `consumed`.  At the end (stop,
 * or the process gone) the open packet is written up to its commit count.
 * Overwrite mode: nothing is drained while recording; at the end the
 * newest packets still in the ring are copied, each checked against its
 * slot's sequence number so that a packet overwritten while being copied
 * is dropped (common/ringbuf-layout.h).
 *
 * The buffer is shared with a program we do not trust to be sane (it may
 * have crashed mid-write): every size read from it is bounded, and the open
 * packet is cut after its last whole event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "session.h"
#include "tracekit/runtime.h"

#define MAX_BUFFER_BYTES (4ull << 30)

static bool header_sane(const struct tk_rb_header *h, size_t size)
{
	uint64_t need;

	if (h->magic != TK_RB_MAGIC || h->version != TK_RB_VERSION ||
	    h->nsub < 2 || h->nsub > TK_RB_MAX_SUBBUF ||
	    h->subbuf_size < 4096 || h->subbuf_size % 4096 ||
	    h->header_size % 4096 || h->mode > TK_RB_OVERWRITE)
		return false;
	if (h->header_size < sizeof(*h) + h->nsub * sizeof(struct tk_rb_slot))
		return false;
	need = h->header_size + (uint64_t)h->nsub * h->subbuf_size;
	return need <= size;
}

int consumer_add_stream(struct rec_session *s, struct rec_process *p, int fd,
			uint32_t tid, const char *comm)
{
	struct rec_stream *st, **streams;
	struct stat sb;
	void *map;

	if (fstat(fd, &sb) < 0 || sb.st_size < 4096 ||
	    (uint64_t)sb.st_size > MAX_BUFFER_BYTES) {
		close(fd);
		return -EINVAL;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	if (!header_sane(map, (size_t)sb.st_size)) {
		munmap(map, (size_t)sb.st_size);
		return -EINVAL;
	}
	st = calloc(1, sizeof(*st));
	streams = realloc(s->streams, (s->nstreams + 1) * sizeof(*streams));
	if (!st || !streams) {
		free(st);
		if (streams)
			s->streams = streams;
		munmap(map, (size_t)sb.st_size);
		return -ENOMEM;
	}
	s->streams = streams;
	st->proc = p;
	st->tid = tid;
	snprintf(st->comm, sizeof(st->comm), "%s", comm);
	memcpy(st->made_comm, st->comm, sizeof(st->comm));
	st->hdr = map;
	st->map_size = (size_t)sb.st_size;
	/* The program may scribble over its header later: keep the geometry
	 * that was checked, never read it again. */
	st->nsub = st->hdr->nsub;
	st->subbuf_size = st->hdr->subbuf_size;
	st->mode = st->hdr->mode;
	st->base = (char *)map + st->hdr->header_size;
	st->out_fd = -1;
	st->instance = s->next_instance++;
	s->streams[s->nstreams++] = st;
	return 0;
}

static int open_output(struct rec_session *s, struct rec_stream *st)
{
	char *path;

	for (unsigned n = 0; n < 1000; n++) {
		free(st->file);
		if ((n ? asprintf(&st->file, "user/%u-%u.%u", st->proc->pid,
				  st->tid, n)
		       : asprintf(&st->file, "user/%u-%u", st->proc->pid,
				  st->tid)) < 0) {
			st->file = NULL;
			return -ENOMEM;
		}
		if (asprintf(&path, "%s/%s", s->dir, st->file) < 0)
			return -ENOMEM;
		st->out_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
				  0600);
		free(path);
		if (st->out_fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	snprintf(s->error, sizeof(s->error), "cannot create '%s/%s': %s", s->dir,
		 st->file, strerror(errno));
	s->failed = true;
	return -errno;
}

static uint64_t stream_lost(const struct rec_stream *st)
{
	const struct tk_rb_header *h = st->hdr;

	return h->lost_full + __atomic_load_n(&h->lost_nested, __ATOMIC_RELAXED) +
	       h->lost_big + h->lost_overwritten;
}

/* Write packet bytes [0, len) whose header is @ph (already fixed up). */
static int write_packet(struct rec_session *s, struct rec_stream *st,
			const struct tk_packet_header *ph, const char *body,
			size_t len)
{
	struct iovec iov[2] = {
		{ (void *)ph, sizeof(*ph) },
		{ (void *)(body + sizeof(*ph)), len - sizeof(*ph) },
	};
	size_t left = len;

	if (st->out_fd < 0 && open_output(s, st) < 0)
		return -EIO;
	while (left) {
		ssize_t n = writev(st->out_fd, iov, 2);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (!s->failed)
				snprintf(s->error, sizeof(s->error),
					 "cannot write '%s/%s': %s", s->dir,
					 st->file, strerror(errno));
			s->failed = true;
			return -errno;
		}
		left -= (size_t)n;
		for (int i = 0; i < 2 && n > 0; i++) {
			size_t k = (size_t)n < iov[i].iov_len ? (size_t)n
							      : iov[i].iov_len;

			iov[i].iov_base = (char *)iov[i].iov_base + k;
			iov[i].iov_len -= k;
			n -= (ssize_t)k;
		}
	}
	st->bytes += len;
	st->packets++;
	return 0;
}

static void fix_header(const struct rec_stream *st, struct tk_packet_header *ph,
		       uint64_t bytes)
{
	ph->magic = TK_CTF_MAGIC;
	ph->stream_id = st->proc->class_id;
	ph->stream_instance_id = st->instance;
	ph->content_size = bytes * 8;
	ph->packet_size = bytes * 8;
}

/* The whole events of an open packet: walk them with the process's
 * descriptors, stop at the first that does not decode.  Returns the bytes
 * they cover and counts them. */
static uint64_t whole_events(const struct rec_stream *st, const char *pkt,
			     uint64_t commit, uint64_t *count)
{
	const struct rec_process *p = st->proc;
	struct tk_value vals[256];
	uint64_t off = sizeof(struct tk_packet_header);

	uint64_t last = ((const struct tk_packet_header *)pkt)->timestamp_begin;

	*count = 0;
	while (commit - off >= TK__HEADER_COMPACT) {
		const struct tk_event_info *ev = NULL;
		unsigned hsize;
		uint16_t id;
		uint64_t ts;
		long n;

		hsize = tk_event_header_decode(pkt + off, commit - off, last, &id,
					       &ts);
		if (!hsize)
			break;
		for (unsigned i = 0; i < p->nevents; i++)
			if (p->events[i].id == id) {
				ev = &p->events[i];
				break;
			}
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

static unsigned drain_stream(struct rec_session *s, struct rec_stream *st)
{
	unsigned n = 0;

	struct tk_rb_header *h = st->hdr;
	uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);

	if (st->mode != TK_RB_DISCARD || st->done)
		return 0;
	while (st->consumed < produced && !s->failed) {
		uint32_t slot = (uint32_t)(st->consumed % st->nsub);
		const char *pkt = st->base + (size_t)slot * st->subbuf_size;
		uint64_t commit = __atomic_load_n(&h->slot[slot].commit,
						  __ATOMIC_ACQUIRE);
		struct tk_packet_header ph;

		if (commit >= sizeof(ph) && commit <= st->subbuf_size) {
			memcpy(&ph, pkt, sizeof(ph));
			fix_header(st, &ph, commit);
			if (write_packet(s, st, &ph, pkt, commit) < 0)
				return n;
			st->events += h->slot[slot].events;
		}
		st->consumed++;
		n++;
		__atomic_store_n(&h->consumed, st->consumed, __ATOMIC_RELEASE);
	}
	return n;
}

unsigned consumer_drain(struct rec_session *s)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->nstreams; i++)
		n += drain_stream(s, s->streams[i]);
	return n;
}

/* Copy packet @seq out of the ring and write it, if it is still there. */
static void write_copy(struct rec_session *s, struct rec_stream *st,
		       uint64_t seq, bool open, char *copy)
{
	struct tk_rb_header *h = st->hdr;
	uint32_t slot = (uint32_t)(seq % st->nsub);
	struct tk_rb_slot *sl = &h->slot[slot];
	uint64_t commit, count, end;
	struct tk_packet_header ph;

	if (__atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE) != seq)
		return;
	commit = __atomic_load_n(&sl->commit, __ATOMIC_ACQUIRE);
	if (commit < sizeof(ph) || commit > st->subbuf_size)
		return;
	memcpy(copy, st->base + (size_t)slot * st->subbuf_size, commit);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&sl->seq, __ATOMIC_RELAXED) != seq)
		return; /* overwritten while we copied */
	memcpy(&ph, copy, sizeof(ph));
	if (open) {
		end = whole_events(st, copy, commit, &count);
		if (count == 0)
			return;
		ph.timestamp_end = tk__clock();
		ph.events_discarded = stream_lost(st);
	} else {
		end = commit;
		count = sl->events;
	}
	fix_header(st, &ph, end);
	if (write_packet(s, st, &ph, copy, end) == 0)
		st->events += count;
}

/* A header name that is still the one of the buffer's birth says nothing
 * (the thread may have died without writing it): what /proc last said is
 * kept. */
void consumer_header_name(struct rec_stream *st)
{
	char comm[sizeof(st->comm)];

	memcpy(comm, (const char *)st->hdr->comm, sizeof(st->hdr->comm));
	comm[sizeof(st->hdr->comm)] = '\0';
	if (comm[0] && strcmp(comm, st->made_comm))
		memcpy(st->comm, comm, sizeof(comm));
}

static void flush_stream(struct rec_session *s, struct rec_stream *st)
{
	struct tk_rb_header *h = st->hdr;
	uint64_t produced, first;
	char *copy;

	if (st->done)
		return;
	drain_stream(s, st);
	copy = malloc(st->subbuf_size);
	if (!copy)
		return;
	produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
	/* The ring holds packets produced - nsub .. produced: the oldest is
	 * gone if the writer has opened `produced` (write_copy checks). */
	first = st->consumed;
	if (st->mode == TK_RB_OVERWRITE && produced > st->nsub &&
	    produced - st->nsub > first)
		first = produced - st->nsub;
	for (uint64_t seq = first; seq <= produced && !s->failed; seq++)
		write_copy(s, st, seq, seq == produced, copy);
	free(copy);
	consumer_header_name(st);
	st->done = true;
}

void consumer_flush_all(struct rec_session *s)
{
	for (unsigned i = 0; i < s->nstreams; i++)
		flush_stream(s, s->streams[i]);
	for (unsigned i = 0; i < s->nstreams; i++) {
		struct rec_stream *st = s->streams[i];

		if (st->out_fd >= 0 && fsync(st->out_fd) < 0 && !s->failed) {
			snprintf(s->error, sizeof(s->error),
				 "cannot write '%s/%s': %s", s->dir, st->file,
				 strerror(errno));
			s->failed = true;
		}
	}
}

void consumer_stream_stats(const struct rec_stream *st,
			   struct tk_trace_stream *out)
{
	const struct tk_rb_header *h = st->hdr;

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
	out->lost_full = h->lost_full;
	out->lost_nested = __atomic_load_n(&h->lost_nested, __ATOMIC_RELAXED);
	out->lost_big = h->lost_big;
	out->lost_overwritten = h->lost_overwritten;
}
