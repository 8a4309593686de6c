/* SPDX-License-Identifier: MIT */
/* readme-app.c - the README's 30-second example, built so it cannot rot. */
#include <tracekit/tracekit.h>

TK_EVENT(app, request,
	TK_PROTO(int id, const char *path, size_t len),
	TK_ARGS(id, path, len),
	TK_FIELDS(
		tk_field_int(int32_t, id, id)
		tk_field_string(path, path)
		tk_field_int(uint64_t, len, len)),
	TK_PRINT("id=%d path=%s len=%lu", id, path, len))

int main(void)
{
	tk_trace(app, request, 42, "/index.html", 1024);
	tk_mark(app_tick, "tick %d of %s", 3, "main");   /* a one-line marker */
	return 0;
}
