/* SPDX-License-Identifier: MIT */
/*
 * clock-now.c - clock pairs taken now, for the verbs that read an
 * instance started earlier by 'tracekit start'.  The rate is measured
 * over 200 ms, as record measures it over at least that: the error of a
 * pair (tens of ns) is then a few parts in 10^7.
 */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>
#include "clock-now.h"
#include "session.h"

#define SPAN_NS 200000000u

void clock_now(struct tk_trace_clock *c)
{
	struct timespec pause = { 0, SPAN_NS };

	memset(c, 0, sizeof(*c));
	c->tsc = TK_CLOCK_TSC;
	clock_sample(&c->tsc_start, &c->mono_start, &c->real_start);
	nanosleep(&pause, NULL);
	clock_sample(&c->tsc_stop, &c->mono_stop, &c->real_stop);
	c->freq = c->mono_stop > c->mono_start
		? (uint64_t)((unsigned __int128)(c->tsc_stop - c->tsc_start) *
			     1000000000u / (c->mono_stop - c->mono_start))
		: 1;
	if (!c->freq)
		c->freq = 1;
}
