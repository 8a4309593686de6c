/* SPDX-License-Identifier: MIT */
/*
 * cmd-record.c - tracekit record: run a command, or attach to a process,
 * and record its events into a trace directory.
 *
 *   tracekit record [-o DIR] [-e EVENT [-f FILTER]]... [-b KB]
 *                   [--kernel-buffer KB] [--overwrite]
 *                   [--no-follow] [--force] [-p TRACER] [-F] [--stack]
 *                   -- CMD [ARGS]
 *   tracekit record -P PID [...]
 *
 * Before anything runs, the events the program defines are read from its
 * ELF files, so that a misspelt event or a bad filter is an error at once;
 * -e patterns that name kernel events go to the kernel side
 * (record-kernel.c).
 * The output directory is created new; an existing trace there is replaced
 * only once the new one is complete.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "clock-now.h"
#include "filter-check.h"
#include "held-command.h"
#include "lib/config.h"
#include "control-client.h"
#include "format/elf-events.h"
#include "options.h"
#include "common/filter.h"
#include "common/pattern.h"
#include "common/protocol.h"
#include "format/probes.h"
#include "record-functrace.h"
#include "record-kernel.h"
#include "record.h"
#include "record-watch.h"
#include "session.h"
#include "common/unix-socket.h"

/* The recorder sleeps until a writer closes a packet (it wakes us), a
 * process talks, a signal comes, or IDLE_WAIT_US passes. */
#define IDLE_WAIT_US 1000000
/* With no instrumented process connected there is nothing to look at:
 * a connection, a signal or the command's end (SIGCHLD) wakes the loop;
 * -P with kernel events only checks the process is alive this often. */
#define NO_USER_POLL_US 1000000
#define ATTACH_POLL_US 100000
/* -P: how often we look whether the process answered */
#define ANSWER_POLL_US 10000
#define RECORDER_NICE -5
#define STOP_GRACE_MS 1000

/* Buffers (docs/design-notes.md): a thread writes sub-buffers taken from
 * its process's pool and holds at most -b of them while the recorder
 * catches up (overwrite mode: keeps that much).  The process makes
 * POOL_INIT_KB of the pool when it starts (two sub-buffers if larger), so
 * that its first packets take no page fault, and no more: most processes
 * of a recording (a build's, a worker pool's) may never fire an event;
 * the recorded command makes POOL_START_MIN_KB (a burst at its start
 * would else make its pages by faults in its stores).
 * When a writer takes its first sub-buffer from the pool, the recorder
 * makes up to -b (at least POOL_START_MIN_KB, at most POOL_START_MAX_KB)
 * ahead of it (a forked child's doubles), then more as bursts need it,
 * up to --pool per process (a writer that outruns it makes its own, by
 * page faults).  A thread at
 * rest holds two pages. */
#define DEFAULT_BUFFER_KB OPT_BUFFER_DEFAULT_KB
#define DEFAULT_SUBBUF_KB OPT_SUBBUF_DEFAULT_KB
#define DEFAULT_POOL_KB (256u << 10)
#define POOL_INIT_KB 512
#define POOL_START_MIN_KB 16384
#define POOL_START_MAX_KB (256u << 10)
#define MAX_POOL_KB OPT_POOL_MAX_KB
#define STREAMS_MAX 4096        /* threads recording at once, per process */

