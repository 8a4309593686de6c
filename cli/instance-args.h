/* SPDX-License-Identifier: MIT */
/*
 * instance-args.h - what stop and show share: "-B NAME" parsed, the
 * instance opened (tracefs mounted privately if need be).
 */
#ifndef TK_INSTANCE_ARGS_H
#define TK_INSTANCE_ARGS_H

#include "kernel/kernel.h"

/* Parse "[-B NAME]" for @verb (@help: its usage text, printed for -h).
 * Returns 0 with *name set (default "tracekit"), 1 after printing the
 * help, or TK_EXIT_USAGE after printing the error. */
int instance_args(const char *verb, const char *help, int argc, char **argv,
		  const char **name);

/* Whether @name (given with -B) can name an instance; prints why not. */
bool instance_name_ok(const char *name);

/* Open tracefs and instance @name; prints the error and returns -1 on
 * failure.  Close with instance_close(). */
int instance_open(const char *name, struct tk_tracefs *fs, struct tk_kinstance *k);
void instance_close(struct tk_tracefs *fs, struct tk_kinstance *k);

#endif /* TK_INSTANCE_ARGS_H */
