/* SPDX-License-Identifier: MIT */
/*
 * kernel-print.h - the field text of kernel events, as trace-cmd prints
 * it (the event's print fmt, or a libtraceevent plugin's handler).
 *
 * tk_kprint_prepare() looks at an event once; its first print picks how
 * to print it: stack traces ("=> func+0x12/0x40", symbols from the saved
 * kallsyms; user stacks "=> func+0x12 (/path/object)", from the saved
 * maps and symbols), print formats libtraceevent would print with its generic
 * rules (fields, expressions, flags, symbolic names, %p/%ps/%pS, strings)
 * and the sched_switch, kmem and hrtimer plugins' texts are formatted
 * here, straight from the record; anything else (helper functions, other
 * plugins) goes through libtraceevent's tep_print_event().
 */
#ifndef TK_KERNEL_PRINT_H
#define TK_KERNEL_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kprint-compile.h"
#include "kprint-out.h"

struct tep_handle;
struct tep_event;
struct tk_symbols;
struct trace_seq;
struct tk_kprint;

/* The kernel's trace_entry flags (common_flags). */
enum {
	TK_KFLAG_IRQS_OFF = 0x01,
	TK_KFLAG_IRQS_NOSUPPORT = 0x02,
	TK_KFLAG_NEED_RESCHED = 0x04,
	TK_KFLAG_HARDIRQ = 0x08,
	TK_KFLAG_SOFTIRQ = 0x10,
	TK_KFLAG_PREEMPT_RESCHED = 0x20,
	TK_KFLAG_NMI = 0x40,
};

/* What the printers of one trace share (the caller's, it outlives them). */
struct tk_ustack_check;

struct tk_kprint_env {
	struct tep_handle *tep;
	tk_ksym_addr_fn sym_addr; /* names in print fmts (may be NULL) */
	void *sym_ctx;
	struct tk_ksym_cache *syms; /* symbol lookups (may be NULL) */
	/* bumped whenever printing gave a pid a comm (the sched_switch
	 * plugin's way): cached comms may be stale */
	unsigned comm_gen;
	/* the symbols saved with the trace, for user stacks (may be NULL:
	 * addresses alone) */
	struct tk_symbols *user_syms;
	/* cuts user stacks where the frame-pointer chain stops being the
	 * stack (may be NULL: printed whole) */
	struct tk_ustack_check *user_check;
	/* the return address the event before the next user stack read
	 * (its probe's __caller), 0 if none: set by the caller */
	uint64_t user_caller;
};

/* How to print @ev's fields; @tep_only sends everything to
 * libtraceevent.  NULL only when out of memory.  Free with
 * tk_kprint_free(). */
struct tk_kprint *tk_kprint_prepare(struct tk_kprint_env *env,
				    struct tep_event *ev, bool tep_only);

/* Write the field text of the record @data[0..size) into out[0..room)
 * (no NUL, no newline); returns the bytes written.  @seq is scratch space
 * for libtraceevent. */
size_t tk_kprint_format(struct tk_kprint *p, struct trace_seq *seq,
			const unsigned char *data, unsigned size, unsigned cpu,
			uint64_t ts, char *out, size_t room);

/* Give the pids a record names the comms that printing it would give
 * them (the sched_switch plugin's way), without printing it: done for
 * the records a reader skips, so that the COMM column of the lines it
 * prints never depends on which records a filter or window kept. */
void tk_kprint_note_comms(struct tk_kprint *p, struct trace_seq *seq,
			  const unsigned char *data, unsigned size, unsigned cpu,
			  uint64_t ts);

/* How many records libtraceevent printed (the fast printers did not). */
uint64_t tk_kprint_tep_count(const struct tk_kprint *p);

/* True when printing the event may need kernel symbols (stack traces,
 * %p conversions, plugins, symbol names): load them before its first
 * print (tk_kernel_load_symbols). */
bool tk_kprint_needs_symbols(const struct tk_kprint *p);

void tk_kprint_free(struct tk_kprint *p);

#endif /* TK_KERNEL_PRINT_H */
