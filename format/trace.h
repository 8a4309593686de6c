/* SPDX-License-Identifier: MIT */
/*
 * trace.h - a trace directory: what it holds and how it is written/read.
 *
 *   DIR/tracekit.manifest   text, one record per line (docs/format.md):
 *                           clocks, processes, streams and their counts
 *   DIR/events/CLASS.desc   each process's event descriptors with ids
 *   DIR/user/metadata       CTF 1.8 TSDL for the user streams
 *   DIR/user/PID-TID[.N]    one CTF stream per thread buffer
 *   DIR/kernel/             kernel ring-buffer pages and their formats
 *
 * `babeltrace2 DIR/user` reads the user part as is; tracekit's reader uses
 * the manifest and descriptors, and reads the same stream files.
 */
#ifndef TK_TRACE_H
#define TK_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "event-info.h"

#define TK_MANIFEST_NAME "tracekit.manifest"
/* Room the recorder keeps for its last index (disk full): removed when
 * it finishes, left by a killed one. */
#define TK_INDEX_RESERVE ".reserve"
#define TK_TRACE_VERSION 1

/* A manifest value that is a number: decimal digits only (no sign, no
 * space), within 64 bits.  trace-read.c and kernel-read.c both read
 * numbers so. */
static inline bool tk_manifest_u64(const char *v, uint64_t *out)
{
	uint64_t n = 0;

	if (!*v)
		return false;
	for (; *v; v++) {
		if (*v < '0' || *v > '9' || n > (UINT64_MAX - (uint64_t)(*v - '0')) / 10)
			return false;
		n = n * 10 + (uint64_t)(*v - '0');
	}
	*out = n;
	return true;
}

/* One manifest record, "kind key=value ...", split in place by
 * tk_manifest_split: its kind (NULL on a blank line) and its first
 * TK_MANIFEST_MAX_KEYS pairs (more are ignored), values unescaped. */
#define TK_MANIFEST_MAX_KEYS 32
struct tk_manifest_rec {
	char *kind;
	unsigned n;
	struct tk_manifest_kv {
		char *key, *value;
	} kv[TK_MANIFEST_MAX_KEYS];
};

/* Split the manifest line @line (cut up) into *r, decoding each value's
 * %XX escapes ("%" alone is the empty string).  Returns 0, or -EINVAL
 * when the line is malformed: a word without '=' or a bad escape.  With
 * @lenient (the kernel part's reader, which takes only its own records)
 * such a word is skipped and a bad escape left as it is. */
int tk_manifest_split(char *line, bool lenient, struct tk_manifest_rec *r);
/* The value of @key in @r, or NULL. */
const char *tk_manifest_get(const struct tk_manifest_rec *r, const char *key);

struct tk_trace_clock {
	bool tsc;      /* timestamps are TSC cycles; else CLOCK_MONOTONIC ns */
	uint64_t freq; /* Hz of the timestamps */
	uint64_t tsc_start, mono_start, real_start; /* taken together */
	uint64_t tsc_stop, mono_stop, real_stop;
};

struct tk_trace_process {
	uint32_t pid, ppid;
	uint32_t class_id; /* CTF stream class of its streams */
	char comm[17];
	char *exe;
	unsigned nevents;
	struct tk_event_info *events; /* sorted by id */
	/* The PID.desc file's bytes: records of (u32 id, u32 size, the
	 * descriptor padded to 8 bytes).  The writer writes them as they are;
	 * the reader parses them into events. */
	char *desc_blob;
	size_t desc_blob_size;
	/* events lost by threads that had no stream to count them in (no
	 * buffers could be made, or no free stream): lost_nobuf */
	uint64_t lost_nobuf;
	/* written: only its descriptor file; its class and manifest line
	 * are in the trace's `done` text already */
	bool desc_only;
};

struct tk_trace_stream {
	char *file; /* relative to the trace directory */
	uint32_t pid, tid, class_id;
	char comm[17];
	uint64_t instance;
	uint64_t events, bytes, packets;
	uint64_t lost_full, lost_nested, lost_big, lost_overwritten;
	/* of a trace whose recorder never finished: lost after its last
	 * update of the manifest, as the packets it wrote since say (their
	 * events_discarded); not in the manifest */
	uint64_t lost_later;
};

/* One CPU's kernel pages (manifest kind "kcpu"). */
struct tk_trace_kcpu {
	uint32_t cpu;
	char *file; /* relative to the trace directory */
	uint64_t bytes, pages, entries, overrun, dropped;
};

