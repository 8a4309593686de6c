/* SPDX-License-Identifier: MIT */
/*
 * report-kernel.c - the kernel's events in `tracekit report` (report.h).
 *
 * Each CPU's pages are one source in report's merge.  Per event type we
 * keep, once: its "system:name", whether --events selects it, its -F
 * filter compiled against its fields, and its field printer
 * (kernel-print.c, which formats the common cases itself and leaves the
 * rest to libtraceevent).  A line costs no allocation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <event-parse.h>
#include "cli.h"
#include "common/clock.h"
#include "common/filter.h"
#include "format/event-info.h"
#include "format/kernel-fields.h"
#include "format/kernel-print.h"
#include "format/kernel-read.h"
#include "kernel/kernel.h"
#include "format/probes.h"
#include "common/pattern.h"
#include "report.h"
#include "format/symbols.h"
#include "format/ustack-check.h"

#define COMM_CACHE 4096 /* pids whose comm is cached, a power of two */

struct kevent {
	struct tep_event *ev;
	char *name; /* "system:event" */
	size_t name_len;
	bool shown;
	bool stack; /* shown with the event it follows on its CPU */
	int caller_off; /* a probe's __caller field (probes.h), or -1 */
	struct tk_filter *filter;
	struct tk_kfields kf; /* the record's fields */
	struct tk_field_desc *fields; /* kf's, then common_comm, common_cpu */
	unsigned nfields;
	struct tk_kprint *print;
	uint64_t count;
};

/* A pid's "COMM-PID" column, made once. */
struct comm_slot {
	int pid;
	bool set;
	unsigned len;
	char who[64];
};

struct report_kernel {
	struct tk_kernel k;
	struct report_kernel_opts o;
	struct kevent *events; /* by id */
	unsigned nids;
	struct kevent unknown;
	struct tk_value *values;
	unsigned values_cap;
	struct comm_slot comms[COMM_CACHE];
	unsigned comm_gen; /* env.comm_gen when comms[] was right */
	struct tk_kprint_env env;
	struct trace_seq seq;
	bool *kept;         /* per CPU: its last event (no stack) shown */
	uint64_t *caller;   /* per CPU: that event's __caller, or 0 */
	uint64_t lost_seen; /* lost events the pages told of */
	bool unknown_lost;  /* a page said "lost" without a count */
};

/* The event's fields as the filter knows them: the record's
 * (kernel-fields.h), then common_comm and common_cpu, which it lacks
 * (report_common_fields(); common_pid it has). */
static int filter_fields(struct kevent *e)
{
	struct tk_field_desc *common = report_common_fields(NULL, 0);
	int ret = -ENOMEM;

	if (!common || tk_kfields_init(&e->kf, e->ev) < 0)
		goto out;
	e->fields = calloc(e->kf.nfields + REPORT_COMMON_FIELDS, sizeof(*e->fields));
	if (!e->fields)
		goto out;
	memcpy(e->fields, e->kf.fields, e->kf.nfields * sizeof(*e->fields));
	e->nfields = e->kf.nfields;
	for (unsigned i = 0; i < REPORT_COMMON_FIELDS; i++)
		if (strcmp(common[i].name, "common_pid"))
			e->fields[e->nfields++] = common[i];
	ret = 0;
out:
	free(common);
	return ret;
}

/* Field values of a record for the filter; false if the record is too
 * short for them. */
static bool record_values(struct report_kernel *rk, struct kevent *e,
			  const struct tk_kernel_cpu *c)
{
	struct tk_value *v = rk->values + e->kf.nfields;
	const char *comm;

	if (!tk_kfields_values(&e->kf, c->data, c->data_size, rk->values))
		return false;
	/* common_comm, common_cpu: in filter_fields' order */
	comm = tep_data_comm_from_pid(rk->k.tep, tk_kernel_pid(&rk->k, c->data));
	v[0].str = comm;
	v[0].len = (uint32_t)strlen(comm);
	v[1].u = c->cpu;
	return true;
}

static int prepare_event(struct report_kernel *rk, struct kevent *e,
			 struct filter_check *fr)
{
	struct tep_format_field *caller;
	struct tk_filter_error fe;

