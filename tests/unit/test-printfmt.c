/* SPDX-License-Identifier: MIT */
/*
 * test-printfmt.c - print formats applied to values of every field kind.
 *
 * Exact strings where the result is ours to define (natural forms, the
 * default layout, error messages); where a conversion has printf's
 * meaning (flags, width, precision), the result is compared with the C
 * library's snprintf of the equivalent C value.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "format/printfmt.h"
#include "tk-test.h"

enum {
	F_I8, F_I16, F_I32, F_I64, F_U8, F_U16, F_U32, F_U64,
	F_PTR, F_DBL, F_CHARS, F_STR, F_BYTES, NF
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
};

/* Not NUL-terminated, so a read past len would show. */
static const char hello[5] = { 'h', 'e', 'l', 'l', 'o' };
static const char chars_abc[8] = { 'a', 'b', 'c', '\0', 'z', 'z', 'z', 'z' };
static const char chars_full[8] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h' };
static const unsigned char deadbeef[4] = { 0xde, 0xad, 0xbe, 0xef };

static struct tk_value vint(int64_t i)
{
	struct tk_value v = { .i = i };
	return v;
}

static struct tk_value vuint(uint64_t u)
{
	struct tk_value v = { .u = u };
	return v;
}

static struct tk_value vdbl(double d)
{
	struct tk_value v = { .d = d };
	return v;
}

static struct tk_value vstr(const void *s, uint32_t len)
{
	struct tk_value v = { .str = s, .len = len };
	return v;
}

static void check_same(const char *what, const char *got, const char *want,
		       int line)
{
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "%s:%d: %s: got \"%s\", want \"%s\"\n",
			__FILE__, line, what, got, want);
		tk_test_failures++;
	}
}

/* The length fmt_vals() last returned. */
static size_t last_len;

/*
 * Format @fmt with @args against the standard fields and @values; the
 * text, or "ERR <rc>: <message>" if preparing fails.  Also checks that the
 * text ends at the returned length (%c of 0 puts a NUL before it) and that
 * the length-only call agrees.
 */
static const char *fmt_vals(const char *fmt, const char *args,
			    const struct tk_value *values)
{
	static char bufs[4][512];
	static unsigned next;
	char *buf = bufs[next++ % 4], err[160];
	struct tk_print *p = (struct tk_print *)1;
	size_t n;
	int rc;

	rc = tk_print_prepare(fmt, args, fields, NF, &p, err, sizeof(err));
	if (rc) {
		CHECK(p == NULL);
		snprintf(buf, 512, "ERR %d: %s", rc, err);
		last_len = 0;
		return buf;
	}
	n = tk_print_format(p, values, buf, 512);
	CHECK(n < 512);
	CHECK(n < 512 && buf[n] == '\0' && strlen(buf) <= n);
	last_len = n;
	CHECK_INT(tk_print_format(p, values, NULL, 0), n);
	tk_print_free(p);
	return buf;
}

/* Format @fmt with one conversion taking @field, whose value is @v. */
static const char *fmt1(const char *fmt, unsigned field, struct tk_value v)
{
	struct tk_value values[NF] = { 0 };

	values[field] = v;
	return fmt_vals(fmt, fields[field].name, values);
}

#define EXPECT1(fmt, field, v, want) \
	check_same(fmt, fmt1(fmt, field, v), want, __LINE__)

/* ---- integers ------------------------------------------------------------ */

