/* SPDX-License-Identifier: MIT */
/*
 * cmd-report.c - tracekit report: every event of a trace in time order.
 *
 *   tracekit report [DIR] [-F FILTER] [--events PATTERN]...
 *                   [--pid PID] [--tid TID] [--comm GLOB] [--from T] [--to T]
 *                   [--no-cut]
 *                   [--ts mono|raw|real|start|delta]
 *                   [--no-header] [--count]
 *
 * One line per event, as trace-cmd prints them:
 *
 *       worker-4242  [001]  5123.456789: app:request: id=1 path=/index
 *
 * after a header with the clock, the processes and each stream's counts of
 * recorded and lost events; where a stream lost events, a line says so at
 * their place (report-lost.c).  Sources (user streams, then the kernel's
 * CPUs: report-kernel.c) are merged by timestamp (format/merge.h).  Each event
 * is printed by its source's printer; report-line.h shows the line layout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "common/visible.h"
#include "common/filter.h"
#include "common/pattern.h"
#include "format/event-info.h"
#include "format/printfmt.h"
#include "report-graph.h"
#include "report.h"
#include "format/merge.h"
#include "format/stream-read.h"
#include "format/trace.h"
#include "options.h"
#include "export/export.h"

struct report {
	const char *dir;
	const char *filter;
	struct report_select sel; /* --events, --pid, --tid, --comm, --from,
				   * --to, and -F noted as given */
	bool *who_ok;          /* per reader: its thread is selected */
	bool *lost_ok;         /* per reader: its losses are said (its thread
				* and some of its events are selected) */
	struct report_lost lost; /* where the user streams lost events */
	uint64_t nlost;        /* user events lost in what is shown */
	uint64_t ncut;         /* events the overwrite cut left out */
	bool *kept;            /* per reader: its last event (no stack) shown */
	uint64_t first_ts; /* the trace's first event */
	/* overwrite mode: where every stream is complete, and the source
	 * that begins there (the latest first event of those that lost older
	 * ones); --no-cut shows the events before too */
	uint64_t cut_ts;
	int cut_source; /* -1: no cut */
	bool no_cut;
	uint64_t nread, nshown; /* events read, and printed or counted */
	struct tk_value *fvalues; /* an event's values and the common ones */
	unsigned fvalues_cap;
	enum ts_mode ts;
	bool no_header;
	bool count_only;
	bool profile;
	bool stacks;
	struct ftrace_view *ftrace; /* function tracer events (report-graph.c) */
	bool tep_only;
	bool tep_stats;
	struct tk_trace trace;
	struct report_kernel *kernel; /* NULL when the trace has none */
	struct tk_merge merge;        /* user streams and kernel CPUs */
	/* per event: 1 print it, 0 skip it; and its compiled filter */
	struct event_state {
		const struct tk_event_info *ev;
		bool shown;
		bool stack;  /* a stack, shown with the event it follows */
		bool ftrace; /* the function tracer's: report-graph.c prints it */
		struct tk_filter *filter;
		uint64_t count;
	} *states;
	unsigned nstates;
	bool error;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracekit report [DIR] [OPTIONS]\n\n"
		"User and kernel events in time order; kernel lines carry the\n"
		"latency columns irqs-off, need-resched, hardirq/softirq, preempt\n"
		"depth, migrate-disable depth (blank on user lines).\n\n"
		"  DIR               trace directory (default " TK_DEFAULT_OUTPUT ")\n"
		"  -F, -f FILTER     only events matching FILTER (ftrace syntax, as record's\n"
		"                    -f, with its messages); events without the fields it\n"
		"                    names are left out; every event also has the fields\n"
		"                    common_pid (its thread), common_comm and common_cpu\n"
		"  --events PATTERN  only events matching PATTERN (repeatable): app:*,\n"
		"                    sched:sched_switch, syscalls (a whole system), ...\n"
		"  --pid PID[,PID]   only events of these processes (repeatable; a kernel\n"
		"                    event's thread counts when it is the process or one\n"
		"                    of its threads with user events)\n"
		"  --tid TID[,TID]   only events of these threads (repeatable)\n"
		"  --comm GLOB       only events of threads whose name matches GLOB\n"
		"  --from T, --to T  only events from time T, up to time T (included): in\n"
		"                    seconds as --ts prints them (ticks with --ts raw),\n"
		"                    or +SECONDS after the trace's first event\n"
		"  --until T         the same as --to T (its name in convert)\n"
		"  --no-cut          overwrite mode: also the events from before the time\n"
		"                    every stream covers (the streams that kept more)\n"
		"  --ts MODE         timestamps: mono (default, seconds of CLOCK_MONOTONIC),\n"
		"                    real (seconds since the epoch), raw (clock ticks),\n"
		"                    start (seconds since the trace's first event) or\n"
		"                    delta (seconds since the line before)\n"
		"  --no-header       events only\n"
		"  --count           decode every event but print only how many there\n"
		"                    are of each (checks the whole trace quickly); on\n"
		"                    stderr, the user events lost in what is counted and\n"
		"                    the events overwrite mode's cut left out\n"
		"  --profile         function tracer: per function, calls, total, self,\n"
		"                    average and maximum time, sorted by total\n"
		"  --stacks          the stacks recorded with events (--stack, --ustack,\n"
		"                    --func-stack), folded: 'a;b;c COUNT' per stack\n"
		"                    (as convert --to folded --stacks writes them)\n"
		"  --tep-print       kernel events' field text all from libtraceevent\n"
		"                    (slower; to check the fast printer against it)\n"
		"  --tep-stats       after the events, on stderr: how many of each kernel\n"
		"                    event libtraceevent printed (not the fast printer)\n\n"
		"Where a thread lost events, a line 'COMM-TID [N EVENTS DROPPED]' stands\n"
		"between its events before and after the loss, as 'CPU:N [N EVENTS\n"
		"DROPPED]' does for a kernel CPU; the options keep the lines of the\n"
		"threads and time they show.\n\n"
		"Exit status 1 when the options select no event, or the filter fits\n"
		"no event (said on stderr).\n");
}

