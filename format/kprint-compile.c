/* SPDX-License-Identifier: MIT */
/*
 * kprint-compile.c - compile a kernel event's print fmt into steps
 * (kprint-compile.h).
 *
 * libtraceevent parses the print fmt into a tree of arguments
 * (struct tep_print_arg); we walk that tree once per event and turn it
 * into flat arrays:
 *
 *   steps   literal text | number | pointer (%p, %ps, %pS) | string
 *   nodes   integer expressions: fields, numbers, casts, operators, ?:
 *   snodes  string arguments: literals, char arrays, __get_str(),
 *           __print_flags(), __print_symbolic(), ?: between them
 *
 * Every rule follows what libtraceevent does when it prints, so the text
 * is the same byte for byte:
 *   - a field is read zero-extended from its size (sizes other than
 *     1, 2, 4, 8 read as 0); operators work on unsigned 64-bit values;
 *     a cast to char/short/int (signed or not) keeps the low bytes, any
 *     other cast changes nothing
 *   - a number conversion passes the value as the C type its length
 *     modifiers name (hh char, h short, none int, l/ll/L/z 64-bit)
 *   - %p prints "0x..." or "(nil)"; %ps/%pf the symbol's name, %pS/%pF
 *     name+0xoffset, or "0x..." outside every symbol (kallsyms lookups
 *     are libtraceevent's own)
 *   - __print_symbolic() prints the matching name or 0x%llx; flag and
 *     symbol values are numbers or the few names libtraceevent knows
 *   - a name in an expression (e.g. vmemmap_base) is the symbol's address
 *     in the saved kallsyms, 0 when absent
 * Whatever else (helper functions, %*, arrays, dynamic arrays as values,
 * IP and MAC formats, bitmasks, a flag worth 0) makes compilation fail,
 * and rare cases met at run time (a symbol value of -1) send that one
 * record back to libtraceevent.
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
#include "kprint-out.h"
#include "printf-spec.h"

#define MAX_ITEMS 4096 /* per array: more means a format we leave alone */
#define MAX_DEPTH 64

enum node_kind { N_CONST, N_FIELD, N_MASK, N_OP, N_COND };

enum op {
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_AND, OP_OR, OP_LAND, OP_LOR,
	OP_SHL, OP_SHR, OP_LT, OP_GT, OP_LE, OP_GE, OP_EQ, OP_NE, OP_NOT, OP_INV,
	OP_ZERO, /* an operator libtraceevent evaluates to 0 (e.g. ^) */
};

struct node {
	uint8_t kind, op;
	uint8_t size;   /* N_FIELD */
	uint32_t off;   /* N_FIELD */
	uint64_t value; /* N_CONST; N_MASK: the mask */
	int a, b, c;    /* operands; N_COND: a ? b : c */
};

enum snode_kind { SN_NONE, SN_LIT, SN_CHARS, SN_DSTR, SN_FLAGS, SN_SYM, SN_COND };

struct snode {
	uint8_t kind;
	bool rel;          /* SN_DSTR: __rel_loc */
	bool neg;          /* SN_SYM: -1 is listed; SN_FLAGS: 0 is (fall back) */
	uint32_t off, size; /* SN_CHARS, SN_DSTR: the field */
	uint32_t lit, len; /* SN_LIT: text; SN_FLAGS: the delimiter */
	int expr;          /* SN_FLAGS, SN_SYM, SN_COND: the value */
	uint32_t first, count; /* SN_FLAGS, SN_SYM: into syms */
	int a, b;          /* SN_COND */
};

struct sym {
	uint64_t value;
	uint32_t str, len; /* into text */
};

enum step_kind { S_LIT, S_NUM, S_PTR, S_FUNC, S_STR };

struct step {
	uint8_t kind;
	uint32_t lit, len; /* S_LIT: into text */
	int arg;           /* S_NUM, S_PTR, S_FUNC: node; S_STR: snode */
	/* S_NUM */
	int8_t ls;         /* -2 char, -1 short, 0 int, 1 long, 2 long long */
	char conv;         /* d i u x X o */
	bool plain;        /* formatted here; else snprintf(spec) */
	bool zero;
	uint8_t width;
	bool offset;       /* S_FUNC: name+0xoff */
	char spec[32];
};

