/* SPDX-License-Identifier: MIT */
/*
 * printfmt.c - apply an event's printf-style format to recorded values.
 *
 * The report prints millions of lines a second, so the work is split in
 * two.  tk_print_prepare() parses the format once per event and resolves
 * everything that depends only on the descriptor: which field each
 * conversion takes, and how that field's kind and size are to be shown.
 * The result is a flat array of segments:
 *
 *   "id=%d path=%-8s n=%08x"   fields: id INT/4, path STRING, n UINT/2
 *
 *   [LIT "id="] [SDEC f0 4B] [LIT " path="] [STR f1 w8 -] [LIT " n="]
 *   [SPEC_U f2 "%08llx" mask 0xffff]
 *
 * tk_print_format() then walks the segments with a switch.  Literals,
 * integers (decimal, hex, octal, char, pointer: number.h) and text are
 * written by hand, padded to a width if there is one; only what needs
 * printf's full machinery (floating point, precision or flags on
 * integers) calls snprintf, with a spec string built at prepare time.
 *
 * The value's size comes from the field descriptor, never from a length
 * modifier (which is parsed and ignored): %d reads the field as a signed
 * integer of its size, %u %x %X %o as unsigned of its size, as C's printf
 * would for a variable of that type.
 *
 * A conversion that does not suit its field's kind (%s on a number, %d on a
 * string, %f on an integer, %x on a double) prints the value in its
 * natural form instead, padded to the conversion's width; its precision and
 * other flags are ignored.  Natural forms, also used by the default layout
 * "name=value name=value":
 *
 *   INT     decimal            -42
 *   UINT    decimal            42
 *   PTR     0x and hex         0x7ffd1000 (0x0 for NULL; %p prints "(nil)")
 *   DOUBLE  %g                 0.25
 *   CHARS   up to the first NUL or len bytes
 *   STRING  len bytes, as they are
 *   BYTES   hex pairs          {de,ad,be,ef}
 *
 * A NULL string of any text kind prints "(null)".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "number.h"
#include "printf-spec.h"
#include "printfmt.h"

enum pf_op {
	PF_LIT,     /* literal text */
	PF_SDEC,    /* signed decimal of the field's size */
	PF_UDEC,    /* unsigned decimal of the field's size */
	PF_HEX,     /* unsigned hex, lowercase */
	PF_HEXUP,   /* unsigned hex, uppercase */
	PF_OCT,     /* unsigned octal */
	PF_CHAR,    /* the low byte */
	PF_PTR,     /* %p: "0x" and hex, "(nil)" for 0 */
	PF_ADDR,    /* a pointer's natural form: "0x" and hex */
	PF_STR,     /* TK_KIND_STRING: len bytes */
	PF_CHARS,   /* TK_KIND_CHARS: up to the first NUL or len bytes */
	PF_BYTES,   /* TK_KIND_BYTES: {de,ad} */
	PF_SPEC_S,  /* snprintf(spec, (long long)signed value) */
	PF_SPEC_U,  /* snprintf(spec, (unsigned long long)value) */
	PF_SPEC_P,  /* as PF_SPEC_U, but "(nil)" for 0 */
	PF_SPEC_D,  /* snprintf(spec, double) */
};

struct pf_seg {
	uint8_t op;      /* enum pf_op */
	bool left;       /* '-': pad on the right */
	uint32_t field;  /* index into the values */
	uint32_t width;  /* 0: none */
	int32_t prec;    /* -1: none; used by PF_STR and PF_CHARS */
	uint32_t off;    /* PF_LIT: text at p->text + off, len bytes */
	uint32_t len;
	uint64_t mask;   /* integers: the field's bits */
	uint64_t sign;   /* integers: the field's sign bit */
	char spec[24];   /* PF_SPEC_*: the snprintf format */
};

struct tk_print {
	unsigned nseg;
	struct pf_seg *seg;
	char *text;      /* the literals, back to back */
};

/* State while building a tk_print. */
struct pf_build {
	struct tk_print *p;
	size_t ntext;
	bool lit_open;   /* the last segment is a literal still growing */
	const struct tk_field_desc *fields;
	unsigned nfields;
	char *err;
	size_t errlen;
};

