/* SPDX-License-Identifier: MIT */
/*
 * options.c - the table of every verb's options, getopt's tables made
 * from it, and the readers of values several verbs share (options.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "options.h"
#include "lib/config.h"

enum {
	V_RECORD = 1u << 0,
	V_REPORT = 1u << 1,
	V_CONVERT = 1u << 2,
	V_LIST = 1u << 3,
	V_STAT = 1u << 4,
	V_START = 1u << 5,
	V_STOP = 1u << 6,
	V_SHOW = 1u << 7,
	V_EXTRACT = 1u << 8,
	V_RESET = 1u << 9,
	V_HIST = 1u << 10,
	V_RECOVER = 1u << 11,
	V_ALL = (1u << 12) - 1,
	/* the verbs whose options end at their first operand */
	V_IN_ORDER = V_RECORD | V_STAT | V_START | V_STOP | V_SHOW | V_EXTRACT |
		     V_RESET,
};

static const struct {
	const char *name;
	unsigned bit;
} verbs[] = {
	{ "record", V_RECORD },	  { "report", V_REPORT }, { "convert", V_CONVERT },
	{ "list", V_LIST },	  { "stat", V_STAT },	  { "start", V_START },
	{ "stop", V_STOP },	  { "show", V_SHOW },	  { "extract", V_EXTRACT },
	{ "reset", V_RESET },	  { "hist", V_HIST },	  { "recover", V_RECOVER },
};

#define ARG required_argument
#define NO no_argument

static const struct opt_row {
	int val;	  /* the letter, or OPT_* */
	const char *name; /* the long name, or NULL */
	int has_arg;
	unsigned verbs;
} table[] = {
	{ 'h', "help", NO, V_ALL },
	/* what to trace: record, start, stat */
	{ 'e', NULL, ARG, V_RECORD | V_START | V_STAT },
	{ 'f', NULL, ARG, V_RECORD | V_START },
	{ 'P', NULL, ARG, V_RECORD | V_START },
	{ 'p', NULL, ARG, V_RECORD | V_START },
	{ 'l', NULL, ARG, V_RECORD | V_START },
	{ 'n', NULL, ARG, V_RECORD | V_START },
	{ 'n', NULL, NO, V_RECOVER }, /* recover: change nothing */
	{ 'g', NULL, ARG, V_RECORD | V_START },
	{ OPT_STACK, "stack", NO, V_RECORD | V_START },
	/* record */
	{ 'o', NULL, ARG, V_RECORD | V_EXTRACT },
	{ 'b', "user-buffer", ARG, V_RECORD | V_STAT },
	{ OPT_KERNEL_BUFFER, "kernel-buffer", ARG, V_RECORD },
	{ OPT_SUBBUFS, "subbufs", ARG, V_RECORD | V_STAT },
	{ OPT_POOL, "pool", ARG, V_RECORD | V_STAT },
	{ OPT_BLOCK, "block", optional_argument, V_RECORD | V_STAT },
	{ OPT_OVERWRITE, "overwrite", NO, V_RECORD },
	{ OPT_NO_FOLLOW, "no-follow", NO, V_RECORD },
	{ OPT_FORCE, "force", NO, V_RECORD },
	{ OPT_MAX_GRAPH_DEPTH, "max-graph-depth", ARG, V_RECORD },
	{ OPT_FUNC_STACK, "func-stack", NO, V_RECORD },
	{ OPT_USTACK, "ustack", NO, V_RECORD },
	{ OPT_NO_LIBCALL, "no-libcall", NO, V_RECORD },
	{ 'F', NULL, NO, V_RECORD },
	{ 'q', NULL, NO, V_RECORD },
	{ 'v', NULL, NO, V_RECORD },
	/* start; -B also the verbs of an instance it made */
	{ 'B', NULL, ARG, V_START | V_STOP | V_SHOW | V_EXTRACT | V_RESET },
	{ 'b', "kernel-buffer", ARG, V_START }, /* record's name, trace-cmd's letter */
	{ 'C', NULL, ARG, V_START },
	/* stat */
	{ 'a', NULL, NO, V_STAT | V_RESET },
	{ 'd', NULL, ARG, V_STAT },
	{ OPT_SORT, "sort", NO, V_STAT },
	/* report */
	{ 'F', NULL, ARG, V_REPORT | V_HIST }, /* hist: -f's other name */
	{ 'f', NULL, ARG, V_REPORT },          /* -F's other name */
	{ 'i', NULL, ARG, V_REPORT | V_CONVERT | V_HIST },
	{ OPT_EVENTS, "events", ARG, V_REPORT | V_CONVERT },
	{ OPT_TS, "ts", ARG, V_REPORT | V_SHOW | V_CONVERT | V_HIST },
	{ OPT_NO_HEADER, "no-header", NO, V_REPORT },
	{ OPT_COUNT, "count", NO, V_REPORT },
	{ OPT_PROFILE, "profile", NO, V_REPORT },
	{ OPT_TEP_PRINT, "tep-print", NO, V_REPORT },
	{ OPT_TEP_STATS, "tep-stats", NO, V_REPORT },
	{ OPT_PID, "pid", ARG, V_REPORT | V_CONVERT | V_HIST },
	{ OPT_TID, "tid", ARG, V_REPORT | V_CONVERT | V_HIST },
	{ OPT_COMM, "comm", ARG, V_REPORT | V_CONVERT | V_HIST },
	{ OPT_FROM, "from", ARG, V_REPORT | V_CONVERT | V_HIST },
	{ OPT_TO, "to", ARG, V_REPORT | V_CONVERT | V_HIST },
	{ OPT_NO_CUT, "no-cut", NO, V_REPORT },
	/* convert */
	{ 'o', "output", ARG, V_CONVERT },
	{ 'q', "quiet", NO, V_CONVERT },
	{ OPT_CALLS, "calls", NO, V_CONVERT },
	{ OPT_ON_CPU, "on-cpu", NO, V_CONVERT },
	{ OPT_STACKS, "stacks", NO, V_CONVERT | V_REPORT },
	{ OPT_TITLE, "title", ARG, V_CONVERT },
	{ OPT_UNTIL, "until", ARG, V_CONVERT | V_REPORT }, /* report: --to */
	/* hist */
	{ 'e', NULL, ARG, V_HIST },
	{ 'f', NULL, ARG, V_HIST },
	{ OPT_KEY, "key", ARG, V_HIST },
	{ OPT_VAL, "val", ARG, V_HIST },
	{ OPT_SORT, "sort", ARG, V_HIST },
	{ OPT_LIMIT, "limit", ARG, V_HIST },
	{ OPT_MATCH, "match", ARG, V_HIST },
	{ OPT_SLOWEST, "slowest", ARG, V_HIST },
	{ OPT_UNIT, "unit", ARG, V_HIST },
	/* list: modes, no value */
	{ 'e', NULL, NO, V_LIST },
	{ 't', NULL, NO, V_LIST },
	{ 'f', NULL, NO, V_LIST },
	{ 'o', NULL, NO, V_LIST },
	{ OPT_NAMES, "names", NO, V_LIST },
};

