/* SPDX-License-Identifier: MIT */
/* probe-app.c - docs/api.md's probe example, built so it cannot rot. */
#include <stdio.h>
#include <tracekit/tracekit.h>

TK_EVENT(srv, req_end,
	TK_PROTO(int id, int status),
	TK_ARGS(id, status),
	TK_FIELDS(
		tk_field_int(int32_t, id, id)
		tk_field_int(int32_t, status, status)),
	TK_PRINT("id=%d status=%d", id, status))

/* A probe returns nothing and takes the data pointer given to connect,
 * then the event's TK_PROTO arguments. */
static void count_errors(void *data, int id, int status)
{
	unsigned *errors = data;

	(void)id;
	if (status >= 400)
		(*errors)++;
}

int main(void)
{
	unsigned errors = 0;

	/* fires with or without a recorder: connecting turns the event on */
	if (tk_probe_connect(srv, req_end, count_errors, &errors) != 0)
		return 1;
	for (int id = 0; id < 10; id++)
		tk_trace(srv, req_end, id, id % 4 ? 200 : 500);
	/* once it returns, count_errors is not running and will not run */
	tk_probe_disconnect(srv, req_end, count_errors, &errors);
	tk_trace(srv, req_end, 10, 500); /* not counted */
	printf("errors %u\n", errors);
	return 0;
}
