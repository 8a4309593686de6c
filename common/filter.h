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
 *   compare := FIELD OP VALUE | FIELD ".function" NAMEOP NAME
 *   OP      := "==" | "!=" | "<" | "<=" | ">" | ">=" | "&"   (numbers)
 *            | "==" | "!=" | "~"                              (strings; ~ is a glob)
 *   NAMEOP  := "==" | "!=" | "~"
 *   VALUE   := integer (decimal, 0x hex, 0 octal, optional leading -)
 *            | double (for double fields) | "quoted string" | 'quoted string'
 *   NAME    := a function's name, quoted or not (a glob after ~)
 *
 * FIELD.function (the kernel's postfix, on a pointer or a 64-bit integer)
 * compares the name of the function that holds the field's value, as the
 * kernel's "call_site.function == kfree" does: only where the filter is
 * compiled with a namer (tk_filter_compile_named), which a reader of a
 * trace gives from the trace's symbols.  There a pointer compared with a
 * quoted string (func == "main") means the same.
 *
 * A filter is compiled against one event's field list; names and types are
 * checked then, so evaluation cannot fail.
 */
#ifndef TK_FILTER_H
#define TK_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/*
 * The name of the function holding address @addr, in the terms of the
 * event being matched (@ctx: what was given to tk_filter_compile_named),
 * or NULL when unknown (then == is false and != true).  The name must
 * stay valid until the next call.
 */
typedef const char *tk_filter_namer(void *ctx, uint64_t addr);

/*
 * tk_filter_compile(), where FIELD.function and a pointer compared with a
 * quoted string name functions: @namer(@ctx, value) is called for them
 * when the filter is matched.  tk_filter_compile() refuses them.
 */
int tk_filter_compile_named(const char *expr, const struct tk_field_desc *fields,
			    unsigned nfields, tk_filter_namer *namer, void *ctx,
			    struct tk_filter **out, struct tk_filter_error *err);

/* True when the event whose field values are @values passes the filter. */
bool tk_filter_match(const struct tk_filter *f, const struct tk_value *values);

/* The expression the filter was compiled from (owned by the filter). */
const char *tk_filter_text(const struct tk_filter *f);

void tk_filter_free(struct tk_filter *f);

#endif /* TK_FILTER_H */
