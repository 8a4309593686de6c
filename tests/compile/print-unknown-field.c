/* SPDX-License-Identifier: MIT */
/*
 * print-unknown-field.c - must not compile: a TK_PRINT argument names no
 * field.  tests/e2e/test_compile.py checks the error.
 *
 * expect-gcc: 'struct tk__print_fields_app_io' has no member named 'tk__f_lenght'
 * expect-clang: no member named 'tk__f_lenght' in 'tk__print_fields_app_io'
 */
#include <tracekit/tracekit.h>

TK_EVENT(app, io,
	TK_PROTO(int wr, int len),
	TK_ARGS(wr, len),
	TK_FIELDS(
		tk_field_int(int, wr, wr)
		tk_field_int(int, len, len)),
	TK_PRINT("wr=%d len=%d", wr, lenght))

int main(void)
{
	tk_trace(app, io, 1, 2);
	return 0;
}
