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
#include "format/event-info.h"
#include "format/trace.h"
#include "common/ringbuf-layout.h"

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
	/* -l, -n, -g belong to the -p they follow (before any -p: to the
	 * first): the user tracer's here, the kernel's and the bare one's
	 * (until it goes to one side) in struct rec_func_lists below */
	struct rec_list func_filter;  /* -l GLOB: trace only these functions */
	struct rec_list func_notrace; /* -n GLOB: never these */
	struct rec_list graph_funcs;  /* -g FUNC: only FUNC and its callees */
	struct rec_func_lists {
		struct rec_list filter, notrace, graph;
	} kernel_funcs, bare_funcs;
	unsigned max_graph_depth;     /* --max-graph-depth, 0: no limit */
	bool func_stack;              /* --func-stack: user call stacks */
	bool no_libcall;              /* --no-libcall: not library calls */
	bool kernel_stack;            /* --stack: kernel stack per event */
	bool user_stack;              /* --ustack: user stack per kernel event */
	bool only_command;            /* -F: kernel events of CMD and children */
	uint32_t kernel_buffer_kb;    /* --kernel-buffer, per CPU; 0: the
				       * kernel's default */
};

struct rec_process;

struct rec_stream {
	struct rec_process *proc;
	uint32_t tid;
	char comm[17];      /* its name as last read (record-watch.c) */
	char made_comm[17]; /* its name when the buffer was made */
	struct tk_rb_header *hdr;
	size_t map_size;
	char *base;
	uint32_t nsub, subbuf_size, mode; /* checked once, at hand-over */
	uint64_t consumed;
	int out_fd;
	char *file;
	uint64_t instance;
	uint64_t events, bytes, packets;
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
/* Wait up to @timeout_us for control traffic and handle it; also drains
 * the buffers (s->drained: packets written).  @extra_fd (or -1) is polled too; returns 1 if it is
 * readable, 0 otherwise, < 0 on a fatal error (s->error set). */
int session_poll(struct rec_session *s, int timeout_us, int extra_fd);
/* Whether any process said HELLO. */
bool session_heard_from(const struct rec_session *s);
/* Number of processes still connected. */
unsigned session_connected(const struct rec_session *s);
/* Tell every process to stop, then write out everything that is left. */
void session_stop(struct rec_session *s);
/* Write the trace index; returns 0 or < 0 with s->error set. */
int session_finish(struct rec_session *s);
/* The same while recording (@incomplete: the manifest says so), as
 * often as processes and streams come: a recorder killed then leaves a
 * trace that can be read. */
int session_write_index(struct rec_session *s, bool incomplete);
/* Take the clock's stop pair now and the rate since the start. */
void session_clock_now(struct rec_session *s);
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
/* Write what is left, open packets included (at stop or process death). */
void consumer_flush_all(struct rec_session *s);
/* A thread gone: name @st after what it wrote into its buffer's header when
 * it ended (lib/stream.c, stream_name_final), if it wrote anything. */
void consumer_header_name(struct rec_stream *st);
void consumer_stream_stats(const struct rec_stream *st,
			   struct tk_trace_stream *out);

/* clock pairs */
void clock_sample(uint64_t *tsc, uint64_t *mono, uint64_t *real);

#endif /* TK_SESSION_H */
