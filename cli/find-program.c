/* SPDX-License-Identifier: MIT */
/*
 * find-program.c - a command found in $PATH (find-program.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "find-program.h"

char *find_program(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save, *full;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? strdup(name) : NULL;
	copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if (asprintf(&full, "%s/%s", *dir ? dir : ".", name) < 0)
			break;
		if (access(full, X_OK) == 0) {
			free(copy);
			return full;
		}
		free(full);
	}
	free(copy);
	return NULL;
}
