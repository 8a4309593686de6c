/* SPDX-License-Identifier: MIT */
/*
 * demo.c - a small request server with a pool of workers, instrumented
 * with tracekit events and a marker.
 *
 *   tracekit record -- tracekit-demo [REQUESTS] [WORKERS]
 *   tracekit report
 *
 * The main thread queues requests; workers take them, look them up in a
 * cache (a miss costs a little work) and answer.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "demo-events.h"

#define QUEUE_SIZE 64

struct request {
	uint32_t id;
	char path[32];
};

static struct request queue[QUEUE_SIZE];
static unsigned head, tail;
static int done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t nonfull = PTHREAD_COND_INITIALIZER;
static uint32_t cache[16];

/* not inlined, so that record -p function_graph shows them */
#define DEMO_FUNC __attribute__((noinline))

static DEMO_FUNC double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* a cache miss costs a little work */
static DEMO_FUNC void fill(uint32_t slot, uint32_t id)
{
	volatile unsigned spin = 0;

	for (unsigned i = 0; i < 20000; i++)
		spin += i;
	cache[slot] = id;
}

static DEMO_FUNC int serve(const struct request *r)
{
	uint32_t slot = r->id % 16;

	if (cache[slot] != r->id) {
		tk_trace(demo, cache_miss, r->path, (uint32_t)strlen(r->path),
			 &cache[slot]);
		fill(slot, r->id);
	}
	return r->id % 10 == 0 ? 404 : 200;
}

static void *worker(void *arg)
{
	const char *name = arg;

	pthread_setname_np(pthread_self(), name);
	for (;;) {
		struct request r;
		double start;
		int status;

		pthread_mutex_lock(&lock);
		while (head == tail && !done)
			pthread_cond_wait(&nonempty, &lock);
		if (head == tail && done) {
			pthread_mutex_unlock(&lock);
			return NULL;
		}
		r = queue[tail++ % QUEUE_SIZE];
		tk_trace(demo, queue, head - tail, name);
		pthread_cond_signal(&nonfull);
		pthread_mutex_unlock(&lock);

		start = now_ms();
		tk_trace(demo, request_start, r.id, r.path, (uint32_t)strlen(r.path));
		status = serve(&r);
		tk_trace(demo, request_done, r.id, status, now_ms() - start);
	}
}

int main(int argc, char **argv)
{
	unsigned requests = argc > 1 ? (unsigned)atoi(argv[1]) : 200;
	unsigned nworkers = argc > 2 ? (unsigned)atoi(argv[2]) : 3;
	static char names[16][16];
	pthread_t th[16];

	if (nworkers < 1 || nworkers > 16) {
		fprintf(stderr, "demo: workers must be from 1 to 16\n");
		return 2;
	}
	tk_mark(demo_start, "serving %u requests with %u workers", requests,
		nworkers);
	for (unsigned i = 0; i < nworkers; i++) {
		snprintf(names[i], sizeof(names[i]), "worker-%u", i);
		pthread_create(&th[i], NULL, worker, names[i]);
	}
	for (uint32_t id = 1; id <= requests; id++) {
		pthread_mutex_lock(&lock);
		while (head - tail == QUEUE_SIZE)
			pthread_cond_wait(&nonfull, &lock);
		queue[head % QUEUE_SIZE].id = id;
		snprintf(queue[head % QUEUE_SIZE].path, 32, "/item/%u", id % 40);
		head++;
		pthread_cond_signal(&nonempty);
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&nonempty);
	pthread_mutex_unlock(&lock);
	for (unsigned i = 0; i < nworkers; i++)
		pthread_join(th[i], NULL);
	tk_mark(demo_stop, "served %u requests", requests);
	return 0;
}
