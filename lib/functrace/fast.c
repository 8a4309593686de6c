/* SPDX-License-Identifier: MIT */
/*
 * fast.c - the common case of a traced call, tried first by the
 * trampolines (arch/x86_64/functrace-tramp.S).
 *
 * Compiled with -mgeneral-regs-only and calling nothing, so that the
 * trampolines need not save the vector registers around it.  Each function
 * either does the whole job or changes nothing and says so; the trampoline
 * then saves everything and calls the full handler (handler.c), which also
 * covers what is rare: a first call of the thread, frames left by longjmp,
 * the exit of a -g root, --func-stack, a full packet, a move to another
 * CPU, a signal handler interrupting an event.
 *
 * The events are the same as handler.c writes: tk__reserve's fast path
 * without its library calls (a full packet or a nested event go to the
 * full handler instead), the header by tk__put_header (runtime.h).
 */
#include <stdint.h>
#include <string.h>
#include "lib/internal.h"
#include "functrace.h"
#include "frames.h"

#define FAST __attribute__((visibility("hidden")))

/* Reserve @payload bytes with a header carrying @id and the time, as
 * tk__reserve does; NULL (nothing changed) when that needs the library. */
static inline char *reserve(struct tk__thread *t, uint32_t payload,
			    uint16_t id)
{
	uint64_t tsc;
	char *p;

	if (t->busy)
		return NULL;
	t->busy = 1;
	TK__BARRIER();
	tsc = tk__clock_of(t);
	p = t->pos;
	if (TK__UNLIKELY((uintptr_t)p + payload + TK__HEADER_EXTENDED >
			 (uintptr_t)__atomic_load_n(&t->end, __ATOMIC_RELAXED)) ||
	    TK__UNLIKELY(tk__cpu_moved(t))) {
		TK__BARRIER();
		t->busy = 0;
		return NULL;
	}
	return tk__put_header(t, p, id, tsc);
}

static inline void put(char *p, uintptr_t a, uint64_t b, uint32_t bsize)
{
	memcpy(p, &a, 8);
	memcpy(p + 8, &b, bsize); /* little-endian: the low bytes */
	tk__commit(p + 8 + bsize);
}

/* tk__ft_enter's common case: 1 when the full handler must do it, else
 * done: 2 when the return goes through tk__ft_return now, 0 if not. */
FAST int tk__ft_enter_fast(uintptr_t site, uintptr_t *slot, int root)
{
	uint32_t mode = FT_MODE();
	struct tk__thread *b = &tk__thread;
	struct ft_thread *t = &tk_ft_thr;
	uintptr_t s = (uintptr_t)slot;
	uint32_t i;
	char *p;

	if (mode == FT_FUNCTION && !FT_OPT(stack)) {
		p = reserve(b, 16, tk_ft.id_function);
		if (!p)
			return 1;
		put(p, site, *slot, 8);
		return 0;
	}
	if (mode != FT_GRAPH || FT_OPT(stack) || !t->f)
		return mode != FT_OFF;
	i = t->top;
	if (i && (t->f[i - 1].slot & ~SLOT_ROOT) <= s)
		return 1; /* frames left by longjmp, or a tail call */
	if (FT_OPT(graph_roots) && !root && !t->roots)
		return 0; /* -g: not under a root */
	if (i >= FT_OPT(max_depth) || i >= FT_FRAMES)
		return 0;
	p = reserve(b, 12, tk_ft.id_entry);
	if (!p)
		return 1;
	/* the frame as handler.c's push() writes it */
	t->f[i].slot = 0;
	TK__BARRIER();
	t->top = i + 1;
	TK__BARRIER();
	t->f[i].ret = *slot;
	t->f[i].func = site;
	TK__BARRIER();
	t->f[i].slot = s | (root ? SLOT_ROOT : 0);
	if (root)
		t->roots++;
	put(p, site, i, 4);
	*slot = tk_ft_return_hook;
	return 2;
}

/* tk__ft_exit's common case (the top frame is the one returning, not a
 * -g root): where to return, or 0 when the full handler must do it. */
FAST uintptr_t tk__ft_exit_fast(uintptr_t sp)
{
	struct ft_thread *t = &tk_ft_thr;
	uint32_t i = t->top;
	struct ft_frame *f;
	uintptr_t ret;
	char *p;

	if (!i || t->f[i - 1].slot != sp - sizeof(uintptr_t))
		return 0;
	f = &t->f[i - 1];
	ret = f->ret;
	if (FT_MODE() == FT_GRAPH) {
		p = reserve(&tk__thread, 12, tk_ft.id_exit);
		if (!p)
			return 0;
		put(p, f->func, i - 1, 4);
	}
	TK__BARRIER();
	t->top = i - 1;
	return ret;
}
