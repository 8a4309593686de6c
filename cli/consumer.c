/* SPDX-License-Identifier: MIT */
/*
 * consumer.c - drain thread buffers into the trace directory.
 *
 * Discard mode: every packet a writer has closed (slot < produced) is
 * written straight from the shared buffer (drain.c: io_uring, O_DIRECT):
 * its packet header is completed in place (stream id, instance, sizes),
 * the padding up to the next block zeroed, the write submitted; the slot
 * goes back to the writer (`consumed` advances) when the write has
 * completed, in order.  At the end (stop, or the process gone) the open
 * packet is copied, cut after its last whole event, and written.
 * Overwrite mode: nothing is drained while recording; at the end the
 * newest packets still in the ring are copied, each checked against its
 * slot's sequence number so that a packet overwritten while being copied
 * is dropped (lib/ringbuf-layout.h).
 *
 * The buffer is shared with a program we do not trust to be sane (it may
 * have crashed mid-write, or scribble on it): every size and counter read
 * from it is bounded, a counter that cannot be right stops the reading of
 * that stream (said in the summary), and no loop runs longer than the
 * buffer's geometry allows.
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
	if (st) {
		uint32_t nsub = ((struct tk_rb_header *)map)->nsub;

		st->writes = calloc(nsub, sizeof(*st->writes));
		st->written = calloc(nsub, 1);
	}
	if (!st || !streams || !st->writes || !st->written) {
		if (st) {
			free(st->writes);
			free(st->written);
		}
		free(st);
		if (streams)
			s->streams = streams;
		munmap(map, (size_t)sb.st_size);
		return -ENOMEM;
	}
	s->streams = streams;
	st->session = s;
	st->proc = p;
	st->tid = tid;
	snprintf(st->comm, sizeof(st->comm), "%s", comm);
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
		st->out_fd = drain_open(&s->drain, path, &st->direct);
		free(path);
		if (st->out_fd >= 0)
			return 0;
		errno = -st->out_fd;
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

static void fix_header(const struct rec_stream *st, struct tk_packet_header *ph,
		       uint64_t content, uint64_t size)
{
	ph->magic = TK_CTF_MAGIC;
	ph->stream_id = st->proc->class_id;
	ph->stream_instance_id = st->instance;
	ph->content_size = content * 8;
	ph->packet_size = size * 8;
}

/* Stop reading @st: the program has made its counters impossible. */
static void stream_corrupt(struct rec_stream *st, const char *why)
{
	if (!st->corrupt)
		st->corrupt = why;
	st->done = true;
}

/* Events a packet of @commit bytes can hold at most: a program may say
 * anything in slot.events. */
