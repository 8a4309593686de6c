/* SPDX-License-Identifier: MIT */
/*
 * test-ringbuf.c - the buffer protocol under stress, in one process: the
 * runtime's writer (tracekit/runtime.h tk__reserve and tk__commit, the
 * slow path of lib/stream.c, the arena of lib/arena.c) in threads against
 * the recorder's reader (cli/consumer.c and cli/drain.c, in a session
 * that cli/session.c makes and frees, driven as its session_poll drives
 * them: drain, sleep until a writer wakes it, drain again), as the
 * kernel's ring buffer startup test runs writers against a reader.
 *
 * Each writer numbers its events (seq) and fills each with bytes that
 * depend on its number and the seq, of a length that varies, and notes
 * which events it committed and which it was told were lost.  The
 * recorder writes its files; the test reads them back and checks:
 *
 *   - every record intact (its length and every byte as written: a torn
 *     or overwritten record fails), in a well-formed packet of the right
 *     stream, the seqs of a stream strictly increasing, none twice;
 *   - per thread: recorded + lost == written, lost as the recorder
 *     counts it (its loss counters); in discard mode the recorded events
 *     are exactly those the writer committed, and each packet's
 *     events_discarded is exactly the losses before it;
 *   - the recorder's own counts (events per stream) match the files.
 *
 * Phases: discard with bursts (the recorder sleeps and is woken), a
 * discard flood (most events lost), overwrite, and both modes stopped
 * while the writers still write (the recorder copies open and
 * overwritten packets: the seqlock of write_copy).  Small packets, few
 * slots and a small pool, so that every path (inline page, empty pool,
 * pool growth, full ring, overwrite of a thread's own oldest packet,
 * descriptor recycling) is taken many times.  Built with
 * -Db_sanitize=thread too (tests/run), where the event counts are smaller.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/record-functrace.h"
#include "cli/session.h"
#include "lib/internal.h"
#include "tk-test.h"

#if defined(__SANITIZE_THREAD__)
#define TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN 1
#endif
#endif
#ifdef TSAN
#define SCALE 8 /* ~10 times slower */
#else
#define TSAN 0
#define SCALE 1
#endif

#define EV_ID 7
#define CLASS_ID 1
#define MAX_WRITERS 16
#define PAYLOAD_FIXED 16 /* u32 writer, u64 seq, u32 length of the bytes */

/* --------------------------------------------------- ThreadSanitizer
 *
 * The recorder maps the process's memfds again (cli/consumer.c map_fd), as
 * it does from its own process: the same bytes at other addresses.
 * ThreadSanitizer knows memory by its address, so it would see neither
 * the writers' release stores pair with the recorder's acquire loads nor
 * a race between them.  Under it, the recorder's mmap of the arena gets
 * the writers' mapping, and its munmap leaves it (the link wraps both,
 * mmap64 as the build's 64-bit file offsets call it; elsewhere they only
 * pass through).
 */
void *__real_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off);
int __real_munmap(void *addr, size_t len);

static struct shared_map {
	int fd;     /* the memfd the recorder is about to map, or -1 */
	void *addr; /* the writers' mapping of it */
	size_t len;
	bool lent;  /* the recorder has it */
} shared[2] = { { .fd = -1 }, { .fd = -1 } };

void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off);
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	for (unsigned i = 0; TSAN && i < 2; i++)
		if (fd >= 0 && shared[i].fd == fd && shared[i].len == len &&
		    !off && !addr && (flags & MAP_SHARED)) {
			shared[i].lent = true;
			return shared[i].addr;
		}
	return __real_mmap64(addr, len, prot, flags, fd, off);
}

int __wrap_munmap(void *addr, size_t len);
int __wrap_munmap(void *addr, size_t len)
{
	for (unsigned i = 0; i < 2; i++)
		if (shared[i].lent && shared[i].addr == addr) {
			shared[i].lent = false;
			return 0;
		}
	return __real_munmap(addr, len);
}

/* Under ThreadSanitizer the recorder writes with pwritev, whose reads of
 * the packets it checks (the kernel's reads for io_uring it cannot see):
 * a packet read before the writer's release store of it is a race. */
struct io_uring;
int __real_io_uring_queue_init(unsigned entries, struct io_uring *ring,
			       unsigned flags);
int __wrap_io_uring_queue_init(unsigned entries, struct io_uring *ring,
			       unsigned flags);
