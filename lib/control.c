/* SPDX-License-Identifier: MIT */
/*
 * control.c - the process's side of the session with the recorder.
 *
 * At start-up (the first module registering its events) the runtime:
 *   - listens on the abstract socket "@tracekit-PID" (attach, list), from
 *     one small thread with every signal blocked;
 *   - if TRACEKIT_SESSION names a recorder (`record -- CMD`), connects to
 *     it, says HELLO, announces its events and waits (3 s at most) for the
 *     CONFIG, so that events are on before main() runs.
 * With the CONFIG the process makes its buffers (arena.c) and hands them
 * over (ARENA) before any event is switched on: a small part of the pool,
 * which is all that a process that never fires holds; the recorder makes
 * more once it writes, and as bursts need it.  What cannot be made is said (NOBUF)
 * and tried again a few times a second at most, the events lost
 * meanwhile counted.  A forked child that follows the session makes its
 * own buffers in the fork handler and joins from its own control thread:
 * its first event never waits for the recorder.
 * A session ends on STOP or when the recorder's socket closes (the
 * recorder died): recording stops and the program goes on unaffected.
 * A peer is accepted only if it is root, or runs with our effective uid
 * while we are dumpable (SO_PEERCRED; a setuid program answers root
 * only, as ptrace would: common/unix-socket.c tk_peer_allowed).
 * Protocol: protocol.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "internal.h"
#include "common/ringbuf-layout.h"
#include "common/unix-socket.h"
#include "lib/functrace/functrace.h"

#define CONFIG_WAIT_MS 3000
/* Buffers that could not be made are tried again this often. */
#define NOBUF_RETRY_MS 500
/* Stream descriptors made with the arena (8 KiB each): a process's
 * first threads' (the recorder makes the next ones as threads come); a
 * forked child's (most have one thread, or exec at once). */
#define STREAMS_TOUCHED 8
#define CHILD_STREAMS_TOUCHED 2
/* What the listener needs besides the static TLS (start_listener). */
#define LISTENER_STACK (256 * 1024)

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int listen_fd = -1;
/* Written under the registry lock (session_open, session_close: RELEASE
 * stores), read without it by tk_session_send, the listener's poll and
 * nobuf_at_exit (ACQUIRE loads, their partners): a reader takes only the
 * number, whole, and nothing written before it; the fd of a session that
 * ended stays open, shut down, until the next one opens (retired_fd). */
static int session_fd = -1;
static int retired_fd = -1; /* shut down, closed when the next one opens */
static char session_name[108];
static bool child_join;  /* a forked child: join from the listener thread */
/* The pid our last HELLO gave; in a forked child, until it says HELLO
 * itself, its parent's: the ppid of a forked child's HELLO (the child
 * may be gone before the recorder could read it from /proc). */
static uint32_t hello_pid, parent_pid;
/* The last failure to make buffers (listener thread): errno, 0 if none. */
static int nobuf_err;
static const char *nobuf_what;
/* The recorder's wake-up eventfd, on one descriptor number for the
 * process's life: a writer may have loaded the number just before a
 * session changes, so a new session's eventfd is put on the same number
 * (dup3) and none is ever closed (stream.c, packet_close). */
int tk_wake_fd = -1;
/* What it is (fstat): a program may close it and open a file of its own
 * that takes the number (daemons close every descriptor above 2), and a
 * writer's 8 bytes went into that file; a writer checks it first
 * (tk_wake_fd_ours). */
static dev_t wake_dev;
static ino_t wake_ino;

/* Control messages may wait this long for room in the socket (a recorder
 * that is alive drains it at once); events never wait. */
#define SEND_WAIT_MS 1000

int tk_send_to(int sock, const void *msg, size_t len, int fd)
{
	return tk_send_fds_to(sock, msg, len, &fd, fd >= 0);
}

