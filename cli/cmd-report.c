/* SPDX-License-Identifier: MIT */
/*
 * cmd-report.c - tracekit report: every event of a trace in time order.
 *
 *   tracekit report [DIR] [-F FILTER] [--events PATTERN]... [--ts mono|raw|real]
 *                   [--no-header] [--count]
 *
 * One line per event, as trace-cmd prints them:
 *
 *       worker-4242  [001]  5123.456789: app:request: id=1 path=/index
 *
 * after a header with the clock, the processes and each stream's counts of
 * recorded and lost events.  Sources (user streams, then the kernel's
 * CPUs: report-kernel.c) are merged by timestamp (format/merge.h).  Each event
 * is printed by its source's printer; report.h shows the line layout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "common/filter.h"
#include "common/pattern.h"
#include "format/printfmt.h"
#include "report-graph.h"
#include "report.h"
#include "format/merge.h"
#include "format/stream-read.h"
#include "format/trace.h"

struct report {
	const char *dir;
	const char *filter;
	const char **patterns;
	unsigned npatterns;
	enum ts_mode ts;
	bool no_header;
	bool count_only;
	bool profile;
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
		"  -F FILTER         only events matching FILTER (ftrace syntax); events\n"
		"                    without the fields it names are left out\n"
		"  --events PATTERN  only events matching PATTERN (repeatable): app:*,\n"
		"                    sched:sched_switch, syscalls (a whole system), ...\n"
		"  --ts MODE         timestamps: mono (default, seconds of CLOCK_MONOTONIC),\n"
		"                    real (seconds since the epoch) or raw (clock ticks)\n"
		"  --no-header       events only\n"
		"  --count           decode every event but print only how many there\n"
		"                    are of each (checks the whole trace quickly)\n"
		"  --profile         function tracer: per function, calls, total, self,\n"
		"                    average and maximum time, sorted by total\n"
		"  --tep-print       kernel events' field text all from libtraceevent\n"
		"                    (slower; to check the fast printer against it)\n"
		"  --tep-stats       after the events, on stderr: how many of each kernel\n"
		"                    event libtraceevent printed (not the fast printer)\n");
}

static int parse_options(struct report *r, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "events", required_argument, NULL, 'E' },
		{ "ts", required_argument, NULL, 'T' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "count", no_argument, NULL, 'C' },
		{ "profile", no_argument, NULL, 'Q' },
		{ "tep-print", no_argument, NULL, 'P' },
		{ "tep-stats", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	r->dir = TK_DEFAULT_OUTPUT;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "F:i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'F':
			r->filter = optarg;
			break;
		case 'i':
			r->dir = optarg;
			break;
		case 'E':
			r->patterns = realloc(r->patterns,
					      (r->npatterns + 1) * sizeof(char *));
			r->patterns[r->npatterns++] = optarg;
			break;
		case 'T':
			if (!strcmp(optarg, "mono"))
				r->ts = TS_MONO;
			else if (!strcmp(optarg, "raw"))
				r->ts = TS_RAW;
			else if (!strcmp(optarg, "real"))
				r->ts = TS_REAL;
			else {
				tk_error("--ts '%s': use mono, real or raw", optarg);
				return -1;
			}
			break;
		case 'H':
			r->no_header = true;
			break;
		case 'C':
			r->count_only = true;
			break;
		case 'P':
			r->tep_only = true;
			break;
		case 'S':
			r->tep_stats = true;
			break;
		case 'Q':
			r->profile = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			tk_option_error("report", argv, "F:i:h");
			return -1;
		}
	}
	if (optind < argc)
		r->dir = argv[optind++];
	if (optind < argc) {
		tk_error("unexpected argument '%s'", argv[optind]);
		return -1;
	}
	return 0;
}

bool report_selected(const char *const *patterns, unsigned n, const char *name)
{
	if (!n)
		return true;
	for (unsigned i = 0; i < n; i++)
		if (tk_pattern_match(patterns[i], name))
			return true;
	return false;
}

/* Decide for each event whether it is shown and with which filter.  A
 * filter that compiles for no event at all is an error, reported with the
 * first event's reason. */