int __wrap_io_uring_queue_init(unsigned entries, struct io_uring *ring,
			       unsigned flags)
{
	if (TSAN)
		return -ENOSYS;
	return __real_io_uring_queue_init(entries, ring, flags);
}

#if TSAN
/* The recorder copies a packet a writer may be overwriting (an open
 * packet, or any in overwrite mode) and keeps the copy only if the slot's
 * number did not change meanwhile (the seqlock of write_copy): a race by
 * design, which the checks of the records judge instead.  Only that copy
 * (seqlock_copy, the memcpy alone) is excused: every other
 * access of write_copy is checked. */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
	return "race:seqlock_copy\n";
}
#endif

/* ------------------------------------------------------------ the records */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	return x;
}

/* The bytes of writer @w's event @seq: 0 to 150 of them (a packet of
 * 4 KiB holds ~40). */
static uint32_t rec_len(unsigned w, uint64_t seq)
{
	return (uint32_t)(mix(seq * MAX_WRITERS + w) % 151);
}

static uint8_t rec_byte(unsigned w, uint64_t seq, uint32_t i)
{
	return (uint8_t)(mix(seq * MAX_WRITERS + w + 1) >> (i % 8 * 8)) ^
	       (uint8_t)(i * 131);
}

/* The event as a site writes it, through the runtime's fast path. */
static bool rec_write(unsigned w, uint64_t seq)
{
	uint32_t len = rec_len(w, seq), wi = w;
	char *p = tk__reserve(PAYLOAD_FIXED + len, EV_ID);

	if (!p)
		return false;
	memcpy(p, &wi, 4);
	memcpy(p + 4, &seq, 8);
	memcpy(p + 12, &len, 4);
	for (uint32_t i = 0; i < len; i++)
		p[PAYLOAD_FIXED + i] = (char)rec_byte(w, seq, i);
	tk__commit(p + PAYLOAD_FIXED + len);
	return true;
}

/* The descriptor the recorder decodes open packets with (as a process
 * announces it). */
static struct tk_field_desc ev_fields[3] = {
	{ .name = "writer", .kind = TK_KIND_UINT, .size = 4 },
	{ .name = "seq", .kind = TK_KIND_UINT, .size = 8 },
	{ .name = "bytes", .kind = TK_KIND_BYTES },
};

/* ------------------------------------------------------------ the writers */

struct phase {
	const char *name;
	uint32_t mode;
	unsigned writers; /* at once */
	unsigned waves;   /* of writers, one after the other */
	uint64_t events;  /* per writer */
	unsigned burst;   /* events between two pauses, 0: no pause */
	uint32_t slots, pool_init, pool_start, pool_max;
	uint32_t block_ms; /* --block: writers wait for space */
	bool stop_early;  /* the recorder stops while the writers write */
	bool late;        /* the recorder's first look comes after every
			   * thread of the first wave has its stream */
	unsigned sessions; /* recordings one after the other (0: 1) */
};

/* What the recordings of a phase did, in all. */
struct totals {
	uint64_t threads, events, recorded, lost, streams, sleeps, wakeups;
};

struct writer {
	pthread_t thread;
	unsigned index;
	const struct phase *ph;
	pid_t tid;
	uint64_t written;
	uint8_t *ok;       /* [events]: committed */
	uint8_t *recorded; /* [events]: found in the trace */
	uint64_t *lost_upto; /* [events + 1]: losses before each event */
	uint64_t lost;     /* as the recorder counts it */
	unsigned streams;
};

static int writers_stop;       /* stop_early: the writers stop */
static unsigned writers_started; /* threads past their first event */
static uint64_t writers_total; /* events written by all, so far */

static void pause_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	const struct phase *ph = w->ph;
	uint64_t seq;

	w->tid = gettid();
	for (seq = 0; seq < ph->events &&
		      !__atomic_load_n(&writers_stop, __ATOMIC_RELAXED); seq++) {
		w->ok[seq] = rec_write(w->index, seq);
		if (!seq)
			__atomic_fetch_add(&writers_started, 1, __ATOMIC_RELAXED);
		if (ph->burst && seq % ph->burst == ph->burst - 1)
			pause_us(200);
		if (seq % 1024 == 1023)
			__atomic_fetch_add(&writers_total, 1024, __ATOMIC_RELAXED);
	}
	w->written = seq;
	return NULL;
}

/* ----------------------------------------------------------- the recorder */

