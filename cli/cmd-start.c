/* SPDX-License-Identifier: MIT */
/*
 * cmd-start.c - tracekit start (being written).
 */
#include "cli.h"

int cmd_start(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tk_error("'start' is not implemented yet");
	return TK_EXIT_FAILURE;
}
