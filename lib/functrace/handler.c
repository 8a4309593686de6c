/* SPDX-License-Identifier: MIT */
/*
 * handler.c - what a traced call runs: the events and, for function_graph,
 * the shadow stack of return addresses.
 *
 * function: one event per call, ftrace:function {ip, parent_ip}.
 *
 * function_graph: at entry the trampoline hands us the address of the slot
 * that holds the return address; we push a frame and put the address of
 * tk__ft_return there, so the function returns through us:
 *
 *   frame { ret: the original return address,
 *           func: the entry,
 *           slot: where ret was (bit 0: a -g root; 0 while being written) }
 *
 *   entry  ftrace:funcgraph_entry {func, depth}   depth = frames below
 *   exit   ftrace:funcgraph_exit  {func, depth}   back to frame.ret
 *
 * The frames are per thread (TLS pointer to an mmap'd array), written only
 * by their thread, in an order a signal handler that interrupts at any
 * point cannot disturb: a frame is reserved (slot 0, then top + 1) before
 * it is filled, and its slot is written last.  Handlers push and pop their
 * own frames above.
 *
 * Frames that never return (longjmp, exceptions) are dropped lazily: a new
 * entry whose slot is at or above the top frame's slot (the stack grows
 * down) proves that frame dead, unless we run on a signal stack and the
 * frame is on another stack; an exit looks down for its own slot and drops
 * what is above it.
 *
 * A tail call from a traced function to another reuses the caller's slot,
 * which then holds tk__ft_return already: the callee's frame goes on top
 * with that as its return address, so the ret passes through us twice,
 * once per frame (both exits at the same time).
 *
 * -g: entries patched to the root trampoline count the roots open in the
 * thread; other functions record only while one is open.  The depth limit:
 * calls deeper than the limit are neither recorded nor hooked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "lib/internal.h"
#include "functrace.h"
#include "arch.h"
#include "frames.h"

#define FT_STACK_MAX 64 /* addresses in a --func-stack event */
/* -finstrument-functions frames: a call not recorded (tk_ft_cyg_enter) */
#define FT_CYG_SILENT ((uintptr_t)1 << 63) /* above any user address */

__thread struct ft_thread tk_ft_thr __attribute__((tls_model("initial-exec")));
static pthread_key_t ft_key;
uintptr_t tk_ft_return_hook;

struct ft_state tk_ft;

#define BARRIER() __asm__ __volatile__("" ::: "memory")

static void put_function(uintptr_t ip, uintptr_t parent)
{
	char *p = tk__reserve(16, tk_ft.id_function);

	if (p) {
		memcpy(p, &ip, 8);
		memcpy(p + 8, &parent, 8);
		tk__commit(p + 16);
	}
}

static void put_graph(uint16_t id, uintptr_t func, uint32_t depth)
{
	char *p = tk__reserve(12, id);

	if (p) {
		memcpy(p, &func, 8);
		memcpy(p + 8, &depth, 4);
		tk__commit(p + 12);
	}
}

/* The call stack: the call site of the function just entered (its frame
 * is on top), then the return address of each open frame below,
 * innermost first. */
static void put_stack(const struct ft_thread *t, uintptr_t site)
{
	uint32_t below = t->top ? t->top - 1 : 0, n, len;
	char *p;

	n = 1 + (below < FT_STACK_MAX - 1 ? below : FT_STACK_MAX - 1);
	len = n * 8;
	p = tk__reserve(4 + len, tk_ft.id_stack);
	if (!p)
		return;
	memcpy(p, &len, 4);
	memcpy(p + 4, &site, 8);
	for (uint32_t i = 1; i < n; i++) {
		uintptr_t ret = t->f[below - i].ret & ~FT_CYG_SILENT;

		memcpy(p + 4 + 8 * i, &ret, 8);
	}
	tk__commit(p + 4 + len);
}

