/* SPDX-License-Identifier: MIT */
/*
 * test-filter.c - unit tests for common/filter.c.
 *
 * One event with a field of every kind; each test sets the values it needs,
 * compiles an expression and checks the result, or checks the exact error
 * message and column for a bad expression.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/filter.h"
#include "tk-test.h"

enum { F_RET, F_LEN, F_ADDR, F_RATIO, F_COMM, F_PATH, F_DATA, F_FLAGS, NF };

static const struct tk_field_desc fields[NF] = {
	[F_RET] = { .name = "ret", .kind = TK_KIND_INT, .size = 8 },
	[F_LEN] = { .name = "len", .kind = TK_KIND_UINT, .size = 4 },
	[F_ADDR] = { .name = "addr", .kind = TK_KIND_PTR, .size = 8 },
	[F_RATIO] = { .name = "ratio", .kind = TK_KIND_DOUBLE, .size = 8 },
	[F_COMM] = { .name = "comm", .kind = TK_KIND_CHARS, .array_len = 16 },
	[F_PATH] = { .name = "path", .kind = TK_KIND_STRING },
	[F_DATA] = { .name = "data", .kind = TK_KIND_BYTES },
	[F_FLAGS] = { .name = "flags", .kind = TK_KIND_UINT, .size = 8 },
};

static struct tk_value vals[NF];
static char comm_buf[16];

static void set_comm(const char *s)
{
	memset(comm_buf, 0, sizeof(comm_buf));
	memcpy(comm_buf, s, strnlen(s, sizeof(comm_buf)));
	vals[F_COMM].str = comm_buf;
	vals[F_COMM].len = sizeof(comm_buf);
}

static void set_str(int field, const char *s)
{
	vals[field].str = s;
	vals[field].len = s ? strlen(s) : 0;
}

static void reset(void)
{
	memset(vals, 0, sizeof(vals));
	vals[F_RET].i = -5;
	vals[F_LEN].u = 100;
	vals[F_ADDR].u = 0x7ffd1000;
	vals[F_RATIO].d = 0.25;
	set_comm("bash");
	set_str(F_PATH, "/usr/bin/ls");
	vals[F_DATA].str = "\xde\xad\x00\xef";
	vals[F_DATA].len = 4;
	vals[F_FLAGS].u = 0x11;
}

/* 1 or 0 for a match, -1 (and a message) if @expr does not compile. */
static int eval(const char *expr)
{
	struct tk_filter_error err;
	struct tk_filter *f;
	int ret;

	if (tk_filter_compile(expr, fields, NF, &f, &err)) {
		fprintf(stderr, "cannot compile \"%s\": %d: %s\n", expr,
			err.column, err.message);
		return -1;
	}
	ret = tk_filter_match(f, vals);
	tk_filter_free(f);
	return ret;
}

#define YES(expr) CHECK_INT(eval(expr), 1)
#define NO(expr) CHECK_INT(eval(expr), 0)

static struct tk_filter_error last_err;

static int compile_err(const char *expr)
{
	struct tk_filter *f = (struct tk_filter *)1;
	int ret;

	memset(&last_err, 0x55, sizeof(last_err));
	ret = tk_filter_compile(expr, fields, NF, &f, &last_err);
	if (ret == 0)
		tk_filter_free(f);
	else if (f)
		ret = -9999; /* *out must be NULL on failure */
	return ret;
}

#define BAD(expr, col, msg)                                                  \
	do {                                                                 \
		CHECK_INT(compile_err(expr), -EINVAL);                       \
		CHECK_INT(last_err.column, col);                             \
		CHECK_STR(last_err.message, msg);                            \
	} while (0)

