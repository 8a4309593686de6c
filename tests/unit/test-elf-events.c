/* SPDX-License-Identifier: MIT */
/*
 * test-elf-events.c - reading tk_meta sections and needed libraries.
 *
 *   test-elf-events INSTRUMENTED PLAIN [NEEDS-INSTRUMENTED-LIB]
 *
 * INSTRUMENTED is a program with a tk_meta section, PLAIN one without
 * (such as /bin/true), NEEDS-INSTRUMENTED-LIB (optional) a program that
 * finds a library with a tk_meta section through DT_RUNPATH $ORIGIN.  The
 * bytes read are compared with those found by a small section walker of
 * our own.  The search rules and damaged files are checked on ELF files
 * the test writes itself into a temporary directory:
 *
 *   D/main         NEEDED liba.so libc2.so libtracekit.so.0.tktest-none
 *                         libtktest-x.so liba.so libsym.so
 *                  RUNPATH $ORIGIN/r1:${ORIGIN}/r2  RPATH $ORIGIN/rpx
 *   D/r1/liba.so   another machine: passed over
 *   D/r2/liba.so   RPATH $ORIGIN/../rp, NEEDED libb.so
 *   D/r2/libsym.so -> liba.so (same file: read once)
 *   D/r1/libc2.so, D/llp/libc2.so   LD_LIBRARY_PATH=D/llp comes first
 *   D/rp/libb.so, D/llp/libb.so     liba's RPATH comes first
 *   D/rpx/libtktest-x.so            main's RPATH is hidden by its RUNPATH
 *   D/abs          NEEDED D/r2/liba.so, RPATH $ORIGIN/rpx: libb (no
 *                  paths of its own) finds libtktest-x.so through it
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, mkdtemp */
#endif
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/elf-events.h"
#include "tracekit/desc.h"
#include "tk-test.h"

/* --- reading a file independently ------------------------------------ */

static void *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	*size = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n)
			*size = (size_t)n;
	}
	fclose(f);
	return buf;
}

/*
 * The tk_meta bytes of a 64-bit little-endian ELF file, walked by hand.
 * Returns 1 and sets *off and *len if found (len 0 for SHT_NOBITS), 0 if not,
 * -1 if the file is not one this walker reads.
 */
static int find_meta(const unsigned char *b, size_t n, size_t *off,
		     size_t *len)
{
	const Elf64_Ehdr *eh = (const void *)b;
	const Elf64_Shdr *sh, *str;
	unsigned i;

	if (n < sizeof(*eh) || memcmp(b, ELFMAG, SELFMAG) ||
	    b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB ||
	    eh->e_shentsize != sizeof(*sh) || eh->e_shoff > n ||
	    (n - eh->e_shoff) / sizeof(*sh) < eh->e_shnum ||
	    eh->e_shstrndx >= eh->e_shnum)
		return -1;
	sh = (const void *)(b + eh->e_shoff);
	str = &sh[eh->e_shstrndx];
	for (i = 1; i < eh->e_shnum; i++) {
		if (sh[i].sh_name + sizeof("tk_meta") > str->sh_size ||
		    memcmp(b + str->sh_offset + sh[i].sh_name, "tk_meta",
			   sizeof("tk_meta")))
			continue;
		*off = sh[i].sh_offset;
		*len = sh[i].sh_type == SHT_NOBITS ? 0 : sh[i].sh_size;
		return 1;
	}
	return 0;
}

