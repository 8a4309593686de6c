/* SPDX-License-Identifier: MIT */
/*
 * latency.c - test program for `tracekit hist`: requests of known length.
 *
 *   prog-latency [N]
 *
 * First a warm-up pair, lat:start(id=1000000) and lat:done(id=1000000,
 * kind=9, gap=0), which pays for the thread's first events (its buffer
 * is made then).  Request i (0 <= i < N, default 200) fires lat:start(id=i), busy-waits
 * (i % 5 + 1) * 20000 TSC ticks (20,000,000 more for the last one, so it
 * is the slowest by far), then fires lat:done(id=i, kind=i%5, gap=the
 * ticks it measured around the wait).  Then the cases hist must count
 * apart: lat:start(N) with no done, lat:done(N+1) with no start, and
 * lat:start(N+2) twice before its done (the first start is replaced).
 *
 * Prints "gap ID TICKS" for each request, then "sum KIND TICKS COUNT"
 * for each kind.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>
#include <tracekit/tracekit.h>

TK_EVENT(lat, start,
	TK_PROTO(uint32_t id),
	TK_ARGS(id),
	TK_FIELDS(tk_field_int(uint32_t, id, id)),
	TK_PRINT("id=%u", id))

TK_EVENT(lat, done,
	TK_PROTO(uint32_t id, uint32_t kind, uint64_t gap),
	TK_ARGS(id, kind, gap),
	TK_FIELDS(
		tk_field_int(uint32_t, id, id)
		tk_field_int(uint32_t, kind, kind)
		tk_field_int(uint64_t, gap, gap)),
	TK_PRINT("id=%u kind=%u gap=%lu", id, kind, gap))

static uint64_t spin(uint64_t ticks)
{
	uint64_t t0 = __rdtsc(), t1;

	do
		t1 = __rdtsc();
	while (t1 - t0 < ticks);
	return t1 - t0;
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 200;
	uint64_t sum[5] = { 0 }, count[5] = { 0 };

	tk_trace(lat, start, 1000000);
	tk_trace(lat, done, 1000000, 9, 0);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t want = (i % 5 + 1) * 20000ull + (i == n - 1 ? 20000000 : 0), got;

		tk_trace(lat, start, i);
		got = spin(want);
		tk_trace(lat, done, i, i % 5, got);
		printf("gap %u %llu\n", i, (unsigned long long)got);
		sum[i % 5] += got;
		count[i % 5]++;
	}
	tk_trace(lat, start, n);
	tk_trace(lat, done, n + 1, 0, 0);
	tk_trace(lat, start, n + 2);
	tk_trace(lat, start, n + 2);
	tk_trace(lat, done, n + 2, 0, 0);
	for (int k = 0; k < 5; k++)
		printf("sum %d %llu %llu\n", k, (unsigned long long)sum[k],
		       (unsigned long long)count[k]);
	return 0;
}
