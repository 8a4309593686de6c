/* SPDX-License-Identifier: MIT */
/*
 * event-info.c - check descriptors and decode records (event-info.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event-info.h"
#include "printfmt.h"

static const char *desc_string(const char *base, uint32_t size, uint16_t off)
{
	if (off < sizeof(struct tk_desc_head) || off >= size)
		return NULL;
	if (!memchr(base + off, '\0', size - off))
		return NULL;
	return base + off;
}

static int bad(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	return -EINVAL;
}

/* A C identifier, as TK_FIELDS and the markers name fields: a name goes
 * into the CTF metadata (TSDL) as it is, and on report's lines. */
static bool is_identifier(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Whether @s holds a control character (C0 or DEL). */
static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static int check_field(const struct tk_field_desc *f, char *err, size_t errlen)
{
	if (!memchr(f->name, '\0', sizeof(f->name)) || !f->name[0])
		return bad(err, errlen, "event descriptor has a field without a name");
	if (!is_identifier(f->name))
		return bad(err, errlen, "event descriptor has a field whose name is no identifier");
	switch (f->kind) {
	case TK_KIND_INT:
	case TK_KIND_UINT:
		if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
			return bad(err, errlen, "event descriptor has an integer of bad size");
		return 0;
	case TK_KIND_PTR:
	case TK_KIND_DOUBLE:
		if (f->size != 8)
			return bad(err, errlen, "event descriptor has a field of bad size");
		return 0;
	case TK_KIND_CHARS:
		if (f->array_len == 0 || f->array_len > (1u << 20))
			return bad(err, errlen, "event descriptor has a char array of bad length");
		return 0;
	case TK_KIND_STRING:
	case TK_KIND_BYTES:
		return 0;
	default:
		return bad(err, errlen, "event descriptor has a field of unknown kind");
	}
}

static uint32_t field_min_size(const struct tk_field_desc *f)
{
	switch (f->kind) {
	case TK_KIND_CHARS:
		return f->array_len;
	case TK_KIND_STRING:
		return 1;
	case TK_KIND_BYTES:
		return 4;
	default:
		return f->size;
	}
}

void tk_marker_split(const char *name, char *provider, size_t plen,
		     const char **event)
{
	const char *us = strchr(name, '_');

	if (us && us != name && us[1]) {
		snprintf(provider, plen, "%.*s", (int)(us - name), name);
		*event = us + 1;
	} else {
		snprintf(provider, plen, "mark");
		*event = name;
	}
}

int tk_event_info_parse(const void *buf, size_t len, struct tk_event_info *out,
			size_t *used, char *err, size_t errlen)
{
	const char *base = buf;
	struct tk_desc_head h;
	const char *prov, *name, *fmt, *args, *event = NULL;
	char mprov[64];

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return bad(err, errlen, "event descriptor is truncated");
	memcpy(&h, base, sizeof(h));
	if (h.magic != TK_DESC_MAGIC)
		return bad(err, errlen, "event descriptor has a bad magic number");
	if (h.version != TK_DESC_VERSION)
		return bad(err, errlen, "event descriptor has an unknown version");
	if (h.size > len || h.size < sizeof(h) ||
	    (size_t)h.nfields * sizeof(struct tk_field_desc) > h.size - sizeof(h))
		return bad(err, errlen, "event descriptor is truncated");
	prov = desc_string(base, h.size, h.off_provider);
	name = desc_string(base, h.size, h.off_name);
	fmt = desc_string(base, h.size, h.off_fmt);
	args = desc_string(base, h.size, h.off_args);
	if (!prov || !name || !fmt || !args || !name[0] || has_control(prov) ||
	    has_control(name))
		return bad(err, errlen, "event descriptor has a bad string");
	out->fields = calloc(h.nfields ? h.nfields : 1, sizeof(*out->fields));
	if (!out->fields)
		return -ENOMEM;
	memcpy(out->fields, base + sizeof(h), h.nfields * sizeof(*out->fields));
	out->nfields = h.nfields;
	for (unsigned i = 0; i < h.nfields; i++) {
		int e = check_field(&out->fields[i], err, errlen);

		if (e) {
			tk_event_info_free(out);
			return e;
		}
		out->min_size += field_min_size(&out->fields[i]);
	}
	out->flags = h.flags;
	if (h.flags & TK_DESC_MARKER) {
		tk_marker_split(name, mprov, sizeof(mprov), &event);
		prov = mprov;
	} else {
		event = name;
	}
	out->provider = strdup(prov);
	out->name = strdup(event);
	out->fmt = strdup(fmt);
	out->args = strdup(args);
	if (asprintf(&out->full_name, "%s:%s", prov, event) < 0)
		out->full_name = NULL;
	if (!out->provider || !out->name || !out->fmt || !out->args ||
	    !out->full_name) {
		tk_event_info_free(out);
		return -ENOMEM;
	}
	if (used)
		*used = h.size;
	return 0;
}

int tk_meta_next(const char **p, const char *end, struct tk_event_info *ev)
{
	char why[160];
	size_t used;

	while (*p && end - *p >= (long)sizeof(struct tk_desc_head)) {
		if (tk_event_info_parse(*p, (size_t)(end - *p), ev, &used, why,
					sizeof(why)) == 0) {
			*p += used;
			return 0;
		}
		*p += 8;
	}
	return -ENOENT;
}

void tk_event_info_free(struct tk_event_info *ev)
{
	if (!ev)
		return;
	free(ev->provider);
	free(ev->name);
	free(ev->full_name);
	free(ev->fmt);
	free(ev->args);
	free(ev->fields);
	tk_print_free(ev->print);
	memset(ev, 0, sizeof(*ev));
}

static uint64_t load_uint(const char *p, unsigned size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1: memcpy(&u8, p, 1); return u8;
	case 2: memcpy(&u16, p, 2); return u16;
	case 4: memcpy(&u32, p, 4); return u32;
	default: memcpy(&u64, p, 8); return u64;
	}
}