struct tk_kprog {
	struct tep_handle *tep;
	struct step *steps;
	struct node *nodes;
	struct snode *snodes;
	struct sym *syms;
	unsigned nsteps, nnodes, nsnodes, nsyms;
	unsigned csteps, cnodes, csnodes, csyms;
	char *text;
	size_t text_len, text_cap;
	tk_ksym_addr_fn sym_addr;
	void *sym_ctx;
	struct tk_ksym_cache *ksyms;
};

/* ------------------------------------------------------------ compile */

/* Grow an array of @size-byte items to hold one more; its index or -1. */
static int grow(void **arr, unsigned *n, unsigned *cap, size_t size)
{
	if (*n >= MAX_ITEMS)
		return -1;
	if (*n == *cap) {
		unsigned c = *cap ? *cap * 2 : 16;
		void *p = realloc(*arr, c * size);

		if (!p)
			return -1;
		*arr = p;
		*cap = c;
	}
	memset((char *)*arr + *n * size, 0, size);
	return (int)(*n)++;
}

#define NEW(p, what) grow((void **)&(p)->what##s, &(p)->n##what##s, &(p)->c##what##s, \
			  sizeof(*(p)->what##s))

/* Keep @len bytes of text; their offset, or -1. */
static long keep_text(struct tk_kprog *p, const char *s, size_t len)
{
	size_t off = p->text_len;

	if (p->text_len + len + 1 > p->text_cap) {
		size_t c = (p->text_cap ? p->text_cap * 2 : 256) + len;
		char *t = realloc(p->text, c);

		if (!t)
			return -1;
		p->text = t;
		p->text_cap = c;
	}
	memcpy(p->text + off, s, len);
	p->text[off + len] = '\0';
	p->text_len += len + 1;
	return (long)off;
}

/* libtraceevent's value of a flag or symbol name (eval_flag). */
static int64_t flag_value(const char *s)
{
	static const struct {
		const char *name;
		int64_t value;
	} known[] = {
		{ "HI_SOFTIRQ", 0 }, { "TIMER_SOFTIRQ", 1 }, { "NET_TX_SOFTIRQ", 2 },
		{ "NET_RX_SOFTIRQ", 3 }, { "BLOCK_SOFTIRQ", 4 }, { "IRQ_POLL_SOFTIRQ", 5 },
		{ "TASKLET_SOFTIRQ", 6 }, { "SCHED_SOFTIRQ", 7 }, { "HRTIMER_SOFTIRQ", 8 },
		{ "RCU_SOFTIRQ", 9 }, { "HRTIMER_NORESTART", 0 }, { "HRTIMER_RESTART", 1 },
	};

	if (isdigit((unsigned char)s[0]))
		return (int64_t)strtoull(s, NULL, 0);
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(known[i].name, s))
			return known[i].value;
	return -1;
}

/* The mask a cast applies (eval_type_str), 0 for none. */
static uint64_t cast_mask(const char *type)
{
	size_t len = strlen(type);

	if (len < 2 || type[len - 1] == '*' || !strncmp(type, "struct", 6))
		return 0;
	if (!strcmp(type, "u8") || !strcmp(type, "s8"))
		return 0xff;
	if (!strcmp(type, "u16") || !strcmp(type, "s16"))
		return 0xffff;
	if (!strcmp(type, "u32") || !strcmp(type, "s32"))
		return 0xffffffff;
	if (!strncmp(type, "unsigned ", 9))
		type += 9;
	if (!strcmp(type, "char"))
		return 0xff;
	if (!strcmp(type, "short"))
		return 0xffff;
	if (!strcmp(type, "int"))
		return 0xffffffff;
	return 0;
}

static struct tep_format_field *arg_field(struct tep_event *ev, struct tep_print_arg *a)
{
	return a->field.field ? a->field.field : tep_find_any_field(ev, a->field.name);
}

static int const_node(struct tk_kprog *p, uint64_t v)
{
	int n = NEW(p, node);

	if (n >= 0) {
		p->nodes[n].kind = N_CONST;
		p->nodes[n].value = v;
	}
	return n;
}

