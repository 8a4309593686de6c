/* SPDX-License-Identifier: MIT */
/*
 * unix-socket.c - abstract UNIX socket names and peer checks.
 *
 * Abstract names have no file permissions, so whoever connects is checked
 * with SO_PEERCRED, as ptrace would check it: root, or the same effective
 * uid (the one whose rights the process has: a setuid-root program
 * started by a user runs as root), and only root when this process is not
 * dumpable (setuid programs and those that changed credentials are not).
 * Anyone can bind a free abstract name, so a client also checks that the
 * name of process PID is held by process PID.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "unix-socket.h"

/* Descriptors one message may pass: more make the message not whole. */
#define CMSG_MAX_FDS 8

socklen_t tk_abstract_addr(struct sockaddr_un *sa, const char *name)
{
	size_t n = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n > sizeof(sa->sun_path) - 1)
		n = sizeof(sa->sun_path) - 1;
	memcpy(sa->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static bool cred_allowed(const struct ucred *cred)
{
	if (cred->uid == 0)
		return true;
	/* SUID_DUMP_USER is 1; 0 and 2 leave the process to root */
	return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1 && cred->uid == geteuid();
}

bool tk_peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	return cred_allowed(&cred);
}

int tk_peer_check(int fd, pid_t pid, struct ucred *peer)
{
	socklen_t len = sizeof(*peer);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, peer, &len) < 0)
		return -errno;
	if (pid && peer->pid != pid)
		return -EADDRINUSE;
	return cred_allowed(peer) ? 0 : -EPERM;
}

ssize_t tk_recv_fds(int sock, void *buf, size_t size, int *fds,
		    unsigned maxfds, unsigned *nfds, int flags)
{
	struct iovec iov = { buf, size };
	union {
		char b[CMSG_SPACE(sizeof(int) * CMSG_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { 0 };
	unsigned received = 0;
	ssize_t n;

	*nfds = 0;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.b;
	mh.msg_controllen = sizeof(ctl.b);
	n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			received++;
			if (*nfds < maxfds)
				fds[(*nfds)++] = f;
			else
				close(f);
		}
	}
	if (mh.msg_flags & MSG_CTRUNC) {
		/* descriptors were dropped: the sender passed more than the
		 * buffer takes (it is full), or ours are all in use (the
		 * kernel could not install them); the message is not whole */
		int err = received == CMSG_MAX_FDS ? -EPROTO : -EMFILE;

		while (*nfds)
			close(fds[--*nfds]);
		return err;
	}
	return n;
}

int tk_send_fds(int sock, const void *buf, size_t len, const int *fds,
		unsigned nfds, int flags)
{
	struct iovec iov = { (void *)buf, len };
	union {
		char b[CMSG_SPACE(sizeof(int) * CMSG_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { 0 };

	if (nfds > 8)
		return -EINVAL;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds) {
		struct cmsghdr *c;

		mh.msg_control = ctl.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	return sendmsg(sock, &mh, flags | MSG_NOSIGNAL) < 0 ? -errno : 0;
}
