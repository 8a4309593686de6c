/* SPDX-License-Identifier: MIT */
/*
 * export.h - `tracekit convert`: a trace directory written in another
 * format, one file per format behind an ops table (as uftrace's dump
 * does with struct uftrace_dump_ops).
 *
 *   cli/cmd-convert.c   options; picks the format by name
 *   export/export.c     the driver: opens the trace, walks every event in
 *                       time order (format/merge.h), calls the format's
 *                       ops, writes the output under a temporary name and
 *                       renames it at the end (or removes it on error)
 *   export/out.c        the output buffer and its JSON/number writers
 *   export/calls.c      the function tracer's calls per thread, named
 *   export/flame.c      call stacks merged into a tree (folded, svg)
 *   export/FORMAT.c     one format: chrome.c, folded.c, svg.c,
 *                       tracedat.c (with tracedat-events.c, -pages.c)
 *
 * A format sees each event once, in time order, through its ops; it keeps
 * only per-thread (or per-stack) state, so converting takes memory in
 * the number of threads and distinct stacks, not the trace's length.
 *
 * Adding a format: write export/NAME.c defining a const struct
 * tk_export_ops, declare it below, list it in export.c's formats[] and
 * in export/meson.build.
 */
#ifndef TK_EXPORT_H
#define TK_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "format/kernel-read.h"
#include "format/stream-read.h"
#include "format/trace.h"

struct tk_export;

/* Which events a conversion keeps (convert's --events, --pid, --tid,
 * --comm, --from, --until): the driver asks before a format sees an
 * event, the same for every format.  A stream left out is left out
 * whole, its losses too; losses of a kept stream or of a kernel CPU are
 * told the format wherever they are.  Each function may be NULL (keep). */
struct tk_export_select {
	/* whether any event of user stream @s may be kept */
	bool (*stream)(void *arg, const struct tk_export *x,
		       const struct tk_trace_stream *s);
	/* whether the current event of @rd (a kept stream) is kept */
	bool (*user)(void *arg, const struct tk_export *x,
		     const struct tk_stream_reader *rd);
	/* whether the current record of kernel CPU @c is kept */
	bool (*kernel)(void *arg, const struct tk_export *x,
		       const struct tk_kernel_cpu *c);
	void *arg;
	const char *what; /* the options as given: "no event matched WHAT" */
};

/* What the user asked of `convert`; formats read the fields they know. */
struct tk_export_opts {
	const char *dir;     /* the trace directory */
	const char *output;  /* file to write; "-" for standard output */
	bool weight_calls;   /* folded, svg: weigh by calls, not self time */
	bool on_cpu;         /* folded, svg: self time on a CPU (sched_switch) */
	bool stacks;         /* folded, svg: stack events, not function_graph */
	const char *title;   /* svg: the graph's title (default: the trace) */
	bool raw_ts;         /* tracedat: the recorded counter, not ns */
	bool progress;       /* a progress line on stderr */
	const struct tk_export_select *select; /* NULL: every event */
};

struct tk_export_ops {
	const char *name;    /* --to NAME */
	const char *summary; /* one line for --help */
	const char *suffix;  /* appended to DIR for the default output name */
	bool seeks;          /* writes its file with seeks: not to "-" */
	/* Before the first event: x->trace, x->kernel and x->out are ready.
	 * Returns 0 or -errno after tk_export_error(). */
	int (*begin)(struct tk_export *x);
	/* A user stream's event: @rd's ts, event and values are current. */
	int (*user_event)(struct tk_export *x, struct tk_stream_reader *rd);
	/* A kernel event: @c's ts, data and data_size are current. */
	int (*kernel_event)(struct tk_export *x, struct tk_kernel_cpu *c);
	/* Every kernel event, before the selection options pick those given
	 * to kernel_event (may be NULL): what a format must know of events
	 * it does not show, e.g. when a selected thread went back on a CPU
	 * (a sched_switch of the task it replaced). */
	int (*kernel_any)(struct tk_export *x, struct tk_kernel_cpu *c);
	/* @count events of stream @s were lost between its events at @from
	 * (0: before its first) and @to (0: after its last). */
	int (*user_lost)(struct tk_export *x, const struct tk_trace_stream *s,
			 uint64_t from, uint64_t to, uint64_t count);
	/* Kernel CPU @cpu lost events between @from (0: its first event) and
	 * @to: @count of them, or -1 when the kernel did not count them.
	 * Called before the event at @to when a page says so; after the last
	 * event, over the CPU's span, for the losses the kernel counted but
	 * no page placed (a full buffer drops events without a mark). */
	int (*kernel_lost)(struct tk_export *x, unsigned cpu, uint64_t from,
			   uint64_t to, long long count);
	/* After the last event: close what is open, write the rest. */
	int (*end)(struct tk_export *x);
	/* Free the format's state (also after an error; may be NULL). */
	void (*free)(struct tk_export *x);
};