/* The table is wrong (a letter or a name twice would leave one of its
 * rows unreachable): every run of the verb says so. */
static void table_wrong(const char *verb, const char *what, const char *name)
{
	tk_error("the table of options is wrong for %s: %s%s", verb, what, name);
	abort();
}

void opt_init(struct opt_parser *p, const char *verb)
{
	unsigned bit = 0, nlong = 0;
	size_t n = 0;

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(verbs[i].name, verb))
			bit = verbs[i].bit;
	memset(p, 0, sizeof(*p));
	p->verb = verb;
	if (bit & V_IN_ORDER)
		p->optstring[n++] = '+';
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct opt_row *r = &table[i];

		if (!(r->verbs & bit))
			continue;
		if (nlong == OPT_MAX || n + 3 > sizeof(p->optstring))
			table_wrong(verb, "more options than OPT_MAX", "");
		if (r->val < OPT_LONG_FIRST) {
			p->optstring[n++] = (char)r->val;
			if (r->has_arg == ARG)
				p->optstring[n++] = ':';
		}
		if (r->name)
			p->longopts[nlong++] = (struct option){ r->name, r->has_arg, NULL,
								r->val };
	}
	p->optstring[n] = '\0';
	for (unsigned i = 0; i < nlong; i++)
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(p->longopts[i].name, p->longopts[j].name))
				table_wrong(verb, "twice: --", p->longopts[i].name);
	for (size_t i = 0; i < n; i++)
		if (p->optstring[i] != ':' && p->optstring[i] != '+' &&
		    strchr(p->optstring + i + 1, p->optstring[i]))
			table_wrong(verb, "twice: -", (char[]){ p->optstring[i], '\0' });
}

/* Say what getopt_long() just refused (an unknown option, or one
 * missing its value), for verb @cmd with short options @optstring. */
static void option_error(const char *cmd, char *const *argv, const char *optstring)
{
	const char *arg = argv[optind - 1];
	const char *spec = optopt ? strchr(optstring, optopt) : NULL;

	if (arg && !strncmp(arg, "--", 2)) {
		/* getopt_long sets optopt only for a known option missing its
		 * value */
		if (optopt)
			tk_error("option '%.*s' needs a value",
				 (int)strcspn(arg, "="), arg);
		else
			tk_error("unknown option '%s' (see 'tracekit %s --help')",
				 arg, cmd);
	} else if (spec && spec[1] == ':') {
		tk_error("option '-%c' needs a value", optopt);
	} else {
		tk_error("unknown option '-%c' (see 'tracekit %s --help')",
			 optopt ? optopt : '?', cmd);
	}
}

int opt_next(struct opt_parser *p, int argc, char **argv)
{
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, p->optstring, p->longopts, NULL);
	if (c == '?' || c == ':')
		option_error(p->verb, argv, p->optstring);
	return c == ':' ? '?' : c;
}

