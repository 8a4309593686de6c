/* SPDX-License-Identifier: MIT */
/*
 * funcconc.c - test program: functions patched and unpatched while another
 * thread keeps calling them.
 *
 *   prog-funcconc TOGGLES
 *
 * A worker thread calls compute(i) (compute > helper > helper_leaf) and
 * checks each result; the main thread turns the recording's function
 * tracer off and on again TOGGLES times (tk_functrace_disable/enable).
 * Prints "toggles N calls N errors N" (enable's result when it fails).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracekit/functrace.h>

static volatile int stop;
static long calls, errors;

__attribute__((noinline, noclone)) long helper_leaf(long x)
{
	__asm__ __volatile__("" ::: "memory");
	return x * 3;
}

__attribute__((noinline, noclone)) long helper(long x)
{
	long r = helper_leaf(x) + 1;

	__asm__ __volatile__("" ::: "memory");
	return r;
}

__attribute__((noinline, noclone)) long compute(long x)
{
	long r = helper(x);

	__asm__ __volatile__("" ::: "memory");
	return r;
}

static void *work(void *arg)
{
	(void)arg;
	for (long i = 0; !stop; i++) {
		if (compute(i) != i * 3 + 1)
			errors++;
		calls++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int toggles = argc > 1 ? atoi(argv[1]) : 10000, done = 0, ret = 0;
	pthread_t th;

	pthread_create(&th, NULL, work, NULL);
	for (; done < toggles; done++) {
		if (tk_functrace_disable() < 0 || (ret = tk_functrace_enable()) <= 0)
			break;
	}
	stop = 1;
	pthread_join(th, NULL);
	printf("toggles %d calls %ld errors %ld enable %d\n", done, calls, errors, ret);
	return done == toggles ? 0 : 1;
}
