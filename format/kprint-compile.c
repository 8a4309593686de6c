/* SPDX-License-Identifier: MIT */
/*
 * kprint-compile.c - compile a kernel event's print fmt into steps
 * (kprint-compile.h), for the formats most events have:
 *
 *   "fd: 0x%08lx, buf: 0x%08lx", ((unsigned long)(REC->fd)), ...
 *   "comm=%s pid=%d", REC->comm, REC->pid
 *   "%d,%d %s", ((unsigned int) ((REC->dev) >> 20)), ..., __get_str(rwbs)
 *
 * A step is a literal piece, or one conversion of one argument: an
 * integer expression (fields, numbers, casts, shifts and bit operations)
 * or a string (a char array field or a __data_loc string).  Values are
 * computed as libtraceevent computes them (fields read zero-extended,
 * casts truncate and extend by the cast's type, the conversion's length
 * modifier then picks the C type printf gets), so the text is the same.
 * Anything else (%p, __print_flags, helper functions, signed fields
 * narrower than their conversion, ...) makes compilation fail and the
 * event is printed by libtraceevent.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include "kprint-compile.h"

#define MAX_STEPS 64
#define MAX_NODES 256

enum node_kind { N_FIELD, N_ATOM, N_CAST, N_OP };

struct node {
	enum node_kind kind;
	char op;        /* N_OP: '>' (>>), '<' (<<), '&', '|', '+', '-', '*', '^' */
	bool sign;      /* N_CAST: signed type; N_FIELD: field is signed */
	unsigned size;  /* N_FIELD / N_CAST: bytes */
	unsigned off;   /* N_FIELD */
	uint64_t value; /* N_ATOM */
	int left, right; /* node indexes (N_CAST uses left) */
};

enum step_kind { S_LIT, S_INT, S_STR_ARRAY, S_STR_LOC };

struct step {
	enum step_kind kind;
	const char *lit; /* S_LIT: into prog->text */
	unsigned lit_len;
	int expr;        /* S_INT: root node */
	unsigned off, size; /* S_STR_*: field */
	bool rel;        /* S_STR_LOC: __rel_loc */
	/* the conversion */
	char conv;       /* d i u x X o s */
	unsigned csize;  /* bytes of the C type printf gets: 1 2 4 8 */
	bool plain;      /* no flags but '0', no precision: formatted here */
	bool zero;
	unsigned width;
	char spec[24];   /* for snprintf otherwise */
};

struct tk_kprog {
	unsigned nsteps, nnodes;
	struct step steps[MAX_STEPS];
	struct node nodes[MAX_NODES];
	char *text; /* a copy of the format; literals point into it */
};

/* ------------------------------------------------------------ compile */

static int new_node(struct tk_kprog *p)
{
	if (p->nnodes >= MAX_NODES)
		return -1;
	memset(&p->nodes[p->nnodes], 0, sizeof(p->nodes[0]));
	return (int)p->nnodes++;
}

/* The C integer types a cast may name, with their size and sign. */
static bool cast_type(const char *t, unsigned *size, bool *sign)
{
	static const struct {
		const char *name;
		unsigned size;
		bool sign;
	} types[] = {
		{ "unsigned long", 8, false }, { "long", 8, true },
		{ "unsigned long long", 8, false }, { "long long", 8, true },
		{ "u64", 8, false }, { "s64", 8, true }, { "size_t", 8, false },
		{ "unsigned int", 4, false }, { "int", 4, true },
		{ "unsigned", 4, false }, { "u32", 4, false }, { "s32", 4, true },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(t, types[i].name)) {
			*size = types[i].size;
			*sign = types[i].sign;
			return true;
		}
	return false;
}

static bool parse_atom(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	while (*end == 'U' || *end == 'u' || *end == 'L' || *end == 'l')
		end++;
	return !errno && !*end;
}

static bool int_field(const struct tep_format_field *f)
{
	return f && f->offset >= 0 &&
	       !(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC |
			     TEP_FIELD_IS_STRING)) &&
	       (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8);
}

/* An integer expression; returns its node or -1. */
static int compile_expr(struct tk_kprog *p, struct tep_event *ev,
			struct tep_print_arg *a)
{
	int n = new_node(p);
	struct node *x;

