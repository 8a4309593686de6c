/* SPDX-License-Identifier: MIT */
/*
 * test-kprint-plugins.c - the sched_switch plugin's text, mirrored
 * (format/kprint-plugins.c), without libtraceevent's plugin files, as
 * the plugins of libtraceevent 1.7 and 1.8 print it.
 *
 *   test-kprint-plugins SCHED_SWITCH_FORMAT
 *
 * The format is a kernel's events/sched/sched_switch/format (the fuzz
 * harnesses' copy of this project's machine's).  Records are built from
 * its offsets.  A second format, the same but for its prev_state flags,
 * stands for a kernel that numbers its task states otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <event-parse.h>

#include "format/kprint-plugins.h"
#include "tk-test.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);

	if (!f || !buf || fread(buf, 1, 65535, f) == 0) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	return buf;
}

static void put(unsigned char *rec, struct tep_event *ev, const char *name,
		uint64_t v, const char *s)
{
	struct tep_format_field *f = tep_find_any_field(ev, name);

	if (!f) {
		fprintf(stderr, "no field %s\n", name);
		exit(1);
	}
	if (s)
		strncpy((char *)rec + f->offset, s, (size_t)f->size);
	else
		memcpy(rec + f->offset, &v, (size_t)f->size);
}

/* The mirrored text of a sched_switch from "a" (pid 7) in @state to "b". */
static const char *text(struct tep_handle *tep, struct tep_event *ev, uint64_t state)
{
	static char out[256];
	unsigned char rec[128] = { 0 };
	bool known, then_fmt, new_comm;
	struct tk_kplugin *pl = tk_kplugin_prepare(tep, ev, NULL, &known);
	long n;

	if (!pl || !known)
		return "(not mirrored)";
	put(rec, ev, "common_type", (uint64_t)ev->id, NULL);
	put(rec, ev, "prev_comm", 0, "a");
	put(rec, ev, "prev_pid", 7, NULL);
	put(rec, ev, "prev_prio", 120, NULL);
	put(rec, ev, "prev_state", state, NULL);
	put(rec, ev, "next_comm", 0, "b");
	put(rec, ev, "next_pid", 8, NULL);
	put(rec, ev, "next_prio", 100, NULL);
	n = tk_kplugin_run(pl, rec, sizeof(rec), out, sizeof(out) - 1, &then_fmt, &new_comm);
	out[n < 0 ? 0 : n] = '\0';
	free(pl);
	return out;
}

static struct tep_event *parse(struct tep_handle *tep, const char *fmt)
{
	struct tep_event *ev = NULL;

	if (tep_parse_format(tep, &ev, fmt, strlen(fmt), "sched") != 0 || !ev) {
		fprintf(stderr, "format does not parse\n");
		exit(1);
	}
	return ev;
}

int main(int argc, char **argv)
{
	struct tep_handle *tep = tep_alloc();
	struct tep_event *ev, *renumbered;
	char *fmt, *other, *at;

	if (argc < 2) {
		printf("skip: needs the sched_switch format\n");
		return 77;
	}
	fmt = slurp(argv[1]);
	tep_set_long_size(tep, 8);
	ev = parse(tep, fmt);

	/* libtraceevent 1.7: "SDTtZXxW" whatever the kernel says */
	tk_kplugin_assume_tep_version(10701);
	CHECK_STR(text(tep, ev, 0), "a:7 [120] R ==> b:8 [100]");
	CHECK_STR(text(tep, ev, 0x1), "a:7 [120] S ==> b:8 [100]");
	CHECK_STR(text(tep, ev, 0x3), "a:7 [120] S|D ==> b:8 [100]");
	CHECK_STR(text(tep, ev, 0x10), "a:7 [120] Z ==> b:8 [100]");
	CHECK_STR(text(tep, ev, 0x20), "a:7 [120] X ==> b:8 [100]");
	CHECK_STR(text(tep, ev, 0x80), "a:7 [120] W ==> b:8 [100]");
	CHECK_STR(text(tep, ev, 0x100), "a:7 [120] R ==> b:8 [100]");

	/* 1.8 and later: the letters of the format's __print_flags() */
	tk_kplugin_assume_tep_version(10800);
	CHECK_STR(text(tep, ev, 0x10), "a:7 [120] X ==> b:8 [100]");
	CHECK_STR(text(tep, ev, 0x20), "a:7 [120] Z ==> b:8 [100]");
	CHECK_STR(text(tep, ev, 0x40), "a:7 [120] P ==> b:8 [100]");
	CHECK_STR(text(tep, ev, 0x80), "a:7 [120] I ==> b:8 [100]");
	CHECK_STR(text(tep, ev, 0x82), "a:7 [120] D|I ==> b:8 [100]");

	/* a kernel whose state 0x04 is 'Q' and that has no state past it */
	other = strdup(fmt);
	at = strstr(other, "{ 0x00000004, \"T\" }");
	CHECK(at != NULL);
	if (at) {
		at[strlen("{ 0x00000004, \"")] = 'Q';
		at = strstr(other, "{ 0x00000008, \"t\" }");
		CHECK(at != NULL);
		if (at)
			memcpy(at, "{ 0x00000000, \"t\" }", strlen("{ 0x00000000, \"t\" }"));
		tep_free(tep);
		tep = tep_alloc();
		tep_set_long_size(tep, 8);
		renumbered = parse(tep, other);
		CHECK_STR(text(tep, renumbered, 0x4), "a:7 [120] Q ==> b:8 [100]");
		CHECK_STR(text(tep, renumbered, 0x8), "a:7 [120] R ==> b:8 [100]");
		tk_kplugin_assume_tep_version(10701);
		CHECK_STR(text(tep, renumbered, 0x4), "a:7 [120] T ==> b:8 [100]");
	}
	free(other);
	free(fmt);
	tep_free(tep);
	return TEST_DONE();
}
