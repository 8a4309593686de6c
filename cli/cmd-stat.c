/* SPDX-License-Identifier: MIT */
/*
 * cmd-stat.c - tracekit stat: how many times events fire, as perf stat
 * answers "how many kmalloc calls?".
 *
 *   tracekit stat -e EVENT... [-a] [-d SECONDS] [--sort] [-b KB] [--subbufs N]
 *                 [--pool KB] [--block[=MS]] [-- CMD [ARG]...]
 *
 * Kernel events are counted by the kernel (kernel/counters.h): for CMD
 * and the children it forks, or with -a on every CPU while CMD runs, for
 * SECONDS, or until Ctrl-C.  User events (of a tracekit-instrumented
 * CMD) are counted by recording them with record's engine (record.h, as
 * `tracekit record -q -o TMPDIR -e ... -- CMD` would), then reading the
 * trace and removing it; record's buffer options (options.h
 * opt_buffers) size its buffers.  An EVENT that names kernel events is a kernel
 * one; any other is a user one.
 *
 * Counts go to stderr, as perf stat's do, so that CMD's output stays its
 * own: one line per event (count, name), then the time elapsed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "format/probes.h"
#include "kernel/counters.h"
#include "format/event-info.h"
#include "kernel/kernel.h"
#include "common/pattern.h"
#include "format/stream-read.h"
#include "format/trace.h"
#include "held-command.h"
#include "options.h"
#include "record.h"

/* -d up to a year; for longer, no -d counts until Ctrl-C */
#define MAX_SECONDS 31536000

struct stat_opts {
	const char **events;
	unsigned nevents;
	bool all_cpus;
	bool sort;
	double seconds;
	char **cmd;
	struct opt_buffers buf; /* record's, for the user events */
	bool buf_given;
};

/* One line of the result. */
struct count {
	const char *name;
	uint64_t n;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracekit stat -e EVENT... [-a] [-d SECONDS] [--sort] [-b KB] [--subbufs N]\n"
		"                    [--pool KB] [--block[=MS]] [-- CMD [ARG]...]\n\n"
		"  -e EVENT     kernel event(s) SYSTEM:EVENT, SYSTEM or a glob\n"
		"               ('syscalls:sys_enter_*'), or user events of CMD (app:*);\n"
		"               repeatable\n"
		"  -a           count kernel events on every CPU, not only CMD's\n"
		"  -d SECONDS   with -a and no CMD: count for SECONDS (default: until Ctrl-C)\n"
		"  --sort       most frequent first (default: by name)\n\n"
		"User events are counted by recording them, as tracekit record does;\n"
		"a burst larger than their buffers loses events (said: the counts are\n"
		"then lower bounds). These size the buffers as record's do:\n");
	opt_buffers_usage(f, false);
	fprintf(f, "(--block counts every event, at the cost of writers waiting.)\n");
}

