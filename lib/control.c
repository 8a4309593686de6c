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
 * A session ends on STOP or when the recorder's socket closes (the
 * recorder died): recording stops and the program goes on unaffected.
 * Peers are accepted only with the same uid, or root (SO_PEERCRED).
 * Protocol: protocol.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "internal.h"
#include "common/ringbuf-layout.h"
#include "common/unix-socket.h"
#include "lib/functrace/functrace.h"

#define CONFIG_WAIT_MS 3000
/* What the listener needs besides the static TLS (start_listener). */
#define LISTENER_STACK (256 * 1024)

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int listen_fd = -1;
static int session_fd = -1; /* under the registry lock */
static int retired_fd = -1; /* shut down, closed when the next one opens */
static char session_name[108];
static bool child_pending;

/* Control messages may wait this long for room in the socket (a recorder
 * that is alive drains it at once); events never wait. */
#define SEND_WAIT_MS 1000

int tk_send_to(int sock, const void *msg, size_t len, int fd)
{
	struct iovec iov = { (void *)msg, len };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { 0 };

	if (sock < 0)
		return -ENOTCONN;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (fd >= 0) {
		struct cmsghdr *c;

		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		struct pollfd pfd = { sock, POLLOUT, 0 };

		if (errno == EINTR)
			continue;
		if (errno != EAGAIN || poll(&pfd, 1, SEND_WAIT_MS) <= 0)
			return -errno;
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

/* The process's name: its main thread's, whichever thread asks. */
static void read_comm(char *buf, size_t len)
{
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		prctl(PR_GET_NAME, buf, 0, 0, 0);
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static int send_hello(int fd)
{
	struct tk_msg_hello h;
	const char *why;
	ssize_t n;

	memset(&h, 0, sizeof(h));
	h.m.type = TK_MSG_HELLO;
	h.m.len = sizeof(h);
	h.version = TK_PROTOCOL_VERSION;
	h.pid = (uint32_t)getpid();
	/* h.ppid stays 0: the recorder reads it from /proc, so that no
	 * system call of the runtime's set-up (a getppid() the program
	 * did not make) is among the program's kernel events */
	h.clock = TK_CLOCK_TSC;
	read_comm(h.comm, sizeof(h.comm));
	n = readlink("/proc/self/exe", h.exe, sizeof(h.exe) - 1);
	if (n < 0)
		h.exe[0] = '\0';
	h.keys = tk_keys_active(&why);
	h.nsites = tk_keys_sites();
	snprintf(h.keys_why, sizeof(h.keys_why), "%s", why ? why : "");
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
	tk_registry_apply_all_locked();
	tk_registry_unlock();
	tk_functrace_session(NULL, 0);
}

static int apply_config(const void *msg, size_t len)
{
	struct tk_config_msg c;
	int err = tk_config_msg_parse(msg, len, &c);

	if (err)
		return err;
	tk_registry_lock();
	free_rules();
	tk_config.rules = c.rules;
	tk_config.nrules = c.nrules;
	tk_config.mode = c.mode;
	tk_config.subbuf_size = c.subbuf_size;
	tk_config.nsub = c.nsub;
	tk_config.flags = c.flags;
	tk_config.active = true;
	tk_config_publish_locked();
	tk_streams_session_changed();
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

/* Handle one message from the recorder; returns < 0 when the session is
 * over. */
static int session_receive(int fd)
{
	static char buf[TK_MSG_MAX];
	ssize_t n = recv(fd, buf, sizeof(buf), 0);
	const struct tk_msg *m = (const struct tk_msg *)buf;

	if (n <= 0)
		return -EPIPE;
	if ((size_t)n < sizeof(*m) || m->len != (uint32_t)n)
		return -EPROTO;
	switch (m->type) {
	case TK_MSG_CONFIG:
		return apply_config(buf, (size_t)n);
	case TK_MSG_STOP:
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
	snprintf(name, sizeof(name), TK_SOCKET_PREFIX "%d", (int)getpid());
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

static void *listener_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd pfd[2] = { { listen_fd, POLLIN, 0 },
					 { -1, POLLIN, 0 } };

		pfd[1].fd = __atomic_load_n(&session_fd, __ATOMIC_ACQUIRE);
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
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

/* Connect to the recorder named by TRACEKIT_SESSION and wait for its
 * CONFIG, so that recording starts before the program does anything. */
static void session_join(void)
{
	struct sockaddr_un sa;
	struct pollfd pfd;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	set_send_buffer(fd);
	if (connect(fd, (struct sockaddr *)&sa,
		    tk_abstract_addr(&sa, session_name)) < 0 ||
	    !tk_peer_allowed(fd)) {
		close(fd);
		return;
	}
	if (session_open(fd) < 0) {
		session_close();
		return;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, CONFIG_WAIT_MS) <= 0 || session_receive(fd) < 0)
		session_close();
}

static void runtime_init(void)
{
	const char *env = getenv(TK_SESSION_ENV);

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

bool tk_session_child_pending(void)
{
	return __atomic_load_n(&child_pending, __ATOMIC_ACQUIRE);
}

int tk_session_reconnect_child(void)
{
	if (!__atomic_exchange_n(&child_pending, false, __ATOMIC_ACQ_REL))
		return 0;
	session_join();
	start_listener();
	return 0;
}

void tk_session_after_fork_child(void)
{
	bool follow;

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
	if (!follow) {
		free_rules();
		tk_config.active = false;
		tk_config_publish_locked();
		tk_registry_apply_all_locked();
	}
	tk_registry_unlock();
	/* The child joins the session at its first event, if ever (most
	 * children exec at once; the new program joins by itself). */
	__atomic_store_n(&child_pending, follow, __ATOMIC_RELEASE);
	if (!follow)
		start_listener();
}
