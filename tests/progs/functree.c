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
 *   prog-functree bytes    waits until leaf's entry is a jump (patched),
 *                          prints "patched", calls leaf until it is back to
 *                          a NOP, prints "restored XX XX XX XX XX" and
 *                          "leaf 42" (leaf(41) still works)
 *   prog-functree exit     a thread leaves with pthread_exit from inside
 *                          texit_outer > texit_inner; then main leaves with
 *                          exit(3) from inside exit_outer > exit_inner
 *   prog-functree regs     calls reg_* functions with arguments in every
 *                          argument register (and on the stack, and
 *                          varargs), in main then in a new thread, and
 *                          prints what they return: tracing must not
 *                          change a digit
 *   prog-functree dlopen LIB [N]   N times (default 1): dlopen(LIB), call
 *                          its plug_work(5), dlclose; with N, then prints
 *                          "exec maps K", the anonymous executable
 *                          mappings left (the function tracer's stubs)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
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

	for (i = 0; i < 10000 && p[0] != 0xe9; i++)
		usleep(1000);
	if (p[0] != 0xe9) {
		printf("never patched: %02x\n", p[0]);
		return 1;
	}
	printf("patched\n");
	fflush(stdout);
	/* while unpatched, the entry is "jmp ." (eb fe) for a moment: restored
	 * only once its first bytes are the NOP again (arch/x86_64/text-patch.c) */
	for (i = 0; i < 20000 && (p[0] == 0xe9 || p[0] == 0xeb); i++) {
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

TRACED double reg_d8(double a, double b, double c, double d, double e,
		     double f, double g, double h)
{
	NOTAIL();
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

struct reg_dd {
	double x, y;
};

TRACED struct reg_dd reg_dd(double a, double b)
{
	struct reg_dd r = { a / 3, b / 7 };

	NOTAIL();
	return r;
}

struct reg_ll {
	long x, y;
};

/* six in registers, two on the stack; returned in rax:rdx */
TRACED struct reg_ll reg_ll(long a, long b, long c, long d, long e, long f,
			    long g, long h)
{
	struct reg_ll r = { a + 10 * b + 100 * c + 1000 * d + 10000 * e,
			    100000 * f + 1000000 * g + 10000000 * h };

	NOTAIL();
	return r;
}

TRACED double reg_va(int n, ...)
{
	double sum = 0;
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		sum = sum * 10 + va_arg(ap, double);
	va_end(ap);
	NOTAIL();
	return sum;
}

/* a thread's first traced call (the full handler), and with -g a root
 * (its exit too): both see a vector register argument and result */
TRACED double reg_calls(double k)
{
	struct reg_dd dd;
	struct reg_ll ll;

	printf("d8 %.17g\n", reg_d8(k, 2 * k, 3 * k, 4 * k, 5 * k, 6 * k, 7 * k, 8 * k));
	dd = reg_dd(k, 10 * k);
	printf("dd %.17g %.17g\n", dd.x, dd.y);
	ll = reg_ll(1, 2, 3, 4, 5, 6, 7, 8);
	printf("ll %ld %ld\n", ll.x, ll.y);
	printf("va %.17g\n", reg_va(5, 1.0, 2.0, 3.0, 4.0, 5.5));
	NOTAIL();
	return k * 7;
}

static void *regs_thread(void *arg)
{
	(void)arg;
	printf("calls %.17g\n", reg_calls(1.0 / 3));
	return NULL;
}

static int regs(void)
{
	pthread_t th;

	regs_thread(NULL);
	regs_thread(NULL);
	fflush(stdout);
	if (pthread_create(&th, NULL, regs_thread, NULL) != 0)
		return 1;
	pthread_join(th, NULL);
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

static int exec_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perm[8];
	unsigned long ino;
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %7s %*s %*s %lu", perm, &ino) == 2 &&
		    perm[2] == 'x' && ino == 0 && !strstr(line, "["))
			n++;
	if (f)
		fclose(f);
	return n;
}

static int plugins(const char *path, int times)
{
	for (int i = 0; i < times; i++)
		if (plugin(path))
			return 1;
	printf("exec maps %d\n", exec_maps());
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
	if (argc > 1 && !strcmp(argv[1], "regs"))
		return regs();
	if (argc > 3 && !strcmp(argv[1], "dlopen"))
		return plugins(argv[2], atoi(argv[3]));
	if (argc > 2 && !strcmp(argv[1], "dlopen"))
		return plugin(argv[2]);
	fprintf(stderr, "usage: prog-functree tree|bytes|exit|regs|dlopen LIB [N]\n");
	return 2;
}
