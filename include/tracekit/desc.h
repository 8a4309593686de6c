/* SPDX-License-Identifier: MIT */
/*
 * tracekit/desc.h - the static description of an event.
 *
 * Every event definition (TK_EVENT or tk_mark) emits one descriptor into the
 * ELF section "tk_meta".  A descriptor holds no pointers that the reader
 * needs: names, field list, print format and its argument list are stored
 * inline.  So the same bytes serve three readers: the runtime registry, the
 * recorder (which receives them over the control socket), and `tracekit
 * list PROGRAM`, which reads them straight from the ELF file.
 *
 * Layout (all little-endian, 8-byte aligned, walk by head.size):
 *
 *   struct tk_desc_head      fixed header, magic TK_DESC_MAGIC
 *   struct tk_field_desc[n]  one per field, in record order
 *   char strings[]           provider, name, print format, print args,
 *                            each NUL-terminated, at the offsets in head
 *
 * The layout of this header is part of the trace format (docs/format.md).
 */
#ifndef TRACEKIT_DESC_H
#define TRACEKIT_DESC_H

#include <stdint.h>

#define TK_DESC_MAGIC 0x56454b54u /* "TKEV" */
#define TK_DESC_VERSION 1
#define TK_FIELD_NAME_MAX 40 /* including the NUL */

/**
 * enum tk_field_kind - how a field is stored in a record and shown.
 * @TK_KIND_INT: signed integer of 1, 2, 4 or 8 bytes.
 * @TK_KIND_UINT: unsigned integer of 1, 2, 4 or 8 bytes.
 * @TK_KIND_PTR: pointer, stored as 8 bytes, shown in hex.
 * @TK_KIND_DOUBLE: IEEE 754 double, 8 bytes.
 * @TK_KIND_CHARS: char array of a fixed length (array_len).
 * @TK_KIND_STRING: NUL-terminated string of any length.
 * @TK_KIND_BYTES: a u32 length, then that many bytes.
 */
enum tk_field_kind {
	TK_KIND_INT = 1,  /* signed integer, size 1, 2, 4 or 8 */
	TK_KIND_UINT = 2, /* unsigned integer, size 1, 2, 4 or 8 */
	TK_KIND_PTR = 3,  /* pointer, stored as 8 bytes, shown in hex */
	TK_KIND_DOUBLE = 4, /* IEEE 754 double, 8 bytes */
	TK_KIND_CHARS = 5,  /* char array of fixed length array_len */
	TK_KIND_STRING = 6, /* NUL-terminated string of any length */
	TK_KIND_BYTES = 7,  /* u32 length then that many bytes */
};

/**
 * enum tk_desc_flags - flags of a descriptor.
 * @TK_DESC_MARKER: a tk_mark() call site (one event per site); its fields
 *	are named a0, a1, ... and its print format takes them in order.
 */
enum tk_desc_flags {
	TK_DESC_MARKER = 1u << 0, /* printf-style marker, one per call site */
};

/**
 * struct tk_field_desc - one field of an event, in record order.
 * @name: the field's name, NUL-terminated.
 * @kind: enum tk_field_kind.
 * @size: bytes, for the fixed-size kinds; 0 for the others.
 * @reserved: 0.
 * @array_len: TK_KIND_CHARS: the number of chars.
 */
struct tk_field_desc {
	char name[TK_FIELD_NAME_MAX];
	uint8_t kind;      /* enum tk_field_kind */
	uint8_t size;      /* bytes for fixed-size kinds, 0 otherwise */
	uint16_t reserved;
	uint32_t array_len; /* TK_KIND_CHARS: number of chars */
};

struct tk_event;

/**
 * struct tk_desc_head - the fixed header of an event descriptor.
 * @magic: TK_DESC_MAGIC.
 * @version: TK_DESC_VERSION.
 * @nfields: the struct tk_field_desc entries that follow the header.
 * @size: bytes of the whole descriptor, a multiple of 8.
 * @flags: enum tk_desc_flags.
 * @off_provider: offset of the provider's name from the header's start.
 * @off_name: offset of the event's name.
 * @off_fmt: offset of the print format ("" for the default layout).
 * @off_args: offset of the print format's arguments, comma-separated
 *	field names ("" for markers: the fields in order).
 * @event: the runtime object; meaningless when read from a file.
 */
struct tk_desc_head {
	uint32_t magic;   /* TK_DESC_MAGIC */
	uint16_t version; /* TK_DESC_VERSION */
	uint16_t nfields;
	uint32_t size;    /* bytes of the whole descriptor, multiple of 8 */
	uint32_t flags;   /* enum tk_desc_flags */
	uint16_t off_provider; /* string offsets from the start of head */
	uint16_t off_name;
	uint16_t off_fmt;
	uint16_t off_args;
	/* The runtime object; meaningless when read from a file. */
	struct tk_event *event;
};

#endif /* TRACEKIT_DESC_H */
