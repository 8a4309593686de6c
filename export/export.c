/* SPDX-License-Identifier: MIT */
/*
 * export.c - the driver of `tracekit convert` (export.h): the formats'
 * table, and one walk over the trace that hands every event to a format.
 *
 * The output goes to a temporary file beside the one asked for (same
 * directory, so the rename is atomic), renamed into place after the last
 * byte is written; on any error it is removed, so a failed conversion
 * leaves no half file, and an older file of that name stays as it was.
 * Where the file system allows it the file has no name until the end
 * (O_TMPFILE, linked then renamed): a conversion killed by SIGKILL
 * leaves nothing, not a hidden file as large as what it had written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <event-parse.h>
#include "export.h"
#include "format/event-info.h"
#include "format/merge.h"

const struct tk_export_ops *const tk_export_formats[] = {
	&tk_export_chrome,
	&tk_export_folded,
	&tk_export_svg,
	&tk_export_tracedat,
	NULL,
};

const struct tk_export_ops *tk_export_find(const char *name)
{
	for (unsigned i = 0; tk_export_formats[i]; i++)
		if (!strcmp(tk_export_formats[i]->name, name))
			return tk_export_formats[i];
	return NULL;
}

int tk_export_error(struct tk_export *x, const char *fmt, ...)
{
	va_list ap;

	if (!x->error) {
		va_start(ap, fmt);
		if (vasprintf(&x->error, fmt, ap) < 0)
			x->error = NULL;
		va_end(ap);
	}
	return -EINVAL;
}

void tk_export_warn(struct tk_export *x, const char *fmt, ...)
{
	char *line, *all;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (asprintf(&all, "%s%s%s", x->warning ? x->warning : "",
		     x->warning ? "\n" : "", line) >= 0) {
		free(x->warning);
		x->warning = all;
	}
	free(line);
}

uint64_t tk_export_ns_delta(const struct tk_export *x, uint64_t d)
{
	const struct tk_trace_clock *c = &x->trace->clock;

	if (!c->tsc || !c->freq || c->freq == 1000000000u)
		return d;
	/* exactly d * 1e9 / freq, without a 128-bit division */
	return d / c->freq * 1000000000u + d % c->freq * 1000000000u / c->freq;
}

uint64_t tk_export_ns(const struct tk_export *x, uint64_t ts)
{
	const struct tk_trace_clock *c = &x->trace->clock;

	if (ts >= c->tsc_start)
		return c->mono_start + tk_export_ns_delta(x, ts - c->tsc_start);
	return c->mono_start - tk_export_ns_delta(x, c->tsc_start - ts);
}

/* The output file: a temporary name beside the file it replaces, or
 * stdout, or (a device, a FIFO, a socket) the file itself. */
struct output {
	char *path;            /* where the output goes (a symlink followed) */
	char *tmp;
	bool direct;           /* written in place, not renamed over */
	bool anonymous;        /* O_TMPFILE: tmp is named only at the end */
	struct sigaction old[3];
};

/* The temporary file of a conversion that a signal ends is removed. */
static char *volatile cleanup_tmp;
static const int cleanup_signals[3] = { SIGINT, SIGTERM, SIGHUP };

