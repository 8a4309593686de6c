/* SPDX-License-Identifier: MIT */
/*
 * signal.c - test program: events fired from signal handlers that
 * interrupt the same thread while it is inside the tracing fast path.
 *
 *   prog-signal [-n N] [-H H] [-c CAP] [-m MODES] [-i US] [-w]
 *
 *   -n N      events fired by the main loop at least (default 200000)
 *   -H H      ... and more, until the handlers fired H events (default
 *             2000) or the loop fired CAP events (-c, default 1000000)
 *   -m MODES  how the main thread is interrupted, a comma-separated list:
 *               real   setitimer(ITIMER_REAL) every US microseconds
 *                      (SIGALRM; a high-resolution timer)
 *               prof   setitimer(ITIMER_PROF) every US microseconds
 *                      (SIGPROF; CPU time, ticks at the kernel's HZ)
 *               kill   a second thread sends SIGUSR1 to the main thread
 *                      with pthread_kill as fast as it can
 *             (default real,prof,kill)
 *   -i US     timer interval in microseconds (default 20)
 *   -w        warm up: fire sig:start once before any signal, so that the
 *             thread's buffer exists when the handlers start firing
 *
 * The main loop starts once every interrupter has been seen at work; it
 * fires sig:loop with seq = 0, 1, ... and, from its start on, each handler
 * run fires sig:handler with its own sequence number (n) and the signal
 * number.  The handlers count the events they emitted.  At the end:
 *
 *   loop N           (sig:loop events emitted: seq 0..N-1)
 *   handler H        (sig:handler events emitted, all signals together)
 *   handler_alrm H1
 *   handler_prof H2
 *   handler_usr1 H3
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include <tracekit/tracekit.h>

TK_EVENT(sig, start,
	TK_PROTO(int32_t warm),
	TK_ARGS(warm),
	TK_FIELDS(tk_field_int(int32_t, warm, warm)),
	TK_PRINT("warm=%d", warm))

TK_EVENT(sig, loop,
	TK_PROTO(uint64_t seq, const char *msg),
	TK_ARGS(seq, msg),
	TK_FIELDS(
		tk_field_int(uint64_t, seq, seq)
		tk_field_string(msg, msg)),
	TK_PRINT("seq=%lu msg=%s", seq, msg))

TK_EVENT(sig, handler,
	TK_PROTO(uint64_t n, int32_t signo),
	TK_ARGS(n, signo),
	TK_FIELDS(
		tk_field_int(uint64_t, n, n)
		tk_field_int(int32_t, signo, signo)),
	TK_PRINT("n=%lu signo=%d", n, signo))

enum { ALRM, PROF, USR1, NSRC };

static const int signos[NSRC] = { SIGALRM, SIGPROF, SIGUSR1 };
static uint64_t seen[NSRC];    /* signals taken, armed or not */
static uint64_t emitted[NSRC]; /* events fired by the handlers */
static uint64_t handler_seq;
static int armed; /* handlers fire events */
static int stop;
static pthread_t main_thread;

static int source_of(int signo)
{
	for (int s = 0; s < NSRC; s++)
		if (signos[s] == signo)
			return s;
	return USR1;
}

static void on_signal(int signo)
{
	int saved = errno, src = source_of(signo);
	uint64_t n;

	__atomic_fetch_add(&seen[src], 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&armed, __ATOMIC_RELAXED)) {
		/* The handlers block each other (sa_mask): nothing
		 * interrupts this, but it interrupts the main loop. */
		n = __atomic_fetch_add(&handler_seq, 1, __ATOMIC_RELAXED);
		tk_trace(sig, handler, n, signo);
		__atomic_fetch_add(&emitted[src], 1, __ATOMIC_RELAXED);
	}
	errno = saved;
}

static void *killer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		if (pthread_kill(main_thread, SIGUSR1) != 0)
			break;
	return NULL;
}

static void block_all(int how)
{
	sigset_t set;

	sigemptyset(&set);
	for (int s = 0; s < NSRC; s++)
		sigaddset(&set, signos[s]);
	pthread_sigmask(how, &set, NULL);
}

int main(int argc, char **argv)
{
	static const char *msgs[] = { "zero", "one", "two", "three", "four",
				      "five", "six", "seven", "eight", "nine" };
	uint64_t n = 200000, min_handler = 2000, cap = 1000000, i, total;
	long interval = 20;
	char modes[64] = "real,prof,kill";
	int use[NSRC] = { 0 }, warm = 0, c;
	struct sigaction sa;
	pthread_t th;

	while ((c = getopt(argc, argv, "n:H:c:m:i:w")) != -1) {
		switch (c) {
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 'H': min_handler = strtoull(optarg, NULL, 10); break;
		case 'c': cap = strtoull(optarg, NULL, 10); break;
		case 'm': snprintf(modes, sizeof(modes), "%s", optarg); break;
		case 'i': interval = atol(optarg); break;
		case 'w': warm = 1; break;
		default: return 2;
		}
	}
	for (char *save, *tok = strtok_r(modes, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "real"))
			use[ALRM] = 1;
		else if (!strcmp(tok, "prof"))
			use[PROF] = 1;
		else if (!strcmp(tok, "kill"))
			use[USR1] = 1;
		else
			return 2;
	}
	if (interval < 1 || cap < n)
		return 2;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (int s = 0; s < NSRC; s++)
		sigaddset(&sa.sa_mask, signos[s]);
	for (int s = 0; s < NSRC; s++)
		if (sigaction(signos[s], &sa, NULL) < 0)
			return 3;

	if (warm)
		tk_trace(sig, start, 1);

	/* Only the main thread takes the signals: the killer blocks them. */
	main_thread = pthread_self();
	if (use[USR1]) {
		block_all(SIG_BLOCK);
		if (pthread_create(&th, NULL, killer, NULL) != 0)
			return 3;
		block_all(SIG_UNBLOCK);
	}
	for (int s = ALRM; s <= PROF; s++) {
		struct itimerval it = { { 0, interval }, { 0, interval } };

		if (use[s] && setitimer(s == ALRM ? ITIMER_REAL : ITIMER_PROF,
					&it, NULL) < 0)
			return 3;
	}

	/* Start the loop only once every interrupter is at work. */
	for (int s = 0; s < NSRC; s++)
		while (use[s] && !__atomic_load_n(&seen[s], __ATOMIC_RELAXED))
			;
	__atomic_store_n(&armed, 1, __ATOMIC_RELAXED);

	for (i = 0; i < cap && (i < n || __atomic_load_n(&handler_seq,
				__ATOMIC_RELAXED) < min_handler); i++)
		tk_trace(sig, loop, i, msgs[i % 10]);

	/* Nothing may be in flight when the counters are read. */
	block_all(SIG_BLOCK);
	for (int s = ALRM; s <= PROF; s++) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		if (use[s])
			setitimer(s == ALRM ? ITIMER_REAL : ITIMER_PROF, &off,
				  NULL);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	if (use[USR1])
		pthread_join(th, NULL);

	total = emitted[ALRM] + emitted[PROF] + emitted[USR1];
	printf("loop %llu\n", (unsigned long long)i);
	printf("handler %llu\n", (unsigned long long)total);
	printf("handler_alrm %llu\n", (unsigned long long)emitted[ALRM]);
	printf("handler_prof %llu\n", (unsigned long long)emitted[PROF]);
	printf("handler_usr1 %llu\n", (unsigned long long)emitted[USR1]);
	fflush(stdout);
	return 0;
}
