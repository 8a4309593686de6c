/* SPDX-License-Identifier: MIT */
/*
 * stages/desc.h - pass 1: field metadata (struct tk_field_desc).
 *
 *   tk_field_int(uint16_t, port, p)
 *     => { "port", TK_KIND_UINT, sizeof(uint16_t), 0, 0 },
 *   tk_field_string(path, s)
 *     => { "path", TK_KIND_STRING, 0, 0, 0 },
 */
#ifndef TRACEKIT_STAGES_DESC_H
#define TRACEKIT_STAGES_DESC_H

#define TK__DESC_INT(t, n, e, x)                                              \
	{ #n, (uint8_t)(TK__IS_SIGNED(t) ? TK_KIND_INT : TK_KIND_UINT),      \
	  (uint8_t)sizeof(t), 0, 0 },
#define TK__DESC_PTR(t, n, e, x) { #n, TK_KIND_PTR, 8, 0, 0 },
#define TK__DESC_DBL(t, n, e, x) { #n, TK_KIND_DOUBLE, 8, 0, 0 },
#define TK__DESC_CHARS(t, n, e, x) { #n, TK_KIND_CHARS, 0, 0, (x) },
#define TK__DESC_STR(t, n, e, x) { #n, TK_KIND_STRING, 0, 0, 0 },
#define TK__DESC_BYTES(t, n, e, x) { #n, TK_KIND_BYTES, 0, 0, 0 },

#endif /* TRACEKIT_STAGES_DESC_H */
