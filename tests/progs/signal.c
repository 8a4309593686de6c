/* SPDX-License-Identifier: MIT */
/*
 * signal.c - test program: events fired from signal handlers that
 * interrupt the same thread while it is inside the tracing fast path.
 *
 *   prog-signal [-T W] [-n N] [-H H] [-c CAP] [-m MODES] [-i US] [-w]
 *
 *   -T W      worker threads, run one after the other (default 1); each
 *             runs the loop below and takes every signal while it runs
 *   -n N      events fired by a worker's loop at least (default 200000)
 *   -H H      ... and more, until its handlers fired H events (default
 *             2000) or the loop fired CAP events (-c, default 1000000)
 *   -m MODES  how the worker is interrupted, a comma-separated list:
 *               real   setitimer(ITIMER_REAL) every US microseconds
 *                      (SIGALRM; a high-resolution timer)
 *               prof   setitimer(ITIMER_PROF) every US microseconds
 *                      (SIGPROF; CPU time, ticks at the kernel's HZ)
 *               kill   a killer thread sends SIGUSR1 to the worker
 *                      (tgkill) every US microseconds, busy-waiting in
 *                      between (unpaced, it kept the worker in its
 *                      handler and a run took 10 to 120 s)
 *             (default real,prof,kill)
 *   -i US     timer interval in microseconds (default 20)
 *   -w        warm up: a worker fires sig:start before it takes signals,
 *             so that its buffer exists when the handlers start firing;
 *             without -w its first event (which creates its buffer) is
 *             fired while the handlers already fire theirs
 *
 * A worker starts its loop once every interrupter has been seen at work;
 * the loop fires sig:loop with seq = 0, 1, ... and, from its start on,
 * each handler run fires sig:handler with a sequence number n unique in
 * the process and the signal number.  The handlers count the events they
 * emitted.  At the end, per worker and then in all:
 *
 *   worker INDEX TID LOOP HANDLER
 *   loop N           (sig:loop events emitted, all workers)
 *   handler H        (sig:handler events emitted, all workers)
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
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <tracekit/tracekit.h>

TK_EVENT(sig, start,
	TK_PROTO(int32_t worker),
	TK_ARGS(worker),
	TK_FIELDS(tk_field_int(int32_t, worker, worker)),
	TK_PRINT("worker=%d", worker))

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
#define MAX_WORKERS 64

static const int signos[NSRC] = { SIGALRM, SIGPROF, SIGUSR1 };
static int use[NSRC];
static uint64_t handler_seq; /* n of the next handler event, all workers */
static uint64_t emitted[NSRC];
static uint64_t n_min = 200000, h_min = 2000, cap = 1000000;
static int warm, stop;
static pid_t current_tid; /* the worker the killer aims at */
static long interval_us = 20;
static struct {
	pid_t tid;
	uint64_t loop, handler;
} result[MAX_WORKERS];

/* The handlers' state is the worker's own (local-exec TLS: safe in a
 * handler). */
static __thread uint64_t t_seen[NSRC]; /* signals taken, armed or not */
static __thread uint64_t t_emitted[NSRC];
static __thread int t_armed;

static const char *const msgs[] = { "zero", "one", "two", "three", "four",
				     "five", "six", "seven", "eight", "nine" };

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

	t_seen[src]++;
	if (t_armed) {
		/* The handlers block each other (sa_mask): nothing
		 * interrupts this, but it interrupts the loop. */
		uint64_t n = __atomic_fetch_add(&handler_seq, 1, __ATOMIC_RELAXED);

		tk_trace(sig, handler, n, signo);
		t_emitted[src]++;
	}
	errno = saved;
}

static void mask_all(int how)
{
	sigset_t set;

	sigemptyset(&set);
	for (int s = 0; s < NSRC; s++)
		sigaddset(&set, signos[s]);
	pthread_sigmask(how, &set, NULL);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *killer(void *arg)
{
	pid_t pid = getpid();
	uint64_t next = now_ns();

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pid_t tid = __atomic_load_n(&current_tid, __ATOMIC_ACQUIRE);

		if (now_ns() < next)
			continue;
		next += (uint64_t)interval_us * 1000u;
		if (tid)
			syscall(SYS_tgkill, pid, tid, SIGUSR1);
	}
	return NULL;
}

