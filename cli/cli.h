/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what the subcommands of the tracekit tool share.
 *
 * Only the tool prints and exits; messages are one line, lowercase,
 * "tracekit: what failed: why", and say which file, event or column.
 */
#ifndef TK_CLI_H
#define TK_CLI_H

#include <stdbool.h>
#include <stdio.h>

#define TK_DEFAULT_OUTPUT "tracekit.trace"

struct tk_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_hist(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_extract(int argc, char **argv);
int cmd_recover(int argc, char **argv);

/* Print "tracekit: <message>" on stderr. */
void tk_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tk_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Each line of @text (may be NULL) as a warning; @text is cut up. */
void tk_warn_lines(char *text);

/* Remove directory @dir and everything in it (a trace being replaced or
 * abandoned); symbolic links are removed, not followed. */
void tk_remove_tree(const char *dir);

/* Exit status for bad usage (as getopt tools do) and for failures. */
#define TK_EXIT_USAGE 2
#define TK_EXIT_FAILURE 1

#endif /* TK_CLI_H */
