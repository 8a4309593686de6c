/* SPDX-License-Identifier: MIT */
/*
 * tracekit/marker.h - one-line printf-style markers.
 *
 *   tk_mark(app_tick, "tick %d of %s", n, name);
 *
 * The name is provider_event (split at the first underscore: provider
 * "app", event "tick"; with no underscore the provider is "mark":
 * tk_mark(started, ...) is the event mark:started).  Each call site is an
 * event of its own.  Arguments are recorded in binary, typed by their C
 * type (integers, floating point, strings, pointers; at most 16); the
 * format is applied only when the trace is read, and checked against the
 * arguments when compiling, as printf's is (-Wformat, in -Wall).
 */
#ifndef TRACEKIT_MARKER_H
#define TRACEKIT_MARKER_H

#include "module.h"
#include "runtime.h"
#include "stages/seq.h"

/* The number of arguments after the format: __VA_ARGS__ is "fmt, args..."
 * so that no marker needs an empty variadic list (ISO C and C++ modes
 * keep the comma that GNU modes would drop). */
#define TK__NARGS(...)                                                        \
	TK__NARGS_I(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5,  \
		    4, 3, 2, 1, 0, ~)
#define TK__NARGS_I(_f, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12,   \
		    _13, _14, _15, _16, N, ...)                              \
	N
#define TK__FIRST(...) TK__FIRST_I(__VA_ARGS__, ~)
#define TK__FIRST_I(f, ...) f

/* m(index, arg) for each argument after the format. */
#define TK__MAP(m, ...) TK__CAT(TK__MAP_, TK__NARGS(__VA_ARGS__))(m, __VA_ARGS__)
#define TK__MAP_0(m, f)
#define TK__MAP_1(m, f, a) m(0, a)
#define TK__MAP_2(m, f, a, b) TK__MAP_1(m, f, a) m(1, b)
#define TK__MAP_3(m, f, a, b, c) TK__MAP_2(m, f, a, b) m(2, c)
#define TK__MAP_4(m, f, a, b, c, d) TK__MAP_3(m, f, a, b, c) m(3, d)
#define TK__MAP_5(m, f, a, b, c, d, e) TK__MAP_4(m, f, a, b, c, d) m(4, e)
#define TK__MAP_6(m, f, a, b, c, d, e, g) TK__MAP_5(m, f, a, b, c, d, e) m(5, g)
#define TK__MAP_7(m, f, a, b, c, d, e, g, h)                                  \
	TK__MAP_6(m, f, a, b, c, d, e, g) m(6, h)
#define TK__MAP_8(m, f, a, b, c, d, e, g, h, i)                               \
	TK__MAP_7(m, f, a, b, c, d, e, g, h) m(7, i)
#define TK__MAP_9(m, f, a, b, c, d, e, g, h, i, j)                            \
	TK__MAP_8(m, f, a, b, c, d, e, g, h, i) m(8, j)
#define TK__MAP_10(m, f, a, b, c, d, e, g, h, i, j, k)                        \
	TK__MAP_9(m, f, a, b, c, d, e, g, h, i, j) m(9, k)
#define TK__MAP_11(m, f, a, b, c, d, e, g, h, i, j, k, l)                     \
	TK__MAP_10(m, f, a, b, c, d, e, g, h, i, j, k) m(10, l)
#define TK__MAP_12(m, f, a, b, c, d, e, g, h, i, j, k, l, n)                  \
	TK__MAP_11(m, f, a, b, c, d, e, g, h, i, j, k, l) m(11, n)
#define TK__MAP_13(m, f, a, b, c, d, e, g, h, i, j, k, l, n, o)               \
	TK__MAP_12(m, f, a, b, c, d, e, g, h, i, j, k, l, n) m(12, o)
#define TK__MAP_14(m, f, a, b, c, d, e, g, h, i, j, k, l, n, o, q)            \
	TK__MAP_13(m, f, a, b, c, d, e, g, h, i, j, k, l, n, o) m(13, q)
