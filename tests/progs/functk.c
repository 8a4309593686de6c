/* SPDX-License-Identifier: MIT */
/*
 * functk.c - test program: a program built for the function tracer that
 * also defines tracekit events, so the runtime's code generated into it
 * (tk__emit_*, tk__module_ctor/dtor, the probe helpers) sits beside its
 * own functions.  Built with patchable entries, with gcc's -pg -mfentry
 * form and with -finstrument-functions.
 *
 *   prog-functk[-mcount|-cyg] [N]
 *   prog-functk[-mcount|-cyg] -f
 *
 * main() calls work(i) N times (default 3); work fires ft:step and a
 * marker.  Prints "sum S".  With -f: prints "ready PID", then calls
 * work() every 10 ms until killed (for record -P).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tracekit/tracekit.h>

TK_EVENT(ft, step,
	TK_PROTO(int i, int sq),
	TK_ARGS(i, sq),
	TK_FIELDS(
		tk_field_int(int, i, i)
		tk_field_int(int, sq, sq)),
	TK_PRINT("i=%d sq=%d", i, sq))

__attribute__((noinline)) int work(int i)
{
	int sq = i * i;

	tk_trace(ft, step, i, sq);
	tk_mark(ft_mark, "i=%d", i);
	return sq;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3, sum = 0;

	if (argc > 1 && !strcmp(argv[1], "-f")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (int i = 0;; i++) {
			work(i);
			usleep(10000);
		}
	}

	for (int i = 0; i < n; i++)
		sum += work(i);
	printf("sum %d\n", sum);
	return 0;
}
