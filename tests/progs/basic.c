/* SPDX-License-Identifier: MIT */
/*
 * basic.c - test program: THREADS threads each fire N test:seq events.
 *
 *   prog-basic [-n N] [-t THREADS] [-p NS_PACE] [-s N,US] [-f] [-r FILE] [-k]
 *              [-D US]
 *
 *   -n N        events per thread (default 1000)
 *   -t T        threads (default 1)
 *   -p NS       pause between events, in ns (busy-wait on the clock)
 *   -s N,US     after every N events, sleep US microseconds (bursts)
 *   -f          forever: fire until killed
 *   -r FILE     write "ready PID" to FILE once running (for attach tests)
 *   -k          also fire one test:kinds event with known values
 *   -D US       sleep US microseconds after the start event and after
 *               starting each thread (each has a time of its own)
 *   -w          wait for SIGUSR1 before firing (after -r)
 *   -c FILE     after each event of thread 0, store its sequence number + 1
 *               in FILE (8 bytes, shared mapping): what it has committed,
 *               readable after the program is killed
 *
 * Prints "emitted THREAD COUNT" per thread at the end.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "counter.h"
#include "test-events.h"

static uint64_t per_thread = 1000, pace_ns, burst, burst_sleep_us;
static int forever, wait_signal;
static volatile sig_atomic_t go;
static volatile uint64_t *committed;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *fire(void *arg)
{
	uint32_t thread = (uint32_t)(uintptr_t)arg;
	static const char *msgs[] = { "zero", "one", "two", "three", "four",
				      "five", "six", "seven", "eight", "nine" };
	uint64_t i, next = now_ns();

	for (i = 0; forever || i < per_thread; i++) {
		if (pace_ns) {
			while (now_ns() < next)
				;
			next += pace_ns;
		}
		tk_trace(test, seq, thread, i, msgs[i % 10]);
		if (committed && thread == 0)
			*committed = i + 1;
		if (burst && (i + 1) % burst == 0)
			usleep((useconds_t)burst_sleep_us);
	}
	printf("emitted %u %llu\n", thread, (unsigned long long)i);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	unsigned threads = 1;
	const char *ready = NULL;
	int kinds = 0, c;
	unsigned long start_sleep_us = 0;
	pthread_t th[64];

	while ((c = getopt(argc, argv, "n:t:p:s:fr:kwc:D:")) != -1) {
		switch (c) {
		case 'n': per_thread = strtoull(optarg, NULL, 10); break;
		case 't': threads = (unsigned)atoi(optarg); break;
		case 'p': pace_ns = strtoull(optarg, NULL, 10); break;
		case 's':
			if (sscanf(optarg, "%lu,%lu", &burst, &burst_sleep_us) != 2)
				return 2;
			break;
		case 'f': forever = 1; break;
		case 'r': ready = optarg; break;
		case 'k': kinds = 1; break;
		case 'w': wait_signal = 1; break;
		case 'c': committed = map_counter(optarg); break;
		case 'D': start_sleep_us = strtoul(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (threads < 1 || threads > 64)
		return 2;
	signal(SIGUSR1, on_usr1);
	if (ready) {
		FILE *f = fopen(ready, "w");

		fprintf(f, "ready %d\n", (int)getpid());
		fclose(f);
	}
	while (wait_signal && !go)
		usleep(1000);
	tk_trace(test, phase, "start");
	if (kinds) {
		static const unsigned char bytes[] = { 0xde, 0xad, 0xbe, 0xef };

		tk_trace(test, kinds, -8, -1600, -320000, -6400000000LL, 200,
			 65000, 4000000000u, 18000000000000000000ull,
			 (const void *)0x1234abcd, 2.5, "abcdefghij", "hello world",
			 bytes, 4);
	}
	for (unsigned i = 0; i < threads; i++) {
		if (start_sleep_us)
			usleep((useconds_t)start_sleep_us);
		pthread_create(&th[i], NULL, fire, (void *)(uintptr_t)i);
	}
	if (start_sleep_us)
		usleep((useconds_t)start_sleep_us);
	for (unsigned i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	tk_trace(test, phase, "end");
	fflush(stdout);
	return 0;
}
