/* SPDX-License-Identifier: MIT */
/*
 * evstack.c - known call chains for the user stacks of user events
 * (record --ustack, test_probes.py).
 *
 *   prog-evstack fp N     main -> ev_a -> ev_b -> ev_c, which fires
 *                         stk:hit and the marker stk_mark, N times
 *   prog-evstack nofp N   main -> outer -> nofp_mid -> inner, which
 *                         fires stk:hit N times; nofp_mid is built
 *                         without a frame pointer (evstack-nofp.c)
 *
 * Everything else is built with frame pointers, no sibling calls.
 */
#include <stdlib.h>
#include <string.h>
#include <tracekit/tracekit.h>

TK_EVENT(stk, hit,
	TK_PROTO(int i),
	TK_ARGS(i),
	TK_FIELDS(tk_field_int(int32_t, i, i)),
	TK_PRINT("i=%d", i))

#define NOINLINE __attribute__((noinline))

long nofp_mid(int i);

NOINLINE long ev_c(int i)
{
	tk_trace(stk, hit, i);
	tk_mark(stk_mark, "i=%d", i);
	return i;
}

NOINLINE long ev_b(int i)
{
	return ev_c(i) + 1;
}

NOINLINE long ev_a(int i)
{
	return ev_b(i) + 1;
}

NOINLINE long inner(int i)
{
	tk_trace(stk, hit, i);
	return i;
}

NOINLINE long outer(int i)
{
	return nofp_mid(i) + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 1;
	long sum = 0;
	int nofp = argc > 1 && !strcmp(argv[1], "nofp");

	for (int i = 0; i < n; i++)
		sum += nofp ? outer(i) : ev_a(i);
	return sum < 0;
}
