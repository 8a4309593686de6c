/* SPDX-License-Identifier: MIT */
/*
 * session.c - the recorder's control side (protocol: common/protocol.h).
 *
 * A process connects (record -- CMD: to our socket, named in the child's
 * TRACEKIT_SESSION) or is connected to (record -P: its @tracekit-PID),
 * says HELLO, announces its events, and receives the CONFIG: the rules
 * (pattern + filter), the buffer geometry and mode.  Threads then hand
 * over their buffers one by one (STREAM, with the memfd).  Everything a
 * process sends is checked; a process that sends garbage is dropped, its
 * buffers already received are still drained.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "session.h"
#include "control-client.h"
#include "filter-check.h"
#include "common/filter.h"
#include "common/pattern.h"
#include "common/protocol.h"
#include "record-functrace.h"
#include "common/unix-socket.h"
#include "common/visible.h"
#include "tracekit/runtime.h"

#define MIN_CLOCK_SPAN_NS 200000000ull
/* Forked children connect and hand their buffers over from their fork
 * handler without waiting: room for many in the backlog (the kernel caps
 * it at net.core.somaxconn). */
#define LISTEN_BACKLOG 4096
/* At the end, a process that could not make its buffers says how many
 * events it lost meanwhile: wait this long for that. */
#define NOBUF_FINAL_MS 200

static uint64_t ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Read the event clock (the TSC if @use_tsc, else CLOCK_MONOTONIC) and
 * the two clocks as close together as we can: keep the sample whose
 * event clock readings around the clock reads are closest. */
void clock_sample(bool use_tsc, uint64_t *tsc, uint64_t *mono, uint64_t *real)
{
	uint64_t best = UINT64_MAX;

	if (!use_tsc) {
		*tsc = *mono = ns_of(CLOCK_MONOTONIC);
		*real = ns_of(CLOCK_REALTIME);
		return;
	}
	for (int i = 0; i < 7; i++) {
		uint64_t t0 = tk__clock();
		uint64_t m = ns_of(CLOCK_MONOTONIC);
		uint64_t r = ns_of(CLOCK_REALTIME);
		uint64_t t1 = tk__clock();

		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*mono = m;
			*real = r;
		}
	}
}

int session_init(struct rec_session *s, const struct rec_options *opt,
		 struct rec_functrace *ft)
{
	struct sockaddr_un sa;
	struct rlimit rl;

