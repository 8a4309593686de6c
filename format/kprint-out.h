/* SPDX-License-Identifier: MIT */
/*
 * kprint-out.h - appending field text to a line buffer, for the compiled
 * printers (kprint-compile.c, kprint-plugins.c): bytes, numbers in base
 * 10 and 16 (number.h), and kernel symbols through a cache in front
 * of libtraceevent's lookup.  Everything truncates at the buffer's end.
 */
#ifndef TK_KPRINT_OUT_H
#define TK_KPRINT_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "number.h"

struct tep_handle;

struct tk_obuf {
	char *p;
	size_t n, room;
};

static inline void tk_oput(struct tk_obuf *o, const char *s, size_t len)
{
	if (len > o->room - o->n)
		len = o->room - o->n;
	memcpy(o->p + o->n, s, len);
	o->n += len;
}

/* v in base 10 or 16 (upper: A-F), a '-' first when neg, right-aligned
 * in width with zeros (after the sign) or spaces (before it). */
static inline void tk_onum(struct tk_obuf *o, uint64_t v, bool neg, unsigned base,
			   bool upper, unsigned width, bool zero)
{
	char tmp[TK_NUM_MAX + 64], *end = tmp + sizeof(tmp);
	char *s = base == 16 ? tk_num_hex(end, v, upper) : tk_num_dec(end, v);
	size_t len = (size_t)(end - s) + neg;

	if (width > 64)
		width = 64;
	if (zero) {
		for (; len < width; len++)
			*--s = '0';
		if (neg)
			*--s = '-';
	} else {
		if (neg)
			*--s = '-';
		for (; len < width; len++)
			*--s = ' ';
	}
	tk_oput(o, s, (size_t)(end - s));
}

static inline void tk_odec(struct tk_obuf *o, int64_t v)
{
	tk_onum(o, v < 0 ? -(uint64_t)v : (uint64_t)v, v < 0, 10, false, 0, false);
}

static inline void tk_ohex(struct tk_obuf *o, uint64_t v)
{
	tk_onum(o, v, false, 16, false, 0, false);
}

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