static void *worker(void *arg)
{
	int index = (int)(intptr_t)arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	uint64_t i, mine = 0;

	/* Signals are blocked here (inherited from main). */
	if (warm)
		tk_trace(sig, start, index);
	__atomic_store_n(&current_tid, tid, __ATOMIC_RELEASE);
	mask_all(SIG_UNBLOCK);
	/* Start the loop only once every interrupter is at work. */
	for (int s = 0; s < NSRC; s++)
		while (use[s] && !__atomic_load_n(&t_seen[s], __ATOMIC_RELAXED))
			;
	__atomic_store_n(&t_armed, 1, __ATOMIC_RELAXED);

	for (i = 0; i < cap && (i < n_min || mine < h_min); i++) {
		tk_trace(sig, loop, i, msgs[i % 10]);
		mine = t_emitted[ALRM] + t_emitted[PROF] + t_emitted[USR1];
	}

	/* Nothing may be in flight when the counters are read. */
	mask_all(SIG_BLOCK);
	__atomic_store_n(&current_tid, 0, __ATOMIC_RELEASE);
	t_armed = 0;
	result[index].tid = tid;
	result[index].loop = i;
	result[index].handler = 0;
	for (int s = 0; s < NSRC; s++) {
		result[index].handler += t_emitted[s];
		emitted[s] += t_emitted[s];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t loop = 0, handler = 0;
	char modes[64] = "real,prof,kill";
	int workers = 1, c;
	struct sigaction sa;
	pthread_t th;

	while ((c = getopt(argc, argv, "T:n:H:c:m:i:w")) != -1) {
		switch (c) {
		case 'T': workers = atoi(optarg); break;
		case 'n': n_min = strtoull(optarg, NULL, 10); break;
		case 'H': h_min = strtoull(optarg, NULL, 10); break;
		case 'c': cap = strtoull(optarg, NULL, 10); break;
		case 'm': snprintf(modes, sizeof(modes), "%s", optarg); break;
		case 'i': interval_us = atol(optarg); break;
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
	if (interval_us < 1 || cap < n_min || workers < 1 || workers > MAX_WORKERS)
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

	/* Only the worker takes the signals: main and the killer block
	 * them, and so does each worker until it is ready. */
	mask_all(SIG_BLOCK);
	if (use[USR1] && pthread_create(&th, NULL, killer, NULL) != 0)
		return 3;
	for (int s = ALRM; s <= PROF; s++) {
		struct itimerval it = { { 0, interval_us },
					  { 0, interval_us } };

		if (use[s] && setitimer(s == ALRM ? ITIMER_REAL : ITIMER_PROF,
					&it, NULL) < 0)
			return 3;
	}

	for (int w = 0; w < workers; w++) {
		pthread_t wt;

		if (pthread_create(&wt, NULL, worker, (void *)(intptr_t)w) != 0)
			return 3;
		pthread_join(wt, NULL);
	}

	for (int s = ALRM; s <= PROF; s++) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		if (use[s])
			setitimer(s == ALRM ? ITIMER_REAL : ITIMER_PROF, &off,
				  NULL);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	if (use[USR1])
		pthread_join(th, NULL);

	for (int w = 0; w < workers; w++) {
		printf("worker %d %d %llu %llu\n", w, (int)result[w].tid,
		       (unsigned long long)result[w].loop,
		       (unsigned long long)result[w].handler);
		loop += result[w].loop;
		handler += result[w].handler;
	}
	printf("loop %llu\n", (unsigned long long)loop);
	printf("handler %llu\n", (unsigned long long)handler);
	printf("handler_alrm %llu\n", (unsigned long long)emitted[ALRM]);
	printf("handler_prof %llu\n", (unsigned long long)emitted[PROF]);
	printf("handler_usr1 %llu\n", (unsigned long long)emitted[USR1]);
	fflush(stdout);
	return 0;
}
