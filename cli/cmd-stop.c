/* SPDX-License-Identifier: MIT */
/*
 * cmd-stop.c - tracekit stop (being written).
 */
#include "cli.h"

int cmd_stop(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tk_error("'stop' is not implemented yet");
	return TK_EXIT_FAILURE;
}
