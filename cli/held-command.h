/* SPDX-License-Identifier: MIT */
/* held-command.h - a command forked but held before exec, for the verbs
 * that run one (record, stat): the kernel's pid filter or the counters
 * must hold its pid before it runs its first instruction. */
#ifndef TK_HELD_COMMAND_H
#define TK_HELD_COMMAND_H

#include <sys/types.h>

struct held_command {
	pid_t pid;
	int hold;       /* a byte here lets it go; closing it makes it exit */
	int exec_error; /* readable: exec failed, with the errno */
};

#define HELD_COMMAND_INIT { -1, -1, -1 }

/* Fork @argv (@path the file to exec) held.  Once let go, the child calls
 * @before_exec(@arg) (may be NULL) in the child, then execs.  0, or -1
 * with errno. */
int held_command_fork(struct held_command *c, const char *path, char *const *argv,
		      void (*before_exec)(void *), void *arg);

/* Let it exec.  0 when it runs; else the errno of its failed exec (the
 * child is reaped). */
int held_command_release(struct held_command *c);

/* It never runs: it exits and is reaped. */
void held_command_cancel(struct held_command *c);

/* Say that command @name cannot run (@why, else errno @err's text) and
 * return what a shell exits with then: 127 when there is no such file,
 * 126 when it is there but cannot be executed. */
int held_command_cannot_run(const char *name, int err, const char *why);

/* Say how command @name ended, by its wait @status, when it failed:
 * "exited with status N", "was killed by signal N (NAME)". */
void held_command_say_end(const char *name, int status);

/* Find @name as the shell does (find-program.h); NULL after saying why,
 * with *@status the shell's exit status for it. */
char *held_command_find(const char *name, int *status);

#endif /* TK_HELD_COMMAND_H */
