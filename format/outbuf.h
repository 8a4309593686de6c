/* SPDX-License-Identifier: MIT */
/*
 * outbuf.h - a line of text being written, as the kernel's trace_seq:
 * report's lines are built in one (cli/report-line.h), and every
 * printer of event text appends to it: the print formats of user events
 * (printfmt.h, tk_print_append), the compiled kernel print formats
 * (kprint-compile.c, kprint-plugins.c), the function tracer's lines.
 * Bytes and numbers (number.h), cut at the buffer's end, never past it.
 *
 *   char buf[256];
 *   struct tk_obuf o;
 *
 *   tk_obuf_init(&o, buf, sizeof(buf));
 *   tk_oput(&o, "pid=", 4);
 *   tk_onum(&o, 42, false, 10, false, 0, false);
 *   // buf[0..o.n) is "pid=42", not NUL-terminated
 *
 * A printer with a (char *, size) interface of its own (tk_print_format,
 * tk_kprint_format) writes at tk_otail() in tk_oleft() bytes, then the
 * line counts what it wrote with tk_ogrew().
 */
#ifndef TK_OUTBUF_H
#define TK_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "number.h"

struct tk_obuf {
	char *p;
	size_t n, room; /* bytes written, and the most there can be */
};

static inline void tk_obuf_init(struct tk_obuf *o, char *buf, size_t room)
{
	o->p = buf;
	o->n = 0;
	o->room = room;
}

static inline char *tk_otail(const struct tk_obuf *o)
{
	return o->p + o->n;
}

static inline size_t tk_oleft(const struct tk_obuf *o)
{
	return o->room - o->n;
}

/* @len bytes were written at tk_otail() (no more than tk_oleft()). */
static inline void tk_ogrew(struct tk_obuf *o, size_t len)
{
	o->n += len < o->room - o->n ? len : o->room - o->n;
}

static inline void tk_oput(struct tk_obuf *o, const char *s, size_t len)
{
	if (__builtin_expect(len <= o->room - o->n, 1)) {
		/* a constant @len stays a constant: no call to memcpy */
		memcpy(o->p + o->n, s, len);
		o->n += len;
		return;
	}
	memcpy(o->p + o->n, s, o->room - o->n);
	o->n = o->room;
}

/* Where to write @len bytes at most straight into the line: its tail
 * when they fit, else @tmp (of @len bytes); tk_owrite_end() then counts
 * them, or copies what fits.  The hot printers write so, without a
 * check per byte and without a copy. */
static inline char *tk_owrite_begin(struct tk_obuf *o, char *tmp, size_t len)
{
	return len <= o->room - o->n ? o->p + o->n : tmp;
}

static inline void tk_owrite_end(struct tk_obuf *o, const char *at, size_t len)
{
	if (at == o->p + o->n)
		o->n += len;
	else
		tk_oput(o, at, len);
}

static inline void tk_oputs(struct tk_obuf *o, const char *s)
{
	tk_oput(o, s, strlen(s));
}

/* @len bytes @c. */
static inline void tk_opad(struct tk_obuf *o, char c, size_t len)
{
	if (len > o->room - o->n)
		len = o->room - o->n;
	memset(o->p + o->n, c, len);
	o->n += len;
}

/* @s, cut so that @tail fits after it, then @tail: a name shortened so
 * that the end of the line stays whole. */
static inline void tk_oput_cut(struct tk_obuf *o, const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail), left = o->room - o->n;

	if (a > left - (b < left ? b : left))
		a = left - (b < left ? b : left);
	tk_oput(o, s, a);
	tk_oput(o, tail, b);
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

static inline void tk_oudec(struct tk_obuf *o, uint64_t v)
{
	tk_onum(o, v, false, 10, false, 0, false);
}

static inline void tk_ohex(struct tk_obuf *o, uint64_t v)
{
	tk_onum(o, v, false, 16, false, 0, false);
}

#endif /* TK_OUTBUF_H */