static void test_int_kinds(void)
{
	/* INT: %d signed, %u %x %o masked to the field's size */
	EXPECT1("%d", F_I8, vint(-1), "-1");
	EXPECT1("%i", F_I8, vint(-1), "-1");
	EXPECT1("%u", F_I8, vint(-1), "255");
	EXPECT1("%x", F_I8, vint(-1), "ff");
	EXPECT1("%X", F_I8, vint(-86), "AA");
	EXPECT1("%o", F_I8, vint(-1), "377");
	EXPECT1("%p", F_I8, vint(-1), "0xff");
	EXPECT1("%d", F_I8, vint(127), "127");
	EXPECT1("%d", F_I8, vint(-128), "-128");

	EXPECT1("%d", F_I16, vint(-2), "-2");
	EXPECT1("%u", F_I16, vint(-2), "65534");
	EXPECT1("%x", F_I16, vint(-2), "fffe");
	EXPECT1("%o", F_I16, vint(-2), "177776");

	EXPECT1("%d", F_I32, vint(INT32_MIN), "-2147483648");
	EXPECT1("%u", F_I32, vint(INT32_MIN), "2147483648");
	EXPECT1("%x", F_I32, vint(-1), "ffffffff");
	EXPECT1("%X", F_I32, vint(0x7abcdef0), "7ABCDEF0");
	EXPECT1("%d", F_I32, vint(0), "0");
	EXPECT1("%x", F_I32, vint(0), "0");
	EXPECT1("%o", F_I32, vint(0), "0");
	EXPECT1("%d", F_I32, vint(1234567890), "1234567890");

	EXPECT1("%d", F_I64, vint(INT64_MIN), "-9223372036854775808");
	EXPECT1("%d", F_I64, vint(INT64_MAX), "9223372036854775807");
	EXPECT1("%u", F_I64, vint(INT64_MIN), "9223372036854775808");
	EXPECT1("%x", F_I64, vint(INT64_MIN), "8000000000000000");
	EXPECT1("%o", F_I64, vint(INT64_MIN), "1000000000000000000000");
	EXPECT1("%u", F_I64, vint(-1), "18446744073709551615");

	/* UINT: %d reinterprets as signed of the field's size */
	EXPECT1("%d", F_U32, vuint(0xffffffff), "-1");
	EXPECT1("%u", F_U32, vuint(0xffffffff), "4294967295");
	EXPECT1("%x", F_U32, vuint(0xffffffff), "ffffffff");
	EXPECT1("%d", F_U8, vuint(200), "-56");
	EXPECT1("%u", F_U8, vuint(200), "200");
	EXPECT1("%d", F_U16, vuint(0x8000), "-32768");
	EXPECT1("%x", F_U16, vuint(0x51234), "1234"); /* bits above the size */
	EXPECT1("%d", F_U64, vuint(UINT64_MAX), "-1");
	EXPECT1("%u", F_U64, vuint(UINT64_MAX), "18446744073709551615");
	EXPECT1("%x", F_U64, vuint(UINT64_MAX), "ffffffffffffffff");
	EXPECT1("%X", F_U64, vuint(0xdeadbeefcafef00dULL), "DEADBEEFCAFEF00D");
	EXPECT1("%o", F_U64, vuint(UINT64_MAX), "1777777777777777777777");
	EXPECT1("%u", F_U64, vuint(10000000000000000000ULL),
		"10000000000000000000");
	EXPECT1("%u", F_U64, vuint(99), "99");
	EXPECT1("%u", F_U64, vuint(100), "100");
	EXPECT1("%u", F_U64, vuint(9), "9");
	EXPECT1("%u", F_U64, vuint(10), "10");

	/* PTR */
	EXPECT1("%p", F_PTR, vuint(0x7ffd1000), "0x7ffd1000");
	EXPECT1("%p", F_PTR, vuint(0), "(nil)");
	EXPECT1("%p", F_PTR, vuint(UINT64_MAX), "0xffffffffffffffff");
	EXPECT1("%x", F_PTR, vuint(0x7ffd1000), "7ffd1000");
	EXPECT1("%X", F_PTR, vuint(0xabc), "ABC");
	EXPECT1("%u", F_PTR, vuint(4096), "4096");
	EXPECT1("%d", F_PTR, vuint(UINT64_MAX), "-1");
	EXPECT1("%p", F_U32, vuint(0xbeef), "0xbeef");
	EXPECT1("%p", F_U32, vuint(0), "(nil)");

	/* %c: the low byte */
	EXPECT1("%c", F_I32, vint('A'), "A");
	EXPECT1("%c", F_U32, vuint(0x141), "A");
	EXPECT1("%c", F_I8, vint(-1), "\xff");
	EXPECT1("%c", F_PTR, vuint('z'), "z");
	EXPECT1("[%3c]", F_I32, vint('A'), "[  A]");
	EXPECT1("[%-3c]", F_I32, vint('A'), "[A  ]");

	/* a number under %s, or a floating conversion: its natural form */
	EXPECT1("%s", F_I32, vint(-42), "-42");
	EXPECT1("%s", F_U8, vuint(200), "200");
	EXPECT1("%s", F_I8, vint(0x1ff), "-1");
	EXPECT1("%s", F_PTR, vuint(0x1000), "0x1000");
	EXPECT1("%s", F_PTR, vuint(0), "0x0");
	EXPECT1("%f", F_I32, vint(-42), "-42");
	EXPECT1("%.2e", F_U64, vuint(7), "7");
	EXPECT1("%g", F_PTR, vuint(0xff), "0xff");
	EXPECT1("[%6s]", F_I32, vint(-42), "[   -42]");
	EXPECT1("[%-6s]", F_I32, vint(-42), "[-42   ]");
	EXPECT1("[%.1s]", F_I32, vint(-42), "[-42]");
	EXPECT1("[%08.3f]", F_U32, vuint(5), "[       5]");
}