	memset(s, 0, sizeof(*s));
	s->opt = opt;
	s->functrace = ft;
	s->listen_fd = -1;
	s->reserve_fd = -1;
	drain_init(&s->drain);
	if (consumer_init(s) < 0) {
		snprintf(s->error, sizeof(s->error), "cannot start a thread: %s",
			 strerror(errno));
		return -errno;
	}
	s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->wake_fd < 0) {
		snprintf(s->error, sizeof(s->error), "cannot create an eventfd: %s",
			 strerror(errno));
		return -errno;
	}
	s->next_class = 1;
	gethostname(s->host, sizeof(s->host) - 1);
	s->dir = strdup(opt->outdir);
	if (!s->dir)
		return -ENOMEM;
	/* what the processes stamp with (CONFIG): tk__clock(), or
	 * CLOCK_MONOTONIC where the TSC is not usable */
	s->clock.tsc = TK_CLOCK_TSC && !opt->clock_mono;
	clock_sample(s->clock.tsc, &s->clock.tsc_start, &s->clock.mono_start,
		     &s->clock.real_start);
	if (opt->attach_pid)
		return 0;
	snprintf(s->sock_name, sizeof(s->sock_name), TK_SOCKET_PREFIX "rec-%d-%lx",
		 (int)getpid(), (unsigned long)(s->clock.tsc_start & 0xffffff));
	/* processes that cannot be given a descriptor are not taken: raise
	 * our limit as far as we may (a process takes one, a live stream
	 * one) */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* held back, to refuse a connection when out of them
	 * (accept_process) */
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	s->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
			      0);
	if (s->listen_fd < 0 ||
	    bind(s->listen_fd, (struct sockaddr *)&sa,
		 tk_abstract_addr(&sa, s->sock_name)) < 0 ||
	    listen(s->listen_fd, LISTEN_BACKLOG) < 0) {
		snprintf(s->error, sizeof(s->error),
			 "cannot create the control socket: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

struct rec_process *session_add_process(struct rec_session *s, int fd)
{
	struct rec_process *p, **procs;

	p = calloc(1, sizeof(*p));
	procs = realloc(s->procs, (s->nprocs + 1) * sizeof(*procs));
	if (!p || !procs) {
		free(p);
		if (procs)
			s->procs = procs;
		return NULL;
	}
	s->procs = procs;
	p->fd = fd;
	p->class_id = s->next_class++;
	s->procs[s->nprocs++] = p;
	return p;
}

int session_attach(struct rec_session *s, pid_t pid)
{
	struct sockaddr_un sa;
	char name[64];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -errno;
	snprintf(name, sizeof(name), TK_SOCKET_PREFIX "%d", (int)pid);
	if (connect(fd, (struct sockaddr *)&sa, tk_abstract_addr(&sa, name)) < 0) {
		int err = errno;

		close(fd);
		if (kill(pid, 0) < 0 && errno == ESRCH)
			snprintf(s->error, sizeof(s->error),
				 "no process with pid %d", (int)pid);
		else
			snprintf(s->error, sizeof(s->error),
				 "process %d is not instrumented with tracekit "
				 "(no control socket @%s: %s)",
				 (int)pid, name, strerror(err));
		return -err;
	}
	ret = ctl_peer_check(fd, pid, s->error, sizeof(s->error));
	if (ret < 0) {
		close(fd);
		return ret;
	}
	if (!session_add_process(s, fd)) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

static void process_close(struct rec_process *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

static int send_config(struct rec_session *s, struct rec_process *p)
{
	const struct rec_options *o = s->opt;
	char buf[TK_MSG_MAX];
	struct tk_msg_config *m = (struct tk_msg_config *)buf;
	size_t len = sizeof(*m);
	int ret;

	memset(m, 0, sizeof(*m));
	m->m.type = TK_MSG_CONFIG;
	m->mode = o->overwrite ? TK_RB_OVERWRITE : TK_RB_DISCARD;
	m->chunk_size = o->subbuf_kb * 1024;
	m->slots = o->slots;
	m->streams_max = o->streams_max;
	/* the recorded command is where bursts at the start come: its pool
	 * before its main() (a burst would else make its pages by faults
	 * in its stores, 1.2-1.3 x the time per call here); the others,
	 * little until they write (most of a build's or a worker pool's
	 * processes never fire) */
	m->pool_init = p == s->command ? o->pool_init_first : o->pool_init;
	m->pool_init_child = o->pool_init;
	m->pool_max = o->pool_max;
	m->block_ms = o->block_ms;
	m->flags = (o->follow_fork ? TK_CONFIG_FOLLOW_FORK : 0) |
		   (o->user_stack ? TK_CONFIG_USER_STACK : 0) |
		   (s->clock.tsc ? 0 : TK_CONFIG_CLOCK_MONO);
	m->nrules = o->nrules;
	for (unsigned i = 0; i < o->nrules; i++) {
		const char *pat = o->rules[i].pattern;
		const char *flt = o->rules[i].filter ? o->rules[i].filter : "";
		size_t need = strlen(pat) + strlen(flt) + 2;

		if (len + need > sizeof(buf))
			return -E2BIG;
		memcpy(buf + len, pat, strlen(pat) + 1);
		len += strlen(pat) + 1;
		memcpy(buf + len, flt, strlen(flt) + 1);
		len += strlen(flt) + 1;
	}
	long flen = functrace_config_append(o, buf, len, sizeof(buf), &m->flags);

	if (flen < 0)
		return -E2BIG;
	len = (size_t)flen;
	m->m.len = (uint32_t)len;
	/* with the eventfd that wakes us (lib/control.c tk_wake_fd) */
	ret = tk_send_fds(p->fd, buf, len, &s->wake_fd, 1, 0);
	if (ret < 0)
		return ret;
	p->configured = true;
	return 0;
}

/* The parent of @pid: field 4 of /proc/PID/stat, after the ')' that
 * ends the command name; 0 if it cannot be read. */
static uint32_t ppid_of(uint32_t pid)
{
	char path[32], buf[512], *end;
	unsigned ppid = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	end = strrchr(buf, ')');
	if (!end || sscanf(end + 1, " %*c %u", &ppid) != 1)
		return 0;
	return ppid;
}

static void on_hello(struct rec_session *s, struct rec_process *p,
		     const struct tk_msg_hello *h)
{
	p->hello = true;
	/* the kernel's pid, not the one the process claims: it names the
	 * /proc files read and the trace's files (and differs in another pid
	 * namespace, where the claimed parent would be wrong too) */
	if (p->peer_pid > 0 && (uint32_t)p->peer_pid != h->pid) {
		p->pid = (uint32_t)p->peer_pid;
		p->ppid = ppid_of(p->pid);
	} else {
		p->pid = h->pid;
		p->ppid = h->ppid ? h->ppid : ppid_of(h->pid);
	}
	memcpy(p->comm, h->comm, 16);
	p->comm[16] = '\0';
	/* names the program chose: printed in the summary and by report */
	tk_visible_name(p->comm);
	free(p->exe);
	p->exe = strndup(h->exe, sizeof(h->exe));
	p->keys = h->keys != 0;
	p->cpu_rseq = h->cpu_rseq != 0;
	/* a forked child records with its parent's CONFIG already */
	p->forked = h->forked != 0;
	if (p->forked)
		p->configured = true;
	p->nsites = h->nsites;
	memcpy(p->keys_why, h->keys_why, sizeof(h->keys_why));
	p->keys_why[sizeof(p->keys_why) - 1] = '\0';
	tk_visible_name(p->keys_why);
	if (!s->command &&
	    (s->opt->attach_pid ? p->pid == (uint32_t)s->opt->attach_pid
				: !p->forked && p->ppid == (uint32_t)getpid()))
		s->command = p;
}

const struct tk_event_info *session_event(const struct rec_process *p,
					  uint32_t id)
{
	return id < p->at_len && p->at[id] < p->nevents ? &p->events[p->at[id]]
							 : NULL;
}

/* Event @id of @p, its descriptor at @desc (@size bytes at most). */
static int add_event(struct rec_process *p, uint32_t id, const void *desc,
		     size_t size)
{
	size_t used, padded;
	struct tk_event_info *evs;
	char why[160], *blob;
	int ret;

	/* ids are 16 bits in the streams, 0xffff taken (lib/registry.c):
	 * no more events than that, and each found by its id, not a scan
	 * (300,000 announced took the recorder minutes) */
	if (id >= TK__ID_EXTENDED)
		return -EPROTO;
	if (session_event(p, id))
		return 0; /* a forked child's, known from its parent */
	evs = realloc(p->events, (p->nevents + 1) * sizeof(*evs));
	if (!evs)
		return -ENOMEM;
	p->events = evs;
	ret = tk_event_info_parse(desc, size, &evs[p->nevents], &used, why,
				  sizeof(why));
	if (ret)
		return ret;
	evs[p->nevents].id = id;
	if (id >= p->at_len) {
		/* grown by halves at least, up to the 16-bit ids */
		unsigned len = id + 1 > p->at_len + p->at_len / 2 ? id + 1
				: p->at_len + p->at_len / 2;
		uint32_t *at = realloc(p->at, len * sizeof(*at));

		if (!at)
			return -ENOMEM;
		memset(at + p->at_len, 0xff, (len - p->at_len) * sizeof(*at));
		p->at = at;
		p->at_len = len;
	}
	p->at[id] = p->nevents;
	p->nevents++;
	padded = (used + 7) & ~(size_t)7;
	blob = realloc(p->desc_blob, p->desc_size + 8 + padded);
	if (!blob)
		return -ENOMEM;
	p->desc_blob = blob;
	memcpy(blob + p->desc_size, &id, 4);
	memcpy(blob + p->desc_size + 4, &(uint32_t){ (uint32_t)used }, 4);
	memcpy(blob + p->desc_size + 8, desc, used);
	memset(blob + p->desc_size + 8 + used, 0, padded - used);
	p->desc_size += 8 + padded;
	return 0;
}

static int on_event(struct rec_process *p, const struct tk_msg_event *m,
		    size_t len)
{
	return add_event(p, m->id, m + 1, len - sizeof(*m));
}

/* A forked child has its parent's events, with the same ids, until it
 * says more: take them from the parent (the latest process of that pid),
 * so that what the child writes before it has announced anything (or if
 * it never does) can be read. */
static void inherit_events(struct rec_session *s, struct rec_process *p)
{
	const char *blob = NULL;
	size_t size = 0;

	for (unsigned i = 0; i < s->nprocs; i++)
		if (s->procs[i] != p && s->procs[i]->hello &&
		    s->procs[i]->pid == p->ppid) {
			blob = s->procs[i]->desc_blob;
			size = s->procs[i]->desc_size;
		}
	/* a parent gone already (one that forked and exited) */
	for (unsigned i = 0; !blob && i < s->ndesc_due; i++)
		if (s->desc_due[i]->pid == p->ppid) {
			blob = s->desc_due[i]->desc_blob;
			size = s->desc_due[i]->desc_size;
		}
	for (unsigned k = 1; !blob && k <= REC_RECENT; k++) {
		const struct rec_recent *r =
			&s->recent[(s->recent_next - k) % REC_RECENT];

		if (r->blob && r->pid == p->ppid) {
			blob = r->blob;
			size = r->size;
		}
	}
	if (!blob)
		return;
	for (size_t off = 0; off + 8 <= size;) {
		uint32_t id, len;

		memcpy(&id, blob + off, 4);
		memcpy(&len, blob + off + 4, 4);
		if (len > size - off - 8 || add_event(p, id, blob + off + 8, len) < 0)
			break;
		off += 8 + ((len + 7) & ~(size_t)7);
	}
}

/* Check the rules against the process's events: each pattern must name
 * some event (record -P), each filter must compile for the events. */
static int check_rules(struct rec_session *s, struct rec_process *p,
		       bool need_match)
{
	for (unsigned i = 0; i < s->opt->nrules; i++) {
		const struct rec_rule *r = &s->opt->rules[i];
		struct filter_check fc = { 0 };
		bool matched = false;

		for (unsigned j = 0; j < p->nevents; j++) {
			struct tk_event_info *ev = &p->events[j];
			struct tk_filter_error fe;
			struct tk_filter *f;

			if (!tk_pattern_match(r->pattern, ev->full_name))
				continue;
			matched = true;
			if (!r->filter)
				continue;
			if (tk_filter_compile(r->filter, ev->fields, ev->nfields,
					      &f, &fe) < 0) {
				filter_check_note(&fc, ev->full_name, &fe);
				continue;
			}
			filter_check_note(&fc, ev->full_name, NULL);
			tk_filter_free(f);
		}
		if (r->filter && filter_check_result(&fc, r->filter, s->error,
						     sizeof(s->error)) < 0)
			return -EINVAL;
		if (!matched && need_match && strcmp(r->pattern, "all") != 0) {
			const char **names = calloc(p->nevents + 1, sizeof(*names));
			const char *near = NULL;

			for (unsigned j = 0; names && j < p->nevents; j++)
				names[j] = p->events[j].full_name;
			if (names)
				near = tk_closest_name(r->pattern, names, p->nevents);
			snprintf(s->error, sizeof(s->error),
				 "unknown event '%s' in process %u%s%s%s", r->pattern,
				 p->pid, near ? " (did you mean '" : "",
				 near ? near : "", near ? "'?)" : "");
			free(names);
			return -ENOENT;
		}
	}
	return 0;
}

/* One message, and up to two descriptors passed with it (-1 for none). */
static int recv_message(int fd, char *buf, size_t size, int fds[2])
{
	unsigned nfds;
	ssize_t n = tk_recv_fds(fd, buf, size, fds, 2, &nfds, MSG_DONTWAIT);

	for (unsigned i = nfds; i < 2; i++)
		fds[i] = -1;
	if (n <= 0)
		for (unsigned i = 0; i < nfds; i++) {
			close(fds[i]);
			fds[i] = -1;
		}
	if (n < 0)
		return n == -EAGAIN ? 0 : (int)n;
	if (n == 0)
		return -EPIPE;
	return (int)n;
}

/* The text of an ERROR message, @len bytes at @src (up to its first NUL),
 * into out[size]: nothing of the buffer beyond the message, and no byte
 * that is not printable (the program could move the terminal about). */
static void message_text(char *out, size_t size, const char *src, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < size && src[i]; i++)
		out[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	out[i] = '\0';
}

/* Messages taken from one process at each look (session_poll()). */
#define MESSAGES_PER_LOOK 64

/* ERROR messages said per process: a program may send them without end
 * (100,000 lines in 3 s on the recorder's standard error). */
#define ERRORS_SAID 10

/* Handle one message: returns its size, 0 when none is waiting, < 0 when
 * the process is to be dropped. */
static int process_message(struct rec_session *s, struct rec_process *p)
{
	static char buf[TK_MSG_MAX];
	const struct tk_msg *m = (const struct tk_msg *)buf;
	int fds[2], n = recv_message(p->fd, buf, sizeof(buf), fds);
	int ret = 0;

	if (n <= 0)
		return n;
	if ((size_t)n < sizeof(*m) || m->len != (uint32_t)n) {
		ret = -EPROTO;
		goto out;
	}
	switch (m->type) {
	case TK_MSG_HELLO:
		if ((size_t)n < sizeof(struct tk_msg_hello))
			ret = -EPROTO;
		else
			on_hello(s, p, (const struct tk_msg_hello *)buf);
		if (!ret && p->forked && !p->nevents)
			inherit_events(s, p);
		break;
	case TK_MSG_EVENT:
		if ((size_t)n < sizeof(struct tk_msg_event) || !p->hello)
			ret = -EPROTO;
		else
			ret = on_event(p, (const struct tk_msg_event *)buf,
				       (size_t)n);
		break;
	case TK_MSG_EVENTS_DONE:
		if (!p->hello) {
			ret = -EPROTO;
			break;
		}
		p->announced = true;
		if (!p->configured) {
			ret = check_rules(s, p, s->opt->attach_pid != 0);
			if (ret) {
				s->failed = true;
				break;
			}
			ret = send_config(s, p);
		}
		break;
	case TK_MSG_ARENA: {
		const struct tk_msg_arena *ar = (const void *)buf;

		if ((size_t)n < sizeof(*ar) || fds[0] < 0 || fds[1] < 0 ||
		    !p->configured) {
			ret = -EPROTO;
			break;
		}
		if (ar->lost_nobuf > p->nobuf_msg_lost)
			p->nobuf_msg_lost = ar->lost_nobuf;
		/* buffers we cannot read: the process is dropped, its
		 * session ends (it stops recording), and it is said */
		ret = consumer_add_arena(s, p, fds, ar->made);
		fds[0] = fds[1] = -1;
		break;
	}
	case TK_MSG_NOBUF: {
		const struct tk_msg_nobuf *nb = (const void *)buf;

		if ((size_t)n < sizeof(*nb) || !p->hello) {
			ret = -EPROTO;
			break;
		}
		if (nb->lost > p->nobuf_msg_lost)
			p->nobuf_msg_lost = nb->lost;
		p->nobuf_err = nb->err;
		memcpy(p->nobuf_what, nb->what, sizeof(nb->what));
		p->nobuf_what[sizeof(nb->what)] = '\0';
		tk_visible_name(p->nobuf_what);
		break;
	}
	case TK_MSG_MODULE:
		ret = p->hello ? functrace_on_module(s->functrace, p->pid, buf,
						       (size_t)n) : -EPROTO;
		break;
	case TK_MSG_ERROR: {
		char text[sizeof(((struct tk_msg_error *)0)->text)];

		message_text(text, sizeof(text), buf + sizeof(*m),
			     (size_t)n - sizeof(*m));
		if (!text[0])
			snprintf(text, sizeof(text), "(no reason given)");
		if (s->opt->attach_pid && !p->configured) {
			snprintf(s->error, sizeof(s->error),
				 "cannot attach to process %d: %.200s",
				 (int)s->opt->attach_pid, text);
			s->failed = true;
			ret = -ECONNREFUSED;
		} else if (p->errors < ERRORS_SAID) {
			fprintf(stderr, "tracekit: process %u: %s\n", p->pid, text);
		} else if (p->errors == ERRORS_SAID) {
			fprintf(stderr, "tracekit: process %u: more messages, not shown\n",
				p->pid);
		}
		p->errors += p->errors <= ERRORS_SAID;
		break;
	}
	default:
		ret = -EPROTO;
	}
out:
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return ret < 0 ? ret : n;
}

/* Take a connection; false when none is waiting (or none can be taken:
 * then it is said once, at the end). */
static bool accept_process(struct rec_session *s)
{
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	struct rec_process *p;
	struct ucred cred;

	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && s->reserve_fd >= 0) {
		/* out of descriptors: refuse it (its session ends, said at
		 * the end) rather than see it waiting at every look */
		s->accept_errno = errno;
		close(s->reserve_fd);
		fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			s->refused++;
		}
		s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return fd >= 0;
	}
	if (fd < 0)
		return false;
	/* the credentials the kernel took at connect(): who may record
	 * here, and the pid the process is known by */
	if (tk_peer_check(fd, 0, &cred) < 0 || !(p = session_add_process(s, fd)))
		close(fd);
	else
		p->peer_pid = cred.pid;
	return true;
}

/* ------------------------------------------------- processes that are gone
 *
 * A process leaves session.procs once gone (its connection closed, its
 * streams written and closed: consumer_process_gone), so that the drain
 * loop walks only those that may still write.  One that left nothing in
 * the trace (no stream file, no loss) leaves the recorder entirely: a
 * program that forks thousands of children that fire no event, or
 * connections that only say HELLO, cost nothing once gone (each kept its
 * class in the metadata and its line in the manifest, rendered again at
 * every index: 16,000 of them took the recorder 10.7 s and an 8.5 MB
 * metadata).  One that did keeps its stream class, its manifest lines and
 * its streams' counts, rendered once into session.done_* and written as
 * they are by each index after.
 */

/* What the index says of @p, in *tp (pointers to @p's). */
static void fill_process(const struct rec_process *p, struct tk_trace_process *tp)
{
	memset(tp, 0, sizeof(*tp));
	tp->pid = p->pid;
	tp->ppid = p->ppid;
	tp->class_id = p->class_id;
	memcpy(tp->comm, p->comm, sizeof(tp->comm));
	/* the name its main thread had when it first recorded: a forked
	 * child said HELLO before it could rename itself */
	if (p->main_stream)
		memcpy(tp->comm, p->main_stream->comm, sizeof(tp->comm));
	tp->exe = p->exe;
	tp->events = p->events;
	tp->nevents = p->nevents;
	tp->desc_blob = p->desc_blob;
	tp->desc_blob_size = p->desc_size;
	tp->lost_nobuf = consumer_lost_nobuf(p);
}

/* Keep @blob (@size bytes, ours now) of process @pid for its children. */
static void recent_put(struct rec_session *s, uint32_t pid, char *blob,
		       size_t size)
{
	struct rec_recent *r = &s->recent[s->recent_next++ % REC_RECENT];

	free(r->blob);
	*r = (struct rec_recent){ pid, blob, size };
}

static void process_free(struct rec_session *s, struct rec_process *p)
{
	process_close(p);
	consumer_process_free(s, p);
	for (unsigned j = 0; j < p->nevents; j++)
		tk_event_info_free(&p->events[j]);
	free(p->events);
	free(p->at);
	free(p->desc_blob);
	free(p->exe);
	free(p);
}

/* Whether any stream of @p has a file (or is named in the manifest for
 * its losses), counts losses or was found corrupt (said in the summary). */
static bool process_has_files(const struct rec_session *s,
			      const struct rec_process *p)
{
	unsigned seen = 0;

	/* its streams are among the newest, as it is */
	for (unsigned i = s->nstreams; i-- > 0 && seen < p->nstreams;) {
		const struct rec_stream *st = s->streams[i];

		if (st->proc != p)
			continue;
		seen++;
		if (st->file || st->corrupt || st->lost_full || st->lost_nested ||
		    st->lost_big || st->lost_overwritten || st->lost_write)
			return true;
	}
	return false;
}

/* Whether @p is the command recorded (the first process of our child's
 * to say HELLO) or the process attached to (-P): in the trace even when
 * it wrote nothing. */
static bool process_is_command(const struct rec_session *s,
			       const struct rec_process *p)
{
	return p->hello && p == s->command;
}

/* Append @p's class, its manifest line and its streams' to the text
 * every index writes after the live ones. */
static int render_done(struct rec_session *s, struct rec_process *p)
{
	struct tk_trace_process tp;
	unsigned seen = 0, first = s->nstreams;

	if (!s->done_classes) {
		/* the three together, or none */
		FILE *c = open_memstream(&s->done_classes_buf, &s->done_classes_len);
		FILE *q = open_memstream(&s->done_procs_buf, &s->done_procs_len);
		FILE *t = open_memstream(&s->done_streams_buf, &s->done_streams_len);

		if (!c || !q || !t) {
			if (c)
				fclose(c);
			if (q)
				fclose(q);
			if (t)
				fclose(t);
			free(s->done_classes_buf);
			free(s->done_procs_buf);
			free(s->done_streams_buf);
			s->done_classes_buf = s->done_procs_buf = s->done_streams_buf = NULL;
			return -ENOMEM;
		}
		s->done_classes = c;
		s->done_procs = q;
		s->done_streams = t;
	}
	fill_process(p, &tp);
	tk_ctf_put_class(s->done_classes, &tp);
	tk_trace_put_process(s->done_procs, &tp);
	/* in the order they came */
	while (first > 0 && seen < p->nstreams)
		seen += s->streams[--first]->proc == p;
	for (unsigned i = first; i < s->nstreams; i++) {
		struct tk_trace_stream ts;

		if (s->streams[i]->proc != p || !s->streams[i]->file)
			continue;
		consumer_stream_stats(s->streams[i], &ts);
		tk_trace_put_stream(s->done_streams, &ts);
	}
	return ferror(s->done_classes) || ferror(s->done_procs) ||
	       ferror(s->done_streams) ? -ENOMEM : 0;
}

/* @p is gone (nothing of it is read or written any more): out of procs,
 * into gone (its descriptors written by the next index, then kept for
 * its children a while) or nowhere.  False if it must stay in procs (no
 * memory). */
static bool session_retire(struct rec_session *s, struct rec_process *p)
{
	struct rec_process **grown;

	s->heard |= p->hello;
	s->was_configured |= p->configured;
	if (!process_has_files(s, p) && !consumer_lost_nobuf(p) &&
	    !process_is_command(s, p)) {
		/* nothing in the trace: its streams (none wrote) go too */
		if (p->nstreams) {
			unsigned n = 0;

			for (unsigned i = 0; i < s->nstreams; i++) {
				struct rec_stream *st = s->streams[i];

				if (st->proc != p) {
					s->streams[n++] = st;
					continue;
				}
				if (st->out_fd >= 0)
					close(st->out_fd);
				free(st);
			}
			s->nstreams = n;
		}
		if (p->hello && p->desc_size) {
			recent_put(s, p->pid, p->desc_blob, p->desc_size);
			p->desc_blob = NULL;
		}
		process_free(s, p);
		s->forgotten++;
		return true;
	}
	grown = realloc(s->gone, (s->ngone + 1) * sizeof(*grown));
	if (grown)
		s->gone = grown;
	if (!grown ||
	    !(grown = realloc(s->desc_due, (s->ndesc_due + 1) * sizeof(*grown))))
		return false;
	s->desc_due = grown;
	/* out of memory: kept as a live process (walked, rendered at each
	 * index) rather than retired without its lines */
	if (render_done(s, p) < 0)
		return false;
	s->desc_due[s->ndesc_due++] = p;
	s->gone[s->ngone++] = p;
	p->retired = true;
	/* its class is rendered: its events are not needed any more (its
	 * descriptor file, desc_blob, is written by the next index) */
	for (unsigned j = 0; j < p->nevents; j++)
		tk_event_info_free(&p->events[j]);
	free(p->events);
	p->events = NULL;
	p->nevents = 0;
	free(p->at);
	p->at = NULL;
	p->at_len = 0;
	free(p->exe);
	p->exe = NULL;
	return true;
}

/* The processes gone whose descriptor files are on the disk (an index
 * rendered may be replaced by a newer one before it is written: they are
 * in each until then) leave desc_due; their descriptors are kept a while
 * for their children. */
static void desc_due_prune(struct rec_session *s)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->ndesc_due; i++) {
		struct rec_process *p = s->desc_due[i];
		struct stat sb;
		char *path;
		bool there;

		if (asprintf(&path, "%s/events/%u.desc", s->dir, p->class_id) < 0) {
			s->desc_due[n++] = p;
			continue;
		}
		there = stat(path, &sb) == 0 && (uint64_t)sb.st_size == p->desc_size;
		free(path);
		if (!there) {
			s->desc_due[n++] = p;
			continue;
		}
		recent_put(s, p->pid, p->desc_blob, p->desc_size);
		p->desc_blob = NULL;
		p->desc_size = 0;
	}
	s->ndesc_due = n;
}

