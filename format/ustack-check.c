/* SPDX-License-Identifier: MIT */
/*
 * ustack-check.c - how much of a frame-pointer walk is the stack
 * (ustack-check.h).
 *
 * A frame-pointer walk records a0 (where the thread was, or the return
 * address of the runtime's own call), then [fp + 8] for each fp of the
 * chain.  The link from a_i to a_i+1 is right when the function holding
 * a_i had its frame in rbp there: its CFA is rbp + 16 (x86-64: the
 * return address at CFA - 8, the caller's rbp at CFA - 16).  Anything
 * else (a CFA from rsp: no frame pointer, or a prologue or epilogue)
 * means rbp held something else, and the walk went astray.
 *
 * Objects are opened by the path the trace saved, once each; a verdict
 * is kept per address.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/regular-file.h"
#include "ustack-check.h"

#define DWARF_RBP 6 /* x86-64 DWARF register number of rbp */
#define CACHE 4096

struct object {
	char *path;
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi; /* NULL: cannot be checked */
};

struct tk_ustack_check {
	struct tk_symbols *syms;
	struct object *obj;
	unsigned nobj;
	struct {
		uint64_t addr;  /* 0: empty */
		uint32_t pid;
		bool keeps_fp;
	} cache[CACHE];
};

struct tk_ustack_check *tk_ustack_check_new(struct tk_symbols *syms)
{
	struct tk_ustack_check *c = calloc(1, sizeof(*c));

	if (c)
		c->syms = syms;
	return c;
}

void tk_ustack_check_free(struct tk_ustack_check *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->nobj; i++) {
		if (c->obj[i].cfi)
			dwarf_cfi_end(c->obj[i].cfi);
		if (c->obj[i].elf)
			elf_end(c->obj[i].elf);
		if (c->obj[i].fd >= 0)
			close(c->obj[i].fd);
		free(c->obj[i].path);
	}
	free(c->obj);
	free(c);
}

/* Whether the file's build id is @want (hex); an empty @want is not
 * checked. */
static bool same_build(Elf *elf, const char *want)
{
	const unsigned char *id;
	ssize_t n;
	char hex[41];

	if (!want[0])
		return true;
	n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	if (n <= 0 || n > 20)
		return false;
	for (ssize_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	return !strcmp(hex, want);
}

static struct object *object_of(struct tk_ustack_check *c, const char *path,
				const char *build_id)
{
	struct object *o, *grown;

	for (unsigned i = 0; i < c->nobj; i++)
		if (!strcmp(c->obj[i].path, path))
			return &c->obj[i];
	grown = realloc(c->obj, (c->nobj + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	c->obj = grown;
	o = &c->obj[c->nobj];
	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path)
		return NULL;
	c->nobj++;
	elf_version(EV_CURRENT);
	o->fd = tk_open_regular(path);
	if (o->fd >= 0)
		o->elf = elf_begin(o->fd, ELF_C_READ_MMAP, NULL);
	/* the object changed since it was recorded: its tables are not its
	 * code's any more */
	if (o->elf && same_build(o->elf, build_id))
		o->cfi = dwarf_getcfi_elf(o->elf);
	return o;
}

/* Whether the function at @pc keeps its frame in rbp there. */
static bool keeps_fp(struct tk_ustack_check *c, uint32_t pid, uint64_t pc)
{
	unsigned h = (unsigned)(((pc ^ pid) * 0x9e3779b97f4a7c15ull) >> 52) & (CACHE - 1);
	const char *path, *build_id;
	struct object *o;
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	uint64_t bias;
	bool yes = false;

	if (c->cache[h].addr == pc && c->cache[h].pid == pid)
		return c->cache[h].keeps_fp;
	path = tk_symbols_where(c->syms, pid, pc, &bias, &build_id);
	o = path ? object_of(c, path, build_id) : NULL;
	if (o && o->cfi && dwarf_cfi_addrframe(o->cfi, pc - bias, &frame) == 0) {
		if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1)
			yes = (ops[0].atom == DW_OP_bregx && ops[0].number == DWARF_RBP &&
			       ops[0].number2 == 16) ||
			      (ops[0].atom == DW_OP_breg0 + DWARF_RBP && ops[0].number == 16);
		free(frame);
	}
	c->cache[h].addr = pc;
	c->cache[h].pid = pid;
	c->cache[h].keeps_fp = yes;
	return yes;
}

unsigned tk_ustack_trusted(struct tk_ustack_check *c, uint32_t pid, const uint64_t *addr,
			   unsigned n, bool first_is_pc)
{
	unsigned k = 0;

	if (!n)
		return 0;
	/* a return address is looked up at the call before it */
	while (k + 1 < n && keeps_fp(c, pid, (k || !first_is_pc) ? addr[k] - 1 : addr[k]))
		k++;
	return k + 1;
}

unsigned tk_ustack_with_caller(struct tk_ustack_check *c, uint32_t pid,
			       const uint64_t *addr, unsigned n, uint64_t caller,
			       uint64_t *out, unsigned max)
{
	unsigned m = 0;

	if (!n || !max)
		return 0;
	out[m++] = addr[0];
	if (caller && m < max)
		out[m++] = caller;
	for (unsigned i = 1; i < n && m < max; i++)
		out[m++] = addr[i];
	if (!c)
		return m;
	/* the caller comes from where the unwind tables put it: sure; what
	 * follows is the walk from the caller's rbp, checked as usual */
	return caller && m > 1 ? 1 + tk_ustack_trusted(c, pid, out + 1, m - 1, false)
			       : tk_ustack_trusted(c, pid, out, m, true);
}