static int parse_options(struct report *r, int argc, char **argv)
{
	struct opt_parser p;
	int c;

	r->dir = TK_DEFAULT_OUTPUT;
	opt_init(&p, "report");
	while ((c = opt_next(&p, argc, argv)) != -1) {
		switch (c) {
		case 'F':
		case 'f': /* as hist and record name it */
			r->filter = optarg;
			report_select_note(&r->sel, c == 'F' ? "-F" : "-f", optarg);
			break;
		case 'i':
			r->dir = optarg;
			break;
		case OPT_EVENTS:
		case OPT_PID:
		case OPT_TID:
		case OPT_COMM:
		case OPT_FROM:
		case OPT_TO:
		case OPT_UNTIL: /* --to, as convert names it */
			if (report_select_option(&r->sel, c, optarg) < 0)
				return -1;
			break;
		case OPT_TS:
			if (report_parse_ts(optarg, &r->ts, true) < 0)
				return -1;
			break;
		case OPT_NO_HEADER:
			r->no_header = true;
			break;
		case OPT_COUNT:
			r->count_only = true;
			break;
		case OPT_TEP_PRINT:
			r->tep_only = true;
			break;
		case OPT_TEP_STATS:
			r->tep_stats = true;
			break;
		case OPT_PROFILE:
			r->profile = true;
			break;
		case OPT_STACKS:
			r->stacks = true;
			break;
		case OPT_NO_CUT:
			r->no_cut = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	if (!opt_operands_max(&p, argc, argv, 1))
		return -1;
	if (optind < argc)
		r->dir = argv[optind];
	return report_select_window(&r->sel, r->ts);
}

/* Decide for each event whether it is shown and with which filter.  A
 * filter that compiles for no event at all is an error, as for
 * `record -f` (filter-check.h). */
static int prepare_events(struct report *r, struct filter_check *kf)
{
	struct tk_trace *t = &r->trace;
	char msg[512];

	for (unsigned i = 0; i < t->nprocesses; i++)
		r->nstates += t->processes[i].nevents;
	r->states = calloc(r->nstates + 1, sizeof(*r->states));
	if (!r->states)
		return -ENOMEM;
	r->nstates = 0;
	for (unsigned i = 0; i < t->nprocesses; i++) {
		for (unsigned j = 0; j < t->processes[i].nevents; j++) {
			struct event_state *st = &r->states[r->nstates++];
			struct tk_filter_error fe;
			struct tk_field_desc *all;
			int ret;

			st->ev = &t->processes[i].events[j];
			t->processes[i].events[j].user = st;
			st->shown = report_selected(r->sel.patterns, r->sel.npatterns,
						    st->ev->full_name);
			st->stack = tk_event_is_stack(st->ev->provider, st->ev->name);
			st->ftrace = ftrace_view_owns(st->ev);
			if (!r->filter || !st->shown)
				continue;
			all = report_common_fields(st->ev->fields, st->ev->nfields);
			if (!all)
				return -ENOMEM;
			if (st->ev->nfields + REPORT_COMMON_FIELDS > r->fvalues_cap)
				r->fvalues_cap = st->ev->nfields + REPORT_COMMON_FIELDS;
			ret = tk_filter_compile(r->filter, all,
						st->ev->nfields + REPORT_COMMON_FIELDS,
						&st->filter, &fe);
			free(all);
			if (ret < 0) {
				st->shown = false;
				filter_check_note(kf, st->ev->full_name, &fe);
			} else {
				filter_check_note(kf, st->ev->full_name, NULL);
			}
		}
	}
	r->fvalues = calloc(r->fvalues_cap + 1, sizeof(*r->fvalues));
	if (!r->fvalues)
		return -ENOMEM;
	if (r->filter && filter_check_result(kf, r->filter, msg, sizeof(msg)) < 0) {
		tk_error("%s", msg);
		return -EINVAL;
	}
	return 0;
}

/* Each --events pattern should name some event of the trace: one that
 * names none is said; if none names any, nothing can be shown (-1). */
static int check_patterns(const struct report *r)
{
	char none[256] = "";
	unsigned nnone = 0;

	for (unsigned i = 0; i < r->sel.npatterns; i++) {
		bool found = r->kernel &&
			     report_kernel_matches(r->kernel, r->sel.patterns[i]);
		size_t n = strlen(none);

		for (unsigned j = 0; j < r->nstates && !found; j++)
			found = tk_pattern_match(r->sel.patterns[i], r->states[j].ev->full_name);
		if (found)
			continue;
		snprintf(none + n, sizeof(none) - n, "%s'%s'", n ? ", " : "",
			 r->sel.patterns[i]);
		nnone++;
	}
	if (!nnone)
		return 0;
	if (nnone < r->sel.npatterns) {
		tk_warn("--events %s match%s no event of the trace", none,
			nnone == 1 ? "es" : "");
		return 0;
	}
	tk_error("--events %s match%s no event of the trace", none,
		 nnone == 1 ? "es" : "");
	return -1;
}

static struct event_state *state_of(const struct tk_event_info *ev)
{
	return ev->user;
}

/* Overwrite mode: each stream kept what fitted in its own buffer, so
 * they begin at different times.  Where a stream lost older events, what
 * comes before its first one is incomplete: the report starts at the
 * latest such first event, unless --no-cut.  Called with every source at
 * its first event. */
static void find_cut(struct report *r)
{
	r->cut_source = -1;
	if (strcmp(r->trace.mode, "overwrite"))
		return;
	for (unsigned i = 0; i < r->merge.heap_len; i++) {
		unsigned src = r->merge.heap[i].src, n = r->merge.nreaders;
		bool lost = src < n ? r->merge.readers[src].stream->lost_overwritten > 0
				    : report_kernel_overwritten(r->kernel, src - n);
		uint64_t ts = r->merge.heap[i].ts;

		if (lost && (r->cut_source < 0 || ts > r->cut_ts)) {
			r->cut_ts = ts;
			r->cut_source = (int)src;
		}
	}
	if (r->cut_source >= 0 && r->cut_ts <= r->first_ts)
		r->cut_source = -1; /* nothing before it */
}

/* "# overwrite mode: ..." in the header. */
static void print_cut(const struct report *r)
{
	char when[32];
	unsigned src = (unsigned)r->cut_source;
	struct tk_obuf o;

	tk_obuf_init(&o, when, sizeof(when) - 1);
	report_line_time(&o, &r->trace.clock, r->ts == TS_DELTA ? TS_START : r->ts,
			 r->cut_ts);
	when[o.n] = '\0';
	if (src < r->merge.nreaders)
		printf("# overwrite mode: every stream is complete from %s, where stream %s-%u begins",
		       when, r->merge.readers[src].stream->comm,
		       r->merge.readers[src].stream->tid);
	else
		printf("# overwrite mode: every stream is complete from %s, where kernel cpu %u begins",
		       when, report_kernel_cpu(r->kernel, src - r->merge.nreaders));
	printf(r->no_cut ? " (--no-cut: older events shown)\n"
			 : "; older events are left out (--no-cut shows them)\n");
}

static void print_header(const struct report *r)
{
	const struct tk_trace *t = &r->trace;
	char start[64];
	time_t secs = (time_t)(t->clock.real_start / 1000000000u);
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(start, sizeof(start), "%Y-%m-%d %H:%M:%S UTC", &tm);
	printf("# tracekit trace '%s'\n", t->dir);
	if (t->incomplete)
		printf("# incomplete: the recorder stopped before finishing it; what it wrote until then is here, with the counts of its last update\n");
	else if (t->recovered)
		printf("# recovered: the recorder stopped before finishing it; 'tracekit recover' cut its files after their last whole packet and counted them\n");
	printf("# host %s, started %s, clock %s at %" PRIu64 " Hz, %s mode\n",
	       t->host, start, t->clock.tsc ? "tsc" : "mono", t->clock.freq,
	       t->mode[0] ? t->mode : "discard");
	for (unsigned i = 0; i < t->nprocesses; i++) {
		char exe[4 * 4096 + 1]; /* the program's path: any byte */

		printf("# process %u (%s) %s, %u events defined",
		       t->processes[i].pid, t->processes[i].comm,
		       tk_visible(exe, sizeof(exe), t->processes[i].exe),
		       t->processes[i].nevents);
		if (t->processes[i].lost_nobuf)
			printf(", %" PRIu64 " lost with no buffer",
			       t->processes[i].lost_nobuf);
		putchar('\n');
	}
	for (unsigned i = 0; i < t->nstreams; i++) {
		const struct tk_trace_stream *s = &t->streams[i];

		printf("# stream %s-%u: %" PRIu64 " events, %" PRIu64 " lost",
		       s->comm, s->tid, s->events, tk_stream_lost(s));
		if (tk_stream_lost(s))
			printf(" (%" PRIu64 " no space, %" PRIu64
			       " in signal handlers, %" PRIu64 " too large, %" PRIu64
			       " overwritten",
			       s->lost_full, s->lost_nested, s->lost_big,
			       s->lost_overwritten);
		if (s->lost_later)
			printf(", %" PRIu64 " after the last update", s->lost_later);
		if (tk_stream_lost(s))
			putchar(')');
		printf("\n");
	}
	if (r->kernel)
		report_kernel_header(r->kernel);
	if (r->cut_source >= 0)
		print_cut(r);
	printf("#\n");
}

static void prepare_print(struct tk_event_info *ev)
{
	char why[200];

	if (tk_print_prepare(ev->fmt, ev->args, ev->fields, ev->nfields,
			     &ev->print, why, sizeof(why)) < 0) {
		tk_warn("event '%s': %s; printing its fields", ev->full_name, why);
		ev->print_failed = true;
		tk_print_prepare("", "", ev->fields, ev->nfields, &ev->print, why,
				 sizeof(why));
	}
}

/* The start of a line: "%16s [%03u] %s: " (comm-tid, cpu, time). */
static void format_prefix(const struct report *r, const struct tk_stream_reader *rd,
			  struct tk_obuf *o)
{
	report_line_who(o, rd->stream->comm, strlen(rd->stream->comm), rd->stream->tid);
	report_line_cpu(o, rd->cpu);
	if (r->kernel) /* blank latency columns: aligned with the kernel's lines */
		tk_opad(o, ' ', 6);
	report_line_time(o, &r->trace.clock, r->ts, rd->ts);
	tk_oput(o, ": ", 2);
}

/* One line as trace-cmd prints it: "%16s [%03u] %s: %s: %s\n". */
static void print_event(struct report *r, const struct tk_stream_reader *rd,
			struct event_state *st)
{
	struct tk_event_info *ev = (struct tk_event_info *)st->ev;
	char line[8192];
	struct tk_obuf o;

	if (!ev->print && !ev->print_failed)
		prepare_print(ev);
	report_line_start(&o, line, sizeof(line));
	format_prefix(r, rd, &o);
	tk_oputs(&o, ev->full_name);
	tk_oput(&o, ": ", 2);
	if (ev->print)
		tk_print_append(ev->print, rd->values, &o);
	report_line_end(&o);
}

/* -F on a user event: its fields, then the common ones. */
static bool user_filter_match(struct report *r, const struct tk_stream_reader *rd,
			      const struct event_state *st)
{
	unsigned n = st->ev->nfields;

	memcpy(r->fvalues, rd->values, n * sizeof(*r->fvalues));
	report_common_values(r->fvalues + n, rd->stream->tid, rd->stream->comm,
			     rd->cpu);
	return tk_filter_match(st->filter, r->fvalues);
}

/* Whether the user event @rd is on is selected; a stack goes with the
 * event before it in its stream. */
static bool user_selected(struct report *r, struct tk_stream_reader *rd)
{
	struct event_state *st = state_of(rd->event);
	unsigned i = (unsigned)(rd - r->merge.readers);
	bool keep = st && st->shown && r->who_ok[i] &&
		    (!st->filter || user_filter_match(r, rd, st));

	if (st && st->stack)
		keep = keep || r->kept[i];
	else
		r->kept[i] = keep;
	return keep;
}

/* report_lost_before()'s: a loss in the time and streams shown, said
 * (and counted) at its place; in the summary modes only counted. */
static void say_loss(void *arg, const struct report_loss *l)
{
	struct report *r = arg;
	const struct tk_trace_stream *s = &r->trace.streams[l->src];

	if (!r->lost_ok[l->src] ||
	    (r->cut_source >= 0 && !r->no_cut && l->before && l->before < r->cut_ts) ||
	    ((r->sel.from.set || r->sel.to.set) &&
	     !report_select_meets_window(&r->sel, &r->trace.clock, r->first_ts,
					 l->after, l->before)))
		return;
	r->nlost = l->count > UINT64_MAX - r->nlost ? UINT64_MAX : r->nlost + l->count;
	if (!r->count_only && !r->profile)
		report_line_dropped(s->comm, "-", s->tid,
				    l->count > INT64_MAX ? INT64_MAX : (int64_t)l->count);
}

/* Whether some event of stream @i's process is selected. */
static bool stream_has_shown(const struct report *r, unsigned i)
{
	const struct tk_trace_process *p =
		tk_trace_process_of(&r->trace, r->trace.streams[i].class_id);

	for (unsigned j = 0; p && j < p->nevents; j++)
		if (state_of(&p->events[j])->shown)
			return true;
	return false;
}

/* The summary modes print no event: on stderr, what they do not count
 * (what report marks in its listing and header). */
static void print_lost_count(uint64_t n, const char *mode)
{
	if (n)
		tk_warn("%" PRIu64 " user events were lost in the streams and time counted: the counts are short of them (without %s, report marks where)",
			n, mode);
}

static void print_left_out(const struct report *r)
{
	char when[32];
	struct tk_obuf o;

	print_lost_count(r->nlost, r->count_only ? "--count" : "--profile");
	if (!r->ncut)
		return;
	tk_obuf_init(&o, when, sizeof(when) - 1);
	report_line_time(&o, &r->trace.clock, r->ts == TS_DELTA ? TS_START : r->ts,
			 r->cut_ts);
	when[o.n] = '\0';
	tk_warn("overwrite mode: %" PRIu64 " events from before %s, where every stream is complete, are left out (--no-cut counts them)",
		r->ncut, when);
}

static void show_ftrace(struct report *r, struct tk_stream_reader *rd)
{
	char prefix[128];
	struct tk_obuf o;

	tk_obuf_init(&o, prefix, sizeof(prefix));
	format_prefix(r, rd, &o);
	ftrace_view_event(r->ftrace, rd, prefix, o.n);
}

static int count_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct report_count *)a)->name,
		      ((const struct report_count *)b)->name);
}