/* Those of procs that are gone leave it (session_retire). */
static void retire_gone(struct rec_session *s)
{
	unsigned n = 0;

	s->retire_due = false;
	for (unsigned i = 0; i < s->nprocs; i++) {
		struct rec_process *p = s->procs[i];

		if (p->fd >= 0 || p->arena) {
			s->procs[n++] = p;
			continue;
		}
		if (!session_retire(s, p))
			s->procs[n++] = p; /* no memory: kept as it was */
	}
	s->nprocs = n;
}

int session_poll(struct rec_session *s, int timeout_us, int extra_fd)
{
	struct timespec ts = { timeout_us / 1000000, timeout_us % 1000000 * 1000 };
	struct pollfd *pfd;
	unsigned n = 0, drained;
	int extra_ready = 0;
	bool asleep = false;

	if (s->retire_due)
		retire_gone(s);
	/* grown, never allocated per call */
	if (s->npollfd < s->nprocs + 4) {
		pfd = realloc(s->pollfd, (s->nprocs + 4) * sizeof(*pfd));
		if (!pfd)
			return -ENOMEM;
		s->pollfd = pfd;
		s->npollfd = s->nprocs + 4;
	}
	pfd = s->pollfd;
	pfd[n++] = (struct pollfd){ s->listen_fd, POLLIN, 0 };
	pfd[n++] = (struct pollfd){ extra_fd, POLLIN, 0 };
	pfd[n++] = (struct pollfd){ s->wake_fd, POLLIN, 0 };
	pfd[n++] = (struct pollfd){ drain_poll_fd(&s->drain), POLLIN, 0 };
	for (unsigned i = 0; i < s->nprocs; i++)
		pfd[n++] = (struct pollfd){ s->procs[i]->fd, POLLIN, 0 };

	drained = consumer_drain(s);
	if (!drained && timeout_us) {
		int us = consumer_sleep_begin(s, timeout_us);

		asleep = us > 0;
		s->sleeps += asleep;
		ts = (struct timespec){ us / 1000000, us % 1000000 * 1000 };
		/* completions are reaped at the next wake-up unless what
		 * they give back is wanted now: a context switch each costs
		 * as much as the write on some VMs */
		if (asleep && !s->reap_wakes)
			pfd[3].fd = -1;
	} else {
		ts = (struct timespec){ 0, 0 };
	}
	if (ppoll(pfd, n, &ts, NULL) > 0) {
		if (pfd[1].revents)
			extra_ready = 1;
		for (unsigned i = 0; i < s->nprocs; i++) {
			struct rec_process *p = s->procs[i];
			int ret = 0;

			if (p->fd < 0 || !pfd[4 + i].revents)
				continue;
			/* What is queued, up to MESSAGES_PER_LOOK: a
			 * process that sends without end (4 threads of
			 * ERROR messages) kept us here, its buffers and the
			 * others' not drained; the rest is taken at the
			 * next look, at once (the socket is still ready). */
			for (unsigned k = 0; k < MESSAGES_PER_LOOK &&
					     (ret = process_message(s, p)) > 0 &&
					     p->fd >= 0; k++)
				;
			/* (other errors are said where they happen, or
			 * are the process leaving) */
			if (ret == -EPROTO || ret == -EINVAL)
				fprintf(stderr, "tracekit: process %u: dropped: it broke the control protocol\n",
					p->pid);
			if (ret == -EMFILE)
				fprintf(stderr, "tracekit: process %u: not recorded: its buffers could not be received (%s)\n",
					p->pid, strerror(EMFILE));
			if (ret < 0) {
				/* gone (or dropped): write out what it left */
				process_close(p);
				consumer_process_gone(s, p);
				s->retire_due = true;
			}
			if (s->failed)
				break;
		}
		if (pfd[0].revents & POLLIN)
			for (unsigned k = 0; k < 64 && accept_process(s); k++)
				;
	}
	if (asleep)
		consumer_sleep_end(s);
	s->drained = drained + consumer_drain(s);
	if (s->failed)
		return -EINVAL;
	return extra_ready;
}