static uint64_t events_bound(uint64_t events, uint64_t commit)
{
	uint64_t most = (commit - sizeof(struct tk_packet_header)) /
			TK_EVENT_HEADER_MIN;

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

static void packet_written(struct drain_req *r, int res);

/* O_DIRECT writes past the end of a file change its size, which ext4
 * does under an exclusive lock with a journal update, one write at a
 * time: measured here, 200-500 MB/s and 0.4-1.5 ms of CPU per MB.  Into
 * space allocated ahead, 400-700 MB/s and 0.1-0.3 ms/MB.  So the file
 * grows ahead of the writes, by half what it has (PREALLOC_MIN to
 * PREALLOC_MAX at a time), and is cut to its contents at the end. */
#define PREALLOC_MIN (4u << 20)
#define PREALLOC_MAX (64u << 20)

static void prealloc(struct rec_stream *st, size_t len)
{
	uint64_t step;

	if (!st->direct || st->off + len <= st->alloc || st->alloc == UINT64_MAX)
		return;
	step = st->alloc / 2;
	step = step < PREALLOC_MIN ? PREALLOC_MIN
	       : step > PREALLOC_MAX ? PREALLOC_MAX : step;
	while (st->alloc < st->off + len)
		st->alloc += step;
	if (fallocate(st->out_fd, 0, 0, (off_t)st->alloc) < 0)
		st->alloc = UINT64_MAX; /* writes extend the file as they go */
}

/* Add the packet at @pkt, @content bytes of it, with @events events, to
 * the write @w: its header completed in place, the padding after it
 * zeroed.  @pkt has room for the padding (a whole sub-buffer, or a copy
 * as large). */
static void add_packet(struct rec_stream *st, struct rec_write *w, char *pkt,
		       size_t content, uint64_t events)
{
	size_t len = padded(st, content);

	fix_header(st, (struct tk_packet_header *)pkt, content, len);
	memset(pkt + content, 0, len - content);
	w->req.iov[w->req.niov++] = (struct iovec){ pkt, len };
	w->count++;
	w->events += events;
}

/* Start the write @w of st's next packets. */
static void start_write(struct rec_session *s, struct rec_stream *st,
			struct rec_write *w)
{
	size_t len = 0;

	for (unsigned i = 0; i < w->req.niov; i++)
		len += w->req.iov[i].iov_len;
	prealloc(st, len);
	w->st = st;
	w->req.done = packet_written;
	w->req.fd = st->out_fd;
	w->req.off = st->off;
	st->off += len;
	drain_write(&s->drain, &w->req);
}

/* Slots whose write completed go back to the writer, in order. */
static void give_back(struct rec_stream *st)
{
	uint64_t c = st->consumed;

	while (c < st->submitted && st->written[c % st->nsub]) {
		st->written[c % st->nsub] = 0;
		c++;
	}
	if (c != st->consumed) {
		st->consumed = c;
		/* pairs with the acquire load of consumed in lib/stream.c
		 * packet_open: the packet's bytes are no longer ours */
		__atomic_store_n(&st->hdr->consumed, c, __ATOMIC_RELEASE);
	}
}

static void packet_written(struct drain_req *r, int res)
{
	struct rec_write *w = (struct rec_write *)r;
	struct rec_stream *st = w->st;

	if (res < 0) {
		write_failed(st->session, st, -res);
		st->lost_write += w->events;
	} else {
		st->bytes += r->len;
		st->packets += w->count;
		st->events += w->events;
	}
	if (w->copy) {
		free(w->copy);
		free(w);
		return;
	}
	for (unsigned i = 0; i < w->count; i++)
		st->written[(w->seq + i) % st->nsub] = 1;
	give_back(st);
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
	while (commit - off >= TK_EVENT_HEADER_MIN) {
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

/* Submit the writes of the packets closed since the last look, those
 * that follow each other in one write: at most one ring's worth, whatever
 * the counters say. */
static unsigned drain_stream(struct rec_session *s, struct rec_stream *st)
{
	struct tk_rb_header *h = st->hdr;
	struct rec_write *w = NULL;
	uint64_t produced;
	unsigned n = 0;

	if (st->mode != TK_RB_DISCARD || st->done)
		return 0;
	/* pairs with the release store of produced in lib/stream.c
	 * packet_close: the slots below it are complete */
	produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
	if (produced < st->submitted || produced - st->consumed > st->nsub) {
		stream_corrupt(st, "its produced counter is out of range");
		return 0;
	}
	if (st->submitted < produced && st->out_fd < 0 && open_output(s, st) < 0)
		return 0;
	while (st->submitted < produced && !s->failed &&
	       (w || drain_room(&s->drain))) {
		uint32_t slot = (uint32_t)(st->submitted % st->nsub);
		char *pkt = st->base + (size_t)slot * st->subbuf_size;
		uint64_t commit = __atomic_load_n(&h->slot[slot].commit,
						  __ATOMIC_ACQUIRE);
		uint64_t events;

		if (commit < sizeof(struct tk_packet_header) ||
		    commit > st->subbuf_size) {
			stream_corrupt(st, "a packet's commit count is out of range");
			break;
		}
		events = events_bound(h->slot[slot].events, commit);
		if (!events) { /* nothing to write: given back at once */
			if (w)
				start_write(s, st, w);
			w = NULL;
			st->written[slot] = 1;
			st->submitted++;
			give_back(st);
			continue;
		}
		if (!w) {
			w = &st->writes[slot];
			memset(w, 0, sizeof(*w));
			w->seq = st->submitted;
		}
		add_packet(st, w, pkt, (size_t)commit, events);
		st->submitted++;
		n++;
		if (w->req.niov == DRAIN_IOV_MAX || slot + 1 == st->nsub) {
			start_write(s, st, w);
			w = NULL;
		}
	}
	if (w)
		start_write(s, st, w);
	return n;
}

static bool drains_live(const struct rec_stream *st)
{
	return st->mode == TK_RB_DISCARD && !st->done;
}

static void set_sleeping(struct rec_session *s, uint32_t v)
{
	for (unsigned i = 0; i < s->nstreams; i++)
		if (drains_live(s->streams[i]))
			__atomic_store_n(&s->streams[i]->hdr->sleeping, v,
					 __ATOMIC_RELAXED);
}

bool consumer_sleep_begin(struct rec_session *s)
{
	set_sleeping(s, 1);
	/* pairs with the fence in lib/stream.c wake_recorder: either we see
	 * the packet it closed, or it sees sleeping and wakes us */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < s->nstreams; i++) {
		struct rec_stream *st = s->streams[i];

		if (drains_live(st) &&
		    __atomic_load_n(&st->hdr->produced, __ATOMIC_ACQUIRE) !=
			    st->submitted) {
			set_sleeping(s, 0);
			return false;
		}
	}
	return true;
}

void consumer_sleep_end(struct rec_session *s)
{
	uint64_t n;

	set_sleeping(s, 0);
	if (read(s->wake_fd, &n, sizeof(n)) < 0) {
		/* nothing was signalled (EAGAIN) */
	}
}

unsigned consumer_drain(struct rec_session *s)
{
	unsigned n = drain_reap(&s->drain);

	for (unsigned i = 0; i < s->nstreams; i++)
		n += drain_stream(s, s->streams[i]);
	drain_submit(&s->drain);
	return n;
}

/* Copy packet @seq out of the ring and write it, if it is still there
 * (overwrite mode, or the open packet). */
static void write_copy(struct rec_session *s, struct rec_stream *st,
		       uint64_t seq, bool open)
{
	struct tk_rb_header *h = st->hdr;
	uint32_t slot = (uint32_t)(seq % st->nsub);
	struct tk_rb_slot *sl = &h->slot[slot];
	uint64_t commit, count, end;
	struct tk_packet_header *ph;
	struct rec_write *w;
	char *copy;

	if (__atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE) != seq)
		return;
	commit = __atomic_load_n(&sl->commit, __ATOMIC_ACQUIRE);
	if (commit < sizeof(*ph) || commit > st->subbuf_size)
		return;
	if (posix_memalign((void **)&copy, DRAIN_ALIGN, st->subbuf_size))
		return;
	memcpy(copy, st->base + (size_t)slot * st->subbuf_size, commit);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&sl->seq, __ATOMIC_RELAXED) != seq) {
		free(copy); /* overwritten while we copied */
		return;
	}
	ph = (struct tk_packet_header *)copy;
	if (open) {
		end = whole_events(st, copy, commit, &count);
		ph->timestamp_end = tk__clock();
		ph->events_discarded = stream_lost(st);
	} else {
		end = commit;
		count = events_bound(sl->events, commit);
	}
	w = calloc(1, sizeof(*w));
	if (!count || !w || (st->out_fd < 0 && open_output(s, st) < 0)) {
		free(w);
		free(copy);
		return;
	}
	w->copy = copy;
	add_packet(st, w, copy, (size_t)end, count);
	start_write(s, st, w);
}

