/* SPDX-License-Identifier: MIT */
/*
 * kernel-fields.c - a kernel event's fields as values (kernel-fields.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include "kernel-fields.h"

int tk_kfields_init(struct tk_kfields *kf, struct tep_event *ev)
{
	struct tep_format_field **all[2] = { tep_event_common_fields(ev),
					      tep_event_fields(ev) };
	unsigned n = 0;
	int ret = 0;

	memset(kf, 0, sizeof(*kf));
	for (int pass = 0; pass < 2; pass++)
		for (struct tep_format_field **f = all[pass]; f && *f; f++)
			n++;
	kf->fields = calloc(n + 1, sizeof(*kf->fields));
	kf->at = calloc(n + 1, sizeof(*kf->at));
	if (!kf->fields || !kf->at) {
		ret = -ENOMEM;
		goto out;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (struct tep_format_field **fp = all[pass]; fp && *fp; fp++) {
			struct tep_format_field *f = *fp;
			struct tk_field_desc *d = &kf->fields[kf->nfields];

			if (f->flags & TEP_FIELD_IS_DYNAMIC) {
				if (!(f->flags & TEP_FIELD_IS_STRING))
					continue;
				d->kind = TK_KIND_STRING;
			} else if (f->flags & TEP_FIELD_IS_ARRAY) {
				if (!(f->flags & TEP_FIELD_IS_STRING) || f->size <= 0)
					continue;
				d->kind = TK_KIND_CHARS;
				d->array_len = (uint32_t)f->size;
			} else if (f->size == 1 || f->size == 2 || f->size == 4 ||
				   f->size == 8) {
				d->kind = f->flags & TEP_FIELD_IS_SIGNED ? TK_KIND_INT
									 : TK_KIND_UINT;
				d->size = (uint8_t)f->size;
			} else {
				continue;
			}
			snprintf(d->name, sizeof(d->name), "%s", f->name);
			kf->at[kf->nfields++] = (struct tk_kfield_at){
				.off = (uint32_t)f->offset,
				.size = (uint32_t)f->size,
				.kind = d->kind,
				.relative = f->flags & TEP_FIELD_IS_RELATIVE,
			};
		}
	}
out:
	free(all[0]);
	free(all[1]);
	return ret;
}

bool tk_kfields_values(const struct tk_kfields *kf, const unsigned char *data,
		       unsigned size, struct tk_value *values)
{
	for (unsigned i = 0; i < kf->nfields; i++) {
		const struct tk_kfield_at *a = &kf->at[i];
		struct tk_value *v = &values[i];

		if (a->off + a->size > size)
			return false;
		switch (a->kind) {
		case TK_KIND_INT:
		case TK_KIND_UINT: {
			/* fixed-size loads: a memcpy of variable size is a call */
			const unsigned char *p = data + a->off;
			uint64_t u;

			switch (a->size) {
			case 1:
				u = *p;
				break;
			case 2: {
				uint16_t x;

				memcpy(&x, p, 2);
				u = x;
				break;
			}
			case 4: {
				uint32_t x;

				memcpy(&x, p, 4);
				u = x;
				break;
			}
			default:
				memcpy(&u, p, 8);
				break;
			}
			if (a->kind == TK_KIND_INT && a->size < 8 &&
			    (u >> (a->size * 8 - 1)) & 1)
				u |= ~0ull << (a->size * 8);
			v->u = u;
			break;
		}
		case TK_KIND_CHARS:
			v->str = (const char *)data + a->off;
			v->len = (uint32_t)strnlen(v->str, a->size);
			break;
		default: { /* __data_loc: u16 offset, u16 length */
			uint32_t loc;
			unsigned o, l;

			memcpy(&loc, data + a->off, 4);
			o = loc & 0xffff;
			l = loc >> 16;
			if (a->relative)
				o += a->off + 4;
			if (o + l > size)
				return false;
			v->str = (const char *)data + o;
			v->len = (uint32_t)strnlen(v->str, l);
		}
		}
	}
	return true;
}

void tk_kfields_free(struct tk_kfields *kf)
{
	free(kf->fields);
	free(kf->at);
	memset(kf, 0, sizeof(*kf));
}