bool session_heard_from(const struct rec_session *s)
{
	if (s->heard)
		return true;
	for (unsigned i = 0; i < s->nprocs; i++)
		if (s->procs[i]->hello)
			return true;
	return false;
}

bool session_configured(const struct rec_session *s)
{
	if (s->was_configured)
		return true;
	for (unsigned i = 0; i < s->nprocs; i++)
		if (s->procs[i]->configured)
			return true;
	return false;
}

unsigned session_connected(const struct rec_session *s)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->nprocs; i++)
		n += s->procs[i]->fd >= 0;
	return n;
}

void session_stop(struct rec_session *s)
{
	struct tk_msg stop = { TK_MSG_STOP, sizeof(stop) };

	/* children that handed their buffers over just now wait in the
	 * backlog, with what they sent */
	for (unsigned n = 0; s->listen_fd >= 0 && n < LISTEN_BACKLOG &&
			     accept_process(s); n++)
		;
	for (unsigned i = 0; i < s->nprocs; i++) {
		struct rec_process *p = s->procs[i];

		if (p->fd < 0)
			continue;
		send(p->fd, &stop, sizeof(stop), MSG_NOSIGNAL | MSG_DONTWAIT);
		/* Take what is in flight before closing: buffers, and from a
		 * process without buffers its last count of what it lost
		 * (it answers STOP with it). */
		for (;;) {
			struct pollfd pfd = { p->fd, POLLIN, 0 };
			int ret;

			while ((ret = process_message(s, p)) > 0 && p->fd >= 0)
				;
			if (ret < 0 || !p->nobuf_err ||
			    poll(&pfd, 1, NOBUF_FINAL_MS) <= 0)
				break;
		}
		process_close(p);
	}
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	s->listen_fd = -1;
	consumer_flush_all(s);
	/* every process is gone now: those that left nothing in the trace
	 * too, whether they went before the end or at it */
	retire_gone(s);
	/* The TSC rate is measured over the recording; give it at least
	 * MIN_CLOCK_SPAN_NS so that short recordings convert well too. */
	while (ns_of(CLOCK_MONOTONIC) - s->clock.mono_start < MIN_CLOCK_SPAN_NS)
		usleep(10000);
	session_clock_now(s);
}

