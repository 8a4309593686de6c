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
#include "common/protocol.h"
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
	/* Buffers (common/ringbuf-layout.h): sub-buffers of subbuf_kb, at most
	 * slots of them per thread, pool_init made by the process at the
	 * start, pool_start by the recorder once it writes, pool_max per process
	 * in all, streams_max threads at once. */
	uint32_t buffer_kb; /* per thread: slots * subbuf_kb */
	uint32_t subbuf_kb;
	uint32_t slots;
	uint32_t pool_init, pool_start, pool_max;
	uint32_t pool_init_first; /* pool_init of the recorded command */
	uint32_t streams_max;
	uint32_t block_ms;  /* --block: writers wait this long, 0: never */
	bool overwrite;
	bool follow_fork;
	bool clock_mono;    /* stamp with CLOCK_MONOTONIC: the TSC is not
			     * usable (clock_choose) */
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
struct rec_arena;
struct rec_functrace;

/* Packets of one stream being written, in one write: in place from the
 * arena's chunks (recording) or a copy (at the end). */
struct rec_write {
	struct drain_req req;
	struct rec_stream *st;
	uint32_t chunk[DRAIN_IOV_MAX]; /* given back when written */
	unsigned count;
	uint64_t events;
	char *copy; /* freed when written, or NULL */
	bool spill; /* through the page cache (spill_fd) */
	struct rec_write *next; /* the session's free list */
};

struct rec_stream {
	struct rec_session *session;
	struct rec_process *proc;
	struct rec_arena *arena;  /* NULL once finished */
	uint32_t index;           /* its descriptor in the arena */
	struct tk_rb_stream *desc;
	uint32_t tid;
	char comm[17];      /* its name as last read (record-watch.c) */
	char made_comm[17]; /* its name when its descriptor was taken */
	uint64_t submitted; /* packets read from their slots (consumed) */
	unsigned inflight;  /* writes not completed */
	int out_fd;
	bool parked;        /* its file made, closed while idle for want of
			     * descriptors (out_fd -1): opened again at need */
	bool direct;        /* out_fd is O_DIRECT: packets padded to blocks */
	int spill_fd;       /* the same file without O_DIRECT, or -1 */
	uint64_t off;       /* where the next packet goes in the file */
	uint64_t alloc;     /* bytes of the file allocated ahead (O_DIRECT),
			     * or asked for (alloc_busy) */
	bool alloc_busy;    /* an allocation in flight (one of inflight) */
	uint64_t cut;       /* where its first failed write began: the file
			     * ends there (UINT64_MAX: none failed) */
	char *file;
	uint64_t instance;
	uint64_t events, bytes, packets;
	/* the writer's counts, copied (bounded) when the stream is done */
	uint64_t lost_full, lost_nested, lost_big, lost_overwritten;
	uint64_t lost_write; /* events in packets that could not be written */
	/* the last CTF packet given to a write: its header's numbers, for
	 * the packet that ends the stream (consumer.c write_final) */
	bool any_packet;
	uint32_t last_cpu;
	uint64_t last_seq, last_end, last_discarded;
	const char *corrupt; /* why we stopped reading it, or NULL */
	/* sealed packets whose headers the program had changed, written
	 * with the recorder's (consumer.c sealed_headers_ok) */
	uint64_t restamped;
	bool done;           /* nothing more will be read from it */
};

/* A process's buffers as the recorder holds them (ringbuf-layout.h):
 * the geometry checked once when they came, every number read again from
 * the shared memory bounded. */
