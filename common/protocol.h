/* SPDX-License-Identifier: MIT */
/*
 * protocol.h - messages between an instrumented process and the recorder.
 *
 * One SOCK_SEQPACKET connection per process, on abstract UNIX sockets:
 * "@tracekit-PID" is the process's listener (attach, list), and the
 * recorder of `record -- CMD` listens on the name it passes in the
 * TRACEKIT_SESSION variable.  Both ends accept only root or a peer of
 * their effective uid, and only root when they are not dumpable
 * (unix-socket.c).  Every message starts with struct tk_msg; all integers are
 * native-endian (both ends are on one machine).
 *
 *   process -> recorder   HELLO, EVENT..., EVENTS_DONE; ARENA (its buffers:
 *                         two memfds) once it has the CONFIG (a forked
 *                         child: at once, with its parent's CONFIG), NOBUF
 *                         when it could not make them, EVENT as modules
 *                         load, MODULE per loaded object (function tracer)
 *   recorder -> process   CONFIG (with the recorder's wake-up eventfd;
 *                         starts recording), STOP
 */
#ifndef TK_PROTOCOL_H
#define TK_PROTOCOL_H

#include <stdint.h>

#define TK_PROTOCOL_VERSION 2
#define TK_MSG_MAX 65536
#define TK_SESSION_ENV "TRACEKIT_SESSION"
/* Set by record for a function tracer: a preloaded libtracekit starts. */
#define TK_FUNCTRACE_ENV "TRACEKIT_FUNCTRACE"
#define TK_SOCKET_PREFIX "tracekit-"

enum tk_msg_type {
	TK_MSG_HELLO = 1,
	TK_MSG_EVENT = 2,
	TK_MSG_EVENTS_DONE = 3,
	TK_MSG_CONFIG = 5,
	TK_MSG_STOP = 6,
	TK_MSG_ERROR = 7,
	TK_MSG_MODULE = 8,
	TK_MSG_ARENA = 9,
	TK_MSG_NOBUF = 12,
	TK_MSG_MADE = 13,   /* recorder -> process: pool chunks made */
};

struct tk_msg {
	uint32_t type; /* enum tk_msg_type */
	uint32_t len;  /* bytes including this header */
};

struct tk_msg_hello {
	struct tk_msg m;
	uint32_t version;
	uint32_t pid;
	uint32_t ppid;
	uint32_t clock; /* 1: TSC, 0: CLOCK_MONOTONIC */
	uint32_t forked; /* a forked child that records with its parent's
			  * CONFIG: no CONFIG to send, its ARENA follows */
	uint32_t cpu_rseq; /* 1: events read their CPU from rseq, 0: each
			    * asks sched_getcpu() (lib/cpu.c) */
	char comm[16];
	char exe[4096];
	uint32_t keys;   /* 1: call sites patched (static keys), 0: byte tests */
	uint32_t nsites; /* patched call sites */
	char keys_why[64]; /* why not patched */
};

/* Followed by the descriptor (include/tracekit/desc.h), desc.size bytes. */
struct tk_msg_event {
	struct tk_msg m;
	uint32_t id;
	uint32_t pad;
};

/* The process's buffers: the control memfd, then the pool's (SCM_RIGHTS,
 * both sealed against shrinking and growing); the geometry is in the
 * control memfd (common/ringbuf-layout.h). */
struct tk_msg_arena {
	struct tk_msg m;
	uint32_t made;  /* pool chunks made and in the free ring */
	uint32_t pad;
	uint64_t lost_nobuf; /* events lost before it existed */
};

/* MADE: the recorder has made the pool's chunks [0, chunks) (in its own
 * mapping of the pool memfd) and offers them to the writers.  The
 * process's control thread maps them in its own mapping
 * (MADV_POPULATE_WRITE), so that a writer seldom takes a page fault on a
 * chunk. */
struct tk_msg_made {
	struct tk_msg m;
	uint32_t chunks;
	uint32_t pad;
};

/* The process could not make its buffers: the failing step
 * and its errno; the events lost for lack of buffers so far.  Sent again
 * at each retry (at most a few a second) and at the end. */
struct tk_msg_nobuf {
	struct tk_msg m;
	int32_t err;
	uint32_t pad;
	uint64_t lost;
	char what[32];
};

enum tk_config_flags {
	TK_CONFIG_FOLLOW_FORK = 1u << 0,
	TK_CONFIG_FUNCTRACE = 1u << 1, /* function tracer options follow */
	TK_CONFIG_USER_STACK = 1u << 2, /* each user event's stack (--ustack) */
	TK_CONFIG_CLOCK_MONO = 1u << 3, /* stamp events with CLOCK_MONOTONIC */
};

/* Followed by nrules rules, each "pattern\0filter\0" (filter may be ""),
 * then with TK_CONFIG_FUNCTRACE the function tracer's options, each
 * "key=value\0" (lib/functrace/functrace.c), up to the end. */
struct tk_msg_config {
	struct tk_msg m;
	uint32_t mode;        /* enum tk_rb_mode */
	uint32_t chunk_size;  /* bytes per sub-buffer (packet) */
	uint32_t slots;       /* sub-buffers one thread may hold */
	uint32_t flags;       /* enum tk_config_flags */
	uint32_t nrules;
	uint32_t streams_max; /* threads recording at once */
	uint32_t pool_init;   /* sub-buffers made at the start */
	uint32_t pool_max;    /* sub-buffers the process may hold in all */
	uint32_t block_ms;    /* --block: a writer waits this long, 0: never */
	uint32_t pool_init_child; /* sub-buffers a forked child makes at its
				   * start (the recorded command makes more
				   * than the others: not its children) */
};

/* A loaded object, for the function tracer (symbols are saved from its
 * file by the recorder).  Followed by its path, NUL-terminated. */
struct tk_msg_module {
	struct tk_msg m;
	uint64_t bias;   /* load bias */
	uint64_t lo, hi; /* mapped addresses */
	uint32_t entries;  /* patchable entries */
	uint32_t traced;   /* of which patched */
	uint32_t unusable; /* that cannot be patched */
	uint32_t cyg;      /* built with -finstrument-functions */
	uint8_t build_id[20];
	uint32_t build_id_len;
	uint32_t libcalls; /* GOT slots hooked (library calls) */
};

struct tk_msg_error {
	struct tk_msg m;
	char text[256];
};

#endif /* TK_PROTOCOL_H */