	if (n < 0 || !a)
		return -1;
	x = &p->nodes[n];
	switch (a->type) {
	case TEP_PRINT_FIELD: {
		struct tep_format_field *f = a->field.field;

		if (!f)
			f = tep_find_any_field(ev, a->field.name);
		if (!int_field(f))
			return -1;
		x->kind = N_FIELD;
		x->off = (unsigned)f->offset;
		x->size = (unsigned)f->size;
		x->sign = f->flags & TEP_FIELD_IS_SIGNED;
		return n;
	}
	case TEP_PRINT_ATOM:
		x->kind = N_ATOM;
		return parse_atom(a->atom.atom, &x->value) ? n : -1;
	case TEP_PRINT_TYPE: {
		unsigned size;
		bool sign;
		int l;

		if (!cast_type(a->typecast.type, &size, &sign))
			return -1;
		l = compile_expr(p, ev, a->typecast.item);
		if (l < 0)
			return -1;
		x = &p->nodes[n];
		x->kind = N_CAST;
		x->size = size;
		x->sign = sign;
		x->left = l;
		return n;
	}
	case TEP_PRINT_OP: {
		const char *op = a->op.op;
		int l, r;

		if (!op || !a->op.left || !a->op.right ||
		    !(!strcmp(op, ">>") || !strcmp(op, "<<") || !strcmp(op, "&") ||
		      !strcmp(op, "|") || !strcmp(op, "+") || !strcmp(op, "-") ||
		      !strcmp(op, "*") || !strcmp(op, "^")))
			return -1;
		l = compile_expr(p, ev, a->op.left);
		r = l < 0 ? -1 : compile_expr(p, ev, a->op.right);
		if (r < 0)
			return -1;
		x = &p->nodes[n];
		x->kind = N_OP;
		x->op = op[0];
		x->left = l;
		x->right = r;
		return n;
	}
	default:
		return -1;
	}
}

/* Narrow signed fields are read zero-extended by libtraceevent; keep
 * only expressions where that cannot differ from what we compute. */
static bool expr_safe(const struct tk_kprog *p, int n)
{
	const struct node *x = &p->nodes[n];

	switch (x->kind) {
	case N_FIELD:
		return true;
	case N_ATOM:
		return true;
	case N_CAST:
		return expr_safe(p, x->left);
	default:
		return expr_safe(p, x->left) && expr_safe(p, x->right);
	}
}

static bool add_step(struct tk_kprog *p, struct step **s)
{
	if (p->nsteps >= MAX_STEPS)
		return false;
	*s = &p->steps[p->nsteps++];
	memset(*s, 0, sizeof(**s));
	return true;
}

/* Parse one conversion at fmt ("%..."); returns its length or 0 when it
 * is not one we format. */
static size_t parse_conv(const char *fmt, struct step *s)
{
	const char *c = fmt + 1;
	bool other_flags = false, prec = false;
	unsigned lmod = 0; /* count of 'l' */
	bool h = false, hh = false, z = false;
	size_t len;

	while (strchr("-+ #0", *c)) {
		if (*c == '0')
			s->zero = true;
		else
			other_flags = true;
		c++;
	}
	if (*c == '*')
		return 0;
	while (isdigit((unsigned char)*c))
		s->width = s->width * 10 + (unsigned)(*c++ - '0');
	if (*c == '.') {
		prec = true;
		c++;
		if (*c == '*')
			return 0;
		while (isdigit((unsigned char)*c))
			c++;
	}
	if (c[0] == 'h' && c[1] == 'h') {
		hh = true;
		c += 2;
	} else if (*c == 'h') {
		h = true;
		c++;
	} else if (*c == 'z') {
		z = true;
		c++;
	} else {
		while (*c == 'l' && lmod < 2) {
			lmod++;
			c++;
		}
	}
	if (!strchr("diuxXos", *c) || !*c)
		return 0;
	s->conv = *c++;
	if (s->conv == 's' && (h || hh || z || lmod))
		return 0;
	s->csize = hh ? 1 : h ? 2 : (z || lmod) ? 8 : 4;
	s->plain = !other_flags && !prec && s->width < 64 && s->conv != 'o';
	len = (size_t)(c - fmt);
	if (len >= sizeof(s->spec))
		return 0;
	memcpy(s->spec, fmt, len);
	s->spec[len] = '\0';
	return len;
}

