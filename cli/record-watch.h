/* SPDX-License-Identifier: MIT */
/*
 * record-watch.h - what record does while a recording runs, besides
 * draining the buffers (session.c, consumer.c):
 *
 *   - on a terminal, a line rewritten every second with the events, bytes
 *     and lost events of the last second and in all, user and kernel
 *     (events committed in sub-buffers not yet full counted too);
 *   - the trace's index written at the start, whenever a process has
 *     announced its events or a stream got its file, and every second, so
 *     that a recorder killed then leaves a trace report reads
 *     (docs/format.md, state=recording);
 *   - thread renames: a stream goes by its thread's current name.
 */
#ifndef TK_RECORD_WATCH_H
#define TK_RECORD_WATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "record-kernel.h"
#include "session.h"

/* The thread that writes the index while recording: renames into place
 * free the old files, which on a file system mounted with `discard`
 * waits for the disk (seen: 50-300 ms, each second), and the drain loop
 * must not wait. */
struct index_writer {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct tk_index next;  /* the newest index to write, if has_next */
	bool has_next, stop;
	int err;               /* the first failure, said by watch_tick */
	char error[256];
};

struct record_watch {
	struct rec_session *s;
	struct record_kernel *kernel;
	const char *dir;           /* where the trace is written */
	bool live, live_shown;     /* the live line: wanted, printed */
	uint64_t live_at, events, bytes, lost; /* and what it said last */
	unsigned procs, files;     /* what the index last had */
	uint64_t index_at;         /* when it is written next */
	uint64_t written_at;       /* when it was written last */
	bool index_failed;         /* not made: not tried again */
	bool index_warned;         /* a write failed: said once, tried again */
	uint64_t rename_at;
	struct index_writer iw;
};

/* @live: print the live line (stderr is a terminal, no -q). */
void watch_init(struct record_watch *w, struct rec_session *s,
		struct record_kernel *kernel, const char *dir, bool live);
/* After each poll of the session: what is due of the three. */
void watch_tick(struct record_watch *w);
/* Microseconds until watch_tick has something to do (at most 1 s). */
int watch_wait_us(const struct record_watch *w);
/* Erase the live line, before the summary; the index being written is
 * written, the thread that writes it gone. */
void watch_end(struct record_watch *w);
/* Name each live stream after its thread's current name, or for a thread
 * gone, the name it wrote when it ended (also done by watch_tick every
 * 200 ms, and once more at the end). */
void watch_renames(struct rec_session *s);

#endif /* TK_RECORD_WATCH_H */
