/* SPDX-License-Identifier: MIT */
/*
 * fuzz-control.c - libFuzzer entry for what a traced process sends the
 * recorder over its control socket (common/protocol.h): HELLO, EVENT
 * descriptors, EVENTS_DONE, ARENA, NOBUF, MODULE, ERROR, and anything
 * else.
 *
 * The recorder's own code reads them (cli/session.c through its public
 * calls, as record -P does): the harness listens on @tracekit-<its pid>,
 * session_attach() connects, and the input is sent on the accepted end as
 * a sequence of records:
 *
 *   u8 op, u16 len (little-endian), len bytes
 *
 *   op & 3 == 0   the bytes are one message; its tk_msg.len is set to
 *                 its size unless op & 4
 *   op & 3 == 1   the same, sent with two memfds (SCM_RIGHTS): a sane
 *                 arena, as the runtime makes one (lib/arena.c), with
 *                 nothing written in it yet: of the 16 sub-buffers of 4
 *                 KiB per thread the CONFIG asks, or (op >> 5 == 7) of 9,
 *                 which the recorder refuses
 *   op & 3 == 2   a HELLO: the bytes laid over a zeroed tk_msg_hello (a
 *                 HELLO is over 4 KiB), type and len set
 *   op & 3 == 3   shut the socket down (the process hangs up)
 *
 * then session_poll() handles what is queued, session_stop() and
 * session_finish() write the trace's index into a private directory, as
 * at the end of a recording.  Nothing may crash or leak; an error comes
 * with a message.  The buffers' contents are not fuzzed here (the
 * consumer's reading of a hostile buffer has tests of its own).
 *
 *   tests/fuzz/run 1    # builds it in build-fuzz/ (tests/fuzz/meson.build)
 *   build-fuzz/tests/fuzz/fuzz-control tests/fuzz/corpus/fuzz-control
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/record-functrace.h"
#include "cli/session.h"
#include "common/protocol.h"
#include "common/ringbuf-layout.h"
#include "common/unix-socket.h"
#include "lib/arena.h"
#include "fuzz-dir.h"

static int listen_fd = -1;
static struct rec_rule rule = { (char *)"all", NULL };

static void setup(void)
{
	struct sockaddr_un sa;
	char name[64], path[PATH_MAX];

	fuzz_dir_make("fuzz-control");
	path_of(path, sizeof(path), "events");
	if (mkdir(path, 0700) < 0)
		abort();
	path_of(path, sizeof(path), "user");
	if (mkdir(path, 0700) < 0)
		abort();
	snprintf(name, sizeof(name), TK_SOCKET_PREFIX "%d", (int)getpid());
	listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 ||
	    bind(listen_fd, (struct sockaddr *)&sa, tk_abstract_addr(&sa, name)) < 0 ||
	    listen(listen_fd, 4) < 0)
		abort();
}

/* An arena as the runtime makes one (lib/arena.c): sub-buffers of 4 KiB,
 * @slots per thread, 8 threads, a pool of 64 chunks with 4 made; nothing
 * written in it yet.  Its two memfds in fds[]. */
static void sane_arena(uint32_t slots, int fds[2])
{
	struct tk_arena_geom g = { TK_RB_DISCARD, 4096, slots, 8, 4, 64, 0 };
	const char *what = "?";
	struct tk_arena_map *a = tk_arena_create(&g, 2, 1, &what);

	if (!a)
		abort();
	fds[0] = a->fds[0];
	fds[1] = a->fds[1];
	a->fds[0] = a->fds[1] = -1;
	tk_arena_forget(a);
}

static void send_with(int sock, const void *msg, size_t len, const int *fds,
		      unsigned nfds)
{
	struct iovec iov = { (void *)msg, len };
	union {
		char b[CMSG_SPACE(sizeof(int) * 2)];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { 0 };

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	/* a full socket (the recorder reads below) or a message too big:
	 * the process would see the same */
	sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void play(int sock, const uint8_t *data, size_t size)
{
	static char msg[TK_MSG_MAX];

	while (size >= 3) {
		unsigned op = data[0];
		size_t len = data[1] | (size_t)data[2] << 8;
		int fds[2] = { -1, -1 };

		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		switch (op & 3) {
		case 0:
		case 1:
			memcpy(msg, data, len);
			if (len >= sizeof(struct tk_msg) && !(op & 4))
				((struct tk_msg *)msg)->len = (uint32_t)len;
			if ((op & 3) == 1)
				sane_arena(op >> 5 == 7 ? 9 : 16, fds);
			send_with(sock, msg, len, fds, (op & 3) == 1 ? 2 : 0);
			for (int i = 0; i < 2; i++)
				if (fds[i] >= 0)
					close(fds[i]);
			break;
		case 2: {
			struct tk_msg_hello *h = (struct tk_msg_hello *)msg;

			memset(h, 0, sizeof(*h));
			memcpy(h, data, len < sizeof(*h) ? len : sizeof(*h));
			h->m.type = TK_MSG_HELLO;
			h->m.len = sizeof(*h);
			send_with(sock, h, sizeof(*h), NULL, 0);
			break;
		}
		default:
			shutdown(sock, SHUT_WR);
			break;
		}
		data += len;
		size -= len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct rec_functrace ft = { 0 };
	struct rec_options opt;
	struct rec_session s;
	int peer;

	if (!ready) {
		setup();
		ready = true;
	}
	memset(&opt, 0, sizeof(opt));
	opt.outdir = dir;
	opt.rules = &rule;
	opt.nrules = 1;
	opt.buffer_kb = 64;
	opt.subbuf_kb = 4;
	opt.slots = 16;
	opt.pool_init = 4;
	opt.pool_start = 8;
	opt.pool_max = 64;
	opt.streams_max = 8;
	opt.attach_pid = getpid();
	if (session_init(&s, &opt, &ft) < 0)
		abort();
	if (session_attach(&s, getpid()) < 0)
		abort();
	peer = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (peer < 0)
		abort();
	play(peer, data, size);
	for (int i = 0; i < 4; i++)
		if (session_poll(&s, 0, -1) < 0)
			break;
	/* session_stop measures the TSC over 200 ms at least: that time
	 * has passed, as far as it knows */
	s.clock.mono_start -= 200000000u;
	session_stop(&s);
	if (session_finish(&s) < 0 && !s.error[0])
		__builtin_trap(); /* an error without a message */
	session_free(&s);
	functrace_free(&ft); /* each input from nothing */
	close(peer);
	return 0;
}
