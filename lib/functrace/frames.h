/* SPDX-License-Identifier: MIT */
/*
 * frames.h - the per-thread shadow stack of function_graph, shared by the
 * handlers (handler.c) and their fast path (fast.c).  The layout and the
 * order of writes are explained in handler.c.
 */
#ifndef TK_FUNCTRACE_FRAMES_H
#define TK_FUNCTRACE_FRAMES_H

#include <stdint.h>

#define FT_FRAMES 1024
#define SLOT_ROOT ((uintptr_t)1)

struct ft_frame {
	uintptr_t ret;
	uintptr_t func;
	uintptr_t slot;
};

struct ft_thread {
	struct ft_frame *f;
	uint32_t top;
	uint32_t roots; /* -g roots among the frames */
	uint32_t dead;  /* the thread is exiting: no more frames */
};

extern __thread struct ft_thread tk_ft_thr
	__attribute__((tls_model("initial-exec"), visibility("hidden")));
/* tk__ft_return's address, what hooked slots hold */
extern uintptr_t tk_ft_return_hook __attribute__((visibility("hidden")));

#endif /* TK_FUNCTRACE_FRAMES_H */
