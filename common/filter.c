/* SPDX-License-Identifier: MIT */
/*
 * filter.c - compile an ftrace-style filter once, evaluate it per event.
 *
 * tk_filter_compile() is a recursive descent parser (the grammar is in
 * filter.h) that checks every name, operator and constant against the
 * event's fields and emits a flat program for a one-register machine.  The
 * register holds the truth value of the last thing evaluated:
 *
 *   CMP f, k   reg = (value[f] <op> k)      one opcode per operator and kind
 *   NOT        reg = !reg
 *   JF  t      if (!reg) goto t             the && of a chain
 *   JT  t      if (reg)  goto t             the || of a chain
 *
 *   pid == 1 && (comm ~ "sh*" || !(len > 4))
 *
 *   0  CMP  pid  EQ 1
 *   1  JF   6
 *   2  CMP  comm PREFIX "sh"
 *   3  JT   6
 *   4  CMP  len  UGT 4
 *   5  NOT
 *   6  (end: the result is the register)
 *
 * Jumps only go forward and land on the end of the chain they belong to,
 * which gives && and || their short circuit.  tk_filter_match() is one
 * loop with a switch: no recursion, no stack, no allocation, and the
 * compiled filter is read-only, so any number of threads may run it.
 *
 * FIELD.function compares the name of the function at the field's
 * address (OP_FUNC): the namer given to tk_filter_compile_named() names
 * it when matching, and the name is compared as a string is.
 *
 * Each comparison is resolved when compiling: the opcode already says
 * signed, unsigned or double, and a glob is sorted into exact, prefix,
 * suffix, substring or full glob (as the kernel does), so the common
 * patterns never run the general matcher.
 *
 * Parsing recurses only on parentheses, whose depth is limited, and the
 * expression's length is limited too, so no input can exhaust the stack.
 * Every instruction consumes at least one character of the expression of
 * its own, and no string constant is longer than its quoted form, so both
 * the program and the string pool are sized from the expression's length
 * before parsing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem, strtod_l */
#endif
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

#define FLT_LEN_MAX 4096  /* characters in an expression */
#define FLT_DEPTH_MAX 64  /* nested parentheses */
#define FLT_QUOTE_MAX 32  /* characters of a subject quoted in a message */
#define FLT_NO_JUMP UINT32_MAX

enum flt_op {
	OP_NOT,
	OP_JF,
	OP_JT,
	OP_EQ,  /* the 64 bits of any integer kind */
	OP_NE,
	OP_BIT, /* (value & k) != 0 */
	OP_SLT, /* TK_KIND_INT */
	OP_SLE,
	OP_SGT,
	OP_SGE,
	OP_ULT, /* TK_KIND_UINT, TK_KIND_PTR */
	OP_ULE,
	OP_UGT,
	OP_UGE,
	OP_DEQ, /* TK_KIND_DOUBLE */
	OP_DNE,
	OP_DLT,
	OP_DLE,
	OP_DGT,
	OP_DGE,
	OP_STR, /* text kinds; how is in flt_insn.match */
	OP_FUNC, /* FIELD.function: the namer's name of the value, as OP_STR */
};

/* How OP_STR compares; a glob is sorted into one of these when compiled. */
enum flt_match {
	M_ALL,      /* "*" */
	M_EXACT,    /* "abc", and every == or != */
	M_PREFIX,   /* "abc*" */
	M_SUFFIX,   /* "*abc" */
	M_CONTAINS, /* "*abc*" */
	M_GLOB,     /* anything else with * ? [ or \ */
};

struct flt_insn {
	uint8_t op;       /* enum flt_op */
	uint8_t match;    /* OP_STR: enum flt_match */
	uint8_t nul_ends; /* OP_STR: the value ends at its first NUL (CHARS) */
	uint8_t negate;   /* OP_STR: != */
	uint32_t arg;     /* field index, or jump target */
	union {
		int64_t i;
		uint64_t u;
		double d;
		struct {
			uint32_t off; /* in the string pool */
			uint32_t len;
		} s;
	} k;
};

struct tk_filter {
	const char *text; /* the expression, after the pool */
	const char *pool; /* string constants, after the program */
	tk_filter_namer *namer; /* OP_FUNC */
	void *namer_ctx;
	uint32_t ninsn;
	struct flt_insn insn[];
};

struct flt_parser {
	const char *expr;
	const char *p; /* next character */
	const struct tk_field_desc *fields;
	unsigned nfields;
	tk_filter_namer *namer; /* NULL: FIELD.function is refused */
	struct flt_insn *insn;
	uint32_t ninsn, insn_cap;
	char *pool;
	uint32_t npool, pool_cap;
	int depth;
	const char *prev; /* the last connective, for "after '&&'" */
	size_t prev_len;
	locale_t c_locale; /* made on the first double constant */
	struct tk_filter_error *err;
};

