/* SPDX-License-Identifier: MIT */
/*
 * fuzz-printfmt.c - libFuzzer entry for print formats.
 *
 * The input is "format NUL args NUL seed": the format and argument list are
 * prepared against a fixed field list holding every kind (and a few sizes a
 * damaged descriptor could carry); each prepared format is applied to a few
 * value arrays, the last one drawn from the seed bytes, into buffers of
 * several sizes, each allocated to its exact size so a write past the end
 * is caught.  Every truncated result must be a prefix of the full one.
 *
 *   tests/fuzz/run 1    # builds it in build-fuzz/ (tests/fuzz/meson.build)
 *   build-fuzz/tests/fuzz/fuzz-printfmt
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/printfmt.h"

enum {
	F_I8, F_I16, F_I32, F_I64, F_U8, F_U16, F_U32, F_U64, F_PTR, F_DBL,
	F_CHARS, F_STR, F_BYTES, F_ODD_INT, F_ODD_KIND, F_ZERO_PTR, NF
};

static const struct tk_field_desc fields[NF] = {
	[F_I8] = { "i8", TK_KIND_INT, 1, 0, 0 },
	[F_I16] = { "i16", TK_KIND_INT, 2, 0, 0 },
	[F_I32] = { "i32", TK_KIND_INT, 4, 0, 0 },
	[F_I64] = { "i64", TK_KIND_INT, 8, 0, 0 },
	[F_U8] = { "u8", TK_KIND_UINT, 1, 0, 0 },
	[F_U16] = { "u16", TK_KIND_UINT, 2, 0, 0 },
	[F_U32] = { "u32", TK_KIND_UINT, 4, 0, 0 },
	[F_U64] = { "u64", TK_KIND_UINT, 8, 0, 0 },
	[F_PTR] = { "ptr", TK_KIND_PTR, 8, 0, 0 },
	[F_DBL] = { "dbl", TK_KIND_DOUBLE, 8, 0, 0 },
	[F_CHARS] = { "chars", TK_KIND_CHARS, 0, 0, 8 },
	[F_STR] = { "str", TK_KIND_STRING, 0, 0, 0 },
	[F_BYTES] = { "data", TK_KIND_BYTES, 0, 0, 0 },
	[F_ODD_INT] = { "odd", TK_KIND_INT, 3, 0, 0 },
	[F_ODD_KIND] = { "kind", 99, 16, 0, 0 },
	[F_ZERO_PTR] = { "ptr0", TK_KIND_PTR, 0, 0, 0 },
};

/* Text the values point at, each copied to a block of its exact size. */
struct blocks {
	char *str, *chars, *bytes;
};

/* Fill @v from @seed (cycled), text pointing into @b. */
static void values_from_seed(struct tk_value *v, struct blocks *b,
			     const uint8_t *seed, size_t n)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	uint32_t len;
	unsigned i, k;

	for (i = 0; i < NF; i++) {
		for (k = 0; k < 8 && n; k++)
			x = (x << 8 | x >> 56) ^ seed[(i * 8 + k) % n];
		v[i].u = x;
	}
	len = n > 64 ? 64 : (uint32_t)n;
	b->str = malloc(len ? len : 1);
	b->chars = malloc(len ? len : 1);
	b->bytes = malloc(len ? len : 1);
	if (len) {
		memcpy(b->str, seed, len);
		memcpy(b->chars, seed, len);
		memcpy(b->bytes, seed, len);
	}
	v[F_STR].str = b->str;
	v[F_STR].len = len;
	v[F_CHARS].str = b->chars;
	v[F_CHARS].len = len;
	v[F_BYTES].str = b->bytes;
	v[F_BYTES].len = len;
}

static void check_format(const struct tk_print *p,
			 const struct tk_value *values)
{
	static const size_t sizes[] = { 1, 2, 7, 64 };
	size_t n, m, i;
	char *full, *buf;

	n = tk_print_format(p, values, NULL, 0);
	full = malloc(n + 1);
	if (!full)
		return;
	if (tk_print_format(p, values, full, n + 1) != n || full[n] != '\0')
		__builtin_trap();

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		buf = malloc(sizes[i]);
		if (!buf)
			break;
		m = tk_print_format(p, values, buf, sizes[i]);
		if (m != n)
			__builtin_trap();
		m = n < sizes[i] - 1 ? n : sizes[i] - 1;
		if (memcmp(buf, full, m) != 0 || buf[m] != '\0')
			__builtin_trap();
		free(buf);
	}
	free(full);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char longstr[5] = { 'h', 'e', 'l', 'l', 'o' };
	struct tk_value values[3][NF];
	const uint8_t *seed = NULL, *nul;
	struct blocks b = { 0 };
	char *fmt, *args, *small;
	size_t nfmt, nargs, nseed = 0;
	struct tk_print *p;
	char err[64];
	unsigned i;

	nul = memchr(data, '\0', size);
	nfmt = nul ? (size_t)(nul - data) : size;
	nargs = 0;
	if (nul) {
		const uint8_t *a = nul + 1, *end = data + size;

		nul = memchr(a, '\0', (size_t)(end - a));
		nargs = nul ? (size_t)(nul - a) : (size_t)(end - a);
		if (nul) {
			seed = nul + 1;
			nseed = (size_t)(end - seed);
		}
	}
	fmt = malloc(nfmt + 1);
	args = malloc(nargs + 1);
	if (!fmt || !args)
		goto out;
	memcpy(fmt, data, nfmt);
	fmt[nfmt] = '\0';
	if (nargs)
		memcpy(args, data + nfmt + 1, nargs);
	args[nargs] = '\0';

	/* a short error buffer too: the message must be cut safely */
	if (tk_print_prepare(fmt, args, fields, NF, &p, err, size & 1 ? 5 :
							  sizeof(err)))
		goto out;

	/* zeros, NULL text */
	memset(values, 0, sizeof(values));
	/* extremes */
	for (i = 0; i < NF; i++)
		values[1][i].u = UINT64_MAX;
	values[1][F_I64].i = INT64_MIN;
	values[1][F_DBL].d = size & 2 ? NAN : -1e308;
	values[1][F_STR].str = longstr;
	values[1][F_STR].len = sizeof(longstr);
	values[1][F_CHARS].str = longstr;
	values[1][F_CHARS].len = sizeof(longstr);
	values[1][F_BYTES].str = longstr;
	values[1][F_BYTES].len = sizeof(longstr);
	/* from the input */
	values_from_seed(values[2], &b, seed, nseed);

	for (i = 0; i < 3; i++)
		check_format(p, values[i]);

	/* a tiny buffer on its own, the hot path's worst case */
	small = malloc(3);
	if (small) {
		tk_print_format(p, values[2], small, 3);
		free(small);
	}
	tk_print_free(p);
out:
	free(b.str);
	free(b.chars);
	free(b.bytes);
	free(fmt);
	free(args);
	return 0;
}
