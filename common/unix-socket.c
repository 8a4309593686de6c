/* SPDX-License-Identifier: MIT */
/*
 * unix-socket.c - abstract UNIX socket names and peer checks.
 *
 * Abstract names have no file permissions, so whoever connects is checked
 * with SO_PEERCRED: only root and the same uid are answered.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include "unix-socket.h"

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

bool tk_peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	return cred.uid == 0 || cred.uid == getuid();
}
