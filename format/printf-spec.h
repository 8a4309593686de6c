/* SPDX-License-Identifier: MIT */
/*
 * printf-spec.h - one conversion of a printf format ("%-08.3lx"), split
 * into its parts, for the two printers that take printf formats: the
 * print formats of user events and markers (printfmt.c) and the kernel's
 * print fmt compiled into steps (kprint-compile.c).
 *
 * The grammar is C's, in C's order:
 *
 *   % [flags -+ #0] [width] [.precision] [length hh h l ll L z j t q] conversion
 *
 * '*' (width or precision from an argument) is refused: a trace has no
 * such arguments.  What a length or a conversion means is the caller's
 * business; the parser only says which were written.
 */
#ifndef TK_PRINTF_SPEC_H
#define TK_PRINTF_SPEC_H

#include <stddef.h>

/* Widths and precisions above this are refused. */
#define TK_SPEC_WIDTH_MAX 4096

enum {
	TK_SPEC_MINUS = 1u << 0,
	TK_SPEC_PLUS = 1u << 1,
	TK_SPEC_SPACE = 1u << 2,
	TK_SPEC_HASH = 1u << 3,
	TK_SPEC_ZERO = 1u << 4,
};

/* Why a conversion does not parse. */
enum tk_spec_error {
	TK_SPEC_OK = 0,
	TK_SPEC_E_WIDTH, /* a width above TK_SPEC_WIDTH_MAX */
	TK_SPEC_E_PREC,  /* a precision above TK_SPEC_WIDTH_MAX */
	TK_SPEC_E_END,   /* the format ends inside the conversion */
	TK_SPEC_E_CONV,  /* an unknown conversion character (in conv) */
	TK_SPEC_E_STAR,  /* '*' for the width or the precision */
};

struct tk_spec {
	unsigned flags;  /* TK_SPEC_MINUS ... */
	int width;       /* -1: none */
	int prec;        /* -1: none */
	const char *len; /* the length modifiers as written, nlen chars */
	unsigned nlen;
	char conv;  /* d i u x X o c s p f F e E g G a A */
	size_t end; /* index just past the conversion character */
};

/*
 * Parse the conversion whose '%' is at fmt[at] ("%%" is not one: the
 * caller prints a '%').  Returns TK_SPEC_OK with *spec filled, or why it
 * does not parse (spec->conv holds the character for TK_SPEC_E_CONV).
 */
enum tk_spec_error tk_spec_parse(const char *fmt, size_t at,
				 struct tk_spec *spec);

#endif /* TK_PRINTF_SPEC_H */
