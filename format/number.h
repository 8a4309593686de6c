/* SPDX-License-Identifier: MIT */
/*
 * number.h - integers as text without printf, for every printer of the
 * tools: report's line prefix, the print formats of user events
 * (printfmt.c), the compiled kernel print formats (kprint-out.h) and
 * convert's output (export/out.c).
 *
 * The report writes millions of lines a second and snprintf costs more
 * than the rest of a line, so digits are written by hand: backwards from
 * the end of a scratch buffer (the caller then copies them where they
 * go, padded as its output wants), two decimal digits a step from a
 * table, in 32-bit arithmetic once the value fits.
 *
 *   char tmp[TK_NUM_MAX], *s = tk_num_dec(tmp + sizeof(tmp), 4242);
 *   // s[0..tmp + sizeof(tmp) - s) is "4242"
 */
#ifndef TK_NUMBER_H
#define TK_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Room for any uint64_t in base 8, 10 or 16, and a sign. */
#define TK_NUM_MAX 24

static const char tk_num_pairs[] =
	"0001020304050607080910111213141516171819"
	"2021222324252627282930313233343536373839"
	"4041424344454647484950515253545556575859"
	"6061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* @v in decimal, ending just before @end; returns where it starts. */
static inline char *tk_num_dec(char *end, uint64_t v)
{
	uint32_t w;

	while (v > UINT32_MAX) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		end -= 2;
		memcpy(end, &tk_num_pairs[2 * r], 2);
	}
	w = (uint32_t)v;
	while (w >= 100) {
		unsigned r = w % 100;

		w /= 100;
		end -= 2;
		memcpy(end, &tk_num_pairs[2 * r], 2);
	}
	if (w >= 10) {
		end -= 2;
		memcpy(end, &tk_num_pairs[2 * w], 2);
	} else {
		*--end = (char)('0' + w);
	}
	return end;
}

/* @v in hex, a-f or with @upper A-F, ending just before @end. */
static inline char *tk_num_hex(char *end, uint64_t v, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";

	do {
		*--end = digits[v & 15];
		v >>= 4;
	} while (v);
	return end;
}

/* @v in octal, ending just before @end. */
static inline char *tk_num_oct(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + (v & 7));
		v >>= 3;
	} while (v);
	return end;
}

/* @v, less than 10^@digits, in exactly @digits decimal digits (zeros
 * first) at @buf: the fraction of a second, a CPU number.  Unrolled where
 * @digits is a constant. */
static inline void tk_num_fixed(char *buf, uint32_t v, unsigned digits)
{
	while (digits >= 2) {
		digits -= 2;
		memcpy(buf + digits, &tk_num_pairs[2 * (v % 100)], 2);
		v /= 100;
	}
	if (digits)
		buf[0] = (char)('0' + v % 10);
}

/* @ns in whole microseconds, rounded to the nearest (half up), as
 * trace-cmd report prints times ("SECS.USECS", libtraceevent rounds to
 * its precision since 2019): 24239.121473697 s is 24239.121474.  Every
 * "seconds.microseconds" time tracekit prints comes from here. */
static inline uint64_t tk_num_usecs(uint64_t ns)
{
	return ns / 1000u + (ns % 1000u >= 500u);
}

/* The nanoseconds that tk_num_usecs() rounds to @us, *@lo to *@hi: what
 * a time read back as printed stands for. */
static inline void tk_num_usecs_span(uint64_t us, uint64_t *lo, uint64_t *hi)
{
	*lo = us ? us * 1000u - 500u : 0;
	*hi = us * 1000u + 499u;
}

/* @v in decimal at @buf, right-aligned in @width columns padded with
 * @pad; returns the characters written (more than @width if needed).
 * @buf needs room for max(@width, TK_NUM_MAX). */
static inline size_t tk_num_put_dec(char *buf, uint64_t v, unsigned width,
				    char pad)
{
	char tmp[TK_NUM_MAX], *end = tmp + sizeof(tmp);
	char *s = tk_num_dec(end, v);
	size_t len = (size_t)(end - s), out = 0;

	while (len + out < width)
		buf[out++] = pad;
	memcpy(buf + out, s, len);
	return out + len;
}

#endif /* TK_NUMBER_H */
