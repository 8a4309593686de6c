/* SPDX-License-Identifier: MIT */
/*
 * cpuhop.c - test program for the CPU of user events: threads that move
 * from one CPU to another between their events (test_cpu.py).
 *
 *   prog-cpuhop [-n N] [-t THREADS]
 *
 * The main thread and THREADS - 1 workers (default 2 threads in all) each
 * make N rounds (default 100); round i pins the thread to the first or
 * the second CPU it may run on (i even: the first) with
 * sched_setaffinity, which moves it there before it returns, then
 *
 *   hop:before(i, want, seen)   getppid()   hop:after(i, want, seen)
 *   hop_mark(i) (a function the function tracer can trace, after each)
 *
 * want is the CPU it was pinned to, seen what sched_getcpu() said just
 * before the event.  getppid() is made with syscall(2), so that the kernel
 * records it.  Prints "cpus A B" (the two CPUs) and "tid TID" per thread
 * first; with fewer than two CPUs allowed it prints "cpus A" and exits 0
 * with no event.  Exits 3 if a pinning fails.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <tracekit/tracekit.h>

#define HOP_EVENT(name)                                                       \
	TK_EVENT(hop, name,                                                   \
		TK_PROTO(uint32_t i, int32_t want, int32_t seen),             \
		TK_ARGS(i, want, seen),                                       \
		TK_FIELDS(                                                    \
			tk_field_int(uint32_t, i, i)                          \
			tk_field_int(int32_t, want, want)                     \
			tk_field_int(int32_t, seen, seen)),                   \
		TK_PRINT("i=%u want=%d seen=%d", i, want, seen))

HOP_EVENT(before)
HOP_EVENT(after)

static int cpus[2];
static unsigned rounds = 100;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void hop_mark(unsigned i)
{
	__asm__ __volatile__("" : : "r"(i) : "memory");
}

static void *hop(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&out_lock);
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	for (unsigned i = 0; i < rounds; i++) {
		int want = cpus[i & 1];
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(want, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			exit(3);
		tk_trace(hop, before, i, want, sched_getcpu());
		hop_mark(i);
		syscall(SYS_getppid);
		tk_trace(hop, after, i, want, sched_getcpu());
		hop_mark(i);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned threads = 2, n = 0;
	pthread_t th[64];
	cpu_set_t set;
	int c;

	while ((c = getopt(argc, argv, "n:t:")) != -1) {
		switch (c) {
		case 'n': rounds = (unsigned)atoi(optarg); break;
		case 't': threads = (unsigned)atoi(optarg); break;
		default: return 2;
		}
	}
	if (!threads || threads > 64 || sched_getaffinity(0, sizeof(set), &set) < 0)
		return 2;
	for (int cpu = 0; cpu < CPU_SETSIZE && n < 2; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	if (n < 2) {
		printf("cpus %d\n", cpus[0]);
		return 0;
	}
	printf("cpus %d %d\n", cpus[0], cpus[1]);
	fflush(stdout);
	for (unsigned i = 1; i < threads; i++)
		if (pthread_create(&th[i], NULL, hop, NULL) != 0)
			return 3;
	hop(NULL);
	for (unsigned i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
