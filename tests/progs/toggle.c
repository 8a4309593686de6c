/* SPDX-License-Identifier: MIT */
/*
 * toggle.c - test program: turning an event on and off, and connecting
 * and disconnecting a probe, while other threads fire it; and markers.
 *
 *   prog-toggle [-n N] [-t T] [-p NS]
 *   prog-toggle -M
 *
 *   -n N    toggles (default 100000): each turns tog:ev on and off with
 *           tk_enable/tk_disable, and connects and disconnects a probe
 *   -t T    threads firing tog:ev without pause (default 2)
 *   -p NS   pause between two events of a firing thread (busy-wait, ns;
 *           default 0)
 *   -M      markers only: fire the markers listed in marks() and print,
 *           for each hit, "expect NAME|TEXT" where TEXT is what printf
 *           makes of the marker's format and arguments
 *
 * tog:ev carries seq, triple = seq * 3 + 1 and msg = the name of seq's
 * last digit: the reader can check every field against seq.  The probe
 * checks the same and counts its calls; it also checks that it never runs
 * after tk_probe_disconnect returned.  tog:start fires once, at the start
 * (record it with -e tog:start: tog:ev is then recorded only while the
 * program turns it on).  At the end the program prints
 *
 *   fired THREAD COUNT          per firing thread
 *   enable_matched M            sum of what tk_enable returned
 *   probe_calls C
 *   probe_bad B                 calls with inconsistent arguments
 *   probe_late L                calls after disconnect returned
 *   errors E                    API calls that failed
 *
 * and exits 1 if B, L or E is not 0.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <tracekit/tracekit.h>

TK_EVENT(tog, start,
	TK_PROTO(int32_t threads, int32_t toggles),
	TK_ARGS(threads, toggles),
	TK_FIELDS(
		tk_field_int(int32_t, threads, threads)
		tk_field_int(int32_t, toggles, toggles)),
	TK_PRINT("threads=%d toggles=%d", threads, toggles))

TK_EVENT(tog, ev,
	TK_PROTO(uint32_t thread, uint64_t seq, const char *msg),
	TK_ARGS(thread, seq, msg),
	TK_FIELDS(
		tk_field_int(uint32_t, thread, thread)
		tk_field_int(uint64_t, seq, seq)
		tk_field_int(uint64_t, triple, seq * 3 + 1)
		tk_field_string(msg, msg)),
	TK_PRINT("thread=%u seq=%lu triple=%lu msg=%s", thread, seq, triple, msg))

static const char *const digits[] = { "zero", "one", "two", "three", "four",
				       "five", "six", "seven", "eight", "nine" };

struct probe_state {
	unsigned threads;
	int connected; /* 1 from before connect until disconnect returned */
	uint64_t calls, bad, late;
};

static int stop;
static uint64_t pace_ns;
static unsigned nthreads = 2;
static uint64_t fired[64];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void probe(void *data, uint32_t thread, uint64_t seq, const char *msg)
{
	struct probe_state *ps = data;

	if (!__atomic_load_n(&ps->connected, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&ps->late, 1, __ATOMIC_RELAXED);
	if (thread >= ps->threads || !msg || strcmp(msg, digits[seq % 10]))
		__atomic_fetch_add(&ps->bad, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ps->calls, 1, __ATOMIC_RELAXED);
}

static void *fire(void *arg)
{
	uint32_t thread = (uint32_t)(uintptr_t)arg;
	uint64_t i;

	for (i = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++) {
		tk_trace(tog, ev, thread, i, digits[i % 10]);
		if (pace_ns) {
			uint64_t until = now_ns() + pace_ns;

			while (now_ns() < until)
				;
		}
	}
	fired[thread] = i;
	return NULL;
}

#define MARK(name, fmt, ...)                                                  \
	do {                                                                 \
		tk_mark(name, fmt, __VA_ARGS__);                             \
		printf("expect %s|" fmt "\n", #name, __VA_ARGS__);           \
	} while (0)
#define MARK0(name, fmt)                                                      \
	do {                                                                 \
		tk_mark(name, fmt);                                          \
		printf("expect %s|" fmt "\n", #name);                        \
	} while (0)

/* Every marker the test knows, in order. */
static int marks(void)
{
	const char *who = "main";
	char buf[16] = "mutable";
	void *p = (void *)(uintptr_t)0x1234abcdu;
	int n = 42;

	MARK(app_tick, "tick %d of %s", n, who);
	MARK(app_ints, "d=%d i=%i neg=%d min=%d", -17, 2147483647, -1, INT_MIN);
	MARK(app_ptr, "p=%p", p);
	MARK(app_double, "f=%f g=%g e=%e", 3.14159, 0.5, 12345.678);
	MARK(app_string, "s=[%s] empty=[%s] buf=%s", "two words", "", buf);
	MARK(app_wide, "ld=%ld lu=%lu x=%x u=%u", -5000000000L,
	     18000000000000000000UL, 255u, 4000000000u);
	MARK(app_mixed, "%s:%d:%p:%f", "m", -3, p, -0.25);
	MARK(app_format, "[%5d] [%-4s] [%08.3f] [%c] [%lld] [%#x] [%+d] [%.2s]",
	     42, "ab", 3.14159, 'A', -1234567890123LL, 255u, 5, "xyz");
	MARK0(app_nothing, "no arguments here");
	MARK0(app_percent, "100%% done");
	MARK(app_multi_part, "first underscore splits: %d", 1);
	MARK(plain, "no underscore %d", 7);
	for (int i = 0; i < 5; i++)
		MARK(app_loop, "iteration %d", i);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static struct probe_state ps;
	unsigned toggles = 100000;
	uint64_t matched = 0, errors = 0;
	pthread_t th[64];
	int c;

	while ((c = getopt(argc, argv, "n:t:p:M")) != -1) {
		switch (c) {
		case 'n': toggles = (unsigned)atoi(optarg); break;
		case 't': nthreads = (unsigned)atoi(optarg); break;
		case 'p': pace_ns = strtoull(optarg, NULL, 10); break;
		case 'M': return marks();
		default: return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64)
		return 2;
	ps.threads = nthreads;
	tk_trace(tog, start, (int32_t)nthreads, (int32_t)toggles);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, fire, (void *)(uintptr_t)i);

	for (unsigned i = 0; i < toggles; i++) {
		/* Alternate the exact name and a glob for the rule. */
		const char *pat = (i & 1) ? "tog:e*" : "tog:ev";
		int r = tk_enable(pat);

		if (r < 0)
			errors++;
		else
			matched += (uint64_t)r;
		__atomic_store_n(&ps.connected, 1, __ATOMIC_RELEASE);
		if (tk_probe_connect(tog, ev, probe, &ps) != 0)
			errors++;
		if (tk_disable(pat) < 0)
			errors++;
		if (tk_probe_disconnect(tog, ev, probe, &ps) != 0)
			errors++;
		__atomic_store_n(&ps.connected, 0, __ATOMIC_RELEASE);
	}

	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	for (unsigned i = 0; i < nthreads; i++)
		printf("fired %u %llu\n", i, (unsigned long long)fired[i]);
	printf("enable_matched %llu\n", (unsigned long long)matched);
	printf("probe_calls %llu\n", (unsigned long long)ps.calls);
	printf("probe_bad %llu\n", (unsigned long long)ps.bad);
	printf("probe_late %llu\n", (unsigned long long)ps.late);
	printf("errors %llu\n", (unsigned long long)errors);
	fflush(stdout);
	return ps.bad || ps.late || errors ? 1 : 0;
}
