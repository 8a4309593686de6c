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

/* How a field is stored in a record and shown in a report. */
enum tk_field_kind {
	TK_KIND_INT = 1,  /* signed integer, size 1, 2, 4 or 8 */
	TK_KIND_UINT = 2, /* unsigned integer, size 1, 2, 4 or 8 */
	TK_KIND_PTR = 3,  /* pointer, stored as 8 bytes, shown in hex */
	TK_KIND_DOUBLE = 4, /* IEEE 754 double, 8 bytes */
	TK_KIND_CHARS = 5,  /* char array of fixed length array_len */
	TK_KIND_STRING = 6, /* NUL-terminated string of any length */
	TK_KIND_BYTES = 7,  /* u32 length then that many bytes */
};

/* Flags of a descriptor. */
enum tk_desc_flags {
	TK_DESC_MARKER = 1u << 0, /* printf-style marker, one per call site */
};

struct tk_field_desc {
	char name[TK_FIELD_NAME_MAX];
	uint8_t kind;      /* enum tk_field_kind */
	uint8_t size;      /* bytes for fixed-size kinds, 0 otherwise */
	uint16_t reserved;
	uint32_t array_len; /* TK_KIND_CHARS: number of chars */
};

struct tk_event;

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
