/* SPDX-License-Identifier: MIT */
/*
 * dwarfname.c - a program not built for tracekit whose function g has one
 * parameter with a 250-character name (Q...Q), so that a test can
 * rewrite that name in the DWARF, in place, into a hostile one
 * (tests/e2e/test_probes_hostile.py).
 *
 *   prog-dwarfname N    calls g(i) for i = 0 .. N-1, prints "sum S"
 */
#include <stdio.h>
#include <stdlib.h>

#define PASTE5(a, b, c, d, e) a##b##c##d##e
#define TIMES5(a) PASTE5(a, a, a, a, a)
#define Q50 QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ
#define NAME TIMES5(Q50)

__attribute__((noinline)) int g(int NAME)
{
	return NAME * 2;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	long sum = 0;

	for (int i = 0; i < n; i++)
		sum += g(i);
	printf("sum %ld\n", sum);
	return 0;
}