#define TK__MAP_15(m, f, a, b, c, d, e, g, h, i, j, k, l, n, o, q, r)         \
	TK__MAP_14(m, f, a, b, c, d, e, g, h, i, j, k, l, n, o, q) m(14, r)
#define TK__MAP_16(m, f, a, b, c, d, e, g, h, i, j, k, l, n, o, q, r, t)      \
	TK__MAP_15(m, f, a, b, c, d, e, g, h, i, j, k, l, n, o, q, r) m(15, t)

#ifdef __cplusplus
#include <type_traits>
template <typename T> struct tk__mk_traits {
	typedef typename std::decay<T>::type D;
	static constexpr uint8_t kind =
		std::is_floating_point<D>::value ? TK_KIND_DOUBLE
		: std::is_integral<D>::value
			? (std::is_signed<D>::value ? TK_KIND_INT : TK_KIND_UINT)
		: std::is_same<D, char *>::value || std::is_same<D, const char *>::value
			? TK_KIND_STRING
			: TK_KIND_PTR;
	static constexpr uint8_t size =
		std::is_integral<D>::value ? sizeof(D) : (kind == TK_KIND_STRING ? 0 : 8);
};
#define TK__MK_KIND(a) tk__mk_traits<decltype(a)>::kind
#define TK__MK_SIZE(a) tk__mk_traits<decltype(a)>::size
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, long long x) { v->i = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, long x) { v->i = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, int x) { v->i = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, short x) { v->i = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, signed char x) { v->i = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, char x) { v->i = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, bool x) { v->u = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, unsigned long long x) { v->u = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, unsigned long x) { v->u = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, unsigned x) { v->u = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, unsigned short x) { v->u = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, unsigned char x) { v->u = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, double x) { v->d = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, float x) { v->d = x; }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, const char *x) { tk__value_str(v, x); }
TK__NOTRACE static inline void tk__mkv(struct tk_value *v, const void *x) { v->u = (uintptr_t)x; }
#define TK__MK_VALUE(v, a) tk__mkv((v), (a))
#else
#define TK__MK_KIND(a)                                                        \
	_Generic((a), char: TK_KIND_INT, signed char: TK_KIND_INT,           \
		 short: TK_KIND_INT, int: TK_KIND_INT, long: TK_KIND_INT,     \
		 long long: TK_KIND_INT, _Bool: TK_KIND_UINT,                 \
		 unsigned char: TK_KIND_UINT, unsigned short: TK_KIND_UINT,   \
		 unsigned: TK_KIND_UINT, unsigned long: TK_KIND_UINT,         \
		 unsigned long long: TK_KIND_UINT, float: TK_KIND_DOUBLE,     \
		 double: TK_KIND_DOUBLE, char *: TK_KIND_STRING,              \
		 const char *: TK_KIND_STRING, default: TK_KIND_PTR)
#define TK__MK_SIZE(a)                                                        \
	_Generic((a), float: 8, double: 8, char *: 0, const char *: 0,       \
		 default: (TK__MK_KIND(a) == TK_KIND_PTR ? 8 : sizeof(a)))
TK__NOTRACE static inline void tk__mkv_i(struct tk_value *v, long long x) { v->i = x; }
TK__NOTRACE static inline void tk__mkv_u(struct tk_value *v, unsigned long long x) { v->u = x; }
TK__NOTRACE static inline void tk__mkv_d(struct tk_value *v, double x) { v->d = x; }
TK__NOTRACE static inline void tk__mkv_p(struct tk_value *v, const void *x) { v->u = (uintptr_t)x; }
#define TK__MK_VALUE(v, a)                                                    \
	_Generic((a), char: tk__mkv_i, signed char: tk__mkv_i,               \
		 short: tk__mkv_i, int: tk__mkv_i, long: tk__mkv_i,           \
		 long long: tk__mkv_i, _Bool: tk__mkv_u,                      \
		 unsigned char: tk__mkv_u, unsigned short: tk__mkv_u,         \
		 unsigned: tk__mkv_u, unsigned long: tk__mkv_u,               \
		 unsigned long long: tk__mkv_u, float: tk__mkv_d,             \
		 double: tk__mkv_d, char *: tk__value_str,                    \
		 const char *: tk__value_str, default: tk__mkv_p)((v), (a))
