/* SPDX-License-Identifier: MIT */
/*
 * ustack-check.h - how much of a user stack found by following frame
 * pointers is the thread's stack.
 *
 * The kernel (record --ustack with kernel events) and the runtime (with
 * user events, lib/ustack.c) walk the chain of saved frame pointers.
 * Through a function built without a frame pointer the chain goes on
 * from whatever was in the register: the frames after it would be wrong.
 * A link is followed here only out of a function whose frame is kept in
 * the frame pointer at that address, as the object's unwind tables
 * (.eh_frame, read with libdw) say; the stack is cut after the first
 * function that does not, or whose object cannot be read as it was
 * recorded (another build id).  A cut stack is shorter, never wrong.
 */
#ifndef TK_USTACK_CHECK_H
#define TK_USTACK_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include "symbols.h"

struct tk_ustack_check;

/* A checker naming objects through @syms (kept, not owned).  NULL when
 * out of memory.  Free with tk_ustack_check_free(). */
struct tk_ustack_check *tk_ustack_check_new(struct tk_symbols *syms);
void tk_ustack_check_free(struct tk_ustack_check *c);

/* How many of the @n addresses @addr of a frame-pointer walk in process
 * @pid belong to its stack (at least 1 when n > 0: where it was is
 * known).  @first_is_pc: addr[0] is where the thread was (the kernel's
 * walk), not a return address (the runtime's). */
/* The kernel's user stack addr[0..n) of an event (addr[0] the pc),
 * with @caller, the return address the event's probe read from the
 * stack (field __caller, format/probes.h; 0: none), put back after the
 * pc: the kernel's walk from rbp, still the caller's there, skips it.
 * Written to out[0..max); returns how many of them belong to the stack
 * (all when @c is NULL). */
unsigned tk_ustack_with_caller(struct tk_ustack_check *c, uint32_t pid,
			       const uint64_t *addr, unsigned n, uint64_t caller,
			       uint64_t *out, unsigned max);

unsigned tk_ustack_trusted(struct tk_ustack_check *c, uint32_t pid, const uint64_t *addr,
			   unsigned n, bool first_is_pc);

#endif /* TK_USTACK_CHECK_H */
