/* SPDX-License-Identifier: MIT */
/*
 * kernel.h - tracekit's tracefs backend: what the tool uses to reach the
 * kernel's tracing (mounting tracefs, private instances, kernel events,
 * tracers, per-CPU capture).  Built on libtracefs and libtraceevent.
 *
 * Functions return 0 or -errno and never print; where the reason is worth
 * a sentence, they write it into the caller's @err buffer.
 */
#ifndef TK_KERNEL_H
#define TK_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

/* Where tracefs is, and whether we mounted it (then we unmount it). */
struct tk_tracefs {
	char dir[256];
	bool mounted_by_us;
};

/* Find tracefs, mounting it at /sys/kernel/tracing if it is not mounted
 * anywhere, and point libtracefs at it.  Returns 0, or -errno with the
 * reason in @err. */
int tk_tracefs_open(struct tk_tracefs *fs, char *err, size_t errlen);

/* Unmount tracefs if tk_tracefs_open() mounted it (lazily: files still
 * open keep working).  The kernel's instances and settings stay. */
void tk_tracefs_close(struct tk_tracefs *fs);

#endif /* TK_KERNEL_H */
