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
#include "ringbuf-layout.h"
#include "unix-socket.h"
#include "functrace/functrace.h"

#define CONFIG_WAIT_MS 3000

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int listen_fd = -1;
static int session_fd = -1; /* under the registry lock */
static int retired_fd = -1; /* shut down, closed when the next one opens */
static char session_name[108];
static bool child_pending;
/* The recorder's wake-up eventfd, on one descriptor number for the
 * process's life: a writer may have loaded the number just before a
 * session changes, so a new session's eventfd is put on the same number
 * (dup3) and none is ever closed (stream.c, packet_close). */
int tk_wake_fd = -1;

/* Control messages may wait this long for room in the socket (a recorder
 * that is alive drains it at once); events never wait. */
#define SEND_WAIT_MS 1000

int tk_send_to(int sock, const void *msg, size_t len, int fd)
{
	int err;

	if (sock < 0)
		return -ENOTCONN;
	while ((err = tk_send_fds(sock, msg, len, &fd, fd >= 0, MSG_DONTWAIT))) {
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
	h.ppid = (uint32_t)getppid();
	h.clock = tk_clock_is_tsc();
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

/* Adopt the recorder's eventfd @fd (see tk_wake_fd). */
static void set_wake_fd(int fd)
{
	if (fd < 0)
		return;
	if (__atomic_load_n(&tk_wake_fd, __ATOMIC_RELAXED) < 0) {
		__atomic_store_n(&tk_wake_fd, fd, __ATOMIC_RELEASE);
		return;
	}
	dup3(fd, tk_wake_fd, O_CLOEXEC);
	close(fd);
}

static int apply_config(const void *msg, size_t len, int wake_fd)
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
	tk_config.mode = c.mode;
	tk_config.subbuf_size = c.subbuf_size;
	tk_config.nsub = c.nsub;
	tk_config.flags = c.flags;
	tk_config.active = true;
	tk_config_publish_locked();
	tk_streams_session_changed();
	tk_registry_apply_all_locked();
	tk_registry_unlock();
	tk_functrace_session(c.func_opts, c.nfunc_opts);
	tk_config_func_opts_free(&c);
	return 0;
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
		return apply_config(buf, (size_t)n, passed);
	if (passed >= 0)
		close(passed);
	if (n <= 0)
		return -EPIPE;
	if ((size_t)n < sizeof(*m) || m->len != (uint32_t)n)
		return -EPROTO;
	return m->type == TK_MSG_STOP ? -ECANCELED : -EPROTO;
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

static void start_listener(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t th;

	listen_fd = listen_socket();
	if (listen_fd < 0)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (pthread_create(&th, &attr, listener_main, NULL) == 0)
		pthread_setname_np(th, "tracekit-ctl");
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
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