/* Field @field's value @raw as snprintf sees the equivalent C variable. */
static int c_int_snprintf(char *buf, size_t len, const char *spec,
			   unsigned field, uint64_t raw)
{
	char cspec[32];
	size_t n = strlen(spec);
	char conv = spec[n - 1];
	unsigned size = fields[field].size;
	long long s;
	unsigned long long u;

	if (conv == 'c') {
		return snprintf(buf, len, spec, (int)(unsigned char)raw);
	}
	if (conv == 'p') {
		return snprintf(buf, len, spec, (void *)(uintptr_t)raw);
	}
	snprintf(cspec, sizeof(cspec), "%.*sll%c", (int)(n - 1), spec, conv);
	switch (size) {
	case 1:
		s = (int8_t)raw;
		u = (uint8_t)raw;
		break;
	case 2:
		s = (int16_t)raw;
		u = (uint16_t)raw;
		break;
	case 4:
		s = (int32_t)raw;
		u = (uint32_t)raw;
		break;
	default:
		s = (int64_t)raw;
		u = raw;
		break;
	}
	if (conv == 'd' || conv == 'i')
		return snprintf(buf, len, cspec, s);
	return snprintf(buf, len, cspec, u);
}

static void test_int_flags(void)
{
	static const char *const specs[] = {
		"%5d", "%-5d", "%05d", "%+d", "% d", "%.3d", "%8.3d",
		"%-+8.3d", "%.0d", "%+.0d", "%- 8d", "%+05i", "%20d",
		"%5u", "%-5u", "%05u", "%.7u", "%+u",
		"%#x", "%#X", "%08x", "%#010x", "%-#10x", "%.6x", "%.0x",
		"%10X", "%#o", "%-#10o", "%.4o", "%#.0o", "%3o", "%#5.0x",
		"%5c", "%-5c", "%1c",
	};
	static const uint64_t raws[] = {
		0, 1, 7, 42, 127, 128, 255, 256, 0x7fff, 0x8000, 0xffff,
		0x12345678, 0x7fffffff, 0x80000000, 0xffffffff,
		0x100000000ULL, 0x7fffffffffffffffULL, 0x8000000000000000ULL,
		UINT64_MAX, (uint64_t)-42, (uint64_t)-1000000,
	};
	static const unsigned ifields[] = {
		F_I8, F_I16, F_I32, F_I64, F_U8, F_U16, F_U32, F_U64, F_PTR,
	};
	char want[128], what[64];
	size_t s, r, f;

	for (f = 0; f < sizeof(ifields) / sizeof(ifields[0]); f++) {
		for (s = 0; s < sizeof(specs) / sizeof(specs[0]); s++) {
			for (r = 0; r < sizeof(raws) / sizeof(raws[0]); r++) {
				unsigned field = ifields[f];
				int wn;

				wn = c_int_snprintf(want, sizeof(want),
						    specs[s], field, raws[r]);
				snprintf(what, sizeof(what),
					 "%s on %s = %#llx", specs[s],
					 fields[field].name,
					 (unsigned long long)raws[r]);
				check_same(what, fmt1(specs[s], field,
						      vuint(raws[r])),
					   want, __LINE__);
				CHECK_INT(last_len, wn);
			}
		}
	}
}

static void test_ptr_flags(void)
{
	static const char *const specs[] = {
		"%p", "%20p", "%-20p", "%020p", "%.12p", "%24.12p", "%#p",
		"%-#24p", "%3p",
	};
	static const uint64_t raws[] = {
		1, 0x1234, 0x7ffd12345678, 0xffffffffffffffffULL,
	};
	char want[128];
	size_t s, r;

	for (s = 0; s < sizeof(specs) / sizeof(specs[0]); s++) {
		for (r = 0; r < sizeof(raws) / sizeof(raws[0]); r++) {
			c_int_snprintf(want, sizeof(want), specs[s], F_PTR,
				       raws[r]);
			check_same(specs[s], fmt1(specs[s], F_PTR,
						  vuint(raws[r])),
				   want, __LINE__);
		}
	}
	/* NULL: "(nil)" padded with spaces, as glibc */
	EXPECT1("[%10p]", F_PTR, vuint(0), "[     (nil)]");
	EXPECT1("[%-10p]", F_PTR, vuint(0), "[(nil)     ]");
	EXPECT1("[%010p]", F_PTR, vuint(0), "[     (nil)]");
	EXPECT1("[%.2p]", F_PTR, vuint(0), "[(nil)]");
	/* a sign means nothing to a pointer */
	EXPECT1("%+p", F_PTR, vuint(0x1234), "0x1234");
	EXPECT1("% 8p", F_PTR, vuint(0x1234), "  0x1234");
	EXPECT1("%+08p", F_PTR, vuint(0x1234), "0x001234");
}

/* ---- doubles ------------------------------------------------------------- */

