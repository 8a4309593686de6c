/* SPDX-License-Identifier: MIT */
/*
 * test-export.c - convert's writers (export/out.c) and flame tree
 * (export/flame.c): JSON strings valid whatever the bytes, times in
 * microseconds with nanosecond decimals, trees merged and ordered.
 */
#include <stdint.h>
#include <stdlib.h>

#include "export/export.h"
#include "export/flame.h"
#include "tk-test.h"

static char buf[4096];
static struct tk_out out = { .fd = -1, .buf = buf, .cap = sizeof(buf) };

/* What was written since the last call, as a string. */
static const char *text(void)
{
	static char s[4096];

	memcpy(s, buf, out.len);
	s[out.len] = '\0';
	out.len = 0;
	return s;
}

static int path_of(void *ctx, const uint32_t *path, uint32_t depth)
{
	const struct tk_flame *f = ctx;

	for (uint32_t i = 1; i <= depth; i++) {
		if (i > 1)
			tk_out_char(&out, ';');
		tk_out_str(&out, tk_flame_name(f, path[i]));
	}
	if (depth) {
		tk_out_char(&out, '=');
		tk_out_u64(&out, f->node[path[depth]].total);
		tk_out_char(&out, ' ');
	}
	/* below "b": not visited */
	return !(depth && !strcmp(tk_flame_name(f, path[depth]), "b"));
}

int main(void)
{
	struct tk_flame f;
	uint32_t m, a, b;

	tk_out_json_str(&out, "plain", 5);
	CHECK_STR(text(), "\"plain\"");
	tk_out_json_str(&out, "q\"b\\n\nt\t\x01\x7f", 10);
	CHECK_STR(text(), "\"q\\\"b\\\\n\\nt\\t\\u0001\\u007f\"");
	/* valid UTF-8 kept; a byte that is not: its own code point */
	tk_out_json_str(&out, "caf\xc3\xa9 \xe2\x82\xac", 9);
	CHECK_STR(text(), "\"caf\xc3\xa9 \xe2\x82\xac\"");
	tk_out_json_str(&out, "a\xff" "b\xc3", 4);
	CHECK_STR(text(), "\"a\\u00ffb\\u00c3\"");
	tk_out_json_str(&out, "\xed\xa0\x80\xc0\xaf", 5); /* surrogate, overlong */
	CHECK_STR(text(), "\"\\u00ed\\u00a0\\u0080\\u00c0\\u00af\"");
	tk_out_json_str(&out, "nul\0in", 6);
	CHECK_STR(text(), "\"nul\\u0000in\"");

	tk_out_us(&out, 0);
	tk_out_char(&out, ' ');
	tk_out_us(&out, 7);
	tk_out_char(&out, ' ');
	tk_out_us(&out, 1234567);
	tk_out_char(&out, ' ');
	tk_out_us(&out, 18446744073709551615ull);
	CHECK_STR(text(), "0.000 0.007 1234.567 18446744073709551.615");
	tk_out_s64(&out, INT64_MIN);
	tk_out_char(&out, ' ');
	tk_out_s64(&out, -5);
	tk_out_char(&out, ' ');
	tk_out_u64(&out, 0);
	CHECK_STR(text(), "-9223372036854775808 -5 0");
	tk_out_xml_str(&out, "a<b>&\"c'\x01", 9);
	CHECK_STR(text(), "a&lt;b&gt;&amp;&quot;c&apos;?");
	/* not UTF-8 (a lone byte, a cut sequence), no XML character
	 * (U+FFFF): U+FFFD; UTF-8 as it is */
	tk_out_xml_str(&out, "\xff\xc3\xa9\xe2\x82\xef\xbf\xbfz", 9);
	CHECK_STR(text(), "\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "z");
	CHECK_INT(tk_utf8_cut("\xc3\xa9\xc3\xa9x", 5, 1), 2);
	CHECK_INT(tk_utf8_cut("\xc3\xa9\xc3\xa9x", 5, 3), 5);
	CHECK_INT(tk_utf8_cut("\xff\xc3", 2, 1), 1);

	/* main>b (3), main>a (2 + 1 below), main>a>x (1); b>main (5) */
	CHECK_INT(tk_flame_init(&f), 0);
	m = tk_flame_child(&f, TK_FLAME_ROOT, "main");
	b = tk_flame_child(&f, m, "b");
	a = tk_flame_child(&f, m, "a");
	CHECK(m && a && b && a != b);
	CHECK_INT(tk_flame_child(&f, m, "b"), b);
	tk_flame_add(&f, b, 3);
	tk_flame_add(&f, a, 2);
	tk_flame_add(&f, tk_flame_child(&f, a, "x"), 1);
	tk_flame_add(&f, tk_flame_child(&f, b, "y"), 10);
	tk_flame_add(&f, tk_flame_child(&f, tk_flame_child(&f, TK_FLAME_ROOT, "b"), "main"), 5);
	CHECK_INT(tk_flame_sort(&f), 0);
	CHECK_INT(f.node[TK_FLAME_ROOT].total, 21);
	CHECK_INT(tk_flame_walk(&f, path_of, &f), 0);
	CHECK_STR(text(), "b=5 main=16 main;a=3 main;a;x=1 main;b=13 ");
	tk_flame_free(&f);
	return TEST_DONE();
}
