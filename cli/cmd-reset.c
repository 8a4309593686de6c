/* SPDX-License-Identifier: MIT */
/*
 * cmd-reset.c - tracekit reset (being written).
 */
#include "cli.h"

int cmd_reset(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tk_error("'reset' is not implemented yet");
	return TK_EXIT_FAILURE;
}