/* The module's bytes are the file's tk_meta bytes; returns their size. */
static size_t check_module_bytes(const struct tk_elf_module *m)
{
	size_t n, off = 0, len = 0;
	unsigned char *b = slurp(m->path, &n);
	int found;

	CHECK(b != NULL);
	if (!b)
		return 0;
	found = find_meta(b, n, &off, &len);
	if (found < 0) {
		fprintf(stderr, "note: '%s' not walked by the test\n", m->path);
		free(b);
		return m->size;
	}
	CHECK_INT(m->size, len);
	CHECK(len ? m->meta != NULL : m->meta == NULL);
	if (m->meta && m->size == len)
		CHECK(memcmp(m->meta, b + off, len) == 0);
	free(b);
	return len;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

/* Read @path, which must succeed; the reason is shown if it does not. */
static void read_ok(const char *path, bool with_needed,
		    struct tk_elf_modules *m)
{
	char err[256];
	int ret = tk_elf_modules_read(path, with_needed, m, err, sizeof(err));

	CHECK_INT(ret, 0);
	if (ret)
		fprintf(stderr, "  %s\n", err);
}

/* --- fixtures given on the command line ------------------------------ */

static void test_instrumented(const char *path)
{
	struct tk_elf_modules m;
	struct tk_desc_head head;
	unsigned i;

	read_ok(path, false, &m);
	CHECK_INT(m.count, 1);
	if (m.count == 1) {
		CHECK_STR(m.module[0].path, path);
		CHECK(m.module[0].size >= sizeof(head));
		CHECK(check_module_bytes(&m.module[0]) > 0);
		if (m.module[0].size >= sizeof(head)) {
			memcpy(&head, m.module[0].meta, sizeof(head));
			CHECK_INT(head.magic, TK_DESC_MAGIC);
		}
	}
	tk_elf_modules_free(&m);
	CHECK_INT(m.count, 0);

	read_ok(path, true, &m);
	CHECK(m.count >= 1);
	for (i = 0; i < m.count; i++)
		check_module_bytes(&m.module[i]);
	tk_elf_modules_free(&m);
}

static void test_plain(const char *path)
{
	struct tk_elf_modules m;
	bool libc = false;
	unsigned i;

	read_ok(path, true, &m);
	CHECK(m.count >= 2);
	if (m.count) {
		CHECK_STR(m.module[0].path, path);
		CHECK(m.module[0].meta == NULL);
		CHECK_INT(m.module[0].size, 0);
		CHECK(!m.module[0].links_tracekit);
	}
	for (i = 1; i < m.count; i++) {
		if (strstr(m.module[i].path, "/libc.so"))
			libc = true;
		check_module_bytes(&m.module[i]);
	}
	CHECK(libc);
	tk_elf_modules_free(&m);
}

static void test_needs_lib(const char *path)
{
	struct tk_elf_modules m;
	unsigned i, with_meta = 0;

	read_ok(path, true, &m);
	for (i = 1; i < m.count; i++) {
		if (check_module_bytes(&m.module[i]))
			with_meta++;
	}
	CHECK(with_meta >= 1);
	tk_elf_modules_free(&m);
}

/* --- ELF files written by the test ----------------------------------- */

struct fx_elf {
	uint16_t machine;     /* 0: EM_X86_64 */
	const void *meta;     /* tk_meta bytes */
	size_t meta_size;
	bool meta_nobits;
	bool meta_outside;    /* damaged: offset past the end of the file */
	bool shoff_outside;   /* damaged: section headers past the end */
	const char *needed[8];
	const char *rpath, *runpath, *soname;
};

struct fx_buf {
	unsigned char *b;
	size_t n;
};

static size_t fx_add(struct fx_buf *fb, const void *p, size_t n)
{
	size_t off = (fb->n + 7) & ~(size_t)7;

	fb->b = realloc(fb->b, off + n + 8);
	if (!fb->b)
		abort();
	memset(fb->b + fb->n, 0, off - fb->n);
	memcpy(fb->b + off, p, n);
	fb->n = off + n;
	return off;
}

static uint32_t fx_str(char *tab, size_t *n, const char *s)
{
	uint32_t at = (uint32_t)*n;

	strcpy(tab + *n, s);
	*n += strlen(s) + 1;
	return at;
}

enum { S_NULL, S_SHSTRTAB, S_META, S_DYNSTR, S_DYNAMIC, S_N };

/* Write a 64-bit ET_DYN file with section headers only. */
static void fx_write(const char *path, const struct fx_elf *f)
{
	char shstr[128], dynstr[512];
	size_t nshstr = 0, ndynstr = 0, ndyn = 0, i;
	Elf64_Dyn dyn[16];
	Elf64_Shdr sh[S_N];
	Elf64_Ehdr eh;
	struct fx_buf fb = { 0 };
	FILE *out;

	memset(sh, 0, sizeof(sh));
	memset(&eh, 0, sizeof(eh));
	fx_str(shstr, &nshstr, "");
	sh[S_SHSTRTAB].sh_name = fx_str(shstr, &nshstr, ".shstrtab");
	sh[S_META].sh_name = fx_str(shstr, &nshstr, "tk_meta");
	sh[S_DYNSTR].sh_name = fx_str(shstr, &nshstr, ".dynstr");
	sh[S_DYNAMIC].sh_name = fx_str(shstr, &nshstr, ".dynamic");

	fx_str(dynstr, &ndynstr, "");
	for (i = 0; i < 8 && f->needed[i]; i++) {
		dyn[ndyn].d_tag = DT_NEEDED;
		dyn[ndyn++].d_un.d_val = fx_str(dynstr, &ndynstr, f->needed[i]);
	}
	if (f->rpath) {
		dyn[ndyn].d_tag = DT_RPATH;
		dyn[ndyn++].d_un.d_val = fx_str(dynstr, &ndynstr, f->rpath);
	}
	if (f->runpath) {
		dyn[ndyn].d_tag = DT_RUNPATH;
		dyn[ndyn++].d_un.d_val = fx_str(dynstr, &ndynstr, f->runpath);
	}
	if (f->soname) {
		dyn[ndyn].d_tag = DT_SONAME;
		dyn[ndyn++].d_un.d_val = fx_str(dynstr, &ndynstr, f->soname);
	}
	dyn[ndyn].d_tag = DT_NULL;
	dyn[ndyn++].d_un.d_val = 0;

	fx_add(&fb, &eh, sizeof(eh));
	sh[S_SHSTRTAB].sh_type = SHT_STRTAB;
	sh[S_SHSTRTAB].sh_offset = fx_add(&fb, shstr, nshstr);
	sh[S_SHSTRTAB].sh_size = nshstr;
	sh[S_SHSTRTAB].sh_addralign = 1;

	sh[S_META].sh_type = f->meta_nobits ? SHT_NOBITS : SHT_PROGBITS;
	sh[S_META].sh_flags = SHF_ALLOC;
	sh[S_META].sh_addralign = 8;
	sh[S_META].sh_size = f->meta_size;
	if (f->meta_nobits || !f->meta)
		sh[S_META].sh_offset = fb.n;
	else
		sh[S_META].sh_offset = fx_add(&fb, f->meta, f->meta_size);
	if (f->meta_outside)
		sh[S_META].sh_offset = 1u << 20;

	sh[S_DYNSTR].sh_type = SHT_STRTAB;
	sh[S_DYNSTR].sh_flags = SHF_ALLOC;
	sh[S_DYNSTR].sh_offset = fx_add(&fb, dynstr, ndynstr);
	sh[S_DYNSTR].sh_size = ndynstr;
	sh[S_DYNSTR].sh_addralign = 1;

	sh[S_DYNAMIC].sh_type = SHT_DYNAMIC;
	sh[S_DYNAMIC].sh_flags = SHF_ALLOC | SHF_WRITE;
	sh[S_DYNAMIC].sh_offset = fx_add(&fb, dyn, ndyn * sizeof(dyn[0]));
	sh[S_DYNAMIC].sh_size = ndyn * sizeof(dyn[0]);
	sh[S_DYNAMIC].sh_link = S_DYNSTR;
	sh[S_DYNAMIC].sh_entsize = sizeof(dyn[0]);
	sh[S_DYNAMIC].sh_addralign = 8;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = f->machine ? f->machine : EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = S_N;
	eh.e_shstrndx = S_SHSTRTAB;
	eh.e_shoff = fx_add(&fb, sh, sizeof(sh));
	if (f->shoff_outside)
		eh.e_shoff = 1u << 20;
	memcpy(fb.b, &eh, sizeof(eh));

	out = fopen(path, "wb");
	CHECK(out != NULL);
	if (out) {
		CHECK(fwrite(fb.b, 1, fb.n, out) == fb.n);
		fclose(out);
	}
	free(fb.b);
}

static char *fx_path(const char *dir, const char *name)
{
	char *s;

	if (asprintf(&s, "%s/%s", dir, name) < 0)
		abort();
	return s;
}

static void fx_mkdir(const char *dir, const char *name)
{
	char *p = fx_path(dir, name);

	CHECK(mkdir(p, 0700) == 0);
	free(p);
}

static void fx_file(const char *dir, const char *name, const struct fx_elf *f)
{
	char *p = fx_path(dir, name);

	fx_write(p, f);
	free(p);
}

/* Remove what fx_* made in @dir. */
static void fx_cleanup(const char *dir)
{
	static const char *const files[] = {
		"main", "r1/liba.so", "r2/liba.so", "r2/libsym.so",
		"r1/libc2.so", "llp/libc2.so", "rp/libb.so", "llp/libb.so",
		"rpx/libtktest-x.so", "bad-shoff", "bad-meta", "nobits",
		"short", "text", "empty", "abs",
		"r1", "r2", "llp", "rp", "rpx",
	};
	size_t i;
	char *p;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		p = fx_path(dir, files[i]);
		if (unlink(p) < 0)
			rmdir(p);
		free(p);
	}
	rmdir(dir);
}

