/* SPDX-License-Identifier: MIT */
/* funclib.c - a patchable shared library that prog-functree links: its
 * entries are far from the (PIE) program's, so they go through their own
 * stub page. */
__attribute__((noinline)) int lib_inner(int a)
{
	__asm__ __volatile__("" ::: "memory");
	return a * 2;
}

int lib_add(int a, int b)
{
	int r = lib_inner(a) + b;

	__asm__ __volatile__("" ::: "memory");
	return r;
}