static int parse_options(struct stat_opts *o, int argc, char **argv)
{
	struct opt_parser p;
	int c;

	opt_init(&p, "stat");
	while ((c = opt_next(&p, argc, argv)) != -1) {
		int took = opt_buffers_take(&o->buf, c, optarg);

		if (took < 0)
			return -1;
		o->buf_given |= took;
		if (took)
			continue;
		switch (c) {
		case 'e': {
			const char **grown = realloc(o->events, (o->nevents + 1) * sizeof(*grown));

			if (!grown)
				return -1;
			o->events = grown;
			o->events[o->nevents++] = optarg;
			break;
		}
		case 'a':
			o->all_cpus = true;
			break;
		case 'd': {
			char *end;

			o->seconds = strtod(optarg, &end);
			/* !(x > 0) refuses NaN too */
			if (end == optarg || *end || !(o->seconds > 0) ||
			    o->seconds > MAX_SECONDS) {
				tk_error("-d '%s': give a number of seconds, more than 0 and at most %d",
					 optarg, MAX_SECONDS);
				return -1;
			}
			break;
		}
		case OPT_SORT:
			o->sort = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	if (!opt_buffers_done(&o->buf, o->cmd))
		return -1;
	if (!o->nevents) {
		tk_error("stat needs an event to count (-e SYSTEM:EVENT)");
		return -1;
	}
	if (!o->cmd && !o->all_cpus) {
		tk_error("stat needs a command to run (-- CMD) or -a (every CPU)");
		return -1;
	}
	if (o->seconds && o->cmd) {
		tk_error("-d is for counting without a command; the command's run sets the time");
		return -1;
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void child_signals(void *arg)
{
	(void)arg;
	signal(SIGINT, SIG_DFL);
}

/* Fork @cmd held before exec, so that the counters hold its pid first;
 * -1 (said, *@ret the status to exit with) when it cannot. */
static int fork_command(struct held_command *c, char **cmd, int *ret)
{
	char *path = held_command_find(cmd[0], ret);
	int fail;

	if (!path)
		return -1;
	fail = held_command_fork(c, path, cmd, child_signals, NULL);
	if (fail)
		tk_error("cannot fork: %s", strerror(errno));
	free(path);
	return fail ? -1 : 0;
}

/* Let it exec and wait for it; -1 (said, *@ret set) if exec failed. */
static int run_command(struct held_command *c, char **cmd, int *status, int *ret)
{
	int err = held_command_release(c);

	if (err) {
		*ret = held_command_cannot_run(cmd[0], err, NULL);
		return -1;
	}
	while (waitpid(c->pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

static int count_cmp(const void *a, const void *b)
{
	const struct count *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void print_cmd(char **cmd)
{
	for (char **a = cmd; *a; a++)
		fprintf(stderr, "%s%s", a == cmd ? "" : " ", *a);
}

static int count_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct count *)a)->name, ((const struct count *)b)->name);
}

static void print_result(const struct stat_opts *o, struct count *c, unsigned n,
			 double elapsed, uint64_t lost)
{
	qsort(c, n, sizeof(*c), o->sort ? count_cmp : count_name_cmp);
	fprintf(stderr, "\n Event counts for ");
	if (o->cmd) {
		fprintf(stderr, "'");
		print_cmd(o->cmd);
		fprintf(stderr, "'%s", o->all_cpus ? " (system-wide)" : "");
	} else {
		fprintf(stderr, "the system");
	}
	fprintf(stderr, ":\n\n");
	for (unsigned i = 0; i < n; i++)
		fprintf(stderr, "%17" PRIu64 "      %s\n", c[i].n, c[i].name);
	if (lost)
		fprintf(stderr, "\n %" PRIu64 " user events were lost: their counts are lower bounds\n",
			lost);
	fprintf(stderr, "\n %14.9f seconds time elapsed\n\n", elapsed);
}

/* ----------------------------------------------------- user events */

/* The trace in record_user's directory. */
#define USER_TRACE "trace"

/* Record CMD's user events @pats into a temporary trace (record.h): a
 * private directory made in $TMPDIR (default /tmp), the trace USER_TRACE
 * made by record inside it, so that the name is never free for another
 * to take.  Returns the directory (to remove), or NULL after an error
 * (said; *@ret record's exit status then). */
static char *record_user(const struct stat_opts *o, char **pats, unsigned npats,
			 int *status, int *ret)
{
	const char *tmp = getenv("TMPDIR");
	struct record_request q = {
		.events = (const char *const *)pats,
		.nevents = npats,
		.argv = o->cmd,
		.quiet = true,
		.buffers = &o->buf,
	};
	char *dir, *trace = NULL;

	if (asprintf(&dir, "%s/tracekit-stat.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
		tk_error("out of memory");
		return NULL;
	}
	if (!mkdtemp(dir)) {
		tk_error("cannot make a temporary trace directory in '%s': %s",
			 tmp && *tmp ? tmp : "/tmp", strerror(errno));
		free(dir);
		return NULL;
	}
	if (asprintf(&trace, "%s/" USER_TRACE, dir) < 0) {
		tk_error("out of memory");
		rmdir(dir);
		free(dir);
		return NULL;
	}
	q.outdir = trace;
	/* a command that fails or is interrupted still has its counts */
	if ((*ret = record_run(&q, status))) {
		/* record said why */
		tk_remove_tree(dir);
		free(dir);
		dir = NULL;
	}
	free(trace);
	return dir;
}

/* Count the user events matching @pats, by name, of the trace that
 * record_user made in @dir. */
static int count_user(const char *dir, char **pats, unsigned npats,
		      struct count **c, unsigned *n, uint64_t *lost)
{
	struct tk_trace t;
	char err[512], *trace;

	if (asprintf(&trace, "%s/" USER_TRACE, dir) < 0) {
		tk_error("out of memory");
		return -1;
	}
	if (tk_trace_read_index(trace, &t, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		free(trace);
		return -1;
	}
	free(trace);
	/* every defined event that a pattern names, zero or not */
	for (unsigned i = 0; i < t.nprocesses; i++)
		for (unsigned j = 0; j < t.processes[i].nevents; j++) {
			const char *name = t.processes[i].events[j].full_name;
			bool want = false, seen = false;

			for (unsigned k = 0; k < npats && !want; k++)
				want = tk_pattern_match(pats[k], name);
			for (unsigned k = 0; k < *n && !seen; k++)
				seen = !strcmp((*c)[k].name, name);
			if (want && !seen) {
				struct count *g = realloc(*c, (*n + 1) * sizeof(*g));

				if (!g)
					return -1;
				*c = g;
				g[*n].name = strdup(name);
				g[(*n)++].n = 0;
			}
		}
	for (unsigned i = 0; i < t.nstreams; i++) {
		struct tk_stream_reader rd;
		int ret;

		*lost += tk_stream_lost(&t.streams[i]);
		if (tk_stream_open(&rd, &t, &t.streams[i], err, sizeof(err)) < 0) {
			tk_error("%s", err);
			tk_stream_close(&rd);
			continue;
		}
		while ((ret = tk_stream_next(&rd, err, sizeof(err))) > 0)
			for (unsigned k = 0; k < *n; k++)
				if (!strcmp((*c)[k].name, rd.event->full_name)) {
					(*c)[k].n++;
					break;
				}
		if (ret < 0)
			tk_error("%s", err);
		tk_stream_close(&rd);
	}
	tk_trace_free(&t);
	return 0;
}

/* --------------------------------------------------------- the verb */

/* Does @pattern's system part name one of the kernel's systems? */
static bool kernel_system(const char *pattern, char *const *all, unsigned nall)
{
	size_t len = strcspn(pattern, ":");

	for (unsigned j = 0; j < nall; j++)
		if (!strncmp(all[j], pattern, len) && all[j][len] == ':')
			return true;
	return false;
}

/* Split -e patterns into kernel event names (expanded) and user
 * patterns.  With no command, a pattern that names no kernel event is an
 * error (did you mean). */
static int classify(const struct stat_opts *o, char ***knames, unsigned *nk,
		    char ***upats, unsigned *nu)
{
	struct tk_kevents kev;
	char **all;
	unsigned nall;
	int ret;

	for (unsigned i = 0; i < o->nevents; i++)
		if (tk_probe_spec_is(o->events[i])) {
			tk_error("'%s': stat does not count dynamic probes; record them (tracekit record -e '%s' ...) and count with report --count",
				 o->events[i], o->events[i]);
			return -1;
		}
	ret = tk_kevents_read(&kev);
	all = kev.name;
	nall = kev.count;
	if (ret < 0) {
		tk_error("cannot list the kernel's events: %s", strerror(-ret));
		return -1;
	}
	*knames = calloc(nall + 1, sizeof(**knames));
	*upats = calloc(o->nevents + 1, sizeof(**upats));
	if (!*knames || !*upats) {
		tk_kevents_free(&kev);
		return -1;
	}
	for (unsigned i = 0; i < o->nevents; i++) {
		unsigned matched = 0;

		for (unsigned j = 0; j < nall; j++) {
			bool dup = false;

			if (!tk_pattern_match(o->events[i], all[j]))
				continue;
			matched++;
			for (unsigned k = 0; k < *nk && !dup; k++)
				dup = !strcmp((*knames)[k], all[j]);
			if (!dup)
				(*knames)[(*nk)++] = all[j];
		}
		if (matched)
			continue;
		if (!o->cmd || !strchr(o->events[i], ':') ||
		    kernel_system(o->events[i], all, nall)) {
			const char *close = tk_closest_name(o->events[i],
							    (const char *const *)all, nall);

			if (close)
				tk_error("unknown event '%s' (did you mean '%s'?)",
					 o->events[i], close);
			else
				tk_error("unknown event '%s'", o->events[i]);
			/* the names taken so far are freed with the others */
			*nk = 0;
			tk_kevents_free(&kev);
			return -1;
		}
		(*upats)[(*nu)++] = (char *)o->events[i];
	}
	/* keep the names we use, free the others */
	for (unsigned j = 0; j < nall; j++) {
		bool used = false;

		for (unsigned k = 0; k < *nk && !used; k++)
			used = (*knames)[k] == all[j];
		if (!used)
			free(all[j]);
	}
	free(all);
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts o;
	struct tk_tracefs fs;
	struct tk_counters cs;
	struct count *c = NULL;
	char **knames = NULL, **upats = NULL, *udir = NULL, err[512];
	unsigned nk = 0, nu = 0, nc = 0;
	uint64_t lost = 0;
	int ret = TK_EXIT_FAILURE, status = 0;
	struct held_command cmd = HELD_COMMAND_INIT;
	double start;

	memset(&o, 0, sizeof(o));
	memset(&cs, 0, sizeof(cs));
	if (parse_options(&o, argc, argv) < 0) {
		free(o.events);
		return TK_EXIT_USAGE;
	}
	if (tk_tracefs_open(&fs, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		free(o.events);
		return TK_EXIT_FAILURE;
	}
	if (classify(&o, &knames, &nk, &upats, &nu) < 0)
		goto out;
	if (o.buf_given && !nu) {
		tk_error("-b, --subbufs, --pool and --block size user events' buffers; no -e here names a user event");
		ret = TK_EXIT_USAGE;
		goto out;
	}
	if (nu && nk && !o.all_cpus) {
		tk_error("counting user and kernel events of one command together needs -a (the kernel events are then counted system-wide)");
		goto out;
	}
	if (nk && o.cmd && !o.all_cpus) {
		if (fork_command(&cmd, o.cmd, &ret) < 0)
			goto out;
	}
	if (nk && tk_counters_open(&cs, knames, nk, cmd.pid, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		if (cmd.pid > 0)
			held_command_cancel(&cmd);
		goto out;
	}
	signal(SIGINT, on_signal);
	start = now();
	if (o.all_cpus)
		tk_counters_enable(&cs);
	if (nu) {
		udir = record_user(&o, upats, nu, &status, &ret);
		if (!udir)
			goto out;
	} else if (cmd.pid > 0) {
		if (run_command(&cmd, o.cmd, &status, &ret) < 0)
			goto out;
	} else if (o.cmd) {
		if (fork_command(&cmd, o.cmd, &ret) < 0 ||
		    run_command(&cmd, o.cmd, &status, &ret) < 0)
			goto out;
	} else {
		double end = start + o.seconds;

		while (!interrupted && (!o.seconds || now() < end))
			usleep(o.seconds && end - now() < 0.1 ? (useconds_t)((end - now()) * 1e6) + 1
								 : 100000);
	}
	tk_counters_disable(&cs);
	if (o.cmd)
		held_command_say_end(o.cmd[0], status);
	if (tk_counters_read(&cs) < 0) {
		tk_error("cannot read the event counters: %s", strerror(errno));
		goto out;
	}
	c = calloc(nk + 1, sizeof(*c));
	if (!c)
		goto out;
	for (unsigned i = 0; i < nk; i++) {
		c[nc].name = strdup(cs.c[i].name);
		c[nc++].n = cs.c[i].count;
	}
	if (udir && count_user(udir, upats, nu, &c, &nc, &lost) < 0)
		goto out;
	print_result(&o, c, nc, now() - start, lost);
	ret = 0;
	if (o.cmd && WIFEXITED(status) && WEXITSTATUS(status))
		ret = WEXITSTATUS(status); /* as perf stat: the command's status */
out:
	if (udir) {
		tk_remove_tree(udir);
		free(udir);
	}
	tk_counters_close(&cs);
	tk_tracefs_close(&fs);
	for (unsigned i = 0; i < nc; i++)
		free((char *)c[i].name);
	free(c);
	for (unsigned i = 0; i < nk; i++)
		free(knames[i]);
	free(knames);
	free(upats);
	free(o.events);
	return ret;
}
