/* SPDX-License-Identifier: MIT */
/*
 * elf-symbols.h - what the function tracer reads from an ELF file, for
 * the runtime (lib/functrace/module.c: which entries to patch) and the
 * tools (format/symbols.c: the symbols saved with a trace, and whether
 * a program can be traced at all; format/elf-probes.c: where a uprobe
 * goes): the tables of patchable entries, the function symbols (and for
 * the tools the data objects), whether the file calls the
 * -finstrument-functions hook, its build id.
 *
 * One reader serves both, so that both sides agree on which function an
 * entry belongs to (tk_elf_entry_func) and on which of several names for
 * one address is shown.  It reads the file itself, through a read-only
 * mapping, every offset checked against the file's size: the runtime
 * cannot take libelf into every traced process, and the files it reads
 * are those of a 64-bit process of this machine (Elf64, native byte
 * order), which is all the tools read it for too.
 */
#ifndef TK_ELF_SYMBOLS_H
#define TK_ELF_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

/* A function symbol (STT_FUNC or STT_GNU_IFUNC, defined, at a non-zero
 * address), or with TK_ELF_OBJECTS a data object's (STT_OBJECT). */
struct tk_elf_func {
	uint64_t addr; /* its address plus the bias given to the reader */
	uint64_t size;
	uint32_t name; /* offset in tk_elf_syms.names */
	bool ifunc;    /* STT_GNU_IFUNC: the resolver that picks the code */
};

struct tk_elf_syms {
	/* __patchable_function_entries (-fpatchable-function-entry) and
	 * __mcount_loc (-mrecord-mcount): the entries' addresses plus the
	 * bias, sorted, without those the file holds as 0 (see
	 * TK_ELF_LOADED); table_entries counts those too */
	uint64_t *entries;
	unsigned nentries;
	unsigned table_entries;
	/* function symbols of .symtab, else .dynsym, sorted by address; of
	 * several names for one address, those without a leading '_' first */
	struct tk_elf_func *funcs;
	unsigned nfuncs;
	/* with TK_ELF_OBJECTS: the data objects of the same table, in its
	 * order */
	struct tk_elf_func *objs;
	unsigned nobjs;
	char *names;
	bool cyg; /* calls __cyg_profile_func_enter (-finstrument-functions) */
	uint8_t build_id[20];
	unsigned build_id_len;
};

enum {
	/* Read the function symbols of every file; without it, only of
	 * files with patchable entries or the -finstrument-functions hook
	 * (the others have nothing to trace). */
	TK_ELF_FUNCS = 1u << 0,
	/* The file is loaded in this process at the bias: where a table
	 * holds 0 (a linker that leaves the value to a relocation), read the
	 * relocated entry from memory. */
	TK_ELF_LOADED = 1u << 1,
	/* With TK_ELF_FUNCS: the data objects too (a USDT argument's
	 * variable). */
	TK_ELF_OBJECTS = 1u << 2,
};

/* Read @path, with @bias added to every address, as @flags ask.
 * Returns 0, -ENOEXEC when it is not a 64-bit ELF file of this byte
 * order, or -errno (cannot open, out of memory).  Free *out with
 * tk_elf_syms_free() after success; on failure nothing is left. */
int tk_elf_syms_read(const char *path, uint64_t bias, unsigned flags,
		     struct tk_elf_syms *out);
void tk_elf_syms_free(struct tk_elf_syms *e);

/* The load bias of @path mapped at @addr from file offset @pgoff (a
 * multiple of @page): the loadable segment that starts on that page
 * gives its link-time address.  Returns 0, -ENOENT when no segment
 * starts there, -ENOEXEC or -errno as tk_elf_syms_read. */
int tk_elf_map_bias(const char *path, uint64_t addr, uint64_t pgoff, uint64_t page,
		    uint64_t *bias);

/* The function containing @addr (a symbol of size 0 holds one byte),
 * or NULL. */
const struct tk_elf_func *tk_elf_func_at(const struct tk_elf_syms *e,
					 uint64_t addr);

/* Which function the patchable entry at @entry belongs to, and the
 * address to patch (*site): the function containing it, patched at the
 * entry itself, or else the function starting up to 16 bytes after it,
 * patched at its start (-fpatchable-function-entry=N,M puts M of the N
 * NOPs before the function).  NULL when the entry belongs to none: it
 * is not traced. */
const struct tk_elf_func *tk_elf_entry_func(const struct tk_elf_syms *e,
					    uint64_t entry, uint64_t *site);

static inline const char *tk_elf_func_name(const struct tk_elf_syms *e,
					   const struct tk_elf_func *f)
{
	return e->names + f->name;
}

#endif /* TK_ELF_SYMBOLS_H */