static void test_double(void)
{
	static const char *const specs[] = {
		"%f", "%F", "%e", "%E", "%g", "%G", "%a", "%A", "%.2f",
		"%10.3f", "%-10.1f", "%+e", "%.3e", "%#g", "%010.2f", "% f",
		"%.0f", "%#.0f", "%20.10g", "%-+12.4G", "%.0e", "%#a", "%.3a",
		"%Lf", "%lf", "%lg",
	};
	static const double ds[] = {
		0.0, -0.0, 0.25, -1234.5678, 1e300, -1e-300, 1e-10, 3.0,
		123456789.0, 0.1, NAN, INFINITY, -INFINITY, 4.9e-324,
	};
	char want[512], cspec[32];
	size_t s, d, n;

	for (s = 0; s < sizeof(specs) / sizeof(specs[0]); s++) {
		/* the C spec, without the length modifier */
		n = strlen(specs[s]);
		snprintf(cspec, sizeof(cspec), "%s", specs[s]);
		if (cspec[n - 2] == 'L' || cspec[n - 2] == 'l') {
			cspec[n - 2] = cspec[n - 1];
			cspec[n - 1] = '\0';
		}
		for (d = 0; d < sizeof(ds) / sizeof(ds[0]); d++) {
			snprintf(want, sizeof(want), cspec, ds[d]);
			check_same(specs[s], fmt1(specs[s], F_DBL, vdbl(ds[d])),
				   want, __LINE__);
		}
	}

	/* anything else: %g, padded to the width */
	EXPECT1("%d", F_DBL, vdbl(0.25), "0.25");
	EXPECT1("%s", F_DBL, vdbl(0.25), "0.25");
	EXPECT1("%x", F_DBL, vdbl(-1.5), "-1.5");
	EXPECT1("%c", F_DBL, vdbl(65.0), "65");
	EXPECT1("%p", F_DBL, vdbl(1e100), "1e+100");
	EXPECT1("[%8u]", F_DBL, vdbl(0.5), "[     0.5]");
	EXPECT1("[%-8.1s]", F_DBL, vdbl(0.5), "[0.5     ]");
	EXPECT1("[%+08d]", F_DBL, vdbl(0.5), "[     0.5]");
}

/* ---- text ---------------------------------------------------------------- */

static void test_text(void)
{
	static const char *const specs[] = {
		"%s", "%10s", "%-10s", "%.2s", "%10.2s", "%-10.2s", "%.0s",
		"%.9s", "%3s", "%ls", "%05s",
	};
	static const char *const strs[] = { "hello", "", "a", "long string" };
	struct tk_value ctl = vstr("a\tb\x01\x7f\xff", 6);
	char want[128];
	size_t s, t;

	for (s = 0; s < sizeof(specs) / sizeof(specs[0]); s++) {
		for (t = 0; t < sizeof(strs) / sizeof(strs[0]); t++) {
			const char *spec = strcmp(specs[s], "%ls") ? specs[s]
								  : "%s";
			uint32_t len = (uint32_t)strlen(strs[t]);

			snprintf(want, sizeof(want), spec, strs[t]);
			check_same(specs[s], fmt1(specs[s], F_STR,
						  vstr(strs[t], len)),
				   want, __LINE__);
			check_same(specs[s], fmt1(specs[s], F_CHARS,
						  vstr(strs[t], len + 1)),
				   want, __LINE__);
		}
	}

	/* STRING: len bytes, whatever follows */
	EXPECT1("%s", F_STR, vstr(hello, 5), "hello");
	EXPECT1("%s", F_STR, vstr(hello, 3), "hel");
	EXPECT1("%s", F_STR, vstr(hello, 0), "");
	EXPECT1("[%.3s]", F_STR, vstr(hello, 5), "[hel]");
	EXPECT1("[%.9s]", F_STR, vstr(hello, 5), "[hello]");
	EXPECT1("[%7s]", F_STR, vstr(hello, 5), "[  hello]");
	EXPECT1("[%-7s]", F_STR, vstr(hello, 5), "[hello  ]");
	EXPECT1("%s", F_STR, vstr(NULL, 0), "(null)");
	EXPECT1("%s", F_STR, vstr(NULL, 5), "(null)");
	EXPECT1("[%8s]", F_STR, vstr(NULL, 5), "[  (null)]");
	EXPECT1("%s", F_STR, ctl, "a\tb\x01\x7f\xff");

	/* CHARS: up to the first NUL or len bytes */
	EXPECT1("%s", F_CHARS, vstr(chars_abc, 8), "abc");
	EXPECT1("%s", F_CHARS, vstr(chars_full, 8), "abcdefgh");
	EXPECT1("%s", F_CHARS, vstr(chars_full, 2), "ab");
	EXPECT1("[%.2s]", F_CHARS, vstr(chars_abc, 8), "[ab]");
	EXPECT1("[%5s]", F_CHARS, vstr(chars_abc, 8), "[  abc]");
	EXPECT1("[%-5s]", F_CHARS, vstr(chars_abc, 8), "[abc  ]");
	EXPECT1("%s", F_CHARS, vstr(NULL, 8), "(null)");
	EXPECT1("%s", F_CHARS, ctl, "a\tb\x01\x7f\xff");

	/* other conversions: the text */
	EXPECT1("%d", F_STR, vstr(hello, 5), "hello");
	EXPECT1("%x", F_STR, vstr(hello, 5), "hello");
	EXPECT1("%c", F_STR, vstr(hello, 5), "hello");
	EXPECT1("%p", F_STR, vstr(hello, 5), "hello");
	EXPECT1("%f", F_STR, vstr(hello, 5), "hello");
	EXPECT1("[%.2d]", F_STR, vstr(hello, 5), "[hello]");
	EXPECT1("[%-7u]", F_STR, vstr(hello, 5), "[hello  ]");
	EXPECT1("%d", F_CHARS, vstr(chars_abc, 8), "abc");
	EXPECT1("[%+5i]", F_CHARS, vstr(chars_abc, 8), "[  abc]");
	EXPECT1("%e", F_CHARS, vstr(NULL, 8), "(null)");

	/* BYTES: hex pairs for any conversion */
	EXPECT1("%s", F_BYTES, vstr(deadbeef, 4), "{de,ad,be,ef}");
	EXPECT1("%d", F_BYTES, vstr(deadbeef, 4), "{de,ad,be,ef}");
	EXPECT1("%x", F_BYTES, vstr(deadbeef, 1), "{de}");
	EXPECT1("%.1s", F_BYTES, vstr(deadbeef, 2), "{de,ad}");
	EXPECT1("%s", F_BYTES, vstr(deadbeef, 0), "{}");
	EXPECT1("%s", F_BYTES, vstr(NULL, 4), "(null)");
	EXPECT1("[%15s]", F_BYTES, vstr(deadbeef, 4), "[  {de,ad,be,ef}]");
	EXPECT1("[%-15s]", F_BYTES, vstr(deadbeef, 4), "[{de,ad,be,ef}  ]");
	EXPECT1("[%3s]", F_BYTES, vstr(deadbeef, 4), "[{de,ad,be,ef}]");
	EXPECT1("[%4s]", F_BYTES, vstr(deadbeef, 0), "[  {}]");
}

