/* SPDX-License-Identifier: MIT */
/*
 * cmd-hist.c - tracekit hist: histograms over any recorded event, and
 * latencies between two events, as ftrace's hist triggers and synthetic
 * events compute them in the kernel, here from a trace directory.
 *
 *   tracekit hist [DIR] -e EVENT --key FIELD[,FIELD] [--val FIELD[,FIELD]]
 *                 [--sort count|KEY|VAL[.ascending|.descending],...]
 *                 [-f FILTER] [--limit N]
 *   tracekit hist [DIR] --from EVENT --to EVENT --match FIELD[=FIELD][,...]
 *                 [--slowest N] [--unit ns|us|ms|s] [--ts mono|real|raw|start]
 *                 [--key FIELD[,FIELD]] [-f FILTER] [--pid PID] [--tid TID] [--comm GLOB]
 *
 * This file parses and drives; hist-keys.c resolves keys, hist-table.c
 * makes the histogram, hist-latency.c the latencies.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "hist.h"
#include "options.h"

struct hist_args {
	const char *dir;
	const char *event, *keys, *vals, *sort, *filter;
	const char *from, *to, *match;
	unsigned long limit, slowest;
	const char *unit;
	enum ts_mode ts;
	struct report_select sel; /* --pid, --tid, --comm */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracekit hist [DIR] -e EVENT --key FIELD[,FIELD] [OPTIONS]\n"
		"       tracekit hist [DIR] --from EVENT --to EVENT --match FIELD[,FIELD] [OPTIONS]\n\n"
		"A histogram of EVENT (user or kernel) by its fields, as ftrace's hist\n"
		"triggers print them; or the latency from each --from event to the next\n"
		"--to event with the same --match fields.\n\n"
		"  DIR                trace directory (default " TK_DEFAULT_OUTPUT ")\n"
		"  -e EVENT           the event (provider:event or system:event)\n"
		"  --key K[,K]        keys: fields of the event, or common_pid (tid),\n"
		"                     pid (user events' process), comm, cpu; with a\n"
		"                     modifier .hex .log2 .buckets=N .execname .sym\n"
		"  --val V[,V]        numeric fields summed per key (beside hitcount)\n"
		"  --sort S[,S]       count, a key or a value, each .ascending or\n"
		"                     .descending (default: count and values largest\n"
		"                     first, keys smallest first); default: count\n"
		"  -f FILTER          only events matching FILTER (ftrace syntax;\n"
		"                     FIELD.function == NAME: the function at an address)\n"
		"  --limit N          print the first N entries only\n"
		"  --from EVENT       latency: where an interval starts\n"
		"  --to EVENT         latency: where it ends (may be the same event)\n"
		"  --match F[,F]      fields that pair them: F (same name in both) or\n"
		"                     FROM_FIELD=TO_FIELD, e.g. pid=next_pid\n"
		"  --slowest N        list the N slowest intervals (default 10)\n"
		"  --unit U           ns, us (default), ms or s\n"
		"  --ts MODE          times of the slowest: mono (default), real, raw,\n"
		"                     or start (seconds since the first event)\n"
		"  --key K[,K]        latency: one histogram per value of the --from\n"
		"                     event's K (e.g. tid, comm)\n"
		"  -f FILTER          latency: only starts (--from events) matching\n"
		"                     FILTER; an end counts when its start was kept\n"
		"  --pid PID[,PID]    latency: only starts in these processes\n"
		"  --tid TID[,TID]    latency: only starts in these threads\n"
		"  --comm GLOB        latency: only starts of threads named GLOB\n");
}

