/* SPDX-License-Identifier: MIT */
/*
 * stream.c - per-thread buffers: the slow path of the writer.
 *
 * The fast path (runtime.h) only ever writes inside the current packet.
 * Everything else happens here, on the thread that fires the event:
 *
 *   - first event of a thread in a session: create the buffer (memfd,
 *     pre-faulted), hand it to the recorder (SCM_RIGHTS), open packet 0;
 *   - packet full: close it (CTF packet context, slot commit, `produced`),
 *     open the next one or, with no free packet in discard mode, count the
 *     event as lost;
 *   - session changed (tk_session_gen moved): close the packet, mark the
 *     buffer finished, start again in the new session's buffer;
 *   - thread exit: close the packet and mark the buffer closed;
 *   - fork: the child forgets the parent's buffers without touching them.
 *
 * The layout of a buffer is in ringbuf-layout.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"
#include "ringbuf-layout.h"

struct tk_stream {
	struct tk_rb_header *hdr;
	char *base; /* first packet */
	size_t map_size;
	uint64_t gen;
	uint64_t seq; /* number of the packet being written */
	uint32_t payload_max;
	uint64_t lost; /* lost by this thread outside signal nesting */
	struct tk__thread *thread;
	struct tk_stream *next;
};

TK_EXPORT __thread struct tk__thread tk__thread
	__attribute__((tls_model("initial-exec")));

uint64_t tk_session_gen = 1;
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tk_stream *streams;
static pthread_key_t exit_key;

static struct tk_rb_slot *slot_of(struct tk_stream *s, uint64_t seq)
{
	return &s->hdr->slot[seq % s->hdr->nsub];
}

static uint64_t lost_so_far(struct tk_stream *s)
{
	return s->lost + __atomic_load_n(&s->hdr->lost_nested, __ATOMIC_RELAXED);
}

/* A packet was just closed: if the recorder sleeps, wake it, once.  The
 * fence pairs with the one in consumer.c consumer_sleep_begin, between its
 * store of sleeping and its loads of produced: either it sees our packet or
 * we see it sleeping (docs/design-notes.md). */
static void wake_recorder(struct tk_rb_header *h)
{
	static const uint64_t one = 1;
	int fd;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&h->sleeping, __ATOMIC_RELAXED) ||
	    !__atomic_exchange_n(&h->sleeping, 0, __ATOMIC_RELAXED))
		return;
	fd = __atomic_load_n(&tk_wake_fd, __ATOMIC_ACQUIRE);
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* a full eventfd wakes the recorder anyway */
	}
}

static void packet_close(struct tk_stream *s, struct tk__thread *t,
			 uint64_t tsc)
{
	struct tk_packet_header *ph = (struct tk_packet_header *)t->packet;
	struct tk_rb_slot *sl = slot_of(s, s->seq);
	uint64_t bytes = (uint64_t)(t->pos - t->packet);

	ph->timestamp_end = tsc;
	ph->content_size = bytes * 8;
	ph->packet_size = bytes * 8;
	ph->events_discarded = lost_so_far(s);
	sl->events = t->events;
	s->hdr->events += t->events;
	__atomic_store_n(&sl->commit, bytes, __ATOMIC_RELEASE);
	s->seq++;
	/* pairs with the acquire load of produced in consumer.c drain_stream */
	__atomic_store_n(&s->hdr->produced, s->seq, __ATOMIC_RELEASE);
	wake_recorder(s->hdr);
	t->packet = NULL;
	t->pos = NULL;
	__atomic_store_n(&t->end, NULL, __ATOMIC_RELAXED);
}

