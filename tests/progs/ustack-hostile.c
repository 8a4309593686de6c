/* SPDX-License-Identifier: MIT */
/*
 * ustack-hostile.c - user events with record --ustack on stacks that
 * move under the runtime's feet, with a frame pointer that points where
 * nothing is mapped (code without frame pointers leaves anything in rbp)
 * (tests/e2e/test_probes_hostile.py).
 *
 *   prog-ustack-hostile coro      an event on coroutine stack A (1 MiB);
 *                                 A unmapped and a smaller B (64 KiB)
 *                                 mapped at its address; an event on B
 *                                 with rbp in the old A, past B's end
 *   prog-ustack-hostile alt FILE  FILE mapped read-only, then an event in
 *                                 a signal handler on an alternate stack
 *                                 mapped just above it, with rbp in a
 *                                 hole (FILE's /proc/self/maps line may
 *                                 be longer than any buffer)
 *
 * Prints "survived" at the end; stk:hit i=1 and i=2 are the events.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <tracekit/tracekit.h>

TK_EVENT(stk, hit,
	TK_PROTO(int i),
	TK_ARGS(i),
	TK_FIELDS(tk_field_int(int32_t, i, i)),
	TK_PRINT("i=%d", i))

#define A_SIZE (1 << 20)
#define B_SIZE (64 << 10)

static ucontext_t main_ctx, co_ctx;
static uintptr_t bad_fp;

static void on_a(void)
{
	tk_trace(stk, hit, 1);
}

/* An event with rbp = bad_fp, as code built without frame pointers may
 * leave it. */
__attribute__((noinline, optimize("omit-frame-pointer"))) static void with_bad_fp(void)
{
	__asm__ volatile("push %%rbp\n\tpush %%rbp\n\tmov %0, %%rbp" : : "r"(bad_fp) : "memory");
	tk_trace(stk, hit, 2);
	__asm__ volatile("pop %%rbp\n\tpop %%rbp" ::: "memory");
}

static void run_on(void *stack, size_t size, void (*fn)(void))
{
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = size;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, fn, 0);
	swapcontext(&main_ctx, &co_ctx);
}

static int coro(void)
{
	char *a = mmap(NULL, A_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *b;

	if (a == MAP_FAILED)
		return 1;
	run_on(a, A_SIZE, on_a);
	munmap(a, A_SIZE);
	b = mmap(a, B_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (b != a) {
		printf("cannot map B where A was\n");
		return 1;
	}
	bad_fp = (uintptr_t)a + A_SIZE / 2; /* in the old A, past B: a hole */
	run_on(b, B_SIZE, with_bad_fp);
	return 0;
}

static void handler(int sig)
{
	(void)sig;
	with_bad_fp();
}

static int alt(const char *file)
{
	/* hole: where bad_fp points; below it the file, then the stack */
	char *hole = mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct sigaction sa;
	stack_t ss;

	if (hole == MAP_FAILED || stack == MAP_FAILED || fd < 0 ||
	    mmap(stack - (1 << 20), 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0) ==
		    MAP_FAILED) {
		perror("ustack-hostile");
		return 1;
	}
	munmap(hole, 1 << 20);
	bad_fp = (uintptr_t)hole + (1 << 19);
	tk_trace(stk, hit, 1);
	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = stack;
	ss.ss_size = 1 << 16;
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 2;

	if (argc == 2 && !strcmp(argv[1], "coro"))
		ret = coro();
	else if (argc == 3 && !strcmp(argv[1], "alt"))
		ret = alt(argv[2]);
	if (!ret)
		printf("survived\n");
	return ret;
}