static bool frames_alloc(struct ft_thread *t)
{
	void *p;

	if (t->dead)
		return false;
	p = mmap(NULL, FT_FRAMES * sizeof(struct ft_frame), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	t->f = p;
	/* freed at thread exit; a thread that cannot say so keeps them */
	pthread_setspecific(ft_key, p);
	tk_stream_prepare();
	return true;
}

static bool on_stack(uintptr_t a, const stack_t *ss)
{
	return a >= (uintptr_t)ss->ss_sp && a < (uintptr_t)ss->ss_sp + ss->ss_size;
}

/* Drop the frames that a call at @slot, returning to @ret, proves dead. */
static void drop_dead(struct ft_thread *t, uintptr_t slot, uintptr_t ret)
{
	bool checked = false;

	while (t->top) {
		uintptr_t fs = t->f[t->top - 1].slot;
		uintptr_t at = fs & ~SLOT_ROOT;

		if (!fs || at > slot)
			return; /* live, or being written by who we interrupted */
		if (at == slot && ret == tk_ft_return_hook)
			return; /* a tail call from that frame's function */
		if (at < slot && !checked) {
			stack_t ss;

			/* On a signal stack, frames of the interrupted code
			 * elsewhere are alive whatever their address. */
			checked = true;
			if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK) &&
			    on_stack(slot, &ss) && !on_stack(at, &ss))
				return;
		}
		if (fs & SLOT_ROOT)
			t->roots--;
		t->top--;
	}
}

/* Push a frame; false if there is no room. */
static bool push(struct ft_thread *t, uintptr_t ret, uintptr_t func,
		 uintptr_t slot)
{
	uint32_t i = t->top;

	if (i >= FT_FRAMES)
		return false;
	t->f[i].slot = 0;
	BARRIER();
	t->top = i + 1;
	BARRIER();
	t->f[i].ret = ret;
	t->f[i].func = func;
	BARRIER();
	t->f[i].slot = slot;
	if (slot & SLOT_ROOT)
		t->roots++;
	return true;
}

/* Called by the trampoline at a traced function's entry @site; @slot holds
 * the return address into the caller; @root: a -g function.  Returns 2
 * when the return goes through tk__ft_return now, else 0. */
__attribute__((visibility("hidden"))) int tk__ft_enter(uintptr_t site,
							uintptr_t *slot, int root)
{
	uint32_t mode = FT_MODE();
	struct ft_thread *t;
	uintptr_t s = (uintptr_t)slot, ret = *slot;
	uint32_t depth;

	if (mode == FT_FUNCTION && !FT_OPT(stack)) {
		put_function(site, ret);
		return 0;
	}
	if (mode == FT_OFF)
		return 0;
	t = &tk_ft_thr;
	if (TK__UNLIKELY(!t->f) && !frames_alloc(t)) {
		if (mode == FT_FUNCTION)
			put_function(site, ret);
		return 0;
	}
	if (t->top && (t->f[t->top - 1].slot & ~SLOT_ROOT) <= s)
		drop_dead(t, s, ret);
	if (FT_OPT(graph_roots) && !root && !t->roots)
		return 0;
	depth = t->top;
	if (depth >= FT_OPT(max_depth))
		return 0;
	if (!push(t, ret, site, s | (root ? SLOT_ROOT : 0)))
		return 0;
	if (mode == FT_GRAPH)
		put_graph(tk_ft.id_entry, site, depth);
	else
		put_function(site, ret);
	if (FT_OPT(stack))
		put_stack(t, ret);
	*slot = tk_ft_return_hook;
	return 2;
}

static void __attribute__((noreturn)) lost_return(void)
{
	static const char msg[] =
		"tracekit: function_graph lost a return address; aborting\n";

	if (write(2, msg, sizeof(msg) - 1) < 0)
		abort();
	abort();
}

/* Called by tk__ft_return with the stack pointer just after the traced
 * function's ret: returns where it was to return. */
