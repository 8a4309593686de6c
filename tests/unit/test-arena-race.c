/* SPDX-License-Identifier: MIT */
/*
 * test-arena-race.c - sessions that start and end while threads open
 * their streams (lib/stream.c: stream_open against tk_streams_set_arena
 * and the reaping of retired arenas).
 *
 * Four writers fire without pause; the main thread starts a session (an
 * arena made and set, as control.c apply_config does) and ends it at
 * once, SESSIONS times.  Each start and end sends every writer to the
 * slow path, where it looks up the session's arena: an arena must not be
 * freed while a writer that read its address has not taken it yet.  A
 * freed arena read shows as a crash, or under the sanitizer build
 * (tests/run) as a use after free.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/internal.h"
#include "tk-test.h"

#define WRITERS 4
#define SESSIONS 200

static int stop;
static uint64_t fired[WRITERS];

static void *writer(void *arg)
{
	uint64_t *n = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		char *p = tk__reserve(8, 1);

		if (p) {
			memset(p, 0, 8);
			tk__commit(p + 8);
		}
		(*n)++;
	}
	return NULL;
}

static void session_start(void)
{
	struct tk_arena_geom g = {
		.mode = TK_RB_DISCARD,
		.chunk_size = TK_CHUNK_MIN,
		.slots = TK_RB_MIN_SLOTS,
		.streams_max = 8,
		.pool_init = 8,
		.pool_max = 8,
	};
	struct tk_arena_map *a;
	const char *what = "?";

	tk_registry_lock();
	tk_config.geom = g;
	tk_config.active = true;
	tk_config_publish_locked();
	tk_streams_session_changed();
	tk_registry_unlock();
	a = tk_arena_create(&g, 8, 0, &what);
	CHECK(a != NULL);
	if (!a) {
		perror(what);
		exit(1);
	}
	tk_registry_lock();
	a->gen = __atomic_load_n(&tk_session_gen, __ATOMIC_SEQ_CST);
	tk_streams_set_arena(a);
	tk_registry_unlock();
}

static void session_end(void)
{
	tk_registry_lock();
	tk_config.active = false;
	tk_config_publish_locked();
	tk_streams_session_changed();
	tk_streams_set_arena(NULL);
	tk_registry_unlock();
}

int main(void)
{
	pthread_t th[WRITERS];
	uint64_t total = 0;

	tk_streams_init();
	for (int i = 0; i < WRITERS; i++)
		CHECK(pthread_create(&th[i], NULL, writer, &fired[i]) == 0);
	for (int i = 0; i < SESSIONS; i++) {
		session_start();
		if (i % 2)
			sched_yield();
		session_end();
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < WRITERS; i++) {
		pthread_join(th[i], NULL);
		total += fired[i];
	}
	CHECK(total > 0);
	/* the writers are gone: their streams closed, the last arenas
	 * are freed by the next change */
	tk_streams_session_changed();
	CHECK(tk_streams_arena() == NULL);
	printf("%d sessions, %llu events fired by %d writers\n", SESSIONS,
	       (unsigned long long)total, WRITERS);
	return tk_test_failures ? 1 : 0;
}
