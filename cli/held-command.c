/* SPDX-License-Identifier: MIT */
/*
 * held-command.c - fork a command, hold it before exec, let it go
 * (held-command.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "find-program.h"
#include "held-command.h"

static void close_pair(int p[2])
{
	close(p[0]);
	close(p[1]);
}

int held_command_fork(struct held_command *c, const char *path, char *const *argv,
		      void (*before_exec)(void *), void *arg)
{
	int errpipe[2], holdpipe[2];

	if (pipe2(errpipe, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(holdpipe, O_CLOEXEC) < 0) {
		close_pair(errpipe);
		return -1;
	}
	c->pid = fork();
	if (c->pid < 0) {
		int e = errno;

		close_pair(errpipe);
		close_pair(holdpipe);
		errno = e;
		return -1;
	}
	if (c->pid == 0) {
		int child_errno;
		char go;

		close(holdpipe[1]);
		close(errpipe[0]);
		if (read(holdpipe[0], &go, 1) != 1)
			_exit(127);
		if (before_exec)
			before_exec(arg);
		execv(path, argv);
		child_errno = errno;
		if (write(errpipe[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	close(holdpipe[0]);
	close(errpipe[1]);
	c->hold = holdpipe[1];
	c->exec_error = errpipe[0];
	return 0;
}

int held_command_release(struct held_command *c)
{
	int child_errno = 0;
	ssize_t n;

	n = write(c->hold, "g", 1);
	close(c->hold);
	c->hold = -1;
	if (n == 1)
		n = read(c->exec_error, &child_errno, sizeof(child_errno));
	else
		child_errno = errno;
	close(c->exec_error);
	c->exec_error = -1;
	if (n == (ssize_t)sizeof(child_errno) || child_errno) {
		waitpid(c->pid, NULL, 0);
		return child_errno ? child_errno : ENOEXEC;
	}
	return 0;
}

void held_command_cancel(struct held_command *c)
{
	close(c->hold);
	close(c->exec_error);
	c->hold = c->exec_error = -1;
	waitpid(c->pid, NULL, 0);
}

int held_command_cannot_run(const char *name, int err, const char *why)
{
	tk_error("cannot run '%s': %s", name, why ? why : strerror(err));
	return err == ENOENT || err == ENOTDIR ? 127 : 126;
}

void held_command_say_end(const char *name, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "tracekit: '%s' exited with status %d\n", name,
			WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		fprintf(stderr, "tracekit: '%s' was killed by signal %d (%s)\n", name,
			WTERMSIG(status), strsignal(WTERMSIG(status)));
}

char *held_command_find(const char *name, int *status)
{
	bool path = strchr(name, '/');
	char *found = find_program(name, false);

	if (!found)
		*status = held_command_cannot_run(name, path ? errno : ENOENT,
						  path ? NULL : "command not found");
	return found;
}