static int compile_expr(struct tk_kprog *p, struct tep_event *ev,
			struct tep_print_arg *a, int depth);

static int op_code(const char *op)
{
	static const struct {
		const char *s;
		int op;
	} ops[] = {
		{ "+", OP_ADD }, { "-", OP_SUB }, { "*", OP_MUL }, { "/", OP_DIV },
		{ "%", OP_MOD }, { "&", OP_AND }, { "|", OP_OR }, { "&&", OP_LAND },
		{ "||", OP_LOR }, { "<<", OP_SHL }, { ">>", OP_SHR }, { "<", OP_LT },
		{ ">", OP_GT }, { "<=", OP_LE }, { ">=", OP_GE }, { "==", OP_EQ },
		{ "!=", OP_NE }, { "!", OP_NOT }, { "~", OP_INV },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i].s))
			return ops[i].op;
	return OP_ZERO;
}

static int compile_op(struct tk_kprog *p, struct tep_event *ev,
		      struct tep_print_arg *a, int depth)
{
	const char *op = a->op.op;
	int n, l, r, c;

	if (!op || !a->op.left || !a->op.right || !strcmp(op, "["))
		return -1;
	if (!strcmp(op, "?")) {
		struct tep_print_arg *alt = a->op.right;

		if (alt->type != TEP_PRINT_OP || !alt->op.op || strcmp(alt->op.op, ":") ||
		    !alt->op.left || !alt->op.right)
			return -1;
		l = compile_expr(p, ev, a->op.left, depth + 1);
		r = l < 0 ? -1 : compile_expr(p, ev, alt->op.left, depth + 1);
		c = r < 0 ? -1 : compile_expr(p, ev, alt->op.right, depth + 1);
		if (c < 0 || (n = NEW(p, node)) < 0)
			return -1;
		p->nodes[n] = (struct node){ .kind = N_COND, .a = l, .b = r, .c = c };
		return n;
	}
	l = compile_expr(p, ev, a->op.left, depth + 1);
	r = l < 0 ? -1 : compile_expr(p, ev, a->op.right, depth + 1);
	if (r < 0 || (n = NEW(p, node)) < 0)
		return -1;
	p->nodes[n] = (struct node){ .kind = N_OP, .op = (uint8_t)op_code(op), .a = l, .b = r };
	return n;
}

/* An integer expression, as eval_num_arg() computes it; its node or -1. */
static int compile_expr(struct tk_kprog *p, struct tep_event *ev,
			struct tep_print_arg *a, int depth)
{
	int n;

	if (!a || depth > MAX_DEPTH)
		return -1;
	switch (a->type) {
	case TEP_PRINT_NULL:
	case TEP_PRINT_FLAGS:
	case TEP_PRINT_SYMBOL:
	case TEP_PRINT_STRING:
	case TEP_PRINT_BSTRING:
	case TEP_PRINT_HEX:
	case TEP_PRINT_HEX_STR:
	case TEP_PRINT_INT_ARRAY:
	case TEP_PRINT_BITMASK:
	case TEP_PRINT_CPUMASK:
		return const_node(p, 0);
	case TEP_PRINT_ATOM: {
		const char *s = a->atom.atom;
		uint64_t v;

		if (!s)
			return -1;
		v = strtoull(s, NULL, 0);
		if (!v && !isdigit((unsigned char)s[0])) {
			/* a symbol's name: its address */
			int found = p->sym_addr ? p->sym_addr(p->sym_ctx, s, &v) : 0;

			if (found < 0)
				return -1;
			if (!found)
				v = 0;
		}
		return const_node(p, v);
	}
	case TEP_PRINT_FIELD: {
		struct tep_format_field *f = arg_field(ev, a);

		if (!f || f->offset < 0)
			return -1;
		if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
			return const_node(p, 0);
		if ((n = NEW(p, node)) < 0)
			return -1;
		p->nodes[n].kind = N_FIELD;
		p->nodes[n].off = (uint32_t)f->offset;
		p->nodes[n].size = (uint8_t)f->size;
		return n;
	}
	case TEP_PRINT_TYPE: {
		uint64_t mask;
		int l;

		if (!a->typecast.type)
			return -1;
		mask = cast_mask(a->typecast.type);
		l = compile_expr(p, ev, a->typecast.item, depth + 1);
		if (l < 0 || !mask)
			return l;
		if ((n = NEW(p, node)) < 0)
			return -1;
		p->nodes[n] = (struct node){ .kind = N_MASK, .value = mask, .a = l };
		return n;
	}
	case TEP_PRINT_OP:
		return compile_op(p, ev, a, depth);
	default: /* functions, dynamic arrays (an address of ours) */
		return -1;
	}
}