static int prepare_events(struct report *r, const struct report_filter_result *kf)
{
	struct tk_trace *t = &r->trace;
	struct tk_filter_error first = { 0, "" };
	bool any_compiled = kf->any_compiled;
	const char *first_event = NULL;

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

			st->ev = &t->processes[i].events[j];
			t->processes[i].events[j].user = st;
			st->shown = report_selected(r->patterns, r->npatterns, st->ev->full_name);
			st->ftrace = ftrace_view_owns(st->ev);
			if (!r->filter || !st->shown)
				continue;
			if (tk_filter_compile(r->filter, st->ev->fields,
					      st->ev->nfields, &st->filter, &fe) < 0) {
				st->shown = false;
				if (!first_event) {
					first = fe;
					first_event = st->ev->full_name;
				}
			} else {
				any_compiled = true;
			}
		}
	}
	if (!first_event && kf->first_event) {
		first_event = kf->first_event;
		first.column = kf->column;
		snprintf(first.message, sizeof(first.message), "%s", kf->message);
	}
	if (r->filter && !any_compiled && first_event) {
		tk_error("bad filter '%s' at column %d: %s", r->filter, first.column,
			 first.message);
		return -EINVAL;
	}
	return 0;
}

static struct event_state *state_of(const struct tk_event_info *ev)
{
	return ev->user;
}

size_t report_put_uint(char *buf, uint64_t v, unsigned width, char pad)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char tmp[24];
	size_t n = sizeof(tmp), out = 0, len;

	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		n -= 2;
		memcpy(tmp + n, pairs + 2 * r, 2);
	}
	if (v >= 10) {
		n -= 2;
		memcpy(tmp + n, pairs + 2 * v, 2);
	} else {
		tmp[--n] = (char)('0' + v);
	}
	len = sizeof(tmp) - n;
	while (len + out < width)
		buf[out++] = pad;
	memcpy(buf + out, tmp + n, len);
	return out + len;
}

size_t report_put_time(const struct tk_trace_clock *c, enum ts_mode mode,
		       uint64_t ts, char *buf)
{
	uint64_t ns;
	size_t n;

	if (mode == TS_RAW)
		return report_put_uint(buf, ts, 0, ' ');
	static uint64_t last_secs = ~0ull;
	static char secs_text[24];
	static size_t secs_len;

	ns = mode == TS_REAL ? tk_clock_to_real(c, ts) : tk_clock_to_mono(c, ts);
	/* the seconds change seldom from one line to the next */
	if (ns / 1000000000u != last_secs) {
		last_secs = ns / 1000000000u;
		secs_len = report_put_uint(secs_text, last_secs, 0, ' ');
	}
	memcpy(buf, secs_text, secs_len);
	n = secs_len;
	buf[n++] = '.';
	return n + report_put_uint(buf + n, ns % 1000000000u / 1000u, 6, '0');
}

size_t report_put_prefix(char *buf, const char *comm, size_t comm_len,
			 uint32_t tid, uint32_t cpu)
{
	char who[64];
	size_t len, n = 0;

	if (comm_len > 40)
		comm_len = 40;
	memcpy(who, comm, comm_len);
	len = comm_len;
	who[len++] = '-';
	len += report_put_uint(who + len, tid, 0, ' ');
	while (n + len < 16)
		buf[n++] = ' ';
	memcpy(buf + n, who, len);
	n += len;
	return n + report_put_prefix_cpu(buf + n, cpu);
}

size_t report_put_prefix_cpu(char *buf, uint32_t cpu)
{
	size_t n;

	memcpy(buf, " [", 2);
	n = 2 + report_put_uint(buf + 2, cpu, 3, '0');
	memcpy(buf + n, "] ", 2);
	return n + 2;
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
	printf("# host %s, started %s, clock %s at %" PRIu64 " Hz, %s mode\n",
	       t->host, start, t->clock.tsc ? "tsc" : "mono", t->clock.freq,
	       t->mode[0] ? t->mode : "discard");
	for (unsigned i = 0; i < t->nprocesses; i++) {
		printf("# process %u (%s) %s, %u events defined",
		       t->processes[i].pid, t->processes[i].comm,
		       t->processes[i].exe, t->processes[i].nevents);
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
			       " overwritten)",
			       s->lost_full, s->lost_nested, s->lost_big,
			       s->lost_overwritten);
		printf("\n");
	}
	if (r->kernel)
		report_kernel_header(r->kernel);
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
static size_t format_prefix(const struct report *r,
			    const struct tk_stream_reader *rd, char *line)
{
	size_t n = report_put_prefix(line, rd->stream->comm, strlen(rd->stream->comm),
				     rd->stream->tid, rd->cpu);

	if (r->kernel) {
		/* blank latency columns: aligned with the kernel's lines */
		memset(line + n, ' ', 6);
		n += 6;
	}
	n += report_put_time(&r->trace.clock, r->ts, rd->ts, line + n);
	line[n++] = ':';
	line[n++] = ' ';
	return n;
}

