/* SPDX-License-Identifier: MIT */
/*
 * capture.c - each CPU's trace_pipe_raw moved into DIR/kernel/cpuN.raw.
 *
 *   ring buffer page --splice--> pipe --splice--> cpuN.raw
 *
 * The pages move from the kernel's ring buffer to the page cache of the
 * file without being copied or looked at.  One thread per CPU sleeps in
 * poll() until the kernel says its buffer is buffer_percent full (50 by
 * default), then moves every full page; the user-space recorder's loop
 * never waits for it.  At the end (tracing already off) the full pages
 * are spliced and the last, partial page of each CPU is read() — splice
 * only gives whole pages — so that nothing stays behind.
 *
 * A slow CPU would keep half its buffer in the kernel for minutes, lost
 * to the trace if the recorder is killed (the instance keeps it until
 * `tracekit extract` or `reset`): every FLUSH_MS each thread also moves
 * the full pages there are and reads the partial one (its events leave
 * the kernel; the file gets a page that is not full), as trace-cmd's
 * recorder reads every -s microseconds.  What a SIGKILL leaves in the
 * kernel is then at most FLUSH_MS of events.
 *
 * CPU N's thread runs on the other CPUs: the kernel wakes it from CPU N,
 * where the traced program is busy writing events, and the scheduler
 * would otherwise run it there, taking the program off its CPU for every
 * batch of pages (measured in bench/kernel.py).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <tracefs.h>
#include "kernel.h"

#define PIPE_BYTES (1 << 20) /* moved per splice at most */
#define MAX_PAGE (1 << 20)   /* sub-buffers are at most 1 MiB */
#define FLUSH_MS 1000        /* every CPU's pages read this often */

struct cpu_capture {
	struct tk_kcpu res;
	int raw_fd, out_fd;
	int pipe[2];
	int stop_fd; /* readable when the thread is to stop */
	pthread_t thread;
	bool thread_started;
	int error; /* -errno of the first failed move */
};

struct tk_kcapture {
	unsigned n;
	struct cpu_capture *cpu;
	int stop_pipe[2];
	struct tk_kcpu *results;
};

/* Splice the full pages the kernel has into the file; returns how many
 * bytes moved (0: none ready) or -errno. */
