/* SPDX-License-Identifier: MIT */
/*
 * kprint-out.h - what the compiled kernel printers (kprint-compile.c,
 * kprint-plugins.c) write with besides the line buffer (outbuf.h):
 * kernel symbols, through a cache in front of libtraceevent's lookup.
 */
#ifndef TK_KPRINT_OUT_H
#define TK_KPRINT_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include "outbuf.h"

struct tep_handle;

/* Recent answers of tep_find_function_info() by address (kernel call
 * sites repeat): one per trace, zeroed to start. */
#define TK_KSYM_CACHE 4096
struct tk_ksym_cache {
	struct {
		uint64_t addr, start;
		const char *name; /* NULL: in no symbol */
		bool set;
	} slot[TK_KSYM_CACHE];
};

/* The symbol holding @addr: its name and *start, or NULL. */
const char *tk_ksym_find(struct tep_handle *tep, struct tk_ksym_cache *cache,
			 uint64_t addr, uint64_t *start);

#endif /* TK_KPRINT_OUT_H */