static int64_t load_int(const char *p, unsigned size)
{
	int8_t i8;
	int16_t i16;
	int32_t i32;
	int64_t i64;

	switch (size) {
	case 1: memcpy(&i8, p, 1); return i8;
	case 2: memcpy(&i16, p, 2); return i16;
	case 4: memcpy(&i32, p, 4); return i32;
	default: memcpy(&i64, p, 8); return i64;
	}
}

long tk_record_decode(const struct tk_event_info *ev, const char *p,
		      size_t avail, struct tk_value *values)
{
	size_t off = 0;

	if (avail < ev->min_size)
		return -1;
	for (unsigned i = 0; i < ev->nfields; i++) {
		const struct tk_field_desc *f = &ev->fields[i];
		struct tk_value *v = &values[i];
		const char *q = p + off, *nul;
		uint32_t n;

		switch (f->kind) {
		case TK_KIND_INT:
			if (avail - off < f->size)
				return -1;
			v->i = load_int(q, f->size);
			off += f->size;
			break;
		case TK_KIND_UINT:
		case TK_KIND_PTR:
			if (avail - off < f->size)
				return -1;
			v->u = load_uint(q, f->size);
			off += f->size;
			break;
		case TK_KIND_DOUBLE:
			if (avail - off < 8)
				return -1;
			memcpy(&v->d, q, 8);
			off += 8;
			break;
		case TK_KIND_CHARS:
			if (avail - off < f->array_len)
				return -1;
			nul = memchr(q, '\0', f->array_len);
			v->str = q;
			v->len = nul ? (uint32_t)(nul - q) : f->array_len;
			off += f->array_len;
			break;
		case TK_KIND_STRING:
			nul = memchr(q, '\0', avail - off);
			if (!nul)
				return -1;
			v->str = q;
			v->len = (uint32_t)(nul - q);
			off += v->len + 1;
			break;
		case TK_KIND_BYTES:
			if (avail - off < 4)
				return -1;
			memcpy(&n, q, 4);
			if (avail - off - 4 < n)
				return -1;
			v->str = q + 4;
			v->len = n;
			off += 4 + (size_t)n;
			break;
		default:
			return -1;
		}
	}
	return (long)off;
}

static unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[128];

	if (la >= 127 || lb >= 127)
		return 1000;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *tk_closest_name(const char *name, const char *const *names,
			    unsigned count)
{
	const char *best = NULL;
	unsigned best_d = 1000, limit = (unsigned)strlen(name) / 3 + 2;

	for (unsigned i = 0; i < count; i++) {
		unsigned d = edit_distance(name, names[i]);

		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	return best_d <= limit ? best : NULL;
}

bool tk_event_is_stack(const char *system, const char *name)
{
	return !strcmp(system, "ftrace") &&
	       (!strcmp(name, "user_stack") || !strcmp(name, "kernel_stack") ||
		!strcmp(name, "event_stack"));
}
