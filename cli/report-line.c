/* SPDX-License-Identifier: MIT */
/*
 * report-line.c - the parts of report's event lines (report-line.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "report-line.h"

static uint64_t time_origin, time_prev;

void report_line_who(struct tk_obuf *o, const char *comm, size_t comm_len,
		     uint32_t tid)
{
	char tmp[64], digits[TK_NUM_MAX], *end = digits + sizeof(digits);
	char *d = tk_num_dec(end, tid), *b = tk_owrite_begin(o, tmp, sizeof(tmp));
	size_t dlen = (size_t)(end - d), n = 0;

	if (comm_len > 40)
		comm_len = 40;
	while (n + comm_len + 1 + dlen < 16)
		b[n++] = ' ';
	memcpy(b + n, comm, comm_len);
	n += comm_len;
	b[n++] = '-';
	memcpy(b + n, d, dlen);
	tk_owrite_end(o, b, n + dlen);
}

void report_time_origin(uint64_t ts)
{
	time_origin = time_prev = ts;
}

void report_line_time(struct tk_obuf *o, const struct tk_trace_clock *c,
		      enum ts_mode mode, uint64_t ts)
{
	static uint64_t last_secs = ~0ull;
	static char secs_text[TK_NUM_MAX];
	static size_t secs_len;
	uint64_t ns, us, since;
	char tmp[2 * TK_NUM_MAX + 1], *b;
	size_t n;

	switch (mode) {
	case TS_RAW:
		tk_oudec(o, ts);
		return;
	case TS_REAL:
		ns = tk_clock_to_real(c, ts);
		break;
	case TS_START:
	case TS_DELTA:
		since = mode == TS_START ? time_origin : time_prev;
		time_prev = ts;
		ns = ts > since ? (uint64_t)((unsigned __int128)(ts - since) *
					     1000000000u / c->freq) : 0;
		break;
	default:
		ns = tk_clock_to_mono(c, ts);
	}
	us = tk_num_usecs(ns);
	/* the seconds change seldom from one line to the next */
	if (us / 1000000u != last_secs) {
		last_secs = us / 1000000u;
		secs_len = tk_num_put_dec(secs_text, last_secs, 0, ' ');
	}
	b = tk_owrite_begin(o, tmp, sizeof(tmp));
	memcpy(b, secs_text, secs_len);
	n = secs_len;
	b[n++] = '.';
	tk_num_fixed(b + n, (uint32_t)(us % 1000000u), 6);
	tk_owrite_end(o, b, n + 6);
}

void report_line_dropped(const char *name, const char *sep, uint32_t num,
			 int64_t count)
{
	char line[128];
	struct tk_obuf o;

	report_line_start(&o, line, sizeof(line));
	tk_oput(&o, name, strnlen(name, 40));
	tk_oputs(&o, sep);
	tk_oudec(&o, num);
	tk_oput(&o, " [", 2);
	if (count >= 0) {
		tk_odec(&o, count);
		tk_oput(&o, " ", 1);
	}
	tk_oputs(&o, "EVENTS DROPPED]");
	report_line_end(&o);
}
