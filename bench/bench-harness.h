/* SPDX-License-Identifier: MIT */
/*
 * bench-harness.h - the loop shared by every benchmark program, so that
 * each tracer is measured by the same code around its call site.
 *
 * A program defines its call sites, then includes this file:
 *
 *   #define BENCH_SITES(X)  X(site, tk_trace(bench, event, (int64_t)i, \
 *                                            (int64_t)idx, "hello world!"))
 *   #include "bench-harness.h"
 *
 * Each X(name, statement) becomes a loop that runs the statement once per
 * iteration; the statement sees `i` (the iteration, uint64_t) and `idx`
 * (the thread's index, unsigned).  The harness adds a loop "empty" with no
 * statement.  An optional BENCH_THREAD_INIT(idx) runs in each thread before
 * it is timed.
 *
 *   PROG SITE N [THREADS [PACE]]
 *
 * runs SITE N times in each of THREADS threads (default 1), started
 * together.  PACE > 0 paces each thread at PACE events per second: the
 * loop runs in batches of BENCH_BATCH iterations and, after each batch,
 * spins on the clock until the batch is due (one clock read per batch, so
 * the pacing costs ~0.5 ns per event; the thread keeps its CPU busy).
 * PACE:sleep (e.g. 4000000:sleep) runs batches of about 1 ms and sleeps
 * until the next one is due, leaving the CPU to other threads.  Each
 * thread times its own loop.  Prints:
 *
 *   ns_per_event X       the median thread's ns per iteration (wall time)
 *   cpu_ns_per_event X   the same in the thread's own CPU time (without the
 *                        time other threads, e.g. a recorder, took its CPU)
 *   events N             iterations of all threads (events emitted)
 *   thread_ns X Y ...    each thread's ns per iteration
 *   rate R               the median thread's events per second (wall)
 *   process_cpu_ns X     the whole process's CPU time (getrusage, user +
 *                        system, every thread: the runtime's too), so that
 *                        a recorder's own CPU time can be told from its
 *                        child's
 *   INFO                 the program's BENCH_INFO line, if it defines one
 */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define BENCH_BATCH 64
#define BENCH_MAX_THREADS 64
#define BENCH_BARRIER() __asm__ __volatile__("" ::: "memory")

#ifndef BENCH_THREAD_INIT
#define BENCH_THREAD_INIT(idx) ((void)(idx))
#endif

static double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline void bench_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause");
#endif
}

/* Pacing: after each batch, wait until the batch is due: spin on the
 * clock, or (PACE:sleep) sleep when the wait is longer than 100 us, so that
 * the paced threads leave the CPU to others (the recorder) as a program
 * emitting at that rate and doing nothing else would. */
static uint64_t bench__batch = BENCH_BATCH;
static int bench__sleep;

static void bench__wait(double due)
{
	double now = bench_now_ns();

	if (bench__sleep && due - now > 100e3) {
		struct timespec ts;

		ts.tv_sec = (time_t)(due / 1e9);
		ts.tv_nsec = (long)(due - ts.tv_sec * 1e9);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
			;
		return;
	}
	while (now < due) {
		bench_relax();
		now = bench_now_ns();
	}
}

/* One free-running loop and one paced loop per site; never inlined, so
 * that every site gets a loop of its own, compiled the same way. */
#define BENCH__LOOPS(name, stmt)                                             \
	static __attribute__((noinline)) void bench__run_##name(           \
		uint64_t n, unsigned idx)                                    \
	{                                                                    \
		for (uint64_t i = 0; i < n; i++) {                           \
			stmt;                                                \
			BENCH_BARRIER();                                     \
		}                                                            \
		(void)idx;                                                   \
	}                                                                    \
	static __attribute__((noinline)) void bench__paced_##name(         \
		uint64_t n, unsigned idx, double pace, double t0)            \
	{                                                                    \
		double ns_per = 1e9 / pace;                                  \
		uint64_t i = 0;                                              \
		while (i < n) {                                              \
			uint64_t end = n - i > bench__batch ? i + bench__batch \
							    : n;             \
			for (; i < end; i++) {                               \
				stmt;                                        \
				BENCH_BARRIER();                             \
			}                                                    \
			bench__wait(t0 + (double)i * ns_per);                \
		}                                                            \
		(void)idx;                                                   \
	}