static int recorder_stop;

/* One turn of the recorder's loop, as cli/session.c session_poll: the
 * process sends nothing while recording here. */
static void recorder_turn(struct rec_session *s, int timeout_us)
{
	struct pollfd pfd[2] = {
		{ s->wake_fd, POLLIN, 0 },
		{ drain_poll_fd(&s->drain), POLLIN, 0 },
	};
	struct timespec ts = { 0, 0 };
	bool asleep = false;

	if (!consumer_drain(s)) {
		int us = consumer_sleep_begin(s, timeout_us);

		asleep = us > 0;
		s->sleeps += asleep;
		ts = (struct timespec){ us / 1000000, us % 1000000 * 1000 };
	}
	ppoll(pfd, 2, &ts, NULL);
	if (asleep)
		consumer_sleep_end(s);
	consumer_drain(s);
}

/* The process's control thread, for what it does while recording (as
 * lib/control.c map_made): the recorder made pool chunks (MADE) and
 * offered them already; map them here too, in the background. */
struct control {
	pthread_t thread;
	int fd;
	struct tk_arena_map *arena;
};

static void *control_main(void *arg)
{
	struct control *c = arg;
	struct tk_arena_map *a = c->arena;
	struct tk_msg_made m;

	while (recv(c->fd, &m, sizeof(m), 0) == sizeof(m)) {
		if (m.m.type != TK_MSG_MADE)
			continue;
		if (m.chunks > a->geom.pool_max)
			m.chunks = a->geom.pool_max;
		if (m.chunks > a->mapped &&
		    madvise(a->pool + (size_t)a->mapped * a->geom.chunk_size,
			    (size_t)(m.chunks - a->mapped) * a->geom.chunk_size,
			    MADV_POPULATE_WRITE) == 0)
			a->mapped = m.chunks;
	}
	return NULL;
}

static void *recorder_main(void *arg)
{
	struct rec_session *s = arg;

	while (!__atomic_load_n(&recorder_stop, __ATOMIC_ACQUIRE) && !s->failed)
		recorder_turn(s, 100000);
	return NULL;
}

/* ------------------------------------------------------ reading the trace */

/* The file @path of the trace directory @dir_fd, whole. */
static char *read_all(int dir_fd, const char *path, size_t *size)
{
	struct stat sb;
	char *buf = NULL;
	int fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &sb) < 0 || !(buf = malloc(sb.st_size + 1)) ||
	    read(fd, buf, sb.st_size) != sb.st_size) {
		fprintf(stderr, "cannot read '%s': %s\n", path, strerror(errno));
		free(buf);
		buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	*size = buf ? (size_t)sb.st_size : 0;
	return buf;
}

/* Losses of writer @w before event @seq (it noted them). */
static uint64_t lost_before(const struct writer *w, uint64_t seq)
{
	return w->lost_upto[seq < w->written ? seq : w->written];
}

/* Check the stream file of @st against what the writers noted; marks the
 * events found in writer->recorded.  Returns the events read. */