void session_clock_now(struct rec_session *s)
{
	clock_sample(s->clock.tsc, &s->clock.tsc_stop, &s->clock.mono_stop,
		     &s->clock.real_stop);
	s->clock.freq = !s->clock.tsc ? 1000000000u
		: s->clock.mono_stop > s->clock.mono_start
		? (uint64_t)((unsigned __int128)(s->clock.tsc_stop - s->clock.tsc_start) *
			     1000000000u / (s->clock.mono_stop - s->clock.mono_start))
		: 0;
	if (!s->clock.freq)
		s->clock.freq = 1;
}

/*
 * Room for the last index, taken when the first is written: a recording
 * that fills the disk would otherwise end without its manifest, and
 * report could read nothing of what it wrote (the manifest, the CTF
 * metadata and the descriptors take ~250 bytes a stream, a few KiB a
 * process).  Given back to write the last index when the disk is full,
 * and removed after it; a killed recorder leaves it behind.
 */
#define INDEX_RESERVE (1u << 20)

static void reserve(struct rec_session *s, bool make)
{
	char *path;
	int fd;

	if (asprintf(&path, "%s/" TK_INDEX_RESERVE, s->dir) < 0)
		return;
	if (!make) {
		unlink(path);
	} else if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) >= 0) {
		if (fallocate(fd, 0, 0, INDEX_RESERVE) < 0)
			unlink(path); /* no room, or no fallocate: none */
		close(fd);
	}
	free(path);
}

