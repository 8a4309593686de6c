/* SPDX-License-Identifier: MIT */
/*
 * report.h - what the parts of `tracekit report` share besides their
 * lines (report-line.h): the selection of events (--from, --to, --pid,
 * --tid, --comm, -F's common fields; report-select.c) and the kernel
 * side's entry points (report-kernel.c).
 */
#ifndef TK_REPORT_H
#define TK_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/filter.h"
#include "format/merge.h"
#include "format/trace.h"
#include "filter-check.h"
#include "report-line.h"

/* --from T, --to T: a bound in the terms of the clock it was given in
 * (as --ts prints, or since the first event). */
struct report_bound {
	bool set;
	enum ts_mode clock; /* TS_START: since the trace's first event */
	uint64_t lo, hi;    /* ns (ticks for TS_RAW): those that print as
			     * the time given (report rounds to the us), or
			     * that a finer last digit covers */
};

/* @arg ("[+]SECONDS[.FRACTION]", ticks with --ts raw) of option @opt,
 * read in the terms of --ts @ts; 0, or -1 after saying why. */
int report_bound_parse(enum ts_mode ts, const char *opt, const char *arg,
		       struct report_bound *b);
/* Timestamp @ts in @b's terms (@first: the trace's first event). */
uint64_t report_bound_time(const struct tk_trace_clock *c, uint64_t first,
			   const struct report_bound *b, uint64_t ts);

/* "12,34" of option @opt added to *ids[*n]; -1 (said) if it is not a
 * list of ids. */
int report_ids_parse(const char *opt, const char *arg, uint32_t **ids, unsigned *n);

/* --ts's word (mono, raw, real, start, and delta if @delta) into
 * *mode; -1 after saying what is wrong. */
int report_parse_ts(const char *arg, enum ts_mode *mode, bool delta);

/* True when --events selects @name (no pattern: every event). */
bool report_selected(const char *const *patterns, unsigned n, const char *name);

/* A name and how many of its events were seen, for --count. */
struct report_count {
	const char *name;
	uint64_t count;
};

/* --pid, --tid, --comm: whose events are shown (all when none is given).
 * A kernel event's thread is its common_pid; it belongs to process P
 * when it is P or one of P's threads that have a user stream. */
struct report_who {
	uint32_t *pids, *tids;
	unsigned npids, ntids;
	const char *comm; /* a glob on the thread's name */
	const struct tk_trace *trace;
};

static inline bool report_who_all(const struct report_who *w)
{
	return !w->npids && !w->ntids && !w->comm;
}

/* Whether the thread @tid of process @pid (0: unknown, look it up in the
 * trace's streams) named @comm is selected. */
bool report_who_selects(const struct report_who *w, uint32_t pid,
			uint32_t tid, const char *comm);

/* The selecting options of report and convert, and hist's --pid, --tid
 * and --comm, read alike by report_select_option: each is noted in
 * `what` as given, for the line that says nothing matched. */
struct report_select {
	const char **patterns;        /* --events */
	unsigned npatterns;
	struct report_who who;        /* --pid, --tid, --comm */
	struct report_bound from, to; /* --from, --to (convert's --until) */
	const char *from_arg, *to_arg; /* the window as given */
	const char *to_opt;           /* "--to" or "--until" */
	char what[512];               /* the selecting options, as given */
};

/* Option @c (OPT_EVENTS, OPT_PID, OPT_TID, OPT_COMM, OPT_FROM, or the
 * window's end: OPT_TO, or OPT_UNTIL where --to is another option) with
 * @arg, noted and kept; the window is read by report_select_window.
 * 0, or -1 after saying why. */
int report_select_option(struct report_select *s, int c, const char *arg);
/* Note another selecting option (report's -F) in s->what. */
void report_select_note(struct report_select *s, const char *opt,
			const char *arg);
/* The window in the terms of --ts @ts, wherever --ts was given: 0, or
 * -1 after saying why (a time that is none, --from after its end). */
int report_select_window(struct report_select *s, enum ts_mode ts);
/* Whether timestamp @ts is in the window (@first: the trace's first
 * event). */
bool report_select_in_window(const struct report_select *s,
			     const struct tk_trace_clock *c, uint64_t first,
			     uint64_t ts);
/* Whether the time from @after to @before (0: not known, open) meets
 * the window: for a loss between two events. */
bool report_select_meets_window(const struct report_select *s,
				const struct tk_trace_clock *c, uint64_t first,
				uint64_t after, uint64_t before);
void report_select_free(struct report_select *s);

