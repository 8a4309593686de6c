/* SPDX-License-Identifier: MIT */
/*
 * stages/seq.h - walk a field list once per expansion pass.
 *
 * TK_FIELDS(...) holds items such as tk_field_int(int, id, id), with no
 * commas between them.  Each item expands to a tuple (KIND, type, name,
 * expr, extra), so a field list becomes a sequence "(...)(...)(...)".  A
 * pass walks the sequence with two macros that call each other in turn
 * (A, then B, then A ...), which the preprocessor allows because neither
 * is expanding when the other is called; the walker left at the end is
 * pasted with _END into nothing.  Each pass below is one such pair; PASS_KIND picks the per-kind macro (for
 * example TK__SIZE_STR) for each tuple.
 *
 *   TK__SEQ_SIZE((INT, int, id, id, 0)(STR, const char *, path, path, 0))
 *     => + sizeof(int) + tk__len_path
 */
#ifndef TRACEKIT_STAGES_SEQ_H
#define TRACEKIT_STAGES_SEQ_H

#define TK__CAT(a, b) TK__CAT_I(a, b)
#define TK__CAT_I(a, b) a##b
#define TK__STR(x) TK__STR_I(x)
#define TK__STR_I(x) #x

/* Expand the walk (an argument is expanded before it is substituted),
 * then paste _END onto its last token, the walker left over.  Variadic, so
 * that the commas of the output do not matter. */
#define TK__WALK(...) TK__WALK_END(__VA_ARGS__)
#define TK__WALK_END(...) __VA_ARGS__##_END

/* Count: "+1" per field. */
#define TK__SEQ_COUNT(seq) (0 TK__WALK(TK__COUNT_A seq))
#define TK__COUNT_A(k, t, n, e, x) TK__COUNT_##k(t, n, e, x) TK__COUNT_B
#define TK__COUNT_B(k, t, n, e, x) TK__COUNT_##k(t, n, e, x) TK__COUNT_A
#define TK__COUNT_A_END
#define TK__COUNT_B_END

/* Descriptors: one struct tk_field_desc initializer per field. */
#define TK__SEQ_DESC(seq) TK__WALK(TK__DESC_A seq)
#define TK__DESC_A(k, t, n, e, x) TK__DESC_##k(t, n, e, x) TK__DESC_B
#define TK__DESC_B(k, t, n, e, x) TK__DESC_##k(t, n, e, x) TK__DESC_A
#define TK__DESC_A_END
#define TK__DESC_B_END

/* Locals computed once: string and byte-array lengths. */
#define TK__SEQ_LOCALS(seq) TK__WALK(TK__LOCALS_A seq)
#define TK__LOCALS_A(k, t, n, e, x) TK__LOCALS_##k(t, n, e, x) TK__LOCALS_B
#define TK__LOCALS_B(k, t, n, e, x) TK__LOCALS_##k(t, n, e, x) TK__LOCALS_A
#define TK__LOCALS_A_END
#define TK__LOCALS_B_END

/* Record size: "+ bytes" per field. */
#define TK__SEQ_SIZE(seq) TK__WALK(TK__SIZE_A seq)
#define TK__SIZE_A(k, t, n, e, x) TK__SIZE_##k(t, n, e, x) TK__SIZE_B
#define TK__SIZE_B(k, t, n, e, x) TK__SIZE_##k(t, n, e, x) TK__SIZE_A
#define TK__SIZE_A_END
#define TK__SIZE_B_END

/* Serializer: one statement per field, advancing the char *tk__p. */
#define TK__SEQ_WRITE(seq) TK__WALK(TK__WRITE_A seq)
#define TK__WRITE_A(k, t, n, e, x) TK__WRITE_##k(t, n, e, x) TK__WRITE_B
#define TK__WRITE_B(k, t, n, e, x) TK__WRITE_##k(t, n, e, x) TK__WRITE_A
#define TK__WRITE_A_END
#define TK__WRITE_B_END

/* Filter values: one struct tk_value per field, through tk__vp. */
#define TK__SEQ_VALUE(seq) TK__WALK(TK__VALUE_A seq)
#define TK__VALUE_A(k, t, n, e, x) TK__VALUE_##k(t, n, e, x) TK__VALUE_B
#define TK__VALUE_B(k, t, n, e, x) TK__VALUE_##k(t, n, e, x) TK__VALUE_A
#define TK__VALUE_A_END
#define TK__VALUE_B_END

/* Field names: one struct member per field (check.h). */
#define TK__SEQ_NAMES(seq) TK__WALK(TK__NAMES_A seq)
#define TK__NAMES_A(k, t, n, e, x) TK__NAMES_##k(t, n, e, x) TK__NAMES_B
#define TK__NAMES_B(k, t, n, e, x) TK__NAMES_##k(t, n, e, x) TK__NAMES_A
#define TK__NAMES_A_END
#define TK__NAMES_B_END

#define TK__COUNT_INT(t, n, e, x) +1
#define TK__COUNT_PTR(t, n, e, x) +1
#define TK__COUNT_DBL(t, n, e, x) +1
#define TK__COUNT_CHARS(t, n, e, x) +1
#define TK__COUNT_STR(t, n, e, x) +1
#define TK__COUNT_BYTES(t, n, e, x) +1

#endif /* TRACEKIT_STAGES_SEQ_H */
