/* SPDX-License-Identifier: MIT */
/*
 * clock.c - the timestamp source.
 *
 * Events are stamped with the raw TSC (runtime.h, tk__clock) where it runs
 * at a constant rate and does not stop in idle states; the recorder turns
 * it into seconds with pairs of (TSC, CLOCK_MONOTONIC, CLOCK_REALTIME)
 * readings taken at start and stop.  Elsewhere (TK_CLOCK_TSC is 0)
 * tk__clock() calls tk__clock_mono(), here: exported by libtracekit to
 * the programs' inline code, and linked into the tools, which stamp
 * their own packets with tk__clock() too.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>

__attribute__((visibility("default"))) uint64_t tk__clock_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