struct rec_arena {
	struct tk_arena *hdr;
	size_t control_size;
	uint32_t mode, chunk_size, slots, streams_max, ring_size, stream_size;
	uint32_t chunks_max;
	uint32_t wake_batch;       /* tk_rb_wake_batch() */
	uint32_t *chunk_ring, *stream_ring, *recycle_ring;
	uint64_t *produced;
	char *streams;
	char *pool;                /* chunks_max chunks */
	size_t pool_size;
	uint32_t chunks;           /* chunks made and offered: 0 .. chunks */
	/* the maker thread (consumer.c) makes chunks up to `target`; `made`
	 * is how far it got (atomic), `making` while it works on this arena */
	uint32_t target, made;
	uint32_t premapped, premap_to; /* the process's chunks [0, premap_to)
					* mapped here: [0, premapped) done */
	uint32_t told;             /* chunks the process was told were made */
	bool making;
	struct rec_arena *make_next; /* the maker's list of work */
	bool in_make_list;
	uint64_t stream_tail, recycle_tail; /* our ends of the free
					     * stream rings */
	uint32_t touched;          /* descriptors made: 0 .. touched, the
				    * only ones that may be in use */
	struct rec_stream **cur;   /* [streams_max]: who uses descriptor i */
	/* [streams_max]: the CTF stream instance of descriptor i's next
	 * thread, as we told it (0: i + 1, a fresh descriptor's) */
	uint64_t *instance;
	uint64_t next_instance;    /* for a recycled descriptor */
	unsigned inflight;         /* writes from its memory not completed */
	uint64_t inflight_bytes;   /* their bytes */
	int fixed;                 /* its pool's range in the drain's
				    * registered memory, or -1 */
	uint32_t fixed_chunks;     /* chunks of the pool registered there */
	uint32_t chunks_first;     /* chunks the process made at the start */
	bool writing;              /* a writer took a chunk (ask_growth) */
	uint32_t start_chunks;     /* what the pool grows to then at once:
				    * rec_options.pool_start, 0 for a
				    * forked child (it doubles as it needs) */
	uint32_t chunks_ours;      /* chunks we took from fresh (made) */
	bool gave_back;            /* space given back this pass (--block) */
	const char *corrupt;       /* why we stopped reading it */
};

struct rec_process {
	uint32_t pid, ppid, class_id;
	pid_t peer_pid;  /* the kernel's word (SO_PEERCRED) of a process that
			  * connected; 0 when attached to (-P: checked then) */
	char comm[17];
	char *exe;
	bool keys;       /* call sites patched */
	bool cpu_rseq;   /* events read their CPU from rseq */
	uint32_t nsites;
	char keys_why[65];
	int fd; /* control socket, -1 once closed */
	bool hello, announced, configured;
	bool forked; /* a forked child recording with its parent's CONFIG */
	struct rec_arena *arena; /* its buffers, NULL before ARENA or once
				  * written out and unmapped */
	/* events it lost for want of buffers (in its arena's count, and in
	 * the one its messages carry), and why (NOBUF) */
	uint64_t lost_nobuf;
	uint64_t nobuf_msg_lost;
	int nobuf_err;
	char nobuf_what[33];
	char *desc_blob;
	size_t desc_size;
	struct tk_event_info *events;
	unsigned nevents;
	/* events[at[id]] is event id's, for ids below at_len (UINT32_MAX:
	 * none): the recorder decodes open packets event by event */
	uint32_t *at;
	unsigned at_len;
	unsigned errors; /* ERROR messages it sent (the first few said) */
	struct rec_stream *main_stream; /* its first stream of tid == pid */
	unsigned nstreams; /* streams of it in rec_session.streams */
	/* gone, with something in the trace: its class and lines are in
	 * rec_session.done, its descriptors freed (session_retire) */
	bool retired;
};

/* The descriptors of a process that is gone, for a forked child of it
 * that says HELLO after (inherit_events). */
struct rec_recent {
	uint32_t pid;
	char *blob;
	size_t size;
};
#define REC_RECENT 64

