/* SPDX-License-Identifier: MIT */
/*
 * deepcalls.c - a program that fires the function tracer's entry event
 * itself (ftrace:funcgraph_entry {func, depth}, docs/functrace.md), as no
 * real tracer would: N entries of main, each one level deeper than the
 * last, and no exit (test_views_hostile.py: convert's memory and folded
 * stacks stay bounded).
 *
 *   prog-deepcalls N
 */
#include <stdint.h>
#include <stdlib.h>
#include <tracekit/tracekit.h>

TK_EVENT(ftrace, funcgraph_entry,
	TK_PROTO(uint64_t func, uint32_t depth),
	TK_ARGS(func, depth),
	TK_FIELDS(
		tk_field_int(uint64_t, func, func)
		tk_field_int(uint32_t, depth, depth)),
	TK_PRINT("func=%lx depth=%u", func, depth))

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 10000;

	for (uint32_t i = 0; i < n; i++)
		tk_trace(ftrace, funcgraph_entry, (uint64_t)(uintptr_t)main, i);
	return 0;
}
