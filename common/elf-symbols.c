/* SPDX-License-Identifier: MIT */
/*
 * elf-symbols.c - the function tracer's view of an ELF file
 * (elf-symbols.h), read from a read-only mapping of it: the section
 * headers, the tables of patchable entries, the function symbols
 * (.symtab, else .dynsym), whether it calls __cyg_profile_func_enter,
 * the build id.  Every offset is checked against the file's size.
 *
 * Table entries are link-time addresses, which GNU ld writes into the file
 * even where a relative relocation fixes them at load; where the file has
 * 0 (other linkers), the relocated value can only be read from memory, in
 * the process that loaded the file (TK_ELF_LOADED).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/regular-file.h"
#include "elf-symbols.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ELFDATA_NATIVE ELFDATA2LSB
#else
#define ELFDATA_NATIVE ELFDATA2MSB
#endif

struct elf_file {
	const uint8_t *map;
	size_t size;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	unsigned shnum;
	const Elf64_Shdr *shstr;
};

static bool in_file(const struct elf_file *f, uint64_t off, uint64_t len)
{
	return off <= f->size && len <= f->size - off;
}

static const char *sec_name(const struct elf_file *f, const Elf64_Shdr *s)
{
	const char *base;
	size_t max;

	if (!f->shstr || s->sh_name >= f->shstr->sh_size)
		return "";
	base = (const char *)f->map + f->shstr->sh_offset;
	max = f->shstr->sh_size - s->sh_name;
	return memchr(base + s->sh_name, '\0', max) ? base + s->sh_name : "";
}

static int elf_map(const char *path, struct elf_file *f)
{
	struct stat st;
	int fd = tk_open_regular(path);
	const Elf64_Ehdr *eh;

	memset(f, 0, sizeof(*f));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return -ENOEXEC;
	}
	f->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f->map == MAP_FAILED)
		return -errno;
	f->size = (size_t)st.st_size;
	eh = (const Elf64_Ehdr *)(const void *)f->map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA_NATIVE || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(f, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)) ||
	    eh->e_shoff % 8) {
		munmap((void *)f->map, f->size);
		return -ENOEXEC;
	}
	f->eh = eh;
	f->sh = (const Elf64_Shdr *)(const void *)(f->map + eh->e_shoff);
	f->shnum = eh->e_shnum;
	if (eh->e_shstrndx < f->shnum &&
	    in_file(f, f->sh[eh->e_shstrndx].sh_offset, f->sh[eh->e_shstrndx].sh_size))
		f->shstr = &f->sh[eh->e_shstrndx];
	return 0;
}

static int add_entries(const struct elf_file *f, const Elf64_Shdr *s,
		       uint64_t bias, unsigned flags, struct tk_elf_syms *out)
{
	uint64_t n = s->sh_size / 8;
	uint64_t *grown;

	/* read with memcpy: gcc does not align __mcount_loc in a program
	 * that also has sections of its own before it (seen at 0x402019) */
	if (s->sh_type == SHT_NOBITS || !in_file(f, s->sh_offset, s->sh_size) ||
	    n > (1u << 24))
		return 0;
	grown = realloc(out->entries, (out->nentries + n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	out->entries = grown;
	out->table_entries += (unsigned)n;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v;

		memcpy(&v, f->map + s->sh_offset + 8 * i, 8);
		if (v == 0 && (flags & TK_ELF_LOADED) && (s->sh_flags & SHF_ALLOC))
			memcpy(&v, (const void *)(uintptr_t)(s->sh_addr + bias + 8 * i), 8);
		else if (v)
			v += bias;
		if (v)
			grown[out->nentries++] = v;
	}
	return 0;
}

/* By address; of several names for one address, those without a leading
 * '_' (the global ones, as a rule) first. */
static int func_cmp(const void *a, const void *b, void *names)
{
	const struct tk_elf_func *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (((const char *)names)[x->name] == '_') -
	       (((const char *)names)[y->name] == '_');
}

static int addr_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Function symbols of a symbol table, and its data objects if @objects
 * (and whether it calls the -finstrument-functions hook). */
static int read_symbols(const struct elf_file *f, const Elf64_Shdr *s,
			uint64_t bias, bool want_funcs, bool objects,
			struct tk_elf_syms *out)
{
	const Elf64_Shdr *strs;
	uint64_t n;
	size_t names_len = 0, names_cap = 0;

	if (s->sh_link >= f->shnum || s->sh_entsize != sizeof(Elf64_Sym) ||
	    !in_file(f, s->sh_offset, s->sh_size))
		return 0;
	strs = &f->sh[s->sh_link];
	if (!in_file(f, strs->sh_offset, strs->sh_size))
		return 0;
	n = s->sh_size / sizeof(Elf64_Sym);
	if (want_funcs) {
		out->funcs = calloc(n + 1, sizeof(*out->funcs));
		if (!out->funcs)
			return -ENOMEM;
	}
	if (want_funcs && objects) {
		out->objs = calloc(n + 1, sizeof(*out->objs));
		if (!out->objs)
			return -ENOMEM;
	}
	for (uint64_t i = 1; i < n; i++) {
		Elf64_Sym sym_copy, *sym = &sym_copy;
		struct tk_elf_func *fn;
		const char *name;
		size_t len;
		int type;

		/* a copy: a damaged file may put the table anywhere */
		memcpy(sym, f->map + s->sh_offset + i * sizeof(*sym), sizeof(*sym));
		type = ELF64_ST_TYPE(sym->st_info);

		if (sym->st_name >= strs->sh_size)
			continue;
		name = (const char *)f->map + strs->sh_offset + sym->st_name;
		if (!memchr(name, '\0', strs->sh_size - sym->st_name))
			continue;
		if (sym->st_shndx == SHN_UNDEF) {
			if (!strcmp(name, "__cyg_profile_func_enter"))
				out->cyg = true;
			continue;
		}
		if (!want_funcs || !sym->st_value || !*name ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC &&
		     !(type == STT_OBJECT && objects)))
			continue;
		len = strlen(name) + 1;
		if (names_len + len > names_cap) {
			size_t cap = names_cap ? names_cap * 2 : 4096;
			char *grown;

			while (cap < names_len + len)
				cap *= 2;
			grown = realloc(out->names, cap);
			if (!grown)
				return -ENOMEM;
			out->names = grown;
			names_cap = cap;
		}
		memcpy(out->names + names_len, name, len);
		fn = type == STT_OBJECT ? &out->objs[out->nobjs++]
					: &out->funcs[out->nfuncs++];
		fn->addr = sym->st_value + bias;
		fn->size = sym->st_size;
		fn->name = (uint32_t)names_len;
		fn->ifunc = type == STT_GNU_IFUNC;
		names_len += len;
	}
	return 0;
}