int tk_send_fds_to(int sock, const void *msg, size_t len, const int *fds,
		   unsigned nfds)
{
	int err;

	if (sock < 0)
		return -ENOTCONN;
	while ((err = tk_send_fds(sock, msg, len, fds, nfds, MSG_DONTWAIT))) {
		struct pollfd pfd = { sock, POLLOUT, 0 };

		if (err == -EINTR)
			continue;
		if (err != -EAGAIN || poll(&pfd, 1, SEND_WAIT_MS) <= 0)
			return err == -EAGAIN ? -ETIMEDOUT : err;
	}
	return 0;
}

int tk_session_send(const void *msg, size_t len, int fd)
{
	return tk_send_to(__atomic_load_n(&session_fd, __ATOMIC_ACQUIRE), msg,
			  len, fd);
}

int tk_session_fd_locked(void)
{
	return session_fd;
}

static void fill_hello(struct tk_msg_hello *hp)
{
	struct tk_msg_hello h;
	const char *why;
	ssize_t n;

	memset(&h, 0, sizeof(h));
	h.m.type = TK_MSG_HELLO;
	h.m.len = sizeof(h);
	h.version = TK_PROTOCOL_VERSION;
	/* the process's name: its main thread's, whichever thread asks */
	h.pid = tk_self_read(h.comm, sizeof(h.comm));
	/* h.ppid stays 0 but for a forked child: the recorder reads it from
	 * /proc, so that no system call of the runtime's set-up (a getppid()
	 * the program did not make) is among the program's kernel events */
	if (child_join)
		h.ppid = parent_pid;
	hello_pid = h.pid;
	h.clock = TK_CLOCK_TSC;
	h.forked = child_join;
	n = readlink("/proc/self/exe", h.exe, sizeof(h.exe) - 1);
	if (n < 0)
		h.exe[0] = '\0';
	h.keys = tk_keys_active(&why);
	h.nsites = tk_keys_sites();
	h.cpu_rseq = tk_cpu_rseq();
	snprintf(h.keys_why, sizeof(h.keys_why), "%s", why ? why : "");
	*hp = h;
}

static int send_hello(int fd)
{
	static struct tk_msg_hello h; /* 4 KiB: not on the listener's stack */

	fill_hello(&h);
	return tk_send_to(fd, &h, sizeof(h), -1);
}

/* Adopt @fd as the session: HELLO, every event, EVENTS_DONE. */
static int session_open(int fd)
{
	int err;

	tk_registry_lock();
	if (retired_fd >= 0) {
		close(retired_fd);
		retired_fd = -1;
	}
	__atomic_store_n(&session_fd, fd, __ATOMIC_RELEASE);
	err = send_hello(fd);
	if (!err)
		err = tk_registry_announce_locked(fd);
	tk_registry_unlock();
	return err;
}

static void free_rules(void)
{
	tk_rules_free(tk_config.rules, tk_config.nrules);
	tk_config.rules = NULL;
	tk_config.nrules = 0;
}

static void session_close(void)
{
	tk_registry_lock();
	if (session_fd >= 0) {
		shutdown(session_fd, SHUT_RDWR);
		retired_fd = session_fd;
		__atomic_store_n(&session_fd, -1, __ATOMIC_RELEASE);
	}
	free_rules();
	tk_config.active = false;
	tk_config_publish_locked();
	tk_streams_session_changed();
	tk_streams_set_arena(NULL);
	tk_registry_apply_all_locked();
	tk_registry_unlock();
	nobuf_err = 0;
	tk_functrace_session(NULL, 0);
}

/* Say that the buffers could not be made, and what was lost so far;
 * @wait: for room in the socket (a second at most). */
static void send_nobuf(int fd, int err, const char *what, bool wait)
{
	struct tk_msg_nobuf m;

	memset(&m, 0, sizeof(m));
	m.m.type = TK_MSG_NOBUF;
	m.m.len = sizeof(m);
	m.err = err;
	m.lost = tk_streams_lost_nobuf();
	snprintf(m.what, sizeof(m.what), "%s", what);
	if (wait)
		tk_send_to(fd, &m, sizeof(m), -1);
	else
		tk_send_fds(fd, &m, sizeof(m), NULL, 0, MSG_DONTWAIT);
}

/* The process ends without buffers: its last count of what it lost (not
 * waiting: the socket has room, or the recorder is gone). */