/* The kernel part of a trace (manifest kind "kernel"), if any. */
struct tk_trace_kernel {
	char *instance;   /* tracefs instance used */
	char *clock;      /* its trace_clock */
	uint32_t page_size, cpus, buffer_kb;
	char *tracer;     /* current_tracer, "nop" if none */
	char *events;     /* the -e patterns, comma separated */
	char *pid_filter; /* set_event_pid, comma separated, "" if none */
	bool event_fork, stack;
	unsigned nkcpu;
	struct tk_trace_kcpu *kcpu;
};

/* Processes that are gone, and their streams, as their final lines:
 * written after the others' (a recorder renders each once, not at every
 * index). */
struct tk_trace_done {
	const char *classes;   /* CTF metadata: tk_ctf_put_class() */
	size_t classes_len;
	const char *processes; /* manifest: tk_trace_put_process() */
	size_t processes_len;
	const char *streams;   /* manifest: tk_trace_put_stream() */
	size_t streams_len;
};

struct tk_trace {
	char *dir;
	bool incomplete; /* written while recording: the recorder never
			  * finished it (manifest "tracekit state=recording") */
	bool recovered;  /* the recorder never finished it, and `tracekit
			  * recover` cut its stream files after their last
			  * whole packet and counted their events (manifest
			  * "tracekit state=recovered") */
	char host[65];
	char mode[16];
	struct tk_trace_clock clock;
	unsigned nprocesses;
	struct tk_trace_process *processes;
	unsigned nstreams;
	struct tk_trace_stream *streams;
	struct tk_trace_kernel *kernel; /* NULL: no kernel part */
	struct tk_trace_done done; /* written: lines rendered before */
	char *kernel_lines; /* read: the manifest's kernel lines as they are
			     * (format/kernel-read.h parses them), written
			     * back as they are when kernel is NULL */
};

static inline uint64_t tk_stream_lost(const struct tk_trace_stream *s)
{
	return s->lost_full + s->lost_nested + s->lost_big + s->lost_overwritten +
	       s->lost_later;
}

/* Write the manifest, descriptor files and CTF metadata of @t into t->dir,
 * each file whole (renamed into place).  A descriptor file that has its
 * size already is kept: descriptors are only ever appended, so the
 * recorder can call this as often as processes and streams come.
 * Returns 0 or -errno with err[errlen] naming the file. */
int tk_trace_write_index(const struct tk_trace *t, char *err, size_t errlen);

/* The same in two steps, so that a recorder can leave the second to
 * another thread: tk_trace_render_index puts what the files would hold
 * in *x (in memory; only a stat of each descriptor file), and
 * tk_trace_store_index writes them into x->dir.  Both return 0 or -errno
 * with err[errlen] naming the file; free *x with tk_index_free. */
struct tk_index_file {
	char *path; /* relative to the trace directory */
	char *data;
	size_t len;
};

struct tk_index {
	char *dir;
	bool sync; /* the complete index: each file synced before its rename */
	unsigned n;
	struct tk_index_file *files;
};

int tk_trace_render_index(const struct tk_trace *t, struct tk_index *x,
			  char *err, size_t errlen);
int tk_trace_store_index(const struct tk_index *x, char *err, size_t errlen);
void tk_index_free(struct tk_index *x);

/* Write the TSDL text describing @t's user streams to @f. */
int tk_ctf_write_metadata(FILE *f, const struct tk_trace *t);
/* Pieces of the files, for struct tk_trace_done: a process's stream
 * class and events (CTF metadata), its manifest line, a stream's. */
void tk_ctf_put_class(FILE *f, const struct tk_trace_process *p);
void tk_trace_put_process(FILE *f, const struct tk_trace_process *p);
void tk_trace_put_stream(FILE *f, const struct tk_trace_stream *s);

/* Read the manifest and descriptors of the trace in @dir into *t (free
 * with tk_trace_free).  Returns 0 or -errno with a one-line reason in
 * err[errlen] naming the file and, for a bad line, its number. */
int tk_trace_read_index(const char *dir, struct tk_trace *t, char *err,
			size_t errlen);
void tk_trace_free(struct tk_trace *t);

/* Find a process's event by id (binary search); NULL if unknown. */
const struct tk_event_info *tk_process_event(const struct tk_trace_process *p,
					     uint32_t id);
const struct tk_trace_process *tk_trace_process_of(const struct tk_trace *t,
						   uint32_t class_id);

/* Convert a timestamp to nanoseconds of CLOCK_MONOTONIC / CLOCK_REALTIME. */
uint64_t tk_clock_to_mono(const struct tk_trace_clock *c, uint64_t ts);
uint64_t tk_clock_to_real(const struct tk_trace_clock *c, uint64_t ts);

#endif /* TK_TRACE_H */
