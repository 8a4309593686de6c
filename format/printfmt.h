/* SPDX-License-Identifier: MIT */
/*
 * printfmt.h - print an event's fields with its print format, at read time.
 *
 * An event carries a printf-style format ("id=%d path=%s") and the names of
 * the fields its conversions take ("id, path"), as the kernel's
 * `print fmt: "id=%d path=%s", REC->id, REC->path`.  Markers carry only the
 * format: their conversions take the fields in order.  The format is
 * prepared once per event and then applied to each record's values.
 */
#ifndef TK_PRINTFMT_H
#define TK_PRINTFMT_H

#include <stddef.h>
#include "outbuf.h"
#include "tracekit/desc.h"
#include "tracekit/value.h"

struct tk_print;

/*
 * Prepare @fmt with argument names @args (comma-separated field names,
 * white space allowed; "" means: bind conversions to fields in order) for
 * an event with @fields[0..nfields).  An empty @fmt means the default
 * layout "name=value name=value ...".  Returns 0 and a handle in *out (free
 * with tk_print_free), or -EINVAL with a one-line reason in err[errlen]
 * (unknown field name, more conversions than arguments, ...), or -ENOMEM.
 */
int tk_print_prepare(const char *fmt, const char *args,
		     const struct tk_field_desc *fields, unsigned nfields,
		     struct tk_print **out, char *err, size_t errlen);

/*
 * Format @values (one per field) into buf[buflen], NUL-terminated and
 * truncated if needed.  Returns the length the full text has (as snprintf).
 * Never fails: a conversion that does not suit its field's kind prints the
 * value in the field's natural form.
 */
size_t tk_print_format(const struct tk_print *p, const struct tk_value *values,
		       char *buf, size_t buflen);

/* The same text appended to the line @o, as much of it as fits. */
static inline void tk_print_append(const struct tk_print *p,
				   const struct tk_value *values, struct tk_obuf *o)
{
	size_t left = tk_oleft(o), len;

	if (!left)
		return;
	/* as snprintf: the text's length, of which left - 1 bytes at most
	 * are written, and a NUL */
	len = tk_print_format(p, values, tk_otail(o), left);
	tk_ogrew(o, len < left ? len : left - 1);
}

void tk_print_free(struct tk_print *p);

/*
 * A prepared format, piece by piece, for writers of other formats that
 * print with printf themselves (trace.dat's print fmt): literal text, or
 * one field with a C conversion that prints what tk_print_format prints
 * for it when given the value as @as says.
 */
enum tk_print_as {
	TK_PRINT_LITERAL,
	TK_PRINT_S64,    /* spec takes a long long */
	TK_PRINT_U64,    /* spec takes an unsigned long long */
	TK_PRINT_PTR,    /* "%p": "(nil)" for 0, else 0x and hex */
	TK_PRINT_DOUBLE, /* spec takes a double */
	TK_PRINT_STR,    /* spec takes the string (STRING, or CHARS up to NUL) */
	TK_PRINT_BYTES,  /* no spec: "{de,ad}" */
};

struct tk_print_piece {
	enum tk_print_as as;
	const char *text; /* TK_PRINT_LITERAL: its bytes (not NUL-terminated) */
	size_t len;
	unsigned field;   /* the others: the field's index */
	char spec[32];    /* the conversion with its flags and width */
};

/* How many pieces @p has, and piece @i of them. */
unsigned tk_print_npieces(const struct tk_print *p);
void tk_print_piece(const struct tk_print *p, unsigned i,
		    struct tk_print_piece *out);

#endif /* TK_PRINTFMT_H */