__attribute__((destructor)) static void nobuf_at_exit(void)
{
	int fd = __atomic_load_n(&session_fd, __ATOMIC_ACQUIRE);

	if (nobuf_err && fd >= 0)
		send_nobuf(fd, nobuf_err, nobuf_what ? nobuf_what : "?", false);
}

/* Hand @a over (ARENA, its two memfds), then close our fds of it. */
static int send_arena(int fd, struct tk_arena_map *a)
{
	struct tk_msg_arena m;
	int err;

	memset(&m, 0, sizeof(m));
	m.m.type = TK_MSG_ARENA;
	m.m.len = sizeof(m);
	m.made = a->geom.pool_init;
	m.lost_nobuf = tk_streams_lost_nobuf();
	err = tk_send_fds_to(fd, &m, sizeof(m), a->fds, 2);
	for (int i = 0; i < 2; i++) {
		close(a->fds[i]);
		a->fds[i] = -1;
	}
	return err;
}

/* Make the session's buffers, hand them to the recorder on @fd, and let
 * new streams open in them; on failure say why (NOBUF): the listener tries
 * again every NOBUF_RETRY_MS. */
static void make_arena(int fd)
{
	struct tk_arena_geom g;
	struct tk_arena_map *a;
	const char *what = "?";
	bool active;

	tk_registry_lock();
	g = tk_config.geom;
	active = tk_config.active;
	tk_registry_unlock();
	if (!active)
		return;
	a = tk_arena_create(&g, STREAMS_TOUCHED, 0, &what);
	if (!a) {
		nobuf_err = errno;
		nobuf_what = what;
		send_nobuf(fd, nobuf_err, what, true);
		return;
	}
	if (send_arena(fd, a) < 0) {
		tk_arena_forget(a);
		return;
	}
	nobuf_err = 0;
	tk_registry_lock();
	a->gen = __atomic_load_n(&tk_session_gen, __ATOMIC_SEQ_CST);
	tk_streams_set_arena(a);
	tk_registry_unlock();
}

bool tk_wake_fd_ours(int fd)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 &&
	       sb.st_dev == __atomic_load_n(&wake_dev, __ATOMIC_RELAXED) &&
	       sb.st_ino == __atomic_load_n(&wake_ino, __ATOMIC_RELAXED);
}

/* Adopt the recorder's eventfd @fd (see tk_wake_fd): on the number of
 * the last one, unless the program has taken that number for a file of
 * its own (then on its own number: a writer that loaded the old one
 * finds it is not ours). */
static void set_wake_fd(int fd)
{
	int old = __atomic_load_n(&tk_wake_fd, __ATOMIC_RELAXED);
	struct stat sb;

	if (fd < 0)
		return;
	if (fstat(fd, &sb) < 0) { /* (refused: no wake-ups, timeouts only) */
		close(fd);
		return;
	}
	if (old >= 0 && tk_wake_fd_ours(old)) {
		dup3(fd, old, O_CLOEXEC);
		close(fd);
		return;
	}
	/* every eventfd is the same inode: these only change from none */
	__atomic_store_n(&wake_dev, sb.st_dev, __ATOMIC_RELAXED);
	__atomic_store_n(&wake_ino, sb.st_ino, __ATOMIC_RELAXED);
	/* pairs with the ACQUIRE load of tk_wake_fd in
	 * lib/stream.c:wake_recorder() (wake_dev, wake_ino with it) */
	__atomic_store_n(&tk_wake_fd, fd, __ATOMIC_RELEASE);
}

