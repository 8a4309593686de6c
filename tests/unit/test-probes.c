/* SPDX-License-Identifier: MIT */
/*
 * test-probes.c - the spelling of dynamic probes, and their resolution
 * against a program not built for tracekit (format/probes.h).
 *
 *   test-probes PROG-WITH-DWARF PROG-WITHOUT
 *
 * Both are tests/progs/uprobed.c: f(int i, const char *name), returning
 * int, and the USDT probes tkprog:tick(s32, u64, s64) and
 * tkprog:guarded(s32) (with a semaphore).
 */
#include <errno.h>
#include <stdlib.h>
#include "common/visible.h"
#include "format/probes.h"
#include "tk-test.h"

static void parse_ok(void)
{
	struct tk_probe_spec s;
	char err[256];

	CHECK_INT(tk_probe_spec_parse("uprobe:/bin/x:main+0x10(a:s32, b , c:string)", &s,
				      err, sizeof(err)), 0);
	CHECK_INT(s.kind, TK_PROBE_UPROBE);
	CHECK_STR(s.path, "/bin/x");
	CHECK_STR(s.func, "main");
	CHECK_INT(s.offset, 16);
	CHECK_INT(s.nargs, 3);
	CHECK_STR(s.args[0].name, "a");
	CHECK_STR(s.args[0].type, "s32");
	CHECK_STR(s.args[1].name, "b");
	CHECK(s.args[1].type == NULL);
	CHECK_STR(s.args[2].type, "string");
	tk_probe_spec_free(&s);

	CHECK_INT(tk_probe_spec_parse("uretprobe:libc:mall*()", &s, err, sizeof(err)), 0);
	CHECK_INT(s.kind, TK_PROBE_URETPROBE);
	CHECK_STR(s.func, "mall*");
	CHECK(s.has_args && s.nargs == 0);
	tk_probe_spec_free(&s);

	CHECK_INT(tk_probe_spec_parse("uprobe:prog:0x1139", &s, err, sizeof(err)), 0);
	CHECK(s.has_addr && s.addr == 0x1139 && !s.func);
	tk_probe_spec_free(&s);

	CHECK_INT(tk_probe_spec_parse("usdt:python:function__entry", &s, err, sizeof(err)), 0);
	CHECK(!s.path);
	CHECK_STR(s.provider, "python");
	CHECK_STR(s.name, "function__entry");
	tk_probe_spec_free(&s);

	CHECK_INT(tk_probe_spec_parse("usdt:/usr/bin/python3:python:line(f:string)", &s, err,
				      sizeof(err)), 0);
	CHECK_STR(s.path, "/usr/bin/python3");
	CHECK_STR(s.provider, "python");
	CHECK_STR(s.name, "line");
	tk_probe_spec_free(&s);
}

static void parse_bad(const char *text, const char *want)
{
	struct tk_probe_spec s;
	char err[256] = "";

	CHECK_INT(tk_probe_spec_parse(text, &s, err, sizeof(err)), -EINVAL);
	if (strcmp(err, want))
		fprintf(stderr, "'%s': said \"%s\", want \"%s\"\n", text, err, want),
			tk_test_failures++;
}

static const struct tk_probe_field *field(const struct tk_probe *p, const char *name)
{
	for (unsigned i = 0; i < p->nfields; i++)
		if (!strcmp(p->fields[i].name, name))
			return &p->fields[i];
	return NULL;
}

static void resolve(const char *dwarf, const char *nodwarf)
{
	struct tk_probe_target t = { .program = dwarf };
	struct tk_probe_set set = { 0 };
	const struct tk_probe_field *f;
	char spec[512], note[256], err[512];
	int n;

	snprintf(spec, sizeof(spec), "uprobe:%s:f", dwarf);
	n = tk_probes_resolve(spec, &t, &set, note, sizeof(note), err, sizeof(err));
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(set.probe[0].event, "f");
		CHECK_INT(set.probe[0].nfields, 8);
		f = field(&set.probe[0], "i");
		CHECK(f && f->loc == TK_LOC_REG && !strcmp(f->reg, "di") &&
		      !strcmp(f->type, "s32"));
		f = field(&set.probe[0], "name");
		CHECK(f && f->loc == TK_LOC_REG && !strcmp(f->reg, "si") &&
		      !strcmp(f->type, "string"));
		f = field(&set.probe[0], "arg5");
		CHECK(f && !strcmp(f->reg, "r9") && !strcmp(f->type, "u64"));
	}
	snprintf(spec, sizeof(spec), "uretprobe:%s:f(r)", dwarf);
	n = tk_probes_resolve(spec, &t, &set, note, sizeof(note), err, sizeof(err));
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_INT(set.probe[1].nfields, 1);
		CHECK(set.probe[1].fields[0].loc == TK_LOC_RETVAL);
		CHECK_STR(set.probe[1].fields[0].type, "s32");
		CHECK_INT(set.probe[1].offset, set.probe[0].offset);
	}
	/* without DWARF: only the registers, and named arguments need types */
	snprintf(spec, sizeof(spec), "uprobe:%s:f", nodwarf);
	CHECK_INT(tk_probes_resolve(spec, &t, &set, note, sizeof(note), err, sizeof(err)), 1);
	CHECK_INT(set.count, 3);
	if (set.count == 3) {
		CHECK_INT(set.probe[2].nfields, 6);
		CHECK_STR(set.probe[2].event, "f_2");
	}
	snprintf(spec, sizeof(spec), "uprobe:%s:f(n)", nodwarf);
	CHECK_INT(tk_probes_resolve(spec, &t, &set, note, sizeof(note), err, sizeof(err)),
		  -ENODATA);
	CHECK(strstr(err, "no DWARF for argument 'n'") != NULL);
	CHECK_INT(set.count, 3);
	/* USDT: types from the note, the semaphore's file offset */
	snprintf(spec, sizeof(spec), "usdt:%s:tkprog:*", dwarf);
	CHECK_INT(tk_probes_resolve(spec, &t, &set, note, sizeof(note), err, sizeof(err)), 2);
	for (unsigned i = 3; i < set.count; i++) {
		const struct tk_probe *p = &set.probe[i];

		if (!strcmp(p->event, "tkprog_tick")) {
			CHECK_INT(p->nfields, 3);
			CHECK(!p->ref_ctr);
			CHECK_STR(p->fields[0].type, "s32");
			CHECK_STR(p->fields[1].type, "u64");
			CHECK_STR(p->fields[2].type, "s64");
		} else {
			CHECK_STR(p->event, "tkprog_guarded");
			CHECK_INT(p->nfields, 1);
			CHECK(p->ref_ctr != 0);
		}
	}
	CHECK(strstr(note, "matched 2 USDT sites") != NULL);
	tk_probe_set_free(&set);
}

