/* SPDX-License-Identifier: MIT */
/*
 * mark-format.c - must not compile with -Werror=format: a marker's format
 * is checked against its arguments as printf's is.
 * tests/e2e/test_compile.py checks the error.
 *
 * expect-gcc: format '%s' expects argument of type 'char *', but argument 2 has type 'int'
 * expect-clang: format specifies type 'char *' but the argument has type 'int'
 */
#include <tracekit/tracekit.h>

int main(void)
{
	int n = 3;

	tk_mark(app_count, "n=%s", n);
	return 0;
}
