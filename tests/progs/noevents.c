/* SPDX-License-Identifier: MIT */
/*
 * noevents.c - a program linked with libtracekit that defines no event of
 * its own (test_hostile.py).
 *
 *   prog-noevents [CMD [ARG]...]   prints "matched N" (tk_enable of every
 *                                  event it has), then runs CMD, if any,
 *                                  and exits with its status
 *
 * Under record -p function, CMD inherits the function tracer's
 * environment: a program of no event joins the recording too.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <tracekit/tracekit.h>

int main(int argc, char **argv)
{
	pid_t pid;
	int status;

	printf("matched %d\n", tk_enable("all"));
	fflush(stdout);
	if (argc < 2)
		return 0;
	pid = fork();
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 126;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
