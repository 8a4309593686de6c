/* SPDX-License-Identifier: MIT */
/*
 * control-client.c - the messages for a control socket that stays silent.
 *
 * A process answers on @tracekit-PID from a thread of its own; a socket
 * that accepts and then says nothing (the thread never started, or is
 * stuck) or that closes at once must not leave a client waiting, nor be
 * blamed on the wrong cause: only a peer of another user, not root, is
 * refused (common/unix-socket.c).  A stopped process (SIGSTOP, a
 * debugger) answers nothing until it runs again: the message says so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "control-client.h"
#include "common/protocol.h"
#include "common/unix-socket.h"

/* The state letter of process @pid in /proc/PID/stat, '?' if unknown. */
static char process_state(pid_t pid)
{
	char path[32], buf[512];
	const char *paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	/* "PID (NAME) STATE ...": NAME may hold ')' */
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] ? paren[2] : '?';
}

void ctl_no_answer(pid_t pid, bool closed, char *out, size_t len)
{
	char path[32];
	struct stat st;
	bool other_user;

	if (!closed) {
		char state = process_state(pid);
		int n = snprintf(out, len,
				 "process %d did not answer on its control socket @" TK_SOCKET_PREFIX
				 "%d within %d s", (int)pid, (int)pid, TK_CTL_ANSWER_MS / 1000);

		/* a stopped process answers nothing until it is continued */
		if (n > 0 && (size_t)n < len && state == 'T')
			snprintf(out + n, len - (size_t)n,
				 ": it is stopped (SIGSTOP or Ctrl-Z; 'kill -CONT %d' resumes it)",
				 (int)pid);
		else if (n > 0 && (size_t)n < len && state == 't')
			snprintf(out + n, len - (size_t)n,
				 ": it is stopped by a debugger (ptrace)");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	other_user = geteuid() != 0 && stat(path, &st) == 0 &&
		     st.st_uid != geteuid();
	if (other_user)
		snprintf(out, len, "process %d refused the connection (%s)", (int)pid,
			 TK_PEER_RULE);
	else
		snprintf(out, len, "process %d closed the connection without answering",
			 (int)pid);
}

int ctl_peer_check(int fd, pid_t pid, char *out, size_t len)
{
	struct ucred peer;
	int ret = tk_peer_check(fd, pid, &peer);

	if (ret == -EADDRINUSE)
		snprintf(out, len,
			 "the control socket name @" TK_SOCKET_PREFIX "%d is taken by process %d (uid %u), not process %d",
			 (int)pid, (int)peer.pid, (unsigned)peer.uid, (int)pid);
	else if (ret == -EPERM)
		snprintf(out, len, "process %d belongs to another user (uid %u)",
			 (int)pid, (unsigned)peer.uid);
	else if (ret < 0)
		snprintf(out, len, "cannot check the peer of @" TK_SOCKET_PREFIX "%d: %s",
			 (int)pid, strerror(-ret));
	return ret;
}
