/* SPDX-License-Identifier: MIT */
/*
 * kprint-compile.h - a kernel event's print fmt compiled into steps that
 * print a record without libtraceevent's print machinery
 * (kprint-compile.c).
 */
#ifndef TK_KPRINT_COMPILE_H
#define TK_KPRINT_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tep_handle;
struct tep_event;
struct tk_kprog;
struct tk_ksym_cache;

/* The address of kernel symbol @name, as libtraceevent finds it for a
 * name in a print fmt: 1 and *addr when it is in the saved kallsyms once,
 * 0 when it is not there, -1 when it is there more than once. */
typedef int (*tk_ksym_addr_fn)(void *ctx, const char *name, uint64_t *addr);

/* Compile @ev's print fmt; NULL when it holds anything the steps cannot
 * print exactly as libtraceevent does (the caller then uses it).  Symbol
 * lookups at run time go through @tep (its kallsyms must be loaded before
 * the first run; @syms caches them, may be NULL); @sym resolves names
 * in the format once, here. */
struct tk_kprog *tk_kprog_compile(struct tep_handle *tep, struct tep_event *ev,
				  tk_ksym_addr_fn sym, void *sym_ctx,
				  struct tk_ksym_cache *syms);

/* True when @ev's print fmt may need kernel symbols (%p conversions,
 * names of symbols in expressions). */
bool tk_kprog_needs_symbols(const struct tep_event *ev);

/* Print a record that holds the event's fixed fields and whose dynamic
 * fields lie inside it: the bytes written to out[0..room), or -1 when
 * this record takes a path the steps do not mirror (print it with
 * libtraceevent). */
long tk_kprog_run(const struct tk_kprog *prog, const unsigned char *data,
		  unsigned size, char *out, size_t room);

void tk_kprog_free(struct tk_kprog *prog);

#endif /* TK_KPRINT_COMPILE_H */
