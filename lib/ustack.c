/* SPDX-License-Identifier: MIT */
/*
 * ustack.c - the user stack of each recorded event (record --ustack).
 *
 * After an event is committed, its call site (tk_trace: the macro calls
 * tk__user_stack; tk_mark: tk__mark_record itself) writes an
 * ftrace:event_stack record right after it: the call site's return
 * address, then the return address of each frame found by following the
 * frame pointers, innermost first, at most TK_USTACK_MAX.
 *
 *   this function's frame   fp[0] = the caller's rbp, fp[1] = call site
 *   each caller's frame     [rbp] = its caller's rbp, [rbp + 8] = return
 *
 * (x86-64 with -fno-omit-frame-pointer, and aarch64's x29/x30 pairs, are
 * laid out so.)  Code built without frame pointers leaves anything in
 * rbp: the walk only reads inside the thread's stack, between the stack
 * pointer and the top of its mapping (from /proc/self/maps, read once
 * per thread with plain system calls, which a signal handler may make),
 * going up at each step, so it never faults.  Which of the addresses
 * belong to the stack is decided when the trace is read
 * (format/ustack-check.c: a frame pointer is followed only out of a
 * function that keeps its frame in it there, as its unwind tables say),
 * so a stack is cut short where a function without a frame pointer
 * stands, never wrong.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"

uint16_t tk_ustack_id;

/* The thread's stack mapping, [lo, hi): 0, 0 until known. */
static __thread uintptr_t stack_lo, stack_hi
	__attribute__((tls_model("initial-exec")));

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "lo-hi ..." at @p: the range, or false. */
static bool parse_range(const char *p, const char *end, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t v[2] = { 0, 0 };
	int k = 0, d;

	for (; p < end && k < 2; p++) {
		if (*p == '-' && k == 0) {
			k = 1;
			continue;
		}
		d = hexval(*p);
		if (d < 0)
			break;
		v[k] = v[k] << 4 | (uintptr_t)d;
	}
	if (k != 1)
		return false;
	*lo = v[0];
	*hi = v[1];
	return *lo < *hi;
}

/* The mapping of /proc/self/maps holding @sp, with system calls only
 * (no allocation, no stdio: a signal handler may be here). */
static bool find_mapping(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	char buf[4096];
	size_t have = 0;
	bool found = false;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (!found) {
		ssize_t n = (ssize_t)syscall(SYS_read, fd, buf + have, sizeof(buf) - have);
		char *line = buf, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		while (!found && (nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			uintptr_t a, b;

			if (parse_range(line, nl, &a, &b) && sp >= a && sp < b) {
				*lo = a;
				*hi = b;
				found = true;
			}
			line = nl + 1;
		}
		/* keep the unfinished line; a line longer than the buffer is
		 * a path we do not need: drop it */
		have -= (size_t)(line - buf);
		if (have == sizeof(buf))
			have = 0;
		memmove(buf, line, have);
	}
	syscall(SYS_close, fd);
	return found;
}

void tk_ustack_put(uintptr_t pc, const uintptr_t *fp)
{
	uintptr_t addr[TK_USTACK_MAX];
	uintptr_t sp = (uintptr_t)&addr, prev = (uintptr_t)fp, next;
	uint32_t n = 0, len;
	char *p;

	addr[n++] = pc;
	if (sp < stack_lo || sp >= stack_hi) {
		/* a new thread, or a signal handler on an alternate stack */
		if (!find_mapping(sp, &stack_lo, &stack_hi))
			stack_lo = stack_hi = 0;
	}
	next = fp[0];
	while (n < TK_USTACK_MAX && next > prev && !(next & 7) && next >= sp &&
	       stack_hi >= 16 && next <= stack_hi - 16) {
		const uintptr_t *f = (const uintptr_t *)next;

		if (!f[1])
			break;
		addr[n++] = f[1];
		prev = next;
		next = f[0];
	}
	len = n * 8;
	p = tk__reserve(4 + len, tk_ustack_id);
	if (!p)
		return;
	memcpy(p, &len, 4);
	memcpy(p + 4, addr, len);
	tk__commit(p + 4 + len);
}

TK_EXPORT __attribute__((noinline)) void tk__user_stack(void)
{
	struct tk__thread *t = &tk__thread;
	uint64_t tsc = t->stack_tsc;

	t->stack_tsc = 0;
	/* nothing came in between (a signal handler's events would have
	 * moved last_tsc): the stack is the event's */
	if (tsc != t->last_tsc)
		return;
	tk_ustack_put((uintptr_t)__builtin_return_address(0),
		      (const uintptr_t *)__builtin_frame_address(0));
	__asm__ __volatile__("" ::: "memory"); /* no tail call: fp is ours */
}