struct record {
	struct rec_options opt;
	const char *final_dir; /* where the trace ends up */
	char *work_dir;        /* where it is written */
	bool replace;          /* an old trace is at final_dir */
	bool force;
	bool buffer_given;     /* -b: per-thread buffers were sized */
	char clock_why[192];   /* why events are not stamped with the TSC */
	uint32_t nsub, pool_kb; /* --subbufs, --pool; 0: not given */
	bool verbose;          /* -v: how the recorder worked, too */
	int owner;             /* enum func_owner: the last -p's tracer */
	char *program;         /* resolved CMD */
	struct record_kernel kernel;
	struct rec_functrace functrace; /* the user function tracer's state */
	bool no_user_events;   /* the program is not instrumented */
	pid_t child;           /* the command, once it runs */
	int child_status;      /* its wait status once it ended, else -1 */
	int exec_status;       /* 127 or 126: the command could not run */
	struct sigaction saved_int, saved_term; /* what the command inherits */
	sigset_t oldmask;      /* the signal mask before run() */
	int sigfd;             /* run()'s signals, once it has them */
	int saved_nice;        /* the priority before run() */
	bool interrupted;      /* a signal stopped the recording */
	struct rec_rule *parsed; /* every -e, before sort_rules kept the user's */
	unsigned nparsed;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracekit record [OPTIONS] -- CMD [ARGS]\n"
		"       tracekit record [OPTIONS] -P PID\n\n"
		"  -o DIR         trace directory (default " TK_DEFAULT_OUTPUT ")\n"
		"  -e EVENT       record EVENT, repeatable (default: all user events):\n"
		"                 a user event (provider:event, a glob as app:req_*,\n"
		"                 a provider, or all), a kernel event (SYSTEM:EVENT,\n"
		"                 SYSTEM, or a glob as 'syscalls:sys_enter_*') or a\n"
		"                 dynamic probe: uprobe:PATH:FUNC[+OFF], uprobe:PATH:0xADDR,\n"
		"                 uretprobe:PATH:FUNC, usdt:[PATH:]PROVIDER:NAME, each\n"
		"                 with (name[:type], ...) to choose its fields\n"
		"  -f FILTER      filter for the preceding -e, in ftrace's syntax\n"
		"                 (e.g. 'len > 100 && path ~ \"/etc/*\"'); for kernel\n"
		"                 events the kernel's own filter; it selects what is\n"
		"                 recorded (the program's own probes see every hit)\n");
	opt_buffers_usage(f, true);
	fprintf(f,
		"  --kernel-buffer KB     kernel events' buffer per CPU in KiB\n"
		"                 (default: the kernel's)\n"
		"  --overwrite    flight recorder: keep the newest events\n"
		"  -P PID         attach to a running instrumented process; kernel\n"
		"                 events of PID only (any process, with kernel -e only);\n"
		"                 its threads only, not the children it forks\n"
		"  --no-follow    do not record children forked by the program\n"
		"  --force        record even if an -e names no event of the program,\n"
		"                 or -P -p finds no function entry it can patch\n"
		"  -p TRACER      a tracer: function or function_graph traces the\n"
		"                 program's functions when it is built for it, else\n"
		"                 the kernel's; user:TRACER or kernel:TRACER chooses;\n"
		"                 any other name is a kernel tracer (see list -t)\n"
		"  -l GLOB        function tracers: only functions matching GLOB\n"
		"  -n GLOB        function tracers: not functions matching GLOB\n"
		"  -g FUNC        function_graph: only FUNC and what it calls\n"
		"                 (-l, -n, -g are for the tracer of the -p they follow;\n"
		"                 before any -p, for the first)\n"
		"  --max-graph-depth N   function_graph: at most N levels deep\n"
		"  --func-stack   user call stack with each function event\n"
		"  --no-libcall   function tracers: not the library calls (PLT)\n"
		"  --stack        kernel stack trace with each kernel event\n"
		"  --ustack       user stack with each event, user or kernel\n"
		"                 (frame pointers)\n"
		"  -F             kernel events only of the command and its children\n"
		"  -q             no summary\n"
		"  -v             the summary lists every stream (else the ten that\n"
		"                 lost or fired the most) and says how the recorder\n"
		"                 worked too\n\n"
		"Kernel events are recorded in a private tracefs instance\n"
		"(tracekit-PID), on the user events' clock; it is removed at the end,\n"
		"or by 'tracekit reset' if the recorder was killed.\n\n"
		"User events' buffers: each thread writes sub-buffers it takes from\n"
		"its process's pool, and holds at most -b of them (default %u KiB);\n"
		"a thread at rest holds 8 KiB (a page of its descriptor, a page for\n"
		"its first packet).  The pool is made as it is used: %u KiB by the\n"
		"process when it starts (with ~100 KiB of descriptors and rings, all\n"
		"that a process that fires no event holds; the recorded command\n"
		"makes %u KiB, before its main()), up to -b (at least %u,\n"
		"at most %u KiB) by the recorder once a thread writes past its first\n"
		"packet, then as bursts need it, up to --pool (default %u KiB, or -b\n"
		"if larger); the pool keeps its largest size until the process ends\n"
		"or the recording stops.\n"
		"Limits: -b and --pool 8 to %u KiB, --pool at least -b; sub-buffers\n"
		"of 4 to %u KiB, 2 to %u per thread; an event at most a sub-buffer\n"
		"(less its 80-byte header; larger ones are lost, counted); --block 1\n"
		"to %u ms; %u threads recording at once per process (more lose\n"
		"their events, counted).\n"
		"Clock: the TSC where the kernel trusts it, else CLOCK_MONOTONIC;\n"
		"TRACEKIT_CLOCK=mono or tsc in the environment chooses.\n\n"
		"Exit status: the command's, 128 + N if signal N killed it; 127 if it\n"
		"is not found, 126 if it cannot be executed; 1 if the recording\n"
		"failed; 0 for -P.\n",
		DEFAULT_BUFFER_KB, POOL_INIT_KB,
		POOL_START_MIN_KB, POOL_START_MIN_KB, POOL_START_MAX_KB, DEFAULT_POOL_KB, MAX_POOL_KB, TK_CHUNK_MAX / 1024,
		TK_RB_MAX_SLOTS, TK_CONFIG_MAX_BLOCK_MS, STREAMS_MAX);
}

/* Sub-buffer size, sub-buffers per thread and the pool from -b,
 * --subbufs (@nsub, 0: not given) and --pool (@pool_kb, 0: not given). */
static int buffer_geometry(struct rec_options *o, uint32_t nsub,
			   uint32_t pool_kb)
{
	uint64_t sub = DEFAULT_SUBBUF_KB, b = o->buffer_kb;

	if (nsub) {
		sub = b / nsub / 4 * 4;
		if (sub < 4) {
			tk_error("-b %u --subbufs %u: sub-buffers of at least 4 KiB need -b %u",
				 o->buffer_kb, nsub, nsub * 4);
			return -1;
		}
	} else {
		if (b < 2 * sub)
			sub = b / 2 / 4 * 4;
		if (b / sub > TK_RB_MAX_SLOTS)
			sub = (b + TK_RB_MAX_SLOTS - 1) / TK_RB_MAX_SLOTS;
		sub = (sub + 3) / 4 * 4;
	}
	if (sub * 1024 > TK_CHUNK_MAX) {
		tk_error("-b %u: sub-buffers would be over %u KiB (give --subbufs, at most %u)",
			 o->buffer_kb, TK_CHUNK_MAX / 1024, TK_RB_MAX_SLOTS);
		return -1;
	}
	o->subbuf_kb = (uint32_t)sub;
	o->slots = nsub ? nsub : (uint32_t)(b / sub);
	if (!pool_kb)
		pool_kb = b > DEFAULT_POOL_KB ? (uint32_t)b : DEFAULT_POOL_KB;
	if (pool_kb < b) {
		tk_error("--pool %u: less than one thread's buffer (-b %u)", pool_kb,
			 o->buffer_kb);
		return -1;
	}
	o->pool_max = (uint32_t)(pool_kb / sub);
	o->pool_init = (uint32_t)(POOL_INIT_KB / sub);
	if (o->pool_init < 2)
		o->pool_init = 2;
	if (o->pool_init > o->pool_max)
		o->pool_init = o->pool_max;
	/* the recorded command (or -P's process): what the recorder makes
	 * at once for the others, made before its main() runs */
	o->pool_init_first = (uint32_t)(POOL_START_MIN_KB / sub);
	if (o->pool_init_first < o->pool_init)
		o->pool_init_first = o->pool_init;
	if (o->pool_init_first > o->pool_max)
		o->pool_init_first = o->pool_max;
	/* what the recorder makes at once: -b, up to POOL_START_MAX_KB (a
	 * bigger -b is made as bursts take it) */
	o->pool_start = (uint32_t)((b < POOL_START_MIN_KB ? POOL_START_MIN_KB
				    : b > POOL_START_MAX_KB ? POOL_START_MAX_KB : b) / sub);
	if (o->pool_start > o->pool_max)
		o->pool_start = o->pool_max;
	o->streams_max = STREAMS_MAX;
	return 0;
}

