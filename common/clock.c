/* SPDX-License-Identifier: MIT */
/*
 * clock.c - the timestamp source.
 *
 * Events are stamped by tk__clock_of() (tracekit/runtime.h): the raw TSC
 * where the build has it (TK_CLOCK_TSC), unless the recorder found that
 * it does not run at a constant rate or stops in idle states
 * (cli/clock-now.c clock_choose) and had the session stamp with
 * CLOCK_MONOTONIC in ns instead; the tools turn ticks into seconds with
 * pairs of (TSC, CLOCK_MONOTONIC, CLOCK_REALTIME) readings taken at
 * start and stop.  tk__clock_mono() is that monotonic clock: exported by
 * libtracekit to the programs' inline code, and linked into the tools,
 * which stamp their own packets on the session's clock too
 * (cli/session.h clock_read).
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
