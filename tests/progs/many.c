/* SPDX-License-Identifier: MIT */
/*
 * many.c - test program: many threads that fire one event each.
 *
 *   prog-many [-t THREADS] [-s]
 *
 * THREADS threads (default 400) each fire test:seq once (thread = its
 * index, seq 0) and wait until all have; then the program prints its
 * shared memory ("shmem KB", RssShmem of /proc/self/status: the buffers
 * the threads hold) and lets them go.  With -s the threads run one after
 * the other instead, each exiting before the next starts (1000 by
 * default then), and the figure is taken at the end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test-events.h"

static pthread_barrier_t fired, leave;
static int one_by_one;

static void *run(void *arg)
{
	tk_trace(test, seq, (uint32_t)(uintptr_t)arg, 0, "zero");
	if (!one_by_one) {
		pthread_barrier_wait(&fired);
		pthread_barrier_wait(&leave);
	}
	return NULL;
}

static void print_shmem(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "RssShmem:", 9))
			printf("shmem %ld\n", strtol(line + 9, NULL, 10));
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	unsigned n = 0;
	pthread_attr_t attr;
	pthread_t *th;
	int c;

	while ((c = getopt(argc, argv, "t:s")) != -1) {
		switch (c) {
		case 't': n = (unsigned)atoi(optarg); break;
		case 's': one_by_one = 1; break;
		default: return 2;
		}
	}
	if (!n)
		n = one_by_one ? 1000 : 400;
	th = calloc(n, sizeof(*th));
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (!one_by_one) {
		pthread_barrier_init(&fired, NULL, n + 1);
		pthread_barrier_init(&leave, NULL, n + 1);
	}
	for (unsigned i = 0; i < n; i++) {
		if (pthread_create(&th[i], &attr, run, (void *)(uintptr_t)i))
			return 1;
		if (one_by_one)
			pthread_join(th[i], NULL);
	}
	if (!one_by_one)
		pthread_barrier_wait(&fired);
	print_shmem();
	fflush(stdout);
	if (!one_by_one) {
		pthread_barrier_wait(&leave);
		for (unsigned i = 0; i < n; i++)
			pthread_join(th[i], NULL);
	}
	printf("threads %u\n", n);
	return 0;
}
