/* SPDX-License-Identifier: MIT */
/* find-program.h - a command found as the shell finds it, for the verbs
 * that take one (record runs it, list reads it). */
#ifndef TK_FIND_PROGRAM_H
#define TK_FIND_PROGRAM_H

#include <stdbool.h>

/* @name itself when it holds a '/', else the first executable file
 * DIR/@name for DIR in $PATH (default "/usr/local/bin:/usr/bin:/bin"),
 * with @elf the first that is an ELF file (a script has nothing to read:
 * list passes wrappers over as probes do); malloc'd, or NULL when there
 * is none. */
char *find_program(const char *name, bool elf);

#endif /* TK_FIND_PROGRAM_H */
