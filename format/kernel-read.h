/* SPDX-License-Identifier: MIT */
/*
 * kernel-read.h - the kernel part of a trace directory (DIR/kernel/,
 * docs/format.md), decoded with libtraceevent.
 *
 * tk_kernel_open() builds a libtraceevent handle from the saved header
 * page and event formats, kallsyms, printk formats and command lines, and
 * opens each CPU's page file; tk_kernel_next() walks one CPU's events in
 * order, page by page (kbuffer).  Every page is copied into a private,
 * zero-padded buffer and every record is checked to lie inside its page,
 * so a corrupt file can stop a CPU's stream but never make the reader
 * look outside its buffers.
 */
#ifndef TK_KERNEL_READ_H
#define TK_KERNEL_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tk_trace;

struct tep_handle;
struct tep_event;
struct kbuffer;
struct tep_plugin_list;

/* One CPU's page file and its current event. */
struct tk_kernel_cpu {
	unsigned cpu;
	char *path;
	const unsigned char *map;
	size_t size;
	size_t next_page;  /* file offset of the page to load next */
	size_t unmapped;   /* map pages below it given back (map-drop.h) */
	unsigned char *page; /* the loaded page, page_size + padding bytes */
	unsigned page_data; /* bytes of event data in it (commit) */
	struct kbuffer *kbuf;
	bool loaded;
	uint64_t overrun, dropped; /* lost, from the manifest's kcpu record */
	uint64_t events;           /* events read so far */
	uint64_t missed_total;     /* sum of the page headers' missed counts */

	/* the current event, after tk_kernel_next() returned 1 */
	uint64_t ts;
	const unsigned char *data;
	unsigned data_size;
	/* events the kernel lost just before this one, by its page header:
	 * 0 none, >0 how many, -1 some (count unknown) */
	long long missed;
};

struct tk_kernel {
	struct tep_handle *tep;
	unsigned page_size;
	unsigned long_size;
	unsigned ncpus;
	struct tk_kernel_cpu *cpus;
	/* from the manifest's kernel record ("" when absent) */
	char instance[64];
	char clock[32];
	char tracer[64];
	char *events; /* the -e patterns, comma separated */
	char *pid_filter; /* set_event_pid's pids, comma separated, or NULL */
	bool stack;
	bool incomplete; /* the manifest says state=recording (or recovered): a file may end
			  * inside a page, where reading stops */
	char *kdir;
	bool symbols_loaded;
	char *kallsyms; /* the saved kallsyms text, once loaded */
	struct tep_plugin_list *plugins;
	/* common fields: offset and size */
	unsigned type_off, type_size, flags_off, pc_off, pid_off;
};

/* Open the kernel part of the trace in @dir.  Returns 0; -ENOENT when the
 * trace has none (*k is then empty and safe to close); or -errno with a
 * one-line reason in err[errlen] naming the file.  Close with
 * tk_kernel_close(). */
int tk_kernel_open(const char *dir, struct tk_kernel *k, char *err,
		   size_t errlen);

/* Give every thread that has a user stream in @t its manifest name in
 * @k's pid -> comm table, over the saved command lines, so that kernel
 * and user events of one thread print one name (docs/format.md, "Thread
 * names").  Call once, after tk_kernel_open and before reading. */
void tk_kernel_name_threads(struct tk_kernel *k, const struct tk_trace *t);

/* Move @c to its next event: 1 when there is one (c->ts, c->data,
 * c->data_size, c->missed set), 0 at the end of the file, -EINVAL on a
 * malformed page (err[errlen] says which file and offset; the CPU's stream
 * ends there). */
int tk_kernel_next(struct tk_kernel *k, struct tk_kernel_cpu *c, char *err,
		   size_t errlen);

/* The event type id of a record (common_type). */
int tk_kernel_event_id(const struct tk_kernel *k, const void *data);

/* Common fields of a record. */
int tk_kernel_pid(const struct tk_kernel *k, const void *data);
unsigned tk_kernel_flags(const struct tk_kernel *k, const void *data);
unsigned tk_kernel_preempt(const struct tk_kernel *k, const void *data);

/* Read the saved kallsyms into the handle (once; a trace without it
 * prints addresses).  Kept for when an event needs symbols: 5 MB of text
 * costs more than reading many events. */
void tk_kernel_load_symbols(struct tk_kernel *k);

/* The address of kernel symbol @name in the saved kallsyms (loaded if
 * need be): 1 when there once, 0 when absent, -1 when there more than
 * once.  @kernel is the struct tk_kernel (a tk_ksym_addr_fn). */
int tk_kernel_symbol_addr(void *kernel, const char *name, uint64_t *addr);

/* Events lost on all CPUs: overrun + dropped of the manifest. */
uint64_t tk_kernel_lost(const struct tk_kernel *k);

void tk_kernel_close(struct tk_kernel *k);

#endif /* TK_KERNEL_READ_H */
