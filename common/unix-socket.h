/* SPDX-License-Identifier: MIT */
/* unix-socket.h - abstract UNIX socket names and peer checks, shared by
 * the runtime and the tools (protocol.h describes the conversation). */
#ifndef TK_UNIX_SOCKET_H
#define TK_UNIX_SOCKET_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

/* Fill @sa with the abstract name @name ("@name"); returns its length. */
socklen_t tk_abstract_addr(struct sockaddr_un *sa, const char *name);

/* The rule, for a client's message when a process closed on it. */
#define TK_PEER_RULE "its control socket answers only root and the user it runs as, " \
	"and only root if it is not dumpable, as setuid programs are not"

/* Whether the peer of @fd may talk to us: root, or our effective uid
 * while we are dumpable (only root when we are not, as for ptrace). */
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
/* For a client that connected to the name of process @pid (0: any):
 * 0 if the peer is that process and tk_peer_allowed; -EADDRINUSE if
 * another process holds the name; -EPERM if the peer may not talk to
 * us; else -errno.  *peer has the peer's pid and uids for a message. */
int tk_peer_check(int fd, pid_t pid, struct ucred *peer);

#endif /* TK_UNIX_SOCKET_H */