static int add_rule(struct rec_options *o, const char *pattern, const char *filter)
{
	struct rec_rule *r = realloc(o->rules, (o->nrules + 1) * sizeof(*r));

	if (!r)
		return -ENOMEM;
	o->rules = r;
	r[o->nrules].pattern = strdup(pattern);
	r[o->nrules].filter = filter ? strdup(filter) : NULL;
	o->nrules++;
	return 0;
}

/* Whose -l, -n and -g these are: the tracer of the last -p. */
enum func_owner { OWNER_NONE, OWNER_USER, OWNER_KERNEL, OWNER_BARE };

static void list_add(struct rec_list *l, const char *value)
{
	const char **grown = realloc(l->item, (l->count + 1) * sizeof(*grown));

	if (!grown)
		return;
	l->item = grown;
	l->item[l->count++] = value;
}

/* The -l, -n and -g lists of tracer @owner. */
static struct rec_func_lists owner_lists(struct rec_options *o, enum func_owner owner)
{
	struct rec_func_lists user = { o->func_filter, o->func_notrace, o->graph_funcs };

	return owner == OWNER_KERNEL ? o->kernel_funcs
	       : owner == OWNER_BARE ? o->bare_funcs : user;
}

static void owner_lists_set(struct rec_options *o, enum func_owner owner,
			    const struct rec_func_lists *l)
{
	if (owner == OWNER_KERNEL) {
		o->kernel_funcs = *l;
	} else if (owner == OWNER_BARE) {
		o->bare_funcs = *l;
	} else {
		o->func_filter = l->filter;
		o->func_notrace = l->notrace;
		o->graph_funcs = l->graph;
	}
}

/* -l, -n or -g (@c) for the tracer the last -p chose; before any -p, for
 * the first one (kept with the user's meanwhile: add_tracer moves them). */
static void add_func_glob(struct record *r, int c, const char *glob)
{
	enum func_owner owner = r->owner == OWNER_NONE ? OWNER_USER : r->owner;
	struct rec_func_lists l = owner_lists(&r->opt, owner);

	list_add(c == 'l' ? &l.filter : c == 'n' ? &l.notrace : &l.graph, glob);
	owner_lists_set(&r->opt, owner, &l);
}

/* -p NAME, user:NAME or kernel:NAME. */
static int add_tracer(struct record *r, const char *arg)
{
	struct rec_options *o = &r->opt;
	enum func_owner owner;
	const char **slot;
	const char *name = arg;

	if (!strncmp(arg, "user:", 5)) {
		name = arg + 5;
		if (strcmp(name, "function") && strcmp(name, "function_graph")) {
			tk_error("-p '%s': user code has the tracers function and function_graph",
				 arg);
			return -1;
		}
		slot = &o->user_tracer;
		owner = OWNER_USER;
	} else if (!strncmp(arg, "kernel:", 7)) {
		name = arg + 7;
		slot = &o->kernel_tracer;
		owner = OWNER_KERNEL;
	} else if (!strcmp(arg, "function") || !strcmp(arg, "function_graph")) {
		slot = &o->bare_tracer;
		owner = OWNER_BARE;
	} else {
		slot = &o->kernel_tracer;
		owner = OWNER_KERNEL;
	}
	if (!*name) {
		tk_error("-p '%s': no tracer named", arg);
		return -1;
	}
	if (*slot && strcmp(*slot, name)) {
		tk_error("-p '%s': a tracer ('%s') is already chosen there", arg, *slot);
		return -1;
	}
	*slot = name;
	if (r->owner == OWNER_NONE && owner != OWNER_USER) {
		/* the globs given before the first -p are this tracer's */
		struct rec_func_lists pending = owner_lists(o, OWNER_USER), none = { 0 };

		owner_lists_set(o, owner, &pending);
		owner_lists_set(o, OWNER_USER, &none);
	}
	r->owner = owner;
	return 0;
}

/* record without options. */
static void options_init(struct record *r)
{
	r->opt.outdir = TK_DEFAULT_OUTPUT;
	r->opt.buffer_kb = DEFAULT_BUFFER_KB;
	r->opt.follow_fork = true;
	r->child_status = -1;
	r->sigfd = -1;
}

/* What the options leave to record, once they are all read; checked
 * together.  0, or -1 after saying why. */
static int options_done(struct record *r)
{
	struct rec_options *o = &r->opt;
	bool tsc;

	if (!o->argv && !o->attach_pid) {
		tk_error("nothing to record: give a command after '--' or -P PID");
		return -1;
	}
	if (o->argv && o->attach_pid) {
		tk_error("give either a command or -P PID, not both");
		return -1;
	}
	if (buffer_geometry(o, r->nsub, r->pool_kb) < 0)
		return -1;
	if (o->block_ms && o->overwrite) {
		tk_error("--block is for discard mode: with --overwrite a writer never lacks room");
		return -1;
	}
	if (o->nrules == 0)
		add_rule(o, "all", NULL);
	if (clock_choose(&tsc, r->clock_why, sizeof(r->clock_why)) < 0) {
		tk_error("%s", r->clock_why);
		return -1;
	}
	o->clock_mono = !tsc;
	if (o->only_command && o->attach_pid) {
		tk_error("-F is for a command; -P PID already limits the kernel's events to PID");
		return -1;
	}
	return 0;
}

/* -b, --subbufs, --pool, --block as @b says (options.h). */
static void buffers_set(struct record *r, const struct opt_buffers *b)
{
	r->opt.buffer_kb = b->buffer_kb ? b->buffer_kb : DEFAULT_BUFFER_KB;
	r->buffer_given = b->buffer_kb != 0;
	r->nsub = b->nsub;
	r->pool_kb = b->pool_kb;
	r->opt.block_ms = b->block_ms;
}