/* STRING prints len bytes, NULs included. */
static void test_embedded_nul(void)
{
	struct tk_value values[NF] = { 0 };
	struct tk_print *p;
	char buf[32];
	size_t n;

	values[F_STR] = vstr("ab\0cd", 5);
	CHECK_INT(tk_print_prepare("<%s>", "str", fields, NF, &p, NULL, 0),
		  0);
	n = tk_print_format(p, values, buf, sizeof(buf));
	CHECK_INT(n, 7);
	CHECK(memcmp(buf, "<ab\0cd>", 8) == 0);
	tk_print_free(p);
}

/* ---- literals, modifiers, binding ---------------------------------------- */

static void test_literals(void)
{
	struct tk_value values[NF] = { 0 };

	values[F_I32] = vint(5);
	values[F_STR] = vstr(hello, 5);
	check_same("%%", fmt_vals("100%% %d%%", "i32", values), "100% 5%",
		   __LINE__);
	check_same("%%", fmt_vals("%%", "", values), "%", __LINE__);
	check_same("%%", fmt_vals("%%%%", "", values), "%%", __LINE__);
	check_same("%%", fmt_vals("%%d", "i32", values), "%d", __LINE__);
	check_same("lit", fmt_vals("just text", "", values), "just text",
		   __LINE__);
	check_same("lit", fmt_vals("just text", "i32, str", values),
		   "just text", __LINE__);
	check_same("lit", fmt_vals("%d", "i32", values), "5", __LINE__);
	check_same("lit", fmt_vals("a\tb\n", "", values), "a\tb\n",
		   __LINE__);

	/* length modifiers are accepted and ignored */
	EXPECT1("%hhd", F_I32, vint(1000), "1000");
	EXPECT1("%hd", F_I32, vint(100000), "100000");
	EXPECT1("%ld", F_I8, vint(-1), "-1");
	EXPECT1("%lld", F_I16, vint(-7), "-7");
	EXPECT1("%llu", F_I8, vint(-1), "255");
	EXPECT1("%zu", F_U64, vuint(12), "12");
	EXPECT1("%zd", F_U32, vuint(0xffffffff), "-1");
	EXPECT1("%jx", F_U16, vuint(0xffff), "ffff");
	EXPECT1("%tx", F_I32, vint(-1), "ffffffff");
	EXPECT1("%qd", F_I64, vint(-3), "-3");
	EXPECT1("%Lf", F_DBL, vdbl(1.5), "1.500000");
	EXPECT1("%lu", F_PTR, vuint(3), "3");
	EXPECT1("%lx", F_U8, vuint(0x1ab), "ab");
	EXPECT1("%ls", F_STR, vstr(hello, 5), "hello");
	EXPECT1("%lc", F_U32, vuint('q'), "q");
	EXPECT1("%hhs", F_I32, vint(9), "9");
}

