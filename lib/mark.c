/* SPDX-License-Identifier: MIT */
/*
 * mark.c - recording printf-style markers (marker.h).
 *
 * A marker's arguments arrive as values typed by their C types; they are
 * stored as the fields of its descriptor say (a0, a1, ...), the format is
 * kept in the descriptor and applied only when the trace is read.
 */
#define _GNU_SOURCE
#include <string.h>
#include "internal.h"

static uint32_t value_size(const struct tk_field_desc *f,
			   const struct tk_value *v)
{
	switch (f->kind) {
	case TK_KIND_INT:
	case TK_KIND_UINT:
		return f->size;
	case TK_KIND_STRING:
		return v->len + 1;
	default:
		return 8;
	}
}

static char *put_value(char *p, const struct tk_field_desc *f,
		       const struct tk_value *v)
{
	switch (f->kind) {
	case TK_KIND_INT:
	case TK_KIND_UINT:
		/* little-endian: the low bytes of the 64-bit value */
		memcpy(p, &v->u, f->size);
		return p + f->size;
	case TK_KIND_STRING:
		memcpy(p, v->str, v->len);
		p[v->len] = '\0';
		return p + v->len + 1;
	default:
		memcpy(p, &v->u, 8);
		return p + 8;
	}
}

TK_EXPORT void tk__mark_record(struct tk_event *ev,
			       const struct tk_value *values, unsigned n)
{
	const struct tk_desc_head *d = ev->desc;
	const struct tk_field_desc *f;
	uint32_t size = 0;
	uint8_t rec;
	char *p;

	if (!d || n != d->nfields)
		return;
	f = (const struct tk_field_desc *)(d + 1);
	if (__atomic_load_n(&ev->filter, __ATOMIC_RELAXED) &&
	    !tk__filter_pass(ev, values))
		return;
	rec = __atomic_load_n(&ev->record, __ATOMIC_RELAXED);
	if (!rec)
		return;
	for (unsigned i = 0; i < n; i++)
		size += value_size(&f[i], &values[i]);
	p = tk__reserve(size, ev->id);
	if (!p)
		return;
	for (unsigned i = 0; i < n; i++)
		p = put_value(p, &f[i], &values[i]);
	tk__commit(p);
	if (rec & TK__RECORD_STACK) {
		/* from the tk_mark() call site */
		tk_ustack_put((uintptr_t)__builtin_return_address(0),
			      (const uintptr_t *)__builtin_frame_address(0));
		__asm__ __volatile__("" ::: "memory"); /* no tail call */
	}
}