static void read_build_id(const struct elf_file *f, const Elf64_Shdr *s,
			  struct tk_elf_syms *out)
{
	Elf64_Nhdr nh;

	if (!in_file(f, s->sh_offset, s->sh_size) || s->sh_size < sizeof(nh))
		return;
	memcpy(&nh, f->map + s->sh_offset, sizeof(nh));
	if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || nh.n_descsz > 20 ||
	    sizeof(nh) + 4 + nh.n_descsz > s->sh_size)
		return;
	memcpy(out->build_id, f->map + s->sh_offset + sizeof(nh) + 4, nh.n_descsz);
	out->build_id_len = nh.n_descsz;
}

int tk_elf_syms_read(const char *path, uint64_t bias, unsigned flags,
		     struct tk_elf_syms *out)
{
	const Elf64_Shdr *symtab = NULL, *dynsym = NULL;
	struct elf_file f;
	int err = elf_map(path, &f);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	for (unsigned i = 0; i < f.shnum && !err; i++) {
		const Elf64_Shdr *s = &f.sh[i];
		const char *name = sec_name(&f, s);

		if (!strcmp(name, "__patchable_function_entries") ||
		    !strcmp(name, "__mcount_loc"))
			err = add_entries(&f, s, bias, flags, out);
		else if (s->sh_type == SHT_SYMTAB)
			symtab = s;
		else if (s->sh_type == SHT_DYNSYM)
			dynsym = s;
		else if (s->sh_type == SHT_NOTE && !strcmp(name, ".note.gnu.build-id"))
			read_build_id(&f, s, out);
	}
	if (!err && dynsym)
		err = read_symbols(&f, dynsym, bias, false, false, out);
	if (!err && ((flags & TK_ELF_FUNCS) || out->nentries || out->cyg) &&
	    (symtab || dynsym))
		err = read_symbols(&f, symtab ? symtab : dynsym, bias, true,
				   flags & TK_ELF_OBJECTS, out);
	munmap((void *)f.map, f.size);
	if (err) {
		tk_elf_syms_free(out);
		return err;
	}
	if (out->nentries)
		qsort(out->entries, out->nentries, sizeof(*out->entries), addr_cmp);
	if (out->nfuncs)
		qsort_r(out->funcs, out->nfuncs, sizeof(*out->funcs), func_cmp, out->names);
	return 0;
}

int tk_elf_map_bias(const char *path, uint64_t addr, uint64_t pgoff, uint64_t page,
		    uint64_t *bias)
{
	struct elf_file f;
	const Elf64_Ehdr *eh;
	int err = elf_map(path, &f);

	if (err)
		return err;
	eh = f.eh;
	err = -ENOENT;
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff % 8 ||
	    !in_file(&f, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		err = -ENOEXEC;
	for (unsigned i = 0; err == -ENOENT && i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(const void *)(f.map + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD && (ph->p_offset & ~(page - 1)) == pgoff) {
			*bias = addr - (ph->p_vaddr & ~(page - 1));
			err = 0;
		}
	}
	munmap((void *)f.map, f.size);
	return err;
}

void tk_elf_syms_free(struct tk_elf_syms *e)
{
	free(e->entries);
	free(e->funcs);
	free(e->objs);
	free(e->names);
	memset(e, 0, sizeof(*e));
}

/* Index of the first function starting after @addr. */
static unsigned upper_bound(const struct tk_elf_syms *e, uint64_t addr)
{
	unsigned lo = 0, hi = e->nfuncs;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (e->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct tk_elf_func *tk_elf_func_at(const struct tk_elf_syms *e,
					 uint64_t addr)
{
	unsigned i = upper_bound(e, addr);

	if (!i)
		return NULL;
	i--;
	/* several names for one address: the first (func_cmp) */
	while (i && e->funcs[i - 1].addr == e->funcs[i].addr)
		i--;
	if (addr - e->funcs[i].addr >= (e->funcs[i].size ? e->funcs[i].size : 1))
		return NULL;
	return &e->funcs[i];
}

const struct tk_elf_func *tk_elf_entry_func(const struct tk_elf_syms *e,
					    uint64_t entry, uint64_t *site)
{
	const struct tk_elf_func *fn = tk_elf_func_at(e, entry);
	unsigned i;

	*site = entry;
	if (fn)
		return fn;
	i = upper_bound(e, entry);
	if (i >= e->nfuncs || e->funcs[i].addr - entry > 16)
		return NULL;
	*site = e->funcs[i].addr;
	return &e->funcs[i];
}
