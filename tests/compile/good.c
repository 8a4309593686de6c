/* SPDX-License-Identifier: MIT */
/*
 * good.c - must compile without a warning (-Wall -Wextra -Werror, C11 and
 * gnu11, and as C++17): what the failing files here do, done right.  A
 * value computed from the arguments is a field of its own; TK_PRINT may
 * have no argument; markers with and without arguments, one without an
 * underscore (provider "mark").
 */
#include <tracekit/tracekit.h>

TK_EVENT(app, io,
	TK_PROTO(int wr, int len),
	TK_ARGS(wr, len),
	TK_FIELDS(
		tk_field_int(int, wr, wr)
		tk_field_string(op, wr ? "write" : "read")
		tk_field_int(int, len, len)),
	TK_PRINT("%s len=%d", op, len))

TK_EVENT(app, ping,
	TK_PROTO(int x),
	TK_ARGS(x),
	TK_FIELDS(tk_field_int(int, x, x)),
	TK_PRINT("ping"))

int main(void)
{
	const char *who = "main";
	int n = 3;

	tk_trace(app, io, 1, 2);
	tk_trace(app, ping, 0);
	tk_mark(app_count, "n=%d of %s", n, who);
	tk_mark(app_done, "done");
	tk_mark(started, "started %d", n);
	return 0;
}
