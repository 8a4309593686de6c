/* SPDX-License-Identifier: MIT */
/*
 * session.h - the recorder's side of a recording.
 *
 *   session.c   control sockets: processes say HELLO, announce their events,
 *               get the CONFIG, hand over their thread buffers
 *   consumer.c  drain the thread buffers into the trace directory
 */
#ifndef TK_SESSION_H
#define TK_SESSION_H

#include <stdbool.h>
#include <poll.h>
#include <stdint.h>
#include <sys/types.h>
#include "drain.h"
#include "event-info.h"
#include "trace.h"
#include "../lib/ringbuf-layout.h"

struct rec_rule {
	char *pattern;
	char *filter; /* NULL: none */
};

/* A growable list of option values (-l, -n, -g ...). */
struct rec_list {
	const char **item;
	unsigned count;
};

struct rec_options {
	const char *outdir;
	struct rec_rule *rules;
	unsigned nrules;
	uint32_t buffer_kb; /* per thread */
	uint32_t nsub;
	bool overwrite;
	bool follow_fork;
	bool quiet;
	pid_t attach_pid; /* -P */
	char **argv;      /* -- CMD ARGS */

	/* Tracers (-p).  A bare "function" or "function_graph" is for the
	 * program's own code when it is built with patchable function
	 * entries, else for the kernel; "user:NAME" and "kernel:NAME" choose. */
	const char *user_tracer;   /* function, function_graph or NULL */
	const char *kernel_tracer; /* any of available_tracers, or NULL */
	const char *bare_tracer;   /* -p function[_graph] before the choice */
	bool bare_went_kernel;     /* ... which went to the kernel: the program
				    * is not built for function tracing */
	struct rec_list func_filter;  /* -l GLOB: trace only these functions */
	struct rec_list func_notrace; /* -n GLOB: never these */
	struct rec_list graph_funcs;  /* -g FUNC: only FUNC and its callees */
	unsigned max_graph_depth;     /* --max-graph-depth, 0: no limit */
	bool func_stack;              /* --func-stack: user call stacks */
	bool kernel_stack;            /* --stack: kernel stack per event */
	bool only_command;            /* -F: kernel events of CMD and children */
	uint32_t kernel_buffer_kb;    /* -b applies per CPU too */
};

struct rec_process;

/* Packets being written, in one write: in place from the shared buffer
 * (recording: packets seq .. seq + count - 1) or a copy (at the end). */
struct rec_write {
	struct drain_req req;
	struct rec_stream *st;
	uint64_t seq;
	unsigned count;
	uint64_t events;
	char *copy; /* freed when written, or NULL */
};

struct rec_stream {
	struct rec_session *session;
	struct rec_process *proc;
	uint32_t tid;
	char comm[17];
	struct tk_rb_header *hdr;
	size_t map_size;
	char *base;
	uint32_t nsub, subbuf_size, mode; /* checked once, at hand-over */
	uint64_t submitted; /* packets read from the buffer and being written */
	uint64_t consumed;  /* ... and written: given back to the writer */
	struct rec_write *writes; /* per slot: the write starting there */
	uint8_t *written;         /* per slot: its write completed */
	int out_fd;
	bool direct;        /* out_fd is O_DIRECT: packets padded to blocks */
	uint64_t off;       /* where the next packet goes in the file */
	uint64_t alloc;     /* bytes of the file allocated ahead (O_DIRECT) */
	char *file;
	uint64_t instance;
	uint64_t events, bytes, packets;
	uint64_t lost_write; /* events in packets that could not be written */
	const char *corrupt; /* why we stopped reading it, or NULL */
	bool done; /* final packet written */
};

struct rec_process {
	uint32_t pid, ppid, class_id;
	char comm[17];
	char *exe;
	bool keys;       /* call sites patched */
	uint32_t nsites;
	char keys_why[65];
	int fd; /* control socket, -1 once closed */
	bool hello, announced, configured;
	char *desc_blob;
	size_t desc_size;
	struct tk_event_info *events;
	unsigned nevents;
};

struct rec_session {
	const struct rec_options *opt;
	char *dir;
	int listen_fd;
	int wake_fd; /* eventfd writers signal while we sleep */
	char sock_name[64];
	struct rec_process **procs;
	unsigned nprocs;
	struct rec_stream **streams;
	unsigned nstreams;
	struct tk_trace_clock clock;
	uint32_t next_class;
	uint64_t next_instance;
	char host[65];
	unsigned drained; /* packets written by the last session_poll */
	struct drain drain;
	struct pollfd *pollfd; /* session_poll's, grown with the processes */
	unsigned npollfd;
	struct tk_trace_kernel *kernel; /* the kernel part, or NULL */
	char error[512]; /* first fatal error, for the tool to print */
	bool failed;
};

/* session.c */
int session_init(struct rec_session *s, const struct rec_options *opt);
/* Connect to process @pid's control socket (record -P). */
int session_attach(struct rec_session *s, pid_t pid);
/* Drain the buffers (s->drained: packets written) and handle control
 * traffic; when there was nothing to drain, sleep until a writer wakes us
 * (a packet closed), control traffic, @extra_fd (or -1) is readable, or
 * @timeout_us passed.  Returns 1 if @extra_fd is readable, 0 otherwise,
 * < 0 on a fatal error (s->error set). */
int session_poll(struct rec_session *s, int timeout_us, int extra_fd);
/* Whether any process said HELLO. */
bool session_heard_from(const struct rec_session *s);
/* Number of processes still connected. */
unsigned session_connected(const struct rec_session *s);
/* Tell every process to stop, then write out everything that is left. */
void session_stop(struct rec_session *s);
/* Write the trace index; returns 0 or < 0 with s->error set. */
int session_finish(struct rec_session *s);
/* The user streams' table: per-stream counts, then how each process's
 * call sites are made. */
void session_print_streams(const struct rec_session *s, FILE *f);
/* "N streams of M processes", for the summary's last line. */
void session_describe(const struct rec_session *s, char *out, size_t len);
void session_free(struct rec_session *s);


/* consumer.c */
int consumer_add_stream(struct rec_session *s, struct rec_process *p, int fd,
			uint32_t tid, const char *comm);
/* Write every packet the writers have closed (discard mode); returns how
 * many. */
unsigned consumer_drain(struct rec_session *s);
/* Before sleeping: tell the writers (sleeping = 1 in every buffer drained
 * while recording), then look once more.  Returns false, and tells them
 * no more, if there is something to drain after all. */
bool consumer_sleep_begin(struct rec_session *s);
/* After sleeping: no more wake-ups wanted. */
void consumer_sleep_end(struct rec_session *s);
/* Write what is left, open packets included (at stop or process death). */
void consumer_flush_all(struct rec_session *s);
void consumer_stream_stats(const struct rec_stream *st,
			   struct tk_trace_stream *out);

/* clock pairs */
void clock_sample(uint64_t *tsc, uint64_t *mono, uint64_t *real);

#endif /* TK_SESSION_H */
