/* SPDX-License-Identifier: MIT */
/*
 * report.h - what the parts of `tracekit report` share: the line prefix
 * (who, CPU, time) that user and kernel lines have in common, and the
 * kernel side's entry points (report-kernel.c).
 *
 * A kernel line, and a user line of a trace that has kernel events:
 *
 *         sleep-4242 [001] d..2. 5123.456789: sched:sched_switch: ...
 *    worker-4243 [000]       5123.456790: app:request: id=1
 *
 * The five latency columns (irqs-off, need-resched, hardirq/softirq,
 * preempt depth, migrate-disable depth) are blank on user lines.
 */
#ifndef TK_REPORT_H
#define TK_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/trace.h"

enum ts_mode { TS_MONO, TS_RAW, TS_REAL };

/* Decimal digits of v right-aligned in @width, padded with @pad; returns
 * the chars written (more than width if needed). */
size_t report_put_uint(char *buf, uint64_t v, unsigned width, char pad);

/* "COMM-TID" right-aligned in 16 columns, then " [CPU] " (3 digits). */
size_t report_put_prefix(char *buf, const char *comm, size_t comm_len,
			 uint32_t tid, uint32_t cpu);

/* Its " [CPU] " part alone. */
size_t report_put_prefix_cpu(char *buf, uint32_t cpu);

/* The timestamp as --ts asks: seconds.microseconds or raw ticks. */
size_t report_put_time(const struct tk_trace_clock *c, enum ts_mode mode,
		       uint64_t ts, char *buf);

/* True when --events selects @name (no pattern: every event). */
bool report_selected(const char *const *patterns, unsigned n, const char *name);

/* A name and how many of its events were seen, for --count. */
struct report_count {
	const char *name;
	uint64_t count;
};

struct report_kernel;
struct tk_kernel;

struct report_kernel_opts {
	const char *filter;
	const char *const *patterns;
	unsigned npatterns;
	enum ts_mode ts;
	bool count_only;
	bool tep_only; /* all field text from libtraceevent (for checking) */
	const struct tk_trace_clock *clock;
};

/* What compiling -F for the kernel's events gave. */
struct report_filter_result {
	bool any_compiled;
	const char *first_event; /* the first event it did not compile for */
	int column;
	char message[160];
};

/* Open DIR's kernel events.  Returns 1 with *out set, 0 when the trace
 * has no kernel part, -1 after printing why it cannot be read. */
int report_kernel_open(const char *dir, const struct report_kernel_opts *o,
		       struct report_filter_result *fr,
		       struct report_kernel **out);

/* Header lines: events, tracer, clock, and each CPU's pages and losses. */
void report_kernel_header(const struct report_kernel *rk);

/* The kernel part's reader, whose CPUs report's merge walks
 * (format/merge.h). */
struct tk_kernel *report_kernel_handle(struct report_kernel *rk);

/* Print (or count) CPU @i's current event if it is selected. */
void report_kernel_emit(struct report_kernel *rk, unsigned i);

/* Append the kernel events' counts to @counts (grown as needed). */
int report_kernel_counts(const struct report_kernel *rk,
			 struct report_count **counts, unsigned *n);

/* On stderr, "tracekit: libtraceevent printed N SYSTEM:EVENT" for each
 * kernel event whose field text came from libtraceevent. */
void report_kernel_tep_stats(const struct report_kernel *rk);

uint64_t report_kernel_lost(const struct report_kernel *rk);
void report_kernel_close(struct report_kernel *rk);

#endif /* TK_REPORT_H */
