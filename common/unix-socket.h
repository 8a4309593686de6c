/* SPDX-License-Identifier: MIT */
/* unix-socket.h - abstract UNIX socket names and peer checks, shared by
 * the runtime and the tools (protocol.h describes the conversation). */
#ifndef TK_UNIX_SOCKET_H
#define TK_UNIX_SOCKET_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Fill @sa with the abstract name @name ("@name"); returns its length. */
socklen_t tk_abstract_addr(struct sockaddr_un *sa, const char *name);

/* Whether the peer of @fd is root or runs as our uid. */
bool tk_peer_allowed(int fd);

#endif /* TK_UNIX_SOCKET_H */
