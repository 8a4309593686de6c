/* SPDX-License-Identifier: MIT */
/*
 * print-expression.c - must not compile: a TK_PRINT argument is an
 * expression, not a field name (the format is applied to recorded fields
 * when the trace is read).  tests/e2e/test_compile.py checks the error.
 *
 * expect-gcc: expected ')' before '?' token
 * expect-gcc: TK__PRINT_ARG_MUST_BE_A_FIELD_NAME
 * expect-clang: expected ')'
 * expect-clang: TK__PRINT_ARG_MUST_BE_A_FIELD_NAME
 */
#include <tracekit/tracekit.h>

TK_EVENT(app, io,
	TK_PROTO(int wr, int len),
	TK_ARGS(wr, len),
	TK_FIELDS(
		tk_field_int(int, wr, wr)
		tk_field_int(int, len, len)),
	TK_PRINT("%s len=%d", wr ? "write" : "read", len))

int main(void)
{
	tk_trace(app, io, 1, 2);
	return 0;
}