static bool compile_string(struct tk_kprog *p, struct tep_event *ev,
			   struct tep_print_arg *a, struct step *s)
{
	struct tep_format_field *f = NULL;

	(void)p;
	if (a->type == TEP_PRINT_FIELD) {
		f = a->field.field ? a->field.field : tep_find_any_field(ev, a->field.name);
		if (!f || f->offset < 0 || f->size <= 0 ||
		    !(f->flags & TEP_FIELD_IS_ARRAY) || (f->flags & TEP_FIELD_IS_DYNAMIC) ||
		    strncmp(f->type, "char", 4))
			return false;
		s->kind = S_STR_ARRAY;
	} else if (a->type == TEP_PRINT_STRING) {
		f = a->string.field;
		if (!f || f->offset < 0 || !(f->flags & TEP_FIELD_IS_DYNAMIC))
			return false;
		s->kind = S_STR_LOC;
		s->rel = f->flags & TEP_FIELD_IS_RELATIVE;
	} else {
		return false;
	}
	s->off = (unsigned)f->offset;
	s->size = (unsigned)f->size;
	return true;
}

struct tk_kprog *tk_kprog_compile(struct tep_handle *tep, struct tep_event *ev)
{
	struct tk_kprog *p;
	struct tep_print_arg *arg = ev->print_fmt.args;
	const char *f;
	char *o;

	(void)tep;
	if (!ev->print_fmt.format || (ev->flags & (TEP_EVENT_FL_ISFTRACE |
						  TEP_EVENT_FL_ISPRINT |
						  TEP_EVENT_FL_ISBPRINT)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->text = strdup(ev->print_fmt.format)))
		goto fail;
	/* literals are unescaped ("%%" -> "%") into p->text as we go */
	o = p->text;
	for (f = ev->print_fmt.format; *f;) {
		struct step *s;
		size_t len;

		if (*f != '%' || f[1] == '%') {
			const char *start = o;

			while (*f && (*f != '%' || f[1] == '%')) {
				if (*f == '%')
					f++;
				*o++ = *f++;
			}
			if (!add_step(p, &s))
				goto fail;
			s->kind = S_LIT;
			s->lit = start;
			s->lit_len = (unsigned)(o - start);
			continue;
		}
		if (!add_step(p, &s) || !arg || !(len = parse_conv(f, s)))
			goto fail;
		if (s->conv == 's') {
			if (!compile_string(p, ev, arg, s))
				goto fail;
		} else {
			s->kind = S_INT;
			s->expr = compile_expr(p, ev, arg);
			if (s->expr < 0 || !expr_safe(p, s->expr))
				goto fail;
			/* a signed field narrower than 8 bytes, read
			 * zero-extended, printed wider: leave it to
			 * libtraceevent */
			if (p->nodes[s->expr].kind == N_FIELD && p->nodes[s->expr].sign &&
			    p->nodes[s->expr].size < s->csize)
				goto fail;
		}
		f += len;
		arg = arg->next;
	}
	if (arg)
		goto fail; /* more arguments than conversions */
	return p;
fail:
	tk_kprog_free(p);
	return NULL;
}

/* ---------------------------------------------------------------- run */

static uint64_t extend(uint64_t v, unsigned size, bool sign)
{
	if (size >= 8)
		return v;
	v &= (1ull << (size * 8)) - 1;
	if (sign && (v >> (size * 8 - 1)) & 1)
		v |= ~0ull << (size * 8);
	return v;
}

