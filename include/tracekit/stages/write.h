/* SPDX-License-Identifier: MIT */
/*
 * stages/write.h - pass 3: the serializer, one statement per field.
 *
 * Fields are packed with no padding, little-endian, in definition order;
 * tk__p walks the reserved space:
 *
 *   tk_field_int(int, id, id)
 *     => { int tk__v = (int)(id); memcpy(tk__p, &tk__v, sizeof tk__v);
 *          tk__p += sizeof tk__v; }
 *   tk_field_string(path, s)
 *     => tk__p = tk__put_str(tk__p, tk__s_path, tk__len_path);
 */
#ifndef TRACEKIT_STAGES_WRITE_H
#define TRACEKIT_STAGES_WRITE_H

#define TK__WRITE_INT(t, n, e, x)                                             \
	{                                                                    \
		t tk__v = (t)(e);                                            \
		memcpy(tk__p, &tk__v, sizeof tk__v);                         \
		tk__p += sizeof tk__v;                                       \
	}
#define TK__WRITE_PTR(t, n, e, x)                                             \
	{                                                                    \
		uint64_t tk__v = (uint64_t)(uintptr_t)(e);                   \
		memcpy(tk__p, &tk__v, 8);                                    \
		tk__p += 8;                                                  \
	}
#define TK__WRITE_DBL(t, n, e, x)                                             \
	{                                                                    \
		double tk__v = (double)(e);                                  \
		memcpy(tk__p, &tk__v, 8);                                    \
		tk__p += 8;                                                  \
	}
#define TK__WRITE_CHARS(t, n, e, x) tk__p = tk__put_chars(tk__p, (e), (x));
#define TK__WRITE_STR(t, n, e, x)                                             \
	tk__p = tk__put_str(tk__p, tk__s_##n, tk__len_##n);
#define TK__WRITE_BYTES(t, n, e, x)                                           \
	tk__p = tk__put_bytes(tk__p, (e), tk__len_##n);

#endif /* TRACEKIT_STAGES_WRITE_H */
