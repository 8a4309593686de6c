/* SPDX-License-Identifier: MIT */
/*
 * tracedat-refs.h - the kernel symbols and the tasks a trace.dat's events
 * refer to, so that its kallsyms and command lines hold those and not the
 * whole machine's.
 *
 * A trace's saved kallsyms is the kernel's whole symbol table (5 MB here)
 * and its saved_cmdlines every task the kernel has named (90 KB here):
 * written whole, they made a trace.dat of a few thousand events 5.5 MB.
 * trace-cmd and KernelShark use them only to name what the records hold:
 * kernel addresses (stack traces, %pS fields, the function tracer's ip)
 * and pids (each event's task, the pid fields of sched_switch and the
 * like).  So, as the events are written:
 *
 *   - every 8-byte word of a kernel record (at each 4-byte offset) that
 *     falls in the kernel's text is looked up; the symbols at the address
 *     found and at the next address are kept.  libtraceevent names an
 *     address by the symbol below it and the one above (a symbol ends
 *     where the next begins), so it names every such word as it would
 *     with the whole table; a word that is not an address at all keeps a
 *     symbol or two for nothing.
 *   - each record's common_pid and its 4-byte fields named *pid are kept.
 */
#ifndef TK_TRACEDAT_REFS_H
#define TK_TRACEDAT_REFS_H

#include <stddef.h>
#include <stdint.h>

struct tep_handle;
struct td_ksym;
struct td_pidfields;

struct td_refs {
	struct tep_handle *tep;   /* the kernel part's, for field lists */
	unsigned pid_off;         /* common_pid's offset */
	char *kallsyms;           /* the saved text, NULL if none */
	size_t kallsyms_len;
	struct td_ksym *sym;      /* its lines, by address */
	unsigned nsym;
	uint64_t lo, hi;          /* the lowest and highest address */
	uint8_t *pids;            /* bitmap of pids referred to */
	unsigned pids_bits;
	struct td_pidfields **by_id; /* per event id: where its pids are */
	unsigned nids;
};

/* Start with the saved kallsyms text @kallsyms (@len bytes, malloc'd,
 * NUL-terminated; @r owns it from here, whatever the result; NULL: no
 * symbols); @tep and @pid_off describe the kernel records (@tep NULL: no
 * kernel part).  0 or -ENOMEM. */
int td_refs_init(struct td_refs *r, struct tep_handle *tep, unsigned pid_off,
		 char *kallsyms, size_t len);

/* Note what kernel record @data (@size bytes) refers to. */
void td_refs_kernel(struct td_refs *r, const unsigned char *data, unsigned size);

/* Note that @pid is referred to. */
void td_refs_pid(struct td_refs *r, int pid);

/* The kallsyms lines of the symbols kept, in address order (malloc'd,
 * *len bytes, NULL on -ENOMEM). */
char *td_refs_kallsyms(const struct td_refs *r, size_t *len);

/* Keep the lines of command lines @buf (*len bytes, "PID COMM\n") whose
 * pid was referred to, in place; *len is updated. */
void td_refs_cmdlines(const struct td_refs *r, char *buf, size_t *len);

void td_refs_free(struct td_refs *r);

#endif /* TK_TRACEDAT_REFS_H */