struct rec_session {
	const struct rec_options *opt;
	/* the function tracer's state of this recording (MODULE messages
	 * go there), the caller's (record-functrace.h) */
	struct rec_functrace *functrace;
	char *dir;
	int listen_fd;
	int wake_fd; /* eventfd writers signal while we sleep */
	char sock_name[64];
	/* the processes that may still send or write: connected, or with
	 * buffers; those that are gone leave (session_retire) */
	struct rec_process **procs;
	unsigned nprocs;
	bool retire_due;           /* some of procs are gone */
	/* gone with streams or losses in the trace: kept for the summary,
	 * their index lines rendered once into done_* */
	struct rec_process **gone;
	unsigned ngone;
	unsigned forgotten;        /* gone with nothing in the trace */
	/* the command's process (the first of our child's pid to say
	 * HELLO) or -P's: in the trace even when it wrote nothing */
	const struct rec_process *command;
	bool heard, was_configured; /* of processes gone */
	struct rec_process **desc_due; /* gone: their descriptor files are */
	unsigned ndesc_due;            /* written by the next index */
	struct rec_recent recent[REC_RECENT]; /* newest at recent_next - 1 */
	unsigned recent_next;
	FILE *done_classes, *done_procs, *done_streams; /* open_memstream */
	char *done_classes_buf, *done_procs_buf, *done_streams_buf;
	size_t done_classes_len, done_procs_len, done_streams_len;
	struct rec_stream **streams;
	unsigned nstreams;
	struct tk_trace_clock clock;
	uint32_t next_class;
	char host[65];
	unsigned drained; /* packets written by the last session_poll */
	struct drain drain;
	struct rec_write *free_writes;
	struct rec_maker *maker;   /* makes pool chunks ahead (consumer.c) */
	uint64_t pool_most;        /* bytes of pool made for one process, at most */
	uint64_t sleeps;           /* times we slept waiting for work */
	uint64_t inflight_bytes;   /* in writes not completed */
	uint64_t spilled;          /* bytes written through the page cache
				    * while the disk was behind (spill_fd) */
	bool fixed_used[DRAIN_FIXED_MAX]; /* ranges of drain_fixed_set taken */
	bool reap_wakes;           /* a write that completes ends the sleep
				    * (consumer_sleep_begin) */
	uint64_t wakeups_gone;     /* writers' wake-ups, of arenas unmapped */
	uint64_t writers_took;     /* bytes of pool writers took themselves
				    * (none free), of arenas unmapped */
	uint64_t lazy_next;        /* when partial batches are written (us) */
	bool lazy_due;
	struct pollfd *pollfd; /* session_poll's, grown with the processes */
	unsigned npollfd;
	struct tk_trace_kernel *kernel; /* the kernel part, or NULL */
	int accept_errno; /* a process could not be taken (EMFILE...) */
	unsigned refused; /* ... how many */
	unsigned park_next; /* where the next look for idle files starts */
	uint64_t parked;    /* stream files closed while idle (EMFILE) */
	int reserve_fd;   /* closed to refuse one when out of descriptors */
	char error[512]; /* first fatal error, for the tool to print */
	bool failed;
	bool reserved; /* the index's room, DIR/.reserve, was made */
};

/* session.c */
/* A recording with options @opt, the function tracer's state in @ft
 * (the caller's, outliving the session). */
int session_init(struct rec_session *s, const struct rec_options *opt,
		 struct rec_functrace *ft);
/* A process on control connection @fd (accepted, or connected by
 * session_attach), with the next class id; NULL when out of memory.
 * What it says (HELLO, EVENT...) fills it in. */
struct rec_process *session_add_process(struct rec_session *s, int fd);
/* Connect to process @pid's control socket (record -P). */
int session_attach(struct rec_session *s, pid_t pid);
/* Drain the buffers (s->drained: packets written) and handle control
 * traffic; when there was nothing to drain, sleep until a writer wakes us
 * (a packet closed), control traffic, @extra_fd (or -1) is readable, or
 * @timeout_us passed.  Returns 1 if @extra_fd is readable, 0 otherwise,
 * < 0 on a fatal error (s->error set). */