static int parse_options(struct record *r, int argc, char **argv)
{
	struct rec_options *o = &r->opt;
	struct opt_parser p;
	struct opt_rules rules = { 0 };
	struct opt_buffers buf = { 0 };
	unsigned long v;
	int c, took;

	options_init(r);
	opt_init(&p, "record");
	while ((c = opt_next(&p, argc, argv)) != -1) {
		if ((took = opt_buffers_take(&buf, c, optarg)) < 0)
			goto fail;
		if (took)
			continue;
		switch (c) {
		case 'o':
			o->outdir = optarg;
			break;
		case 'e':
		case 'f':
			if (opt_rules_add(&rules, c, optarg) < 0)
				goto fail;
			break;
		case OPT_KERNEL_BUFFER:
			if (!opt_kernel_kb(optarg, &o->kernel_buffer_kb))
				goto fail;
			break;
		case 'P':
			if (!opt_pid(optarg, &o->attach_pid))
				goto fail;
			break;
		case OPT_OVERWRITE:
			o->overwrite = true;
			break;
		case OPT_NO_FOLLOW:
			o->follow_fork = false;
			break;
		case OPT_FORCE:
			r->force = true;
			break;
		case 'p':
			if (add_tracer(r, optarg) < 0)
				goto fail;
			break;
		case 'l':
		case 'n':
		case 'g':
			add_func_glob(r, c, optarg);
			break;
		case OPT_MAX_GRAPH_DEPTH:
			if (!opt_uint(optarg, 1u << 16, &v) || v == 0) {
				tk_error("--max-graph-depth '%s': must be a number from 1", optarg);
				goto fail;
			}
			o->max_graph_depth = (unsigned)v;
			break;
		case OPT_FUNC_STACK:
			o->func_stack = true;
			break;
		case OPT_STACK:
			o->kernel_stack = true;
			break;
		case OPT_USTACK:
			o->user_stack = true;
			break;
		case OPT_NO_LIBCALL:
			o->no_libcall = true;
			break;
		case 'F':
			o->only_command = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			r->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			goto fail;
		}
	}
	for (unsigned i = 0; i < rules.count; i++)
		add_rule(o, rules.rule[i].pattern, rules.rule[i].filter);
	opt_rules_free(&rules);
	if (optind < argc)
		o->argv = argv + optind;
	if (!opt_buffers_done(&buf, o->argv))
		return -1;
	buffers_set(r, &buf);
	return options_done(r);
fail:
	opt_rules_free(&rules);
	return -1;
}


/* The events in the tk_meta sections of @m. */
static void collect_events(const struct tk_elf_modules *m,
			   struct tk_event_info **events, unsigned *count)
{
	*events = NULL;
	*count = 0;
	for (unsigned i = 0; i < m->count; i++) {
		const char *p = m->module[i].meta, *end = p + m->module[i].size;
		struct tk_event_info ev, *grown;

		while (tk_meta_next(&p, end, &ev) == 0) {
			grown = realloc(*events, (*count + 1) * sizeof(**events));
			if (!grown) {
				tk_event_info_free(&ev);
				continue;
			}
			*events = grown;
			(*events)[(*count)++] = ev;
		}
	}
}

/* Each filter must compile for some event its pattern names (those
 * without its fields are not recorded: filter-check.h). */
static int check_filter(const struct rec_rule *rule,
			const struct tk_event_info *events, unsigned count)
{
	struct filter_check fc = { 0 };
	char msg[512];

	for (unsigned j = 0; j < count && rule->filter; j++) {
		struct tk_filter_error fe;
		struct tk_filter *f;

		if (!tk_pattern_match(rule->pattern, events[j].full_name))
			continue;
		if (tk_filter_compile(rule->filter, events[j].fields,
				      events[j].nfields, &f, &fe) < 0) {
			filter_check_note(&fc, events[j].full_name, &fe);
			continue;
		}
		filter_check_note(&fc, events[j].full_name, NULL);
		tk_filter_free(f);
	}
	if (rule->filter && filter_check_result(&fc, rule->filter, msg, sizeof(msg)) < 0) {
		tk_error("%s", msg);
		return -EINVAL;
	}
	return 0;
}

/* Whether @pat's provider part is exactly one of the program's providers:
 * then it is the program's pattern, and the kernel is not asked. */
static bool names_user_provider(const char *pat, const struct tk_event_info *events,
				unsigned count)
{
	size_t n = strcspn(pat, ":");

	for (unsigned j = 0; j < count; j++)
		if (strlen(events[j].provider) == n &&
		    !strncmp(events[j].provider, pat, n))
			return true;
	return false;
}

/* An -e that names nothing: say so, with the nearest name we know.  Its
 * provider part is one of the program's providers or is neither that
 * nor a kernel system (unknown_kernel_event() has those). */
static void unknown_event(struct record *r, const char *pat, const char **names,
			  unsigned count, bool links, bool provider)
{
	const char *near = names ? tk_closest_name(pat, names, count) : NULL;
	const char *force = links ? " (--force records anyway)" : "";
	int n = (int)strcspn(pat, ":");

	if (provider)
		tk_error("unknown event '%s'%s%s%s%s", pat,
			 near ? " (did you mean '" : "", near ? near : "",
			 near ? "'?)" : "", force);
	else if (r->kernel.fs_errno)
		tk_error("%s", r->kernel.fs_error); /* the kernel could not be asked */
	else
		tk_error("unknown event '%s': '%.*s' is neither a kernel event system nor a provider of '%s'%s",
			 pat, n, pat, r->opt.argv[0], force);
}

/* An -e whose system is the kernel's but that names none of its events:
 * an error even with --force (it cannot be a user event). */
