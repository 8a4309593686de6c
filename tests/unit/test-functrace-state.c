/* SPDX-License-Identifier: MIT */
/*
 * test-functrace-state.c - the function tracer's side of a recording
 * (cli/record-functrace.c) holds one recording's state: two recordings
 * made one after the other in one process (stat, then record; a daemon's
 * sessions) each see only the objects their own processes reported.
 *
 * Recording 1 hears of /bin/true in process 100, recording 2 of /bin/sh
 * in process 200 (MODULE messages, as session.c hands them over) and of
 * objects from the kernel's mmap events (functrace_add_modules, as
 * record-kernel.c hands them over), interleaved so that the list grows
 * from both sides.  Each one's summary lines, attach check and saved
 * symbols/maps must name its own objects only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/record-functrace.h"
#include "common/protocol.h"
#include "tk-test.h"

/* Process @pid reports @path mapped at @lo, @traced entries patched. */
static int report_module(struct rec_functrace *ft, uint32_t pid,
			 const char *path, uint64_t lo, uint32_t traced)
{
	char buf[sizeof(struct tk_msg_module) + 64];
	struct tk_msg_module *m = (struct tk_msg_module *)buf;
	size_t len = sizeof(*m) + strlen(path) + 1;

	memset(buf, 0, sizeof(buf));
	m->m.type = TK_MSG_MODULE;
	m->m.len = (uint32_t)len;
	m->lo = lo;
	m->hi = lo + 0x1000;
	m->entries = traced;
	m->traced = traced;
	strcpy(buf + sizeof(*m), path);
	return functrace_on_module(ft, pid, buf, len);
}

/* What functrace_print_summary says, in a string to free. */
static char *summary(const struct rec_functrace *ft,
		     const struct rec_options *o)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	functrace_print_summary(ft, o, f);
	fclose(f);
	return text;
}

/* The symbols/maps that functrace_save_symbols writes into a new
 * directory, in a string to free ("" when it writes none). */
static char *saved_maps(const struct rec_functrace *ft,
			const struct rec_options *o)
{
	char dir[] = "/tmp/tk-functrace-state.XXXXXX", path[64];
	char *text = NULL, line[512];
	size_t size = 0;
	FILE *in, *out;

	if (!mkdtemp(dir))
		return NULL;
	CHECK_INT(functrace_save_symbols(ft, o, dir), 0);
	snprintf(path, sizeof(path), "%s/symbols/maps", dir);
	out = open_memstream(&text, &size);
	in = fopen(path, "r");
	while (out && in && fgets(line, sizeof(line), in))
		fputs(line, out);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	tk_remove_tree(dir);
	return text;
}

int main(void)
{
	struct rec_options o = { .user_tracer = "function" };
	struct rec_functrace one = { 0 }, two = { 0 };
	struct tk_sym_module seen[24];
	char err[512], *text;

	/* recording 1 */
	CHECK_INT(report_module(&one, 100, "/bin/true", 0x10000, 3), 0);
	CHECK(functrace_heard_from(&one, 100));
	text = summary(&one, &o);
	CHECK_STR(text, "tracekit: process 100: function: 3 function entries patched in 1 object, 0 library calls hooked\n");
	free(text);
	text = saved_maps(&one, &o);
	CHECK(text && strstr(text, "/bin/true"));
	free(text);
	functrace_free(&one);

	/* recording 2, after it in the same process */
	CHECK(!functrace_heard_from(&two, 100));
	text = summary(&two, &o);
	CHECK_STR(text, "");
	free(text);
	text = saved_maps(&two, &o);
	CHECK_STR(text, "");
	free(text);
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < 24; i++) {
		seen[i].pid = 300;
		seen[i].lo = 0x100000 * (i + 1);
		seen[i].hi = seen[i].lo + 0x1000;
		seen[i].path = "/bin/sh";
	}
	/* objects from both sides, the list grown by each in turn */
	for (unsigned i = 0; i < 24; i++) {
		CHECK_INT(functrace_add_modules(&two, &seen[i], 1), 0);
		CHECK_INT(report_module(&two, 200, "/bin/sh", 0x20000 * (i + 1), 2), 0);
	}
	CHECK(functrace_heard_from(&two, 200));
	CHECK(functrace_heard_from(&two, 300));
	CHECK(!functrace_heard_from(&two, 100));
	CHECK_INT(functrace_attach_check(&two, &o, 100, false, err, sizeof(err)), 0);
	text = summary(&two, &o);
	CHECK_STR(text, "tracekit: process 300: function: 0 function entries patched in 0 objects, 0 library calls hooked\n"
			"tracekit: process 200: function: 48 function entries patched in 24 objects, 0 library calls hooked\n");
	free(text);
	text = saved_maps(&two, &o);
	CHECK(text && strstr(text, "/bin/sh") && !strstr(text, "/bin/true") &&
	      !strstr(text, "\n100 ") && strncmp(text, "100 ", 4));
	free(text);
	functrace_free(&two);
	CHECK_INT(two.nmods, 0);
	return TEST_DONE();
}