static int parse_options(struct hist_args *a, int argc, char **argv)
{
	struct opt_parser p;
	unsigned long n;
	int c;

	a->dir = TK_DEFAULT_OUTPUT;
	a->slowest = 10;
	a->unit = "us";
	opt_init(&p, "hist");
	while ((c = opt_next(&p, argc, argv)) != -1) {
		switch (c) {
		case 'e':
			a->event = optarg;
			break;
		case 'f':
			a->filter = optarg;
			break;
		case 'i':
			a->dir = optarg;
			break;
		case OPT_KEY:
			a->keys = optarg;
			break;
		case OPT_VAL:
			a->vals = optarg;
			break;
		case OPT_SORT:
			a->sort = optarg;
			break;
		case OPT_FROM:
			a->from = optarg;
			break;
		case OPT_TO:
			a->to = optarg;
			break;
		case OPT_MATCH:
			a->match = optarg;
			break;
		case OPT_PID:
		case OPT_TID:
		case OPT_COMM:
			if (report_select_option(&a->sel, c, optarg) < 0)
				return -1;
			break;
		case OPT_LIMIT:
		case OPT_SLOWEST:
			if (!opt_uint(optarg, 1000000, &n)) {
				tk_error("--%s '%s': give a number from 0 to 1000000",
					 c == OPT_LIMIT ? "limit" : "slowest", optarg);
				return -1;
			}
			*(c == OPT_LIMIT ? &a->limit : &a->slowest) = n;
			break;
		case OPT_UNIT:
			if (strcmp(optarg, "ns") && strcmp(optarg, "us") &&
			    strcmp(optarg, "ms") && strcmp(optarg, "s")) {
				tk_error("--unit '%s': use ns, us, ms or s", optarg);
				return -1;
			}
			a->unit = optarg;
			break;
		case OPT_TS:
			if (report_parse_ts(optarg, &a->ts, false) < 0)
				return -1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -1; /* said by opt_next */
		}
	}
	if (!opt_operands_max(&p, argc, argv, 1))
		return -1;
	if (optind < argc)
		a->dir = argv[optind];
	if (a->from || a->to || a->match) {
		if (!a->from || !a->to || !a->match) {
			tk_error("a latency needs --from, --to and --match");
			return -1;
		}
		if (a->event || a->vals || a->sort || a->limit) {
			tk_error("-e, --val, --sort and --limit make a histogram of one event, not a latency (--from/--to)");
			return -1;
		}
	} else if (!report_who_all(&a->sel.who)) {
		tk_error("--pid, --tid and --comm select the starts of a latency (--from/--to)");
		return -1;
	} else if (!a->event || !a->keys) {
		tk_error(a->event ? "-e %s: which fields? (--key FIELD)"
				  : "which event? (-e EVENT --key FIELD, or --from/--to/--match)",
			 a->event);
		return -1;
	}
	return 0;
}

/* Split a comma list into @out; returns how many, -1 if too many. */
static int split(char *list, char **out, unsigned max, const char *what)
{
	unsigned n = 0;
	char *save = NULL;

	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			tk_error("more than %u %s", max, what);
			return -1;
		}
		out[n++] = t;
	}
	if (!n) {
		tk_error("no %s given", what);
		return -1;
	}
	return (int)n;
}

static int run_table(struct tk_cursor *c, const struct hist_args *a)
{
	struct hist_key keys[HIST_MAX_KEYS], vals[HIST_MAX_KEYS];
	struct hist_table_opts o = { .keys = keys, .vals = vals, .sort = a->sort,
				     .filter = a->filter, .limit = a->limit };
	struct hist_event e;
	char *klist = strdup(a->keys), *vlist = a->vals ? strdup(a->vals) : NULL;
	char *names[HIST_MAX_KEYS];
	unsigned off = 0;
	int n, ret = -1;

	if (!klist || (a->vals && !vlist))
		goto out;
	if (hist_event_find(c, a->event, &e) < 0)
		goto out;
	n = split(klist, names, HIST_MAX_KEYS, "keys");
	if (n < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		if (hist_key_parse(names[i], &e, &keys[i], a->dir) < 0)
			goto out;
		keys[i].off = off;
		off += keys[i].size;
	}
	o.nkeys = (unsigned)n;
	if (vlist) {
		n = split(vlist, names, HIST_MAX_KEYS, "values");
		if (n < 0)
			goto out;
		for (int i = 0; i < n; i++) {
			if (hist_key_parse(names[i], &e, &vals[i], a->dir) < 0)
				goto out;
			for (unsigned k = 0; k < e.nkinds; k++)
				if (vals[i].src[k] != SRC_FIELD || vals[i].string ||
				    (vals[i].mod && vals[i].mod != MOD_HEX)) {
					tk_error("--val '%s': a value is a numeric field of '%s' (with .hex at most)",
						 names[i], e.name);
					goto out;
				}
		}
		o.nvals = (unsigned)n;
	}
	ret = hist_table_run(c, &e, &o, a->dir);
out:
	free(klist);
	free(vlist);
	return ret;
}

