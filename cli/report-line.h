/* SPDX-License-Identifier: MIT */
/*
 * report-line.h - the lines `tracekit report` prints for events, and
 * the parts user, kernel and function tracer lines share.
 *
 * A line is built in a struct tk_obuf (format/outbuf.h) over a buffer
 * of its printer's (cmd-report.c: user events, report-kernel.c: kernel
 * events, report-graph.c: the function tracer's), cut at the buffer's
 * end, and written out whole with its newline:
 *
 *         sleep-4242 [001] d..2. 5123.456789: sched:sched_switch: ...
 *    worker-4243 [000]       5123.456790: app:request: id=1
 *   '-------who-----''-cpu-''latency''-time-'
 *
 * The five latency columns (irqs-off, need-resched, hardirq/softirq,
 * preempt depth, migrate-disable depth) are the kernel's; user lines
 * have them blank when the trace has kernel events.  Digits are written
 * without printf (format/number.h): a report writes millions of lines.
 */
#ifndef TK_REPORT_LINE_H
#define TK_REPORT_LINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "format/outbuf.h"
#include "format/trace.h"

/* --ts: seconds of CLOCK_MONOTONIC, clock ticks, seconds since the epoch,
 * seconds since the trace's first event, since the line before. */
enum ts_mode { TS_MONO, TS_RAW, TS_REAL, TS_START, TS_DELTA };

/* Start a line in buf[0..size): room for its text and the newline. */
static inline void report_line_start(struct tk_obuf *o, char *buf, size_t size)
{
	tk_obuf_init(o, buf, size - 1);
}

/* End the line with its newline and write it to stdout. */
static inline void report_line_end(struct tk_obuf *o)
{
	o->p[o->n++] = '\n'; /* report_line_start kept a byte for it */
	fwrite_unlocked(o->p, 1, o->n, stdout);
}

/* "COMM-TID" right-aligned in 16 columns (COMM cut at 40 bytes). */
void report_line_who(struct tk_obuf *o, const char *comm, size_t comm_len,
		     uint32_t tid);

/* " [CPU] " (3 digits at least). */
static inline void report_line_cpu(struct tk_obuf *o, uint32_t cpu)
{
	char tmp[TK_NUM_MAX + 4], *b = tk_owrite_begin(o, tmp, sizeof(tmp));
	size_t n = 5;

	memcpy(b, " [", 2);
	if (cpu < 1000)
		tk_num_fixed(b + 2, cpu, 3);
	else
		n = 2 + tk_num_put_dec(b + 2, cpu, 3, '0');
	memcpy(b + n, "] ", 2);
	tk_owrite_end(o, b, n + 2);
}

/* The timestamp as --ts asks: seconds.microseconds or raw ticks.
 * TS_START counts from the origin report_time_origin() set, TS_DELTA
 * from the time of the line before. */
void report_line_time(struct tk_obuf *o, const struct tk_trace_clock *c,
		      enum ts_mode mode, uint64_t ts);
void report_time_origin(uint64_t ts);

/* The line for events lost at this place in the listing, in trace-cmd's
 * words: "WHO [N EVENTS DROPPED]", or "WHO [EVENTS DROPPED]" when the
 * count is not known (@count < 0).  WHO is "CPU:N" for a kernel CPU,
 * "COMM-TID" for a user thread (@name "COMM", @num TID, @sep "-"). */
void report_line_dropped(const char *name, const char *sep, uint32_t num,
			 int64_t count);

#endif /* TK_REPORT_LINE_H */
