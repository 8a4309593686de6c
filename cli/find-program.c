/* SPDX-License-Identifier: MIT */
/*
 * find-program.c - a command found in $PATH (find-program.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/regular-file.h"
#include "find-program.h"

static bool is_elf(const char *path)
{
	char magic[4];
	int fd = tk_open_regular(path);
	bool elf = fd >= 0 && read(fd, magic, 4) == 4 && !memcmp(magic, "\177ELF", 4);

	if (fd >= 0)
		close(fd);
	return elf;
}

char *find_program(const char *name, bool elf)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save, *full;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? strdup(name) : NULL;
	copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if (asprintf(&full, "%s/%s", *dir ? dir : ".", name) < 0)
			break;
		if (access(full, X_OK) == 0 && (!elf || is_elf(full))) {
			free(copy);
			return full;
		}
		free(full);
	}
	free(copy);
	return NULL;
}
