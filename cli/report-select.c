/* SPDX-License-Identifier: MIT */
/*
 * report-select.c - which events report shows (report.h): --events
 * patterns, --ts, --pid/--tid/--comm, the fields every event offers -F
 * (common_pid, common_comm, common_cpu), --from/--to.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "common/pattern.h"
#include "format/number.h"
#include "options.h"
#include "report.h"

bool report_selected(const char *const *patterns, unsigned n, const char *name)
{
	if (!n)
		return true;
	for (unsigned i = 0; i < n; i++)
		if (tk_pattern_match(patterns[i], name))
			return true;
	return false;
}

int report_parse_ts(const char *arg, enum ts_mode *mode, bool delta)
{
	static const char *const words[] = { "mono", "raw", "real", "start", "delta" };

	for (unsigned i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcmp(arg, words[i]) || (i == TS_DELTA && !delta))
			continue;
		*mode = (enum ts_mode)i;
		return 0;
	}
	tk_error("--ts '%s': use mono, real, raw%s", arg,
		 delta ? ", start or delta" : " or start");
	return -1;
}

int report_ids_parse(const char *opt, const char *arg, uint32_t **ids, unsigned *n)
{
	const char *p = arg;

	do {
		char *end;
		unsigned long v;
		uint32_t *grown;

		errno = 0;
		v = *p >= '0' && *p <= '9' ? strtoul(p, &end, 10) : 0;
		if (!v || errno || v > INT32_MAX || (*end && *end != ',')) {
			tk_error("%s '%s': not a list of ids (as 12,34)", opt, arg);
			return -1;
		}
		grown = realloc(*ids, (*n + 1) * sizeof(**ids));
		if (!grown)
			return -1;
		*ids = grown;
		(*ids)[(*n)++] = (uint32_t)v;
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

static bool id_in(const uint32_t *ids, unsigned n, uint32_t id)
{
	for (unsigned i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

bool report_who_selects(const struct report_who *w, uint32_t pid,
			uint32_t tid, const char *comm)
{
	if (w->ntids && !id_in(w->tids, w->ntids, tid))
		return false;
	if (w->comm && (!comm || fnmatch(w->comm, comm, 0)))
		return false;
	if (!w->npids)
		return true;
	if (pid)
		return id_in(w->pids, w->npids, pid);
	if (id_in(w->pids, w->npids, tid))
		return true;
	for (unsigned i = 0; w->trace && i < w->trace->nstreams; i++)
		if (w->trace->streams[i].tid == tid &&
		    id_in(w->pids, w->npids, w->trace->streams[i].pid))
			return true;
	return false;
}

struct tk_field_desc *report_common_fields(const struct tk_field_desc *fields,
					   unsigned n)
{
	static const struct tk_field_desc common[REPORT_COMMON_FIELDS] = {
		{ "common_pid", TK_KIND_INT, 4, 0, 0 },
		{ "common_comm", TK_KIND_STRING, 0, 0, 0 },
		{ "common_cpu", TK_KIND_UINT, 4, 0, 0 },
	};
	struct tk_field_desc *all = calloc(n + REPORT_COMMON_FIELDS, sizeof(*all));

	if (!all)
		return NULL;
	if (n)
		memcpy(all, fields, n * sizeof(*all));
	memcpy(all + n, common, sizeof(common));
	return all;
}

void report_common_values(struct tk_value *v, uint32_t tid, const char *comm,
			  uint32_t cpu)
{
	v[0].i = (int32_t)tid;
	v[1].str = comm;
	v[1].len = (uint32_t)strlen(comm);
	v[2].u = cpu;
}

/* "[+]SECONDS[.FRACTION]" in nanoseconds, and the unit of its last digit
 * (at most a microsecond, what report prints); false if it is not that.
 * A time past what 64 bits of nanoseconds hold (584 years) is the last
 * one they hold: after every event. */
static bool parse_seconds(const char *s, bool *relative, uint64_t *ns,
			  uint64_t *unit)
{
	uint64_t secs = 0, frac = 0, scale = 1000000000u;
	const char *p = s;
	bool past = false;

	*relative = *p == '+';
	p += *relative;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		past |= secs > UINT64_MAX / 10000000000u;
		secs = past ? secs : secs * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (scale /= 10)
				frac += (uint64_t)(*p - '0') * scale;
	past |= secs > (UINT64_MAX - frac) / 1000000000u;
	*ns = past ? UINT64_MAX : secs * 1000000000u + frac;
	*unit = past ? 1 : scale > 1000 ? 1000 : scale ? scale : 1;
	return !*p;
}