	if (asprintf(&e->name, "%s:%s", e->ev->system, e->ev->name) < 0)
		return -ENOMEM;
	e->name_len = strlen(e->name);
	e->shown = report_selected(rk->o.patterns, rk->o.npatterns, e->name);
	e->stack = tk_event_is_stack(e->ev->system, e->ev->name);
	caller = tep_find_field(e->ev, TK_PROBE_CALLER_FIELD);
	e->caller_off = caller && caller->size == 8 && caller->offset >= 0 ? caller->offset : -1;
	e->print = tk_kprint_prepare(&rk->env, e->ev, rk->o.tep_only);
	if (!rk->o.filter || !e->shown)
		return 0;
	if (filter_fields(e) < 0)
		return -ENOMEM;
	if (e->nfields > rk->values_cap) {
		struct tk_value *v = realloc(rk->values, e->nfields * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rk->values = v;
		rk->values_cap = e->nfields;
	}
	if (tk_filter_compile(rk->o.filter, e->fields, e->nfields, &e->filter,
			      &fe) < 0) {
		e->shown = false;
		filter_check_note(fr, e->name, &fe);
	} else {
		filter_check_note(fr, e->name, NULL);
	}
	return 0;
}

static int prepare_events(struct report_kernel *rk, struct filter_check *fr)
{
	struct tep_event **evs = tep_list_events(rk->k.tep, TEP_EVENT_SORT_ID);
	int max = -1;

	for (struct tep_event **e = evs; e && *e; e++)
		if ((*e)->id > max && (*e)->id < 65536)
			max = (*e)->id;
	rk->nids = (unsigned)(max + 1);
	rk->events = calloc(rk->nids + 1, sizeof(*rk->events));
	if (!rk->events)
		return -ENOMEM;
	for (struct tep_event **e = evs; e && *e; e++) {
		if ((*e)->id < 0 || (*e)->id >= 65536)
			continue;
		rk->events[(*e)->id].ev = *e;
		if (prepare_event(rk, &rk->events[(*e)->id], fr) < 0)
			return -ENOMEM;
	}
	rk->unknown.name = strdup("kernel:unknown");
	if (!rk->unknown.name)
		return -ENOMEM;
	rk->unknown.name_len = strlen(rk->unknown.name);
	rk->unknown.caller_off = -1;
	rk->unknown.shown = !rk->o.filter &&
			    report_selected(rk->o.patterns, rk->o.npatterns, rk->unknown.name);
	return 0;
}

int report_kernel_open(const char *dir, const struct report_kernel_opts *o,
		       struct filter_check *fr,
		       struct report_kernel **out)
{
	struct report_kernel *rk = calloc(1, sizeof(*rk));
	char err[512];
	int ret;

