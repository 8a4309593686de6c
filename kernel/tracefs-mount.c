/* SPDX-License-Identifier: MIT */
/*
 * tracefs-mount.c - find tracefs, or mount it, and leave the mount table
 * as we found it.
 *
 * libtracefs mounts tracefs by itself when it cannot find it, and then
 * leaves it mounted; we look first, so that a mount we made is undone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <tracefs.h>
#include "kernel.h"

#define TK_TRACEFS_DEFAULT "/sys/kernel/tracing"

static bool find_mount(char *dir, size_t len)
{
	struct mntent *m;
	bool found = false;
	FILE *f = setmntent("/proc/self/mounts", "r");

	if (!f)
		return false;
	while (!found && (m = getmntent(f)))
		if (!strcmp(m->mnt_type, "tracefs")) {
			snprintf(dir, len, "%s", m->mnt_dir);
			found = true;
		}
	endmntent(f);
	return found;
}

int tk_tracefs_open(struct tk_tracefs *fs, char *err, size_t errlen)
{
	memset(fs, 0, sizeof(*fs));
	if (!find_mount(fs->dir, sizeof(fs->dir))) {
		snprintf(fs->dir, sizeof(fs->dir), "%s", TK_TRACEFS_DEFAULT);
		if (mount("nodev", fs->dir, "tracefs", 0, NULL) < 0) {
			int e = errno;

			snprintf(err, errlen, "cannot mount tracefs on '%s': %s%s",
				 fs->dir, strerror(e),
				 e == EPERM ? " (kernel events need root)" : "");
			return -e;
		}
		fs->mounted_by_us = true;
	}
	if (tracefs_set_tracing_dir(fs->dir) < 0) {
		snprintf(err, errlen, "cannot use tracefs at '%s'", fs->dir);
		tk_tracefs_close(fs);
		return -EIO;
	}
	return 0;
}

void tk_tracefs_close(struct tk_tracefs *fs)
{
	if (fs->mounted_by_us)
		umount2(fs->dir, MNT_DETACH);
	fs->mounted_by_us = false;
}