static int write_index(struct rec_session *s, bool incomplete);

int session_finish(struct rec_session *s)
{
	int ret = write_index(s, false);

	if (ret == -ENOSPC || ret == -EDQUOT) {
		/* the disk is full: the room kept for this */
		reserve(s, false);
		ret = write_index(s, false);
	}
	reserve(s, false);
	return ret;
}

int session_write_index(struct rec_session *s, bool incomplete)
{
	return write_index(s, incomplete);
}

static int write_index(struct rec_session *s, bool incomplete)
{
	struct tk_index x;
	int ret = session_render_index(s, incomplete, &x);

	if (ret)
		return ret;
	ret = tk_trace_store_index(&x, s->error, sizeof(s->error));
	tk_index_free(&x);
	return ret;
}

int session_render_index(struct rec_session *s, bool incomplete,
			 struct tk_index *x)
{
	struct tk_trace t;
	int ret;

	if (incomplete && !s->reserved) {
		s->reserved = true;
		reserve(s, true);
	}

	memset(&t, 0, sizeof(t));
	t.dir = s->dir;
	t.incomplete = incomplete;
	snprintf(t.host, sizeof(t.host), "%s", s->host);
	snprintf(t.mode, sizeof(t.mode), "%s",
		 s->opt->overwrite ? "overwrite" : "discard");
	t.clock = s->clock;
	t.kernel = s->kernel;
	desc_due_prune(s);
	t.processes = calloc(s->nprocs + s->ndesc_due + 1, sizeof(*t.processes));
	t.streams = calloc(s->nstreams + 1, sizeof(*t.streams));
	if (!t.processes || !t.streams) {
		free(t.processes);
		free(t.streams);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < s->nprocs; i++)
		if (s->procs[i]->hello)
			fill_process(s->procs[i], &t.processes[t.nprocesses++]);
	/* gone since the last index: their descriptor files */
	for (unsigned i = 0; i < s->ndesc_due; i++) {
		fill_process(s->desc_due[i], &t.processes[t.nprocesses]);
		t.processes[t.nprocesses++].desc_only = true;
	}
	for (unsigned i = 0; i < s->nstreams; i++) {
		if (!s->streams[i]->file || s->streams[i]->proc->retired)
			continue; /* nothing was ever written, or in done */
		consumer_stream_stats(s->streams[i], &t.streams[t.nstreams++]);
	}
	if (s->done_classes) {
		if (fflush(s->done_classes) || fflush(s->done_procs) ||
		    fflush(s->done_streams) || ferror(s->done_classes) ||
		    ferror(s->done_procs) || ferror(s->done_streams)) {
			free(t.processes);
			free(t.streams);
			snprintf(s->error, sizeof(s->error), "cannot write '%s/%s': %s",
				 s->dir, TK_MANIFEST_NAME, strerror(ENOMEM));
			return -ENOMEM;
		}
		t.done = (struct tk_trace_done){
			s->done_classes_buf, s->done_classes_len,
			s->done_procs_buf, s->done_procs_len,
			s->done_streams_buf, s->done_streams_len,
		};
	}
	ret = tk_trace_render_index(&t, x, s->error, sizeof(s->error));
	free(t.processes);
	free(t.streams);
	return ret;
}

void session_print_work(const struct rec_session *s, FILE *f)
{
	uint64_t packets = 0;

	for (unsigned i = 0; i < s->nstreams; i++)
		packets += s->streams[i]->packets;
	fprintf(f, "tracekit: the recorder wrote %llu packets, slept %llu times, was woken %llu times by writers\n",
		(unsigned long long)packets, (unsigned long long)s->sleeps,
		(unsigned long long)consumer_wakeups(s));
	if (s->drain.writes)
		fprintf(f, "tracekit: %llu writes, %llu of them from memory registered with io_uring\n",
			(unsigned long long)s->drain.writes,
			(unsigned long long)s->drain.writes_fixed);
	if (s->spilled)
		fprintf(f, "tracekit: %llu KiB written through the page cache while the disk was behind\n",
			(unsigned long long)(s->spilled >> 10));
	if (s->parked)
		fprintf(f, "tracekit: %llu times a stream's file was closed while idle, for want of descriptors (RLIMIT_NOFILE), and opened again at need\n",
			(unsigned long long)s->parked);
	if (s->writers_took)
		fprintf(f, "tracekit: %llu KiB of pool taken by writers that found none free (a burst faster than the recorder made it)\n",
			(unsigned long long)(s->writers_took >> 10));
}

