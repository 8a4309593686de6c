/* SPDX-License-Identifier: MIT */
/*
 * functree.c - test program of the function tracer: a known call tree.
 * Built several ways (tests/progs/meson.build): gcc and clang with
 * -fpatchable-function-entry=5, gcc -pg -mfentry -mnop-mcount
 * -mrecord-mcount (non-PIE), -finstrument-functions.
 *
 *   prog-functree tree     main calls, in order:
 *                            loop_leaf(100)    leaf() 100 times
 *                            recurse(4)        5 nested recurse()
 *                            jumper()          deep1 > deep2 > deep3, which
 *                                              longjmps back; after_jump()
 *                            waiter()          raise(SIGUSR1): on_signal()
 *                                              > handler_work()
 *                            sleeper()         usleep(20 ms)
 *                            lib_add(2, 3)     in libfunclib (lib_inner)
 *                            2 threads         thread_main > worker(50) >
 *                                              leaf() 50 times each
 *                          prints "tree ok SUM"
 *   prog-functree bytes    waits until leaf's entry is a call (patched),
 *                          prints "patched", calls leaf until it is back to
 *                          a NOP, prints "restored XX XX XX XX XX" and
 *                          "leaf 42" (leaf(41) still works)
 *   prog-functree exit     a thread leaves with pthread_exit from inside
 *                          texit_outer > texit_inner; then main leaves with
 *                          exit(3) from inside exit_outer > exit_inner
 *   prog-functree dlopen LIB   dlopen(LIB), call its plug_work(5), dlclose
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef __clang__
#define TRACED __attribute__((noinline, used))
#else
#define TRACED __attribute__((noinline, noclone, used))
#endif
/* keeps a call from becoming a tail jump */
#define NOTAIL() __asm__ __volatile__("" ::: "memory")

#ifndef NO_FUNCLIB
int lib_add(int a, int b);
#endif

static jmp_buf jump_back;
static volatile int signalled;

TRACED int leaf(int x)
{
	NOTAIL();
	return x + 1;
}

TRACED int loop_leaf(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += leaf(i);
	return s;
}

TRACED int recurse(int n)
{
	int r;

	if (n == 0)
		return 0;
	r = recurse(n - 1);
	NOTAIL();
	return r + 1;
}

TRACED void deep3(void)
{
	longjmp(jump_back, 1);
}

TRACED void deep2(void)
{
	deep3();
	NOTAIL();
}

TRACED void deep1(void)
{
	deep2();
	NOTAIL();
}

TRACED int after_jump(void)
{
	NOTAIL();
	return 7;
}

TRACED int jumper(void)
{
	int r;

	if (setjmp(jump_back) == 0) {
		deep1();
		return -1;
	}
	r = after_jump();
	NOTAIL();
	return r;
}

TRACED void handler_work(void)
{
	signalled++;
	NOTAIL();
}

TRACED void on_signal(int sig)
{
	(void)sig;
	handler_work();
	NOTAIL();
}

TRACED int waiter(void)
{
	raise(SIGUSR1);
	NOTAIL();
	return signalled;
}

TRACED void sleeper(void)
{
	struct timespec ts = { 0, 20000000 };

	while (nanosleep(&ts, &ts) < 0)
		;
	NOTAIL();
}

TRACED int worker(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += leaf(i);
	NOTAIL();
	return s;
}

TRACED void *thread_main(void *arg)
{
	long r = worker((int)(long)arg);

	NOTAIL();
	return (void *)r;
}

static int tree(void)
{
	pthread_t th[2];
	long sum = 0;
	void *r;

	signal(SIGUSR1, on_signal);
	sum += loop_leaf(100);
	sum += recurse(4);
	sum += jumper();
	sum += waiter();
	sleeper();
#ifndef NO_FUNCLIB
	sum += lib_add(2, 3);
#endif
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, thread_main, (void *)50L);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], &r);
		sum += (long)r;
	}
	printf("tree ok %ld\n", sum);
	return 0;
}

static int bytes(void)
{
	volatile unsigned char *p = (volatile unsigned char *)(void *)leaf;
	int i;

	for (i = 0; i < 10000 && p[0] != 0xe8; i++)
		usleep(1000);
	if (p[0] != 0xe8) {
		printf("never patched: %02x\n", p[0]);
		return 1;
	}
	printf("patched\n");
	fflush(stdout);
	for (i = 0; i < 20000 && p[0] == 0xe8; i++) {
		leaf(i);
		usleep(1000);
	}
	printf("restored %02x %02x %02x %02x %02x\n", p[0], p[1], p[2], p[3], p[4]);
	printf("leaf %d\n", leaf(41));
	return 0;
}

TRACED void texit_inner(void)
{
	pthread_exit((void *)5L);
}

TRACED void texit_outer(void)
{
	texit_inner();
	NOTAIL();
}

TRACED void *texit_main(void *arg)
{
	(void)arg;
	texit_outer();
	NOTAIL();
	return NULL;
}

TRACED void exit_inner(void)
{
	fflush(stdout);
	exit(3);
}

TRACED void exit_outer(void)
{
	exit_inner();
	NOTAIL();
}

static int exits(void)
{
	pthread_t th;
	void *r;

	pthread_create(&th, NULL, texit_main, NULL);
	pthread_join(th, &r);
	printf("thread %ld\n", (long)r);
	exit_outer();
	return 0;
}

static int plugin(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*work)(int);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	work = (int (*)(int))dlsym(h, "plug_work");
	printf("plug %d\n", work ? work(5) : -1);
	dlclose(h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "tree"))
		return tree();
	if (argc > 1 && !strcmp(argv[1], "bytes"))
		return bytes();
	if (argc > 1 && !strcmp(argv[1], "exit"))
		return exits();
	if (argc > 2 && !strcmp(argv[1], "dlopen"))
		return plugin(argv[2]);
	fprintf(stderr, "usage: prog-functree tree|bytes|exit|dlopen LIB\n");
	return 2;
}
