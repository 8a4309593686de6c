/* SPDX-License-Identifier: MIT */
/*
 * signal.c - test program: events fired from signal handlers that
 * interrupt the same thread while it is inside the tracing fast path.
 *
 *   prog-signal [-n N] [-m kill|itimer|both] [-p NS]
 *
 *   -n N     events fired by the main loop at least (default 200000)
 *   -H H     ... and more, until the handlers fired H events (default
 *            2000) or the loop fired -c CAP events (default 1000000)
 *   -m MODE  how the main thread is interrupted:
 *              kill    a second thread sends SIGUSR1 to it with
 *                      pthread_kill as fast as it can (default)
 *              itimer  setitimer(ITIMER_PROF) every 100 us (SIGPROF)
 *              both    both of the above
 *   -p NS    pause of the killer thread between signals (busy-wait, ns)
 *   -w       warm up: fire sig:start once before any signal, so that the
 *            thread's buffer exists when the handlers start firing
 *
 * The main loop starts once the interrupters are at work; it fires sig:loop
 * with seq = 0..N-1, and from then on each handler run fires sig:handler
 * with its own sequence number (n) and the signal number.  The handlers
 * count what they emitted.  At the end the program prints
 *
 *   loop N
 *   handler H        (handler events emitted, all signals together)
 *   handler_usr1 H1
 *   handler_prof H2
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <tracekit/tracekit.h>

TK_EVENT(sig, loop,
	TK_PROTO(uint64_t seq, const char *msg),
	TK_ARGS(seq, msg),
	TK_FIELDS(
		tk_field_int(uint64_t, seq, seq)
		tk_field_string(msg, msg)),
	TK_PRINT("seq=%lu msg=%s", seq, msg))

TK_EVENT(sig, start,
	TK_PROTO(int32_t warm),
	TK_ARGS(warm),
	TK_FIELDS(tk_field_int(int32_t, warm, warm)),
	TK_PRINT("warm=%d", warm))

TK_EVENT(sig, handler,
	TK_PROTO(uint64_t n, int32_t signo),
	TK_ARGS(n, signo),
	TK_FIELDS(
		tk_field_int(uint64_t, n, n)
		tk_field_int(int32_t, signo, signo)),
	TK_PRINT("n=%lu signo=%d", n, signo))

static uint64_t handler_seq;   /* touched only by handlers of the main thread */
static uint64_t emitted_usr1, emitted_prof;
static uint64_t seen_usr1, seen_prof; /* signals taken, armed or not */
static int armed;                    /* handlers fire events */
static volatile int stop;
static pthread_t main_thread;
static uint64_t pace_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_signal(int signo)
{
	int saved = errno;
	uint64_t n;

	__atomic_fetch_add(signo == SIGUSR1 ? &seen_usr1 : &seen_prof, 1,
			   __ATOMIC_RELAXED);
	if (!__atomic_load_n(&armed, __ATOMIC_RELAXED)) {
		errno = saved;
		return;
	}
	/* Both handlers block each other (sa_mask): nothing interrupts
	 * this but the main loop is interrupted by it. */
	n = __atomic_fetch_add(&handler_seq, 1, __ATOMIC_RELAXED);
	tk_trace(sig, handler, n, signo);
	if (signo == SIGUSR1)
		__atomic_fetch_add(&emitted_usr1, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&emitted_prof, 1, __ATOMIC_RELAXED);
	errno = saved;
}

/* With two CPUs or more, the killer and the main thread run on different
 * ones, so that the signals keep coming while the loop runs. */
static void pin(int which)
{
	cpu_set_t set;
	int cpus[2], found = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[found++] = c;
	if (found < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpus[which], &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *killer(void *arg)
{
	(void)arg;
	pin(1);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if (pthread_kill(main_thread, SIGUSR1) != 0)
			break;
		if (pace_ns) {
			uint64_t until = now_ns() + pace_ns;

			while (now_ns() < until)
				;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *msgs[] = { "zero", "one", "two", "three", "four",
				      "five", "six", "seven", "eight", "nine" };
	uint64_t n = 200000, min_handler = 2000, cap = 1000000, i;
	const char *mode = "kill";
	int use_kill, use_timer, warm = 0, c;
	struct sigaction sa;
	pthread_t th;

	while ((c = getopt(argc, argv, "n:H:c:m:p:w")) != -1) {
		switch (c) {
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 'H': min_handler = strtoull(optarg, NULL, 10); break;
		case 'c': cap = strtoull(optarg, NULL, 10); break;
		case 'm': mode = optarg; break;
		case 'p': pace_ns = strtoull(optarg, NULL, 10); break;
		case 'w': warm = 1; break;
		default: return 2;
		}
	}
	use_kill = !strcmp(mode, "kill") || !strcmp(mode, "both");
	use_timer = !strcmp(mode, "itimer") || !strcmp(mode, "both");
	if (!use_kill && !use_timer)
		return 2;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	sigaddset(&sa.sa_mask, SIGPROF);
	if (sigaction(SIGUSR1, &sa, NULL) < 0 || sigaction(SIGPROF, &sa, NULL) < 0)
		return 3;

	if (warm)
		tk_trace(sig, start, 1);

	/* Only the main thread takes the signals: the killer blocks them. */
	main_thread = pthread_self();
	pin(0);
	if (use_kill) {
		sigset_t set, old;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigaddset(&set, SIGPROF);
		pthread_sigmask(SIG_BLOCK, &set, &old);
		if (pthread_create(&th, NULL, killer, NULL) != 0)
			return 3;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (use_timer) {
		struct itimerval it = { { 0, 100 }, { 0, 100 } };

		if (setitimer(ITIMER_PROF, &it, NULL) < 0)
			return 3;
	}

	/* Start the loop only once the interrupters are at work. */
	while ((use_kill && !__atomic_load_n(&seen_usr1, __ATOMIC_RELAXED)) ||
	       (use_timer && !__atomic_load_n(&seen_prof, __ATOMIC_RELAXED)))
		;
	__atomic_store_n(&armed, 1, __ATOMIC_RELAXED);

	for (i = 0; i < cap && (i < n || __atomic_load_n(&handler_seq,
				__ATOMIC_RELAXED) < min_handler); i++)
		tk_trace(sig, loop, i, msgs[i % 10]);

	if (use_timer) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		setitimer(ITIMER_PROF, &off, NULL);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	if (use_kill)
		pthread_join(th, NULL);
	/* Nothing may be in flight now: block both and read the counters. */
	{
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigaddset(&set, SIGPROF);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	printf("loop %llu\n", (unsigned long long)i);
	printf("handler %llu\n", (unsigned long long)(emitted_usr1 + emitted_prof));
	printf("handler_usr1 %llu\n", (unsigned long long)emitted_usr1);
	printf("handler_prof %llu\n", (unsigned long long)emitted_prof);
	fflush(stdout);
	return 0;
}
