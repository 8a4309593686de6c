/* SPDX-License-Identifier: MIT */
/*
 * stages/size.h - pass 2: the record's payload size.
 *
 * Variable-size fields get a local computed once (LOCALS), which both the
 * size (SIZE) and the serializer (write.h) use:
 *
 *   tk_field_string(path, s)
 *     LOCALS => uint32_t tk__len_path = tk__strsize(s);
 *     SIZE   => + tk__len_path
 *   tk_field_int(int, id, id)
 *     SIZE   => + sizeof(int)
 */
#ifndef TRACEKIT_STAGES_SIZE_H
#define TRACEKIT_STAGES_SIZE_H

#define TK__LOCALS_INT(t, n, e, x)
#define TK__LOCALS_PTR(t, n, e, x)
#define TK__LOCALS_DBL(t, n, e, x)
#define TK__LOCALS_CHARS(t, n, e, x)
#define TK__LOCALS_STR(t, n, e, x)                                            \
	const char *tk__s_##n = tk__str_or_null(e);                          \
	uint32_t tk__len_##n = tk__strsize(tk__s_##n);
#define TK__LOCALS_BYTES(t, n, e, x) uint32_t tk__len_##n = (uint32_t)(x);

#define TK__SIZE_INT(t, n, e, x) +sizeof(t)
#define TK__SIZE_PTR(t, n, e, x) +8
#define TK__SIZE_DBL(t, n, e, x) +8
#define TK__SIZE_CHARS(t, n, e, x) +(x)
#define TK__SIZE_STR(t, n, e, x) +tk__len_##n
#define TK__SIZE_BYTES(t, n, e, x) +4 + tk__len_##n

#endif /* TRACEKIT_STAGES_SIZE_H */
