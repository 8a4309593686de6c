/* SPDX-License-Identifier: MIT */
/*
 * filter.h - ftrace-style event filters, compiled once, evaluated per event.
 *
 * Grammar (the kernel's events/filter syntax):
 *
 *   expr    := or
 *   or      := and ( "||" and )*
 *   and     := unary ( "&&" unary )*
 *   unary   := "!" unary | "(" expr ")" | compare
 *   compare := FIELD OP VALUE
 *   OP      := "==" | "!=" | "<" | "<=" | ">" | ">=" | "&"   (numbers)
 *            | "==" | "!=" | "~"                              (strings; ~ is a glob)
 *   VALUE   := integer (decimal, 0x hex, 0 octal, optional leading -)
 *            | double (for double fields) | "quoted string" | 'quoted string'
 *
 * A filter is compiled against one event's field list; names and types are
 * checked then, so evaluation cannot fail.
 */
#ifndef TK_FILTER_H
#define TK_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include "tracekit/desc.h"
#include "tracekit/value.h"

struct tk_filter;

struct tk_filter_error {
	int column;        /* 1-based column in the expression, 0 if none */
	char message[160]; /* lowercase, no full stop, e.g. "unknown field 'lenn'" */
};

/*
 * Compile @expr for an event with fields @fields[0..nfields).  On success
 * returns 0 and stores a filter in *out, which the caller frees with
 * tk_filter_free().  On a syntax or type error returns -EINVAL and fills
 * *err; on allocation failure returns -ENOMEM.  @fields is copied: it need
 * not outlive the filter.
 */
int tk_filter_compile(const char *expr, const struct tk_field_desc *fields,
		      unsigned nfields, struct tk_filter **out,
		      struct tk_filter_error *err);

/* True when the event whose field values are @values passes the filter. */
bool tk_filter_match(const struct tk_filter *f, const struct tk_value *values);

/* The expression the filter was compiled from (owned by the filter). */
const char *tk_filter_text(const struct tk_filter *f);

void tk_filter_free(struct tk_filter *f);

#endif /* TK_FILTER_H */