	*out = NULL;
	if (!rk) {
		tk_error("out of memory");
		return -1;
	}
	rk->o = *o;
	ret = tk_kernel_open(dir, &rk->k, err, sizeof(err));
	if (ret == -ENOENT) {
		free(rk);
		return 0;
	}
	if (ret < 0) {
		if (ret == -ENOMEM)
			snprintf(err, sizeof(err), "out of memory reading '%s/kernel'", dir);
		tk_error("%s", err);
		free(rk);
		return -1;
	}
	if (o->who && o->who->trace)
		tk_kernel_name_threads(&rk->k, o->who->trace);
	trace_seq_init(&rk->seq);
	rk->env.tep = rk->k.tep;
	rk->env.sym_addr = tk_kernel_symbol_addr;
	rk->env.sym_ctx = &rk->k;
	rk->env.syms = calloc(1, sizeof(*rk->env.syms));
	rk->kept = calloc(rk->k.ncpus + 1, sizeof(*rk->kept));
	rk->caller = calloc(rk->k.ncpus + 1, sizeof(*rk->caller));
	/* user stacks (--ustack) are named from the trace's symbols/ */
	if (!rk->kept || !rk->caller || tk_symbols_load(dir, &rk->env.user_syms, err, sizeof(err)) < 0 ||
	    !(rk->env.user_check = tk_ustack_check_new(rk->env.user_syms))) {
		tk_error("out of memory reading '%s/symbols'", dir);
		report_kernel_close(rk);
		return -1;
	}
	if (rk->k.clock[0] &&
	    strcmp(rk->k.clock, o->clock->tsc ? TK_KCLOCK_TSC : TK_KCLOCK_MONO))
		tk_warn("kernel events were stamped by trace_clock '%s', user events by %s: their order against each other is not exact",
			rk->k.clock, o->clock->tsc ? "the TSC" : "CLOCK_MONOTONIC");
	if (prepare_events(rk, fr) < 0) {
		tk_error("out of memory reading '%s/kernel'", dir);
		report_kernel_close(rk);
		return -1;
	}
	*out = rk;
	return 1;
}

/* Whether tracefs shows instance @name: 1, 0, or -1 when it cannot be
 * told (tracefs not mounted, or not ours to read). */
static int instance_shown(const char *name)
{
	char dir[256], path[512];
	struct stat st;

	if (!tk_tracefs_find(dir, sizeof(dir)))
		return -1;
	snprintf(path, sizeof(path), "%s/instances", dir);
	if (stat(path, &st) < 0 || access(path, R_OK | X_OK) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/instances/%s", dir, name);
	if (stat(path, &st) == 0)
		return 1;
	return errno == ENOENT ? 0 : -1;
}

void report_kernel_left(const struct report_kernel *rk, char *out, size_t len)
{
	const struct tk_kernel *k = &rk->k;
	pid_t owner = tk_kinstance_owner(k->instance);
	const char *what = rk->o.overwrite
		? "the kernel events are missing (in overwrite mode the recorder reads them at the end)"
		: "the kernel events of the recorder's last second may be missing";
	size_t dl = strlen(rk->o.dir);
	int shown;

	out[0] = '\0';
	if (!k->incomplete || !k->instance[0])
		return;
	if (owner && !tk_kinstance_is_stale(k->instance)) {
		snprintf(out, len, "its recorder (pid %d) still runs: the kernel events it has not read yet are in instance '%s'",
			 (int)owner, k->instance);
		return;
	}
	while (dl > 1 && rk->o.dir[dl - 1] == '/')
		dl--;
	shown = instance_shown(k->instance);
	if (shown == 0)
		snprintf(out, len, "%s: instance '%s', which held them, is gone", what,
			 k->instance);
	else
		snprintf(out, len, "%s: instance '%s' %s them ('tracekit extract -B %s -o %.*s-kernel' saves them)",
			 what, k->instance, shown > 0 ? "still holds" : "may still hold",
			 k->instance, (int)dl, rk->o.dir);
}

void report_kernel_header(const struct report_kernel *rk)
{
	const struct tk_kernel *k = &rk->k;
	char left[512];

	printf("# kernel: events %s, tracer %s, clock %s, %u CPUs%s\n",
	       k->events && *k->events ? k->events : "(none)",
	       k->tracer[0] ? k->tracer : "nop", k->clock[0] ? k->clock : "?",
	       k->ncpus, k->stack ? ", stack traces" : "");
	for (unsigned i = 0; i < k->ncpus; i++) {
		const struct tk_kernel_cpu *c = &k->cpus[i];

		printf("# kernel cpu %u: %zu pages, ", c->cpu, c->size / k->page_size);
		/* the kernel's counts are read when the recorder stops */
		if (k->incomplete) {
			printf("lost unknown\n");
			continue;
		}
		printf("%" PRIu64 " lost", c->overrun + c->dropped);
		if (c->overrun + c->dropped)
			printf(" (%" PRIu64 " overwritten, %" PRIu64 " dropped)",
			       c->overrun, c->dropped);
		printf("\n");
	}
	report_kernel_left(rk, left, sizeof(left));
	if (left[0])
		printf("# kernel: %s\n", left);
}

struct tk_kernel *report_kernel_handle(struct report_kernel *rk)
{
	return &rk->k;
}

/* The line's start up to the latency columns: who and CPU. */
static void put_who(struct report_kernel *rk, struct tk_obuf *o, int pid, unsigned cpu)
{
	struct comm_slot *s = &rk->comms[(unsigned)pid & (COMM_CACHE - 1)];

	if (rk->comm_gen != rk->env.comm_gen) {
		/* a printer gave some pid a comm: forget the cached ones */
		for (unsigned i = 0; i < COMM_CACHE; i++)
			rk->comms[i].set = false;
		rk->comm_gen = rk->env.comm_gen;
	}
	if (!s->set || s->pid != pid) {
		const char *comm = tep_data_comm_from_pid(rk->k.tep, pid);
		struct tk_obuf who;

		s->pid = pid;
		s->set = true;
		tk_obuf_init(&who, s->who, sizeof(s->who));
		report_line_who(&who, comm, strlen(comm), (uint32_t)pid);
		s->len = (unsigned)who.n;
	}
	tk_oput(o, s->who, s->len);
	report_line_cpu(o, cpu);
}

/* irqs-off, need-resched, hardirq/softirq, preempt depth, migrate-disable
 * depth: the kernel's trace_entry flags and preempt_count byte; then a
 * blank. */
static void put_latency(struct tk_obuf *o, unsigned flags, unsigned pc)
{
	static const char hex[] = "0123456789abcdef";
	bool hard = flags & TK_KFLAG_HARDIRQ, soft = flags & TK_KFLAG_SOFTIRQ;
	char p[6];

	p[0] = flags & TK_KFLAG_IRQS_OFF ? 'd'
	       : flags & TK_KFLAG_IRQS_NOSUPPORT ? 'X' : '.';
	p[1] = flags & TK_KFLAG_NEED_RESCHED ? 'N' : '.';
	p[2] = hard && soft ? 'H' : hard ? 'h' : soft ? 's' : '.';
	p[3] = pc & 0xf ? hex[pc & 0xf] : '.';
	p[4] = pc >> 4 ? hex[pc >> 4] : '.';
	p[5] = ' ';
	tk_oput(o, p, sizeof(p));
}

/* trace-cmd's words for events lost before this one */
static void print_lost(const struct tk_kernel_cpu *c)
{
	report_line_dropped("CPU", ":", c->cpu, c->missed > 0 ? c->missed : -1);
}

/* Whether record @c of event @e is selected (--events, --pid..., -F). */
static bool kernel_selected(struct report_kernel *rk, struct kevent *e,
			    struct tk_kernel_cpu *c)
{
	int pid;

	if (!e->shown)
		return false;
	pid = tk_kernel_pid(&rk->k, c->data);
	if (rk->o.who && !report_who_all(rk->o.who) &&
	    !report_who_selects(rk->o.who, 0, (uint32_t)pid,
				rk->o.who->comm ? tep_data_comm_from_pid(rk->k.tep, pid)
						: NULL))
		return false;
	return !e->filter ||
	       (record_values(rk, e, c) && tk_filter_match(e->filter, rk->values));
}

/* The kernel event of CPU @i's record, or the unknown one. */
static struct kevent *event_of(struct report_kernel *rk, const struct tk_kernel_cpu *c)
{
	int id = tk_kernel_event_id(&rk->k, c->data);

	return id >= 0 && (unsigned)id < rk->nids && rk->events[id].ev ? &rk->events[id]
								    : &rk->unknown;
}

/* A record not printed still names its pids as a printed one would. */
static void note_comms(struct report_kernel *rk, struct kevent *e,
		       const struct tk_kernel_cpu *c)
{
	if (!e->print)
		return;
	if (!rk->k.symbols_loaded && tk_kprint_needs_symbols(e->print))
		tk_kernel_load_symbols(&rk->k);
	tk_kprint_note_comms(e->print, &rk->seq, c->data, c->data_size, c->cpu, c->ts);
}

void report_kernel_skip(struct report_kernel *rk, unsigned i)
{
	struct tk_kernel_cpu *c = &rk->k.cpus[i];

	note_comms(rk, event_of(rk, c), c);
}

/* Whether CPU @i's record of event @e is selected; a stack goes with
 * the event before it on its CPU. */
static bool select_record(struct report_kernel *rk, unsigned i, struct kevent *e)
{
	struct tk_kernel_cpu *c = &rk->k.cpus[i];
	bool keep = kernel_selected(rk, e, c);

	/* a stack goes with the event before it on its CPU, and misses the
	 * frame that event's probe may have read */
	if (e->stack) {
		keep = keep || rk->kept[i];
		rk->env.user_caller = rk->caller[i];
	} else {
		rk->kept[i] = keep;
		rk->caller[i] = 0;
		if (e->caller_off >= 0 && (unsigned)e->caller_off + 8 <= c->data_size)
			memcpy(&rk->caller[i], c->data + e->caller_off, 8);
	}
	return keep;
}

bool report_kernel_cut(struct report_kernel *rk, unsigned i)
{
	struct tk_kernel_cpu *c = &rk->k.cpus[i];
	struct kevent *e = event_of(rk, c);
	bool keep = select_record(rk, i, e);

	note_comms(rk, e, c);
	return keep;
}

bool report_kernel_emit(struct report_kernel *rk, unsigned i)
{
	struct tk_kernel_cpu *c = &rk->k.cpus[i];
	struct kevent *e = event_of(rk, c);
	int id = tk_kernel_event_id(&rk->k, c->data);
	char line[16384];
	struct tk_obuf o;
	bool keep;
	int pid;

	if (c->missed) {
		if (c->missed > 0)
			rk->lost_seen += (uint64_t)c->missed;
		else
			rk->unknown_lost = true;
		if (!rk->o.count_only)
			print_lost(c);
	}
	keep = select_record(rk, i, e);
	if (!keep || rk->o.count_only) {
		note_comms(rk, e, c);
		e->count += keep;
		return keep;
	}
	pid = tk_kernel_pid(&rk->k, c->data);
	report_line_start(&o, line, sizeof(line));
	put_who(rk, &o, pid, c->cpu);
	put_latency(&o, tk_kernel_flags(&rk->k, c->data),
		    tk_kernel_preempt(&rk->k, c->data));
	report_line_time(&o, rk->o.clock, rk->o.ts, c->ts);
	tk_oput(&o, ": ", 2);
	tk_oput(&o, e->name, e->name_len);
	tk_oput(&o, ": ", 2);
	if (e->print) {
		if (!rk->k.symbols_loaded && tk_kprint_needs_symbols(e->print))
			tk_kernel_load_symbols(&rk->k);
		tk_ogrew(&o, tk_kprint_format(e->print, &rk->seq, c->data, c->data_size,
					      c->cpu, c->ts, tk_otail(&o), tk_oleft(&o)));
	} else {
		tk_oputs(&o, "[unknown event id ");
		tk_odec(&o, id);
		tk_oput(&o, "]", 1);
	}
	report_line_end(&o);
	return true;
}

unsigned report_kernel_cpu(const struct report_kernel *rk, unsigned i)
{
	return rk->k.cpus[i].cpu;
}

bool report_kernel_overwritten(const struct report_kernel *rk, unsigned i)
{
	return rk->k.cpus[i].overrun > 0;
}

bool report_kernel_matches(const struct report_kernel *rk, const char *pattern)
{
	for (unsigned id = 0; id < rk->nids; id++)
		if (rk->events[id].ev && tk_pattern_match(pattern, rk->events[id].name))
			return true;
	return false;
}

int report_kernel_counts(const struct report_kernel *rk,
			 struct report_count **counts, unsigned *n)
{
	for (unsigned id = 0; id <= rk->nids; id++) {
		const struct kevent *e = id < rk->nids ? &rk->events[id] : &rk->unknown;
		struct report_count *grown;

		if (!e->count)
			continue;
		grown = realloc(*counts, (*n + 1) * sizeof(**counts));
		if (!grown)
			return -ENOMEM;
		*counts = grown;
		grown[*n].name = e->name;
		grown[(*n)++].count = e->count;
	}
	return 0;
}

void report_kernel_tep_stats(const struct report_kernel *rk)
{
	for (unsigned id = 0; id < rk->nids; id++) {
		const struct kevent *e = &rk->events[id];
		uint64_t n = e->print ? tk_kprint_tep_count(e->print) : 0;

		if (n)
			fprintf(stderr, "tracekit: libtraceevent printed %" PRIu64 " %s\n", n,
				e->name);
	}
}

uint64_t report_kernel_lost(const struct report_kernel *rk)
{
	uint64_t stats = tk_kernel_lost(&rk->k);

	/* the pages' counts and the kernel's stats count the same losses;
	 * whichever saw more */
	return stats > rk->lost_seen ? stats : rk->lost_seen;
}

void report_kernel_close(struct report_kernel *rk)
{
	if (!rk)
		return;
	for (unsigned id = 0; id < rk->nids; id++) {
		struct kevent *e = &rk->events[id];

		free(e->name);
		tk_kfields_free(&e->kf);
		free(e->fields);
		tk_filter_free(e->filter);
		tk_kprint_free(e->print);
	}
	free(rk->unknown.name);
	free(rk->events);
	free(rk->values);
	free(rk->kept);
	free(rk->caller);
	trace_seq_destroy(&rk->seq);
	free(rk->env.syms);
	tk_ustack_check_free(rk->env.user_check);
	tk_symbols_free(rk->env.user_syms);
	tk_kernel_close(&rk->k);
	free(rk);
}
