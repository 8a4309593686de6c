/* SPDX-License-Identifier: MIT */
/*
 * toobig.c - test program: the main thread fires N test:seq events with a
 * short message; a second thread fires M test:seq events whose message is
 * BYTES long (larger than a sub-buffer: each is lost as too large).
 *
 *   prog-toobig N M BYTES
 *
 * Prints "emitted 0 N" and "emitted 1 M" at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test-events.h"

static unsigned long small, big, bytes;

static void *fire_big(void *arg)
{
	char *msg = malloc(bytes + 1);

	(void)arg;
	if (!msg)
		exit(1);
	memset(msg, 'x', bytes);
	msg[bytes] = '\0';
	for (unsigned long i = 0; i < big; i++)
		tk_trace(test, seq, 1, i, msg);
	free(msg);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 4) {
		fprintf(stderr, "usage: prog-toobig N M BYTES\n");
		return 2;
	}
	small = strtoul(argv[1], NULL, 0);
	big = strtoul(argv[2], NULL, 0);
	bytes = strtoul(argv[3], NULL, 0);
	for (unsigned long i = 0; i < small; i++)
		tk_trace(test, seq, 0, i, "small");
	if (pthread_create(&t, NULL, fire_big, NULL) || pthread_join(t, NULL))
		return 1;
	printf("emitted 0 %lu\nemitted 1 %lu\n", small, big);
	return 0;
}