/* What the kernel's probe syntax takes, and text made printable. */
static void kernel_syntax(void)
{
	struct tk_probe_field fl = { .name = "i", .type = "s32", .loc = TK_LOC_REG, .reg = "di" };
	struct tk_probe p = { .kind = TK_PROBE_UPROBE, .event = "f", .path = "/bin/x",
			      .fields = &fl, .nfields = 1, .spec = "uprobe:x:f" };
	char err[256], out[16];

	CHECK(tk_probe_name_ok("a_1", 32));
	CHECK(!tk_probe_name_ok("1a", 32));
	CHECK(!tk_probe_name_ok("a b", 32));
	CHECK(!tk_probe_name_ok("a\xc3\xa9", 32)); /* letters of no locale */
	CHECK(!tk_probe_name_ok("abcd", 3));
	CHECK_INT(tk_probe_check(&p, "tracekit_1_uprobe", "p:...", err, sizeof(err)), 0);
	p.path = "/a/b#c";
	CHECK_INT(tk_probe_check(&p, "tracekit_1_uprobe", "p:...", err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "'uprobe:x:f': cannot probe '/a/b#c': it holds '#' (a comment to the kernel) at byte 4, which a probe definition cannot carry");
	p.path = "/a/\x0b";
	CHECK_INT(tk_probe_check(&p, "tracekit_1_uprobe", "p:...", err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "'uprobe:x:f': cannot probe '/a/\\x0b': it holds control character 0x0b at byte 3, which a probe definition cannot carry");
	p.path = "/bin/x";
	snprintf(fl.name, sizeof(fl.name), "q=%%di");
	CHECK_INT(tk_probe_check(&p, "tracekit_1_uprobe", "p:...", err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "'uprobe:x:f': field 'q=%di' is not a name the kernel takes (a C identifier of at most 32 characters)");
	snprintf(fl.name, sizeof(fl.name), "i");
	snprintf(fl.type, sizeof(fl.type), "u64 x");
	CHECK_INT(tk_probe_check(&p, "tracekit_1_uprobe", "p:...", err, sizeof(err)), -EINVAL);
	CHECK_STR(tk_visible(out, sizeof(out), "a\x1b[2Jb"), "a\\x1b[2Jb");
	CHECK_STR(tk_visible(out, sizeof(out), "\xc3\xa9\xc2\x9b\\"), "\xc3\xa9\\xc2\\x9b\\\\");
	CHECK_STR(tk_visible(out, 6, "ab\ncd"), "ab");
}

int main(int argc, char **argv)
{
	kernel_syntax();
	parse_ok();
	parse_bad("uprobe:x", "'uprobe:x': give the file and the function, as uprobe:PATH:FUNC");
	parse_bad("uprobe:x:f(1a:s32)", "'uprobe:x:f(1a:s32)': '1a' is not an argument name");
	parse_bad("uprobe:x:f(a:int)",
		  "'uprobe:x:f(a:int)': unknown type 'int' for 'a' (types: u8..u64, s8..s64, x8..x64, string)");
	parse_bad("uprobe:x:f(a, a)", "'uprobe:x:f(a, a)': argument 'a' is named twice");
	parse_bad("uprobe:x:f(a,)", "'uprobe:x:f(a,)': an argument is missing after the last ','");
	parse_bad("uretprobe:x:f+4", "'uretprobe:x:f+4': a uretprobe is on a function's entry, not at an offset");
	parse_bad("uretprobe:x:f(a, b)", "'uretprobe:x:f(a, b)': a uretprobe has one value to name, the return value");
	parse_bad("usdt:a:b:c:d", "'usdt:a:b:c:d': give usdt:PROVIDER:NAME or usdt:PATH:PROVIDER:NAME");
	parse_bad("uprobe:x:f(a", "'uprobe:x:f(a': the arguments go in one '(...)' at the end");
	if (argc > 2)
		resolve(argv[1], argv[2]);
	return TEST_DONE();
}