/* Counts per event name (several processes may define one), by name;
 * then the kernel's lost events, if any. */
static void print_counts(const struct report *r)
{
	struct report_count *c = calloc(r->nstates + 1, sizeof(*c));
	unsigned n = r->nstates;
	uint64_t total = 0;

	if (!c)
		return;
	for (unsigned i = 0; i < r->nstates; i++) {
		c[i].name = r->states[i].ev->full_name;
		c[i].count = r->states[i].count;
	}
	if (r->kernel && report_kernel_counts(r->kernel, &c, &n) < 0) {
		free(c);
		return;
	}
	qsort(c, n, sizeof(*c), count_name_cmp);
	for (unsigned i = 0; i < n; i++) {
		uint64_t sum = c[i].count;

		while (i + 1 < n && !strcmp(c[i + 1].name, c[i].name))
			sum += c[++i].count;
		if (sum)
			printf("%12" PRIu64 " %s\n", sum, c[i].name);
		total += sum;
	}
	printf("%12" PRIu64 " total\n", total);
	if (r->kernel && report_kernel_lost(r->kernel))
		printf("%12" PRIu64 " kernel events lost\n",
		       report_kernel_lost(r->kernel));
	free(c);
}

/* The next event of the merge (earlier sources that fail are said and
 * end there): 1 with *ev, 0 at the end. */
