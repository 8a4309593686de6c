/* SPDX-License-Identifier: MIT */
/*
 * uprobed.c - a program not built for tracekit (no libtracekit, no
 * function-entry flags), for dynamic probes (tests/e2e/test_probes.py).
 *
 *   prog-uprobed N [MS]
 *
 * Calls f(i, "name") for i = 0 .. N-1; f returns 3 * i + strlen(name)
 * (3 * i + 4), so that entry arguments and return values are known.
 * Each iteration also fires two USDT probes (<sys/sdt.h>):
 *
 *   tkprog:tick(i, name, -i)   s32, a string's address, s64; no semaphore
 *   tkprog:guarded(i)          s32, behind its semaphore (in
 *                              uprobed-guard.c: <sys/sdt.h> gives every
 *                              probe of a file a semaphore, or none):
 *                              fired only while a tracer holds the
 *                              semaphore, and counted
 *
 * and makes exactly one strlen() call of its own (in f) through the PLT.
 * With MS, it prints "pid PID" first, and "done I" and sleeps MS
 * milliseconds after each iteration.  Prints "guarded G" and "sum S" at
 * the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>

int fire_guarded(int i);

/* A name the compiler cannot see through, so strlen stays a call. */
const char *volatile the_name = "name";

__attribute__((noinline)) int f(int i, const char *name)
{
	return 3 * i + (int)strlen(name);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long ms = argc > 2 ? atol(argv[2]) : 0;
	long sum = 0, guarded = 0;

	if (ms) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
	}

	for (int i = 0; i < n; i++) {
		const char *name = the_name;

		sum += f(i, name);
		STAP_PROBE3(tkprog, tick, i, name, -(long)i);
		guarded += fire_guarded(i);
		if (ms) {
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

			printf("done %d\n", i);
			fflush(stdout);
			nanosleep(&ts, NULL);
		}
	}
	printf("guarded %ld\nsum %ld\n", guarded, sum);
	return 0;
}