static uint64_t check_stream(const struct phase *ph, struct writer *ws,
			     unsigned nw, int dir_fd,
			     const struct tk_trace_stream *st)
{
	size_t size, off = 0;
	char *buf;
	struct writer *w = NULL;
	uint64_t count = 0, next_seq = 0, packet = 0;
	bool first_packet = true;

	for (unsigned i = 0; i < nw; i++)
		if ((uint32_t)ws[i].tid == st->tid)
			w = &ws[i];
	CHECK(w != NULL);
	if (!w)
		return 0;
	w->streams++;
	w->lost += st->lost_full + st->lost_nested + st->lost_big +
		   st->lost_overwritten;
	if (!st->file) {
		/* nothing to write: every packet was overwritten while
		 * the recorder copied it (overwrite, stopped early) */
		CHECK(ph->mode == TK_RB_OVERWRITE && ph->stop_early);
		CHECK_INT(st->events, 0);
		return 0;
	}
	buf = read_all(dir_fd, st->file, &size);
	CHECK(buf != NULL);
	if (!buf)
		return 0;
	while (off < size) {
		struct tk_packet_header ph_;
		uint64_t content, psize, pos, last, first_seq = UINT64_MAX;
		bool last_packet;

		CHECK(size - off >= sizeof(ph_));
		if (size - off < sizeof(ph_))
			break;
		memcpy(&ph_, buf + off, sizeof(ph_));
		content = ph_.content_size / 8;
		psize = ph_.packet_size / 8;
		CHECK_INT(ph_.magic, TK_CTF_MAGIC);
		CHECK_INT(ph_.stream_id, CLASS_ID);
		CHECK_INT(ph_.stream_instance_id, st->instance);
		CHECK_INT(ph_.pid, getpid());
		CHECK_INT(ph_.tid, st->tid);
		CHECK(content >= sizeof(ph_) && content <= psize &&
		      psize <= size - off);
		if (!(content >= sizeof(ph_) && content <= psize &&
		      psize <= size - off))
			break;
		/* packet numbers: one after the other while drained, with
		 * gaps where packets were overwritten */
		if (!first_packet && ph->mode == TK_RB_DISCARD)
			CHECK_INT(ph_.packet_seq_num, packet + 1);
		else if (!first_packet)
			CHECK(ph_.packet_seq_num > packet);
		packet = ph_.packet_seq_num;
		first_packet = false;
		last_packet = off + psize == size;
		pos = sizeof(ph_);
		last = ph_.timestamp_begin;
		while (pos < content) {
			const char *r = buf + off + pos;
			uint32_t wi, len;
			uint64_t seq, ts;
			uint16_t id;
			unsigned h = tk_event_header_decode(r, content - pos, last,
							    &id, &ts);
			bool intact = true;

			CHECK(h != 0 && content - pos - h >= PAYLOAD_FIXED);
			if (!h || content - pos - h < PAYLOAD_FIXED)
				break;
			CHECK_INT(id, EV_ID);
			last = ts;
			r += h;
			memcpy(&wi, r, 4);
			memcpy(&seq, r + 4, 8);
			memcpy(&len, r + 12, 4);
			CHECK_INT(wi, w->index);
			CHECK(seq < w->written);
			if (wi != w->index || seq >= w->written)
				break;
			CHECK_INT(len, rec_len(wi, seq));
			CHECK(len <= content - pos - h - PAYLOAD_FIXED);
			if (len != rec_len(wi, seq) ||
			    len > content - pos - h - PAYLOAD_FIXED)
				break;
			for (uint32_t i = 0; i < len; i++)
				intact &= (uint8_t)r[PAYLOAD_FIXED + i] ==
					  rec_byte(wi, seq, i);
			if (!intact)
				fprintf(stderr, "%s: writer %u event %" PRIu64
					" torn\n", ph->name, wi, seq);
			CHECK(intact);
			/* in order, each once, each one the writer committed */
			CHECK(seq >= next_seq);
			CHECK(w->ok[seq]);
			CHECK(!w->recorded[seq]);
			w->recorded[seq] = 1;
			next_seq = seq + 1;
			if (first_seq == UINT64_MAX)
				first_seq = seq;
			pos += h + PAYLOAD_FIXED + len;
			count++;
		}
		CHECK_INT(pos, content);
		/* the losses the packet says came before it: exactly those
		 * the writer saw (the one copied open when stopped early may
		 * say more, counted while the writer went on) */
		if (ph->mode == TK_RB_DISCARD && first_seq != UINT64_MAX) {
			if (ph->stop_early && last_packet)
				CHECK(ph_.events_discarded >= lost_before(w, first_seq));
			else
				CHECK_INT(ph_.events_discarded,
					  lost_before(w, first_seq));
		}
		for (uint64_t i = content; i < psize; i++)
			if (buf[off + i]) {
				CHECK(!"padding is zeros");
				break;
			}
		off += psize;
	}
	CHECK_INT(count, st->events);
	free(buf);
	return count;
}