static const uint64_t meta_main[2] = { TK_DESC_MAGIC, 0x1111 };
static const uint64_t meta_a[1] = { 0xaaaa };

static void test_search(const char *d)
{
	struct fx_elf main_f = {
		.meta = meta_main,
		.meta_size = sizeof(meta_main),
		.needed = { "liba.so", "libc2.so",
			    "libtracekit.so.0.tktest-none", "libtktest-x.so",
			    "liba.so", "libsym.so" },
		.runpath = "$ORIGIN/r1:${ORIGIN}/r2",
		.rpath = "$ORIGIN/rpx",
	};
	struct fx_elf a_other = { .machine = EM_AARCH64, .meta = meta_a,
				  .meta_size = sizeof(meta_a) };
	struct fx_elf a = {
		.meta = meta_a,
		.meta_size = sizeof(meta_a),
		.needed = { "libb.so" },
		.rpath = "$ORIGIN/../rp",
		.soname = "liba.so",
	};
	struct fx_elf b = { .needed = { "liba.so", "libtktest-x.so" },
			    .meta_nobits = true, .meta_size = 64 };
	struct fx_elf plain = { 0 };
	struct tk_elf_modules m;
	char *llp, *p, *liba;

	fx_mkdir(d, "r1");
	fx_mkdir(d, "r2");
	fx_mkdir(d, "llp");
	fx_mkdir(d, "rp");
	fx_mkdir(d, "rpx");
	fx_file(d, "main", &main_f);
	fx_file(d, "r1/liba.so", &a_other);
	fx_file(d, "r2/liba.so", &a);
	p = fx_path(d, "r2/libsym.so");
	CHECK(symlink("liba.so", p) == 0);
	free(p);
	fx_file(d, "r1/libc2.so", &plain);
	fx_file(d, "llp/libc2.so", &plain);
	fx_file(d, "rp/libb.so", &b);
	fx_file(d, "llp/libb.so", &plain);
	fx_file(d, "rpx/libtktest-x.so", &plain);

	llp = fx_path(d, "llp");
	setenv("LD_LIBRARY_PATH", llp, 1);
	free(llp);

	p = fx_path(d, "main");
	read_ok(p, true, &m);
	CHECK_INT(m.count, 4);
	if (m.count == 4) {
		CHECK_STR(m.module[0].path, p);
		CHECK(m.module[0].links_tracekit);
		CHECK_INT(m.module[0].size, sizeof(meta_main));
		if (m.module[0].size == sizeof(meta_main))
			CHECK(!memcmp(m.module[0].meta, meta_main,
				      sizeof(meta_main)));
		CHECK(ends_with(m.module[1].path, "/r2/liba.so"));
		CHECK_INT(m.module[1].size, sizeof(meta_a));
		if (m.module[1].size == sizeof(meta_a))
			CHECK(!memcmp(m.module[1].meta, meta_a,
				      sizeof(meta_a)));
		CHECK(!m.module[1].links_tracekit);
		CHECK(ends_with(m.module[2].path, "/llp/libc2.so"));
		CHECK(ends_with(m.module[3].path, "/rp/libb.so"));
		CHECK(m.module[3].meta == NULL);
		CHECK_INT(m.module[3].size, 0);
	}
	tk_elf_modules_free(&m);

	/* Without the needed libraries: the program alone. */
	read_ok(p, false, &m);
	CHECK_INT(m.count, 1);
	tk_elf_modules_free(&m);
	free(p);

	/*
	 * A name holding a '/' is a path, taken as it is.  Without a
	 * RUNPATH in the program, its RPATH serves libb too.
	 */
	liba = fx_path(d, "r2/liba.so");
	main_f.needed[0] = liba;
	main_f.needed[1] = NULL;
	main_f.runpath = NULL;
	fx_file(d, "abs", &main_f);
	p = fx_path(d, "abs");
	read_ok(p, true, &m);
	CHECK_INT(m.count, 4);
	if (m.count == 4) {
		CHECK_STR(m.module[1].path, liba);
		CHECK(ends_with(m.module[2].path, "/rp/libb.so"));
		CHECK(ends_with(m.module[3].path, "/rpx/libtktest-x.so"));
	}
	tk_elf_modules_free(&m);
	free(p);
	free(liba);

	unsetenv("LD_LIBRARY_PATH");
}

