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
 *   process -> recorder   HELLO, EVENT..., EVENTS_DONE, then STREAM (with a
 *                         memfd) as threads start, EVENT as modules load,
 *                         MODULE per loaded object (function tracer)
 *   recorder -> process   CONFIG (starts recording), STOP
 */
#ifndef TK_PROTOCOL_H
#define TK_PROTOCOL_H

#include <stdint.h>

#define TK_PROTOCOL_VERSION 1
#define TK_MSG_MAX 65536
#define TK_SESSION_ENV "TRACEKIT_SESSION"
/* Set by record for a function tracer: a preloaded libtracekit starts. */
#define TK_FUNCTRACE_ENV "TRACEKIT_FUNCTRACE"
#define TK_SOCKET_PREFIX "tracekit-"

enum tk_msg_type {
	TK_MSG_HELLO = 1,
	TK_MSG_EVENT = 2,
	TK_MSG_EVENTS_DONE = 3,
	TK_MSG_STREAM = 4,
	TK_MSG_CONFIG = 5,
	TK_MSG_STOP = 6,
	TK_MSG_ERROR = 7,
	TK_MSG_MODULE = 8,
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

/* Sent with the stream's memfd (SCM_RIGHTS). */
struct tk_msg_stream {
	struct tk_msg m;
	uint32_t tid;
	uint32_t pad;
	uint64_t size; /* bytes of the memfd */
	char comm[16];
};

enum tk_config_flags {
	TK_CONFIG_FOLLOW_FORK = 1u << 0,
	TK_CONFIG_FUNCTRACE = 1u << 1, /* function tracer options follow */
	TK_CONFIG_USER_STACK = 1u << 2, /* each user event's stack (--ustack) */
};

/* Followed by nrules rules, each "pattern\0filter\0" (filter may be ""),
 * then with TK_CONFIG_FUNCTRACE the function tracer's options, each
 * "key=value\0" (lib/functrace/functrace.c), up to the end. */
struct tk_msg_config {
	struct tk_msg m;
	uint32_t mode; /* enum tk_rb_mode */
	uint32_t subbuf_size;
	uint32_t nsub;
	uint32_t flags; /* enum tk_config_flags */
	uint32_t nrules;
	uint32_t pad;
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