static uint64_t eval(const struct tk_kprog *p, int n, const unsigned char *data)
{
	const struct node *x = &p->nodes[n];
	uint64_t l, r = 0;

	switch (x->kind) {
	case N_FIELD:
		l = 0;
		memcpy(&l, data + x->off, x->size);
		return l;
	case N_ATOM:
		return x->value;
	case N_CAST:
		return extend(eval(p, x->left, data), x->size, x->sign);
	default:
		l = eval(p, x->left, data);
		r = eval(p, x->right, data);
		switch (x->op) {
		case '>':
			return r < 64 ? l >> r : 0;
		case '<':
			return r < 64 ? l << r : 0;
		case '&':
			return l & r;
		case '|':
			return l | r;
		case '^':
			return l ^ r;
		case '+':
			return l + r;
		case '-':
			return l - r;
		default:
			return l * r;
		}
	}
}

/* v in the given base, right-aligned in width with zeros or spaces. */
static size_t put_num(char *out, size_t room, uint64_t v, bool neg,
		      unsigned base, bool upper, unsigned width, bool zero)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	size_t n = 0, len, pad, i = 0;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	len = n + neg;
	pad = width > len ? width - len : 0;
	if (len + pad > room)
		return 0;
	if (!zero)
		while (pad) {
			out[i++] = ' ';
			pad--;
		}
	if (neg)
		out[i++] = '-';
	while (pad) {
		out[i++] = '0';
		pad--;
	}
	while (n)
		out[i++] = tmp[--n];
	return i;
}

static size_t run_int(const struct step *s, uint64_t v, char *out, size_t room)
{
	bool sign = s->conv == 'd' || s->conv == 'i';
	int len;

	v = extend(v, s->csize, sign);
	if (s->plain) {
		bool neg = sign && (int64_t)v < 0;

		if (s->conv == 'x' || s->conv == 'X')
			return put_num(out, room, s->csize < 8 ? v & ((1ull << (s->csize * 8)) - 1) : v,
				       false, 16, s->conv == 'X', s->width, s->zero);
		return put_num(out, room,
			       neg ? (uint64_t)(-(int64_t)v)
				   : (s->csize < 8 && !sign ? v & ((1ull << (s->csize * 8)) - 1) : v),
			       neg, 10, false, s->width, s->zero);
	}
	if (s->csize == 8)
		len = snprintf(out, room, s->spec, v);
	else if (sign)
		len = snprintf(out, room, s->spec, (int)(int64_t)v);
	else
		len = snprintf(out, room, s->spec, (unsigned)v);
	return len < 0 ? 0 : (size_t)len < room ? (size_t)len : room - 1;
}

static size_t run_str(const struct step *s, const unsigned char *data,
		      unsigned size, char *out, size_t room)
{
	const char *str;
	size_t len, max;
	char tmp[4096];
	int n;

	if (s->kind == S_STR_ARRAY) {
		str = (const char *)data + s->off;
		max = s->size;
	} else {
		uint32_t loc;
		unsigned off;

		memcpy(&loc, data + s->off, 4);
		off = (loc & 0xffff) + (s->rel ? s->off + 4 : 0);
		if (off >= size)
			return 0;
		str = (const char *)data + off;
		max = size - off;
	}
	len = strnlen(str, max);
	if (s->plain && !s->width) {
		if (len > room)
			len = room;
		memcpy(out, str, len);
		return len;
	}
	if (len >= sizeof(tmp))
		len = sizeof(tmp) - 1;
	memcpy(tmp, str, len);
	tmp[len] = '\0';
	n = snprintf(out, room, s->spec, tmp);
	return n < 0 ? 0 : (size_t)n < room ? (size_t)n : room - 1;
}

size_t tk_kprog_run(const struct tk_kprog *p, const unsigned char *data,
		    unsigned size, char *out, size_t room)
{
	size_t n = 0;

	for (unsigned i = 0; i < p->nsteps && n < room; i++) {
		const struct step *s = &p->steps[i];

		switch (s->kind) {
		case S_LIT: {
			size_t len = s->lit_len < room - n ? s->lit_len : room - n;

			memcpy(out + n, s->lit, len);
			n += len;
			break;
		}
		case S_INT:
			n += run_int(s, eval(p, s->expr, data), out + n, room - n);
			break;
		default:
			n += run_str(s, data, size, out + n, room - n);
		}
	}
	return n;
}

void tk_kprog_free(struct tk_kprog *p)
{
	if (!p)
		return;
	free(p->text);
	free(p);
}
