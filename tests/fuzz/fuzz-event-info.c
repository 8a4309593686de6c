/* SPDX-License-Identifier: MIT */
/*
 * fuzz-event-info.c - libFuzzer entry for event descriptors and records.
 *
 * The input is parsed as an event descriptor (include/tracekit/desc.h).  A
 * descriptor that does not parse must leave an error message and nothing
 * to free.  One that parses must be consistent (sizes, names, min_size),
 * and the rest of the input is then decoded as a run of record payloads,
 * each copied to a block of its exact size so that a read past the end is
 * caught.  For each record of n bytes, decoding the same bytes with
 * exactly n available must give n again, and with n - 1 must fail.  Some
 * other slices (the whole input, a few offsets, zeros and 0xff bytes of
 * min_size) are decoded too, and the decoded values are printed with the
 * event's print format (or the default layout when it does not prepare),
 * as `tracekit report` does.
 *
 *   tests/fuzz/run 1    # builds it in build-fuzz/ (tests/fuzz/meson.build)
 *   build-fuzz/tests/fuzz/fuzz-event-info \
 *	-max_len=8192 tests/fuzz/corpus/fuzz-event-info
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/event-info.h"
#include "format/printfmt.h"

#define MAX_RECORDS 256
#define MAX_PATTERN (64u << 10)

static void check(int ok)
{
	if (!ok)
		__builtin_trap();
}

/* Read every byte of @p[0..n), so that ASan checks it. */
static unsigned touch(const char *p, size_t n)
{
	unsigned sum = 0;

	for (size_t k = 0; k < n; k++)
		sum += ((const volatile unsigned char *)p)[k];
	return sum;
}

static void check_values(const struct tk_event_info *ev, const char *p,
			 long n, const struct tk_value *v)
{
	const char *end = p + n;

	for (unsigned i = 0; i < ev->nfields; i++) {
		const struct tk_field_desc *f = &ev->fields[i];

		switch (f->kind) {
		case TK_KIND_CHARS:
			check(v[i].str >= p && v[i].len <= f->array_len &&
			      v[i].str + f->array_len <= end);
			check(v[i].len == f->array_len || v[i].str[v[i].len] == '\0');
			check(!memchr(v[i].str, '\0', v[i].len));
			break;
		case TK_KIND_STRING:
			check(v[i].str >= p && v[i].str + v[i].len < end);
			check(v[i].str[v[i].len] == '\0');
			check(!memchr(v[i].str, '\0', v[i].len));
			break;
		case TK_KIND_BYTES:
			check(v[i].str >= p + 4 && v[i].str + v[i].len <= end);
			break;
		default:
			continue;
		}
		(void)touch(v[i].str, v[i].len);
	}
}

static void print_values(const struct tk_print *pr,
			 const struct tk_value *values)
{
	size_t n, m;
	char *full, small[16];

	n = tk_print_format(pr, values, NULL, 0);
	if (n > (1u << 24))
		return;
	full = malloc(n + 1);
	if (!full)
		return;
	check(tk_print_format(pr, values, full, n + 1) == n && full[n] == '\0');
	m = tk_print_format(pr, values, small, sizeof(small));
	check(m == n);
	m = n < sizeof(small) - 1 ? n : sizeof(small) - 1;
	check(memcmp(small, full, m) == 0 && small[m] == '\0');
	free(full);
}

/*
 * Decode the copy of @src[0..avail) held in a block of exactly that size,
 * and print the values with @pr, if any, while the block is there.
 */
