/* SPDX-License-Identifier: MIT */
/*
 * record-watch.c - the live line, the index written while recording and
 * thread renames (record-watch.h).  Everything here only reads the
 * shared buffers' headers and /proc: no system call on the writers' side.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "record-watch.h"
#include "common/visible.h"

#define LIVE_MS 1000   /* the live line, rewritten */
#define INDEX_MS 1000  /* the index, rewritten even when nothing came */
#define INDEX_MIN_MS 100 /* and no sooner than this after the last time */
#define RENAME_MS 200  /* thread names, read again */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void human_bytes(char *out, size_t len, double b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(out, len, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
}

/* The line: user and kernel events together, per second and in all, and
 * the kernel's share when it records. */
static void live_update(struct record_watch *w, uint64_t now)
{
	uint64_t events = 0, bytes = 0, lost = 0, kevents, kbytes, klost;
	char rate[32], total[32], kernel[64] = "";

	if (!w->live || now < w->live_at)
		return;
	for (unsigned i = 0; i < w->s->nstreams; i++)
		consumer_stream_progress(w->s->streams[i], &events, &bytes,
					 &lost);
	record_kernel_progress(w->kernel, w->dir, &kevents, &kbytes, &klost);
	if (record_kernel_capturing(w->kernel)) {
		human_bytes(total, sizeof(total), (double)kbytes);
		snprintf(kernel, sizeof(kernel), "; kernel %llu events, %s",
			 (unsigned long long)kevents, total);
	}
	events += kevents;
	bytes += kbytes;
	lost += klost;
	human_bytes(rate, sizeof(rate), (double)(bytes - w->bytes));
	human_bytes(total, sizeof(total), (double)bytes);
	fprintf(stderr, "\rtracekit: %llu events/s, %s/s, %llu lost/s (%llu events, %s, %llu lost in all%s)\033[K",
		(unsigned long long)(events - w->events), rate,
		(unsigned long long)(lost - w->lost), (unsigned long long)events,
		total, (unsigned long long)lost, kernel);
	w->events = events;
	w->bytes = bytes;
	w->lost = lost;
	w->live_at = now + LIVE_MS;
	w->live_shown = true;
}

static void *index_writer_main(void *arg)
{
	struct index_writer *iw = arg;

	pthread_mutex_lock(&iw->lock);
	for (;;) {
		struct tk_index x;
		char error[sizeof(iw->error)];
		int err;

		while (!iw->has_next && !iw->stop)
			pthread_cond_wait(&iw->cond, &iw->lock);
		if (!iw->has_next)
			break;
		x = iw->next;
		iw->has_next = false;
		pthread_mutex_unlock(&iw->lock);
		err = tk_trace_store_index(&x, error, sizeof(error));
		tk_index_free(&x);
		pthread_mutex_lock(&iw->lock);
		if (err && !iw->err) {
			iw->err = err;
			memcpy(iw->error, error, sizeof(error));
		}
	}
	pthread_mutex_unlock(&iw->lock);
	return NULL;
}

/* Hand @x to the writer (an index not written yet is replaced: the newest
 * says more); false if the thread cannot be started. */
static bool index_post(struct index_writer *iw, struct tk_index *x)
{
	if (!iw->started) {
		sigset_t all, old;
		int err;

		pthread_mutex_init(&iw->lock, NULL);
		pthread_cond_init(&iw->cond, NULL);
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = pthread_create(&iw->thread, NULL, index_writer_main, iw);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err) {
			pthread_mutex_destroy(&iw->lock);
			pthread_cond_destroy(&iw->cond);
			return false;
		}
		iw->started = true;
	}
	pthread_mutex_lock(&iw->lock);
	if (iw->has_next)
		tk_index_free(&iw->next);
	iw->next = *x;
	iw->has_next = true;
	pthread_cond_signal(&iw->cond);
	pthread_mutex_unlock(&iw->lock);
	return true;
}

/* The index: at the start, when a process announced its events or a
 * stream got its file (INDEX_MIN_MS after the last time at the soonest:
 * it is the whole trace's, rewritten, and thousands of processes come and
 * go in a second), and every INDEX_MS (counts, clock).  Made here, written
 * by the index writer. */
