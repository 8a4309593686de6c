/* SPDX-License-Identifier: MIT */
/*
 * deny.c - run a command with some system calls refused (seccomp).
 *
 *   prog-deny SYSCALL[,SYSCALL...] CMD [ARGS]
 *
 * Each named system call fails with EPERM in CMD and its children, as a
 * container's seccomp profile would refuse it: the tests see how the
 * recorder (io_uring_setup) and the runtime (memfd_create) do without.
 * Known names: memfd_create, io_uring_setup.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
	const char *name;
	int nr;
} known[] = {
	{ "memfd_create", SYS_memfd_create },
	{ "io_uring_setup", SYS_io_uring_setup },
};

int main(int argc, char **argv)
{
	struct sock_filter f[32];
	struct sock_fprog prog;
	unsigned n = 0;
	char *list, *name, *save;

	if (argc < 3) {
		fprintf(stderr, "usage: prog-deny SYSCALL[,SYSCALL...] CMD [ARGS]\n");
		return 2;
	}
	/* the architecture, then one test per system call */
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	list = strdup(argv[1]);
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		unsigned i;

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(known[i].name, name))
				break;
		if (i == sizeof(known) / sizeof(known[0]) || n > 26) {
			fprintf(stderr, "prog-deny: unknown system call '%s'\n", name);
			return 2;
		}
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (unsigned)known[i].nr, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_ERRNO | EPERM);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		fprintf(stderr, "prog-deny: seccomp: %s\n", strerror(errno));
		return 77;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "prog-deny: cannot run '%s': %s\n", argv[2], strerror(errno));
	return 127;
}