static void check_writer(const struct phase *ph, const struct writer *w)
{
	uint64_t recorded = 0, ok = 0, last_ok = UINT64_MAX, cut = 0;

	for (uint64_t i = 0; i < w->written; i++) {
		recorded += w->recorded[i];
		ok += w->ok[i];
		if (w->ok[i])
			last_ok = i;
		if (w->recorded[i])
			cut = i + 1;
	}
	CHECK_INT(w->streams, 1);
	if (!ph->stop_early) {
		/* the count that matters: nothing unaccounted for */
		if (recorded + w->lost != w->written)
			fprintf(stderr, "%s: writer %u: %" PRIu64 " recorded + %"
				PRIu64 " lost != %" PRIu64 " written\n",
				ph->name, w->index, recorded, w->lost, w->written);
		CHECK_INT(recorded + w->lost, w->written);
		/* and the losses the writer was told of, exactly */
		if (ph->mode == TK_RB_DISCARD)
			CHECK_INT(w->lost, w->written - ok);
		/* a writer that waits for space gets it: the recorder
		 * wakes it long before the time it may wait */
		if (ph->block_ms)
			CHECK_INT(w->lost, 0);
	}
	if (ph->mode == TK_RB_DISCARD) {
		/* every event committed before the last one recorded is
		 * recorded: no hole (and, not stopped early, all of them) */
		if (!ph->stop_early)
			cut = w->written;
		for (uint64_t i = 0; i < cut; i++)
			if (w->ok[i] != w->recorded[i]) {
				fprintf(stderr, "%s: writer %u event %" PRIu64
					" %s\n", ph->name, w->index, i,
					w->ok[i] ? "committed, not recorded"
						 : "recorded, not committed");
				CHECK(w->ok[i] == w->recorded[i]);
				break;
			}
	} else if (!ph->stop_early && last_ok != UINT64_MAX) {
		/* overwrite keeps the newest */
		CHECK(w->recorded[last_ok]);
	}
}

/* ---------------------------------------------------------------- a phase */