static void cleanup_on_signal(int sig)
{
	char *tmp = cleanup_tmp;

	if (tmp)
		unlink(tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void cleanup_arm(struct output *o)
{
	struct sigaction sa = { .sa_handler = cleanup_on_signal };

	sigemptyset(&sa.sa_mask);
	cleanup_tmp = o->tmp;
	for (unsigned i = 0; i < 3; i++)
		sigaction(cleanup_signals[i], &sa, &o->old[i]);
}

static void cleanup_disarm(struct output *o)
{
	for (unsigned i = 0; i < 3; i++)
		sigaction(cleanup_signals[i], &o->old[i], NULL);
	cleanup_tmp = NULL;
}

/* Whether @path's directory is the trace @dir or inside it: converting
 * into the trace would overwrite what is being read. */
static bool inside_trace(const char *path, const char *dir)
{
	char *copy = strdup(path), *slash, real_out[PATH_MAX], real_dir[PATH_MAX];
	bool inside = false;

	if (!copy)
		return false;
	slash = strrchr(copy, '/');
	if (slash)
		slash[slash == copy] = '\0';
	if (realpath(slash ? copy : ".", real_out) && realpath(dir, real_dir)) {
		size_t n = strlen(real_dir);

		inside = !strncmp(real_out, real_dir, n) &&
			 (real_out[n] == '\0' || real_out[n] == '/');
	}
	free(copy);
	return inside;
}

/* A file that exists and is not a regular one (a device, a FIFO: /dev/null,
 * a pipe read by a viewer) is written in place, as a shell's '>' would. */
static int output_open_direct(struct tk_export *x, struct output *o)
{
	int fd = open(o->path, O_WRONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		int e = errno;

		tk_export_error(x, "cannot open '%s': %s", o->path, strerror(e));
		return -e;
	}
	o->direct = true;
	x->out.fd = fd;
	return 0;
}

/* A file without a name in @o->path's directory (@slash: its last '/'),
 * or -1 where O_TMPFILE is not supported (mkostemp then). */
static int output_open_anonymous(struct output *o, const char *slash)
{
	char *dir = slash ? strndup(o->path, (size_t)(slash - o->path) + 1) : NULL;
	int fd;

	if (slash && !dir)
		return -1;
	fd = open(dir ? dir : ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	free(dir);
	o->anonymous = fd >= 0;
	return fd;
}

/* Give the anonymous file @fd the name @o->tmp (a fresh one in place of
 * its XXXXXX), to be renamed over @o->path. */
static int output_name(struct output *o, int fd)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	char proc[64], *x = o->tmp + strlen(o->tmp) - 6;
	struct timespec ts;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (unsigned try = 0; try < 100; try++) {
		uint64_t r = (uint64_t)ts.tv_nsec * 2654435761u + (uint64_t)getpid() + try;

		for (unsigned i = 0; i < 6; i++, r /= 36)
			x[i] = digits[r % 36];
		cleanup_arm(o);
		if (linkat(fd, "", AT_FDCWD, o->tmp, AT_EMPTY_PATH) == 0 ||
		    (errno != EEXIST &&
		     linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) == 0))
			return 0;
		cleanup_disarm(o);
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int output_open(struct tk_export *x, struct output *o)
{
	const char *out = x->opts->output, *slash;
	struct stat st;
	int fd;

	if (!strcmp(out, "-")) {
		x->out.fd = STDOUT_FILENO;
		return 0;
	}
	if (!*out)
		return tk_export_error(x, "empty output file name");
	if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
		return tk_export_error(x, "cannot write '%s': it is a directory", out);
	if (x->opts->dir && inside_trace(out, x->opts->dir))
		return tk_export_error(x, "cannot write '%s': it is inside the trace "
				       "being read", out);
	/* a symlink: the file it names is replaced, not the link */
	o->path = realpath(out, NULL);
	if (!o->path && !(o->path = strdup(out)))
		return tk_export_error(x, "out of memory");
	if (stat(o->path, &st) == 0 && !S_ISREG(st.st_mode))
		return output_open_direct(x, o);
	slash = strrchr(o->path, '/');
	if (asprintf(&o->tmp, "%.*s.%s.tmp-XXXXXX",
		     slash ? (int)(slash - o->path + 1) : 0, o->path,
		     slash ? slash + 1 : o->path) < 0) {
		o->tmp = NULL;
		return tk_export_error(x, "out of memory");
	}
	fd = output_open_anonymous(o, slash);
	if (fd >= 0) {
		x->out.fd = fd;
		return 0;
	}
	cleanup_arm(o); /* the name is filled in place by mkostemp */
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		cleanup_disarm(o);
		free(o->tmp);
		o->tmp = NULL;
		tk_export_error(x, "cannot create '%s': %s", out, strerror(e));
		return -e;
	}
	{
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fd, 0666 & ~mask); /* as a file the shell makes */
	}
	x->out.fd = fd;
	return 0;
}

/* Rename the temporary file into place (@ok) or remove it. */
static int output_close(struct tk_export *x, struct output *o, bool ok)
{
	int ret = 0;

	if (o->direct) {
		if (close(x->out.fd) < 0 && ok) {
			ret = -errno;
			tk_export_error(x, "cannot write '%s': %s", o->path, strerror(errno));
		}
		free(o->path);
		o->path = NULL;
		return ret;
	}
	if (!o->tmp) {
		free(o->path);
		o->path = NULL;
		return 0;
	}
	if (ok && o->anonymous && (ret = output_name(o, x->out.fd)) < 0) {
		tk_export_error(x, "cannot write '%s': %s", o->path, strerror(-ret));
		ok = false;
		close(x->out.fd);
	} else if (ok && close(x->out.fd) < 0) {
		ret = -errno;
		tk_export_error(x, "cannot write '%s': %s", o->path, strerror(errno));
		ok = false;
	} else if (!ok) {
		close(x->out.fd);
	}
	if (ok && rename(o->tmp, o->path) < 0) {
		ret = -errno;
		tk_export_error(x, "cannot write '%s': %s", o->path, strerror(errno));
		ok = false;
	}
	/* an anonymous file not named yet is gone with its descriptor */
	if (!ok && (!o->anonymous || cleanup_tmp))
		unlink(o->tmp);
	cleanup_disarm(o);
	free(o->tmp);
	o->tmp = NULL;
	free(o->path);
	o->path = NULL;
	return ret;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct progress {
	bool on;
	double last;
};

/* "tracekit: converting 'DIR': N events (P %)" on stderr, every 64 Ki events
 * at most four times a second (the first time at once); P is the share of
 * the trace's files read. */
static void progress_show(struct progress *p, const struct tk_export *x,
			  const struct tk_merge *m, bool done)
{
	uint64_t read = 0, size = 0;
	double t;

	if (!p->on)
		return;
	if (done) {
		fputs("\r\033[K", stderr);
		return;
	}
	t = now_s();
	if (t - p->last < 0.25)
		return;
	p->last = t;
	for (unsigned i = 0; i < m->nreaders; i++) {
		read += m->readers[i].pos;
		size += m->readers[i].size;
	}
	for (unsigned i = 0; x->kernel && i < x->kernel->ncpus; i++) {
		read += x->kernel->cpus[i].next_page;
		size += x->kernel->cpus[i].size;
	}
	fprintf(stderr, "\rtracekit: converting '%s': %" PRIu64 " events (%u%%)\033[K",
		x->opts->dir, x->events, size ? (unsigned)(read * 100 / size) : 0);
}

/* Per user stream: its loss counter and last timestamp, to tell the
 * format where events were lost (packets count them: events_discarded);
 * whether the selection left it out. */
/* Whether an event the selection says @selected of is kept: a stack goes
 * with the event before it in its stream or CPU (@last: whether that
 * one was kept), whatever --events says of stacks. */
static bool kept(bool *last, bool stack, bool selected)
{
	if (!stack)
		*last = selected;
	return selected || (stack && *last);
}

struct stream_seen {
	uint64_t discarded, last_ts;
	bool any;
	bool out;
	bool kept; /* its last event that is no stack */
};

static int user_event(struct tk_export *x, struct tk_merge *m,
		      struct stream_seen *seen, struct tk_stream_reader *rd)
{
	const struct tk_export_select *sel = x->opts->select;
	struct stream_seen *s = &seen[rd - m->readers];
	int ret;

	if (s->out)
		return 0;
	if (rd->discarded > s->discarded && x->ops->user_lost) {
		ret = x->ops->user_lost(x, rd->stream, s->any ? s->last_ts : 0, rd->ts,
					rd->discarded - s->discarded);
		if (ret < 0)
			return ret;
	}
	if (rd->discarded > s->discarded)
		s->discarded = rd->discarded;
	s->last_ts = rd->ts;
	s->any = true;
	if (sel && sel->user && !kept(&s->kept, tk_event_is_stack(rd->event->provider,
								  rd->event->name),
				      sel->user(sel->arg, x, rd)))
		return 0;
	x->kept++;
	return x->ops->user_event ? x->ops->user_event(x, rd) : 0;
}

/* Losses the manifest counts after a stream's last packet (or in
 * overwritten sub-buffers): placed after its last event. */
static int user_lost_at_end(struct tk_export *x, struct tk_merge *m,
			    const struct stream_seen *seen)
{
	for (unsigned i = 0; x->ops->user_lost && i < m->nreaders; i++) {
		const struct tk_trace_stream *s = &x->trace->streams[i];
		uint64_t lost = tk_stream_lost(s);
		int ret;

		if (seen[i].out || lost <= seen[i].discarded)
			continue;
		ret = x->ops->user_lost(x, s, seen[i].any ? seen[i].last_ts : 0, 0,
					lost - seen[i].discarded);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Per kernel CPU: its first and last event, and the losses its pages
 * counted. */
struct cpu_seen {
	uint64_t first, last, lost;
	bool kept; /* its last event that is no stack */
};

/* Whether the kernel's event @c is a stack (tk_event_is_stack()). */
static bool kernel_is_stack(const struct tk_kernel *k, const struct tk_kernel_cpu *c)
{
	int id = tk_kernel_event_id(k, c->data);
	const struct tep_event *e = id >= 0 ? tep_find_event(k->tep, id) : NULL;

	return e && tk_event_is_stack(e->system, e->name);
}

/* A kernel event; the CPU's page may say events were lost before it. */
static int kernel_event(struct tk_export *x, struct cpu_seen *seen,
			struct tk_kernel_cpu *c)
{
	const struct tk_export_select *sel = x->opts->select;
	struct cpu_seen *s = &seen[c - x->kernel->cpus];
	int ret;

	if (c->missed && x->ops->kernel_lost) {
		ret = x->ops->kernel_lost(x, c->cpu, s->last, c->ts, c->missed);
		if (ret < 0)
			return ret;
	}
	if (c->missed > 0)
		s->lost += (uint64_t)c->missed;
	if (!s->first)
		s->first = c->ts;
	s->last = c->ts;
	if (x->ops->kernel_any && (ret = x->ops->kernel_any(x, c)) < 0)
		return ret;
	if (sel && sel->kernel && !kept(&s->kept, kernel_is_stack(x->kernel, c),
					sel->kernel(sel->arg, x, c)))
		return 0;
	x->kept++;
	return x->ops->kernel_event ? x->ops->kernel_event(x, c) : 0;
}

/* Losses the kernel counted (the manifest's overrun and dropped) that its
 * pages did not place (a full buffer drops events without a mark): over
 * the CPU's whole span. */
static int kernel_lost_at_end(struct tk_export *x, const struct cpu_seen *seen)
{
	for (unsigned i = 0; x->ops->kernel_lost && x->kernel && i < x->kernel->ncpus; i++) {
		const struct tk_kernel_cpu *c = &x->kernel->cpus[i];
		uint64_t stats = c->overrun + c->dropped;
		int ret;

		if (stats <= seen[i].lost)
			continue;
		ret = x->ops->kernel_lost(x, c->cpu, seen[i].first,
					  seen[i].last ? seen[i].last : x->last_ts,
					  (long long)(stats - seen[i].lost));
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int walk(struct tk_export *x)
{
	const struct tk_export_select *sel = x->opts->select;
	struct progress prog = { x->opts->progress, 0 }; /* shown from 64 Ki events on */
	struct stream_seen *seen = NULL;
	struct cpu_seen *cpu = NULL;
	struct tk_merge m;
	struct tk_merge_event ev;
	char err[512];
	int ret;

	if (tk_merge_open(&m, x->trace, x->kernel) < 0)
		return tk_export_error(x, "out of memory");
	seen = calloc(m.nreaders + 1, sizeof(*seen));
	cpu = calloc(x->kernel ? x->kernel->ncpus + 1 : 1, sizeof(*cpu));
	if (!seen || !cpu) {
		free(seen);
		free(cpu);
		tk_merge_close(&m);
		return tk_export_error(x, "out of memory");
	}
	for (unsigned i = 0; sel && sel->stream && i < m.nreaders; i++)
		seen[i].out = !sel->stream(sel->arg, x, &x->trace->streams[i]);
	while ((ret = tk_merge_next(&m, &ev, err, sizeof(err))) > 0) {
		if (!x->events++)
			x->first_ts = ev.ts;
		x->last_ts = ev.ts;
		if (ev.user)
			ret = user_event(x, &m, seen, ev.user);
		else
			ret = kernel_event(x, cpu, ev.kcpu);
		if (ret < 0)
			break;
		if (x->out.error)
			break;
		if (!(x->events & 0xffff))
			progress_show(&prog, x, &m, false);
	}
	if (ret < 0 && !x->error)
		tk_export_error(x, "%s", ret == -ENOMEM ? "out of memory" : err);
	if (ret == 0 && sel && !x->kept)
		ret = tk_export_error(x, "no event matched %s (%" PRIu64 " events read)",
				      sel->what, x->events);
	if (ret == 0)
		ret = user_lost_at_end(x, &m, seen);
	if (ret == 0)
		ret = kernel_lost_at_end(x, cpu);
	progress_show(&prog, x, &m, true);
	free(seen);
	free(cpu);
	tk_merge_close(&m);
	return ret;
}

int tk_export_run(const struct tk_export_ops *ops,
		  const struct tk_export_opts *o, char **err, char **warn)
{
	static char buf[1 << 20];
	struct tk_export x;
	struct tk_trace trace;
	struct tk_kernel kernel;
	struct output out = { 0 };
	char why[512];
	int ret;

	memset(&x, 0, sizeof(x));
	memset(&trace, 0, sizeof(trace));
	memset(&kernel, 0, sizeof(kernel));
	*err = NULL;
	*warn = NULL;
	x.ops = ops;
	x.opts = o;
	x.out.buf = buf;
	x.out.cap = sizeof(buf);
	x.out.fd = -1;
	ret = tk_trace_read_index(o->dir, &trace, why, sizeof(why));
	if (ret < 0) {
		*err = strdup(why);
		return ret;
	}
	x.trace = &trace;
	if (trace.incomplete)
		tk_export_warn(&x, "'%s' is incomplete: its recorder stopped before finishing it (killed?); converting what it wrote",
			       o->dir);
	ret = tk_kernel_open(o->dir, &kernel, why, sizeof(why));
	if (ret == 0) {
		tk_kernel_name_threads(&kernel, &trace);
		x.kernel = &kernel;
	} else if (ret != -ENOENT) {
		if (ret == -ENOMEM)
			snprintf(why, sizeof(why), "out of memory reading '%s/kernel'", o->dir);
		*err = strdup(why);
		goto out_trace;
	}
	ret = output_open(&x, &out);
	if (ret < 0) {
		free(out.path);
		*err = x.error;
		goto out_kernel;
	}
	ret = ops->begin ? ops->begin(&x) : 0;
	if (ret >= 0)
		ret = walk(&x);
	if (ret >= 0 && ops->end)
		ret = ops->end(&x);
	tk_out_flush(&x.out);
	if (ret >= 0 && x.out.error) {
		ret = x.out.error;
		tk_export_error(&x, "cannot write '%s': %s", o->output, strerror(-ret));
	}
	if (output_close(&x, &out, ret >= 0) < 0 && ret >= 0)
		ret = -EIO;
	if (ops->free)
		ops->free(&x);
	*err = x.error;
	if (ret >= 0)
		*warn = x.warning;
	else
		free(x.warning);
out_kernel:
	tk_kernel_close(&kernel);
out_trace:
	tk_trace_free(&trace);
	if (ret < 0 && !*err)
		*err = strdup(strerror(-ret));
	return ret < 0 ? ret : 0;
}
