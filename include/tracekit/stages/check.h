/* SPDX-License-Identifier: MIT */
/*
 * stages/check.h - pass 5: what the compiler checks in a definition.
 *
 * TK_PRINT's arguments are field names: the format is applied when the
 * trace is read, to the recorded values of those fields.  An expression
 * there (`wr ? "write" : "read"`, `len * 2`, a name that is no field)
 * would compile and only fail when read, so each argument must be the
 * name of a member of a struct that has one member per field (and an
 * unnamed one, so that TK_PRINT("text") with no argument passes):
 *
 *   struct tk__print_fields_app_request { char tk__f_; char tk__f_id; };
 *   TK__PRINT_ARG_MUST_BE_A_FIELD_NAME(struct tk__print_fields_app_request, id)
 *     => static_assert(__builtin_offsetof(struct ..., tk__f_id) < 65536, ...)
 *
 * A name that is no field fails with "'struct tk__print_fields_app_request'
 * has no member named 'tk__f_NAME'"; an expression with a syntax error in
 * the expansion of TK__PRINT_ARG_MUST_BE_A_FIELD_NAME.  At most 32
 * arguments.
 */
#ifndef TRACEKIT_STAGES_CHECK_H
#define TRACEKIT_STAGES_CHECK_H

#ifdef __cplusplus
#define TK__STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define TK__STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* One member per field, named after it. */
#define TK__NAMES_INT(t, n, e, x) char tk__f_##n;
#define TK__NAMES_PTR(t, n, e, x) char tk__f_##n;
#define TK__NAMES_DBL(t, n, e, x) char tk__f_##n;
#define TK__NAMES_CHARS(t, n, e, x) char tk__f_##n;
#define TK__NAMES_STR(t, n, e, x) char tk__f_##n;
#define TK__NAMES_BYTES(t, n, e, x) char tk__f_##n;

#define TK__PRINT_ARG_MUST_BE_A_FIELD_NAME(s, a)                              \
	TK__STATIC_ASSERT(__builtin_offsetof(s, TK__CAT(tk__f_, a)) < 65536,  \
			  "TK_PRINT arguments must be field names");

/* m(c, a) for each argument a, up to 32. */
#define TK__PNARGS(...)                                                       \
	TK__PNARGS_I(__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, \
		     21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, \
		     6, 5, 4, 3, 2, 1, ~)
#define TK__PNARGS_I(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13,  \
		     _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24,   \
		     _25, _26, _27, _28, _29, _30, _31, _32, N, ...)          \
	N
#define TK__PMAP(m, c, ...)                                                   \
	TK__CAT(TK__PMAP_, TK__PNARGS(__VA_ARGS__))(m, c, __VA_ARGS__)
#define TK__PMAP_1(m, c, a) m(c, a)
#define TK__PMAP_2(m, c, a, ...) m(c, a) TK__PMAP_1(m, c, __VA_ARGS__)
#define TK__PMAP_3(m, c, a, ...) m(c, a) TK__PMAP_2(m, c, __VA_ARGS__)
#define TK__PMAP_4(m, c, a, ...) m(c, a) TK__PMAP_3(m, c, __VA_ARGS__)
#define TK__PMAP_5(m, c, a, ...) m(c, a) TK__PMAP_4(m, c, __VA_ARGS__)
#define TK__PMAP_6(m, c, a, ...) m(c, a) TK__PMAP_5(m, c, __VA_ARGS__)
#define TK__PMAP_7(m, c, a, ...) m(c, a) TK__PMAP_6(m, c, __VA_ARGS__)
#define TK__PMAP_8(m, c, a, ...) m(c, a) TK__PMAP_7(m, c, __VA_ARGS__)
#define TK__PMAP_9(m, c, a, ...) m(c, a) TK__PMAP_8(m, c, __VA_ARGS__)
#define TK__PMAP_10(m, c, a, ...) m(c, a) TK__PMAP_9(m, c, __VA_ARGS__)
#define TK__PMAP_11(m, c, a, ...) m(c, a) TK__PMAP_10(m, c, __VA_ARGS__)
#define TK__PMAP_12(m, c, a, ...) m(c, a) TK__PMAP_11(m, c, __VA_ARGS__)
#define TK__PMAP_13(m, c, a, ...) m(c, a) TK__PMAP_12(m, c, __VA_ARGS__)
#define TK__PMAP_14(m, c, a, ...) m(c, a) TK__PMAP_13(m, c, __VA_ARGS__)
#define TK__PMAP_15(m, c, a, ...) m(c, a) TK__PMAP_14(m, c, __VA_ARGS__)
#define TK__PMAP_16(m, c, a, ...) m(c, a) TK__PMAP_15(m, c, __VA_ARGS__)
#define TK__PMAP_17(m, c, a, ...) m(c, a) TK__PMAP_16(m, c, __VA_ARGS__)
#define TK__PMAP_18(m, c, a, ...) m(c, a) TK__PMAP_17(m, c, __VA_ARGS__)
#define TK__PMAP_19(m, c, a, ...) m(c, a) TK__PMAP_18(m, c, __VA_ARGS__)
#define TK__PMAP_20(m, c, a, ...) m(c, a) TK__PMAP_19(m, c, __VA_ARGS__)
#define TK__PMAP_21(m, c, a, ...) m(c, a) TK__PMAP_20(m, c, __VA_ARGS__)
#define TK__PMAP_22(m, c, a, ...) m(c, a) TK__PMAP_21(m, c, __VA_ARGS__)
#define TK__PMAP_23(m, c, a, ...) m(c, a) TK__PMAP_22(m, c, __VA_ARGS__)
#define TK__PMAP_24(m, c, a, ...) m(c, a) TK__PMAP_23(m, c, __VA_ARGS__)
#define TK__PMAP_25(m, c, a, ...) m(c, a) TK__PMAP_24(m, c, __VA_ARGS__)
#define TK__PMAP_26(m, c, a, ...) m(c, a) TK__PMAP_25(m, c, __VA_ARGS__)
#define TK__PMAP_27(m, c, a, ...) m(c, a) TK__PMAP_26(m, c, __VA_ARGS__)
#define TK__PMAP_28(m, c, a, ...) m(c, a) TK__PMAP_27(m, c, __VA_ARGS__)
#define TK__PMAP_29(m, c, a, ...) m(c, a) TK__PMAP_28(m, c, __VA_ARGS__)
#define TK__PMAP_30(m, c, a, ...) m(c, a) TK__PMAP_29(m, c, __VA_ARGS__)
#define TK__PMAP_31(m, c, a, ...) m(c, a) TK__PMAP_30(m, c, __VA_ARGS__)
#define TK__PMAP_32(m, c, a, ...) m(c, a) TK__PMAP_31(m, c, __VA_ARGS__)

/* The check of TK_PRINT(fmt, args...) of event p:n. */
#define TK__EVENT_CHECK(p, n, fields, print)                                  \
	struct tk__print_fields_##p##_##n {                                  \
		char tk__f_;                                                 \
		TK__SEQ_NAMES(fields)                                        \
	};                                                                   \
	TK__PMAP(TK__PRINT_ARG_MUST_BE_A_FIELD_NAME,                         \
		 struct tk__print_fields_##p##_##n, TK__PRAW(print))

#endif /* TRACEKIT_STAGES_CHECK_H */