int session_poll(struct rec_session *s, int timeout_us, int extra_fd);
/* How the recorder worked (record -v): packets written, its sleeps, the
 * times writers woke it. */
void session_print_work(const struct rec_session *s, FILE *f);
/* Whether any process said HELLO. */
/* Whether any process was sent its CONFIG (it records). */
bool session_configured(const struct rec_session *s);
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
/* Its first half: what the files would hold, in *x (tk_index_free), for
 * another thread to write (tk_trace_store_index). */
int session_render_index(struct rec_session *s, bool incomplete,
			 struct tk_index *x);
/* Take the clock's stop pair now and the rate since the start. */
void session_clock_now(struct rec_session *s);
/* The user streams' table: per-stream counts (with @all each stream,
 * else those that lost or fired the most and one line for the rest),
 * then how the processes' call sites are made, each way once. */
void session_print_streams(const struct rec_session *s, FILE *f, bool all);
/* "N streams of M processes", for the summary's last line. */
void session_describe(const struct rec_session *s, char *out, size_t len);
void session_free(struct rec_session *s);


/* consumer.c */
/* Take @p's buffers (ARENA: @fds control and pool, checked: sealed memfds
 * of the sizes the control part says; @made chunks made by the process).
 * Closes the fds.  Returns 0, or < 0 when they are refused (said). */
int consumer_add_arena(struct rec_session *s, struct rec_process *p,
		       const int fds[2], uint32_t made);
/* The thread that makes pool chunks ahead of the writers. */
int consumer_init(struct rec_session *s);
void consumer_free(struct rec_session *s);
/* @p is gone: write out what its buffers hold, then let them go. */
void consumer_process_gone(struct rec_session *s, struct rec_process *p);
/* Let @p's buffers go without writing them (the recording failed). */
void consumer_process_free(struct rec_session *s, struct rec_process *p);
/* Events @p lost with no buffer (its arena's count and NOBUF's). */
uint64_t consumer_lost_nobuf(const struct rec_process *p);
/* The times writers woke us, in every arena so far (bounded). */
uint64_t consumer_wakeups(const struct rec_session *s);
/* Write every packet the writers have closed (discard mode); returns how
 * many. */
unsigned consumer_drain(struct rec_session *s);
/* Before sleeping up to @timeout_us: tell the writers (sleeping = 1 in
 * every arena), then look once more.  Returns how long to sleep: 0 (and
 * they are told no more) if there is something to do after all, less than
 * @timeout_us when packets wait in a partial batch. */
int consumer_sleep_begin(struct rec_session *s, int timeout_us);
/* After sleeping: no more wake-ups wanted. */
void consumer_sleep_end(struct rec_session *s);
/* Write what is left, open packets included (at stop or process death). */
void consumer_flush_all(struct rec_session *s);
/* A thread gone: name @st after what it wrote into its stream descriptor
 * when it ended (lib/stream.c, stream_name_final), if it wrote anything. */
void consumer_header_name(struct rec_stream *st);
void consumer_stream_stats(const struct rec_stream *st,
			   struct tk_trace_stream *out);
/* Event @id of @p, NULL if it announced none of that id. */
const struct tk_event_info *session_event(const struct rec_process *p,
					  uint32_t id);
/* Events, bytes and lost of @st so far, added to the three counts. */
void consumer_stream_progress(const struct rec_stream *st, uint64_t *events,
			      uint64_t *bytes, uint64_t *lost);

/* clock pairs */
void clock_sample(bool use_tsc, uint64_t *tsc, uint64_t *mono, uint64_t *real);
/* The event clock now: the TSC if @use_tsc, else CLOCK_MONOTONIC. */
static inline uint64_t clock_read(bool use_tsc)
{
	return use_tsc ? tk__clock() : tk__clock_mono();
}

#endif /* TK_SESSION_H */