/* The flags or symbols of __print_flags/__print_symbolic; false when a
 * flag's value is unknown.  Versions of libtraceevent differ on a flag
 * worth 0 when the value is 0, and on a symbol worth -1 (unknown): such
 * records are left to it (neg). */
static bool compile_syms(struct tk_kprog *p, struct tep_print_flag_sym *list,
			 bool flags, struct snode *s)
{
	s->first = p->nsyms;
	for (; list; list = list->next) {
		int64_t v;
		long str;
		int i;

		if (!list->value || !list->str)
			return false;
		v = flag_value(list->value);
		if (flags && v < 0)
			return false;
		if (flags && !v) {
			/* matched by no value but 0 (a list's end marker) */
			s->neg = true;
			continue;
		}
		if (v == -1)
			s->neg = true;
		str = keep_text(p, list->str, strlen(list->str));
		if (str < 0 || (i = NEW(p, sym)) < 0)
			return false;
		p->syms[i] = (struct sym){ (uint64_t)v, (uint32_t)str, (uint32_t)strlen(list->str) };
		s->count++;
	}
	return true;
}

/* A string argument, as print_str_arg() prints it; its snode or -1. */
static int compile_str(struct tk_kprog *p, struct tep_event *ev,
		       struct tep_print_arg *a, int depth)
{
	struct snode s = { 0 };
	int n;

	if (!a || depth > MAX_DEPTH)
		return -1;
	switch (a->type) {
	case TEP_PRINT_NULL:
	case TEP_PRINT_TYPE:
		s.kind = SN_NONE;
		break;
	case TEP_PRINT_ATOM: {
		long off;

		if (!a->atom.atom || (off = keep_text(p, a->atom.atom, strlen(a->atom.atom))) < 0)
			return -1;
		s.kind = SN_LIT;
		s.lit = (uint32_t)off;
		s.len = (uint32_t)strlen(a->atom.atom);
		break;
	}
	case TEP_PRINT_FIELD: {
		struct tep_format_field *f = arg_field(ev, a);

		/* a long-sized non-array is taken for a pointer to a printk
		 * string: not ours */
		if (!f || f->offset < 0 || f->size <= 0 || (f->flags & TEP_FIELD_IS_DYNAMIC) ||
		    (!(f->flags & TEP_FIELD_IS_ARRAY) && f->size == 8))
			return -1;
		s.kind = SN_CHARS;
		s.off = (uint32_t)f->offset;
		s.size = (uint32_t)f->size;
		break;
	}
	case TEP_PRINT_STRING: {
		struct tep_format_field *f = a->string.field;

		if (!f && a->string.string)
			f = tep_find_any_field(ev, a->string.string);
		if (!f || f->offset < 0 || f->size != 4 || !(f->flags & TEP_FIELD_IS_DYNAMIC))
			return -1;
		s.kind = SN_DSTR;
		s.off = (uint32_t)f->offset;
		s.size = (uint32_t)f->size;
		s.rel = f->flags & TEP_FIELD_IS_RELATIVE;
		break;
	}
	case TEP_PRINT_FLAGS: {
		const char *delim = a->flags.delim ? a->flags.delim : "";
		long off = keep_text(p, delim, strlen(delim));

		s.kind = SN_FLAGS;
		s.expr = compile_expr(p, ev, a->flags.field, depth + 1);
		if (off < 0 || s.expr < 0 || !compile_syms(p, a->flags.flags, true, &s))
			return -1;
		s.lit = (uint32_t)off;
		s.len = (uint32_t)strlen(delim);
		break;
	}
	case TEP_PRINT_SYMBOL:
		s.kind = SN_SYM;
		s.expr = compile_expr(p, ev, a->symbol.field, depth + 1);
		if (s.expr < 0 || !compile_syms(p, a->symbol.symbols, false, &s))
			return -1;
		break;
	case TEP_PRINT_OP: {
		struct tep_print_arg *alt = a->op.right;

		/* only ?: prints a string; any other operator prints nothing */
		if (!a->op.op || strcmp(a->op.op, "?")) {
			s.kind = SN_NONE;
			break;
		}
		if (!alt || alt->type != TEP_PRINT_OP || !alt->op.op || strcmp(alt->op.op, ":"))
			return -1;
		s.kind = SN_COND;
		s.expr = compile_expr(p, ev, a->op.left, depth + 1);
		s.a = s.expr < 0 ? -1 : compile_str(p, ev, alt->op.left, depth + 1);
		s.b = s.a < 0 ? -1 : compile_str(p, ev, alt->op.right, depth + 1);
		if (s.b < 0)
			return -1;
		break;
	}
	default:
		return -1;
	}
	if ((n = NEW(p, snode)) < 0)
		return -1;
	p->snodes[n] = s;
	return n;
}