/* Remove the trace directory @dir (@dir_fd, closed). */
static int remove_tree(const char *dir, int dir_fd)
{
	int fd = openat(dir_fd, "user", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(fd, e->d_name, 0);
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	unlinkat(dir_fd, "user", AT_REMOVEDIR);
	close(dir_fd);
	return rmdir(dir);
}

/* One recording of phase @ph, its counts added to @t. */
static void run_session(const struct phase *ph, struct totals *t)
{
	struct tk_arena_geom g = {
		.mode = ph->mode,
		.chunk_size = 4096,
		.slots = ph->slots,
		.streams_max = ph->writers * ph->waves,
		.pool_init = ph->pool_init,
		.pool_max = ph->pool_max,
		.block_ms = ph->block_ms,
	};
	/* attach_pid: no listening socket, the test hands the process over */
	struct rec_options opt = { .pool_start = ph->pool_start,
				   .attach_pid = getpid(),
				   /* the CONFIG the arena is made from */
				   .overwrite = ph->mode == TK_RB_OVERWRITE,
				   .subbuf_kb = 4, .slots = ph->slots,
				   .streams_max = ph->writers * ph->waves,
				   .pool_max = ph->pool_max };
	struct rec_functrace ft = { 0 };
	struct tk_event_info ev = {
		.id = EV_ID,
		.nfields = 3,
		.fields = ev_fields,
		.min_size = PAYLOAD_FIXED,
	};
	uint32_t at[EV_ID + 1];
	struct writer ws[MAX_WRITERS];
	unsigned nw = ph->writers * ph->waves;
	struct rec_session s;
	struct rec_process *p;
	struct tk_arena_map *a;
	pthread_t recorder;
	const char *what = "?";
	const char *tmp = getenv("TMPDIR");
	struct control control;
	int sv[2];
	char dir[256];
	int dir_fd;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/tk-ringbuf-XXXXXX",
			     tmp && tmp[0] ? tmp : "/tmp") >= sizeof(dir) ||
	    !mkdtemp(dir) ||
	    (dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    mkdirat(dir_fd, "user", 0700) < 0) {
		fprintf(stderr, "cannot make a directory in '%s': %s\n",
			tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
		exit(1);
	}

	/* the recorder's side: a session, and the process on a socket pair
	 * as if it had connected; what its HELLO and EVENT would say is
	 * set here */
	opt.outdir = dir;
	if (session_init(&s, &opt, &ft) < 0) {
		fprintf(stderr, "session_init: %s\n", s.error);
		exit(1);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		exit(1);
	}
	p = session_add_process(&s, sv[0]);
	if (!p) {
		perror("session_add_process");
		exit(1);
	}
	CHECK_INT(p->class_id, CLASS_ID);
	p->pid = (uint32_t)getpid();
	p->events = &ev;
	p->nevents = 1;
	memset(at, 0xff, sizeof(at)); /* events[at[id]] is id's */
	at[EV_ID] = 0;
	p->at = at;
	p->at_len = EV_ID + 1;

	/* the process's side, as lib/control.c make_arena and CONFIG */
	tk_streams_session_changed();
	a = tk_arena_create(&g, 4, 0, &what);
	if (!a) {
		fprintf(stderr, "tk_arena_create: %s: %s\n", what, strerror(errno));
		exit(1);
	}
	a->gen = __atomic_load_n(&tk_session_gen, __ATOMIC_SEQ_CST);
	__atomic_store_n(&tk_wake_fd, s.wake_fd, __ATOMIC_RELEASE);
	shared[0] = (struct shared_map){ a->fds[0], a->hdr, a->control_size, false };
	shared[1] = (struct shared_map){ a->fds[1], a->pool, a->pool_size, false };
	CHECK_INT(consumer_add_arena(&s, p, a->fds, g.pool_init), 0);
	a->fds[0] = a->fds[1] = -1; /* closed by the recorder */
	shared[0].fd = shared[1].fd = -1;
	tk_registry_lock();
	tk_config.active = true;
	tk_config.geom = g;
	tk_config_publish_locked();
	tk_streams_set_arena(a);
	tk_registry_unlock();
	control.fd = sv[1];
	control.arena = a;
	if (pthread_create(&control.thread, NULL, control_main, &control)) {
		perror("pthread_create");
		exit(1);
	}

	writers_stop = 0;
	recorder_stop = 0;
	writers_total = 0;
	writers_started = 0;
	memset(ws, 0, sizeof(ws));
	if (!ph->late && pthread_create(&recorder, NULL, recorder_main, &s)) {
		perror("pthread_create");
		exit(1);
	}
	for (unsigned wave = 0; wave < ph->waves; wave++) {
		for (unsigned i = 0; i < ph->writers; i++) {
			struct writer *w = &ws[wave * ph->writers + i];

			w->index = wave * ph->writers + i;
			w->ph = ph;
			w->ok = calloc(ph->events, 1);
			w->recorded = calloc(ph->events, 1);
			if (!w->ok || !w->recorded ||
			    pthread_create(&w->thread, NULL, writer_main, w)) {
				perror("writer");
				exit(1);
			}
		}
		while (ph->late && !wave &&
		       __atomic_load_n(&writers_started, __ATOMIC_RELAXED) <
			       ph->writers)
			pause_us(100);
		if (ph->late && !wave &&
		    pthread_create(&recorder, NULL, recorder_main, &s)) {
			perror("pthread_create");
			exit(1);
		}
		if (ph->stop_early && wave == ph->waves - 1) {
			/* stop the recorder while they write: each has its
			 * stream, a third of their events are in */
			while (__atomic_load_n(&writers_total, __ATOMIC_RELAXED) <
				       ph->writers * ph->events / 3 ||
			       __atomic_load_n(&writers_started, __ATOMIC_RELAXED) <
				       nw)
				pause_us(100);
			__atomic_store_n(&recorder_stop, 1, __ATOMIC_RELEASE);
			pthread_join(recorder, NULL);
			consumer_flush_all(&s);
			__atomic_store_n(&writers_stop, 1, __ATOMIC_RELAXED);
		}
		for (unsigned i = 0; i < ph->writers; i++)
			pthread_join(ws[wave * ph->writers + i].thread, NULL);
	}
	for (unsigned i = 0; i < nw; i++) {
		struct writer *w = &ws[i];

		w->lost_upto = malloc((w->written + 1) * sizeof(*w->lost_upto));
		if (!w->lost_upto) {
			perror("malloc");
			exit(1);
		}
		w->lost_upto[0] = 0;
		for (uint64_t k = 0; k < w->written; k++)
			w->lost_upto[k + 1] = w->lost_upto[k] + !w->ok[k];
	}
	if (!ph->stop_early) {
		/* the process is gone: what is left is written out */
		__atomic_store_n(&recorder_stop, 1, __ATOMIC_RELEASE);
		pthread_join(recorder, NULL);
		consumer_flush_all(&s);
	}
	if (s.failed)
		fprintf(stderr, "%s: recorder: %s\n", ph->name, s.error);
	CHECK(!s.failed);
	CHECK_INT(consumer_lost_nobuf(p), 0);

	for (unsigned i = 0; i < s.nstreams; i++) {
		struct tk_trace_stream out;

		consumer_stream_stats(s.streams[i], &out);
		if (s.streams[i]->corrupt)
			fprintf(stderr, "%s: stream %s: %s\n", ph->name, out.file,
				s.streams[i]->corrupt);
		CHECK(!s.streams[i]->corrupt);
		t->recorded += check_stream(ph, ws, nw, dir_fd, &out);
	}
	for (unsigned i = 0; i < nw; i++) {
		check_writer(ph, &ws[i]);
		t->events += ws[i].written;
		t->lost += ws[i].lost;
		free(ws[i].ok);
		free(ws[i].recorded);
		free(ws[i].lost_upto);
	}
	t->threads += nw;
	t->streams += s.nstreams;
	t->sleeps += s.sleeps;
	t->wakeups += consumer_wakeups(&s);

	/* the session ends: the threads' streams are gone, the arena too */
	shutdown(sv[0], SHUT_RDWR);
	pthread_join(control.thread, NULL);
	close(sv[1]);
	tk_registry_lock();
	tk_config.active = false;
	tk_config_publish_locked();
	tk_streams_session_changed();
	tk_streams_set_arena(NULL);
	tk_registry_unlock();
	__atomic_store_n(&tk_wake_fd, -1, __ATOMIC_RELEASE);
	p->events = NULL; /* the test's, not the session's to free */
	p->nevents = 0;
	p->at = NULL;
	p->at_len = 0;
	session_free(&s);
	functrace_free(&ft);
	/* the session closed what it opened, and nothing else */
	CHECK(fcntl(0, F_GETFD) >= 0);
	if (remove_tree(dir, dir_fd) < 0)
		fprintf(stderr, "cannot remove '%s': %s\n", dir, strerror(errno));
}

static void run_phase(const struct phase *ph)
{
	struct totals t = { 0 };
	int failures = tk_test_failures;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < (ph->sessions ? ph->sessions : 1); i++)
		run_session(ph, &t);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%-15s %" PRIu64 " threads: %" PRIu64 " events, %" PRIu64
	       " recorded, %" PRIu64 " lost, %" PRIu64 " streams, %" PRIu64
	       " sleeps, %" PRIu64 " wake-ups, %ld ms: %s\n",
	       ph->name, t.threads, t.events, t.recorded, t.lost, t.streams,
	       t.sleeps, t.wakeups,
	       (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000,
	       tk_test_failures == failures ? "ok" : "FAILED");
}

