/* SPDX-License-Identifier: MIT */
/*
 * kernel-fields.h - a kernel event's fields as tracekit's filters and
 * histograms see them: integers (1, 2, 4, 8 bytes, signed or not), char
 * arrays and dynamic strings (__data_loc char[]), the common fields
 * first.  Other fields (arrays of numbers, dynamic arrays) cannot be named.
 *
 * The field list is made once per event from libtraceevent's format;
 * tk_kfields_values() then fills one struct tk_value per field from a
 * record without allocating, so a filter or a key reads a kernel record
 * as it reads a user one.
 */
#ifndef TK_KERNEL_FIELDS_H
#define TK_KERNEL_FIELDS_H

#include <stdbool.h>
#include <stdint.h>
#include "tracekit/desc.h"
#include "tracekit/value.h"

struct tep_event;
struct tep_format_field;

/* Where a field is in a record, copied out of libtraceevent's format so
 * that reading a value touches one small array. */
struct tk_kfield_at {
	uint32_t off, size;
	uint8_t kind;  /* enum tk_field_kind */
	bool relative; /* __rel_loc: the offset counts from after the field */
};

struct tk_kfields {
	unsigned nfields;
	struct tk_field_desc *fields; /* as a user event's descriptor */
	struct tk_kfield_at *at;      /* where each is in a record */
};

/* Build @kf for @ev.  Returns 0 or -ENOMEM; free with tk_kfields_free(). */
int tk_kfields_init(struct tk_kfields *kf, struct tep_event *ev);

/* Values of a record's fields into values[0..kf->nfields); strings point
 * into @data.  False when the record is too short for them. */
bool tk_kfields_values(const struct tk_kfields *kf, const unsigned char *data,
		       unsigned size, struct tk_value *values);

void tk_kfields_free(struct tk_kfields *kf);

#endif /* TK_KERNEL_FIELDS_H */
