/* SPDX-License-Identifier: MIT */
/*
 * kprint-compile.c - compile print fmts (kprint-compile.h).
 */
#include <stdlib.h>
#include "kprint-compile.h"

struct tk_kprog *tk_kprog_compile(struct tep_handle *tep, struct tep_event *ev)
{
	(void)tep;
	(void)ev;
	return NULL;
}

size_t tk_kprog_run(const struct tk_kprog *prog, const unsigned char *data,
		    unsigned size, char *out, size_t room)
{
	(void)prog; (void)data; (void)size; (void)out; (void)room;
	return 0;
}

void tk_kprog_free(struct tk_kprog *prog)
{
	free(prog);
}