static int next_event(struct report *r, struct tk_merge_event *ev)
{
	char err[512];
	int ret;

	while ((ret = tk_merge_next(&r->merge, ev, err, sizeof(err))) < 0) {
		/* that stream or CPU ends here; the others go on */
		tk_error("%s", ret == -ENOMEM ? "out of memory" : err);
		r->error = true;
	}
	return ret;
}

/* --stacks: the folded stacks of the whole trace, on standard output. */
static int report_stacks(struct report *r)
{
	struct tk_export_opts o = { .dir = r->dir, .output = "-", .stacks = true };
	char *err = NULL, *warn = NULL, why[512];
	int ret;

	if (r->sel.what[0] || r->count_only || r->profile) {
		tk_error("--stacks counts the stacks of the whole trace: it goes without %s",
			 r->sel.what[0] ? r->sel.what : r->count_only ? "--count" : "--profile");
		return TK_EXIT_USAGE;
	}
	ret = tk_export_run(tk_export_find("folded"), &o, &err, &warn);
	if (ret < 0)
		tk_error("%s", err ? err : "cannot read the stacks");
	tk_warn_lines(warn);
	if (ret >= 0 && tk_trace_read_index(r->dir, &r->trace, why, sizeof(why)) == 0) {
		uint64_t lost = 0;

		for (unsigned i = 0; i < r->trace.nstreams; i++)
			lost += tk_stream_lost(&r->trace.streams[i]);
		print_lost_count(lost, "--stacks");
		tk_trace_free(&r->trace);
	}
	free(err);
	free(warn);
	return ret < 0 ? TK_EXIT_FAILURE : 0;
}