/* Literal text up to the next conversion, unescaped as parse_arg_string()
 * does; returns the characters consumed. */
static size_t compile_literal(struct tk_kprog *p, const char *f, bool *ok)
{
	char buf[512];
	size_t n = 0, used = 0;

	while (f[used] && n < sizeof(buf) - 1) {
		char c = f[used];

		if (c == '\\') {
			used++;
			c = f[used];
			if (!c)
				break;
			buf[n++] = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
		} else if (c == '%') {
			if (f[used + 1] != '%')
				break;
			buf[n++] = '%';
			used++;
		} else {
			buf[n++] = c;
		}
		used++;
	}
	if (n) {
		long off = keep_text(p, buf, n);
		int i = off < 0 ? -1 : NEW(p, step);

		if (i < 0) {
			*ok = false;
			return used ? used : 1;
		}
		p->steps[i].kind = S_LIT;
		p->steps[i].lit = (uint32_t)off;
		p->steps[i].len = (uint32_t)n;
	}
	return used;
}

/* libtraceevent's size of an integer argument from the length modifiers
 * (hh char, h short, none int, l long, ll and L long long, z size_t), in
 * *ls from -2 to 2; false for any other modifier. */
static bool length_size(const struct tk_spec *sp, int *ls)
{
	*ls = 0;
	for (unsigned k = 0; k < sp->nlen; k++) {
		switch (sp->len[k]) {
		case 'h':
			--*ls;
			break;
		case 'l':
			++*ls;
			break;
		case 'L':
			*ls = 2;
			break;
		case 'z':
			*ls = 1;
			break;
		default:
			return false;
		}
	}
	return *ls >= -2 && *ls <= 2;
}

/* One conversion at f ("%...", printf-spec.c); returns the characters
 * consumed, 0 when we do not print it. */
static size_t compile_conv(struct tk_kprog *p, struct tep_event *ev, const char *f,
			   struct tep_print_arg **arg)
{
	struct tk_spec sp;
	const char *c;
	int ls, i;
	struct step *s;
	size_t len;