static void test_binding(void)
{
	struct tk_value values[NF] = { 0 };

	values[F_I8] = vint(-8);
	values[F_I16] = vint(-16);
	values[F_I32] = vint(42);
	values[F_STR] = vstr("/tmp/x", 6);
	values[F_U32] = vuint(7);
	values[F_DBL] = vdbl(2.5);

	check_same("args", fmt_vals("id=%d path=%s len=%u", "i32, str, u32",
				    values),
		   "id=42 path=/tmp/x len=7", __LINE__);
	check_same("args", fmt_vals("%s=%d", "  str ,i32  ", values),
		   "/tmp/x=42", __LINE__);
	check_same("args", fmt_vals("%s=%d", "str,\ti32", values),
		   "/tmp/x=42", __LINE__);
	check_same("args", fmt_vals("%d %d %x", "i32, i32, i32", values),
		   "42 42 2a", __LINE__);
	/* fewer conversions than arguments */
	check_same("args", fmt_vals("%g", "dbl, i32, str", values), "2.5",
		   __LINE__);

	/* markers: no argument names, fields in order */
	check_same("marker", fmt_vals("%d %d %d", "", values), "-8 -16 42",
		   __LINE__);
	check_same("marker", fmt_vals("%d|%x", "   ", values), "-8|fff0",
		   __LINE__);
	check_same("marker", fmt_vals("%d", NULL, values), "-8", __LINE__);
	check_same("marker", fmt_vals("%d", "", values), "-8", __LINE__);
}

static void test_marker_fields(void)
{
	static const struct tk_field_desc mf[2] = {
		{ "arg0", TK_KIND_INT, 4, 0, 0 },
		{ "arg1", TK_KIND_STRING, 0, 0, 0 },
	};
	struct tk_value mv[2] = { vint(3), vstr("x", 1) };
	struct tk_print *p;
	char buf[64], err[160];
	int rc;

	rc = tk_print_prepare("n=%d s=%s", "", mf, 2, &p, err, sizeof(err));
	CHECK_INT(rc, 0);
	tk_print_format(p, mv, buf, sizeof(buf));
	CHECK_STR(buf, "n=3 s=x");
	tk_print_free(p);

	rc = tk_print_prepare("%d %s %d", "", mf, 2, &p, err, sizeof(err));
	CHECK_INT(rc, -EINVAL);
	CHECK(p == NULL);
	CHECK_STR(err, "print format has 3 conversions but the event has 2 fields");

	rc = tk_print_prepare("%d", "", NULL, 0, &p, err, sizeof(err));
	CHECK_INT(rc, -EINVAL);
	CHECK_STR(err, "print format has 1 conversion but the event has 0 fields");

	/* literal text needs no values at all */
	rc = tk_print_prepare("hi", "", NULL, 0, &p, err, sizeof(err));
	CHECK_INT(rc, 0);
	CHECK_INT(tk_print_format(p, NULL, buf, sizeof(buf)), 2);
	CHECK_STR(buf, "hi");
	tk_print_free(p);
}

/* ---- default layout ------------------------------------------------------ */

