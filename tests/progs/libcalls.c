/* SPDX-License-Identifier: MIT */
/*
 * libcalls.c - library calls through the PLT, counted (test_libcalls.py).
 * Built with patchable entries, lazily bound (prog-libcalls) and with
 * full RELRO, bound at start (prog-libcalls-now).
 *
 *   prog-libcalls N
 *
 * work() runs N times; each makes exactly one strlen(), one malloc() and
 * one free() call of the program's own.  Then setjmp() and longjmp()
 * once (setjmp returns twice: its return must not be hooked), then one
 * printf() with the total.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* what the compiler cannot see through: the calls stay calls */
const char *volatile the_name = "library";
void *volatile the_block;
static jmp_buf env;

__attribute__((noinline)) size_t work(int i)
{
	size_t n = strlen(the_name);

	the_block = malloc(16 + (size_t)i);
	free(the_block);
	return n;
}

__attribute__((noinline)) void jump_back(void)
{
	longjmp(env, 1);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	volatile size_t sum = 0;

	for (int i = 0; i < n; i++)
		sum += work(i);
	if (!setjmp(env))
		jump_back();
	printf("sum %zu\n", (size_t)sum);
	return 0;
}
