/* SPDX-License-Identifier: MIT */
/*
 * tracefs-mount.c - find tracefs, or mount a private one, and leave the
 * mount table as we found it.
 *
 * libtracefs mounts tracefs by itself when it cannot find it, and then
 * leaves it mounted; we look first.  When it is not mounted, we make a
 * detached mount (fsopen + fsmount): it appears in no mount table, no
 * other process can unmount it under us (two recorders running at once
 * each have their own), and it goes away when we exit, even if we are
 * killed.  libtracefs reaches it through /proc/self/fd/N.  Kernels
 * without the new mount API get a classic mount that close undoes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>
#include <tracefs.h>
#include "kernel.h"

#define TK_TRACEFS_DEFAULT "/sys/kernel/tracing"

bool tk_tracefs_find(char *dir, size_t len)
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

/* A tracefs mount attached nowhere; returns its fd or -errno. */
static int detached_mount(void)
{
	int fs, mnt, e;

	fs = (int)syscall(SYS_fsopen, "tracefs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		e = errno;
		close(fs);
		return -e;
	}
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
	e = errno;
	close(fs);
	return mnt < 0 ? -e : mnt;
}

static void mount_error(char *err, size_t errlen, const char *dir, int e)
{
	snprintf(err, errlen, "cannot mount tracefs on '%s': %s%s", dir,
		 strerror(e), e == EPERM ? " (kernel events need root)" : "");
}

int tk_tracefs_open(struct tk_tracefs *fs, char *err, size_t errlen)
{
	int fd;

	memset(fs, 0, sizeof(*fs));
	fs->mount_fd = -1;
	if (!tk_tracefs_find(fs->dir, sizeof(fs->dir))) {
		fd = detached_mount();
		if (fd >= 0) {
			fs->mount_fd = fd;
			snprintf(fs->dir, sizeof(fs->dir), "/proc/self/fd/%d", fd);
		} else if (fd == -ENOSYS) {
			snprintf(fs->dir, sizeof(fs->dir), "%s", TK_TRACEFS_DEFAULT);
			if (mount("nodev", fs->dir, "tracefs", 0, NULL) < 0) {
				mount_error(err, errlen, fs->dir, errno);
				return -errno;
			}
			fs->mounted_by_us = true;
		} else {
			mount_error(err, errlen, TK_TRACEFS_DEFAULT, -fd);
			return fd;
		}
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
	/* a zeroed struct that was never opened holds no fd */
	if (fs->mount_fd > 0 && !strncmp(fs->dir, "/proc/self/fd/", 14))
		close(fs->mount_fd);
	fs->mount_fd = -1;
}