static long move_pages(struct cpu_capture *cc)
{
	long total = 0;

	for (;;) {
		ssize_t in = splice(cc->raw_fd, NULL, cc->pipe[1], NULL,
				    PIPE_BYTES, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (in < 0)
			return errno == EAGAIN || errno == EINTR ? total : -errno;
		if (in == 0)
			return total;
		while (in > 0) {
			ssize_t out = splice(cc->pipe[0], NULL, cc->out_fd, NULL,
					     (size_t)in, SPLICE_F_MOVE);

			if (out < 0 && errno == EINTR)
				continue;
			if (out <= 0)
				return out < 0 ? -errno : -EIO;
			in -= out;
			total += out;
			cc->res.bytes += (uint64_t)out;
		}
	}
}

/* The whole pages, then up to @reads pages read(): the partial page the
 * kernel writes in (a page of it: the rest of the page stays zero), and
 * at the end, tracing off, whatever is left.  0 or -errno. */
static int read_pages(struct cpu_capture *cc, char *page, size_t page_size,
		      unsigned reads)
{
	long moved = move_pages(cc);

	if (moved < 0)
		return (int)moved;
	while (reads) {
		ssize_t n = read(cc->raw_fd, page, page_size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return 0;
		reads--;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(cc->out_fd, page + done, (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -errno;
			done += w;
			cc->res.bytes += (uint64_t)w;
		}
	}
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void *capture_thread(void *arg)
{
	struct cpu_capture *cc = arg;
	uint64_t flush_at = now_ms() + FLUSH_MS;
	char *page = malloc(MAX_PAGE); /* touched a page at a time */

	while (!cc->error && page) {
		struct pollfd p[2] = {
			{ cc->raw_fd, POLLIN, 0 },
			{ cc->stop_fd, POLLIN, 0 },
		};
		uint64_t now = now_ms();
		long moved = 0;

		if (now >= flush_at) {
			cc->error = read_pages(cc, page, MAX_PAGE, 1);
			flush_at = now + FLUSH_MS;
			continue;
		}
		if (poll(p, 2, (int)(flush_at - now)) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[0].revents & POLLIN)
			moved = move_pages(cc);
		if (moved < 0)
			cc->error = (int)moved;
		else if ((p[0].revents & POLLIN) && moved == 0)
			/* readable but no whole page yet: do not spin */
			usleep(1000);
	}
	free(page);
	return NULL;
}

/* Keep @cc's thread off its own CPU when another one is ours to use. */
static void place_thread(struct cpu_capture *cc)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0 ||
	    cc->res.cpu >= CPU_SETSIZE || !CPU_ISSET(cc->res.cpu, &set))
		return;
	CPU_CLR(cc->res.cpu, &set);
	if (CPU_COUNT(&set) > 0)
		pthread_setaffinity_np(cc->thread, sizeof(set), &set); /* a hint */
}

/* The events read out of a CPU's buffer so far, from its @stats file
 * (an instance whose recorder was killed before it read all). */
static uint64_t read_before(struct tk_kinstance *k, const char *stats)
{
	char *text = tracefs_instance_file_read(k->inst, stats, NULL);
	const char *line = text ? strstr(text, "\nread events: ") : NULL;
	uint64_t n = line ? strtoull(line + 14, NULL, 10) : 0;

	free(text);
	return n;
}

static int open_cpu(struct tk_kinstance *k, const char *kdir, unsigned cpu,
		    struct cpu_capture *cc, char *err, size_t errlen)
{
	char path[64], *out;

	cc->res.cpu = cpu;
	snprintf(cc->res.file, sizeof(cc->res.file), "kernel/cpu%u.raw", cpu);
	snprintf(path, sizeof(path), "per_cpu/cpu%u/stats", cpu);
	cc->res.read_before = read_before(k, path);
	snprintf(path, sizeof(path), "per_cpu/cpu%u/trace_pipe_raw", cpu);
	cc->raw_fd = tracefs_instance_file_open(k->inst, path,
						O_RDONLY | O_NONBLOCK);
	if (cc->raw_fd < 0) {
		int e = errno ? errno : EIO;

		snprintf(err, errlen, "cannot open '%s' of instance '%s': %s", path,
			 k->name, strerror(e));
		return -e;
	}
	if (pipe2(cc->pipe, O_CLOEXEC) < 0)
		return -errno;
	fcntl(cc->pipe[0], F_SETPIPE_SZ, PIPE_BYTES); /* a hint: may fail */
	if (asprintf(&out, "%s/cpu%u.raw", kdir, cpu) < 0)
		return -ENOMEM;
	cc->out_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (cc->out_fd < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot create '%s': %s", out, strerror(e));
		free(out);
		return -e;
	}
	free(out);
	return 0;
}

int tk_kcapture_start(struct tk_kinstance *k, const char *dir, bool live,
		      struct tk_kcapture **out, char *err, size_t errlen)
{
	struct tk_kcapture *c = calloc(1, sizeof(*c));
	int ncpus = tk_kinstance_cpus(k), ret = 0;
	char *kdir = NULL;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->stop_pipe[0] = c->stop_pipe[1] = -1;
	c->cpu = calloc(ncpus > 0 ? (size_t)ncpus : 1, sizeof(*c->cpu));
	c->results = calloc(ncpus > 0 ? (size_t)ncpus : 1, sizeof(*c->results));
	if (!c->cpu || !c->results || asprintf(&kdir, "%s/kernel", dir) < 0) {
		ret = -ENOMEM;
		goto fail;
	}
	if (mkdir(kdir, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "cannot create '%s': %s", kdir, strerror(errno));
		goto fail;
	}
	if (pipe2(c->stop_pipe, O_CLOEXEC) < 0) {
		ret = -errno;
		goto fail;
	}
	for (int i = 0; i < ncpus; i++) {
		struct cpu_capture *cc = &c->cpu[i];

		cc->raw_fd = cc->out_fd = cc->pipe[0] = cc->pipe[1] = -1;
		cc->stop_fd = c->stop_pipe[0];
		c->n++;
		ret = open_cpu(k, kdir, (unsigned)i, cc, err, errlen);
		if (ret)
			goto fail;
	}
	for (unsigned i = 0; live && i < c->n; i++) {
		ret = -pthread_create(&c->cpu[i].thread, NULL, capture_thread,
				      &c->cpu[i]);
		if (ret) {
			snprintf(err, errlen, "cannot start the capture threads: %s",
				 strerror(-ret));
			goto fail;
		}
		c->cpu[i].thread_started = true;
		place_thread(&c->cpu[i]);
	}
	free(kdir);
	*out = c;
	return 0;
fail:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(kdir);
	tk_kcapture_free(c);
	return ret;
}

static void stop_threads(struct tk_kcapture *c)
{
	/* closing the write end makes the read end readable for good */
	if (c->stop_pipe[1] >= 0)
		close(c->stop_pipe[1]);
	c->stop_pipe[1] = -1;
	for (unsigned i = 0; i < c->n; i++)
		if (c->cpu[i].thread_started) {
			pthread_join(c->cpu[i].thread, NULL);
			c->cpu[i].thread_started = false;
		}
}

int tk_kcapture_stop(struct tk_kcapture *c, char *err, size_t errlen)
{
	char *page;
	int ret = 0;

	stop_threads(c);
	page = malloc(MAX_PAGE);
	if (!page)
		return -ENOMEM;
	for (unsigned i = 0; i < c->n; i++) {
		struct cpu_capture *cc = &c->cpu[i];
		int e = cc->error;

		if (!e && cc->raw_fd >= 0)
			e = read_pages(cc, page, MAX_PAGE, UINT_MAX);
		if (e && !ret) {
			ret = e;
			snprintf(err, errlen, "cannot write '%s': %s",
				 cc->res.file, strerror(-e));
		}
		cc->error = e;
		c->results[i] = cc->res;
	}
	free(page);
	return ret;
}

struct tk_kcpu *tk_kcapture_cpus(struct tk_kcapture *c, unsigned *count)
{
	*count = c->n;
	return c->results;
}

void tk_kcapture_free(struct tk_kcapture *c)
{
	if (!c)
		return;
	stop_threads(c);
	for (unsigned i = 0; i < c->n; i++) {
		struct cpu_capture *cc = &c->cpu[i];
		int fds[] = { cc->raw_fd, cc->out_fd, cc->pipe[0], cc->pipe[1] };

		for (unsigned j = 0; j < 4; j++)
			if (fds[j] >= 0)
				close(fds[j]);
	}
	if (c->stop_pipe[0] >= 0)
		close(c->stop_pipe[0]);
	if (c->stop_pipe[1] >= 0)
		close(c->stop_pipe[1]);
	free(c->cpu);
	free(c->results);
	free(c);
}
