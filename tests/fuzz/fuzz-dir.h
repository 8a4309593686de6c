/* SPDX-License-Identifier: MIT */
/*
 * fuzz-dir.h - a harness's private trace directory: made once under
 * $TMPDIR (else /tmp), removed at exit; files written into it by name.
 * Included by the harnesses that read a trace directory (each is built
 * from its .c file and the libraries, tests/fuzz/meson.build).
 */
#ifndef TK_FUZZ_DIR_H
#define TK_FUZZ_DIR_H

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[PATH_MAX];

static inline int fuzz_rm_entry(const char *path, const struct stat *st,
				int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void fuzz_dir_remove(void)
{
	nftw(dir, fuzz_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Make the directory, named after @prefix; aborts on failure. */
static inline void fuzz_dir_make(const char *prefix)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
	if (!mkdtemp(dir))
		abort();
	atexit(fuzz_dir_remove);
}

static inline void path_of(char *buf, size_t size, const char *name)
{
	if ((size_t)snprintf(buf, size, "%s/%s", dir, name) >= size)
		abort();
}

static inline void write_file(const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	path_of(path, sizeof(path), name);
	f = fopen(path, "wb");
	if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f))
		abort();
}

#endif /* TK_FUZZ_DIR_H */
