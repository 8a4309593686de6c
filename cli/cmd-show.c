/* SPDX-License-Identifier: MIT */
/*
 * cmd-show.c - tracekit show [-B NAME]: print what an instance holds, as
 * the kernel formats it (its 'trace' file), like trace-cmd show.  Reading
 * does not consume: show again and the same events are there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "instance-args.h"

static int copy_out(int fd)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return -EIO;
	}
	return fflush(stdout) ? -errno : 0;
}

int cmd_show(int argc, char **argv)
{
	struct tk_tracefs fs;
	struct tk_kinstance k;
	const char *name;
	int fd, ret = instance_args("show",
				    "usage: tracekit show [-B NAME]\n\n"
				    "Print the events instance NAME (default " TK_KINSTANCE_PREFIX
				    ") holds, as the kernel formats them.\n",
				    argc, argv, &name);

	if (ret)
		return ret == 1 ? 0 : ret;
	if (instance_open(name, &fs, &k) < 0)
		return TK_EXIT_FAILURE;
	fd = tk_kinstance_trace_open(&k);
	ret = fd < 0 ? fd : copy_out(fd);
	if (fd >= 0)
		close(fd);
	if (ret < 0)
		tk_error("cannot read the trace of instance '%s': %s", name,
			 strerror(-ret));
	instance_close(&fs, &k);
	return ret < 0 ? TK_EXIT_FAILURE : 0;
}