enum flt_class {
	CLASS_INT,    /* TK_KIND_INT */
	CLASS_UINT,   /* TK_KIND_UINT, TK_KIND_PTR */
	CLASS_DOUBLE,
	CLASS_TEXT,   /* TK_KIND_STRING, _CHARS, _BYTES */
	CLASS_NONE,   /* a kind this file does not know */
};

enum flt_cmp { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_BIT, CMP_GLOB };

static const struct {
	const char *text;
	enum flt_cmp cmp;
} flt_ops[] = {
	{ "==", CMP_EQ }, { "!=", CMP_NE }, { "<", CMP_LT }, { "<=", CMP_LE },
	{ ">", CMP_GT },  { ">=", CMP_GE }, { "&", CMP_BIT }, { "~", CMP_GLOB },
};

/* Characters tested with these are ASCII whatever the locale. */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static bool is_op_char(char c)
{
	return c && strchr("=!<>~&|", c);
}

/* Ends an unquoted value: whitespace, a parenthesis, a connective, a quote. */
static bool ends_word(char c)
{
	return !c || is_space(c) || strchr("()&|'\"", c);
}

static bool is_print(char c)
{
	return c >= 0x20 && c < 0x7f;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static void skip_space(struct flt_parser *ps)
{
	while (is_space(*ps->p))
		ps->p++;
}

/*
 * Write @s[0..n) into @buf in single quotes, for a message: at most
 * FLT_QUOTE_MAX characters, then "...", and '?' for unprintable bytes.
 */
static const char *quote(char *buf, size_t size, const char *s, size_t n)
{
	size_t i, o = 0;

	buf[o++] = '\'';
	for (i = 0; i < n && i < FLT_QUOTE_MAX && o + 6 < size; i++)
		buf[o++] = is_print(s[i]) ? s[i] : '?';
	if (i < n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o++] = '\'';
	buf[o] = '\0';
	return buf;
}

/* The token at @p (not the end), quoted, or "a string". */
static const char *describe(char *buf, size_t size, const char *p)
{
	size_t n = 1;

	if (*p == '"' || *p == '\'')
		return "a string";
	if (is_op_char(*p)) {
		while (is_op_char(p[n]))
			n++;
	} else if (*p == '(' || *p == ')') {
		n = 1;
	} else if (is_print(*p)) {
		while (!ends_word(p[n]) && !is_op_char(p[n]) && is_print(p[n]))
			n++;
	} else {
		snprintf(buf, size, "byte 0x%02x", (unsigned char)*p);
		return buf;
	}
	return quote(buf, size, p, n);
}

static int fail(struct flt_parser *ps, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Record an error at @at (NULL: no column) and return -EINVAL. */
static int fail(struct flt_parser *ps, const char *at, const char *fmt, ...)
{
	va_list ap;

	ps->err->column = at ? (int)(at - ps->expr) + 1 : 0;
	va_start(ap, fmt);
	vsnprintf(ps->err->message, sizeof(ps->err->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A new zeroed instruction, or NULL after setting the error. */
static struct flt_insn *emit(struct flt_parser *ps)
{
	struct flt_insn *in;

	/* Cannot happen (see the top of the file); refuse rather than trust. */
	if (ps->ninsn == ps->insn_cap) {
		fail(ps, ps->p, "filter too complex");
		return NULL;
	}
	in = &ps->insn[ps->ninsn++];
	memset(in, 0, sizeof(*in));
	return in;
}

/*
 * Emit a jump whose target is not known yet.  The pending jumps of one
 * chain are linked through their arg fields; patch_jumps() resolves them.
 */
static int emit_jump(struct flt_parser *ps, enum flt_op op, uint32_t *chain)
{
	struct flt_insn *in = emit(ps);

	if (!in)
		return -EINVAL;
	in->op = op;
	in->arg = *chain;
	*chain = ps->ninsn - 1;
	return 0;
}

static void patch_jumps(struct flt_parser *ps, uint32_t chain)
{
	while (chain != FLT_NO_JUMP) {
		uint32_t next = ps->insn[chain].arg;

		ps->insn[chain].arg = ps->ninsn;
		chain = next;
	}
}

static enum flt_class kind_class(uint8_t kind)
{
	switch (kind) {
	case TK_KIND_INT:
		return CLASS_INT;
	case TK_KIND_UINT:
	case TK_KIND_PTR:
		return CLASS_UINT;
	case TK_KIND_DOUBLE:
		return CLASS_DOUBLE;
	case TK_KIND_CHARS:
	case TK_KIND_STRING:
	case TK_KIND_BYTES:
		return CLASS_TEXT;
	}
	return CLASS_NONE;
}

/* "a number", as in "'len' is a number". */
static const char *kind_noun(uint8_t kind)
{
	switch (kind) {
	case TK_KIND_PTR:
		return "a pointer";
	case TK_KIND_DOUBLE:
		return "a double";
	case TK_KIND_BYTES:
		return "a byte array";
	case TK_KIND_CHARS:
	case TK_KIND_STRING:
		return "a string";
	}
	return "a number";
}

static size_t field_name_len(const struct tk_field_desc *f)
{
	return strnlen(f->name, sizeof(f->name));
}

/*
 * Optimal string alignment distance (edits, with swapped neighbours as one
 * edit), ignoring case, between @a and a field name @b; @b is never longer
 * than TK_FIELD_NAME_MAX.
 */
static unsigned edit_distance(const char *a, size_t n, const char *b, size_t m)
{
	unsigned rows[3][TK_FIELD_NAME_MAX + 1];
	unsigned *pp = rows[0], *prev = rows[1], *cur = rows[2], *t;
	size_t i, j;

	for (j = 0; j <= m; j++)
		prev[j] = j;
	for (i = 1; i <= n; i++) {
		cur[0] = i;
		for (j = 1; j <= m; j++) {
			unsigned cost = lower(a[i - 1]) != lower(b[j - 1]);
			unsigned d = prev[j - 1] + cost;

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) && pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1;
			cur[j] = d;
		}
		t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[m];
}

/* The field most like @name[0..n), or NULL if none is close. */
static const char *closest_field(const struct flt_parser *ps, const char *name,
				 size_t n)
{
	unsigned best = n < 4 ? 1 : 2, i;
	const char *found = NULL;

	if (n > TK_FIELD_NAME_MAX + best)
		return NULL;
	for (i = 0; i < ps->nfields; i++) {
		const char *f = ps->fields[i].name;
		size_t m = field_name_len(&ps->fields[i]);
		unsigned d;

		if (m + best < n || n + best < m)
			continue;
		d = edit_distance(name, n, f, m);
		/* Replacing every character is no suggestion. */
		if (d >= m || d >= n)
			continue;
		if (d < best || (d == best && !found)) {
			best = d;
			found = f;
		}
	}
	return found;
}

/* The index of the field @name[0..n), or -EINVAL. */
static int find_field(struct flt_parser *ps, const char *name, size_t n)
{
	char q[64];
	const char *near;
	unsigned i;

	for (i = 0; i < ps->nfields; i++) {
		if (field_name_len(&ps->fields[i]) == n &&
		    !memcmp(ps->fields[i].name, name, n))
			return i;
	}
	near = closest_field(ps, name, n);
	if (near)
		return fail(ps, name, "unknown field %s (did you mean '%.*s'?)",
			    quote(q, sizeof(q), name, n), TK_FIELD_NAME_MAX,
			    near);
	return fail(ps, name, "unknown field %s", quote(q, sizeof(q), name, n));
}

enum { NUM_OK, NUM_BAD, NUM_RANGE };

/*
 * Read an integer: decimal, 0x hex or 0 octal, with an optional leading
 * minus.  Stores its magnitude and sign; NUM_RANGE if the magnitude does
 * not fit 64 bits.
 */
static int parse_integer(const char *s, size_t n, bool *neg, uint64_t *mag)
{
	unsigned base = 10;
	bool over = false;
	uint64_t v = 0;
	size_t i = 0;

	*neg = n > 0 && s[0] == '-';
	if (*neg)
		i++;
	if (i == n)
		return NUM_BAD;
	if (s[i] == '0' && i + 1 < n) {
		if (s[i + 1] == 'x' || s[i + 1] == 'X') {
			base = 16;
			i += 2;
			if (i == n)
				return NUM_BAD;
		} else {
			base = 8;
			i++;
		}
	}
	for (; i < n; i++) {
		char c = lower(s[i]);
		unsigned d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			return NUM_BAD;
		if (d >= base)
			return NUM_BAD;
		if (v > (UINT64_MAX - d) / base)
			over = true;
		v = v * base + d;
	}
	*mag = v;
	return over ? NUM_RANGE : NUM_OK;
}

/* -?digits[.digits][e[+-]digits], with at least one digit before the e. */
static bool is_decimal(const char *s, size_t n)
{
	size_t i = 0, digits = 0;

	if (i < n && s[i] == '-')
		i++;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
	if (!digits)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i == n || s[i] < '0' || s[i] > '9')
			return false;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return i == n;
}

static bool is_hex(const char *s, size_t n)
{
	size_t i = n > 0 && s[0] == '-';

	return n > i + 1 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
}

/* The constant @s[0..n) for a double field. */
static int parse_double(struct flt_parser *ps, const char *s, size_t n,
			double *out)
{
	char q[64];
	char *end;
	uint64_t mag;
	bool neg;
	double d;

	if (is_hex(s, n)) {
		switch (parse_integer(s, n, &neg, &mag)) {
		case NUM_BAD:
			break;
		case NUM_RANGE:
			return fail(ps, s, "number %s out of range",
				    quote(q, sizeof(q), s, n));
		default:
			*out = neg ? -(double)mag : (double)mag;
			return 0;
		}
	}
	if (!is_decimal(s, n))
		return fail(ps, s, "invalid number %s", quote(q, sizeof(q), s, n));
	/* The expression's decimal point, whatever the program's locale. */
	if (!ps->c_locale) {
		ps->c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
		if (!ps->c_locale)
			return -ENOMEM;
	}
	d = strtod_l(s, &end, ps->c_locale);
	if (end != s + n)
		return fail(ps, s, "invalid number %s", quote(q, sizeof(q), s, n));
	if (isinf(d))
		return fail(ps, s, "number %s out of range",
			    quote(q, sizeof(q), s, n));
	*out = d;
	return 0;
}

/*
 * The constant @s[0..n) for an integer field of @class.  A bit test (&)
 * takes any 64-bit pattern, so masks such as 0x8000000000000000 or -1 work
 * on signed and unsigned fields alike.
 */
static int parse_int_value(struct flt_parser *ps, const char *s, size_t n,
			   enum flt_class class, enum flt_cmp cmp,
			   const char *field, struct flt_insn *in)
{
	char q[64];
	uint64_t mag;
	bool neg;

	switch (parse_integer(s, n, &neg, &mag)) {
	case NUM_BAD:
		return fail(ps, s, "invalid integer %s", quote(q, sizeof(q), s, n));
	case NUM_RANGE:
		return fail(ps, s, "integer %s out of range",
			    quote(q, sizeof(q), s, n));
	}
	if (neg && mag > (uint64_t)INT64_MAX + 1)
		return fail(ps, s, "integer %s out of range",
			    quote(q, sizeof(q), s, n));
	if (cmp == CMP_BIT || class == CLASS_UINT) {
		if (neg && mag && cmp != CMP_BIT)
			return fail(ps, s,
				    "negative integer %s for unsigned field '%.*s'",
				    quote(q, sizeof(q), s, n),
				    TK_FIELD_NAME_MAX, field);
		in->k.u = neg ? 0 - mag : mag;
		return 0;
	}
	if (!neg && mag > (uint64_t)INT64_MAX)
		return fail(ps, s, "integer %s out of range",
			    quote(q, sizeof(q), s, n));
	/* Two's complement, without the overflow of negating INT64_MIN. */
	in->k.i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	return 0;
}

/*
 * Read a quoted string at ps->p into the pool.  A backslash escapes the
 * quote and itself; before anything else it stays, so that a glob sees
 * "\*" as a literal star.
 */
static int parse_string(struct flt_parser *ps, uint32_t *off, uint32_t *len)
{
	const char *open = ps->p;
	char q = *ps->p++;

	*off = ps->npool;
	for (;;) {
		char c = *ps->p;

		if (!c)
			return fail(ps, open, "unterminated string");
		ps->p++;
		if (c == q)
			break;
		if (c == '\\' && (*ps->p == q || *ps->p == '\\'))
			c = *ps->p++;
		if (ps->npool == ps->pool_cap)
			return fail(ps, open, "filter too complex");
		ps->pool[ps->npool++] = c;
	}
	*len = ps->npool - *off;
	return 0;
}

static bool is_glob_meta(char c)
{
	return c == '*' || c == '?' || c == '[' || c == '\\';
}

/* Sort the glob in the pool at in->k.s into the cheapest match that does. */
static void classify_glob(const struct flt_parser *ps, struct flt_insn *in)
{
	const char *pat = ps->pool + in->k.s.off;
	uint32_t n = in->k.s.len, lead = 0, trail = 0, i;

	while (lead < n && pat[lead] == '*')
		lead++;
	if (lead == n) {
		in->match = lead ? M_ALL : M_EXACT;
		return;
	}
	while (pat[n - 1 - trail] == '*')
		trail++;
	/* A backslash before the trailing stars would make this a glob. */
	for (i = lead; i < n - trail; i++) {
		if (is_glob_meta(pat[i])) {
			in->match = M_GLOB;
			return;
		}
	}
	if (lead && trail)
		in->match = M_CONTAINS;
	else if (lead)
		in->match = M_SUFFIX;
	else if (trail)
		in->match = M_PREFIX;
	else
		in->match = M_EXACT;
	in->k.s.off += lead;
	in->k.s.len = n - lead - trail;
}

static const uint8_t int_ops[3][7] = {
	/*	       EQ      NE      LT      LE      GT      GE      BIT */
	[CLASS_INT] = { OP_EQ, OP_NE, OP_SLT, OP_SLE, OP_SGT, OP_SGE, OP_BIT },
	[CLASS_UINT] = { OP_EQ, OP_NE, OP_ULT, OP_ULE, OP_UGT, OP_UGE, OP_BIT },
	[CLASS_DOUBLE] = { OP_DEQ, OP_DNE, OP_DLT, OP_DLE, OP_DGT, OP_DGE, 0 },
};

/* The value after the operator @op of a comparison on @field. */
static int parse_value(struct flt_parser *ps, const struct tk_field_desc *field,
		       const char *op, size_t op_len, enum flt_cmp cmp,
		       bool by_name, struct flt_insn *in)
{
	enum flt_class class = by_name ? CLASS_TEXT : kind_class(field->kind);
	const char *v = ps->p;
	char q[64], g[64];
	size_t n = 0;

	if (*v == '"' || *v == '\'') {
		if (class != CLASS_TEXT)
			return fail(ps, v,
				    "expected a number for '%.*s', got a string",
				    TK_FIELD_NAME_MAX, field->name);
		in->op = OP_STR;
		in->nul_ends = field->kind == TK_KIND_CHARS;
		in->negate = cmp == CMP_NE;
		in->match = M_EXACT;
		if (parse_string(ps, &in->k.s.off, &in->k.s.len))
			return -EINVAL;
		if (cmp == CMP_GLOB)
			classify_glob(ps, in);
		return 0;
	}
	while (!ends_word(v[n]))
		n++;
	if (!n) {
		if (!*v)
			return fail(ps, v, "expected a value after %s",
				    quote(q, sizeof(q), op, op_len));
		return fail(ps, v, "expected a value after %s, got %s",
			    quote(q, sizeof(q), op, op_len),
			    describe(g, sizeof(g), v));
	}
	ps->p += n;
	if (class == CLASS_TEXT) {
		/* The kernel takes an unquoted word as a string; so do we. */
		if (n > ps->pool_cap - ps->npool)
			return fail(ps, v, "filter too complex");
		in->op = OP_STR;
		in->nul_ends = field->kind == TK_KIND_CHARS;
		in->negate = cmp == CMP_NE;
		in->match = M_EXACT;
		in->k.s.off = ps->npool;
		in->k.s.len = n;
		memcpy(ps->pool + ps->npool, v, n);
		ps->npool += n;
		if (cmp == CMP_GLOB)
			classify_glob(ps, in);
		return 0;
	}
	in->op = int_ops[class][cmp];
	if (class == CLASS_DOUBLE)
		return parse_double(ps, v, n, &in->k.d);
	return parse_int_value(ps, v, n, class, cmp, field->name, in);
}

/*
 * The ".function" after a field's name at ps->p: the field must hold an
 * address (a pointer, or a 64-bit integer as the kernel's "unsigned long
 * call_site") and a namer must be there to name it.
 */
static int parse_function_postfix(struct flt_parser *ps,
				  const struct tk_field_desc *field)
{
	const char *dot = ps->p++;
	char q[64];

	while (is_ident(*ps->p))
		ps->p++;
	if (ps->p - dot != 9 || memcmp(dot, ".function", 9))
		return fail(ps, dot, "unknown postfix %s of '%.*s' (filters know '.function')",
			    quote(q, sizeof(q), dot, ps->p - dot), TK_FIELD_NAME_MAX,
			    field->name);
	if (field->kind != TK_KIND_PTR &&
	    !((field->kind == TK_KIND_INT || field->kind == TK_KIND_UINT) &&
	      field->size == 8))
		return fail(ps, dot, "postfix '.function' needs an address, '%.*s' is %s",
			    TK_FIELD_NAME_MAX, field->name,
			    field->kind == TK_KIND_INT || field->kind == TK_KIND_UINT
				    ? "a number narrower than 64 bits"
				    : kind_noun(field->kind));
	if (!ps->namer)
		return fail(ps, dot, "postfix '.function' is not available in this filter");
	return 0;
}

/* compare := FIELD OP VALUE | FIELD ".function" NAMEOP NAME */
static int parse_compare(struct flt_parser *ps)
{
	const struct tk_field_desc *field;
	const char *name = ps->p, *op, *needs = NULL;
	char q[64], g[64];
	enum flt_class class;
	struct flt_insn *in;
	size_t n, op_len, i;
	enum flt_cmp cmp;
	bool by_name;
	int index, ret;

	if (!is_ident_start(*name)) {
		if (!*name && ps->prev)
			return fail(ps, name, "expected a field name after %s",
				    quote(q, sizeof(q), ps->prev, ps->prev_len));
		return fail(ps, name, "expected a field name, got %s",
			    describe(g, sizeof(g), name));
	}
	while (is_ident(*ps->p))
		ps->p++;
	n = ps->p - name;
	index = find_field(ps, name, n);
	if (index < 0)
		return index;
	field = &ps->fields[index];
	by_name = *ps->p == '.';
	if (by_name && parse_function_postfix(ps, field) < 0)
		return -EINVAL;

	skip_space(ps);
	op = ps->p;
	while (is_op_char(*ps->p))
		ps->p++;
	op_len = ps->p - op;
	for (i = 0; i < sizeof(flt_ops) / sizeof(flt_ops[0]); i++)
		if (strlen(flt_ops[i].text) == op_len &&
		    !memcmp(flt_ops[i].text, op, op_len))
			break;
	if (i == sizeof(flt_ops) / sizeof(flt_ops[0])) {
		quote(q, sizeof(q), name, n);
		if (!*op)
			return fail(ps, op, "expected an operator after %s", q);
		if (!op_len || (op_len == 2 && (!memcmp(op, "&&", 2) ||
						!memcmp(op, "||", 2))))
			return fail(ps, op, "expected an operator after %s, got %s",
				    q, describe(g, sizeof(g), op));
		if (op_len == 1 && *op == '=')
			return fail(ps, op,
				    "unknown operator '=' (did you mean '=='?)");
		return fail(ps, op, "unknown operator %s",
			    quote(g, sizeof(g), op, op_len));
	}
	cmp = flt_ops[i].cmp;

	class = kind_class(field->kind);
	if (!by_name && ps->namer && field->kind == TK_KIND_PTR) {
		const char *v = ps->p;

		while (is_space(*v))
			v++;
		by_name = *v == '"' || *v == '\'';
	}
	if (by_name && cmp != CMP_EQ && cmp != CMP_NE && cmp != CMP_GLOB)
		return fail(ps, op,
			    "operator %s does not compare a function's name: use '==', '!=' or '~'",
			    quote(g, sizeof(g), op, op_len));
	if (class == CLASS_NONE)
		return fail(ps, name, "field '%.*s' has unknown kind %u",
			    TK_FIELD_NAME_MAX, field->name, field->kind);
	if (by_name)
		needs = NULL;
	else if (cmp == CMP_GLOB && class != CLASS_TEXT)
		needs = "a string";
	else if (cmp == CMP_BIT && class != CLASS_INT && class != CLASS_UINT)
		needs = "an integer";
	else if (class == CLASS_TEXT && cmp != CMP_EQ && cmp != CMP_NE &&
		 cmp != CMP_GLOB)
		needs = "a number";
	if (needs)
		return fail(ps, op, "operator %s needs %s field, '%.*s' is %s",
			    quote(g, sizeof(g), op, op_len), needs,
			    TK_FIELD_NAME_MAX, field->name,
			    kind_noun(field->kind));

	in = emit(ps);
	if (!in)
		return -EINVAL;
	in->arg = index;
	skip_space(ps);
	ret = parse_value(ps, field, op, op_len, cmp, by_name, in);
	if (!ret && by_name)
		in->op = OP_FUNC;
	return ret;
}

static int parse_or(struct flt_parser *ps);

/* unary := "!" unary | "(" expr ")" | compare */
static int parse_unary(struct flt_parser *ps)
{
	unsigned nots = 0;
	struct flt_insn *in;
	char g[64];
	int ret;

	skip_space(ps);
	/* Iterative, so that "!!!!...x == 1" cannot recurse deeply. */
	while (ps->p[0] == '!' && ps->p[1] != '=') {
		ps->prev = ps->p++;
		ps->prev_len = 1;
		nots++;
		skip_space(ps);
	}
	if (*ps->p == '(') {
		const char *open = ps->p;

		if (ps->depth == FLT_DEPTH_MAX)
			return fail(ps, open, "parentheses nested deeper than %d",
				    FLT_DEPTH_MAX);
		ps->depth++;
		ps->prev = ps->p++;
		ps->prev_len = 1;
		skip_space(ps);
		if (*ps->p == ')')
			return fail(ps, open, "empty parentheses");
		ret = parse_or(ps);
		if (ret)
			return ret;
		skip_space(ps);
		if (!*ps->p)
			return fail(ps, open, "unbalanced '('");
		if (*ps->p != ')')
			return fail(ps, ps->p, "expected '&&', '||' or ')', got %s",
				    describe(g, sizeof(g), ps->p));
		ps->p++;
		ps->depth--;
	} else {
		ret = parse_compare(ps);
		if (ret)
			return ret;
	}
	if (nots & 1) {
		in = emit(ps);
		if (!in)
			return -EINVAL;
		in->op = OP_NOT;
	}
	return 0;
}

/* A chain of @next joined by @conn ("&&" or "||"), short-circuited by @jump. */
static int parse_chain(struct flt_parser *ps, int (*next)(struct flt_parser *),
		       const char *conn, enum flt_op jump)
{
	uint32_t chain = FLT_NO_JUMP;
	int ret;

	for (;;) {
		ret = next(ps);
		if (ret)
			return ret;
		skip_space(ps);
		if (ps->p[0] != conn[0] || ps->p[1] != conn[1])
			break;
		ps->prev = ps->p;
		ps->prev_len = 2;
		ps->p += 2;
		ret = emit_jump(ps, jump, &chain);
		if (ret)
			return ret;
	}
	patch_jumps(ps, chain);
	return 0;
}

static int parse_and(struct flt_parser *ps)
{
	return parse_chain(ps, parse_unary, "&&", OP_JF);
}

static int parse_or(struct flt_parser *ps)
{
	return parse_chain(ps, parse_and, "||", OP_JT);
}

int tk_filter_compile(const char *expr, const struct tk_field_desc *fields,
		      unsigned nfields, struct tk_filter **out,
		      struct tk_filter_error *err)
{
	return tk_filter_compile_named(expr, fields, nfields, NULL, NULL, out, err);
}

int tk_filter_compile_named(const char *expr, const struct tk_field_desc *fields,
			    unsigned nfields, tk_filter_namer *namer, void *ctx,
			    struct tk_filter **out, struct tk_filter_error *err)
{
	struct tk_filter_error dummy;
	struct flt_parser ps = { 0 };
	struct tk_filter *f;
	char g[64];
	size_t len;
	char *mem;
	int ret;

	if (!err)
		err = &dummy;
	err->column = 0;
	err->message[0] = '\0';
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!expr)
		expr = "";
	ps.expr = ps.p = expr;
	ps.fields = fields;
	ps.nfields = fields ? nfields : 0;
	ps.namer = namer;
	ps.err = err;

	len = strnlen(expr, FLT_LEN_MAX + 1);
	if (len > FLT_LEN_MAX)
		return fail(&ps, expr + FLT_LEN_MAX,
			    "filter longer than %d characters", FLT_LEN_MAX);
	skip_space(&ps);
	if (!*ps.p)
		return fail(&ps, NULL, "empty filter");

	ps.insn_cap = len;
	ps.pool_cap = len;
	ps.insn = malloc(len * sizeof(*ps.insn));
	ps.pool = malloc(len);
	ret = -ENOMEM;
	if (!ps.insn || !ps.pool)
		goto out;

	ret = parse_or(&ps);
	if (ret)
		goto out;
	skip_space(&ps);
	if (*ps.p == ')') {
		ret = fail(&ps, ps.p, "unbalanced ')'");
		goto out;
	}
	if (*ps.p) {
		ret = fail(&ps, ps.p, "expected '&&' or '||', got %s",
			   describe(g, sizeof(g), ps.p));
		goto out;
	}

	ret = -ENOMEM;
	f = malloc(sizeof(*f) + ps.ninsn * sizeof(f->insn[0]) + ps.npool +
		   len + 1);
	if (!f)
		goto out;
	f->ninsn = ps.ninsn;
	f->namer = namer;
	f->namer_ctx = ctx;
	memcpy(f->insn, ps.insn, ps.ninsn * sizeof(f->insn[0]));
	mem = (char *)&f->insn[ps.ninsn];
	memcpy(mem, ps.pool, ps.npool);
	f->pool = mem;
	mem += ps.npool;
	memcpy(mem, expr, len + 1);
	f->text = mem;
	*out = f;
	ret = 0;
out:
	if (ps.c_locale)
		freelocale(ps.c_locale);
	free(ps.insn);
	free(ps.pool);
	return ret;
}

/*
 * Match the class at @pat[0..n), which starts after its '[', against @c.
 * Returns the length of the class through its ']', or 0 if there is no ']'
 * (then the '[' is an ordinary character).  "[!...]" (or "[^...]")
 * inverts; a ']' first in the class is a member; "a-z" is a range.
 */
static size_t glob_class(const char *pat, size_t n, unsigned char c,
			 bool *hit)
{
	size_t i = 0, first;
	bool inv = false;

	*hit = false;
	if (i < n && (pat[i] == '!' || pat[i] == '^')) {
		inv = true;
		i++;
	}
	first = i;
	for (; i < n; i++) {
		unsigned char lo = pat[i], hi = lo;

		if (lo == ']' && i > first) {
			*hit ^= inv;
			return i + 1;
		}
		if (i + 2 < n && pat[i + 1] == '-' && pat[i + 2] != ']') {
			hi = pat[i + 2];
			i += 2;
		}
		if (c >= lo && c <= hi)
			*hit = true;
	}
	return 0;
}

/*
 * Shell-style match of all of @s[0..n) against @pat[0..m): * any run, ?
 * any one byte, [...] a class, \ quotes the next character.  When a
 * character fails after a '*', the '*' takes one more byte and matching
 * resumes after it; only the last '*' needs retrying, so this is
 * O(n * m) at worst and never recurses.
 */
static bool glob_match(const char *pat, size_t m, const char *s, size_t n)
{
	size_t pi = 0, si = 0, star = SIZE_MAX, star_si = 0;

	while (si < n) {
		if (pi < m) {
			unsigned char c = pat[pi];
			size_t w = 1;
			bool hit;

			if (c == '*') {
				star = ++pi;
				star_si = si;
				continue;
			}
			if (c == '?') {
				pi++;
				si++;
				continue;
			}
			if (c == '[') {
				size_t k = glob_class(pat + pi + 1, m - pi - 1,
						      s[si], &hit);

				if (k) {
					if (hit) {
						pi += k + 1;
						si++;
						continue;
					}
					goto retry;
				}
			} else if (c == '\\' && pi + 1 < m) {
				c = pat[pi + 1];
				w = 2;
			}
			if ((unsigned char)s[si] == c) {
				pi += w;
				si++;
				continue;
			}
		}
retry:
		if (star == SIZE_MAX)
			return false;
		pi = star;
		si = ++star_si;
	}
	while (pi < m && pat[pi] == '*')
		pi++;
	return pi == m;
}

static bool match_text(const struct flt_insn *in, const char *pool,
		       const struct tk_value *v)
{
	const char *s = v->str ? v->str : "";
	const char *pat = pool + in->k.s.off;
	size_t n = v->str ? v->len : 0, m = in->k.s.len;
	bool r = false;

	if (in->nul_ends) {
		const char *nul = memchr(s, '\0', n);

		if (nul)
			n = nul - s;
	}
	switch (in->match) {
	case M_ALL:
		r = true;
		break;
	case M_EXACT:
		r = n == m && !memcmp(s, pat, m);
		break;
	case M_PREFIX:
		r = n >= m && !memcmp(s, pat, m);
		break;
	case M_SUFFIX:
		r = n >= m && !memcmp(s + n - m, pat, m);
		break;
	case M_CONTAINS:
		r = memmem(s, n, pat, m) != NULL;
		break;
	case M_GLOB:
		r = glob_match(pat, m, s, n);
		break;
	}
	return r != in->negate;
}

bool tk_filter_match(const struct tk_filter *f, const struct tk_value *values)
{
	const struct flt_insn *in;
	bool reg = false;
	uint32_t pc = 0;

	if (!f)
		return true;
	while (pc < f->ninsn) {
		const struct tk_value *v;

		in = &f->insn[pc++];
		if (in->op == OP_NOT) {
			reg = !reg;
			continue;
		}
		if (in->op == OP_JF || in->op == OP_JT) {
			if (reg == (in->op == OP_JT))
				pc = in->arg;
			continue;
		}
		v = &values[in->arg];
		switch (in->op) {
		case OP_EQ:
			reg = v->u == in->k.u;
			break;
		case OP_NE:
			reg = v->u != in->k.u;
			break;
		case OP_BIT:
			reg = (v->u & in->k.u) != 0;
			break;
		case OP_SLT:
			reg = v->i < in->k.i;
			break;
		case OP_SLE:
			reg = v->i <= in->k.i;
			break;
		case OP_SGT:
			reg = v->i > in->k.i;
			break;
		case OP_SGE:
			reg = v->i >= in->k.i;
			break;
		case OP_ULT:
			reg = v->u < in->k.u;
			break;
		case OP_ULE:
			reg = v->u <= in->k.u;
			break;
		case OP_UGT:
			reg = v->u > in->k.u;
			break;
		case OP_UGE:
			reg = v->u >= in->k.u;
			break;
		case OP_DEQ:
			reg = v->d == in->k.d;
			break;
		case OP_DNE:
			reg = v->d != in->k.d;
			break;
		case OP_DLT:
			reg = v->d < in->k.d;
			break;
		case OP_DLE:
			reg = v->d <= in->k.d;
			break;
		case OP_DGT:
			reg = v->d > in->k.d;
			break;
		case OP_DGE:
			reg = v->d >= in->k.d;
			break;
		case OP_STR:
			reg = match_text(in, f->pool, v);
			break;
		case OP_FUNC: {
			const char *name = f->namer(f->namer_ctx, v->u);
			struct tk_value t = { .str = name,
					      .len = name ? (uint32_t)strlen(name) : 0 };

			reg = match_text(in, f->pool, &t);
			break;
		}
		default: /* the three above */
			break;
		}
	}
	return reg;
}

const char *tk_filter_text(const struct tk_filter *f)
{
	return f ? f->text : NULL;
}

void tk_filter_free(struct tk_filter *f)
{
	free(f);
}
