/* SPDX-License-Identifier: MIT */
/*
 * sigmalloc.c - test program: first events fired by signal handlers that
 * interrupt malloc.
 *
 *   prog-sigmalloc [-t THREADS] [-n ROUNDS]
 *
 * THREADS workers (default 4) each malloc and free blocks of varied sizes
 * ROUNDS times (default 200000) and fire no event themselves.  Each has a
 * timer that sends it SIGUSR1 every 20 us while it works;
 * the handler fires sig:hit (the worker's index and the handler's count on
 * that thread) and counts it.  So each worker's first
 * event, the one that gives it a stream, comes from a handler that most
 * likely interrupted malloc or free: a runtime that allocated there
 * would deadlock or corrupt the heap.  Prints "fired INDEX COUNT" per
 * worker and "done".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <tracekit/tracekit.h>

TK_EVENT(sig, hit,
	TK_PROTO(uint32_t worker, uint64_t n),
	TK_ARGS(worker, n),
	TK_FIELDS(
		tk_field_int(uint32_t, worker, worker)
		tk_field_int(uint64_t, n, n)),
	TK_PRINT("worker=%u n=%lu", worker, n))

#define MAX_WORKERS 64

static unsigned workers = 4;
static unsigned long rounds = 200000;
static __thread int index_of_thread = -1;
static __thread uint64_t hits;
static uint64_t fired[MAX_WORKERS];

static void on_usr1(int sig)
{
	(void)sig;
	if (index_of_thread < 0)
		return;
	tk_trace(sig, hit, (uint32_t)index_of_thread, hits);
	hits++;
	__atomic_store_n(&fired[index_of_thread], hits, __ATOMIC_RELAXED);
}

static void *work(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg;
	unsigned seed = idx + 1;
	struct itimerspec every = { { 0, 20000 }, { 0, 20000 } };
	struct sigevent ev;
	timer_t timer;
	sigset_t set;

	index_of_thread = (int)idx;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer) ||
	    timer_settime(timer, 0, &every, NULL))
		abort();
	for (unsigned long r = 0; r < rounds; r++) {
		size_t n = 16 + rand_r(&seed) % 4096;
		char *p = malloc(n);

		if (!p)
			abort();
		memset(p, (int)r, n);
		free(p);
	}
	/* no handler runs after this: what was fired is final */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	timer_delete(timer);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_WORKERS];
	struct sigaction sa;
	int c;

	while ((c = getopt(argc, argv, "t:n:")) != -1) {
		switch (c) {
		case 't': workers = (unsigned)atoi(optarg); break;
		case 'n': rounds = strtoul(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (workers < 1 || workers > MAX_WORKERS)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	for (unsigned i = 0; i < workers; i++)
		pthread_create(&th[i], NULL, work, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < workers; i++)
		pthread_join(th[i], NULL);
	for (unsigned i = 0; i < workers; i++)
		printf("fired %u %lu\n", i, (unsigned long)fired[i]);
	printf("done\n");
	return 0;
}