extern const struct tk_export_ops tk_export_chrome;
extern const struct tk_export_ops tk_export_folded;
extern const struct tk_export_ops tk_export_svg;
extern const struct tk_export_ops tk_export_tracedat;

/* The output: a buffer written to a file descriptor. */
struct tk_out {
	int fd;
	char *buf;
	size_t len, cap;
	int error; /* first write error (-errno), then nothing is written */
	uint64_t written;
};

struct tk_export {
	const struct tk_export_ops *ops;
	const struct tk_export_opts *opts;
	struct tk_trace *trace;
	struct tk_kernel *kernel; /* NULL when the trace has none */
	struct tk_out out;
	void *priv; /* the format's state */
	uint64_t first_ts, last_ts; /* of the events read so far */
	uint64_t events;            /* read */
	uint64_t kept;              /* handed to the format (o->select) */
	char *error;   /* the first error's line */
	char *warning; /* lines to say after a conversion that went well */
};

/* The formats, NULL-terminated, and the one named @name (NULL if none). */
extern const struct tk_export_ops *const tk_export_formats[];
const struct tk_export_ops *tk_export_find(const char *name);

/* Convert as @o says with @ops.  Returns 0, or -errno with the reason in
 * a line that *err (malloc'd, the caller frees) holds; the output file is
 * then not left behind.  *warn (malloc'd, or NULL) holds what the format
 * left out or changed, one line each, after a conversion that went well. */
int tk_export_run(const struct tk_export_ops *ops,
		  const struct tk_export_opts *o, char **err, char **warn);

/* Record the error line (the first one counts); returns -EINVAL. */
int tk_export_error(struct tk_export *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Add a line to x->warning. */
void tk_export_warn(struct tk_export *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A timestamp of the trace in CLOCK_MONOTONIC nanoseconds (the trace's
 * one timeline for user and kernel events). */
uint64_t tk_export_ns(const struct tk_export *x, uint64_t ts);

/* A difference of timestamps in nanoseconds. */
uint64_t tk_export_ns_delta(const struct tk_export *x, uint64_t d);

/* out.c: the output buffer. */
void tk_out_flush(struct tk_out *o);

static inline void tk_out_reserve(struct tk_out *o, size_t n)
{
	if (o->len + n > o->cap)
		tk_out_flush(o);
}

static inline void tk_out_mem(struct tk_out *o, const void *p, size_t n)
{
	if (n > o->cap - o->len) {
		tk_out_flush(o);
		if (n > o->cap) {
			/* larger than the buffer: written through */
			const char *s = p;

			while (n) {
				size_t k = n < o->cap ? n : o->cap;

				memcpy(o->buf, s, k);
				o->len = k;
				tk_out_flush(o);
				s += k;
				n -= k;
			}
			return;
		}
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static inline void tk_out_str(struct tk_out *o, const char *s)
{
	tk_out_mem(o, s, strlen(s));
}

static inline void tk_out_char(struct tk_out *o, char c)
{
	if (o->len == o->cap)
		tk_out_flush(o);
	o->buf[o->len++] = c;
}

/* Decimal digits of @v; of @v as signed. */
void tk_out_u64(struct tk_out *o, uint64_t v);
void tk_out_s64(struct tk_out *o, int64_t v);
/* @ns as microseconds with three decimals ("12.345"), as the trace event
 * format's ts and dur are. */
void tk_out_us(struct tk_out *o, uint64_t ns);
/* printf into the output (for what is rare). */
void tk_out_printf(struct tk_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* @s[0..len) as a JSON string, quotes included. */
void tk_out_json_str(struct tk_out *o, const char *s, size_t len);
/* @s[0..len) escaped for XML text and attributes; what is not UTF-8
 * (or no XML character) written as U+FFFD or '?', so that the file stays
 * well-formed whatever the trace holds. */
void tk_out_xml_str(struct tk_out *o, const char *s, size_t len);
/* The bytes of the first @chars characters of @s[0..len) (a byte that is
 * not UTF-8 counts as one): where a text may be cut. */
size_t tk_utf8_cut(const char *s, size_t len, size_t chars);

#endif /* TK_EXPORT_H */