/* Events a user stream lost at one place of the listing (report-lost.c):
 * between its events at times @after (0: before its first) and @before
 * (0: not known, after its last). */
struct report_loss {
	unsigned src; /* the stream's reader in the merge */
	uint64_t count;
	uint64_t after, before;
};

/* The losses of a merge's user streams, as its events go by. */
struct report_lost {
	const struct tk_merge *m;
	uint64_t *seen;     /* per stream: its losses said so far */
	uint64_t *last;     /* per stream: its last event's time, 0 before */
	unsigned prev;      /* the source of the event before, ~0u none */
	unsigned heap_len;  /* the merge's heap after that event */
	bool started;
	bool overwrite;     /* the trace's mode */
};

/* For merge @m (open until report_lost_close): 0 or -ENOMEM. */
int report_lost_open(struct report_lost *l, const struct tk_merge *m);
/* Call after each tk_merge_next(), with the event it gave (NULL after
 * the last, and when it gave none): calls @say for each loss due before
 * that event, in order -- on the first call, those of the streams that
 * have no event; then that of the stream of the event before, if it has
 * just ended; then that of @ev's stream, if its packet counts more lost
 * than its last event's. */
void report_lost_before(struct report_lost *l, const struct tk_merge_event *ev,
			void (*say)(void *, const struct report_loss *), void *arg);
void report_lost_close(struct report_lost *l);

/* The fields every event offers -F besides its own, as the kernel's
 * events have them: common_pid (the thread), common_comm, common_cpu.
 * report_common_fields() appends their descriptors to @fields[0..n)
 * in a new array (NULL if out of memory); values go at the same places. */
#define REPORT_COMMON_FIELDS 3
struct tk_field_desc *report_common_fields(const struct tk_field_desc *fields,
					   unsigned n);
void report_common_values(struct tk_value *v, uint32_t tid, const char *comm,
			  uint32_t cpu);

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
	const struct report_who *who;
	const char *dir;  /* the trace */
	bool overwrite;   /* recorded in overwrite mode */
};

/* Open DIR's kernel events.  Returns 1 with *out set, 0 when the trace
 * has no kernel part, -1 after printing why it cannot be read. */
int report_kernel_open(const char *dir, const struct report_kernel_opts *o,
		       struct filter_check *fr,
		       struct report_kernel **out);

/* The CPU number of kernel source @i. */
unsigned report_kernel_cpu(const struct report_kernel *rk, unsigned i);

/* Header lines: events, tracer, clock, and each CPU's pages and losses;
 * for an incomplete trace, what became of the events its recorder had
 * not read (report_kernel_left). */
void report_kernel_header(const struct report_kernel *rk);

/* An incomplete trace (its recorder killed, or still recording): what
 * became of the kernel events the recorder had not read yet, and how to
 * get them, in out[len] ("" for a complete trace). */
void report_kernel_left(const struct report_kernel *rk, char *out, size_t len);

/* The kernel part's reader, whose CPUs report's merge walks
 * (format/merge.h). */
struct tk_kernel *report_kernel_handle(struct report_kernel *rk);

/* Print (or count) CPU @i's current event if it is selected; returns
 * whether it was. */
bool report_kernel_emit(struct report_kernel *rk, unsigned i);

/* CPU @i's current event is before overwrite mode's cut: not printed,
 * as report_kernel_skip(); returns whether it would have been shown. */
bool report_kernel_cut(struct report_kernel *rk, unsigned i);

/* CPU @i's current event is out of the window: not printed, but the
 * comms it names count for the lines after it, as when it is printed. */
void report_kernel_skip(struct report_kernel *rk, unsigned i);

/* Whether CPU @i lost events to overwriting (overwrite mode): its first
 * event is then not the first it had. */
bool report_kernel_overwritten(const struct report_kernel *rk, unsigned i);

/* Whether @pattern (of --events) names any kernel event of the trace. */
bool report_kernel_matches(const struct report_kernel *rk, const char *pattern);

/* Append the kernel events' counts to @counts (grown as needed). */
int report_kernel_counts(const struct report_kernel *rk,
			 struct report_count **counts, unsigned *n);

/* On stderr, "tracekit: libtraceevent printed N SYSTEM:EVENT" for each
 * kernel event whose field text came from libtraceevent. */
void report_kernel_tep_stats(const struct report_kernel *rk);

uint64_t report_kernel_lost(const struct report_kernel *rk);
void report_kernel_close(struct report_kernel *rk);

#endif /* TK_REPORT_H */
