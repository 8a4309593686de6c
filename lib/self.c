/* SPDX-License-Identifier: MIT */
/*
 * self.c - the process's pid and the calling thread's tid, for the
 * runtime's own use, without a getpid() or gettid() among the program's
 * system calls: a program that makes 60 getpid() calls recorded with
 * `-e syscalls:sys_enter_getpid` shows 60 of them, not 60 and the
 * runtime's (docs/api.md, "System calls of the runtime").
 *
 * The pid is read from /proc/self/stat together with the process's name,
 * which the HELLO needs too (the open, read and close the name cost
 * anyway), and again in a forked child.  The thread that starts the
 * runtime while the process has no other is the main thread, whose tid
 * is the pid; any other thread asks the kernel, once per stream.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define SELF_SINGLE_THREADED() __libc_single_threaded
#else
#define SELF_SINGLE_THREADED() 0
#endif
#include "internal.h"

static uint32_t self_pid;   /* 0: to be read */
static pthread_t main_thread;
static bool main_known;     /* main_thread is the thread whose tid is the pid */

uint32_t tk_self_read(char *comm, size_t len)
{
	char buf[512];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	const char *open_paren, *close_paren;
	long pid = 0;

	if (fd >= 0)
		close(fd);
	if (n > 0) {
		/* "PID (NAME) STATE ...": NAME may hold spaces and ')' */
		buf[n] = '\0';
		pid = strtol(buf, NULL, 10);
		open_paren = strchr(buf, '(');
		close_paren = strrchr(buf, ')');
		if (comm && len && open_paren && close_paren > open_paren) {
			size_t l = (size_t)(close_paren - open_paren - 1);

			if (l >= len)
				l = len - 1;
			memcpy(comm, open_paren + 1, l);
			comm[l] = '\0';
			comm = NULL;
		}
	}
	if (pid <= 0) /* no /proc */
		pid = getpid();
	if (comm && len)
		prctl(PR_GET_NAME, comm, 0, 0, 0);
	self_pid = (uint32_t)pid;
	return self_pid;
}

uint32_t tk_self_pid(void)
{
	return self_pid ? self_pid : tk_self_read(NULL, 0);
}

uint32_t tk_self_tid(void)
{
	if (main_known && pthread_equal(pthread_self(), main_thread))
		return tk_self_pid();
	return (uint32_t)syscall(SYS_gettid);
}

void tk_self_init(void)
{
	if (SELF_SINGLE_THREADED()) {
		main_thread = pthread_self();
		main_known = true;
	}
}

void tk_self_after_fork_child(void)
{
	/* the thread that forked is the child's only one: its tid is the
	 * child's pid, read when first needed */
	self_pid = 0;
	main_thread = pthread_self();
	main_known = true;
}