static void test_default_layout(void)
{
	struct tk_value values[NF] = { 0 };
	struct tk_print *p;
	char buf[512];
	size_t n;

	values[F_I8] = vint(-1);
	values[F_I16] = vint(-300);
	values[F_I32] = vint(42);
	values[F_I64] = vint(INT64_MIN);
	values[F_U8] = vuint(255);
	values[F_U16] = vuint(65535);
	values[F_U32] = vuint(4000000000u);
	values[F_U64] = vuint(UINT64_MAX);
	values[F_PTR] = vuint(0x7f001000);
	values[F_DBL] = vdbl(0.25);
	values[F_CHARS] = vstr(chars_abc, 8);
	values[F_STR] = vstr(hello, 5);
	values[F_BYTES] = vstr(deadbeef, 4);
	check_same("default", fmt_vals("", "", values),
		   "i8=-1 i16=-300 i32=42 i64=-9223372036854775808 u8=255 "
		   "u16=65535 u32=4000000000 u64=18446744073709551615 "
		   "ptr=0x7f001000 dbl=0.25 chars=abc str=hello "
		   "data={de,ad,be,ef}",
		   __LINE__);
	/* an empty format ignores the argument list */
	check_same("default", fmt_vals(NULL, "i32", values),
		   "i8=-1 i16=-300 i32=42 i64=-9223372036854775808 u8=255 "
		   "u16=65535 u32=4000000000 u64=18446744073709551615 "
		   "ptr=0x7f001000 dbl=0.25 chars=abc str=hello "
		   "data={de,ad,be,ef}",
		   __LINE__);

	memset(values, 0, sizeof(values));
	check_same("default", fmt_vals("", "", values),
		   "i8=0 i16=0 i32=0 i64=0 u8=0 u16=0 u32=0 u64=0 ptr=0x0 "
		   "dbl=0 chars=(null) str=(null) data=(null)",
		   __LINE__);

	/* no fields: nothing */
	CHECK_INT(tk_print_prepare("", "", NULL, 0, &p, NULL, 0), 0);
	buf[0] = 'x';
	n = tk_print_format(p, NULL, buf, sizeof(buf));
	CHECK_INT(n, 0);
	CHECK_STR(buf, "");
	tk_print_free(p);

	/* a full-length name, not NUL-terminated */
	{
		struct tk_field_desc f[1];
		struct tk_value v = vuint(1);

		memset(&f, 0, sizeof(f));
		memset(f[0].name, 'n', TK_FIELD_NAME_MAX);
		f[0].kind = TK_KIND_UINT;
		f[0].size = 4;
		CHECK_INT(tk_print_prepare("", "", f, 1, &p, NULL, 0), 0);
		n = tk_print_format(p, &v, buf, sizeof(buf));
		CHECK_INT(n, TK_FIELD_NAME_MAX + 2);
		CHECK(buf[TK_FIELD_NAME_MAX] == '=');
		CHECK_STR(buf + TK_FIELD_NAME_MAX, "=1");
		tk_print_free(p);
	}
}

/* ---- errors -------------------------------------------------------------- */

/* The message preparing @fmt with @args gives, after checking -EINVAL. */
static const char *prep_err(const char *fmt, const char *args)
{
	static char err[160];
	struct tk_print *p = (struct tk_print *)1;
	int rc;

	strcpy(err, "(untouched)");
	rc = tk_print_prepare(fmt, args, fields, NF, &p, err, sizeof(err));
	CHECK_INT(rc, -EINVAL);
	CHECK(p == NULL);
	if (!rc)
		tk_print_free(p);
	return err;
}

#define EXPECT_ERR(fmt, args, want) \
	check_same(fmt, prep_err(fmt, args), want, __LINE__)

static void test_errors(void)
{
	char err[8];
	struct tk_print *p;

	EXPECT_ERR("%d %s", "i32, pth", "print format names unknown field 'pth'");
	EXPECT_ERR("%d", " nope ", "print format names unknown field 'nope'");
	EXPECT_ERR("%d", "i3", "print format names unknown field 'i3'");
	EXPECT_ERR("%d", "i32x", "print format names unknown field 'i32x'");
	EXPECT_ERR("%d %s %u", "i32, str",
		   "print format has 3 conversions but 2 arguments");
	EXPECT_ERR("%d %d", "i32",
		   "print format has 2 conversions but 1 argument");
	EXPECT_ERR("%d", "i32,,str", "print format argument 2 is empty");
	EXPECT_ERR("%d", "i32,", "print format argument 2 is empty");
	EXPECT_ERR("%d", ",", "print format argument 1 is empty");
	EXPECT_ERR("%*d", "i32",
		   "print format uses '*' at column 1: write the width and precision in the format");
	EXPECT_ERR("ab%.*s", "str",
		   "print format uses '*' at column 3: write the width and precision in the format");
	EXPECT_ERR("id=%y", "i32",
		   "print format has unknown conversion 'y' at column 4");
	EXPECT_ERR("%n", "i32",
		   "print format has unknown conversion 'n' at column 1");
	EXPECT_ERR("%m", "", "print format has unknown conversion 'm' at column 1");
	EXPECT_ERR("%5%", "", "print format has unknown conversion '%' at column 1");
	EXPECT_ERR("%1$d", "i32",
		   "print format has unknown conversion '$' at column 1");
	EXPECT_ERR("%\x01", "", "print format has unknown conversion '\\x01' at column 1");
	EXPECT_ERR("%d %", "i32, str",
		   "print format ends inside the conversion at column 4");
	EXPECT_ERR("%-08.3l", "i32",
		   "print format ends inside the conversion at column 1");
	EXPECT_ERR("%5000d", "i32",
		   "print format has a width above 4096 at column 1");
	EXPECT_ERR("%.99999999999999999999d", "i32",
		   "print format has a precision above 4096 at column 1");

	/* a short error buffer is truncated; none at all is fine */
	CHECK_INT(tk_print_prepare("%d", "pth", fields, NF, &p, err,
				   sizeof(err)), -EINVAL);
	CHECK_STR(err, "print f");
	CHECK_INT(tk_print_prepare("%d", "pth", fields, NF, &p, NULL, 0),
		  -EINVAL);
	CHECK_INT(tk_print_prepare("%d", "pth", fields, NF, &p, err, 0),
		  -EINVAL);
}