static int run_latency(struct tk_cursor *c, const struct hist_args *a)
{
	struct hist_latency_opts o = { .match_text = a->match, .slowest = (unsigned)a->slowest,
				       .ts = a->ts, .unit = a->unit,
				       .filter = a->filter, .who = &a->sel.who,
				       .key_text = a->keys };
	struct hist_event from, to;
	char *mlist = strdup(a->match), *klist = a->keys ? strdup(a->keys) : NULL;
	char *names[HIST_MAX_KEYS];
	unsigned off = 0;
	int n, ret = -1;

	if (!mlist || (a->keys && !klist))
		goto out;
	if (hist_event_find(c, a->from, &from) < 0 || hist_event_find(c, a->to, &to) < 0)
		goto out;
	n = split(mlist, names, HIST_MAX_KEYS, "match fields");
	if (n < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		char *eq = strchr(names[i], '=');
		struct hist_key *f = &o.from_keys[i], *t = &o.to_keys[i];

		if (eq)
			*eq = 0;
		if (hist_key_parse(names[i], &from, f, a->dir) < 0 ||
		    hist_key_parse(eq ? eq + 1 : names[i], &to, t, a->dir) < 0)
			goto out;
		if (f->mod || t->mod) {
			tk_error("--match '%s': match fields take no modifier", a->match);
			goto out;
		}
		if (f->string != t->string || f->is_double || t->is_double) {
			tk_error("--match: '%s' of %s and '%s' of %s are not both integers or both strings",
				 f->name, from.name, t->name, to.name);
			goto out;
		}
		f->off = t->off = off;
		off += f->size;
	}
	o.nmatch = (unsigned)n;
	if (a->keys) {
		n = split(klist, names, HIST_MAX_KEYS, "keys");
		if (n < 0)
			goto out;
		off = 0;
		for (int i = 0; i < n; i++) {
			if (hist_key_parse(names[i], &from, &o.keys[i], a->dir) < 0)
				goto out;
			o.keys[i].off = off;
			off += o.keys[i].size;
		}
		o.nkeys = (unsigned)n;
	}
	ret = hist_latency_run(c, &from, &to, &o, a->dir);
out:
	free(mlist);
	free(klist);
	return ret;
}

int cmd_hist(int argc, char **argv)
{
	static char outbuf[1 << 16];
	struct hist_args a;
	struct tk_cursor c;
	char err[512];
	int ret;

	memset(&a, 0, sizeof(a));
	if (parse_options(&a, argc, argv) < 0)
		return TK_EXIT_USAGE;
	if (tk_cursor_open(&c, a.dir, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		tk_cursor_close(&c);
		return TK_EXIT_FAILURE;
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	a.sel.who.trace = &c.trace;
	ret = a.from ? run_latency(&c, &a) : run_table(&c, &a);
	fflush(stdout);
	hist_symbols_free();
	tk_cursor_close(&c);
	report_select_free(&a.sel);
	return ret < 0 ? TK_EXIT_FAILURE : 0;
}