/* One line as trace-cmd prints it: "%16s [%03u] %s: %s: %s\n". */
static void print_event(struct report *r, const struct tk_stream_reader *rd,
			struct event_state *st)
{
	struct tk_event_info *ev = (struct tk_event_info *)st->ev;
	char line[8192];
	size_t n, len;

	if (!ev->print && !ev->print_failed)
		prepare_print(ev);
	n = format_prefix(r, rd, line);
	len = strlen(ev->full_name);
	memcpy(line + n, ev->full_name, len);
	n += len;
	line[n++] = ':';
	line[n++] = ' ';
	if (ev->print) {
		len = tk_print_format(ev->print, rd->values, line + n,
				      sizeof(line) - n - 1);
		n += len < sizeof(line) - n - 1 ? len : sizeof(line) - n - 2;
	}
	line[n++] = '\n';
	fwrite_unlocked(line, 1, n, stdout);
}

static void show_ftrace(struct report *r, struct tk_stream_reader *rd)
{
	char prefix[128];

	ftrace_view_event(r->ftrace, rd, prefix, format_prefix(r, rd, prefix));
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

int cmd_report(int argc, char **argv)
{
	static char outbuf[1 << 20];
	struct report r;
	struct report_kernel_opts ko;
	struct report_filter_result kf;
	char err[512];

	memset(&r, 0, sizeof(r));
	memset(&ko, 0, sizeof(ko));
	memset(&kf, 0, sizeof(kf));
	if (parse_options(&r, argc, argv) < 0)
		return TK_EXIT_USAGE;
	if (tk_trace_read_index(r.dir, &r.trace, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return TK_EXIT_FAILURE;
	}
	ko.filter = r.filter;
	ko.patterns = r.patterns;
	ko.npatterns = r.npatterns;
	ko.ts = r.ts;
	ko.count_only = r.count_only;
	ko.tep_only = r.tep_only;
	ko.clock = &r.trace.clock;
	if (report_kernel_open(r.dir, &ko, &kf, &r.kernel) < 0) {
		tk_trace_free(&r.trace);
		return TK_EXIT_FAILURE;
	}
	if (prepare_events(&r, &kf) < 0)
		return TK_EXIT_USAGE;
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	if (!r.no_header && !r.count_only && !r.profile)
		print_header(&r);
	r.ftrace = ftrace_view_open(&r.trace, r.profile);
	if (tk_merge_open(&r.merge, &r.trace,
			  r.kernel ? report_kernel_handle(r.kernel) : NULL) < 0) {
		tk_error("out of memory");
		return TK_EXIT_FAILURE;
	}
	for (;;) {
		struct tk_merge_event ev;
		struct tk_stream_reader *rd;
		struct event_state *st;
		int ret = tk_merge_next(&r.merge, &ev, err, sizeof(err));

		if (!ret)
			break;
		if (ret < 0) {
			/* that stream or CPU ends here; the others go on */
			tk_error("%s", ret == -ENOMEM ? "out of memory" : err);
			r.error = true;
			continue;
		}
		if (ev.kcpu) {
			if (!r.profile)
				report_kernel_emit(r.kernel, (unsigned)(ev.kcpu -
					report_kernel_handle(r.kernel)->cpus));
			continue;
		}
		rd = ev.user;
		st = state_of(rd->event);
		if (st && st->shown &&
		    (!st->filter || tk_filter_match(st->filter, rd->values))) {
			if (r.count_only)
				st->count++;
			else if (r.ftrace && st->ftrace)
				show_ftrace(&r, rd);
			else if (!r.profile)
				print_event(&r, rd, st);
		}
	}
	if (r.count_only)
		print_counts(&r);
	ftrace_view_close(r.ftrace);
	fflush(stdout);
	if (r.tep_stats && r.kernel)
		report_kernel_tep_stats(r.kernel);
	tk_merge_close(&r.merge);
	for (unsigned i = 0; i < r.nstates; i++)
		tk_filter_free(r.states[i].filter);
	free(r.states);
	free(r.patterns);
	report_kernel_close(r.kernel);
	tk_trace_free(&r.trace);
	return r.error ? TK_EXIT_FAILURE : 0;
}
