/* SPDX-License-Identifier: MIT */
/*
 * pathswap.c - replace a file while another program reads it
 * (tests/e2e/test_probes_hostile.py): once FILE has been closed N times
 * (inotify), rename a symbolic link to TARGET over it, atomically.
 *
 *   prog-pathswap FILE TARGET N
 *
 * Prints "ready" once it watches, then "swapped" after the rename; gives
 * up after 20 s.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096] __attribute__((aligned(8))), tmp[PATH_MAX];
	int fd, want, seen = 0;

	if (argc != 4)
		return 2;
	want = atoi(argv[3]);
	snprintf(tmp, sizeof(tmp), "%s.swap", argv[1]);
	unlink(tmp);
	fd = inotify_init1(IN_CLOEXEC);
	if (fd < 0 || symlink(argv[2], tmp) < 0 ||
	    inotify_add_watch(fd, argv[1], IN_CLOSE_NOWRITE | IN_CLOSE_WRITE) < 0) {
		perror("pathswap");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	alarm(20);
	while (seen < want) {
		ssize_t n = read(fd, buf, sizeof(buf));

		for (char *p = buf; n > 0 && p < buf + n;) {
			const struct inotify_event *e = (const void *)p;

			seen++;
			p += sizeof(*e) + e->len;
		}
	}
	if (rename(tmp, argv[1]) < 0) {
		perror("pathswap: rename");
		return 1;
	}
	printf("swapped\n");
	return 0;
}
