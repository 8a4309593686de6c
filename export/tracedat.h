/* SPDX-License-Identifier: MIT */
/*
 * tracedat.h - a trace directory as a trace-cmd trace.dat, version 7
 * (docs/format.md, "trace.dat"), which `trace-cmd report` and KernelShark
 * open.
 *
 * Kernel and user events share each CPU's ring-buffer pages, in time
 * order: a user event goes to the CPU its packet was recorded on, the
 * CPU `tracekit report` shows.  User events are described by format files
 * of their own (tracedat-events.h); the kernel's formats, header_page,
 * header_event, kallsyms, printk formats and command lines are the saved
 * ones.  Timestamps are CLOCK_MONOTONIC nanoseconds by default (the
 * trace's conversion, as `tracekit report` prints them), or the recorded
 * counter as it is.
 *
 * The writer takes the events one at a time, in time order (each CPU's
 * pages are spilled to an unlinked file beside the output), and writes
 * the file at the end, under a temporary name renamed into place.
 */
#ifndef TK_TRACEDAT_H
#define TK_TRACEDAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tk_trace;
struct tk_kernel;
struct tk_stream_reader;
struct tk_tracedat;

struct tk_tracedat_opts {
	bool raw_ts; /* timestamps as recorded (TSC), not nanoseconds */
};

struct tk_tracedat_stats {
	unsigned cpus;
	uint64_t kernel_events, user_events;
	uint64_t skipped;   /* user events with no trace.dat form */
	uint64_t truncated; /* user records cut to fit a page */
	uint64_t bytes;     /* of pages */
};

/* Start writing trace @t (with its kernel part @k, or NULL) to @out.
 * Returns 0 and the writer in *w, or -errno with a one-line reason in
 * err[errlen]. */
int tk_tracedat_begin(struct tk_tracedat **w, const struct tk_trace *t,
		      struct tk_kernel *k, const struct tk_tracedat_opts *o,
		      const char *out, char *err, size_t errlen);

/* The next event in time order: a user event (@rd's current one), or a
 * kernel record of CPU @cpu.  Returns 0 or -errno (see tk_tracedat_end). */
int tk_tracedat_user(struct tk_tracedat *w, const struct tk_stream_reader *rd);
int tk_tracedat_kernel(struct tk_tracedat *w, unsigned cpu, uint64_t ts,
		       const void *data, unsigned size);

/* Kernel CPU @cpu lost @count events (-1: how many is unknown) before
 * its next record. */
void tk_tracedat_kernel_lost(struct tk_tracedat *w, unsigned cpu, long long count);

/* Write the file.  Returns 0, or -errno with a one-line reason in
 * err[errlen] (nothing is left at @out then). */
int tk_tracedat_end(struct tk_tracedat *w, struct tk_tracedat_stats *st,
		    char *err, size_t errlen);

/* Free the writer (and remove what it wrote unless it ended well). */
void tk_tracedat_free(struct tk_tracedat *w);

/* All of it: the trace in @dir written to @out. */
int tk_tracedat_write(const char *dir, const char *out,
		      const struct tk_tracedat_opts *o,
		      struct tk_tracedat_stats *st, char *err, size_t errlen);

#endif /* TK_TRACEDAT_H */
