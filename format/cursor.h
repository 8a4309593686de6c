/* SPDX-License-Identifier: MIT */
/*
 * cursor.h - every event of a trace directory, user and kernel, in time
 * order, each seen the same way: a kind (name and fields), a timestamp,
 * the CPU, thread and command, and the field values.
 *
 * A tool that analyses a whole trace (hist) walks it with
 *
 *	tk_cursor_open(&c, dir, err, sizeof(err));
 *	while (tk_cursor_next(&c) > 0)
 *		... c.kind, c.ts, c.cpu, c.tid, tk_cursor_values(&c) ...
 *	tk_cursor_close(&c);
 *
 * The sources (user streams, the kernel's CPUs) are merged by merge.c,
 * as report and convert merge them.  A user event's values are
 * decoded by its stream reader; a kernel event's only when asked
 * (tk_cursor_values), so skipping an event costs its header only.
 */
#ifndef TK_CURSOR_H
#define TK_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel-fields.h"
#include "kernel-read.h"
#include "merge.h"
#include "stream-read.h"
#include "trace.h"

/* One kind of event: a user event of one process (several processes may
 * define the same name: one kind each), or a kernel event type. */
struct tk_cursor_kind {
	const char *name; /* "provider:event" or "system:event" */
	bool kernel;
	unsigned nfields;
	const struct tk_field_desc *fields;
	const struct tk_event_info *info; /* user: its descriptor */
	struct tep_event *tep;            /* kernel: its format */
	struct tk_kfields kf;             /* kernel: its fields */
	char *kname;                      /* kernel: owns name */
	void *user;                       /* the caller's, per kind */
};

struct tk_cursor {
	struct tk_trace trace;
	struct tk_kernel kernel; /* ncpus 0 when the trace has none */
	bool has_kernel;
	struct tk_merge merge;
	unsigned nkinds;
	struct tk_cursor_kind *kinds; /* user kinds, then kernel kinds */
	struct tk_cursor_kind **kernel_by_id;
	unsigned nids;
	struct tk_cursor_kind unknown; /* kernel records of no known type */
	/* errors met while reading: the first is kept, all are counted */
	unsigned nerrors;
	char error[512];

	/* the current event, after tk_cursor_next() returned 1 */
	struct tk_cursor_kind *kind;
	struct tk_stream_reader *reader; /* a user event's stream, or NULL */
	unsigned src; /* < merge.nreaders: a user stream; else a kernel CPU */
	uint64_t ts;
	unsigned cpu;
	int tid;
	int pid;              /* the process; -1 for kernel events */
	long long missed;     /* kernel events lost just before (kernel-read.h) */
	const unsigned char *data; /* kernel: the record */
	unsigned data_size;
	bool values_ready;
	struct tk_value *values;
	unsigned values_cap;
};

/* Open the trace in @dir.  Returns 0, or -errno with a one-line reason in
 * err[errlen]; close with tk_cursor_close() in both cases. */
int tk_cursor_open(struct tk_cursor *c, const char *dir, char *err,
		   size_t errlen);

/* Move to the next event: 1 when there is one, 0 at the end.  A source
 * that turns out malformed stops there (counted in c->nerrors, the first
 * message in c->error) and the others go on. */
int tk_cursor_next(struct tk_cursor *c);

/* The current event's field values, one per field of c->kind; NULL when
 * a kernel record is too short for its format. */
const struct tk_value *tk_cursor_values(struct tk_cursor *c);

/* The command name of the current event's thread ("<...>" if unknown). */
const char *tk_cursor_comm(const struct tk_cursor *c);

/* The same for an event seen earlier, by its c->src and c->tid: a tool
 * that keeps a few events of millions names their threads when it
 * prints them (a kernel thread's name is a look-up). */
const char *tk_cursor_comm_of(const struct tk_cursor *c, unsigned src, int tid);

/* The kinds whose name is @name (user kinds of several processes may
 * share it), in kinds[] order: writes up to @max into @out, returns how
 * many there are. */
unsigned tk_cursor_find(const struct tk_cursor *c, const char *name,
			struct tk_cursor_kind **out, unsigned max);

/* Every kind's name, for "did you mean": an array of nkinds pointers
 * (free() it; the names belong to the cursor). */
const char **tk_cursor_names(const struct tk_cursor *c);

void tk_cursor_close(struct tk_cursor *c);

#endif /* TK_CURSOR_H */
