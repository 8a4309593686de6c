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
 * rbp, so the walk must never fault, whatever it finds there.  It only
 * goes up, from the stack pointer towards the top of the mapping that
 * holds it (found in /proc/self/maps with plain system calls, which a
 * signal handler may make, and kept per thread until the stack pointer
 * leaves it), and how it reads depends on that mapping:
 *
 *   the thread's own stack       read directly: it stays mapped as long
 *                                as the thread lives.  That is the
 *                                main thread's "[stack]", or, in another
 *                                thread, the mapping that also holds the
 *                                thread's static TLS (glibc puts it at
 *                                the top of the thread's stack block),
 *                                up to that TLS
 *   anything else                read with process_vm_readv() on the
 *   (coroutine stacks, an        process itself, which fails where
 *   alternate signal stack)      nothing is mapped instead of faulting:
 *                                such a stack may be unmapped and
 *                                another mapped in its place while the
 *                                bounds kept for it say otherwise
 *
 * (A program that unmaps part of its own main stack and maps a stack of
 * its own into the hole is the case left: its events would be read as
 * on the main stack.)  Which of the addresses belong to the stack is
 * decided when the trace is read (format/ustack-check.c: a frame pointer
 * is followed only out of a function that keeps its frame in it there,
 * as its unwind tables say), so a stack is cut short where a function
 * without a frame pointer stands, never wrong.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "internal.h"

uint16_t tk_ustack_id;

/* The thread's current stack mapping, [lo, hi) (0, 0 until known), and
 * whether frames there are read directly (see above). */
static __thread uintptr_t stack_lo, stack_hi
	__attribute__((tls_model("initial-exec")));
static __thread bool stack_direct __attribute__((tls_model("initial-exec")));

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

/* A line of /proc/self/maps as it streams by: its head (the range) and
 * its tail (the name's end), whatever its length. */
struct maps_line {
	char head[40], tail[8];
	size_t len;
};

/* The mapping of /proc/self/maps holding @sp, and whether it is the main
 * thread's "[stack]", with system calls only (no allocation, no stdio,
 * little stack: a signal handler on a small alternate stack may be
 * here).  Lines of any length: a path can make one longer than any
 * buffer, and its tail must not be read as the start of a line. */
static bool find_mapping(uintptr_t sp, uintptr_t *lo, uintptr_t *hi, bool *main_stack)
{
	char buf[512];
	struct maps_line l = { .len = 0 };
	bool found = false;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (!found) {
		ssize_t n = (ssize_t)syscall(SYS_read, fd, buf, sizeof(buf));

		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && !found; i++) {
			uintptr_t a, b;
			size_t t;

			if (buf[i] != '\n') {
				if (l.len < sizeof(l.head))
					l.head[l.len] = buf[i];
				memmove(l.tail, l.tail + 1, sizeof(l.tail) - 1);
				l.tail[sizeof(l.tail) - 1] = buf[i];
				l.len++;
				continue;
			}
			t = l.len < sizeof(l.head) ? l.len : sizeof(l.head);
			if (parse_range(l.head, l.head + t, &a, &b) && sp >= a && sp < b) {
				*lo = a;
				*hi = b;
				*main_stack = l.len >= 7 && !memcmp(l.tail + 1, "[stack]", 7);
				found = true;
			}
			l.len = 0;
		}
	}
	syscall(SYS_close, fd);
	return found;
}

/* Learn the mapping holding @sp, and how to read it. */
static void stack_learn(uintptr_t sp)
{
	uintptr_t a = 0, b = 0, tls = (uintptr_t)&stack_lo;
	bool main_stack = false;

	stack_lo = stack_hi = 0;
	stack_direct = false;
	if (!find_mapping(sp, &a, &b, &main_stack))
		return;
	stack_lo = a;
	stack_hi = b;
	if (main_stack) {
		stack_direct = true;
	} else if (tls >= a && tls < b && sp < tls &&
		   tk_self_tid() != tk_self_pid()) {
		stack_hi = tls & ~(uintptr_t)15;
		stack_direct = true;
	}
}

/* Frames read without faulting, a window of the stack at a time. */
struct window {
	pid_t pid;
	uintptr_t base;
	size_t len;
	uintptr_t word[32];
};

/* The two words of the frame at @at (< stack_hi - 16), or false. */
static bool window_read(struct window *w, uintptr_t at, uintptr_t out[2])
{
	if (at < w->base || at + 16 > w->base + w->len) {
		/* up to the end of @at's page (a page further may be a hole:
		 * no read spans one unless the frame does), of the stack, of
		 * the window */
		size_t page = 4096 - (at & 4095), want = sizeof(w->word);
		struct iovec local, remote;
		ssize_t n;

		if (want > page)
			want = page < 16 ? 16 : page;
		if (want > stack_hi - at)
			want = stack_hi - at;
		local = (struct iovec){ w->word, want };
		remote = (struct iovec){ (void *)at, want };
		if (!w->pid)
			w->pid = (pid_t)tk_self_pid();
		n = (ssize_t)syscall(SYS_process_vm_readv, w->pid, &local, 1UL, &remote, 1UL, 0UL);
		w->base = at;
		w->len = n > 0 ? (size_t)n : 0;
		if (w->len < 16)
			return false;
	}
	memcpy(out, (const char *)w->word + (at - w->base), 16);
	return true;
}

void tk_ustack_put(uintptr_t pc, const uintptr_t *fp)
{
	uintptr_t addr[TK_USTACK_MAX];
	uintptr_t sp = (uintptr_t)&addr, prev = (uintptr_t)fp, next, frame[2];
	struct window w = { .pid = 0 };
	uint32_t n = 0, len;
	char *p;

	addr[n++] = pc;
	/* a new thread, a signal handler on an alternate stack, a coroutine */
	if (sp < stack_lo || sp >= stack_hi)
		stack_learn(sp);
	next = fp[0]; /* our caller's frame: ours to read */
	while (n < TK_USTACK_MAX && next > prev && !(next & 7) && next >= sp &&
	       stack_hi >= 16 && next <= stack_hi - 16) {
		if (stack_direct)
			memcpy(frame, (const void *)next, 16);
		else if (!window_read(&w, next, frame))
			break;
		if (!frame[1])
			break;
		addr[n++] = frame[1];
		prev = next;
		next = frame[0];
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