static void unknown_kernel_event(struct record *r, const char *pat)
{
	const char *near = record_kernel_closest(&r->kernel, pat);

	tk_error("unknown kernel event '%s'%s%s%s", pat,
		 near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
}

/*
 * Sort the -e patterns into the program's (user) and the kernel's, and
 * check them before anything runs.  @events are the program's events
 * (@known: read from its ELF files; not for a script or record -P).  A
 * pattern can be both; one that is neither is an error (with --force it
 * stays a user pattern: a library loaded later may define it), except
 * that a pattern of a kernel system is never a user one.
 */
static int sort_rules(struct record *r, const struct tk_event_info *events,
		      unsigned count, bool known, bool links)
{
	struct rec_options *o = &r->opt;
	const char **names = calloc(count + 1, sizeof(*names));
	unsigned kept = 0;
	int ret = 0;

	r->parsed = malloc(o->nrules * sizeof(*o->rules));
	if (!names || !r->parsed) {
		free(names);
		return -ENOMEM;
	}
	memcpy(r->parsed, o->rules, o->nrules * sizeof(*o->rules));
	r->nparsed = o->nrules;
	for (unsigned j = 0; j < count; j++)
		names[j] = events[j].full_name;
	for (unsigned i = 0; i < o->nrules && !ret; i++) {
		struct rec_rule *rule = &o->rules[i];
		bool user = !strcmp(rule->pattern, "all"), kernel = false;
		bool provider = known && names_user_provider(rule->pattern, events, count);

		if (tk_probe_spec_is(rule->pattern)) {
			if (record_kernel_add_probe(&r->kernel, rule, r->program,
						    o->attach_pid, o->user_stack, o->quiet) < 0)
				ret = -EINVAL;
			continue;
		}
		ret = check_filter(rule, events, count);
		if (ret)
			break;
		for (unsigned j = 0; j < count && !user; j++)
			user = tk_pattern_match(rule->pattern, events[j].full_name);
		if (strcmp(rule->pattern, "all") && !provider)
			kernel = record_kernel_lookup(&r->kernel, rule->pattern) > 0;
		if (kernel && record_kernel_add_rule(&r->kernel, rule) < 0)
			ret = -ENOMEM;
		if (!user && !kernel && !provider &&
		    record_kernel_has_system(&r->kernel, rule->pattern)) {
			unknown_kernel_event(r, rule->pattern);
			ret = -ENOENT;
		} else if (!user && !kernel) {
			if (known && !r->force) {
				unknown_event(r, rule->pattern, names, count, links,
					      provider);
				ret = -ENOENT;
			}
			user = true;
		}
		if (user)
			o->rules[kept++] = *rule;
	}
	o->nrules = kept;
	free(names);
	return ret;
}

/* Check -e patterns against the program's ELF files before running it. */
static int precheck_program(struct record *r)
{
	struct tk_elf_modules m;
	struct tk_event_info *events = NULL;
	char err[512];
	unsigned count = 0;
	bool links = false, known;
	int ret;

	/* a script, say, or record -P: nothing to check the user side with */
	known = r->program &&
		tk_elf_modules_read(r->program, true, &m, err, sizeof(err)) == 0;
	if (known) {
		collect_events(&m, &events, &count);
		for (unsigned i = 0; i < m.count; i++)
			links |= m.module[i].links_tracekit || m.module[i].meta;
	}
	ret = sort_rules(r, events, count, known, links);
	r->no_user_events = known && !links;
	for (unsigned i = 0; i < count; i++)
		tk_event_info_free(&events[i]);
	free(events);
	if (known)
		tk_elf_modules_free(&m);
	return ret;
}

static bool has_manifest(const char *dir)
{
	char *manifest;
	bool yes;

	if (asprintf(&manifest, "%s/" TK_MANIFEST_NAME, dir) < 0)
		return false;
	yes = access(manifest, F_OK) == 0;
	free(manifest);
	return yes;
}

/* Decide where to write: a new directory, or beside an old trace that is
 * replaced at the end. */
static int prepare_output(struct record *r)
{
	char *dir = strdup(r->opt.outdir);
	size_t n = dir ? strlen(dir) : 0;
	struct stat st;

	if (!dir)
		return -ENOMEM;
	/* "t/" names t: the new trace goes beside it, not into it */
	while (n > 1 && dir[n - 1] == '/')
		dir[--n] = '\0';
	r->final_dir = dir;
	if (stat(dir, &st) == 0) {
		bool is_trace;

		if (!S_ISDIR(st.st_mode)) {
			tk_error("output '%s' exists and is not a directory", dir);
			return -EEXIST;
		}
		is_trace = has_manifest(dir);
		if (!is_trace && rmdir(dir) < 0) {
			tk_error("output directory '%s' exists and is not a tracekit trace",
				 dir);
			return -EEXIST;
		}
		r->replace = is_trace;
	}
	if (r->replace) {
		if (asprintf(&r->work_dir, "%s.new-%d", dir, (int)getpid()) < 0)
			return -ENOMEM;
	} else {
		r->work_dir = strdup(dir);
	}
	if (mkdir(r->work_dir, 0700) < 0) {
		tk_error("cannot create output directory '%s': %s", r->work_dir,
			 strerror(errno));
		return -errno;
	}
	for (int i = 0; i < 2; i++) {
		char *sub;

		if (asprintf(&sub, "%s/%s", r->work_dir, i ? "user" : "events") < 0)
			return -ENOMEM;
		if (mkdir(sub, 0700) < 0) {
			tk_error("cannot create '%s': %s", sub, strerror(errno));
			free(sub);
			return -errno;
		}
		free(sub);
	}
	r->opt.outdir = r->work_dir;
	return 0;
}

static int commit_output(struct record *r)
{
	char *old;

	if (!r->replace)
		return 0;
	if (asprintf(&old, "%s.old-%d", r->final_dir, (int)getpid()) < 0)
		return -ENOMEM;
	if (rename(r->final_dir, old) < 0 || rename(r->work_dir, r->final_dir) < 0) {
		tk_error("cannot move the trace into '%s': %s (it is in '%s')",
			 r->final_dir, strerror(errno), r->work_dir);
		free(old);
		return -errno;
	}
	tk_remove_tree(old);
	free(old);
	return 0;
}

/* The recording failed: a complete trace that was at the output stays as
 * it was, what this run got stays beside it; said, and whether report
 * can read it (not without its manifest: the disk was full, say). */
static int keep_old_trace(const struct record *r)
{
	const char *unreadable = has_manifest(r->work_dir) ? NULL
				 : "without a manifest (report cannot read it)";

	if (r->replace && unreadable)
		tk_error("'%s' is kept as it was; what this recording wrote is in '%s', %s",
			 r->final_dir, r->work_dir, unreadable);
	else if (r->replace)
		tk_error("'%s' is kept as it was; this recording is in '%s'",
			 r->final_dir, r->work_dir);
	else if (unreadable)
		tk_error("what this recording wrote is in '%s', %s", r->work_dir,
			 unreadable);
	return TK_EXIT_FAILURE;
}

/* What the held command does in the child before its exec: signals as
 * the user had them (they are blocked until here: nothing interrupts the
 * hold), the session to join, the function tracer's environment. */
struct command_env {
	struct record *r;
	struct rec_session *s;
	const sigset_t *oldmask;
};

static void command_before_exec(void *arg)
{
	struct command_env *e = arg;

	sigaction(SIGINT, &e->r->saved_int, NULL);
	sigaction(SIGTERM, &e->r->saved_term, NULL);
	sigprocmask(SIG_SETMASK, e->oldmask, NULL);
	setenv(TK_SESSION_ENV, e->s->sock_name, 1);
	functrace_child_env(&e->r->functrace, &e->r->opt);
}

/* What record exits with once the trace is complete: the command's own
 * status, 128 + N when signal N killed it (as a shell, time or strace
 * report it); 0 for -P. */
static int command_status(const struct record *r)
{
	if (r->child_status < 0)
		return 0;
	if (WIFSIGNALED(r->child_status))
		return 128 + WTERMSIG(r->child_status);
	return WIFEXITED(r->child_status) ? WEXITSTATUS(r->child_status) : 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One line once the recording runs, so that a long one is not mistaken
 * for a hang. */
static void say_recording(const struct record *r, const struct rec_session *s)
{
	const struct rec_process *p = s->nprocs ? s->procs[0] : NULL;

	if (r->opt.quiet)
		return;
	if (r->opt.argv)
		fprintf(stderr, "tracekit: recording '%s' (pid %d) to '%s'; Ctrl-C to stop\n",
			r->opt.argv[0], (int)r->child, r->final_dir);
	else if (p && p->hello)
		fprintf(stderr, "tracekit: recording process %d (%s) to '%s'; Ctrl-C to stop\n",
			(int)r->opt.attach_pid, p->comm, r->final_dir);
	else
		fprintf(stderr, "tracekit: recording process %d to '%s'; Ctrl-C to stop\n",
			(int)r->opt.attach_pid, r->final_dir);
}

/* Record until the command ends, the process goes away or a signal.  A
 * signal that stops us is passed on to the command, then SIGTERM after
 * STOP_GRACE_MS if it ignored that one (perf record ends its workload so
 * too): the recording is of the command, and what it does until it exits
 * is recorded, for 2 * STOP_GRACE_MS at most. */
static int record_watch(struct record *r, struct rec_session *s, int sigfd,
			pid_t child, struct record_watch *w)
{
	uint64_t stop_at = 0;
	/* record -P: the process must say HELLO in time */
	uint64_t answer_by = r->opt.attach_pid && r->opt.nrules
				     ? now_ms() + TK_CTL_ANSWER_MS : 0;
	bool termed = false;

	uint64_t patch_by = 0, patch_seen = 0;

	if (!answer_by)
		say_recording(r, s);
	watch_tick(w);

	for (;;) {
		struct signalfd_siginfo si;
		int timeout = IDLE_WAIT_US;
		int ret;

		if (!s->nprocs && !stop_at)
			timeout = child > 0 ? NO_USER_POLL_US : ATTACH_POLL_US;
		if (stop_at)
			timeout = STOP_GRACE_MS * 1000 / 10;
		if (timeout > watch_wait_us(w))
			timeout = watch_wait_us(w);
		if ((answer_by || patch_by) && timeout > ANSWER_POLL_US)
			timeout = ANSWER_POLL_US;
		ret = session_poll(s, timeout, sigfd);

		if (ret < 0)
			return ret;
		watch_tick(w);
		if (ret == 1 && read(sigfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM ||
			    si.ssi_signo == SIGHUP) {
				r->interrupted = true;
				if (child <= 0 || stop_at)
					return 0;
				kill(child, (int)si.ssi_signo);
				termed = si.ssi_signo == SIGTERM;
				stop_at = now_ms() + STOP_GRACE_MS;
			}
		}
		if (stop_at && now_ms() > stop_at) {
			if (termed)
				return 0;
			kill(child, SIGTERM);
			termed = true;
			stop_at = now_ms() + STOP_GRACE_MS;
		}
		if (child > 0) {
			siginfo_t end = { .si_pid = 0 };
			int status;

			/* its last name, read before it is reaped */
			if (waitid(P_PID, (id_t)child, &end, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    end.si_pid == child)
				record_kernel_name(&r->kernel, child);
			if (waitpid(child, &status, WNOHANG) == child) {
				if (!r->opt.quiet)
					held_command_say_end(r->opt.argv[0], status);
				r->child_status = status;
				return 0;
			}
		} else if (!r->opt.nrules) {
			/* -P with kernel events only: until the process ends */
			if (kill(r->opt.attach_pid, 0) < 0 && errno == ESRCH)
				return 0;
		} else if (session_connected(s) == 0) {
			return 0;
		} else if (answer_by && session_configured(s)) {
			/* it said HELLO and its events, and they took our
			 * rules: it records now */
			answer_by = 0;
			if (r->opt.user_tracer)
				patch_by = now_ms() + TK_CTL_ANSWER_MS;
			else
				say_recording(r, s);
		} else if (patch_by) {
			/* -P -p: what the function tracer could patch decides;
			 * the objects come in one burst after CONFIG */
			if (!patch_seen && functrace_heard_from(&r->functrace,
								     (uint32_t)r->opt.attach_pid))
				patch_seen = now_ms() + 100;
			if ((patch_seen && now_ms() >= patch_seen) || now_ms() > patch_by) {
				patch_by = 0;
				if (functrace_attach_check(&r->functrace, &r->opt,
							   (uint32_t)r->opt.attach_pid,
							   r->force, s->error,
							   sizeof(s->error)) < 0)
					return -ENOEXEC;
				say_recording(r, s);
			}
		} else if (answer_by && now_ms() > answer_by) {
			ctl_no_answer(r->opt.attach_pid, false, s->error,
				      sizeof(s->error));
			return -ETIMEDOUT;
		}
	}
}

static int record_loop(struct record *r, struct rec_session *s, int sigfd,
		       pid_t child)
{
	struct record_watch w;
	int ret;

	watch_init(&w, s, &r->kernel, r->work_dir,
		   !r->opt.quiet && isatty(STDERR_FILENO));
	ret = record_watch(r, s, sigfd, child, &w);
	watch_end(&w);
	return ret;
}

/* Everything before the first byte is written: the command found, the
 * tracer chosen, the -e patterns sorted into user and kernel ones. */
static int prepare(struct record *r)
{
	char exe[64];
	const char *program = r->program;

	if (r->opt.argv) {
		r->program = held_command_find(r->opt.argv[0], &r->exec_status);
		if (!r->program)
			return -1;
		program = r->program;
	} else {
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)r->opt.attach_pid);
		program = exe;
	}
	if (record_kernel_tracer(&r->opt, program) < 0 ||
	    functrace_record_check(&r->functrace, &r->opt, program, r->force) < 0 ||
	    precheck_program(r) < 0 || record_kernel_check(&r->kernel, &r->opt) < 0)
		return -1;
	if (r->opt.user_stack && !r->kernel.wanted && r->no_user_events) {
		tk_error("--ustack applies to events: '%s' defines no tracekit events; give a kernel event (-e SYSTEM:EVENT) or a kernel tracer (-p)",
			 r->opt.argv[0]);
		return -1;
	}
	if (r->buffer_given && !r->opt.nrules && !r->opt.user_tracer) {
		tk_error("-b sizes the per-thread buffers of user events, and every -e is a kernel event: the kernel's per-CPU buffer is --kernel-buffer KB");
		return -1;
	}
	return 0;
}

/* Start the command (held), the kernel's recording, then let it run. */
static int start(struct record *r, struct rec_session *s, const sigset_t *oldmask,
		 pid_t *child)
{
	struct held_command c = HELD_COMMAND_INIT;
	struct command_env env = { r, s, oldmask };
	int err;

	if (r->opt.argv &&
	    held_command_fork(&c, r->program, r->opt.argv, command_before_exec, &env) < 0) {
		tk_error("cannot run '%s': %s", r->opt.argv[0], strerror(errno));
		return -1;
	}
	if (record_kernel_start(&r->kernel, &r->opt, r->work_dir, c.pid) < 0) {
		if (c.pid > 0)
			held_command_cancel(&c);
		return -1;
	}
	if (c.pid > 0 && (err = held_command_release(&c))) {
		r->exec_status = held_command_cannot_run(r->opt.argv[0], err, NULL);
		return -1;
	}
	*child = c.pid;
	r->child = c.pid;
	return 0;
}

/* The user streams' table when user events were asked for or came, what
 * the function tracer patched, the kernel's per-CPU table, then one line
 * for both. */
static void print_summary(struct record *r, const struct rec_session *s)
{
	char user[96] = "", kernel[96] = "";

	record_kernel_describe(&r->kernel, kernel, sizeof(kernel));
	if (s->nstreams || r->opt.nrules || !kernel[0]) {
		session_print_streams(s, stderr, r->verbose);
		session_describe(s, user, sizeof(user));
	}
	functrace_print_summary(&r->functrace, &r->opt, stderr);
	record_kernel_summary(&r->kernel, stderr);
	if (kernel[0])
		opt_kernel_kb_made(r->opt.kernel_buffer_kb, r->kernel.manifest.buffer_kb);
	if (r->clock_why[0])
		fprintf(stderr, "tracekit: events stamped with CLOCK_MONOTONIC%s: %s\n",
			r->kernel.wanted ? " (kernel events: trace_clock mono)" : "",
			r->clock_why);
	if (r->verbose)
		session_print_work(s, stderr);
	/* Worth a word only when the user side is all there is, and only
	 * once it is known: a command that defines no event may run one
	 * that does (sh -c './prog' execs it, or forks it). */
	if (r->no_user_events && r->opt.nrules && !r->kernel.wanted &&
	    !r->opt.user_tracer && !session_heard_from(s))
		tk_warn("no tracekit events: '%s' defines none (not linked with libtracekit), nor did any program it ran",
			r->opt.argv[0]);
	fprintf(stderr, "tracekit: %s%s%s recorded in '%s'\n", user,
		user[0] && kernel[0] ? " and " : "", kernel, r->final_dir);
}

/* What parse_options, prepare and prepare_output allocated. */
static void record_free(struct record *r)
{
	struct rec_rule *rules = r->parsed ? r->parsed : r->opt.rules;
	unsigned n = r->parsed ? r->nparsed : r->opt.nrules;

	for (unsigned i = 0; i < n; i++) {
		free(rules[i].pattern);
		free(rules[i].filter);
	}
	free(r->parsed);
	free(r->opt.rules);
	free(r->opt.func_filter.item);
	free(r->opt.func_notrace.item);
	free(r->opt.graph_funcs.item);
	free(r->program);
	free((char *)r->final_dir);
	free(r->work_dir);
	functrace_free(&r->functrace);
}

/* Give the signals back as they were before run() took them, and the
 * priority: every way out of run() once it has them.  A signal that came
 * after the recording ended was for it, and is dropped. */
static int unwind(struct record *r, int ret)
{
	struct signalfd_siginfo si;

	while (read(r->sigfd, &si, sizeof(si)) == sizeof(si))
		;
	close(r->sigfd);
	r->sigfd = -1;
	sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
	sigaction(SIGINT, &r->saved_int, NULL);
	sigaction(SIGTERM, &r->saved_term, NULL);
	setpriority(PRIO_PROCESS, 0, r->saved_nice);
	return ret;
}

/* Record as r->opt says.  Returns 0 once the trace is complete (the
 * command's wait status in r->child_status), TK_EXIT_FAILURE after
 * saying why it is not. */
static int run(struct record *r)
{
	struct rec_session s = { .listen_fd = -1, .wake_fd = -1, .reserve_fd = -1 };
	sigset_t mask;
	pid_t child = 0;
	int ret;
	bool user = true;

	/* Ours to handle even when started in the background (where the
	 * shell ignores SIGINT); an ignored SIGHUP (nohup) stays ignored.
	 * Taken first: a Ctrl-C while we prepare or attach stops the
	 * recording as soon as it can, and nothing is left half made. */
	sigaction(SIGINT, &(struct sigaction){ .sa_handler = SIG_DFL }, &r->saved_int);
	sigaction(SIGTERM, &(struct sigaction){ .sa_handler = SIG_DFL }, &r->saved_term);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &r->oldmask);
	r->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	errno = 0;
	r->saved_nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		r->saved_nice = 0;
	if (prepare(r) < 0 || prepare_output(r) < 0) {
		record_kernel_free(&r->kernel);
		return unwind(r, r->exec_status ? r->exec_status : TK_EXIT_FAILURE);
	}
	/* -P with kernel events only: the process need not be instrumented */
	if (r->opt.attach_pid && !r->opt.nrules)
		user = false;
	if (session_init(&s, &r->opt, &r->functrace) < 0) {
		tk_error("%s", s.error);
		goto fail;
	}
	if (r->opt.attach_pid && user &&
	    (ret = session_attach(&s, r->opt.attach_pid)) < 0) {
		/* no control socket (ECONNREFUSED: an abstract name nobody
		 * listens on): the function tracer's runtime can be given at
		 * the program's start (docs/functrace.md) */
		if (r->opt.user_tracer && ret == -ECONNREFUSED &&
		    kill(r->opt.attach_pid, 0) == 0)
			tk_error("%s; for -p %s start it with the runtime: "
				 "LD_PRELOAD=libtracekit.so.0 TRACEKIT_FUNCTRACE=1 in its "
				 "environment (unless it links libtracekit), or record it "
				 "from its start: tracekit record -p %s -- CMD",
				 s.error, r->opt.user_tracer, r->opt.user_tracer);
		else
			tk_error("%s", s.error);
		goto fail;
	}
	if (start(r, &s, &r->oldmask, &child) < 0)
		goto fail;
	/* Ahead of the writers when CPUs are scarce, where we may (the
	 * command, already started, keeps its own priority). */
	if (setpriority(PRIO_PROCESS, 0, RECORDER_NICE) < 0 && !r->opt.quiet &&
	    getuid() == 0)
		tk_warn("cannot raise the recorder's priority: %s", strerror(errno));
	ret = record_loop(r, &s, r->sigfd, child);
	watch_renames(&s); /* the threads still there */
	if (ret == -ENOEXEC) {
		/* nothing of what was asked can be recorded */
		session_stop(&s);
		tk_error("%s", s.error);
		goto fail;
	}
	if (ret == 0 && r->opt.attach_pid && user && !session_heard_from(&s)) {
		if (r->interrupted) {
			/* stopped before it answered: nothing of it, said */
			if (!r->opt.quiet)
				tk_warn("stopped before process %d answered: none of its events recorded",
					(int)r->opt.attach_pid);
		} else {
			ctl_no_answer(r->opt.attach_pid, true, s.error, sizeof(s.error));
			ret = -EPERM;
		}
	}
	session_stop(&s);
	if (ret < 0 && s.nstreams == 0 && !record_kernel_capturing(&r->kernel)) {
		/* nothing recorded: a bad rule stopped us before anything ran */
		tk_error("%s", s.error);
		goto fail;
	}
	if (ret < 0 || s.failed) {
		/* kept, and said: what the kernel recorded meanwhile is not lost */
		tk_error("%s", s.error);
		s.failed = true;
	}
	if (record_kernel_stop(&r->kernel, &s, r->work_dir) < 0)
		s.failed = true;
	/* after the kernel's side: --ustack adds the objects it saw mapped */
	if (functrace_save_symbols(&r->functrace, &r->opt, r->opt.outdir) < 0)
		s.failed = true;
	if (session_finish(&s) < 0) {
		tk_error("%s", s.error);
		session_free(&s);
		record_kernel_free(&r->kernel);
		return unwind(r, keep_old_trace(r));
	}
	if (!r->opt.quiet)
		print_summary(r, &s);
	ret = s.failed ? TK_EXIT_FAILURE : 0;
	session_free(&s);
	record_kernel_free(&r->kernel);
	if (ret)
		return unwind(r, keep_old_trace(r));
	if (commit_output(r) < 0)
		return unwind(r, TK_EXIT_FAILURE);
	return unwind(r, 0);
fail:
	session_free(&s);
	record_kernel_free(&r->kernel);
	tk_remove_tree(r->work_dir);
	return unwind(r, r->exec_status ? r->exec_status : TK_EXIT_FAILURE);
}

int cmd_record(int argc, char **argv)
{
	struct record r;
	int ret;

	memset(&r, 0, sizeof(r));
	if (parse_options(&r, argc, argv) < 0)
		ret = TK_EXIT_USAGE;
	else if (!(ret = run(&r)))
		ret = command_status(&r);
	record_free(&r);
	return ret;
}

int record_run(const struct record_request *q, int *status)
{
	struct record r;
	int ret = 0;

	memset(&r, 0, sizeof(r));
	options_init(&r);
	r.opt.outdir = q->outdir;
	r.opt.argv = q->argv;
	r.opt.quiet = q->quiet;
	if (q->buffers)
		buffers_set(&r, q->buffers);
	for (unsigned i = 0; i < q->nevents && !ret; i++)
		ret = add_rule(&r.opt, q->events[i], NULL);
	if (ret < 0)
		tk_error("out of memory");
	else
		ret = options_done(&r) < 0 ? TK_EXIT_USAGE : run(&r);
	*status = r.child_status;
	record_free(&r);
	return ret;
}