bool opt_operands_max(const struct opt_parser *p, int argc, char **argv,
		      int max)
{
	if (argc - optind <= max)
		return true;
	if (p->optstring[0] == '+') /* options end at the first operand */
		tk_error("unexpected argument '%s' (see 'tracekit %s --help')",
			 argv[optind + max], p->verb);
	else
		tk_error("unexpected argument '%s'", argv[optind + max]);
	return false;
}

int opt_rules_add(struct opt_rules *l, int c, const char *arg)
{
	struct tk_krule *grown;

	if (c == 'f') {
		if (!l->count) {
			tk_error("-f '%s' must follow the -e it filters", arg);
			return -1;
		}
		l->rule[l->count - 1].filter = arg;
		return 0;
	}
	if (!*arg) {
		tk_error("-e needs an event name");
		return -1;
	}
	grown = realloc(l->rule, (l->count + 1) * sizeof(*grown));
	if (!grown) {
		tk_error("out of memory");
		return -1;
	}
	l->rule = grown;
	l->rule[l->count++] = (struct tk_krule){ arg, NULL };
	return 0;
}

void opt_rules_free(struct opt_rules *l)
{
	free(l->rule);
	l->rule = NULL;
	l->count = 0;
}

bool opt_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return !errno && !*end && *out <= max;
}

bool opt_pid(const char *arg, pid_t *out)
{
	unsigned long v;

	if (!opt_uint(arg, 1u << 30, &v) || v == 0) {
		tk_error("-P '%s': not a process id", arg);
		return false;
	}
	*out = (pid_t)v;
	return true;
}

bool opt_kb(const char *opt, const char *arg, unsigned long min,
	    unsigned long max, bool say_max, uint32_t *out)
{
	unsigned long v;

	if (!opt_uint(arg, max, &v) || v < min) {
		if (say_max)
			tk_error("%s '%s': buffer size must be a number of KiB, from %lu to %lu",
				 opt, arg, min, max);
		else
			tk_error("%s '%s': buffer size must be a number of KiB, at least %lu",
				 opt, arg, min);
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

bool opt_kernel_kb(const char *arg, uint32_t *out)
{
	return opt_kb("--kernel-buffer", arg, 4, 4u << 20, false, out);
}

void opt_kernel_kb_made(uint32_t asked, uint32_t made)
{
	if (asked && made && asked != made)
		fprintf(stderr, "tracekit: --kernel-buffer %u: the kernel made %u KiB per CPU (it rounds up to whole pages of events)\n",
			asked, made);
}

int opt_buffers_take(struct opt_buffers *b, int c, const char *arg)
{
	unsigned long v;

	switch (c) {
	case 'b':
		return opt_kb("-b", arg, 8, OPT_POOL_MAX_KB, true, &b->buffer_kb) ? 1 : -1;
	case OPT_SUBBUFS:
		if (!opt_uint(arg, TK_RB_MAX_SLOTS, &v) || v < 2) {
			tk_error("--subbufs '%s': must be from 2 to %d", arg,
				 TK_RB_MAX_SLOTS);
			return -1;
		}
		b->nsub = (uint32_t)v;
		return 1;
	case OPT_POOL:
		if (!opt_uint(arg, OPT_POOL_MAX_KB, &v) || v < 8) {
			tk_error("--pool '%s': must be a number of KiB, from 8 to %u",
				 arg, OPT_POOL_MAX_KB);
			return -1;
		}
		b->pool_kb = (uint32_t)v;
		return 1;
	case OPT_BLOCK:
		b->block_bare = !arg;
		if (!arg) {
			b->block_ms = OPT_BLOCK_DEFAULT_MS;
		} else if (!opt_uint(arg, TK_CONFIG_MAX_BLOCK_MS, &v) || !v) {
			tk_error("--block='%s': must be a number of ms, from 1 to %u",
				 arg, TK_CONFIG_MAX_BLOCK_MS);
			return -1;
		} else {
			b->block_ms = (uint32_t)v;
		}
		return 1;
	default:
		return 0;
	}
}

bool opt_buffers_done(const struct opt_buffers *b, char *const *cmd)
{
	unsigned long v;

	if (b->block_bare && cmd && cmd[0] && opt_uint(cmd[0], UINT32_MAX, &v)) {
		/* 'record --block 5 -- prog' would run a command named 5 */
		tk_error("--block takes its time as --block=%s, not as the next argument",
			 cmd[0]);
		return false;
	}
	return true;
}

void opt_buffers_usage(FILE *f, bool overwrite)
{
	fprintf(f,
		"  -b, --user-buffer KB   user events' buffer per thread in KiB: the\n"
		"                 most one thread holds while the recorder catches up\n");
	if (overwrite)
		fprintf(f, "                 (with --overwrite: the newest it keeps)\n");
	fprintf(f,
		"  --subbufs N    sub-buffers per thread buffer (default: -b in\n"
		"                 sub-buffers of %u KiB)\n"
		"  --pool KB      user events' buffer memory per process in KiB\n"
		"  --block[=MS]   a writer that finds no room waits up to MS ms (default\n"
		"                 %u) for the recorder instead of losing the event;\n"
		"                 without --block writers never wait\n",
		OPT_SUBBUF_DEFAULT_KB, OPT_BLOCK_DEFAULT_MS);
}
