/* SPDX-License-Identifier: MIT */
/*
 * probefilter.c - test program: the program's own probe on an event that
 * the recorder filters.
 *
 *   prog-probefilter [N]
 *
 * Fires srv:req_end N times (default 200) with id = 0 .. N-1 and
 * status = 404 when id % 10 == 3, 500 when id % 25 == 0, else 200; a
 * probe connected with tk_probe_connect counts its calls.  At the end it
 * prints
 *
 *   probe_calls C        every hit, whatever the recorder filters
 *   probe_errors E       hits with status >= 400
 */
#include <stdio.h>
#include <stdlib.h>
#include <tracekit/tracekit.h>

TK_EVENT(srv, req_end,
	TK_PROTO(int32_t id, int32_t status),
	TK_ARGS(id, status),
	TK_FIELDS(
		tk_field_int(int32_t, id, id)
		tk_field_int(int32_t, status, status)),
	TK_PRINT("id=%d status=%d", id, status))

struct counts {
	unsigned calls, errors;
};

static void on_req_end(void *data, int32_t id, int32_t status)
{
	struct counts *c = data;

	(void)id;
	c->calls++;
	c->errors += status >= 400;
}

int main(int argc, char **argv)
{
	static struct counts c;
	int n = argc > 1 ? atoi(argv[1]) : 200;

	if (tk_probe_connect(srv, req_end, on_req_end, &c) != 0)
		return 1;
	for (int32_t id = 0; id < n; id++)
		tk_trace(srv, req_end, id,
			 id % 10 == 3 ? 404 : id % 25 == 0 ? 500 : 200);
	tk_probe_disconnect(srv, req_end, on_req_end, &c);
	printf("probe_calls %u\nprobe_errors %u\n", c.calls, c.errors);
	return 0;
}
