/* SPDX-License-Identifier: MIT */
/*
 * record-functrace.h - what record asks of the user-space function
 * tracer.  A bare "-p function" or "-p function_graph" traces the
 * program's own code when it was built with patchable function entries,
 * else the kernel's functions.
 */
#ifndef TK_RECORD_FUNCTRACE_H
#define TK_RECORD_FUNCTRACE_H

#include <stdbool.h>

/* Whether @program (a path) or one of its libraries carries patchable
 * function entries that the user-space function tracer can use. */
bool functrace_program_is_patchable(const char *program);

#endif /* TK_RECORD_FUNCTRACE_H */