static long decode_copy(const struct tk_event_info *ev,
			const struct tk_print *pr, const uint8_t *src,
			size_t avail, struct tk_value *values)
{
	char *buf = malloc(avail); /* ASan: even 0 bytes are a block */
	long n;

	if (!buf && !avail)
		buf = malloc(1);
	if (!buf)
		return -2;
	if (avail)
		memcpy(buf, src, avail);
	n = tk_record_decode(ev, buf, avail, values);
	check(n >= -1 && (n < 0 || (size_t)n <= avail));
	if (n >= 0) {
		check((size_t)n >= ev->min_size);
		check_values(ev, buf, n, values);
		if (pr)
			print_values(pr, values);
	}
	free(buf);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct tk_event_info zero;
	struct tk_event_info ev;
	struct tk_print *pr = NULL;
	struct tk_value *values;
	const char *names[4];
	size_t used = 0, errlen, rest, off;
	uint64_t min_size = 0;
	char *err, why[128];
	uint8_t *pattern;
	unsigned i;
	long n;
	int ret;

	/* Sometimes a short error buffer: the message must be cut safely. */
	errlen = size & 1 ? 6 : 200;
	err = malloc(errlen);
	if (!err)
		return 0;
	memset(err, 'x', errlen);
	ret = tk_event_info_parse(data, size, &ev, &used, err, errlen);
	if (ret) {
		check(ret == -EINVAL || ret == -ENOMEM);
		check(memcmp(&ev, &zero, sizeof(ev)) == 0);
		if (ret == -EINVAL)
			check(err[0] && memchr(err, '\0', errlen));
		free(err);
		return 0;
	}
	free(err);

	/* What a parsed descriptor promises. */
	check(used >= sizeof(struct tk_desc_head) && used <= size);
	check(sizeof(struct tk_desc_head) +
	      (size_t)ev.nfields * sizeof(struct tk_field_desc) <= used);
	check(ev.fields && ev.provider && ev.name && ev.fmt && ev.args &&
	      ev.full_name && ev.name[0]);
	check(strlen(ev.full_name) == strlen(ev.provider) + 1 + strlen(ev.name));
	check(strncmp(ev.full_name, ev.provider, strlen(ev.provider)) == 0);
	check(ev.full_name[strlen(ev.provider)] == ':');
	check(strcmp(ev.full_name + strlen(ev.provider) + 1, ev.name) == 0);
	check(!ev.print && !ev.print_failed);
	for (i = 0; i < ev.nfields; i++) {
		const struct tk_field_desc *f = &ev.fields[i];

		check(f->name[0] && memchr(f->name, '\0', sizeof(f->name)));
		switch (f->kind) {
		case TK_KIND_INT:
		case TK_KIND_UINT:
			check(f->size == 1 || f->size == 2 || f->size == 4 ||
			      f->size == 8);
			min_size += f->size;
			break;
		case TK_KIND_PTR:
		case TK_KIND_DOUBLE:
			check(f->size == 8);
			min_size += 8;
			break;
		case TK_KIND_CHARS:
			check(f->array_len >= 1 && f->array_len <= (1u << 20));
			min_size += f->array_len;
			break;
		case TK_KIND_STRING:
			min_size += 1;
			break;
		case TK_KIND_BYTES:
			min_size += 4;
			break;
		default:
			check(0);
		}
	}
	check(min_size > UINT32_MAX || ev.min_size == min_size);

	/* How `tracekit report` prints it. */
	if (tk_print_prepare(ev.fmt, ev.args, ev.fields, ev.nfields, &pr, why,
			     sizeof(why)) < 0) {
		check(!pr && why[0] && memchr(why, '\0', sizeof(why)));
		if (tk_print_prepare("", "", ev.fields, ev.nfields, &pr, why,
				     sizeof(why)) < 0)
			check(!pr);
	}

	/* One value per field, in a block of exactly that size. */
	values = malloc(ev.nfields * sizeof(*values) + !ev.nfields);
	if (!values)
		goto out;

	/* The rest of the input: records one after another. */
	rest = size - used;
	off = 0;
	for (i = 0; i < MAX_RECORDS && off <= rest; i++) {
		n = decode_copy(&ev, pr, data + used + off, rest - off, values);
		if (n < 0)
			break;
		/* Exactly its bytes suffice; one fewer does not. */
		check(decode_copy(&ev, pr, data + used + off, (size_t)n, values) == n);
		if (n > 0)
			check(decode_copy(&ev, pr, data + used + off, (size_t)n - 1,
					  values) < 0);
		if (n == 0)
			break; /* no fields: every record is empty */
		off += (size_t)n;
	}

	/* Other slices: the whole input, and from a few offsets. */
	decode_copy(&ev, pr, data, size, values);
	decode_copy(&ev, pr, data + 1, size - 1, values);
	decode_copy(&ev, pr, data + size / 2, size - size / 2, values);
	decode_copy(&ev, pr, data + used, rest / 2, values);
	if (rest >= 8)
		decode_copy(&ev, pr, data + used + 8, rest - 8, values);

	/* min_size zeros are a record of every variable part empty;
	 * min_size 0xff bytes are one only if nothing is variable. */
	if (ev.min_size <= MAX_PATTERN && (pattern = malloc(ev.min_size + 1))) {
		bool variable = false;

		for (i = 0; i < ev.nfields; i++)
			if (ev.fields[i].kind == TK_KIND_STRING ||
			    ev.fields[i].kind == TK_KIND_BYTES)
				variable = true;
		memset(pattern, 0, ev.min_size);
		n = decode_copy(&ev, pr, pattern, ev.min_size, values);
		check(n == (long)ev.min_size);
		memset(pattern, 0xff, ev.min_size);
		n = decode_copy(&ev, pr, pattern, ev.min_size, values);
		check(variable ? n < 0 : n == (long)ev.min_size);
		free(pattern);
	}
	free(values);

	/* "did you mean" over the event's own strings */
	names[0] = ev.full_name;
	names[1] = ev.provider;
	names[2] = ev.fmt;
	names[3] = ev.args;
	(void)tk_closest_name(ev.name, names, 4);
out:
	tk_print_free(pr);
	tk_event_info_free(&ev);
	check(memcmp(&ev, &zero, sizeof(ev)) == 0);
	return 0;
}
