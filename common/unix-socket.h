/* SPDX-License-Identifier: MIT */
/* unix-socket.h - abstract UNIX socket names and peer checks, shared by
 * the runtime and the tools (protocol.h describes the conversation). */
#ifndef TK_UNIX_SOCKET_H
#define TK_UNIX_SOCKET_H

#include <stdbool.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Fill @sa with the abstract name @name ("@name"); returns its length. */
socklen_t tk_abstract_addr(struct sockaddr_un *sa, const char *name);

/* Whether the peer of @fd is root or runs as our uid. */
bool tk_peer_allowed(int fd);

/* Send @len bytes of @buf on @sock with the @nfds descriptors of @fds
 * (SCM_RIGHTS, at most 8), sendmsg @flags plus MSG_NOSIGNAL.  Returns 0 or
 * -errno. */
int tk_send_fds(int sock, const void *buf, size_t len, const int *fds,
		unsigned nfds, int flags);

/* Receive one message of at most @size bytes from @sock into @buf (recvmsg
 * with @flags, MSG_CMSG_CLOEXEC added) and the file descriptors passed
 * with it (SCM_RIGHTS): up to @maxfds into @fds (the caller closes them),
 * any beyond closed here; *nfds says how many.  Returns the message's size,
 * 0 when the peer closed, or -errno. */
ssize_t tk_recv_fds(int sock, void *buf, size_t size, int *fds,
		    unsigned maxfds, unsigned *nfds, int flags);

#endif /* TK_UNIX_SOCKET_H */