__attribute__((visibility("hidden"))) uintptr_t tk__ft_exit(uintptr_t sp)
{
	struct ft_thread *t = &tk_ft_thr;
	uintptr_t s = sp - sizeof(uintptr_t);
	uint32_t i = t->top;
	struct ft_frame f;

	while (i && (t->f[i - 1].slot & ~SLOT_ROOT) != s)
		i--;
	if (TK__UNLIKELY(!i))
		lost_return();
	f = t->f[i - 1];
	for (uint32_t j = i; j < t->top; j++)
		if (t->f[j].slot & SLOT_ROOT)
			t->roots--;
	if (FT_MODE() == FT_GRAPH)
		put_graph(tk_ft.id_exit, f.func, i - 1);
	BARRIER();
	t->top = i - 1;
	if (f.slot & SLOT_ROOT)
		t->roots--;
	return f.ret;
}

void tk_ft_unhook_thread(void)
{
	struct ft_thread *t = &tk_ft_thr;

	while (t->top) {
		struct ft_frame *f = &t->f[t->top - 1];
		uintptr_t *slot = (uintptr_t *)(f->slot & ~SLOT_ROOT);

		if (slot && *slot == tk_ft_return_hook)
			*slot = f->ret;
		if (f->slot & SLOT_ROOT)
			t->roots--;
		t->top--;
	}
}

/* -finstrument-functions: the hooks tell us entry and exit themselves;
 * frames keep the hook's stack pointer to drop calls left by longjmp, and
 * in ret the call site (for --func-stack), with FT_CYG_SILENT when the
 * call is not recorded (outside -g, deeper than the limit). */
void tk_ft_cyg_enter(uintptr_t fn, uintptr_t site, uintptr_t sp, unsigned flags)
{
	uint32_t mode = FT_MODE();
	struct ft_thread *t = &tk_ft_thr;
	bool root = flags & FT_CYG_ROOT, record;
	uint32_t depth = 0;

	if (mode == FT_FUNCTION && !FT_OPT(stack)) {
		put_function(fn, site);
		return;
	}
	if (mode == FT_OFF || (!t->f && !frames_alloc(t)))
		return;
	if (t->top && (t->f[t->top - 1].slot & ~SLOT_ROOT) <= sp)
		drop_dead(t, sp, 0);
	/* depth counts the recorded frames below */
	for (uint32_t i = 0; i < t->top; i++)
		depth += !(t->f[i].ret & FT_CYG_SILENT);
	record = (!FT_OPT(graph_roots) || root || t->roots) &&
		 depth < FT_OPT(max_depth);
	if (!push(t, site | (record ? 0 : FT_CYG_SILENT), fn,
		  sp | (root ? SLOT_ROOT : 0)) || !record)
		return;
	if (mode == FT_GRAPH)
		put_graph(tk_ft.id_entry, fn, depth);
	else
		put_function(fn, site);
	if (FT_OPT(stack))
		put_stack(t, site);
}

void tk_ft_cyg_exit(uintptr_t fn, uintptr_t sp)
{
	struct ft_thread *t = &tk_ft_thr;
	uint32_t i, depth = 0;
	struct ft_frame f;

	(void)sp;
	if (!t->f)
		return;
	i = t->top;
	while (i && t->f[i - 1].func != fn)
		i--;
	if (!i)
		return;
	f = t->f[i - 1];
	for (uint32_t j = 0; j + 1 < i; j++)
		depth += !(t->f[j].ret & FT_CYG_SILENT);
	for (uint32_t j = i; j < t->top; j++)
		if (t->f[j].slot & SLOT_ROOT)
			t->roots--;
	if (!(f.ret & FT_CYG_SILENT) && FT_MODE() == FT_GRAPH)
		put_graph(tk_ft.id_exit, fn, depth);
	BARRIER();
	t->top = i - 1;
	if (f.slot & SLOT_ROOT)
		t->roots--;
}

static void thread_gone(void *frames)
{
	struct ft_thread *t = &tk_ft_thr;

	/* Later destructors may still call traced functions: they run
	 * unhooked from now on. */
	if (t->top == 0) {
		t->dead = 1;
		t->f = NULL;
		munmap(frames, FT_FRAMES * sizeof(struct ft_frame));
	}
}

void tk_ft_handler_init(void)
{
	tk_ft_return_hook = tk_ft_arch_return_hook();
	FT_OPT_SET(max_depth, UINT32_MAX);
	pthread_key_create(&ft_key, thread_gone);
}