static void test_int(void)
{
	reset();
	YES("ret == -5");
	NO("ret == 5");
	YES("ret != 5");
	NO("ret != -5");
	YES("ret < 0");
	YES("ret < -4");
	NO("ret < -5");
	YES("ret <= -5");
	NO("ret <= -6");
	YES("ret > -6");
	NO("ret > -5");
	YES("ret >= -5");
	NO("ret >= 0");
	YES("ret & 1");  /* -5 is ...11111011 */
	NO("ret & 4");
	YES("ret & 0x8000000000000000");
	YES("ret & -1");

	vals[F_RET].i = -1;
	YES("ret < 0");
	NO("ret > 0");
	YES("ret == -1");
	vals[F_RET].i = INT64_MIN;
	YES("ret == -9223372036854775808");
	YES("ret < -9223372036854775807");
	YES("ret <= -0x8000000000000000");
	vals[F_RET].i = INT64_MAX;
	YES("ret == 9223372036854775807");
	YES("ret == 0x7fffffffffffffff");
	YES("ret > 0");
	vals[F_RET].i = 8;
	YES("ret == 010");
	YES("ret == 0x8");
	YES("ret == 0X08");
	YES("ret == 8");
	YES("ret == -0 || ret == 8");
	NO("ret == 0");
}

static void test_uint(void)
{
	reset();
	YES("len == 100");
	YES("len != 99");
	NO("len != 100");
	YES("len < 101");
	NO("len < 100");
	YES("len <= 100");
	NO("len <= 99");
	YES("len > 99");
	NO("len > 100");
	YES("len >= 100");
	NO("len >= 101");
	YES("len & 4");   /* 100 = 0x64 */
	NO("len & 3");
	YES("len == 0x64");
	YES("len == 0144");
	NO("len == -0");
	YES("len & -1");

	vals[F_FLAGS].u = UINT64_MAX;
	YES("flags > 0");
	YES("flags == 0xffffffffffffffff");
	YES("flags == 18446744073709551615");
	YES("flags == 01777777777777777777777");
	YES("flags > 0x7fffffffffffffff");
	NO("flags < 1");
	YES("flags & 0x8000000000000000");
	vals[F_FLAGS].u = 0;
	NO("flags & 0xffffffffffffffff");
	YES("flags == 0");
	NO("flags > 0");
	YES("flags <= 0");
	YES("flags >= 0");

	/* Pointers compare unsigned. */
	YES("addr == 0x7ffd1000");
	YES("addr != 0");
	YES("addr > 0x1000");
	YES("addr >= 0x7ffd1000");
	NO("addr < 0x7ffd1000");
	YES("addr <= 0x7ffd1000");
	YES("addr & 0x1000");
	NO("addr & 0xfff");
	vals[F_ADDR].u = 0xffff800000000000;
	YES("addr > 0x7fffffffffffffff");
	NO("addr < 0x1000");
}

static void test_double(void)
{
	reset();
	YES("ratio == 0.25");
	YES("ratio == .25");
	YES("ratio == 2.5e-1");
	YES("ratio == 25E-2");
	NO("ratio == 0.2");
	YES("ratio != 1");
	NO("ratio != 0.25");
	YES("ratio < 1");
	NO("ratio < 0.25");
	YES("ratio <= 0.25");
	YES("ratio > -1.5");
	NO("ratio > 0.25");
	YES("ratio >= 0.25");
	NO("ratio >= 1e10");
	YES("ratio > 0");
	YES("ratio < 0x1");
	YES("ratio > -0x10");
	YES("ratio == 1.0 || ratio == 0.25");
	vals[F_RATIO].d = -3;
	YES("ratio == -3");
	YES("ratio == -3.");
	YES("ratio < -2.5");
	vals[F_RATIO].d = 1.1;
	YES("ratio == 1.1");
	vals[F_RATIO].d = NAN;
	NO("ratio == 0");
	YES("ratio != 0");
	NO("ratio < 0");
	NO("ratio >= 0");
	NO("ratio > 1e-400");          /* underflows to 0 */
	vals[F_RATIO].d = 1e-300;
	YES("ratio > 1e-400");
}

