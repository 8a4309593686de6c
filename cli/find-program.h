/* SPDX-License-Identifier: MIT */
/* find-program.h - a command found as the shell finds it, for the verbs
 * that take one (record runs it, list reads it). */
#ifndef TK_FIND_PROGRAM_H
#define TK_FIND_PROGRAM_H

/* @name itself when it holds a '/', else the first executable file
 * DIR/@name for DIR in $PATH (default "/usr/local/bin:/usr/bin:/bin");
 * malloc'd, or NULL when there is none. */
char *find_program(const char *name);

#endif /* TK_FIND_PROGRAM_H */
