/* SPDX-License-Identifier: MIT */
/*
 * elf-plt.c - the library calls of an object, as the function tracer
 * records them (lib/functrace/plt.c): a call through the PLT is recorded
 * as the address of its GOT slot, so each JUMP_SLOT relocation is a
 * symbol of 8 bytes at that address, named after the function called.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols.h"

static int by_addr(const void *a, const void *b)
{
	const struct tk_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int add(struct tk_symtab *t, uint64_t addr, const char *name)
{
	struct tk_sym *grown = realloc(t->sym, (t->count + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	t->sym = grown;
	grown[t->count].name = strdup(name);
	if (!grown[t->count].name)
		return -ENOMEM;
	grown[t->count].addr = addr;
	grown[t->count].size = 8;
	grown[t->count].demangled = NULL;
	t->count++;
	return 0;
}

/* The relocations of one SHT_RELA section that are PLT slots. */
static int read_rela(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct tk_symtab *t)
{
	Elf_Scn *symscn = elf_getscn(e, sh->sh_link);
	GElf_Shdr symsh;
	Elf_Data *d = elf_getdata(scn, NULL), *syms;
	size_t n = d && sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	int ret = 0;

	if (!symscn || !gelf_getshdr(symscn, &symsh) || !(syms = elf_getdata(symscn, NULL)))
		return 0;
	for (size_t i = 0; i < n && !ret; i++) {
		GElf_Rela r;
		GElf_Sym s;
		const char *name;

		if (!gelf_getrela(d, (int)i, &r) ||
		    GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT ||
		    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s))
			continue;
		name = elf_strptr(e, symsh.sh_link, s.st_name);
		if (name && *name)
			ret = add(t, r.r_offset, name);
	}
	return ret;
}

int tk_elf_plt_symbols(const char *path, struct tk_symtab *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;
	unsigned before = t->count;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	Elf *e;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || !gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64) {
		if (e)
			elf_end(e);
		close(fd);
		return 0;
	}
	while (!ret && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA)
			ret = read_rela(e, scn, &sh, t);
	}
	elf_end(e);
	close(fd);
	if (t->count > before && t->count > 1)
		qsort(t->sym, t->count, sizeof(*t->sym), by_addr);
	return ret;
}