static int apply_config(int fd, const void *msg, size_t len, int wake_fd)
{
	struct tk_config_msg c;
	int err = tk_config_msg_parse(msg, len, &c);

	if (err) {
		if (wake_fd >= 0)
			close(wake_fd);
		return err;
	}
	set_wake_fd(wake_fd);
	tk_registry_lock();
	free_rules();
	tk_config.rules = c.rules;
	tk_config.nrules = c.nrules;
	tk_config.geom = (struct tk_arena_geom){
		.mode = c.mode,
		.chunk_size = c.chunk_size,
		.slots = c.slots,
		.streams_max = c.streams_max,
		.pool_init = c.pool_init,
		.pool_max = c.pool_max,
		.block_ms = c.block_ms,
	};
	tk_config.pool_init_child = c.pool_init_child;
	tk_config.flags = c.flags;
	tk_config.active = true;
	__atomic_store_n(&tk_clock_mono, (c.flags & TK_CONFIG_CLOCK_MONO) != 0,
			 __ATOMIC_RELAXED);
	tk_config_publish_locked();
	tk_streams_session_changed();
	tk_registry_unlock();
	/* buffers first, then the events: nothing is lost for want of them */
	make_arena(fd);
	tk_registry_lock();
	tk_registry_apply_all_locked();
	tk_registry_unlock();
	/* the stacks' event: registered, so announced to the recorder, once
	 * the session is active; then the events are told to use it */
	if ((c.flags & TK_CONFIG_USER_STACK) && tk_ft_events_register() == 0) {
		tk_registry_lock();
		tk_registry_apply_all_locked();
		tk_registry_unlock();
	}
	tk_functrace_session(c.func_opts, c.nfunc_opts);
	tk_config_func_opts_free(&c);
	return 0;
}

/* The recorder made the pool's first @chunks chunks: map them here, off
 * the writers' path (a page fault costs microseconds on some VMs). */
static void map_made(uint32_t chunks)
{
	struct tk_arena_map *a = tk_streams_arena();

	if (!a)
		return;
	if (chunks > a->geom.pool_max)
		chunks = a->geom.pool_max;
	if (chunks > a->mapped &&
	    madvise(a->pool + (size_t)a->mapped * a->geom.chunk_size,
		    (size_t)(chunks - a->mapped) * a->geom.chunk_size,
		    MADV_POPULATE_WRITE) == 0)
		a->mapped = chunks;
}

/* Handle one message from the recorder; returns < 0 when the session is
 * over. */
static int session_receive(int fd)
{
	static char buf[TK_MSG_MAX];
	const struct tk_msg *m = (const struct tk_msg *)buf;
	unsigned nfds;
	int passed = -1;
	ssize_t n = tk_recv_fds(fd, buf, sizeof(buf), &passed, 1, &nfds, 0);

	if (!nfds)
		passed = -1;
	if (n > 0 && (size_t)n >= sizeof(*m) && m->len == (uint32_t)n &&
	    m->type == TK_MSG_CONFIG)
		return apply_config(fd, buf, (size_t)n, passed);
	if (passed >= 0)
		close(passed);
	if (n <= 0)
		return -EPIPE;
	if ((size_t)n < sizeof(*m) || m->len != (uint32_t)n)
		return -EPROTO;
	switch (m->type) {
	case TK_MSG_MADE:
		if ((size_t)n < sizeof(struct tk_msg_made))
			return -EPROTO;
		map_made(((const struct tk_msg_made *)buf)->chunks);
		return 0;
	case TK_MSG_STOP:
		if (nobuf_err) /* the last count of what was lost */
			send_nobuf(fd, nobuf_err, nobuf_what, true);
		return -ECANCELED;
	default:
		return -EPROTO;
	}
}

