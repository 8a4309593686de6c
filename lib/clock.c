/* SPDX-License-Identifier: MIT */
/*
 * clock.c - the timestamp source.
 *
 * Events are stamped with the raw TSC (runtime.h, tk__clock) where it runs
 * at a constant rate and does not stop in idle states; the recorder turns
 * it into seconds with pairs of (TSC, CLOCK_MONOTONIC, CLOCK_REALTIME)
 * readings taken at start and stop.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "internal.h"

bool tk_clock_is_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return true;
#else
	return false;
#endif
}

TK_EXPORT uint64_t tk__clock_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
