/* SPDX-License-Identifier: MIT */
/*
 * fuzz-manifest.c - libFuzzer entry for a trace's manifest, read by both
 * its readers: tk_trace_read_index() (clock, processes, streams) and
 * tk_kernel_open() (the kernel and kcpu records).
 *
 * A private trace directory (made once per process under $TMPDIR, else
 * /tmp; removed at exit) holds everything but the manifest: an empty
 * events/1.desc and user/s, and a kernel part with this kernel's sched
 * formats and header_page (tests/fuzz/kernel-formats, linked in), one
 * page of real events in kernel/cpu0.raw and an empty kernel/cpu1.raw.
 * The input is the manifest.  Errors must come with a message; what
 * opens must hold numbers the tools can use as they do (report divides
 * each CPU file's size by the page size), and its first CPU's events
 * are read.  Build and run (from the top of the tree, which the harness
 * needs as its current directory):
 *
 *   tests/fuzz/run 1    # builds it in build-fuzz/ (tests/fuzz/meson.build)
 *   build-fuzz/tests/fuzz/fuzz-manifest -dict=tests/fuzz/fuzz-manifest.dict \
 *	tests/fuzz/corpus/fuzz-manifest
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/kernel-read.h"
#include "fuzz-dir.h"
#include "format/trace.h"



static void link_to(const char *name, const char *cwd, const char *src)
{
	char path[PATH_MAX], from[PATH_MAX];

	path_of(path, sizeof(path), name);
	snprintf(from, sizeof(from), "%s/%s", cwd, src);
	if (symlink(from, path) < 0)
		abort();
}

static void make_dir(const char *name)
{
	char path[PATH_MAX];

	path_of(path, sizeof(path), name);
	if (mkdir(path, 0700) < 0)
		abort();
}

static void setup(void)
{
	char cwd[PATH_MAX];

	if (!getcwd(cwd, sizeof(cwd)))
		abort();
	fuzz_dir_make("fuzz-manifest");
	make_dir("events");
	make_dir("user");
	make_dir("kernel");
	make_dir("kernel/formats");
	write_file("events/1.desc", "", 0);
	write_file("user/s", "", 0);
	link_to("kernel/formats/sched", cwd, "tests/fuzz/kernel-formats/sched");
	link_to("kernel/header_page", cwd, "tests/fuzz/kernel-formats/header_page");
	link_to("kernel/cpu0.raw", cwd, "tests/fuzz/corpus/fuzz-kernel-read/page0");
	write_file("kernel/cpu1.raw", "", 0);
}

/* libtraceevent (1.7) leaks a few bytes when a format does not parse; not
 * ours to fix (see fuzz-kernel-read.c). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

static void check(int ok)
{
	if (!ok)
		__builtin_trap();
}

static void read_kernel(void)
{
	struct tk_kernel k;
	char err[512];
	uint64_t pages = 0, lost = 0;
	int ret;

	err[0] = '\0';
	ret = tk_kernel_open(dir, &k, err, sizeof(err));
	if (ret < 0) {
		check(err[0] || ret == -ENOMEM);
		tk_kernel_close(&k);
		return;
	}
	check(k.page_size >= 64 && k.page_size <= (64u << 20) &&
	      !(k.page_size & (k.page_size - 1)));
	check(k.ncpus == 2);
	for (unsigned i = 0; i < k.ncpus; i++) {
		/* what report's header prints of each CPU */
		pages += k.cpus[i].size / k.page_size;
		lost += k.cpus[i].overrun + k.cpus[i].dropped;
	}
	while ((ret = tk_kernel_next(&k, &k.cpus[0], err, sizeof(err))) > 0)
		(void)tk_kernel_pid(&k, k.cpus[0].data);
	check(ret == 0 || err[0]);
	(void)pages;
	(void)lost;
	tk_kernel_close(&k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct tk_trace t;
	char err[512];
	int ret;

	if (!ready) {
		setup();
		ready = true;
	}
	write_file(TK_MANIFEST_NAME, data, size);
	err[0] = '\0';
	ret = tk_trace_read_index(dir, &t, err, sizeof(err));
	if (ret) {
		check(ret < 0 && (err[0] || ret == -ENOMEM));
	} else {
		check(t.clock.freq != 0);
		for (unsigned i = 0; i < t.nstreams; i++)
			check(t.streams[i].file && t.streams[i].file[0] &&
			      !strstr(t.streams[i].file, ".."));
		tk_trace_free(&t);
	}
	read_kernel();
	return 0;
}
