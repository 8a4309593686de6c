/* SPDX-License-Identifier: MIT */
/*
 * keys.c - test program for static keys (patched call sites).
 *
 *   prog-keys bytes        print the state of every site of this program:
 *                          "nop", "on" (jump to the event) or "test" (the
 *                          byte test, as compiled), off / with a probe /
 *                          off again
 *   prog-keys stress N     2 threads run a site while the main thread
 *                          connects and disconnects a probe N times; prints
 *                          "calls C" and "after 0" (probe calls once off)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracekit/tracekit.h>

TK_EVENT(keys, hit,
	TK_PROTO(uint32_t thread, uint64_t i),
	TK_ARGS(thread, i),
	TK_FIELDS(
		tk_field_int(uint32_t, thread, thread)
		tk_field_int(uint64_t, i, i)),
	TK_PRINT("thread=%u i=%lu", thread, i))

/* tracepoint.h declares __start_tk_keys/__stop_tk_keys: entries are three
 * int32, each relative to itself (site, on, event). */
#define KEYS_START ((const int32_t *)(const void *)__start_tk_keys)
#define KEYS_STOP ((const int32_t *)(const void *)__stop_tk_keys)

static volatile int stop;
static uint64_t calls[2];

static void probe(void *data, uint32_t thread, uint64_t i)
{
	(void)data;
	(void)i;
	__atomic_fetch_add(&calls[thread], 1, __ATOMIC_RELAXED);
}

static const char *site_state(const int32_t *e)
{
	const uint8_t *site = (const uint8_t *)e + e[0];
	const uint8_t *on = (const uint8_t *)(e + 1) + e[1];
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	int32_t rel;

	if (!memcmp(site, nop5, 5))
		return "nop";
	if (site[0] != 0xe9)
		return "other";
	memcpy(&rel, site + 1, 4);
	return site + 5 + rel == on ? "on" : "test";
}

static void print_sites(const char *when)
{
	printf("%s:", when);
	for (const int32_t *e = KEYS_START; e < KEYS_STOP; e += 3)
		printf(" %s", site_state(e));
	printf("\n");
}

static void *spin(void *arg)
{
	uint32_t thread = (uint32_t)(uintptr_t)arg;

	for (uint64_t i = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++)
		tk_trace(keys, hit, thread, i);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "bytes")) {
		print_sites("off");
		tk_probe_connect(keys, hit, probe, NULL);
		print_sites("probe");
		tk_trace(keys, hit, 0, 1);
		tk_probe_disconnect(keys, hit, probe, NULL);
		print_sites("again");
		tk_trace(keys, hit, 0, 2);
		printf("calls %llu\n", (unsigned long long)calls[0]);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "stress")) {
		long n = atol(argv[2]);
		pthread_t th[2];
		uint64_t before;

		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, spin, (void *)(uintptr_t)i);
		for (long i = 0; i < n; i++) {
			tk_probe_connect(keys, hit, probe, NULL);
			tk_probe_disconnect(keys, hit, probe, NULL);
		}
		before = calls[0] + calls[1];
		/* Off now: the threads go on running the site for a while. */
		for (volatile long i = 0; i < 20000000; i++)
			;
		stop = 1;
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		printf("calls %llu\nafter %llu\n", (unsigned long long)before,
		       (unsigned long long)(calls[0] + calls[1] - before));
		print_sites("end");
		return 0;
	}
	return 2;
}