/* Read @name in @d: expect @want and, if @msg, the message "'PATH'@msg". */
static void expect_error(const char *d, const char *name, int want,
			 const char *prefix, const char *msg)
{
	struct tk_elf_modules m = { 7, (void *)&m };
	char err[256], *p = fx_path(d, name), *full;

	CHECK_INT(tk_elf_modules_read(p, true, &m, err, sizeof(err)), want);
	CHECK_INT(m.count, 0);
	CHECK(m.module == NULL);
	if (asprintf(&full, "%s'%s'%s", prefix, p, msg ? msg : "") < 0)
		abort();
	if (msg)
		CHECK_STR(err, full);
	else
		CHECK(strncmp(err, full, strlen(full)) == 0);
	free(full);
	free(p);
}

static void test_errors(const char *d)
{
	struct fx_elf bad_shoff = { .shoff_outside = true };
	struct fx_elf bad_meta = { .meta = meta_a, .meta_size = sizeof(meta_a),
				   .meta_outside = true };
	struct fx_elf nobits = { .meta_nobits = true, .meta_size = 4096 };
	struct tk_elf_modules m;
	char err[8], *p;
	FILE *f;

	p = fx_path(d, "text");
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("#!/bin/sh\necho not elf\n", f);
		fclose(f);
	}
	free(p);
	p = fx_path(d, "empty");
	f = fopen(p, "w");
	if (f)
		fclose(f);
	free(p);
	p = fx_path(d, "short");
	f = fopen(p, "w");
	if (f) {
		fwrite(ELFMAG "\2\1\1", 1, 7, f);
		fclose(f);
	}
	free(p);

	expect_error(d, "text", -EINVAL, "", " is not an ELF file");
	expect_error(d, "empty", -EINVAL, "", " is not an ELF file");
	expect_error(d, "short", -EINVAL, "", " is not an ELF file");
	expect_error(d, "missing", -ENOENT, "cannot open ",
		     ": No such file or directory");
	expect_error(d, "r1", -EISDIR, "cannot open ", ": Is a directory");

	fx_file(d, "bad-shoff", &bad_shoff);
	fx_file(d, "bad-meta", &bad_meta);
	p = fx_path(d, "bad-shoff");
	CHECK_INT(tk_elf_modules_read(p, true, &m, NULL, 0), -EINVAL);
	free(p);
	expect_error(d, "bad-shoff", -EINVAL, "cannot read ", NULL);
	expect_error(d, "bad-meta", -EINVAL, "cannot read ", NULL);

	fx_file(d, "nobits", &nobits);
	p = fx_path(d, "nobits");
	read_ok(p, true, &m);
	CHECK_INT(m.count, 1);
	if (m.count) {
		CHECK(m.module[0].meta == NULL);
		CHECK_INT(m.module[0].size, 0);
	}
	tk_elf_modules_free(&m);
	tk_elf_modules_free(&m); /* twice is harmless */
	free(p);

	/* A short error buffer holds a cut, terminated message. */
	p = fx_path(d, "missing");
	CHECK_INT(tk_elf_modules_read(p, false, &m, err, sizeof(err)),
		  -ENOENT);
	CHECK_STR(err, "cannot ");
	free(p);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/test-elf-events.XXXXXX";

	if (argc < 3) {
		printf("skip: needs fixture paths\n");
		return 77;
	}
	test_instrumented(argv[1]);
	test_plain(argv[2]);
	if (argc > 3)
		test_needs_lib(argv[3]);

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_search(dir);
	test_errors(dir);
	if (!getenv("TK_TEST_KEEP"))
		fx_cleanup(dir);
	else
		printf("kept %s\n", dir);
	return TEST_DONE();
}