#endif

/* Never called: its format attribute has the compiler check the format
 * against the arguments, as for printf ("%s" given an int warns). */
TK__NOTRACE static inline void tk__mark_printf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), unused));
TK__NOTRACE static inline void tk__mark_printf(const char *fmt, ...)
{
	(void)fmt;
}

#define TK__MK_FIELD(i, a) { "a" #i, TK__MK_KIND(a), TK__MK_SIZE(a), 0, 0 },
#define TK__MK_SET(i, a) TK__MK_VALUE(&tk__mv[i], a);

/**
 * tk_mark() - record a printf-style marker.
 * @name: provider_event, a C identifier ("app_tick": provider "app", event
 *	"tick"; without an underscore the provider is "mark").
 * @...: a printf format, a string literal, then at most 16 arguments:
 *	integers, floating point, strings (char *) or pointers.
 *
 * Each call site is an event of its own, off until enabled like any other.
 * The arguments are recorded in binary, by their C types; the format is
 * applied only when the trace is read.
 *
 * Context: any thread.  Recording never blocks and is safe in a signal
 * handler (an event that interrupts another of the same thread is counted
 * as lost); probes run as they are written.
 */
#define tk_mark(name, ...)                                                    \
	do {                                                                 \
		static struct tk_event tk__mk_ev;                            \
		enum { tk__mk_n = TK__NARGS(__VA_ARGS__) };                  \
		static const struct {                                        \
			struct tk_desc_head head;                            \
			struct tk_field_desc field[tk__mk_n];                \
			char provider[1];                                    \
			char evname[sizeof(#name)];                          \
			char fmtstr[sizeof(TK__FIRST(__VA_ARGS__))];        \
			char args[1];                                        \
		} __attribute__((aligned(8))) tk__mk_desc                    \
			__attribute__((section("tk_meta"), used, aligned(8))) = { \
				{ TK_DESC_MAGIC, TK_DESC_VERSION, tk__mk_n,  \
				  sizeof(tk__mk_desc), TK_DESC_MARKER,       \
				  (uint16_t)(sizeof(struct tk_desc_head) +   \
					     tk__mk_n *                      \
						     sizeof(struct tk_field_desc)), \
				  (uint16_t)(sizeof(struct tk_desc_head) +   \
					     tk__mk_n *                      \
						     sizeof(struct tk_field_desc) + 1), \
				  (uint16_t)(sizeof(struct tk_desc_head) +   \
					     tk__mk_n *                      \
						     sizeof(struct tk_field_desc) + 1 + \
					     sizeof(#name)),                 \
				  (uint16_t)(sizeof(struct tk_desc_head) +   \
					     tk__mk_n *                      \
						     sizeof(struct tk_field_desc) + 1 + \
					     sizeof(#name) +                 \
					     sizeof(TK__FIRST(__VA_ARGS__))),   \
				  &tk__mk_ev },                              \
				{ TK__MAP(TK__MK_FIELD, __VA_ARGS__) },    \
				"",                                          \
				#name,                                       \
				TK__FIRST(__VA_ARGS__),                      \
				"",                                          \
			};                                                   \
		if (0)                                                       \
			tk__mark_printf(__VA_ARGS__);                        \
		if (TK__UNLIKELY(TK__SITE(&tk__mk_ev))) {                    \
			struct tk_value tk__mv[tk__mk_n + 1];                \
			TK__MAP(TK__MK_SET, __VA_ARGS__)                   \
			tk__mark_record(&tk__mk_ev, tk__mv, tk__mk_n);       \
		}                                                            \
	} while (0)

#endif /* TRACEKIT_MARKER_H */