/* Why events were lost, and what keeps them, one line per cause. */
static void print_loss_causes(const struct rec_session *s, FILE *f)
{
	uint64_t full = 0, nested = 0, big = 0, over = 0, unwritten = 0;

	for (unsigned i = 0; i < s->nstreams; i++) {
		struct tk_trace_stream ts;

		consumer_stream_stats(s->streams[i], &ts);
		/* (its lost_full counts the packets that could not be
		 * written too: a cause of their own) */
		unwritten += s->streams[i]->lost_write;
		full += ts.lost_full - s->streams[i]->lost_write;
		nested += ts.lost_nested;
		big += ts.lost_big;
		over += ts.lost_overwritten;
	}
	if (unwritten)
		fprintf(f, "tracekit: %llu events lost in packets that could not be written (%s)\n",
			(unsigned long long)unwritten,
			s->error[0] ? s->error : "a write failed");
	if (full)
		fprintf(f, "tracekit: %llu events lost for want of room: the recorder fell behind and a thread's buffer (-b %u KiB) or its process's pool (--pool %u KiB) was full; larger ones keep more, --block keeps all (writers wait)\n",
			(unsigned long long)full, s->opt->buffer_kb,
			s->opt->pool_max * s->opt->subbuf_kb);
	if (nested)
		fprintf(f, "tracekit: %llu events lost in signal handlers that interrupted an event of their own thread (an event is never written inside another)\n",
			(unsigned long long)nested);
	if (big)
		fprintf(f, "tracekit: %llu events lost as too large: an event must fit in a sub-buffer (%u KiB; --subbufs sets fewer, larger ones)\n",
			(unsigned long long)big, s->opt->subbuf_kb);
	if (over)
		fprintf(f, "tracekit: %llu events overwritten by newer ones (--overwrite keeps the newest -b of each thread)\n",
			(unsigned long long)over);
}

/* Process @i of those gone with something in the trace, then of those
 * still there: the order they came in, nearly. */
static const struct rec_process *proc_at(const struct rec_session *s, unsigned i)
{
	return i < s->ngone ? s->gone[i] : s->procs[i - s->ngone];
}

/* The streams the summary shows by default: those that fired or lost
 * the most; -v shows all (a program of 250 threads printed 250 lines,
 * one that made 5000 short-lived threads 5000). */
#define SUMMARY_STREAMS 10

struct summary_row {
	struct tk_trace_stream ts;
	uint64_t lost;
};

/* Most lost first, then most events; then by process and thread. */
static int row_cmp(const void *a, const void *b)
{
	const struct summary_row *x = a, *y = b;

	if (x->lost != y->lost)
		return x->lost < y->lost ? 1 : -1;
	if (x->ts.events != y->ts.events)
		return x->ts.events < y->ts.events ? 1 : -1;
	if (x->ts.pid != y->ts.pid)
		return x->ts.pid < y->ts.pid ? -1 : 1;
	return x->ts.tid < y->ts.tid ? -1 : x->ts.tid > y->ts.tid;
}

/* By process and thread: -v's order. */
static int row_cmp_id(const void *a, const void *b)
{
	const struct summary_row *x = a, *y = b;

	if (x->ts.pid != y->ts.pid)
		return x->ts.pid < y->ts.pid ? -1 : 1;
	return x->ts.tid < y->ts.tid ? -1 : x->ts.tid > y->ts.tid;
}

static void print_row(FILE *f, const char *name, const char *pid, uint64_t events,
		      uint64_t lost, uint64_t bytes)
{
	fprintf(f, "%-24s %8s %12llu %12llu %12llu\n", name, pid,
		(unsigned long long)events, (unsigned long long)lost,
		(unsigned long long)bytes);
}

/* The streams' rows: with @all each, by process and thread; else the
 * SUMMARY_STREAMS that lost or fired the most, then one line for the
 * rest.  Adds their counts to @events, @lost and @bytes. */
static void print_stream_rows(const struct rec_session *s, FILE *f, bool all,
			      uint64_t *events, uint64_t *lost, uint64_t *bytes)
{
	struct summary_row *rows = calloc(s->nstreams + 1, sizeof(*rows));
	uint64_t more_events = 0, more_lost = 0;
	unsigned shown;

	if (!rows) {
		fprintf(f, "tracekit: out of memory: no stream listed\n");
		return;
	}
	for (unsigned i = 0; i < s->nstreams; i++) {
		consumer_stream_stats(s->streams[i], &rows[i].ts);
		rows[i].lost = tk_stream_lost(&rows[i].ts);
		*events += rows[i].ts.events;
		*lost += rows[i].lost;
		*bytes += rows[i].ts.bytes;
	}
	/* one more would take the line that sums the rest up */
	shown = all || s->nstreams <= SUMMARY_STREAMS + 1 ? s->nstreams : SUMMARY_STREAMS;
	qsort(rows, s->nstreams, sizeof(*rows),
	      shown == s->nstreams ? row_cmp_id : row_cmp);
	for (unsigned i = 0; i < s->nstreams; i++) {
		char name[40], pid[16];

		if (i >= shown) {
			more_events += rows[i].ts.events;
			more_lost += rows[i].lost;
			continue;
		}
		snprintf(name, sizeof(name), "%s-%u", rows[i].ts.comm, rows[i].ts.tid);
		snprintf(pid, sizeof(pid), "%u", rows[i].ts.pid);
		print_row(f, name, pid, rows[i].ts.events, rows[i].lost, rows[i].ts.bytes);
	}
	if (shown < s->nstreams)
		fprintf(f, "... and %u more stream%s: %llu events, %llu lost (record -v lists each, report's header too)\n",
			s->nstreams - shown, s->nstreams - shown == 1 ? "" : "s",
			(unsigned long long)more_events,
			(unsigned long long)more_lost);
	free(rows);
}

/* What a process says of its call sites and CPU (kind 0: static keys or
 * why not, 1: no rseq area), into @out; "" if nothing. */
static void process_note(const struct rec_process *p, int kind, char *out, size_t len)
{
	out[0] = '\0';
	if (!p->hello)
		return;
	if (kind == 0 && p->keys)
		snprintf(out, len, "call sites are static keys");
	else if (kind == 0)
		snprintf(out, len, "call sites test a byte (no static keys: %s)",
			 p->keys_why[0] ? p->keys_why : "?");
	else if (!p->cpu_rseq)
		snprintf(out, len, "no rseq area: each event asks sched_getcpu() for its CPU (slower)");
}