static int listen_socket(void)
{
	struct sockaddr_un sa;
	char name[64];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	snprintf(name, sizeof(name), TK_SOCKET_PREFIX "%u", tk_self_pid());
	if (bind(fd, (struct sockaddr *)&sa, tk_abstract_addr(&sa, name)) < 0 ||
	    listen(fd, 4) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void set_send_buffer(int fd)
{
	int size = 4 << 20;

	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

/* A second peer while a session runs is told that the process is busy,
 * then what it defines (enough for `tracekit list`). */
static void answer_busy(int fd)
{
	struct tk_msg_error e = { { TK_MSG_ERROR, sizeof(e) },
				  "another recorder is attached" };

	tk_registry_lock();
	if (send_hello(fd) == 0 && tk_send_to(fd, &e, sizeof(e), -1) == 0)
		tk_registry_announce_locked(fd);
	tk_registry_unlock();
	close(fd);
}

static void accept_peer(void)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	bool busy;

	if (fd < 0)
		return;
	if (!tk_peer_allowed(fd)) {
		close(fd);
		return;
	}
	set_send_buffer(fd);
	tk_registry_lock();
	busy = session_fd >= 0;
	tk_registry_unlock();
	if (busy) {
		answer_busy(fd);
		return;
	}
	if (session_open(fd) < 0)
		session_close();
}

static void join_as_child(void);

static void *listener_main(void *arg)
{
	(void)arg;
	if (child_join)
		join_as_child();
	for (;;) {
		struct pollfd pfd[2] = { { listen_fd, POLLIN, 0 },
					 { -1, POLLIN, 0 } };
		int n;

		pfd[1].fd = __atomic_load_n(&session_fd, __ATOMIC_ACQUIRE);
		n = poll(pfd, 2, nobuf_err && pfd[1].fd >= 0 ? NOBUF_RETRY_MS : -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (n == 0 && nobuf_err && pfd[1].fd >= 0) {
			make_arena(pfd[1].fd);
			if (!nobuf_err) {
				tk_registry_lock();
				tk_registry_apply_all_locked();
				tk_registry_unlock();
			}
			continue;
		}
		if (pfd[1].fd >= 0 && pfd[1].revents &&
		    session_receive(pfd[1].fd) < 0)
			session_close();
		if (pfd[0].revents & POLLIN)
			accept_peer();
	}
	return NULL;
}

static int add_tls_size(struct dl_phdr_info *info, size_t size, void *data)
{
	size_t *total = data;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_TLS)
			*total += info->dlpi_phdr[i].p_memsz +
				  info->dlpi_phdr[i].p_align;
	return 0;
}

/* glibc carves the static TLS of every module loaded at start-up (a
 * server's `static __thread char buf[1 << 20]`) out of each thread's
 * stack, and refuses a stack that cannot hold it (EINVAL): the listener's
 * stack is its own need plus that. */
static size_t listener_stack_size(void)
{
	size_t tls = 0;

	dl_iterate_phdr(add_tls_size, &tls);
	return (LISTENER_STACK + tls + 65535) & ~(size_t)65535;
}

/* Listen, and answer from a thread of our own.  Without that thread
 * nobody would answer on the socket: it is closed, so that clients are
 * told at once that there is no control socket rather than wait. */
static void start_listener(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t th;
	size_t stack = listener_stack_size();
	int err = EINVAL;

	listen_fd = listen_socket();
	if (listen_fd < 0)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* the static TLS size is an estimate: grow the stack until it fits */
	for (int i = 0; i < 4 && err == EINVAL; i++, stack *= 2)
		if (pthread_attr_setstacksize(&attr, stack) == 0)
			err = pthread_create(&th, &attr, listener_main, NULL);
	if (err == 0)
		pthread_setname_np(th, "tracekit-ctl");
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close(listen_fd);
		listen_fd = -1;
	}
}

/* Connect to the recorder named by TRACEKIT_SESSION and introduce
 * ourselves (HELLO, events); returns the socket, or -1. */
static int session_connect(void)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	set_send_buffer(fd);
	if (connect(fd, (struct sockaddr *)&sa,
		    tk_abstract_addr(&sa, session_name)) < 0 ||
	    !tk_peer_allowed(fd)) {
		close(fd);
		return -1;
	}
	if (session_open(fd) < 0) {
		session_close();
		return -1;
	}
	return fd;
}

/* A forked child that follows: it records already, in the buffers its
 * fork handler made and (if the recorder's socket took the connection)
 * handed over.  Now the rest: its events (the recorder has its parent's
 * meanwhile), its modules, or the whole join if the handler could not. */
