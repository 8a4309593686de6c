/* SPDX-License-Identifier: MIT */
/*
 * kprint-out.h - appending field text to a line buffer, for the compiled
 * printers (kprint-compile.c, kprint-plugins.c): bytes, numbers in base
 * 10 and 16 without printf, and kernel symbols through a cache in front
 * of libtraceevent's lookup.  Everything truncates at the buffer's end.
 */
#ifndef TK_KPRINT_OUT_H
#define TK_KPRINT_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[96];
	size_t n = sizeof(tmp), len;

	if (base == 16) {
		do {
			tmp[--n] = digits[v & 15];
			v >>= 4;
		} while (v);
	} else {
		while (v >= 100) {
			unsigned d = (unsigned)(v % 100) * 2;

			v /= 100;
			tmp[--n] = pairs[d + 1];
			tmp[--n] = pairs[d];
		}
		if (v >= 10) {
			tmp[--n] = pairs[v * 2 + 1];
			tmp[--n] = pairs[v * 2];
		} else {
			tmp[--n] = (char)('0' + v);
		}
	}
	len = sizeof(tmp) - n + neg;
	if (width > 64)
		width = 64;
	if (zero) {
		for (; len < width; len++)
			tmp[--n] = '0';
		if (neg)
			tmp[--n] = '-';
	} else {
		if (neg)
			tmp[--n] = '-';
		for (; len < width; len++)
			tmp[--n] = ' ';
	}
	tk_oput(o, tmp + n, sizeof(tmp) - n);
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
