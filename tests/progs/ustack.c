/* SPDX-License-Identifier: MIT */
/*
 * ustack.c - a known call chain for user stacks (test_probes.py):
 * main -> chain_a -> chain_b -> chain_c, which makes the getppid()
 * system call itself (no C library function in between), N times; with
 * "libc", through the C library's syscall(), which keeps no frame
 * pointer.  Built with frame pointers, which the kernel's user stack
 * walk follows.
 *
 *   prog-ustack N [libc]
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int through_libc;

#define NOINLINE __attribute__((noinline))

NOINLINE long chain_c(void)
{
	/* on the stack: gcc then gives this leaf a frame, as the others */
	volatile long keep = 0;
	long ret;

	if (through_libc)
		return syscall(SYS_getppid) + keep;
	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid)
			 : "rcx", "r11", "memory");
	return ret + keep;
}

NOINLINE long chain_b(void)
{
	return chain_c() + 1;
}

NOINLINE long chain_a(void)
{
	return chain_b() + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	long sum = 0;

	through_libc = argc > 2 && !strcmp(argv[2], "libc");
	for (int i = 0; i < n; i++)
		sum += chain_a();
	return sum == 0;
}
