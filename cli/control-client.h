/* SPDX-License-Identifier: MIT */
/*
 * control-client.h - what the verbs that talk to an instrumented process's
 * control socket (list PID, record -P) say when it does not answer.
 */
#ifndef TK_CONTROL_CLIENT_H
#define TK_CONTROL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How long a process may take to say HELLO once connected. */
#define TK_CTL_ANSWER_MS 3000

/* The reason process @pid gave no answer, in out[len], without the
 * "tracekit: " prefix: @closed when it closed the connection, else it
 * said nothing for TK_CTL_ANSWER_MS (and whether it is stopped, by a
 * signal or a debugger).  A closed connection is a refusal
 * only when the process belongs to another user and we are not root. */
void ctl_no_answer(pid_t pid, bool closed, char *out, size_t len);

/* Whether the peer of @fd, connected to the control socket name of
 * process @pid, is that process and may talk to us (tk_peer_check): 0,
 * or -errno with the reason in out[len] (-EADDRINUSE: another process
 * holds the name, whoever it is; -EPERM: another user's process). */
int ctl_peer_check(int fd, pid_t pid, char *out, size_t len);

#endif /* TK_CONTROL_CLIENT_H */
