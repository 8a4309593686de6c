/* SPDX-License-Identifier: MIT */
/*
 * bench-threads.c - memory held for many threads that each fire one event,
 * as a server with a pool of mostly idle threads (bench/run part 12).
 *
 *   bench-threads N
 *
 * Starts N threads; each fires bench:event once (the event is off unless
 * run under `tracekit record`), then all wait.  When every thread has
 * fired, prints "ready PID" and waits until its standard input ends (the
 * benchmark reads /proc/PID/smaps meanwhile); then the threads end and
 * the program prints "done N".
 */
#define _GNU_SOURCE
#include "bench-events.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_barrier_t fired;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int release;

static void *worker(void *arg)
{
	tk_trace(bench, event, (int64_t)(intptr_t)arg, 0, "hello world!");
	pthread_barrier_wait(&fired);
	pthread_mutex_lock(&lock);
	while (!release)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	pthread_t *th;
	char buf[256];

	if (n < 1) {
		fprintf(stderr, "usage: bench-threads N\n");
		return 2;
	}
	th = calloc((size_t)n, sizeof(*th));
	if (!th)
		return 1;
	pthread_barrier_init(&fired, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i)) {
			fprintf(stderr, "bench-threads: cannot start thread %d\n", i);
			return 1;
		}
	pthread_barrier_wait(&fired);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&lock);
	release = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("done %d\n", n);
	return 0;
}
