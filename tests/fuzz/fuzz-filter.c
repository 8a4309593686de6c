/* SPDX-License-Identifier: MIT */
/*
 * fuzz-filter.c - libFuzzer entry point for common/filter.c.
 *
 * Compiles the input as a filter against an event with a field of every
 * kind, and checks what must hold whatever the input:
 *
 *   - compiling fails only with -EINVAL, a column inside the expression (or
 *     just past it) and a short lowercase message without a full stop;
 *   - a filter that compiles keeps its text, and matches the three value
 *     arrays below without fault (the third holds the input itself, so that
 *     string comparisons and globs see values they can match);
 *   - "!(" input ")", when it compiles, gives the opposite answer on each.
 *
 * It is compiled with a namer, so that FIELD.function is fuzzed too: the
 * first value array's address is "main", the second's none, the third's
 * the input itself.
 *
 * Build and run:
 *   tests/fuzz/run 1    # builds it in build-fuzz/ (tests/fuzz/meson.build)
 *   build-fuzz/tests/fuzz/fuzz-filter -max_total_time=120
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/filter.h"

static const struct tk_field_desc fields[] = {
	{ .name = "i", .kind = TK_KIND_INT, .size = 8 },
	{ .name = "u", .kind = TK_KIND_UINT, .size = 4 },
	{ .name = "p", .kind = TK_KIND_PTR, .size = 8 },
	{ .name = "d", .kind = TK_KIND_DOUBLE, .size = 8 },
	{ .name = "c", .kind = TK_KIND_CHARS, .array_len = 8 },
	{ .name = "s", .kind = TK_KIND_STRING },
	{ .name = "b", .kind = TK_KIND_BYTES },
	{ .name = "count", .kind = TK_KIND_UINT, .size = 8 },
	{ .name = "comm", .kind = TK_KIND_CHARS, .array_len = 16 },
	{ .name = "filename", .kind = TK_KIND_STRING },
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))
#define NVALUES 3

static void fill_values(struct tk_value v[NVALUES][NFIELDS], const char *in,
			size_t len)
{
	static const char chars8[8] = { 'b', 'a', 's', 'h', 0, 'x', 0, 0 };
	static const char chars16[16] = "0123456789abcdef"; /* no NUL */

	memset(v, 0, sizeof(struct tk_value) * NVALUES * NFIELDS);

	v[0][0].i = -5;
	v[0][1].u = 100;
	v[0][2].u = 0x7ffd1000;
	v[0][3].d = 0.25;
	v[0][4].str = chars8;
	v[0][4].len = sizeof(chars8);
	v[0][5].str = "/usr/bin/ls";
	v[0][5].len = 11;
	v[0][6].str = "ab\0cd";
	v[0][6].len = 5;
	v[0][7].u = 7;
	v[0][8].str = chars16;
	v[0][8].len = sizeof(chars16);
	v[0][9].str = "";

	v[1][0].i = INT64_MIN;
	v[1][1].u = UINT64_MAX;
	v[1][2].u = UINT64_MAX;
	v[1][3].d = NAN;
	v[1][7].u = 0;
	/* Text fields left NULL: empty strings. */

	/* The input, seen as every text field. */
	v[2][0].i = INT64_MAX;
	v[2][3].d = -INFINITY;
	v[2][7].u = 1;
	for (size_t f = 4; f < NFIELDS; f++) {
		if (f == 7)
			continue;
		v[2][f].str = in;
		v[2][f].len = f == 4 && len > 8 ? 8 : len;
		if (f == 8 && len > 16)
			v[2][f].len = 16;
	}
}

static const char *fuzz_namer(void *ctx, uint64_t addr)
{
	return addr == 0x7ffd1000 ? "main" : addr == UINT64_MAX ? NULL : ctx;
}

static void check_error(int ret, const struct tk_filter_error *err,
			size_t len)
{
	size_t n;

	if (ret != -EINVAL)
		abort();
	if (err->column < 0 || (size_t)err->column > len + 1)
		abort();
	n = strnlen(err->message, sizeof(err->message));
	if (n == 0 || n == sizeof(err->message))
		abort();
	if (err->message[0] < 'a' || err->message[0] > 'z' ||
	    err->message[n - 1] == '.')
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tk_value vals[NVALUES][NFIELDS];
	struct tk_filter *f, *nf;
	struct tk_filter_error err;
	bool got[NVALUES];
	char *expr, *neg;
	size_t len;
	int ret, k;

	expr = malloc(size + 1);
	neg = malloc(size + 4);
	if (!expr || !neg)
		abort();
	memcpy(expr, data, size);
	expr[size] = '\0';
	len = strlen(expr);
	fill_values(vals, expr, len);

	ret = tk_filter_compile_named(expr, fields, NFIELDS, fuzz_namer, expr, &f, &err);
	if (ret) {
		check_error(ret, &err, len);
		if (f)
			abort();
		goto out;
	}
	if (strcmp(tk_filter_text(f), expr) != 0)
		abort();
	for (k = 0; k < NVALUES; k++)
		got[k] = tk_filter_match(f, vals[k]);

	memcpy(neg, "!(", 2);
	memcpy(neg + 2, expr, len);
	memcpy(neg + 2 + len, ")", 2);
	ret = tk_filter_compile_named(neg, fields, NFIELDS, fuzz_namer, expr, &nf, &err);
	if (ret) {
		/* Only the limits can refuse what compiled bare. */
		check_error(ret, &err, len + 3);
		if (!strstr(err.message, "deeper") &&
		    !strstr(err.message, "longer"))
			abort();
	} else {
		for (k = 0; k < NVALUES; k++)
			if (tk_filter_match(nf, vals[k]) == got[k])
				abort();
		tk_filter_free(nf);
	}
	tk_filter_free(f);
out:
	free(neg);
	free(expr);
	return 0;
}