BENCH_SITES(BENCH__LOOPS)
BENCH__LOOPS(empty, (void)0)

struct bench__site {
	const char *name;
	void (*run)(uint64_t n, unsigned idx);
	void (*paced)(uint64_t n, unsigned idx, double pace, double t0);
};

#define BENCH__ENTRY(name, stmt) { #name, bench__run_##name, bench__paced_##name },
static const struct bench__site bench__sites[] = {
	BENCH_SITES(BENCH__ENTRY)
	{ "empty", bench__run_empty, bench__paced_empty },
};

static const struct bench__site *bench__site;
static uint64_t bench__n;
static double bench__pace;
static double bench__thread_ns[BENCH_MAX_THREADS];
static double bench__thread_wall[BENCH_MAX_THREADS];
static double bench__thread_cpu[BENCH_MAX_THREADS];
static pthread_barrier_t bench__barrier;

static void *bench__thread(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg;
	double start, end, cpu;

	BENCH_THREAD_INIT(idx);
	pthread_barrier_wait(&bench__barrier);
	cpu = bench_cpu_ns();
	start = bench_now_ns();
	if (bench__pace > 0)
		bench__site->paced(bench__n, idx, bench__pace, start);
	else
		bench__site->run(bench__n, idx);
	end = bench_now_ns();
	bench__thread_cpu[idx] = (bench_cpu_ns() - cpu) / (double)bench__n;
	bench__thread_ns[idx] = (end - start) / (double)bench__n;
	bench__thread_wall[idx] = (end - start) / 1e9;
	return NULL;
}

static int bench__cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double bench__median(double *v, unsigned n)
{
	double s[BENCH_MAX_THREADS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), bench__cmp);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	pthread_t th[BENCH_MAX_THREADS];
	unsigned t = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SITE N [THREADS [PACE]]\n", argv[0]);
		return 2;
	}
	for (size_t k = 0; k < sizeof(bench__sites) / sizeof(bench__sites[0]); k++)
		if (!strcmp(argv[1], bench__sites[k].name))
			bench__site = &bench__sites[k];
	if (!bench__site) {
		fprintf(stderr, "%s: unknown site '%s'\n", argv[0], argv[1]);
		return 2;
	}
	bench__n = strtoull(argv[2], NULL, 0);
	if (argc > 3)
		t = (unsigned)atoi(argv[3]);
	if (argc > 4) {
		char *mode;

		bench__pace = strtod(argv[4], &mode);
		if (!strcmp(mode, ":sleep")) {
			/* batches of ~1 ms, then sleep until due */
			bench__sleep = 1;
			if (bench__pace / 1000 > BENCH_BATCH)
				bench__batch = (uint64_t)(bench__pace / 1000);
		} else if (*mode) {
			fprintf(stderr, "%s: bad PACE '%s'\n", argv[0], argv[4]);
			return 2;
		}
	}
	if (bench__n < 1 || t < 1 || t > BENCH_MAX_THREADS) {
		fprintf(stderr, "%s: bad N or THREADS\n", argv[0]);
		return 2;
	}
	pthread_barrier_init(&bench__barrier, NULL, t);
	for (unsigned k = 0; k < t; k++)
		pthread_create(&th[k], NULL, bench__thread, (void *)(uintptr_t)k);
	for (unsigned k = 0; k < t; k++)
		pthread_join(th[k], NULL);
	printf("ns_per_event %.3f\n", bench__median(bench__thread_ns, t));
	printf("cpu_ns_per_event %.3f\n", bench__median(bench__thread_cpu, t));
	printf("events %llu\n", (unsigned long long)(bench__n * t));
	printf("thread_ns");
	for (unsigned k = 0; k < t; k++)
		printf(" %.3f", bench__thread_ns[k]);
	printf("\nrate %.0f\n", (double)bench__n / bench__median(bench__thread_wall, t));
	{
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		printf("process_cpu_ns %.0f\n",
		       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
			       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3);
	}
#ifdef BENCH_INFO
	printf("%s\n", BENCH_INFO);
#endif
	return 0;
}

#endif
