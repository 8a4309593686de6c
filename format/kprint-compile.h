/* SPDX-License-Identifier: MIT */
/*
 * kprint-compile.h - a kernel event's print fmt compiled into steps that
 * print a record without libtraceevent (kprint-compile.c).
 */
#ifndef TK_KPRINT_COMPILE_H
#define TK_KPRINT_COMPILE_H

#include <stddef.h>

struct tep_handle;
struct tep_event;
struct tk_kprog;

/* Compile @ev's print fmt; NULL when it holds anything the steps cannot
 * print exactly as libtraceevent does (the caller then uses it). */
struct tk_kprog *tk_kprog_compile(struct tep_handle *tep, struct tep_event *ev);

/* Print a record that holds the event's fixed fields; returns the bytes
 * written to out[0..room). */
size_t tk_kprog_run(const struct tk_kprog *prog, const unsigned char *data,
		    unsigned size, char *out, size_t room);

void tk_kprog_free(struct tk_kprog *prog);

#endif /* TK_KPRINT_COMPILE_H */