static void index_update(struct record_watch *w, uint64_t now)
{
	struct rec_session *s = w->s;
	unsigned procs = 0, files = 0;
	struct tk_index x;
	/* a failed write's words: not s->error, the recording's first
	 * fatal error, which the summary gives as the cause of losses */
	char why[sizeof(w->iw.error)];
	int err = 0;

	if (w->index_failed)
		return;
	if (w->iw.started) {
		pthread_mutex_lock(&w->iw.lock);
		err = w->iw.err;
		if (err)
			snprintf(why, sizeof(why), "%s", w->iw.error);
		w->iw.err = 0;
		pthread_mutex_unlock(&w->iw.lock);
	}
	/* a write that failed (out of descriptors, a full disk) is tried
	 * again with the next index, said once: a trace whose recorder is
	 * killed later keeps what came since */
	if (err && !w->index_warned) {
		tk_warn("%s", why);
		w->index_warned = true;
	}
	for (unsigned i = 0; i < s->nprocs; i++)
		procs += s->procs[i]->announced;
	for (unsigned i = 0; i < s->nstreams; i++)
		files += s->streams[i]->file != NULL;
	if ((procs != w->procs || files != w->files) &&
	    w->index_at > w->written_at + INDEX_MIN_MS)
		w->index_at = w->written_at + INDEX_MIN_MS;
	if (now < w->index_at)
		return;
	if (record_kernel_capturing(w->kernel))
		s->kernel = &w->kernel->manifest;
	session_clock_now(s);
	if (session_render_index(s, true, &x) < 0) {
		tk_warn("%s", s->error);
		w->index_failed = true;
	} else if (!index_post(&w->iw, &x)) {
		/* no thread: written here */
		if (tk_trace_store_index(&x, why, sizeof(why)) < 0 &&
		    !w->index_warned) {
			tk_warn("%s", why);
			w->index_warned = true;
		}
		tk_index_free(&x);
	}
	w->procs = procs;
	w->files = files;
	w->written_at = now;
	w->index_at = now + INDEX_MS;
}

void watch_renames(struct rec_session *s)
{
	for (unsigned i = 0; i < s->nstreams; i++) {
		struct rec_stream *st = s->streams[i];
		char path[64], comm[sizeof(st->comm) + 1];
		ssize_t n;
		int fd;

		if (st->done)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", st->proc->pid,
			 st->tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, comm, sizeof(comm) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0) {
			consumer_header_name(st);
			continue;
		}
		comm[n] = '\0';
		if (comm[n - 1] == '\n')
			comm[n - 1] = '\0';
		tk_visible_name(comm); /* any byte but NUL, by prctl() */
		if (comm[0] && strlen(comm) < sizeof(st->comm))
			memcpy(st->comm, comm, strlen(comm) + 1);
	}
}

void watch_init(struct record_watch *w, struct rec_session *s,
		struct record_kernel *kernel, const char *dir, bool live)
{
	memset(w, 0, sizeof(*w));
	w->s = s;
	w->kernel = kernel;
	w->dir = dir;
	w->live = live;
	w->live_at = now_ms() + LIVE_MS;
}

void watch_tick(struct record_watch *w)
{
	uint64_t now = now_ms();

	if (now >= w->rename_at) {
		watch_renames(w->s);
		w->rename_at = now + RENAME_MS;
	}
	live_update(w, now);
	index_update(w, now);
}

int watch_wait_us(const struct record_watch *w)
{
	uint64_t now = now_ms(), at = w->rename_at;

	if (w->live && w->live_at < at)
		at = w->live_at;
	if (!w->index_failed && w->index_at < at)
		at = w->index_at;
	return at <= now ? 0 : at - now > 1000 ? 1000000 : (int)(at - now) * 1000;
}

void watch_end(struct record_watch *w)
{
	struct index_writer *iw = &w->iw;

	if (iw->started) {
		pthread_mutex_lock(&iw->lock);
		iw->stop = true;
		pthread_cond_signal(&iw->cond);
		pthread_mutex_unlock(&iw->lock);
		pthread_join(iw->thread, NULL);
		if (iw->has_next)
			tk_index_free(&iw->next);
		pthread_mutex_destroy(&iw->lock);
		pthread_cond_destroy(&iw->cond);
		iw->started = false;
	}
	if (w->live_shown)
		fputs("\r\033[K", stderr);
}