int main(void)
{
	static const struct phase phases[] = {
		/* batches of 16 packets (one write of DRAIN_IOV_MAX), and
		 * partial ones between bursts; the pool grows */
		{ .name = "discard", .mode = TK_RB_DISCARD, .writers = 4,
		  .waves = 2, .events = 40000 / SCALE, .burst = 100,
		  .slots = 32, .pool_init = 8, .pool_start = 16,
		  .pool_max = 64 },
		/* every descriptor taken before the recorder looks */
		{ .name = "discard-flood", .mode = TK_RB_DISCARD, .writers = 3,
		  .waves = 1, .events = 200000 / SCALE, .slots = 4,
		  .pool_init = 4, .pool_start = 4, .pool_max = 16,
		  .late = true },
		/* writers wait for space (futex), none lost */
		{ .name = "discard-block", .mode = TK_RB_DISCARD, .writers = 3,
		  .waves = 1, .events = 50000 / SCALE, .slots = 4,
		  .pool_init = 4, .pool_start = 4, .pool_max = 8,
		  .block_ms = 30000 },
		{ .name = "overwrite", .mode = TK_RB_OVERWRITE, .writers = 4,
		  .waves = 2, .events = 100000 / SCALE, .burst = 200,
		  .slots = 4, .pool_init = 8, .pool_start = 8, .pool_max = 16 },
		{ .name = "discard-stop", .mode = TK_RB_DISCARD, .writers = 2,
		  .waves = 1, .events = 300000 / SCALE, .burst = 200,
		  .slots = 8, .pool_init = 4, .pool_start = 8, .pool_max = 16,
		  .stop_early = true },
		/* long rings, copied while the writers overwrite them:
		 * many times, as a copy overwritten meanwhile is rare */
		{ .name = "overwrite-stop", .mode = TK_RB_OVERWRITE,
		  .writers = 2, .waves = 1, .events = 30000 / SCALE,
		  .slots = 64, .pool_init = 64, .pool_start = 128,
		  .pool_max = 256, .stop_early = true,
		  .sessions = TSAN ? 4 : 16 },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	tk_streams_init();
	for (unsigned i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		run_phase(&phases[i]);
	return TEST_DONE();
}
