/* SPDX-License-Identifier: MIT */
/* regular-file.h - opening files that a trace or another program names
 * (the objects of a trace's maps, its own files) only when they are
 * regular files. */
#ifndef TK_REGULAR_FILE_H
#define TK_REGULAR_FILE_H

#include <stdio.h>

/*
 * Open @path read-only, close-on-exec, if it is a regular file: the open
 * itself cannot block (O_NONBLOCK: a FIFO would wait for a writer, a
 * device could do anything), fstat() decides, and reads then block as
 * usual.  Returns the descriptor, or -1 with errno set (EINVAL: it is no
 * regular file).
 */
int tk_open_regular(const char *path);

/* The same as a stdio stream (mode "r"); NULL with errno set. */
FILE *tk_fopen_regular(const char *path);

/* strerror(@e), but "not a regular file" for tk_open_regular()'s EINVAL. */
const char *tk_open_strerror(int e);

#endif /* TK_REGULAR_FILE_H */
