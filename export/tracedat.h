/* SPDX-License-Identifier: MIT */
/*
 * tracedat.h - a trace directory as a trace-cmd trace.dat, version 7
 * (docs/viewing.md), which `trace-cmd report` and KernelShark open.
 *
 * The kernel's pages are copied as they were saved (they are already the
 * ring buffer's pages), with the saved formats, header_page/header_event,
 * kallsyms, printk formats, command lines and per-CPU stats, in the
 * sections and options trace-cmd's v7 file layout defines.
 */
#ifndef TK_TRACEDAT_H
#define TK_TRACEDAT_H

#include <stddef.h>
#include <stdint.h>

struct tk_tracedat_stats {
	unsigned cpus;
	uint64_t kernel_bytes;
};

/* Write the trace in @dir as a trace.dat file @out (written under a
 * temporary name, renamed at the end; nothing is left on failure).
 * Returns 0, or -errno with a one-line reason in err[errlen]. */
int tk_tracedat_write(const char *dir, const char *out,
		      struct tk_tracedat_stats *st, char *err, size_t errlen);

#endif /* TK_TRACEDAT_H */
