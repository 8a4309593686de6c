/* SPDX-License-Identifier: MIT */
/*
 * message.c - how the tool speaks: "tracekit: ..." lines on stderr for
 * errors and warnings (cli.h), and the removal of a trace directory that
 * is replaced or abandoned.  Apart from main.c, so that record's engine
 * (and the tests and fuzzers that link it) have them without the
 * command table.
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024], *big = NULL;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	/* a long quoted subject must not cut off the reason after it */
	if (n >= (int)sizeof(buf) && (big = malloc((size_t)n + 1)))
		vsnprintf(big, (size_t)n + 1, fmt, again);
	va_end(again);
	fprintf(stderr, "tracekit: %s%s\n", prefix, big ? big : buf);
	free(big);
}

void tk_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
}

void tk_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warning: ", fmt, ap);
	va_end(ap);
}

void tk_warn_lines(char *text)
{
	for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		tk_warn("%s", line);
	}
}

static int remove_entry(const char *path, const struct stat *sb, int flag,
			struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void tk_remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