uint64_t report_bound_time(const struct tk_trace_clock *c, uint64_t first,
			   const struct report_bound *b, uint64_t ts)
{
	switch (b->clock) {
	case TS_RAW:
		return ts;
	case TS_REAL:
		return tk_clock_to_real(c, ts);
	case TS_MONO:
		return tk_clock_to_mono(c, ts);
	default:
		return ts > first ? (uint64_t)((unsigned __int128)(ts - first) *
					       1000000000u / c->freq)
				  : 0;
	}
}

int report_bound_parse(enum ts_mode ts, const char *opt, const char *arg,
		       struct report_bound *b)
{
	bool relative;
	uint64_t unit;

	b->set = true;
	b->clock = ts == TS_DELTA ? TS_START : ts;
	if (ts == TS_RAW && arg[0] != '+') {
		char *end;

		errno = 0;
		b->lo = strtoull(arg, &end, 10);
		b->hi = b->lo;
		if (arg[0] >= '0' && arg[0] <= '9' && !*end && !errno)
			return 0;
	} else if (parse_seconds(arg, &relative, &b->lo, &unit)) {
		if (relative)
			b->clock = TS_START;
		/* to the microsecond or coarser, a time as report prints
		 * it (rounded): the nanoseconds printed so; finer, those
		 * its last digit covers (--to 12.3456789 includes 12.3456789xx) */
		if (unit == 1000)
			tk_num_usecs_span(b->lo / 1000u, &b->lo, &b->hi);
		else
			b->hi = b->lo > UINT64_MAX - (unit - 1) ? UINT64_MAX
								 : b->lo + unit - 1;
		return 0;
	}
	tk_error("%s '%s': not a time (seconds as report prints them%s, or +SECONDS after the first event)",
		 opt, arg, ts == TS_RAW ? ", clock ticks with --ts raw" : "");
	return -1;
}

void report_select_note(struct report_select *s, const char *opt,
			const char *arg)
{
	size_t n = strlen(s->what);

	snprintf(s->what + n, sizeof(s->what) - n, "%s%s '%s'", n ? " " : "",
		 opt, arg);
}

int report_select_option(struct report_select *s, int c, const char *arg)
{
	const char **grown;

	switch (c) {
	case OPT_EVENTS:
		report_select_note(s, "--events", arg);
		grown = realloc(s->patterns, (s->npatterns + 1) * sizeof(*grown));
		if (!grown) {
			tk_error("out of memory");
			return -1;
		}
		s->patterns = grown;
		s->patterns[s->npatterns++] = arg;
		return 0;
	case OPT_PID:
		report_select_note(s, "--pid", arg);
		return report_ids_parse("--pid", arg, &s->who.pids, &s->who.npids);
	case OPT_TID:
		report_select_note(s, "--tid", arg);
		return report_ids_parse("--tid", arg, &s->who.tids, &s->who.ntids);
	case OPT_COMM:
		report_select_note(s, "--comm", arg);
		s->who.comm = arg;
		return 0;
	case OPT_FROM:
		report_select_note(s, "--from", arg);
		s->from_arg = arg;
		return 0;
	case OPT_TO:
	case OPT_UNTIL:
		s->to_opt = c == OPT_TO ? "--to" : "--until";
		report_select_note(s, s->to_opt, arg);
		s->to_arg = arg;
		return 0;
	}
	tk_error("option %d is no selection", c); /* a verb's mistake */
	return -1;
}

int report_select_window(struct report_select *s, enum ts_mode ts)
{
	if ((s->from_arg &&
	     report_bound_parse(ts, "--from", s->from_arg, &s->from) < 0) ||
	    (s->to_arg && report_bound_parse(ts, s->to_opt, s->to_arg, &s->to) < 0))
		return -1;
	if (s->from_arg && s->to_arg && s->from.clock == s->to.clock &&
	    s->from.lo > s->to.hi) {
		tk_error("--from '%s' is after %s '%s'", s->from_arg, s->to_opt,
			 s->to_arg);
		return -1;
	}
	return 0;
}

bool report_select_in_window(const struct report_select *s,
			     const struct tk_trace_clock *c, uint64_t first,
			     uint64_t ts)
{
	return (!s->from.set || report_bound_time(c, first, &s->from, ts) >= s->from.lo) &&
	       (!s->to.set || report_bound_time(c, first, &s->to, ts) <= s->to.hi);
}

bool report_select_meets_window(const struct report_select *s,
				const struct tk_trace_clock *c, uint64_t first,
				uint64_t after, uint64_t before)
{
	return (!s->from.set || !before ||
		report_bound_time(c, first, &s->from, before) >= s->from.lo) &&
	       (!s->to.set || !after ||
		report_bound_time(c, first, &s->to, after) <= s->to.hi);
}

void report_select_free(struct report_select *s)
{
	free(s->patterns);
	free(s->who.pids);
	free(s->who.tids);
	memset(s, 0, sizeof(*s));
}
