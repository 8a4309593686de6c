/* SPDX-License-Identifier: MIT */
/*
 * cmd-show.c - tracekit show (being written).
 */
#include "cli.h"

int cmd_show(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tk_error("'show' is not implemented yet");
	return TK_EXIT_FAILURE;
}