static int packet_open(struct tk_stream *s, struct tk__thread *t,
		       uint64_t tsc)
{
	struct tk_rb_header *h = s->hdr;
	struct tk_rb_slot *sl = slot_of(s, s->seq);
	char *pkt = s->base + (size_t)(s->seq % h->nsub) * h->subbuf_size;
	struct tk_packet_header *ph = (struct tk_packet_header *)pkt;

	if (h->mode == TK_RB_DISCARD) {
		uint64_t consumed = __atomic_load_n(&h->consumed,
						    __ATOMIC_ACQUIRE);

		if (s->seq - consumed >= h->nsub)
			return -ENOSPC;
	} else if (sl->seq != UINT64_MAX) {
		h->lost_overwritten += sl->events;
		s->lost += sl->events;
	}
	/* Seqlock: the new number is visible before any byte of the
	 * packet changes, so a reader copying the old one notices. */
	__atomic_store_n(&sl->seq, s->seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	sl->events = 0;
	memset(ph, 0, sizeof(*ph));
	ph->magic = TK_CTF_MAGIC;
	ph->timestamp_begin = tsc;
	ph->packet_seq_num = s->seq;
	ph->cpu_id = (uint32_t)sched_getcpu();
	ph->pid = h->pid;
	ph->tid = h->tid;
	__atomic_store_n(&sl->commit, sizeof(*ph), __ATOMIC_RELEASE);
	t->packet = pkt;
	t->last_tsc = tsc; /* the packet's timestamp_begin: readers start here */
	t->pos = pkt + sizeof(*ph);
	t->commit = &sl->commit;
	t->events = 0;
	__atomic_store_n(&t->end, pkt + h->subbuf_size, __ATOMIC_RELAXED);
	return 0;
}

static void stream_unlink(struct tk_stream *s)
{
	pthread_mutex_lock(&streams_lock);
	for (struct tk_stream **pp = &streams; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&streams_lock);
}

/* Close the thread's buffer for good: last packet, closed flag, unmap. */
static void stream_finish(struct tk__thread *t, uint64_t tsc)
{
	struct tk_stream *s = t->stream;

	if (!s)
		return;
	if (t->packet)
		packet_close(s, t, tsc);
	__atomic_store_n(&s->hdr->closed, 1, __ATOMIC_RELEASE);
	stream_unlink(s);
	t->stream = NULL;
	munmap(s->hdr, s->map_size);
	free(s);
}

static int send_stream(struct tk_stream *s, int fd)
{
	struct tk_msg_stream m;

	memset(&m, 0, sizeof(m));
	m.m.type = TK_MSG_STREAM;
	m.m.len = sizeof(m);
	m.tid = s->hdr->tid;
	m.size = s->map_size;
	memcpy(m.comm, s->hdr->comm, sizeof(m.comm));
	return tk_session_send(&m, sizeof(m), fd);
}

static struct tk_stream *stream_create(struct tk__thread *t, uint64_t gen)
{
	struct tk_geometry c = tk_config_geometry();
	struct tk_stream *s;
	struct tk_rb_header *h;
	size_t header_size, size;
	int fd;

	if (!c.active || c.nsub < 2 || c.nsub > TK_RB_MAX_SUBBUF ||
	    c.subbuf_size < 4096 || c.subbuf_size % 4096)
		return NULL;
	header_size = sizeof(*h) + c.nsub * sizeof(struct tk_rb_slot);
	header_size = (header_size + 4095) & ~(size_t)4095;
	size = header_size + (size_t)c.nsub * c.subbuf_size;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	fd = memfd_create("tracekit-buffer", MFD_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (ftruncate(fd, (off_t)size) < 0)
		goto fail_fd;
	/* Populated now so that no event pays for a page fault. */
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		 fd, 0);
	if (h == MAP_FAILED)
		goto fail_fd;
	h->magic = TK_RB_MAGIC;
	h->version = TK_RB_VERSION;
	h->pid = (uint32_t)getpid();
	h->tid = (uint32_t)syscall(SYS_gettid);
	h->nsub = c.nsub;
	h->subbuf_size = c.subbuf_size;
	h->header_size = (uint32_t)header_size;
	h->mode = c.mode;
	prctl(PR_GET_NAME, h->comm, 0, 0, 0);
	for (uint32_t i = 0; i < c.nsub; i++)
		h->slot[i].seq = UINT64_MAX;
	s->hdr = h;
	s->base = (char *)h + header_size;
	s->map_size = size;
	s->gen = gen;
	s->payload_max = c.subbuf_size - (uint32_t)sizeof(struct tk_packet_header);
	s->thread = t;
	send_stream(s, fd);
	close(fd);

	pthread_mutex_lock(&streams_lock);
	s->next = streams;
	streams = s;
	pthread_mutex_unlock(&streams_lock);
	t->stream = s;
	__atomic_fetch_add(&h->lost_nested,
			   __atomic_exchange_n(&t->lost_pending, 0, __ATOMIC_RELAXED),
			   __ATOMIC_RELAXED);
	pthread_setspecific(exit_key, s);
	return s;

fail_fd:
	close(fd);
fail:
	free(s);
	return NULL;
}

TK_EXPORT char *tk__reserve_slow(uint32_t size, uint64_t tsc)
{
	struct tk__thread *t = &tk__thread;
	struct tk_stream *s = t->stream;
	uint64_t gen = __atomic_load_n(&tk_session_gen, __ATOMIC_SEQ_CST);

	if (s && s->gen != gen) {
		stream_finish(t, tsc);
		s = NULL;
	}
	if (!s) {
		if (tk_session_child_pending())
			tk_session_reconnect_child();
		gen = __atomic_load_n(&tk_session_gen, __ATOMIC_SEQ_CST);
		s = stream_create(t, gen);
		if (!s)
			return NULL;
	}
	if (size > s->payload_max) {
		s->hdr->lost_big++;
		s->lost++;
		return NULL;
	}
	if (t->packet)
		packet_close(s, t, tsc);
	if (packet_open(s, t, tsc) < 0) {
		s->hdr->lost_full++;
		s->lost++;
		return NULL;
	}
	/* A session change racing with the store of end above: make sure
	 * the next event looks again (see tk_streams_session_changed). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&tk_session_gen, __ATOMIC_SEQ_CST) != s->gen)
		__atomic_store_n(&t->end, NULL, __ATOMIC_RELAXED);
	return t->pos;
}

void tk_stream_prepare(void)
{
	struct tk__thread *t = &tk__thread;

	if (t->stream || t->busy)
		return;
	t->busy = 1; /* an event of a signal handler meanwhile is counted lost */
	if (tk_session_child_pending())
		tk_session_reconnect_child();
	stream_create(t, __atomic_load_n(&tk_session_gen, __ATOMIC_SEQ_CST));
	__atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}

TK_EXPORT void tk__lost_nested(void)
{
	struct tk_stream *s = tk__thread.stream;

	/* Same thread as the interrupted writer: an atomic add is the only
	 * safe way to count, and this is far from the fast path.  Without a
	 * buffer yet (it is being created), the count waits in the thread. */
	if (s)
		__atomic_fetch_add(&s->hdr->lost_nested, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&tk__thread.lost_pending, 1, __ATOMIC_RELAXED);
}

void tk_streams_session_changed(void)
{
	__atomic_fetch_add(&tk_session_gen, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&streams_lock);
	for (struct tk_stream *s = streams; s; s = s->next)
		__atomic_store_n(&s->thread->end, NULL, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&streams_lock);
}

static void thread_exit(void *arg)
{
	struct tk__thread *t = &tk__thread;

	(void)arg;
	/* Events fired by later destructors count as nested and are
	 * dropped: the buffer is gone. */
	t->busy = 1;
	stream_finish(t, tk__clock());
}

static void fork_prepare(void)
{
	tk_registry_lock();
	pthread_mutex_lock(&streams_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&streams_lock);
	tk_registry_unlock();
}

static void fork_child(void)
{
	struct tk__thread *t = &tk__thread;
	struct tk_stream *s = streams;

	/* The parent's buffers are shared memory the parent still writes:
	 * drop our mappings without a single store into them. */
	while (s) {
		struct tk_stream *next = s->next;

		munmap(s->hdr, s->map_size);
		free(s);
		s = next;
	}
	streams = NULL;
	memset(t, 0, sizeof(*t));
	pthread_setspecific(exit_key, NULL);
	tk_session_gen++;
	pthread_mutex_unlock(&streams_lock);
	tk_registry_unlock();
	tk_session_after_fork_child();
}

void tk_streams_init(void)
{
	pthread_key_create(&exit_key, thread_exit);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