	/* a space flag, and what C's grammar does not allow, libtraceevent
	 * reads its own way: leave those formats to it */
	if (tk_spec_parse(f, 0, &sp) != TK_SPEC_OK || (sp.flags & TK_SPEC_SPACE) ||
	    !length_size(&sp, &ls))
		return 0;
	if (!*arg || (i = NEW(p, step)) < 0)
		return 0;
	c = f + sp.end - 1;
	s = &p->steps[i];
	if (*c == 'p') {
		char k = c[1];

		if (k == 'F' || k == 'f' || k == 'S' || k == 's') {
			s->kind = S_FUNC;
			s->offset = k == 'F' || k == 'S';
			c++;
		} else if (k == 'M' || k == 'm' || k == 'I' || k == 'i' || k == 'U' || k == 'h') {
			return 0;
		} else {
			s->kind = S_PTR;
		}
		if ((*arg)->type == TEP_PRINT_BSTRING)
			return 0;
		s->arg = compile_expr(p, ev, *arg, 0);
	} else if (strchr("diuxXo", *c)) {
		s->kind = S_NUM;
		s->conv = *c;
		s->ls = (int8_t)ls;
		s->zero = sp.flags & TK_SPEC_ZERO;
		s->width = (uint8_t)(sp.width > 0 ? sp.width : 0);
		s->plain = !(sp.flags & ~TK_SPEC_ZERO) && sp.prec < 0 && sp.width < 64 &&
			   *c != 'o';
		s->arg = compile_expr(p, ev, *arg, 0);
	} else if (*c == 's') {
		s->kind = S_STR;
		s->plain = sp.end == 2;
		s->arg = compile_str(p, ev, *arg, 0);
	} else {
		return 0; /* %c, floating point */
	}
	s = &p->steps[i]; /* the arrays may have moved */
	if (s->arg < 0)
		return 0;
	len = (size_t)(c + 1 - f);
	if (len >= sizeof(s->spec))
		return 0;
	memcpy(s->spec, f, len);
	s->spec[len] = '\0';
	*arg = (*arg)->next;
	return len;
}

static bool symbol_atoms(const struct tep_print_arg *a, int depth)
{
	if (!a || depth > MAX_DEPTH)
		return false;
	switch (a->type) {
	case TEP_PRINT_ATOM:
		return a->atom.atom && !isdigit((unsigned char)a->atom.atom[0]);
	case TEP_PRINT_TYPE:
		return symbol_atoms(a->typecast.item, depth + 1);
	case TEP_PRINT_OP:
		return symbol_atoms(a->op.left, depth + 1) || symbol_atoms(a->op.right, depth + 1);
	case TEP_PRINT_FLAGS:
		return symbol_atoms(a->flags.field, depth + 1);
	case TEP_PRINT_SYMBOL:
		return symbol_atoms(a->symbol.field, depth + 1);
	default:
		return false;
	}
}

bool tk_kprog_needs_symbols(const struct tep_event *ev)
{
	if (!ev->print_fmt.format)
		return false;
	if (strstr(ev->print_fmt.format, "%p"))
		return true;
	for (const struct tep_print_arg *a = ev->print_fmt.args; a; a = a->next)
		if (symbol_atoms(a, 0))
			return true;
	return false;
}

const char *tk_ksym_find(struct tep_handle *tep, struct tk_ksym_cache *cache,
			 uint64_t addr, uint64_t *start)
{
	const char *name;
	unsigned long long st;
	size_t i = (size_t)((addr ^ (addr >> 12) ^ (addr >> 24)) & (TK_KSYM_CACHE - 1));

	if (cache && cache->slot[i].set && cache->slot[i].addr == addr) {
		*start = cache->slot[i].start;
		return cache->slot[i].name;
	}
	if (!tep_find_function_info(tep, addr, &name, &st, NULL))
		name = NULL;
	*start = name ? st : 0;
	if (cache) {
		cache->slot[i].set = true;
		cache->slot[i].addr = addr;
		cache->slot[i].start = *start;
		cache->slot[i].name = name;
	}
	return name;
}

struct tk_kprog *tk_kprog_compile(struct tep_handle *tep, struct tep_event *ev,
				  tk_ksym_addr_fn sym, void *sym_ctx,
				  struct tk_ksym_cache *syms)
{
	struct tk_kprog *p;
	struct tep_print_arg *arg = ev->print_fmt.args;
	const char *f = ev->print_fmt.format;