static void test_strings(void)
{
	reset();
	/* STRING: the whole len bytes. */
	YES("path == \"/usr/bin/ls\"");
	YES("path == '/usr/bin/ls'");
	NO("path == \"/usr/bin/l\"");
	NO("path == \"/usr/bin/lss\"");
	YES("path != \"/usr/bin/lsx\"");
	NO("path != '/usr/bin/ls'");
	YES("path ~ \"/usr/bin/ls\"");
	YES("path ~ \"/usr/*\"");
	NO("path ~ \"/bin/*\"");
	YES("path ~ \"*/ls\"");
	NO("path ~ \"*/cat\"");
	YES("path ~ \"*bin*\"");
	NO("path ~ \"*sbin*\"");
	YES("path ~ \"*\"");
	YES("path ~ \"**\"");
	YES("path ~ \"/usr/*/ls\"");
	YES("path ~ \"/*/*/*\"");
	NO("path ~ \"/*/*/*/*\"");
	YES("path ~ \"/usr/bin/l?\"");
	NO("path ~ \"/usr/bin/?\"");
	YES("path ~ \"?usr?bin?ls\"");
	YES("path ~ \"*/[a-m]s\"");
	NO("path ~ \"*/[m-z]s\"");
	YES("path ~ \"*/[!a-c]s\"");
	NO("path ~ \"*/[!k-m]s\"");
	YES("path ~ \"[/]usr*\"");
	YES("path ~ \"*[kl][rs]\"");
	YES("path ~ \"*[^a-c]s\"");
	NO("path ~ \"*[a-]s\"");     /* a '-' last or first is a member */
	YES("path ~ \"*[a-l]s\"");
	YES("path ~ \"*[-l]s\"");
	YES("path ~ \"*[l-]s\"");
	NO("path ~ \"*[z-a]s\"");    /* a backwards range is empty */
	YES("path ~ \"*b?n*l[s]\"");
	YES("path != \"/usr/*\"");     /* != and == take no glob */
	NO("path == \"/usr/*\"");
	YES("path ~ /usr/bin/ls");     /* unquoted, as the kernel takes */
	YES("path ~ *ls");
	YES("path == /usr/bin/ls");

	/* Glob metacharacters as ordinary characters. */
	set_str(F_PATH, "a*b[c]?\\");
	YES("path ~ 'a\\*b*'");
	NO("path ~ 'ax*'");
	YES("path ~ 'a\\*b\\[c]\\?\\\\'");
	YES("path ~ 'a?b[[]c]*'");
	YES("path ~ '*[]]?\\\\'");
	YES("path == 'a*b[c]?\\\\'");
	NO("path ~ '*[c'");            /* no ']': '[' is literal */
	set_str(F_PATH, "x[c");
	YES("path ~ '*[c'");

	/* The star takes as little or as much as it needs. */
	set_str(F_PATH, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaab");
	YES("path ~ '*a*a*a*a*a*b'");
	NO("path ~ '*a*a*a*a*a*c'");
	YES("path ~ 'a*ab'");
	YES("path ~ '*?b'");
	set_str(F_PATH, "");
	YES("path == ''");
	YES("path ~ '*'");
	NO("path ~ '?*'");
	NO("path ~ '*?'");
	YES("path ~ ''");
	vals[F_PATH].str = NULL;       /* a NULL string is empty */
	YES("path == \"\"");
	YES("path ~ '*'");
	NO("path ~ 'a*'");

	/* Quotes and escapes. */
	set_str(F_PATH, "it's \"x\"");
	YES("path == \"it's \\\"x\\\"\"");
	YES("path == 'it\\'s \"x\"'");
	YES("path ~ '*\\'s*'");

	/* CHARS: up to the first NUL, or the whole array. */
	set_comm("bash");
	YES("comm == \"bash\"");
	NO("comm == \"bas\"");
	NO("comm == \"bash\\0\"");
	YES("comm != \"sh\"");
	YES("comm ~ \"ba*\"");
	YES("comm ~ \"*sh\"");
	YES("comm ~ \"*as*\"");
	YES("comm ~ \"b[a-c]s?\"");
	NO("comm ~ \"b[!a-c]s?\"");
	NO("comm ~ \"*h?\"");
	set_comm("0123456789abcdef");  /* no NUL at all */
	YES("comm == '0123456789abcdef'");
	YES("comm ~ '*ef'");
	NO("comm ~ '*ef?'");

	/* BYTES: all len bytes, NULs included. */
	vals[F_DATA].str = "ab\0cd";
	vals[F_DATA].len = 5;
	NO("data == 'ab'");
	YES("data ~ 'ab*'");
	YES("data ~ '*cd'");
	YES("data ~ 'ab?cd'");
	YES("data ~ '*b?c*'");
	YES("data != 'abcd'");
	vals[F_DATA].len = 2;
	YES("data == 'ab'");
}

/*
 * Exact, prefix, suffix and substring globs take fast paths; writing the
 * same pattern with a one-character class forces the general matcher, and
 * both must agree.
 */
static void test_glob_paths(void)
{
	static const char *const subjects[] = {
		"", "s", "sh", "bash", "shsh", "hs", "ashes", "xshx",
	};
	static const char *const pairs[][2] = {
		{ "sh", "[s]h" },     { "sh*", "[s]h*" },   { "*sh", "*[s]h" },
		{ "*sh*", "*[s]h*" }, { "**sh**", "*[s]h*" }, { "s", "[s]" },
	};
	char fast[64], slow[64];
	size_t i, j;
	int a, b;

	reset();
	for (i = 0; i < sizeof(subjects) / sizeof(subjects[0]); i++) {
		set_str(F_PATH, subjects[i]);
		for (j = 0; j < sizeof(pairs) / sizeof(pairs[0]); j++) {
			snprintf(fast, sizeof(fast), "path ~ '%s'", pairs[j][0]);
			snprintf(slow, sizeof(slow), "path ~ '%s'", pairs[j][1]);
			a = eval(fast);
			b = eval(slow);
			if (a != b)
				fprintf(stderr, "'%s' on '%s': %d, '%s': %d\n",
					pairs[j][0], subjects[i], a, pairs[j][1], b);
			CHECK_INT(a, b);
		}
	}
}

static void test_logic(void)
{
	reset();
	/* ret == -5, len == 100, ratio == 0.25, comm "bash" */
	YES("ret == -5 && len == 100");
	NO("ret == -5 && len == 1");
	NO("ret == 1 && len == 100");
	YES("ret == 1 || len == 100");
	YES("ret == -5 || len == 1");
	NO("ret == 1 || len == 1");
	YES("!(ret == 1)");
	NO("!(ret == -5)");
	YES("!ret == 1");              /* ! binds to the comparison */
	YES("!!(ret == -5)");
	NO("!!!(ret == -5)");
	YES("! ! ret == -5");
	YES("!(ret == 1 && len == 100)");
	NO("!(ret == 1 || len == 100)");

	/* && binds tighter than ||. */
	YES("ret == -5 || len == 1 && ratio == 9");
	NO("(ret == -5 || len == 1) && ratio == 9");
	YES("len == 1 && ratio == 9 || ret == -5");
	NO("len == 1 && (ratio == 9 || ret == -5)");
	YES("ret == 1 || ret == 2 || ret == 3 || ret == -5");
	NO("ret == -5 && len == 100 && ratio == 0.25 && comm == 'sh'");
	YES("ret == -5 && len == 100 && ratio == 0.25 && comm == 'bash'");
	YES("(ret == 1 || len == 100) && (comm ~ 'b*' || ratio > 1)");
	NO("(ret == 1 || len == 99) && (comm ~ 'b*' || ratio > 1)");
	YES("!(ret == 1 || len == 99) && !(comm ~ 'x*' && ratio > 0)");
	YES("((((ret == -5))))");
	NO("!((((ret == -5))))");
	YES("(ret == 1 || (len == 2 || (ratio == 3 || comm == 'bash')))");
	NO("(ret == 1 || (len == 2 || (ratio == 3 || comm == 'x')))");
	YES("(ret == -5 && (len == 100 && !(ratio == 3 && comm == 'bash')))");

	/* Whitespace anywhere, or none. */
	YES("ret==-5&&len==100");
	YES("(ret==-5)||(len==1)");
	YES("\t ret\n==\r-5 \t&&\n( len\f==\v100 ) ");
	YES("comm~'b*'&&path=='/usr/bin/ls'");
	YES("!(ret!=-5)");
}

static void test_api(void)
{
	struct tk_filter_error err;
	struct tk_filter *f;
	char expr[64];
	struct tk_field_desc copy[NF];
	int ret;

	/* The text is copied, and so are the fields. */
	strcpy(expr, " len > 5 ");
	memcpy(copy, fields, sizeof(copy));
	ret = tk_filter_compile(expr, copy, NF, &f, &err);
	CHECK_INT(ret, 0);
	memset(expr, 'x', sizeof(expr) - 1);
	memset(copy, 0, sizeof(copy));
	CHECK_STR(tk_filter_text(f), " len > 5 ");
	reset();
	CHECK(tk_filter_match(f, vals));
	tk_filter_free(f);
	tk_filter_free(NULL);

	/* No place for the filter; no filter at all matches everything. */
	CHECK_INT(tk_filter_compile("len > 5", fields, NF, NULL, &err), -EINVAL);
	CHECK(tk_filter_match(NULL, vals));
	CHECK(tk_filter_text(NULL) == NULL);

	/* A NULL error pointer is allowed. */
	CHECK_INT(tk_filter_compile("nope == 1", fields, NF, &f, NULL), -EINVAL);
	CHECK(f == NULL);

	/* One filter, many value arrays. */
	CHECK_INT(tk_filter_compile("ret < 0 && comm ~ 'b*'", fields, NF, &f,
				    &err), 0);
	reset();
	CHECK(tk_filter_match(f, vals));
	vals[F_RET].i = 0;
	CHECK(!tk_filter_match(f, vals));
	vals[F_RET].i = -1;
	set_comm("zsh");
	CHECK(!tk_filter_match(f, vals));
	tk_filter_free(f);
}

static void test_limits(void)
{
	char buf[8192];
	int i, n;

	/* 64 parentheses deep is fine, 65 is not. */
	n = 0;
	for (i = 0; i < 64; i++)
		buf[n++] = '(';
	n += sprintf(buf + n, "ret == -5");
	for (i = 0; i < 64; i++)
		buf[n++] = ')';
	buf[n] = '\0';
	reset();
	YES(buf);
	memmove(buf + 1, buf, n + 1);
	buf[0] = '(';
	strcpy(buf + n + 1, ")");
	BAD(buf, 65, "parentheses nested deeper than 64");

	/* Depth is nesting, not count. */
	n = sprintf(buf, "ret == -5");
	for (i = 0; i < 200; i++)
		n += sprintf(buf + n, " && (len == 100)");
	YES(buf);

	/* Long ! runs do not recurse. */
	n = 0;
	for (i = 0; i < 4000; i++)
		buf[n++] = '!';
	strcpy(buf + n, "ret == -5");
	YES(buf);
	buf[0] = ' ';
	NO(buf);

	/* 4096 characters is the longest. */
	memset(buf, ' ', 4096);
	memcpy(buf, "ret==-5", 7);
	buf[4096] = '\0';
	YES(buf);
	buf[4096] = ' ';
	buf[4097] = '\0';
	BAD(buf, 4097, "filter longer than 4096 characters");

	/* Long && chains with all the connectives. */
	n = sprintf(buf, "len == 1");
	while (n < 4000)
		n += sprintf(buf + n, " || len == 1 && !(ret < 0)");
	n += sprintf(buf + n, " || len == 100");
	YES(buf);
}

static void test_errors(void)
{
	char buf[256];

	BAD("", 0, "empty filter");
	BAD("  \t ", 0, "empty filter");
	BAD(NULL, 0, "empty filter");
	BAD("lenn == 1", 1, "unknown field 'lenn' (did you mean 'len'?)");
	BAD("len == 1 && fags & 1", 13,
	    "unknown field 'fags' (did you mean 'flags'?)");
	BAD("ration > 1", 1, "unknown field 'ration' (did you mean 'ratio'?)");
	BAD("cmom == 'x'", 1, "unknown field 'cmom' (did you mean 'comm'?)");
	BAD("LEN == 1", 1, "unknown field 'LEN' (did you mean 'len'?)");
	BAD("pid == 1", 1, "unknown field 'pid'");
	BAD("x == 1", 1, "unknown field 'x'");
	BAD("len ==", 7, "expected a value after '=='");
	BAD("len == )", 8, "expected a value after '==', got ')'");
	BAD("(len <= && ret == 1)", 9, "expected a value after '<=', got '&&'");
	BAD("len ~ 'x'", 5, "operator '~' needs a string field, 'len' is a number");
	BAD("ret ~ 'x'", 5, "operator '~' needs a string field, 'ret' is a number");
	BAD("addr ~ 'x'", 6,
	    "operator '~' needs a string field, 'addr' is a pointer");
	BAD("ratio & 1", 7,
	    "operator '&' needs an integer field, 'ratio' is a double");
	BAD("comm < 'x'", 6,
	    "operator '<' needs a number field, 'comm' is a string");
	BAD("data >= 'x'", 6,
	    "operator '>=' needs a number field, 'data' is a byte array");
	BAD("path & 1", 6, "operator '&' needs an integer field, 'path' is a string");
	BAD("len == 1)", 9, "unbalanced ')'");
	BAD("(len == 1", 1, "unbalanced '('");
	BAD("(len == 1 || (ret == 2)", 1, "unbalanced '('");
	BAD("len == 1 && ((ret == 2)", 13, "unbalanced '('");
	BAD("(len == 1 x", 11, "expected '&&', '||' or ')', got 'x'");
	BAD("()", 1, "empty parentheses");
	BAD("len == 99999999999999999999", 8,
	    "integer '99999999999999999999' out of range");
	BAD("flags == 0x10000000000000000", 10,
	    "integer '0x10000000000000000' out of range");
	BAD("ret == 9223372036854775808", 8,
	    "integer '9223372036854775808' out of range");
	BAD("ret == -9223372036854775809", 8,
	    "integer '-9223372036854775809' out of range");
	BAD("ret & -9223372036854775809", 7,
	    "integer '-9223372036854775809' out of range");
	BAD("len == -1", 8, "negative integer '-1' for unsigned field 'len'");
	BAD("addr < -0x10", 8, "negative integer '-0x10' for unsigned field 'addr'");
	BAD("len == 10x", 8, "invalid integer '10x'");
	BAD("len == 1.5", 8, "invalid integer '1.5'");
	BAD("len == 08", 8, "invalid integer '08'");
	BAD("len == 0x", 8, "invalid integer '0x'");
	BAD("len == -", 8, "invalid integer '-'");
	BAD("ratio == 1.2.3", 10, "invalid number '1.2.3'");
	BAD("ratio == 1e", 10, "invalid number '1e'");
	BAD("ratio == nan", 10, "invalid number 'nan'");
	BAD("ratio == 1e999", 10, "number '1e999' out of range");
	BAD("ratio == 0x10000000000000000", 10,
	    "number '0x10000000000000000' out of range");
	BAD("ratio == 0xg", 10, "invalid number '0xg'");
	BAD("len == 'x'", 8, "expected a number for 'len', got a string");
	BAD("path == \"abc", 9, "unterminated string");
	BAD("path == 'abc\\'", 9, "unterminated string");
	BAD("len", 4, "expected an operator after 'len'");
	BAD("len 5", 5, "expected an operator after 'len', got '5'");
	BAD("len && ret == 1", 5, "expected an operator after 'len', got '&&'");
	BAD("len = 5", 5, "unknown operator '=' (did you mean '=='?)");
	BAD("len => 5", 5, "unknown operator '=>'");
	BAD("len <> 5", 5, "unknown operator '<>'");
	BAD("path !~ 'x'", 6, "unknown operator '!~'");
	BAD("len == 1 &&", 12, "expected a field name after '&&'");
	BAD("len == 1 ||   ", 15, "expected a field name after '||'");
	BAD("!", 2, "expected a field name after '!'");
	BAD("(", 2, "expected a field name after '('");
	BAD("5 == len", 1, "expected a field name, got '5'");
	BAD("== 5", 1, "expected a field name, got '=='");
	BAD("len == 1 && 'x'", 13, "expected a field name, got a string");
	BAD("len == 1 && \x01", 13, "expected a field name, got byte 0x01");
	BAD("len == 1 ret == 2", 10, "expected '&&' or '||', got 'ret'");
	BAD("len == 1 & ret == 2", 10, "expected '&&' or '||', got '&'");
	BAD("len == 1 | ret == 2", 10, "expected '&&' or '||', got '|'");
	BAD("len == 1 'x'", 10, "expected '&&' or '||', got a string");
	BAD("len == 1 &&& ret == 2", 12, "expected a field name, got '&'");
	BAD(")", 1, "expected a field name, got ')'");
	BAD("len == 1 (ret == 2)", 10, "expected '&&' or '||', got '('");

	/* Long subjects are cut short in messages. */
	memset(buf, 'a', 100);
	strcpy(buf + 100, " == 1");
	BAD(buf, 1, "unknown field 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
	BAD("len == 1234567890123456789012345678901234567890", 8,
	    "integer '12345678901234567890123456789012...' out of range");
}

static void test_unknown_kind(void)
{
	static const struct tk_field_desc odd[] = {
		{ .name = "weird", .kind = 99 },
	};
	struct tk_filter_error err;
	struct tk_filter *f;

	CHECK_INT(tk_filter_compile("weird == 1", odd, 1, &f, &err), -EINVAL);
	CHECK_INT(err.column, 1);
	CHECK_STR(err.message, "field 'weird' has unknown kind 99");
	CHECK_INT(tk_filter_compile("a == 1", NULL, 0, &f, &err), -EINVAL);
	CHECK_STR(err.message, "unknown field 'a'");
}

/* A namer for .function: addresses 0x1000-0x1fff are in "main",
 * 0x2000-0x20ff in "leaf", others unknown; counts its calls. */
static unsigned named;

static const char *test_namer(void *ctx, uint64_t addr)
{
	named++;
	CHECK(ctx == &named);
	return addr >= 0x1000 && addr < 0x2000 ? "main"
	       : addr >= 0x2000 && addr < 0x2100 ? "leaf" : NULL;
}

/* 1 or 0 for a match of @expr compiled with the namer, -1 if it does
 * not compile (message in last_err). */
static int eval_named(const char *expr)
{
	struct tk_filter *f;
	int ret;

	if (tk_filter_compile_named(expr, fields, NF, test_namer, &named, &f,
				    &last_err))
		return -1;
	ret = tk_filter_match(f, vals);
	tk_filter_free(f);
	return ret;
}

#define BAD_NAMED(expr, col, msg)                                            \
	do {                                                                 \
		CHECK_INT(eval_named(expr), -1);                             \
		CHECK_INT(last_err.column, col);                             \
		CHECK_STR(last_err.message, msg);                            \
	} while (0)

static void test_function_names(void)
{
	reset();
	vals[F_ADDR].u = 0x1234; /* inside main */
	vals[F_FLAGS].u = 0x2004; /* inside leaf: a 64-bit integer */
	CHECK_INT(eval_named("addr.function == main"), 1);
	CHECK_INT(eval_named("addr.function == \"main\""), 1);
	CHECK_INT(eval_named("addr.function != main"), 0);
	CHECK_INT(eval_named("addr.function == leaf"), 0);
	CHECK_INT(eval_named("addr.function ~ \"ma*\""), 1);
	CHECK_INT(eval_named("flags.function == leaf && addr.function == main"), 1);
	/* a pointer compared with a quoted string names its function */
	CHECK_INT(eval_named("addr == \"main\""), 1);
	CHECK_INT(eval_named("addr != 'main'"), 0);
	CHECK_INT(eval_named("addr ~ \"*ai*\""), 1);
	/* numbers still compare the address */
	CHECK_INT(eval_named("addr == 0x1234"), 1);
	CHECK_INT(eval_named("addr > 0x1000 && addr.function == main"), 1);
	/* an address of no known function */
	vals[F_ADDR].u = 0x9000;
	CHECK_INT(eval_named("addr.function == main"), 0);
	CHECK_INT(eval_named("addr.function != main"), 1);
	named = 0;
	CHECK_INT(eval_named("len == 1 && addr.function == main"), 0);
	CHECK_INT(named, 0); /* short circuit: not named */

	BAD_NAMED("addr.function < main", 15,
		  "operator '<' does not compare a function's name: use '==', '!=' or '~'");
	BAD_NAMED("addr.func == main", 5,
		  "unknown postfix '.func' of 'addr' (filters know '.function')");
	BAD_NAMED("len.function == main", 4,
		  "postfix '.function' needs an address, 'len' is a number narrower than 64 bits");
	BAD_NAMED("path.function == main", 5,
		  "postfix '.function' needs an address, 'path' is a string");
	BAD_NAMED("addr.function ==", 17, "expected a value after '=='");
	/* without a namer: refused, and a string is no address */
	BAD("addr.function == main", 5,
	    "postfix '.function' is not available in this filter");
	BAD("addr == \"main\"", 9, "expected a number for 'addr', got a string");
}

int main(void)
{
	test_int();
	test_uint();
	test_double();
	test_strings();
	test_glob_paths();
	test_logic();
	test_api();
	test_limits();
	test_errors();
	test_unknown_kind();
	test_function_names();
	return TEST_DONE();
}