/* A process's note of one kind (process_note), for print_process_notes. */
struct proc_note {
	char text[320];
	unsigned first; /* proc_at() index of the first process that has it */
	unsigned count;
};

static int note_by_text(const void *a, const void *b)
{
	const struct proc_note *x = a, *y = b;
	int c = strcmp(x->text, y->text);

	return c ? c : x->first < y->first ? -1 : x->first > y->first;
}

static int note_by_first(const void *a, const void *b)
{
	const struct proc_note *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* Each note of process_note() once, with the first process that has it
 * and how many more do (a forking program's 13 processes said "call
 * sites are static keys" 13 times); sorted, not compared pairwise: a
 * recording may keep thousands of processes. */
static void print_process_notes(const struct rec_session *s, FILE *f)
{
	unsigned n = s->ngone + s->nprocs;
	struct proc_note *notes = calloc(n ? n : 1, sizeof(*notes));

	if (!notes) {
		fprintf(f, "tracekit: out of memory: no process notes\n");
		return;
	}
	for (int kind = 0; kind < 2; kind++) {
		unsigned k = 0, groups = 0;

		for (unsigned i = 0; i < n; i++) {
			process_note(proc_at(s, i), kind, notes[k].text, sizeof(notes[k].text));
			if (!notes[k].text[0])
				continue;
			notes[k].first = i;
			notes[k].count = 1;
			k++;
		}
		qsort(notes, k, sizeof(*notes), note_by_text);
		for (unsigned i = 0; i < k; i++) {
			if (groups && !strcmp(notes[groups - 1].text, notes[i].text)) {
				notes[groups - 1].count++;
				continue;
			}
			notes[groups++] = notes[i];
		}
		qsort(notes, groups, sizeof(*notes), note_by_first);
		for (unsigned i = 0; i < groups; i++) {
			const struct rec_process *p = proc_at(s, notes[i].first);
			unsigned more = notes[i].count - 1;

			if (more)
				fprintf(f, "tracekit: %s-%u and %u more process%s: %s\n", p->comm,
					p->pid, more, more == 1 ? "" : "es", notes[i].text);
			else
				fprintf(f, "tracekit: %s-%u: %s\n", p->comm, p->pid, notes[i].text);
		}
	}
	free(notes);
}

void session_print_streams(const struct rec_session *s, FILE *f, bool all)
{
	uint64_t events = 0, lost = 0, bytes = 0;

	/* streams named NAME-TID, as report's header and lines name them */
	fprintf(f, "%-24s %8s %12s %12s %12s\n", "STREAM", "PID", "EVENTS",
		"LOST", "BYTES");
	print_stream_rows(s, f, all, &events, &lost, &bytes);
	/* events of threads that had no stream to count them in */
	for (unsigned i = 0; i < s->ngone + s->nprocs; i++) {
		const struct rec_process *p = proc_at(s, i);
		uint64_t n = consumer_lost_nobuf(p);
		char name[40];

		if (!n)
			continue;
		snprintf(name, sizeof(name), "%s-%u", p->comm, p->pid);
		print_row(f, name, "-", 0, n, 0);
		lost += n;
	}
	print_row(f, "total", "", events, lost, bytes);
	print_loss_causes(s, f);
	if (s->nstreams) {
		char how[256];

		drain_describe(&s->drain, how, sizeof(how));
		fprintf(f, "tracekit: buffers written with %s\n", how);
		fprintf(f, "tracekit: buffer pool: %llu KiB made for the largest process (limit %llu KiB)\n",
			(unsigned long long)(s->pool_most >> 10),
			(unsigned long long)s->opt->pool_max * s->opt->subbuf_kb);
	}
	for (unsigned i = 0; i < s->nstreams; i++) {
		const struct rec_stream *st = s->streams[i];

		if (st->corrupt)
			fprintf(f, "tracekit: %s-%u: stream %u is corrupt, not read to its end: %s (the program wrote over its buffer)\n",
				st->proc->comm, st->proc->pid, st->tid, st->corrupt);
		if (st->restamped)
			fprintf(f, "tracekit: %s-%u: stream %u: %llu packets whose headers the program wrote over (stream class, instance or sizes) written with the recorder's\n",
				st->proc->comm, st->proc->pid, st->tid,
				(unsigned long long)st->restamped);
	}
	if (s->refused)
		fprintf(f, "tracekit: %u process%s not recorded: %s\n",
			s->refused, s->refused == 1 ? "" : "es", strerror(s->accept_errno));
	for (unsigned i = 0; i < s->ngone + s->nprocs; i++) {
		const struct rec_process *p = proc_at(s, i);
		uint64_t n = consumer_lost_nobuf(p);

		if (!n)
			continue;
		if (p->nobuf_err)
			fprintf(f, "tracekit: %s-%u: %llu events lost: its buffers could not be made (%s: %s)\n",
				p->comm, p->pid, (unsigned long long)n, p->nobuf_what,
				strerror(p->nobuf_err));
		else
			fprintf(f, "tracekit: %s-%u: %llu events lost by threads that found no free stream (more than %u at once) or no free sub-buffer for their first packet\n",
				p->comm, p->pid, (unsigned long long)n, s->opt->streams_max);
	}
	print_process_notes(s, f);
}

void session_describe(const struct rec_session *s, char *out, size_t len)
{
	unsigned n = s->nprocs + s->ngone + s->forgotten;

	snprintf(out, len, "%u stream%s of %u process%s", s->nstreams,
		 s->nstreams == 1 ? "" : "s", n, n == 1 ? "" : "es");
}

void session_free(struct rec_session *s)
{
	consumer_free(s); /* the maker thread first: it uses the arenas */
	for (unsigned i = 0; i < s->nstreams; i++) {
		struct rec_stream *st = s->streams[i];

		if (st->out_fd >= 0)
			close(st->out_fd);
		free(st->file);
		free(st);
	}
	for (unsigned i = 0; i < s->nprocs; i++)
		process_free(s, s->procs[i]);
	for (unsigned i = 0; i < s->ngone; i++)
		process_free(s, s->gone[i]);
	for (unsigned i = 0; i < REC_RECENT; i++)
		free(s->recent[i].blob);
	for (unsigned i = 0; i < 3; i++) {
		FILE *f = i == 0 ? s->done_classes : i == 1 ? s->done_procs
							    : s->done_streams;

		if (f)
			fclose(f);
	}
	free(s->done_classes_buf);
	free(s->done_procs_buf);
	free(s->done_streams_buf);
	free(s->gone);
	free(s->desc_due);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	drain_free(&s->drain);
	while (s->free_writes) {
		struct rec_write *w = s->free_writes;

		s->free_writes = w->next;
		free(w);
	}
	free(s->pollfd);
	free(s->streams);
	free(s->procs);
	free(s->dir);
	memset(s, 0, sizeof(*s));
}
