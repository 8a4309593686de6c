/* SPDX-License-Identifier: MIT */
/*
 * cmd-stat.c - tracekit stat (being written).
 */
#include "cli.h"

int cmd_stat(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tk_error("'stat' is not implemented yet");
	return TK_EXIT_FAILURE;
}