/* ---- truncation ---------------------------------------------------------- */

/* Format with every buflen up to past the full length, buffer canaried. */
static void check_truncation(const char *fmt, const char *args,
			     const struct tk_value *values, const char *full)
{
	size_t len = strlen(full), buflen, n;
	struct tk_print *p;
	char *buf;

	if (tk_print_prepare(fmt, args, fields, NF, &p, NULL, 0)) {
		CHECK(!"prepare failed");
		return;
	}
	CHECK_INT(tk_print_format(p, values, NULL, 0), len);
	for (buflen = 1; buflen <= len + 2; buflen++) {
		buf = malloc(buflen + 1);
		memset(buf, '#', buflen + 1);
		n = tk_print_format(p, values, buf, buflen);
		CHECK_INT(n, len);
		if (buflen <= len) {
			CHECK(memcmp(buf, full, buflen - 1) == 0);
			CHECK_INT(buf[buflen - 1], '\0');
		} else {
			CHECK_STR(buf, full);
		}
		CHECK_INT(buf[buflen], '#');
		free(buf);
	}
	tk_print_free(p);
}

static void test_truncation(void)
{
	struct tk_value values[NF] = { 0 };
	struct tk_print *p;
	char buf[64];

	values[F_I32] = vint(42);
	values[F_STR] = vstr("/tmp/x", 6);
	values[F_U32] = vuint(7);
	values[F_DBL] = vdbl(-3.25);
	values[F_PTR] = vuint(0xbeef);
	values[F_BYTES] = vstr(deadbeef, 4);
	values[F_CHARS] = vstr(chars_abc, 8);

	CHECK_INT(tk_print_prepare("id=%d path=%s len=%u", "i32, str, u32",
				   fields, NF, &p, NULL, 0), 0);
	CHECK_INT(tk_print_format(p, values, NULL, 0), 23);
	memset(buf, '#', sizeof(buf));
	CHECK_INT(tk_print_format(p, values, buf, 1), 23);
	CHECK_STR(buf, "");
	CHECK_INT(buf[1], '#');
	CHECK_INT(tk_print_format(p, values, buf, 5), 23);
	CHECK_STR(buf, "id=4");
	CHECK_INT(buf[5], '#');
	CHECK_INT(tk_print_format(p, values, buf, 23), 23);
	CHECK_STR(buf, "id=42 path=/tmp/x len=");
	CHECK_INT(tk_print_format(p, values, buf, 24), 23);
	CHECK_STR(buf, "id=42 path=/tmp/x len=7");
	tk_print_free(p);

	check_truncation("id=%d path=%s len=%u", "i32, str, u32", values,
			 "id=42 path=/tmp/x len=7");
	check_truncation("%-8d|%8s|%08.3f|%20p|%p|%#x",
			 "i32,str,dbl,ptr,u64,u32", values,
			 "42      |  /tmp/x|-003.250|              0xbeef|(nil)|0x7");
	check_truncation("%s %8s %-15s!", "data, chars, data", values,
			 "{de,ad,be,ef}      abc {de,ad,be,ef}  !");
	check_truncation("", "", values,
			 "i8=0 i16=0 i32=42 i64=0 u8=0 u16=0 u32=7 u64=0 "
			 "ptr=0xbeef dbl=-3.25 chars=abc str=/tmp/x "
			 "data={de,ad,be,ef}");
	check_truncation("%e|%10.4g|%a", "dbl, dbl, dbl", values,
			 "-3.250000e+00|     -3.25|-0x1.ap+1");
}

/* The largest width and precision accepted, into a buffer that fits. */
static void test_limits(void)
{
	struct tk_value values[NF] = { 0 };
	struct tk_print *p;
	static char buf[10000];
	size_t n;

	values[F_I32] = vint(-5);
	values[F_DBL] = vdbl(1.0);
	CHECK_INT(tk_print_prepare("%4096d|%.4096f|%-4096s|", "i32, dbl, i32",
				   fields, NF, &p, NULL, 0), 0);
	n = tk_print_format(p, values, buf, sizeof(buf));
	CHECK_INT(n, 4096 + 1 + 4098 + 1 + 4096 + 1);
	CHECK(memcmp(buf + 4094, "-5|1.000", 8) == 0);
	CHECK(memcmp(buf + 4096 + 1 + 4098 + 1, "-5  ", 4) == 0);
	tk_print_free(p);
}

int main(void)
{
	test_int_kinds();
	test_int_flags();
	test_ptr_flags();
	test_double();
	test_text();
	test_embedded_nul();
	test_literals();
	test_binding();
	test_marker_fields();
	test_default_layout();
	test_errors();
	test_truncation();
	test_limits();
	return TEST_DONE();
}
