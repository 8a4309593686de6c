/* SPDX-License-Identifier: MIT */
/*
 * stages/fields.h - the field items of TK_FIELDS(...).
 *
 * Each item names the field, says how to compute its value from the
 * event's arguments (expr), and fixes how it is stored.  An item becomes a
 * tuple (KIND, type, name, expr, extra) that the passes in this folder
 * expand; see seq.h.  Field expressions may be evaluated more than once:
 * keep them free of side effects (usually they are just argument names).
 *
 *   tk_field_int(uint32_t, len, n)      integer of that type (8..64 bits,
 *                                        signed or unsigned from the type)
 *   tk_field_ptr(addr, p)               pointer, shown in hex
 *   tk_field_double(ratio, r)           double
 *   tk_field_chars(comm, c, 16)         char array of fixed size 16 (copied
 *                                        up to its NUL, zero-padded)
 *   tk_field_string(path, s)            NUL-terminated string, any length
 *   tk_field_bytes(data, p, n)          n bytes from p (length recorded)
 */
#ifndef TRACEKIT_STAGES_FIELDS_H
#define TRACEKIT_STAGES_FIELDS_H

/**
 * tk_field_int() - an integer field.
 * @type: its C type, 8 to 64 bits; signed or not as the type is.
 * @name: the field's name.
 * @expr: its value, from the event's arguments.
 */
#define tk_field_int(type, name, expr) (INT, type, name, expr, 0)
/**
 * tk_field_ptr() - a pointer field, stored in 8 bytes, shown in hex.
 * @name: the field's name.
 * @expr: its value.
 */
#define tk_field_ptr(name, expr) (PTR, const void *, name, expr, 0)
/**
 * tk_field_double() - a double field.
 * @name: the field's name.
 * @expr: its value.
 */
#define tk_field_double(name, expr) (DBL, double, name, expr, 0)
/**
 * tk_field_chars() - a char array of a fixed size, copied up to its NUL
 *	and zero-padded.
 * @name: the field's name.
 * @expr: the chars.
 * @len: the array's size, a constant.
 */
#define tk_field_chars(name, expr, len) (CHARS, char, name, expr, len)
/**
 * tk_field_string() - a NUL-terminated string of any length ("(null)"
 *	for NULL).
 * @name: the field's name.
 * @expr: the string.
 */
#define tk_field_string(name, expr) (STR, const char *, name, expr, 0)
/**
 * tk_field_bytes() - bytes of a length known at run time; the length is
 *	recorded too.
 * @name: the field's name.
 * @ptr: the first byte.
 * @len: how many.
 */
#define tk_field_bytes(name, ptr, len) (BYTES, const void *, name, ptr, len)

/* True for signed integer types. */
#define TK__IS_SIGNED(type) ((type)-1 < (type)1)

#endif /* TRACEKIT_STAGES_FIELDS_H */