int cmd_report(int argc, char **argv)
{
	static char outbuf[1 << 20];
	struct report r;
	struct report_kernel_opts ko;
	struct filter_check kf;
	struct tk_merge_event ev;
	char err[512];
	bool more;
	int ret;

	memset(&r, 0, sizeof(r));
	memset(&ko, 0, sizeof(ko));
	memset(&kf, 0, sizeof(kf));
	if (parse_options(&r, argc, argv) < 0)
		return TK_EXIT_USAGE;
	if (r.stacks) {
		ret = report_stacks(&r);
		report_select_free(&r.sel);
		return ret;
	}
	if (tk_trace_read_index(r.dir, &r.trace, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return TK_EXIT_FAILURE;
	}
	if (r.trace.incomplete)
		tk_warn("'%s' is incomplete: its recorder stopped before finishing it (killed?); reading what it wrote",
			r.dir);
	ko.filter = r.filter;
	ko.patterns = r.sel.patterns;
	ko.npatterns = r.sel.npatterns;
	ko.ts = r.ts;
	ko.count_only = r.count_only;
	ko.tep_only = r.tep_only;
	ko.clock = &r.trace.clock;
	ko.dir = r.dir;
	ko.overwrite = !strcmp(r.trace.mode, "overwrite");
	r.sel.who.trace = &r.trace;
	ko.who = &r.sel.who;
	if (report_kernel_open(r.dir, &ko, &kf, &r.kernel) < 0) {
		report_select_free(&r.sel);
		tk_trace_free(&r.trace);
		return TK_EXIT_FAILURE;
	}
	if (r.kernel) {
		char left[512];

		report_kernel_left(r.kernel, left, sizeof(left));
		if (left[0])
			tk_warn("%s", left);
	}
	/* errors from here on leave through out:, which frees all */
	ret = prepare_events(&r, &kf);
	if (ret == -ENOMEM)
		tk_error("out of memory");
	if (ret < 0 || check_patterns(&r) < 0) {
		r.error = true;
		goto out;
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	if (tk_merge_open(&r.merge, &r.trace,
			  r.kernel ? report_kernel_handle(r.kernel) : NULL) < 0 ||
	    !(r.who_ok = calloc(r.trace.nstreams + 1, sizeof(*r.who_ok))) ||
	    !(r.kept = calloc(r.trace.nstreams + 1, sizeof(*r.kept))) ||
	    !(r.lost_ok = calloc(r.trace.nstreams + 1, sizeof(*r.lost_ok))) ||
	    report_lost_open(&r.lost, &r.merge) < 0) {
		tk_error("out of memory");
		r.error = true;
		goto out;
	}
	for (unsigned i = 0; i < r.trace.nstreams; i++) {
		r.who_ok[i] = report_who_selects(&r.sel.who, r.trace.streams[i].pid,
						 r.trace.streams[i].tid,
						 r.trace.streams[i].comm);
		r.lost_ok[i] = r.who_ok[i] && stream_has_shown(&r, i);
	}
	/* the first event: every source is now at its own first one */
	more = next_event(&r, &ev) > 0;
	r.first_ts = more ? ev.ts : 0;
	report_time_origin(r.first_ts);
	find_cut(&r);
	if (!r.no_header && !r.count_only && !r.profile)
		print_header(&r);
	r.ftrace = ftrace_view_open(&r.trace, r.profile);
	for (; more; more = next_event(&r, &ev) > 0) {
		unsigned kcpu = ev.kcpu ? (unsigned)(ev.kcpu -
			report_kernel_handle(r.kernel)->cpus) : 0;
		struct tk_stream_reader *rd;
		struct event_state *st;

		r.nread++;
		report_lost_before(&r.lost, &ev, say_loss, &r);
		if ((r.sel.from.set || r.sel.to.set) &&
		    !report_select_in_window(&r.sel, &r.trace.clock, r.first_ts,
					     ev.ts)) {
			if (ev.kcpu && !r.profile)
				report_kernel_skip(r.kernel, kcpu);
			continue;
		}
		if (r.cut_source >= 0 && !r.no_cut && ev.ts < r.cut_ts) {
			/* counted, for the summary modes to say */
			if (ev.kcpu)
				r.ncut += !r.profile && report_kernel_cut(r.kernel, kcpu);
			else if (user_selected(&r, ev.user))
				r.ncut += !r.profile ||
					  state_of(ev.user->event)->ftrace;
			continue;
		}
		if (ev.kcpu) {
			if (!r.profile)
				r.nshown += report_kernel_emit(r.kernel, kcpu);
			continue;
		}
		rd = ev.user;
		st = state_of(rd->event);
		if (!user_selected(&r, rd))
			continue;
		if (r.count_only)
			st->count++;
		else if (r.ftrace && st->ftrace)
			show_ftrace(&r, rd);
		else if (r.profile)
			continue;
		else
			print_event(&r, rd, st);
		r.nshown++;
	}
	report_lost_before(&r.lost, NULL, say_loss, &r);
	if (r.count_only)
		print_counts(&r);
	ftrace_view_close(r.ftrace);
	fflush(stdout);
	/* not where nothing was selected: that is said below */
	if ((r.count_only || r.profile) &&
	    (r.nshown || !(r.sel.what[0] || r.profile)))
		print_left_out(&r);
	if (r.tep_stats && r.kernel)
		report_kernel_tep_stats(r.kernel);
out:
	tk_merge_close(&r.merge);
	for (unsigned i = 0; i < r.nstates; i++)
		tk_filter_free(r.states[i].filter);
	free(r.states);
	free(r.who_ok);
	free(r.kept);
	free(r.lost_ok);
	report_lost_close(&r.lost);
	free(r.fvalues);
	if (!r.nshown && !r.error && (r.sel.what[0] || r.profile)) {
		/* said where nothing was selected: not for an empty trace */
		if (r.profile && !r.sel.what[0])
			tk_error("no function tracer event in the trace (%" PRIu64
				 " events read)", r.nread);
		else
			tk_error("no %sevent matched %s (%" PRIu64 " events read)",
				 r.profile ? "function tracer " : "", r.sel.what,
				 r.nread);
		r.error = true;
	}
	report_kernel_close(r.kernel);
	report_select_free(&r.sel);
	tk_trace_free(&r.trace);
	return r.error ? TK_EXIT_FAILURE : 0;
}
