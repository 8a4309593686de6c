/* SPDX-License-Identifier: MIT */
/*
 * stages/value.h - pass 4: field values for a filter.
 *
 * Run only when the event has a filter, before any buffer space is
 * reserved, so a rejected event costs no space:
 *
 *   tk_field_int(int, id, id)  => tk__vp->i = (int64_t)(int)(id); tk__vp++;
 *   tk_field_string(path, s)   => tk__value_str(tk__vp++, s);
 */
#ifndef TRACEKIT_STAGES_VALUE_H
#define TRACEKIT_STAGES_VALUE_H

#define TK__VALUE_INT(t, n, e, x)                                             \
	tk__vp->i = TK__IS_SIGNED(t) ? (int64_t)(t)(e)                       \
				     : (int64_t)(uint64_t)(t)(e);            \
	tk__vp++;
#define TK__VALUE_PTR(t, n, e, x)                                             \
	tk__vp->u = (uint64_t)(uintptr_t)(e);                                \
	tk__vp++;
#define TK__VALUE_DBL(t, n, e, x)                                             \
	tk__vp->d = (double)(e);                                             \
	tk__vp++;
#define TK__VALUE_CHARS(t, n, e, x) tk__value_chars(tk__vp++, (e), (x));
#define TK__VALUE_STR(t, n, e, x) tk__value_str(tk__vp++, (e));
#define TK__VALUE_BYTES(t, n, e, x)                                           \
	tk__value_bytes(tk__vp++, (e), (uint32_t)(x));

#endif /* TRACEKIT_STAGES_VALUE_H */