static void flush_stream(struct rec_session *s, struct rec_stream *st)
{
	struct tk_rb_header *h = st->hdr;
	uint64_t produced, first;

	if (st->done)
		return;
	/* closed packets first: the ring may be full of them (a few rings'
	 * worth at most: the program was told to stop) */
	for (unsigned k = 0; k < 4 && drain_stream(s, st) && !st->done &&
			    !s->failed; k++) {
		drain_submit(&s->drain);
		if (!drain_room(&s->drain))
			drain_wait_all(&s->drain);
		drain_reap(&s->drain);
	}
	if (st->done)
		return;
	produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
	/* The ring holds packets produced - nsub .. produced: the oldest is
	 * gone if the writer has opened `produced` (write_copy checks). */
	first = st->submitted;
	if (st->mode == TK_RB_OVERWRITE) {
		first = produced > st->nsub ? produced - st->nsub : 0;
		if (first < st->submitted)
			first = st->submitted;
	}
	if (produced < first || produced - first > st->nsub) {
		stream_corrupt(st, "its produced counter is out of range");
		return;
	}
	for (uint64_t seq = first; seq <= produced && !s->failed; seq++) {
		if (!drain_room(&s->drain))
			drain_wait_all(&s->drain);
		write_copy(s, st, seq, seq == produced);
	}
	drain_submit(&s->drain);
	st->done = true;
}

void consumer_flush_all(struct rec_session *s)
{
	for (unsigned i = 0; i < s->nstreams; i++)
		flush_stream(s, s->streams[i]);
	drain_wait_all(&s->drain);
	for (unsigned i = 0; i < s->nstreams; i++) {
		struct rec_stream *st = s->streams[i];

		if (st->out_fd < 0)
			continue;
		if (st->alloc > st->off && ftruncate(st->out_fd, (off_t)st->off) < 0)
			write_failed(s, st, errno);
		if (fsync(st->out_fd) < 0)
			write_failed(s, st, errno);
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
	out->lost_full = h->lost_full + st->lost_write;
	out->lost_nested = __atomic_load_n(&h->lost_nested, __ATOMIC_RELAXED);
	out->lost_big = h->lost_big;
	out->lost_overwritten = h->lost_overwritten;
}
