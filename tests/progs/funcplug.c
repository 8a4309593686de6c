/* SPDX-License-Identifier: MIT */
/* funcplug.c - a patchable module that prog-functree dlopens while the
 * function tracer runs: plug_work(n) calls plug_leaf n times. */
__attribute__((noinline)) int plug_leaf(int i)
{
	__asm__ __volatile__("" ::: "memory");
	return i;
}

int plug_work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += plug_leaf(i);
	__asm__ __volatile__("" ::: "memory");
	return s;
}
