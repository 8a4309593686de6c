/* SPDX-License-Identifier: MIT */
/*
 * tracedat-events.h - user events as trace.dat events: a format file per
 * event (as the kernel writes one for each of its events, user_events
 * included), and each record laid out as that format says.
 *
 * A user event becomes event PROVIDER:NAME of system PROVIDER, with the
 * kernel's common fields (type, flags, preempt count, pid: the thread)
 * then its own fields, and a print fmt made from its print format so that
 * `trace-cmd report` prints the text `tracekit report` prints.  The
 * function tracer's events become ftrace's own function, funcgraph_entry
 * and funcgraph_exit (the kernel's formats when the trace has them), so
 * trace-cmd draws the call graph; their addresses are replaced by
 * addresses of a synthetic symbol table (one range per function name,
 * listed in kallsyms), since the processes' own addresses may overlap.
 */
#ifndef TK_TRACEDAT_EVENTS_H
#define TK_TRACEDAT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/trace.h"

struct tep_handle;
struct tk_symbols;
struct td_kind;

/* A format file of an event that the user events need. */
struct td_format {
	const char *system;
	char *text;
};

struct td_events {
	const struct tk_trace *trace;
	unsigned max_record;      /* the largest record a page takes */
	bool ns;                  /* timestamps are ns (funcgraph calltime) */
	unsigned **of;            /* [process][event index]: kind + 1 */
	struct td_kind *kinds;    /* distinct formats */
	unsigned nkinds, kinds_cap;
	struct td_format *formats; /* those to write, in kinds order */
	unsigned nformats;
	struct tk_symbols *syms;  /* for the function tracer's addresses */
	struct td_sym *sym;       /* the synthetic symbols, by name hash */
	unsigned nsym, sym_cap;
	struct td_open *open;     /* per stream: open function_graph calls */
	uint64_t skipped;         /* events with no trace.dat form */
	uint64_t truncated;       /* records cut to fit a page */
	unsigned char *buf;       /* a record being built */
};

/* Prepare the formats of @t's user events.  @ktep is the kernel part's
 * handle (NULL if none): its ids are not reused, and its ftrace formats
 * serve the function tracer's events.  Returns 0 or -errno with a
 * one-line reason in err[errlen]. */
int td_events_init(struct td_events *e, const struct tk_trace *t,
		   struct tep_handle *ktep, unsigned max_record, bool ns,
		   char *err, size_t errlen);

/* Lay out the record of @ev (of process @proc, thread @tid; stream index
 * @stream) with @values at @ts, converted timestamp @ts_out.  Returns its
 * length (its bytes are in e->buf) or 0 when the event is not written. */
unsigned td_events_record(struct td_events *e, const struct tk_trace_process *proc,
			  const struct tk_event_info *ev, unsigned stream,
			  int tid, const struct tk_value *values, uint64_t ts_out);

/* The synthetic symbols, as kallsyms lines, appended to *buf (malloc'd,
 * *len bytes).  Returns 0 or -ENOMEM. */
int td_events_kallsyms(const struct td_events *e, char **buf, size_t *len);

void td_events_free(struct td_events *e);

#endif /* TK_TRACEDAT_EVENTS_H */
