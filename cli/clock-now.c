/* SPDX-License-Identifier: MIT */
/*
 * clock-now.c - clock pairs taken now, for the verbs that read an
 * instance started earlier by 'tracekit start'.  The rate is measured
 * over 200 ms, as record measures it over at least that: the error of a
 * pair (tens of ns) is then a few parts in 10^7.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "clock-now.h"
#include "session.h"

#define CLOCKSOURCE "/sys/devices/system/clocksource/clocksource0/current_clocksource"

#define SPAN_NS 200000000u

void clock_now(struct tk_trace_clock *c)
{
	struct timespec pause = { 0, SPAN_NS };

	memset(c, 0, sizeof(*c));
	c->tsc = TK_CLOCK_TSC;
	clock_sample(c->tsc, &c->tsc_start, &c->mono_start, &c->real_start);
	nanosleep(&pause, NULL);
	clock_sample(c->tsc, &c->tsc_stop, &c->mono_stop, &c->real_stop);
	c->freq = c->mono_stop > c->mono_start
		? (uint64_t)((unsigned __int128)(c->tsc_stop - c->tsc_start) *
			     1000000000u / (c->mono_stop - c->mono_start))
		: 1;
	if (!c->freq)
		c->freq = 1;
}

/* Whether the first "flags" line of /proc/cpuinfo has @flag. */
static bool cpu_flag(const char *flags, const char *flag)
{
	size_t n = strlen(flag);

	for (const char *p = flags; (p = strstr(p, flag)); p += n)
		if ((p == flags || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == ' ' || p[n] == '\n' || !p[n]))
			return true;
	return false;
}

static bool tsc_usable(char *why, size_t len)
{
	char line[8192], source[64] = "";
	bool constant = false, nonstop = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			constant = cpu_flag(line, "constant_tsc");
			nonstop = cpu_flag(line, "nonstop_tsc");
			break;
		}
	if (f)
		fclose(f);
	if (constant && nonstop)
		return true;
	f = fopen(CLOCKSOURCE, "r");
	if (f && fgets(source, sizeof(source), f))
		source[strcspn(source, "\n")] = '\0';
	if (f)
		fclose(f);
	if (!strcmp(source, "tsc"))
		return true;
	snprintf(why, len, "the TSC is not usable here (%s%s%s in /proc/cpuinfo, the kernel's clocksource is %s)",
		 constant ? "" : "no constant_tsc", !constant && !nonstop ? ", " : "",
		 nonstop ? "" : "no nonstop_tsc", source[0] ? source : "unknown");
	return false;
}

int clock_choose(bool *tsc, char *why, size_t len)
{
	const char *env = getenv(TK_CLOCK_ENV);

	why[0] = '\0';
	if (env && *env) {
		if (strcmp(env, "mono") && strcmp(env, "tsc")) {
			snprintf(why, len, TK_CLOCK_ENV "='%.32s': use tsc or mono", env);
			return -1;
		}
		*tsc = TK_CLOCK_TSC && !strcmp(env, "tsc");
		if (!*tsc)
			snprintf(why, len, TK_CLOCK_ENV "=%s", env);
		return 0;
	}
	*tsc = TK_CLOCK_TSC && tsc_usable(why, len);
	return 0;
}
