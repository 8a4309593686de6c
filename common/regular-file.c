/* SPDX-License-Identifier: MIT */
/*
 * regular-file.c - files opened only when they are regular files
 * (regular-file.h).  A trace names files: the objects its processes
 * mapped, whose symbols and unwind tables report and convert read, and
 * its own parts.  A hostile or damaged trace can name a FIFO, whose open
 * waits forever for a writer, or a device.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "regular-file.h"

int tk_open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	int flags, e;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		e = errno;
	} else if (!S_ISREG(st.st_mode)) {
		e = EINVAL;
	} else if ((flags = fcntl(fd, F_GETFL)) < 0 ||
		   fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		e = errno;
	} else {
		return fd;
	}
	close(fd);
	errno = e;
	return -1;
}

FILE *tk_fopen_regular(const char *path)
{
	int fd = tk_open_regular(path);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return f;
}

const char *tk_open_strerror(int e)
{
	return e == EINVAL ? "not a regular file" : strerror(e);
}
