/* SPDX-License-Identifier: MIT */
/*
 * fuzz-kernel-read.c - libFuzzer entry for the kernel part of a trace:
 * ring-buffer pages and event formats (format/kernel-read.c,
 * kernel-print.c, kprint-compile.c).
 *
 * A private trace directory (made once per process under $TMPDIR, else
 * /tmp; removed at exit) holds real formats of this kernel's common
 * events (tests/fuzz/kernel-formats, linked in) and header_page.  The
 * input becomes:
 *
 *   "FMT\n" TEXT "\0" REST   TEXT -> kernel/formats/fuzz/ev (one more
 *                            event format, any text), REST -> cpu0.raw
 *   "PRK\n" TEXT "\0" REST   TEXT -> kernel/printk_formats, REST -> cpu0.raw
 *   anything else            the whole input -> kernel/cpu0.raw
 *
 * Every event is read (tk_kernel_next) and printed both by the fast
 * printers (compiled print fmts, mirrored plugins, with kallsyms loaded
 * and symbol names resolved) and by libtraceevent, as report does.  Errors must come with a
 * message.  Build and run (from the top of the tree, which the harness
 * needs as its current directory):
 *
 *   tests/fuzz/run 1    # builds it in build-fuzz/ (tests/fuzz/meson.build)
 *   build-fuzz/tests/fuzz/fuzz-kernel-read \
 *	-max_len=8192 tests/fuzz/corpus/fuzz-kernel-read
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
#include <event-parse.h>
#include <trace-seq.h>

#include "format/kernel-print.h"
#include "format/kernel-read.h"
#include "fuzz-dir.h"

static const char manifest[] =
	"tracekit version=1\nkernel page_size=4096 cpus=1\n"
	"kcpu cpu=0 file=kernel/cpu0.raw overrun=1 dropped=2\n";

static void setup(void)
{
	char path[PATH_MAX], src[PATH_MAX], cwd[PATH_MAX];
	static const char *const systems[] = { "sched", "syscalls", "ftrace", "kmem",
					       "exceptions", "filemap" };

	if (!getcwd(cwd, sizeof(cwd)))
		abort();
	fuzz_dir_make("fuzz-kernel");
	path_of(path, sizeof(path), "kernel");
	mkdir(path, 0700);
	path_of(path, sizeof(path), "kernel/formats");
	mkdir(path, 0700);
	for (size_t i = 0; i < sizeof(systems) / sizeof(systems[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "kernel/formats/%s", systems[i]);
		path_of(path, sizeof(path), name);
		snprintf(src, sizeof(src), "%s/tests/fuzz/kernel-formats/%s", cwd, systems[i]);
		if (symlink(src, path) < 0)
			abort();
	}
	path_of(path, sizeof(path), "kernel/formats/fuzz");
	mkdir(path, 0700);
	path_of(path, sizeof(path), "kernel/header_page");
	snprintf(src, sizeof(src), "%s/tests/fuzz/kernel-formats/header_page", cwd);
	if (symlink(src, path) < 0)
		abort();
	write_file("tracekit.manifest", manifest, strlen(manifest));
}

/* libtraceevent (1.7) leaks a few bytes when a format does not parse; not
 * ours to fix, and only a format file from outside costs it. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct tk_kernel k;
	struct tk_kprint_env env = { 0 };
	struct trace_seq seq;
	static const struct {
		const char *tag, *name;
	} text_files[] = { { "FMT\n", "kernel/formats/fuzz/ev" },
			   { "PRK\n", "kernel/printk_formats" } };
	char err[256], out[8192], path[PATH_MAX];
	int ret;

	if (!ready) {
		setup();
		ready = true;
	}
	for (size_t i = 0; i < sizeof(text_files) / sizeof(text_files[0]); i++) {
		path_of(path, sizeof(path), text_files[i].name);
		unlink(path);
		if (size >= 4 && !memcmp(data, text_files[i].tag, 4)) {
			const uint8_t *end = memchr(data + 4, 0, size - 4);
			size_t len = end ? (size_t)(end - data - 4) : size - 4;

			write_file(text_files[i].name, data + 4, len);
			data += 4 + len + (end != NULL);
			size -= 4 + len + (end != NULL);
		}
	}
	write_file("kernel/cpu0.raw", data, size);
	err[0] = '\0';
	ret = tk_kernel_open(dir, &k, err, sizeof(err));
	if (ret < 0) {
		if (!err[0] && ret != -ENOMEM)
			abort(); /* an error without a message */
		return 0;
	}
	trace_seq_init(&seq);
	tk_kernel_load_symbols(&k);
	env.tep = k.tep;
	env.sym_addr = tk_kernel_symbol_addr;
	env.sym_ctx = &k;
	for (unsigned i = 0; i < k.ncpus; i++) {
		struct tk_kernel_cpu *c = &k.cpus[i];

		while ((ret = tk_kernel_next(&k, c, err, sizeof(err))) > 0) {
			struct tep_event *ev = tep_find_event(k.tep, tk_kernel_event_id(&k, c->data));

			if (!ev)
				continue;
			for (int slow = 0; slow < 2; slow++) {
				struct tk_kprint *p = tk_kprint_prepare(&env, ev, slow);

				if (!p)
					continue;
				tk_kprint_format(p, &seq, c->data, c->data_size, c->cpu, c->ts,
						 out, sizeof(out));
				tk_kprint_free(p);
			}
		}
		if (ret < 0 && !err[0])
			abort();
	}
	trace_seq_destroy(&seq);
	tk_kernel_close(&k);
	return 0;
}