static void join_as_child(void)
{
	struct tk_arena_map *a = tk_streams_arena();
	int fd = __atomic_load_n(&session_fd, __ATOMIC_ACQUIRE);

	child_join = false;
	if (fd >= 0) {
		tk_registry_lock();
		if (tk_registry_announce_locked(fd) < 0) {
			tk_registry_unlock();
			session_close();
			return;
		}
		tk_registry_unlock();
	} else {
		child_join = true; /* HELLO says forked */
		fd = session_connect();
		child_join = false;
		if (fd < 0)
			return;
		if (a && send_arena(fd, a) < 0) {
			session_close();
			return;
		}
		if (!a)
			send_nobuf(fd, nobuf_err, nobuf_what ? nobuf_what : "?", true);
	}
	tk_functrace_child_joined();
}

/* In a forked child's fork handler: connect without waiting and hand our
 * buffers over at once, so that they reach the recorder even if we exit
 * right away (a connection waits in the recorder's backlog with what it
 * carries).  Returns the socket, or -1 (the listener thread joins later). */
static int child_handover(struct tk_arena_map *a)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct tk_msg_arena m;

	if (fd < 0)
		return -1;
	set_send_buffer(fd);
	if (connect(fd, (struct sockaddr *)&sa,
		    tk_abstract_addr(&sa, session_name)) < 0 ||
	    !tk_peer_allowed(fd))
		goto fail;
	memset(&m, 0, sizeof(m));
	m.m.type = TK_MSG_ARENA;
	m.m.len = sizeof(m);
	m.made = a->geom.pool_init;
	{
		static struct tk_msg_hello h;

		fill_hello(&h);
		if (tk_send_fds(fd, &h, sizeof(h), NULL, 0, MSG_DONTWAIT) < 0 ||
		    tk_send_fds(fd, &m, sizeof(m), a->fds, 2, MSG_DONTWAIT) < 0)
			goto fail;
	}
	for (int i = 0; i < 2; i++) {
		close(a->fds[i]);
		a->fds[i] = -1;
	}
	/* the socket blocks again: later messages may wait a little */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
fail:
	close(fd);
	return -1;
}

/* Join the session of TRACEKIT_SESSION and wait for its CONFIG, so that
 * recording starts before the program does anything. */
static void session_join(void)
{
	struct pollfd pfd;
	int fd = session_connect();

	if (fd < 0)
		return;
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, CONFIG_WAIT_MS) <= 0 || session_receive(fd) < 0)
		session_close();
}

static void runtime_init(void)
{
	const char *env = getenv(TK_SESSION_ENV);

	tk_self_init();
	tk_streams_init();
	tk_keys_init();
	if (env && env[0] && strlen(env) < sizeof(session_name)) {
		strcpy(session_name, env);
		session_join();
	}
	start_listener();
}

void tk_runtime_init(void)
{
	pthread_once(&init_once, runtime_init);
}

void tk_session_after_fork_child(void)
{
	bool follow;

	parent_pid = hello_pid;
	tk_self_after_fork_child();
	/* Locks are free again; the listener thread did not survive. */
	if (listen_fd >= 0)
		close(listen_fd);
	listen_fd = -1;
	tk_registry_lock();
	follow = tk_config.active && (tk_config.flags & TK_CONFIG_FOLLOW_FORK) &&
		 session_name[0];
	if (session_fd >= 0)
		close(session_fd);
	if (retired_fd >= 0)
		close(retired_fd);
	session_fd = retired_fd = -1;
	nobuf_err = 0;
	if (follow) {
		/* our own buffers, now: the first event must find them; the
		 * small pool a process starts with (most children exec at
		 * once), the recorder makes more once it is used */
		struct tk_arena_geom g = tk_config.geom;
		const char *what = "?";
		struct tk_arena_map *a;

		g.pool_init = tk_config.pool_init_child;
		a = tk_arena_create(&g, CHILD_STREAMS_TOUCHED, tk_session_gen,
				     &what);

		if (!a) {
			nobuf_err = errno;
			nobuf_what = what;
		}
		tk_streams_set_arena(a);
		child_join = true; /* HELLO says forked */
		if (a)
			session_fd = child_handover(a);
	} else {
		free_rules();
		tk_config.active = false;
		tk_config_publish_locked();
		tk_registry_apply_all_locked();
	}
	tk_registry_unlock();
	child_join = follow;
	start_listener();
}
