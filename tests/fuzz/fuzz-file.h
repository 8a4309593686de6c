/* SPDX-License-Identifier: MIT */
/*
 * fuzz-file.h - for harnesses whose parser reads a file by its path: the
 * input written to one temporary file, made on the first call, rewritten
 * for each input, removed at exit.
 */
#ifndef TK_FUZZ_FILE_H
#define TK_FUZZ_FILE_H

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_path[] = "/tmp/fuzz-file.XXXXXX";
static int fuzz_fd = -1;

static void fuzz_cleanup(void)
{
	unlink(fuzz_path);
}

/* Write data[0..size) to the file; its path. */
static const char *fuzz_file(const uint8_t *data, size_t size)
{
	size_t done;
	ssize_t n;

	if (fuzz_fd < 0) {
		fuzz_fd = mkstemp(fuzz_path);
		if (fuzz_fd < 0)
			abort();
		atexit(fuzz_cleanup);
	}
	if (ftruncate(fuzz_fd, 0) < 0)
		abort();
	for (done = 0; done < size; done += (size_t)n) {
		n = pwrite(fuzz_fd, data + done, size - done, (off_t)done);
		if (n <= 0)
			abort();
	}
	return fuzz_path;
}

#endif /* TK_FUZZ_FILE_H */