static int pf_error(struct pf_build *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int pf_error(struct pf_build *b, const char *fmt, ...)
{
	va_list ap;

	if (b->err && b->errlen) {
		va_start(ap, fmt);
		vsnprintf(b->err, b->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ---- preparing ---------------------------------------------------------- */

static void pf_add_text(struct pf_build *b, const char *s, size_t n)
{
	struct tk_print *p = b->p;
	struct pf_seg *seg;

	if (!n)
		return;
	if (!b->lit_open) {
		seg = &p->seg[p->nseg++];
		memset(seg, 0, sizeof(*seg));
		seg->op = PF_LIT;
		seg->off = (uint32_t)b->ntext;
		b->lit_open = true;
	}
	seg = &p->seg[p->nseg - 1];
	memcpy(p->text + b->ntext, s, n);
	b->ntext += n;
	seg->len += (uint32_t)n;
}

static struct pf_seg *pf_add_seg(struct pf_build *b, unsigned field)
{
	struct pf_seg *seg = &b->p->seg[b->p->nseg++];
	const struct tk_field_desc *f = &b->fields[field];
	unsigned size = f->size;

	memset(seg, 0, sizeof(*seg));
	seg->field = field;
	seg->prec = -1;
	if (f->kind == TK_KIND_PTR && !size)
		size = 8;
	if (size == 1 || size == 2 || size == 4) {
		seg->mask = (UINT64_C(1) << (8 * size)) - 1;
		seg->sign = UINT64_C(1) << (8 * size - 1);
	} else {
		seg->mask = ~UINT64_C(0);
		seg->sign = UINT64_C(1) << 63;
	}
	b->lit_open = false;
	return seg;
}

/* The natural form of field @field's kind. */
static void pf_set_natural(struct pf_seg *seg, unsigned kind, bool left,
			   int width)
{
	char *s = seg->spec;

	seg->left = left;
	seg->width = width > 0 ? (uint32_t)width : 0;
	switch (kind) {
	case TK_KIND_INT:
		seg->op = PF_SDEC;
		break;
	case TK_KIND_PTR:
		seg->op = PF_ADDR;
		break;
	case TK_KIND_DOUBLE:
		seg->op = PF_SPEC_D;
		*s++ = '%';
		if (left)
			*s++ = '-';
		if (width > 0)
			s += sprintf(s, "%d", width);
		*s++ = 'g';
		*s = '\0';
		break;
	case TK_KIND_CHARS:
		seg->op = PF_CHARS;
		break;
	case TK_KIND_STRING:
		seg->op = PF_STR;
		break;
	case TK_KIND_BYTES:
		seg->op = PF_BYTES;
		break;
	default: /* TK_KIND_UINT, and whatever a damaged descriptor holds */
		seg->op = PF_UDEC;
		break;
	}
}

/*
 * Write the snprintf spec for @c into @s: flags in a fixed order, width,
 * precision, @len (a length modifier or "") and conversion @conv.
 */
static void pf_build_spec(char *s, const struct tk_spec *c, unsigned flags,
			  const char *len, char conv)
{
	*s++ = '%';
	if (flags & TK_SPEC_MINUS)
		*s++ = '-';
	if (flags & TK_SPEC_PLUS)
		*s++ = '+';
	if (flags & TK_SPEC_SPACE)
		*s++ = ' ';
	if (flags & TK_SPEC_HASH)
		*s++ = '#';
	if (flags & TK_SPEC_ZERO)
		*s++ = '0';
	if (c->width >= 0)
		s += sprintf(s, "%d", c->width);
	if (c->prec >= 0)
		s += sprintf(s, ".%d", c->prec);
	while (*len)
		*s++ = *len++;
	*s++ = conv;
	*s = '\0';
}

/* Bind conversion @c to field @field: choose how to print it. */
static void pf_add_conv(struct pf_build *b, const struct tk_spec *c,
			unsigned field)
{
	struct pf_seg *seg = pf_add_seg(b, field);
	unsigned kind = b->fields[field].kind;
	bool left = c->flags & TK_SPEC_MINUS;
	bool integer = kind != TK_KIND_DOUBLE && kind != TK_KIND_CHARS &&
		       kind != TK_KIND_STRING && kind != TK_KIND_BYTES;
	/* Only a width and '-': padding we do ourselves. */
	bool plain = !(c->flags & ~TK_SPEC_MINUS) && c->prec < 0;
	bool plain_p = !(c->flags & TK_SPEC_ZERO) && c->prec < 0; /* %p */

	seg->left = left;
	seg->width = c->width > 0 ? (uint32_t)c->width : 0;

	switch (c->conv) {
	case 'd':
	case 'i':
	case 'u':
	case 'x':
	case 'X':
	case 'o':
		if (!integer)
			break;
		if (!plain) {
			bool sgn = c->conv == 'd' || c->conv == 'i';

			seg->op = sgn ? PF_SPEC_S : PF_SPEC_U;
			pf_build_spec(seg->spec, c, c->flags, "ll", c->conv);
		} else if (c->conv == 'd' || c->conv == 'i') {
			seg->op = PF_SDEC;
		} else if (c->conv == 'u') {
			seg->op = PF_UDEC;
		} else if (c->conv == 'x') {
			seg->op = PF_HEX;
		} else if (c->conv == 'X') {
			seg->op = PF_HEXUP;
		} else {
			seg->op = PF_OCT;
		}
		return;
	case 'c':
		if (!integer)
			break;
		seg->op = PF_CHAR; /* other flags mean nothing to %c */
		return;
	case 'p':
		if (!integer)
			break;
		if (plain_p) {
			seg->op = PF_PTR;
		} else {
			/*
			 * glibc prints a non-NULL %p as %#lx with its width,
			 * precision and flags; a sign means nothing here.
			 */
			seg->op = PF_SPEC_P;
			pf_build_spec(seg->spec, c,
				      (c->flags | TK_SPEC_HASH) &
					      ~(TK_SPEC_PLUS | TK_SPEC_SPACE),
				      "ll", 'x');
		}
		return;
	case 's':
		if (kind != TK_KIND_CHARS && kind != TK_KIND_STRING)
			break;
		seg->op = kind == TK_KIND_STRING ? PF_STR : PF_CHARS;
		seg->prec = c->prec;
		return;
	default: /* f F e E g G a A */
		if (kind != TK_KIND_DOUBLE)
			break;
		seg->op = PF_SPEC_D;
		pf_build_spec(seg->spec, c, c->flags, "", c->conv);
		return;
	}
	pf_set_natural(seg, kind, left, c->width);
}

/*
 * Parse the conversion whose '%' is at fmt[at] (printf-spec.c); on success
 * store it in *c, set *next past it and return 0.
 */
static int pf_parse_conv(struct pf_build *b, const char *fmt, size_t at,
			 struct tk_spec *c, size_t *next)
{
	unsigned col = (unsigned)at + 1;
	unsigned char ch;

	switch (tk_spec_parse(fmt, at, c)) {
	case TK_SPEC_OK:
		*next = c->end;
		return 0;
	case TK_SPEC_E_WIDTH:
		return pf_error(b, "print format has a width above %d at column %u",
				TK_SPEC_WIDTH_MAX, col);
	case TK_SPEC_E_PREC:
		return pf_error(b, "print format has a precision above %d at column %u",
				TK_SPEC_WIDTH_MAX, col);
	case TK_SPEC_E_END:
		return pf_error(b, "print format ends inside the conversion at column %u",
				col);
	case TK_SPEC_E_CONV:
		ch = (unsigned char)c->conv;
		if (ch > ' ' && ch < 0x7f)
			return pf_error(b, "print format has unknown conversion '%c' at column %u",
					ch, col);
		return pf_error(b, "print format has unknown conversion '\\x%02x' at column %u",
				ch, col);
	default: /* TK_SPEC_E_STAR */
		return pf_error(b, "print format uses '*' at column %u: write the width and precision in the format",
				col);
	}
}

static bool pf_isspace(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

/* Field index of the name s[0..n), or -1. */
static int pf_find_field(const struct tk_field_desc *fields, unsigned nfields,
			 const char *s, size_t n)
{
	unsigned i;

	for (i = 0; i < nfields; i++) {
		const char *name = fields[i].name;

		if (strnlen(name, TK_FIELD_NAME_MAX) == n &&
		    !memcmp(name, s, n))
			return (int)i;
	}
	return -1;
}

/*
 * Resolve the comma-separated names in @args to field indexes in *idx
 * (allocated, the caller frees) and their count in *nargs.  An empty or
 * all-blank @args gives no names.
 */
static int pf_parse_args(struct pf_build *b, const char *args, unsigned **idx,
			 unsigned *nargs)
{
	const char *s = args, *end;
	unsigned n = 1, k = 0;
	int field;

	*idx = NULL;
	*nargs = 0;
	while (pf_isspace(*s))
		s++;
	if (!*s)
		return 0;
	for (end = s; *end; end++)
		n += *end == ',';
	*idx = malloc(n * sizeof(**idx));
	if (!*idx)
		return -ENOMEM;

	for (;;) {
		const char *name, *stop;
		size_t len;

		while (pf_isspace(*s))
			s++;
		name = s;
		while (*s && *s != ',')
			s++;
		stop = s;
		while (stop > name && pf_isspace(stop[-1]))
			stop--;
		len = (size_t)(stop - name);
		if (!len)
			return pf_error(b, "print format argument %u is empty",
					k + 1);
		field = pf_find_field(b->fields, b->nfields, name, len);
		if (field < 0)
			return pf_error(b, "print format names unknown field '%.*s'",
					len > 200 ? 200 : (int)len, name);
		(*idx)[k++] = (unsigned)field;
		if (!*s)
			break;
		s++; /* the comma */
	}
	*nargs = k;
	return 0;
}

static int pf_prepare_default(struct pf_build *b)
{
	unsigned i;

	for (i = 0; i < b->nfields; i++) {
		const char *name = b->fields[i].name;
		struct pf_seg *seg;

		if (i)
			pf_add_text(b, " ", 1);
		pf_add_text(b, name, strnlen(name, TK_FIELD_NAME_MAX));
		pf_add_text(b, "=", 1);
		seg = pf_add_seg(b, i);
		pf_set_natural(seg, b->fields[i].kind, false, 0);
	}
	return 0;
}

static const char *pf_plural(unsigned n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static int pf_prepare_fmt(struct pf_build *b, const char *fmt,
			  const char *args)
{
	unsigned *idx, nargs, nconv = 0;
	size_t i = 0, lit;
	int ret;

	ret = pf_parse_args(b, args, &idx, &nargs);
	if (ret)
		goto out;

	while (fmt[i]) {
		struct tk_spec c;
		unsigned field;

		for (lit = i; fmt[i] && fmt[i] != '%'; i++)
			;
		pf_add_text(b, fmt + lit, i - lit);
		if (!fmt[i])
			break;
		if (fmt[i + 1] == '%') {
			pf_add_text(b, "%", 1);
			i += 2;
			continue;
		}
		ret = pf_parse_conv(b, fmt, i, &c, &i);
		if (ret)
			goto out;
		nconv++;
		if (idx) {
			if (nconv > nargs)
				continue; /* counted, reported below */
			field = idx[nconv - 1];
		} else {
			if (nconv > b->nfields)
				continue;
			field = nconv - 1;
		}
		pf_add_conv(b, &c, field);
	}

	if (idx && nconv > nargs)
		ret = pf_error(b, "print format has %u %s but %u %s", nconv,
			       pf_plural(nconv, "conversion", "conversions"),
			       nargs,
			       pf_plural(nargs, "argument", "arguments"));
	else if (!idx && nconv > b->nfields)
		ret = pf_error(b, "print format has %u %s but the event has %u %s",
			       nconv,
			       pf_plural(nconv, "conversion", "conversions"),
			       b->nfields,
			       pf_plural(b->nfields, "field", "fields"));
out:
	free(idx);
	return ret;
}

int tk_print_prepare(const char *fmt, const char *args,
		     const struct tk_field_desc *fields, unsigned nfields,
		     struct tk_print **out, char *err, size_t errlen)
{
	struct pf_build b = {
		.fields = fields,
		.nfields = nfields,
		.err = err,
		.errlen = errlen,
	};
	size_t nseg, ntext, i;
	struct tk_print *p;
	int ret;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!fmt)
		fmt = "";
	if (!args)
		args = "";

	/* Upper bounds: each '%' adds a conversion and the literal after it. */
	if (*fmt) {
		nseg = 1;
		for (i = 0; fmt[i]; i++)
			nseg += 2 * (fmt[i] == '%');
		ntext = i;
	} else {
		nseg = 2 * (size_t)nfields;
		ntext = 0;
		for (i = 0; i < nfields; i++)
			ntext += strnlen(fields[i].name, TK_FIELD_NAME_MAX) + 2;
	}
	if (ntext >= UINT32_MAX)
		return pf_error(&b, "print format is too long");

	p = malloc(sizeof(*p) + nseg * sizeof(struct pf_seg) + ntext + 1);
	if (!p)
		return -ENOMEM;
	p->nseg = 0;
	p->seg = (struct pf_seg *)(p + 1);
	p->text = (char *)(p->seg + nseg);
	b.p = p;

	ret = *fmt ? pf_prepare_fmt(&b, fmt, args) : pf_prepare_default(&b);
	if (ret) {
		free(p);
		return ret;
	}
	*out = p;
	return 0;
}

void tk_print_free(struct tk_print *p)
{
	free(p);
}

/* ---- formatting --------------------------------------------------------- */

/*
 * The output: text goes to buf[0..cap) (cap is buflen - 1, leaving room
 * for the NUL); pos counts every byte of the full text, written or not.
 */
struct pf_out {
	char *buf;
	size_t cap;
	size_t pos;
};

/*
 * Copy n bytes; most pieces of a line are short, and a call to memcpy
 * costs more than the copy.  Overlapping fixed-size moves stay within
 * s[0..n) and d[0..n).
 */
static inline void pf_copy(char *d, const char *s, size_t n)
{
	if (n > 16) {
		memcpy(d, s, n);
	} else if (n >= 8) {
		uint64_t a, b;

		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;

		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

static inline void pf_put(struct pf_out *o, const char *s, size_t n)
{
	if (o->pos < o->cap) {
		size_t room = o->cap - o->pos;

		pf_copy(o->buf + o->pos, s, n < room ? n : room);
	}
	o->pos += n;
}

static void pf_pad(struct pf_out *o, size_t n)
{
	if (o->pos < o->cap) {
		size_t room = o->cap - o->pos;

		memset(o->buf + o->pos, ' ', n < room ? n : room);
	}
	o->pos += n;
}

/* Put s[0..n), padded to the segment's width. */
static inline void pf_put_padded(struct pf_out *o, const struct pf_seg *seg,
				 const char *s, size_t n)
{
	if (seg->width <= n) {
		pf_put(o, s, n);
	} else if (seg->left) {
		pf_put(o, s, n);
		pf_pad(o, seg->width - n);
	} else {
		pf_pad(o, seg->width - n);
		pf_put(o, s, n);
	}
}

static inline int64_t pf_signed(const struct pf_seg *seg, uint64_t v)
{
	v &= seg->mask;
	return (int64_t)((v ^ seg->sign) - seg->sign);
}

static void pf_snprintf(struct pf_out *o, const char *spec, ...)
	__attribute__((format(printf, 2, 3)));

/* snprintf into the output with the spec built at prepare time. */
static void pf_snprintf(struct pf_out *o, const char *spec, ...)
{
	va_list ap;
	int n;

	va_start(ap, spec);
	if (o->pos < o->cap)
		n = vsnprintf(o->buf + o->pos, o->cap - o->pos + 1, spec, ap);
	else
		n = vsnprintf(NULL, 0, spec, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

static void pf_bytes(struct pf_out *o, const struct pf_seg *seg,
		     const unsigned char *s, uint32_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = len ? 3 * (size_t)len + 1 : 2;
	char pair[3];
	uint32_t i;

	if (seg->width > n && !seg->left)
		pf_pad(o, seg->width - n);
	pf_put(o, "{", 1);
	for (i = 0; i < len; i++) {
		pair[0] = ',';
		pair[1] = hex[s[i] >> 4];
		pair[2] = hex[s[i] & 15];
		if (i)
			pf_put(o, pair, 3);
		else
			pf_put(o, pair + 1, 2);
	}
	pf_put(o, "}", 1);
	if (seg->width > n && seg->left)
		pf_pad(o, seg->width - n);
}

size_t tk_print_format(const struct tk_print *p, const struct tk_value *values,
		       char *buf, size_t buflen)
{
	struct pf_out o = { .buf = buf, .cap = buflen ? buflen - 1 : 0 };
	const struct pf_seg *seg = p->seg, *end = p->seg + p->nseg;
	char tmp[32], *e = tmp + sizeof(tmp), *s;

	for (; seg < end; seg++) {
		const struct tk_value *v;
		uint64_t u;
		int64_t i;
		size_t n;

		if (seg->op == PF_LIT) {
			pf_put(&o, p->text + seg->off, seg->len);
			continue;
		}
		v = &values[seg->field];
		u = v->u & seg->mask;
		switch (seg->op) {
		case PF_SDEC:
			i = pf_signed(seg, v->u);
			s = tk_num_dec(e, i < 0 ? 0 - (uint64_t)i : (uint64_t)i);
			if (i < 0)
				*--s = '-';
			break;
		case PF_UDEC:
			s = tk_num_dec(e, u);
			break;
		case PF_HEX:
			s = tk_num_hex(e, u, false);
			break;
		case PF_HEXUP:
			s = tk_num_hex(e, u, true);
			break;
		case PF_OCT:
			s = tk_num_oct(e, u);
			break;
		case PF_CHAR:
			s = e - 1;
			*s = (char)(v->u & 0xff);
			break;
		case PF_PTR:
			if (!u) {
				s = e - 5;
				memcpy(s, "(nil)", 5);
				break;
			}
			/* fall through */
		case PF_ADDR:
			s = tk_num_hex(e, u, false);
			*--s = 'x';
			*--s = '0';
			break;
		case PF_STR:
		case PF_CHARS:
			if (!v->str) {
				pf_put_padded(&o, seg, "(null)", 6);
				continue;
			}
			n = v->len;
			if (seg->prec >= 0 && n > (size_t)seg->prec)
				n = (size_t)seg->prec;
			if (seg->op == PF_CHARS) {
				const char *nul = memchr(v->str, '\0', n);

				if (nul)
					n = (size_t)(nul - v->str);
			}
			pf_put_padded(&o, seg, v->str, n);
			continue;
		case PF_BYTES:
			if (!v->str)
				pf_put_padded(&o, seg, "(null)", 6);
			else
				pf_bytes(&o, seg, (const unsigned char *)v->str,
					 v->len);
			continue;
		case PF_SPEC_S:
			i = pf_signed(seg, v->u);
			pf_snprintf(&o, seg->spec, (long long)i);
			continue;
		case PF_SPEC_P:
			if (!u) {
				pf_put_padded(&o, seg, "(nil)", 5);
				continue;
			}
			/* fall through */
		case PF_SPEC_U:
			pf_snprintf(&o, seg->spec, (unsigned long long)u);
			continue;
		case PF_SPEC_D:
			pf_snprintf(&o, seg->spec, v->d);
			continue;
		default:
			continue;
		}
		pf_put_padded(&o, seg, s, (size_t)(e - s));
	}

	if (buflen)
		buf[o.pos < o.cap ? o.pos : o.cap] = '\0';
	return o.pos;
}

/* ---- pieces ------------------------------------------------------------- */

unsigned tk_print_npieces(const struct tk_print *p)
{
	return p->nseg;
}

/* "%[-][width]" then @conv. */
static void pf_piece_spec(char *s, const struct pf_seg *seg, const char *conv)
{
	*s++ = '%';
	if (seg->left)
		*s++ = '-';
	if (seg->width)
		s += tk_num_put_dec(s, seg->width, 0, ' ');
	if (seg->prec >= 0 && (seg->op == PF_STR || seg->op == PF_CHARS)) {
		*s++ = '.';
		s += tk_num_put_dec(s, (unsigned)seg->prec, 0, ' ');
	}
	strcpy(s, conv);
}

void tk_print_piece(const struct tk_print *p, unsigned i,
		    struct tk_print_piece *out)
{
	const struct pf_seg *seg = &p->seg[i];
	static const struct {
		enum tk_print_as as;
		const char *conv;
	} plain[] = {
		[PF_SDEC] = { TK_PRINT_S64, "lld" },
		[PF_UDEC] = { TK_PRINT_U64, "llu" },
		[PF_HEX] = { TK_PRINT_U64, "llx" },
		[PF_HEXUP] = { TK_PRINT_U64, "llX" },
		[PF_OCT] = { TK_PRINT_U64, "llo" },
		[PF_CHAR] = { TK_PRINT_U64, "c" },
		[PF_PTR] = { TK_PRINT_PTR, "p" },
		[PF_STR] = { TK_PRINT_STR, "s" },
		[PF_CHARS] = { TK_PRINT_STR, "s" },
	};

	memset(out, 0, sizeof(*out));
	out->field = seg->field;
	switch (seg->op) {
	case PF_LIT:
		out->as = TK_PRINT_LITERAL;
		out->text = p->text + seg->off;
		out->len = seg->len;
		return;
	case PF_BYTES:
		out->as = TK_PRINT_BYTES;
		return;
	case PF_SPEC_S:
	case PF_SPEC_U:
	case PF_SPEC_P:
	case PF_SPEC_D:
		out->as = seg->op == PF_SPEC_S ? TK_PRINT_S64 :
			  seg->op == PF_SPEC_D ? TK_PRINT_DOUBLE : TK_PRINT_U64;
		snprintf(out->spec, sizeof(out->spec), "%s", seg->spec);
		return;
	case PF_ADDR:
		/* a pointer's natural form (its width, if any, is lost) */
		out->as = TK_PRINT_U64;
		strcpy(out->spec, "0x%llx");
		return;
	default:
		out->as = plain[seg->op].as;
		pf_piece_spec(out->spec, seg, plain[seg->op].conv);
		return;
	}
}