	if (!f || (ev->flags & (TEP_EVENT_FL_ISFTRACE | TEP_EVENT_FL_ISPRINT |
				TEP_EVENT_FL_ISBPRINT | TEP_EVENT_FL_FAILED)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->tep = tep;
	p->sym_addr = sym;
	p->sym_ctx = sym_ctx;
	p->ksyms = syms;
	while (*f) {
		bool ok = true;
		size_t used;

		if (*f == '%' && f[1] != '%')
			used = compile_conv(p, ev, f, &arg);
		else
			used = compile_literal(p, f, &ok);
		if (!used || !ok)
			goto fail;
		f += used;
	}
	/* arguments past the last conversion are not printed */
	return p;
fail:
	tk_kprog_free(p);
	return NULL;
}

/* ---------------------------------------------------------------- run */

static void putf(struct tk_obuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct tk_obuf *o, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (o->n >= o->room)
		return;
	va_start(ap, fmt);
	len = vsnprintf(o->p + o->n, o->room - o->n, fmt, ap);
	va_end(ap);
	if (len > 0)
		o->n += (size_t)len < o->room - o->n ? (size_t)len : o->room - o->n - 1;
}

static uint64_t eval(const struct tk_kprog *p, int n, const unsigned char *data)
{
	const struct node *x = &p->nodes[n];
	uint64_t l, r;

	switch (x->kind) {
	case N_CONST:
		return x->value;
	case N_FIELD:
		switch (x->size) {
		case 1:
			return data[x->off];
		case 2: {
			uint16_t v;

			memcpy(&v, data + x->off, 2);
			return v;
		}
		case 4: {
			uint32_t v;

			memcpy(&v, data + x->off, 4);
			return v;
		}
		default: {
			uint64_t v;

			memcpy(&v, data + x->off, 8);
			return v;
		}
		}
	case N_MASK:
		return eval(p, x->a, data) & x->value;
	case N_COND:
		return eval(p, x->a, data) ? eval(p, x->b, data) : eval(p, x->c, data);
	default:
		break;
	}
	l = eval(p, x->a, data);
	r = eval(p, x->b, data);
	switch (x->op) {
	case OP_ADD: return l + r;
	case OP_SUB: return l - r;
	case OP_MUL: return l * r;
	case OP_DIV: return r ? l / r : 0;
	case OP_MOD: return r ? l % r : 0;
	case OP_AND: return l & r;
	case OP_OR: return l | r;
	case OP_LAND: return l && r;
	case OP_LOR: return l || r;
	case OP_SHL: return r < 64 ? l << r : 0;
	case OP_SHR: return r < 64 ? l >> r : 0;
	case OP_LT: return l < r;
	case OP_GT: return l > r;
	case OP_LE: return l <= r;
	case OP_GE: return l >= r;
	case OP_EQ: return l == r;
	case OP_NE: return l != r;
	case OP_NOT: return !r;
	case OP_INV: return ~r;
	default: return 0;
	}
}

static void run_num(const struct step *s, uint64_t val, struct tk_obuf *o)
{
	int iv = s->ls == -2 ? (int)(signed char)val : s->ls == -1 ? (int)(short)val : (int)val;

	if (s->plain) {
		bool sign = s->conv == 'd' || s->conv == 'i';
		uint64_t u;
		bool neg = false;

		if (s->ls > 0) {
			u = val;
			if (sign && (int64_t)val < 0) {
				neg = true;
				u = -(uint64_t)val;
			}
		} else if (sign) {
			neg = iv < 0;
			u = neg ? -(uint64_t)(int64_t)iv : (uint64_t)iv;
		} else {
			u = s->ls == -2 ? (uint8_t)iv : s->ls == -1 ? (uint16_t)iv : (uint32_t)iv;
		}
		tk_onum(o, u, neg, sign || s->conv == 'u' ? 10 : 16, s->conv == 'X', s->width,
			s->zero);
		return;
	}
	if (s->ls > 0)
		putf(o, s->spec, (long long)val);
	else
		putf(o, s->spec, iv);
}

/* One piece of string text under the step's conversion. */
static void put_str(struct tk_obuf *o, const struct step *s, const char *str, size_t len)
{
	char tmp[4096];

	if (s->plain) {
		tk_oput(o, str, len);
		return;
	}
	if (len >= sizeof(tmp))
		len = sizeof(tmp) - 1;
	memcpy(tmp, str, len);
	tmp[len] = '\0';
	putf(o, s->spec, tmp);
}

static bool run_str(const struct tk_kprog *p, const struct step *s, int sn,
		    const unsigned char *data, unsigned size, struct tk_obuf *o)
{
	const struct snode *x = &p->snodes[sn];

	switch (x->kind) {
	case SN_NONE:
		return true;
	case SN_LIT:
		put_str(o, s, p->text + x->lit, x->len);
		return true;
	case SN_CHARS:
		put_str(o, s, (const char *)data + x->off,
			strnlen((const char *)data + x->off, x->size));
		return true;
	case SN_DSTR: {
		uint32_t loc, off, len;

		memcpy(&loc, data + x->off, 4);
		off = loc & 0xffff;
		len = loc >> 16;
		if (off + len > size || !len)
			return true; /* nothing, as libtraceevent */
		if (x->rel)
			off += x->off + 4;
		if (off >= size)
			return false;
		put_str(o, s, (const char *)data + off, strnlen((const char *)data + off, size - off));
		return true;
	}
	case SN_SYM: {
		uint64_t v = eval(p, x->expr, data);

		if (v == ~0ull && x->neg)
			return false;
		for (uint32_t i = 0; i < x->count; i++) {
			const struct sym *y = &p->syms[x->first + i];

			if (y->value == v) {
				put_str(o, s, p->text + y->str, y->len);
				return true;
			}
		}
		tk_oput(o, "0x", 2);
		tk_ohex(o, v);
		return true;
	}
	case SN_FLAGS: {
		uint64_t v = eval(p, x->expr, data);
		bool printed = false;

		if (!v && x->neg)
			return false;

		for (uint32_t i = 0; i < x->count; i++) {
			const struct sym *y = &p->syms[x->first + i];

			if ((v & y->value) == y->value) {
				if (printed)
					tk_oput(o, p->text + x->lit, x->len);
				put_str(o, s, p->text + y->str, y->len);
				printed = true;
				v &= ~y->value;
			}
		}
		if (v) {
			if (printed)
				tk_oput(o, p->text + x->lit, x->len);
			tk_oput(o, "0x", 2);
			tk_ohex(o, v);
		}
		return true;
	}
	default: /* SN_COND */
		return run_str(p, s, eval(p, x->expr, data) ? x->a : x->b, data, size, o);
	}
}

static void run_func(const struct tk_kprog *p, const struct step *s, uint64_t v,
		     struct tk_obuf *o)
{
	uint64_t start;
	const char *name = tk_ksym_find(p->tep, p->ksyms, v, &start);

	if (name) {
		tk_oput(o, name, strlen(name));
		if (s->offset) {
			tk_oput(o, "+0x", 3);
			tk_onum(o, v - start, false, 16, false, 0, false);
		}
	} else {
		tk_oput(o, "0x", 2);
		tk_onum(o, v, false, 16, false, 0, false);
	}
}

long tk_kprog_run(const struct tk_kprog *p, const unsigned char *data,
		  unsigned size, char *out, size_t room)
{
	struct tk_obuf o;

	tk_obuf_init(&o, out, room);
	for (unsigned i = 0; i < p->nsteps && o.n < room; i++) {
		const struct step *s = &p->steps[i];

		switch (s->kind) {
		case S_LIT:
			tk_oput(&o, p->text + s->lit, s->len);
			break;
		case S_NUM:
			run_num(s, eval(p, s->arg, data), &o);
			break;
		case S_PTR: {
			uint64_t v = eval(p, s->arg, data);

			if (v) {
				tk_oput(&o, "0x", 2);
				tk_onum(&o, v, false, 16, false, 0, false);
			} else {
				tk_oput(&o, "(nil)", 5);
			}
			break;
		}
		case S_FUNC:
			run_func(p, s, eval(p, s->arg, data), &o);
			break;
		default:
			if (!run_str(p, s, s->arg, data, size, &o))
				return -1;
		}
	}
	return (long)o.n;
}

void tk_kprog_free(struct tk_kprog *p)
{
	if (!p)
		return;
	free(p->steps);
	free(p->nodes);
	free(p->snodes);
	free(p->syms);
	free(p->text);
	free(p);
}
