/* SPDX-License-Identifier: MIT */
/*
 * tracekit/value.h - one field's value, as filters and formatters see it.
 *
 * The runtime fills an array of these from an event's arguments (to run a
 * filter before any buffer space is reserved); the reader fills one from a
 * decoded record (for `report -F` and for printing).  Index i of the array
 * is field i of the event's descriptor.
 */
#ifndef TRACEKIT_VALUE_H
#define TRACEKIT_VALUE_H

#include <stdint.h>

/**
 * struct tk_value - one field's value.
 * @i: a TK_KIND_INT field, sign-extended.
 * @u: a TK_KIND_UINT or TK_KIND_PTR field.
 * @d: a TK_KIND_DOUBLE field.
 * @str: a TK_KIND_STRING, TK_KIND_CHARS or TK_KIND_BYTES field: its bytes,
 *	not necessarily NUL-terminated.
 * @len: the count of bytes at @str (strings: without the NUL).
 */
struct tk_value {
	union {
		int64_t i;  /* TK_KIND_INT */
		uint64_t u; /* TK_KIND_UINT, TK_KIND_PTR */
		double d;   /* TK_KIND_DOUBLE */
	};
	const char *str; /* TK_KIND_STRING, _CHARS, _BYTES: the bytes */
	uint32_t len;    /* their count (strings: without the NUL) */
};

#endif /* TRACEKIT_VALUE_H */
