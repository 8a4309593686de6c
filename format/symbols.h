/* SPDX-License-Identifier: MIT */
/*
 * symbols.h - function symbols for the function tracer: read from ELF
 * files at record time (common/elf-symbols.h), saved into the trace
 * directory, resolved when reading (docs/format.md, "Symbols").
 *
 *   DIR/symbols/maps     one line per object loaded in a traced process:
 *                        "PID LO HI BIAS BUILD_ID SYMFILE PATH"
 *   DIR/symbols/N.sym    its function symbols, "ADDR SIZE NAME" per line,
 *                        link-time addresses in hex, sorted
 */
#ifndef TK_SYMBOLS_H
#define TK_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tk_sym {
	uint64_t addr; /* link-time */
	uint64_t size;
	char *name;
	char *demangled; /* filled on first lookup */
};

struct tk_symtab {
	struct tk_sym *sym; /* sorted by addr */
	unsigned count;
};

/* What makes an ELF file traceable by the function tracer. */
struct tk_elf_functrace {
	unsigned entries;  /* __patchable_function_entries + __mcount_loc */
	bool cyg;          /* calls __cyg_profile_func_enter */
	char **traceable;  /* names of the functions that can be traced */
	unsigned ntraceable;
};

/* Read the function symbols of @path (.symtab, else .dynsym) into *out
 * and, if @ft, what is traceable.  Returns 0 or -errno with a one-line
 * reason in err[errlen]. */
int tk_elf_symbols_read(const char *path, struct tk_symtab *out,
			struct tk_elf_functrace *ft, char *err, size_t errlen);
void tk_symtab_free(struct tk_symtab *t);
void tk_elf_functrace_free(struct tk_elf_functrace *ft);

/* elf-plt.c: the library calls of @path, as symbols of its GOT slots
 * (the function tracer records a call through the PLT as its slot's
 * address), added to @t, which stays sorted.  Returns 0 or -errno. */
int tk_elf_plt_symbols(const char *path, struct tk_symtab *t);

/* The symbol containing @addr (link-time), or NULL. */
const struct tk_sym *tk_symtab_find(const struct tk_symtab *t, uint64_t addr);

/* A loaded object of a traced process, as the runtime reported it. */
struct tk_sym_module {
	uint32_t pid;
	uint64_t lo, hi, bias;
	char *path;
	char build_id[41]; /* hex, "" if none */
	char *symfile;     /* relative to the trace directory */
	struct tk_symtab *syms;
};

/* An executable mapping of a file in a process, as the kernel reports
 * it (kernel/mmaps.c). */
struct tk_code_map {
	uint32_t pid;
	uint64_t addr, len, pgoff;
	char *path;
};

/* The objects @maps describe, one per process and file: the range of
 * their code and the load bias, from the file's segments (a file that
 * cannot be read is left out).  *out is malloc'd, its paths too (free
 * with tk_sym_modules_free). */
int tk_sym_modules_from_maps(const struct tk_code_map *maps, unsigned n,
			     struct tk_sym_module **out, unsigned *nout);
void tk_sym_modules_free(struct tk_sym_module *mods, unsigned n);

/* Save the maps and symbol files of @mods into @dir/symbols.  Objects
 * whose file cannot be read get no symbol file ("-").  Returns 0 or
 * -errno with err[errlen] naming the file. */
int tk_symbols_save(const char *dir, const struct tk_sym_module *mods,
		    unsigned n, char *err, size_t errlen);

/* The symbols saved in a trace (none if it has no symbols/). */
struct tk_symbols;
int tk_symbols_load(const char *dir, struct tk_symbols **out, char *err,
		    size_t errlen);
/* Name of @addr in process @pid, C++ demangled, and the offset into it;
 * NULL when unknown. */
const char *tk_symbols_lookup(struct tk_symbols *s, uint32_t pid,
			      uint64_t addr, uint64_t *offset);
/* The path of the object holding @addr in process @pid, or NULL. */
const char *tk_symbols_object(struct tk_symbols *s, uint32_t pid, uint64_t addr);
/* The same, with the object's load bias and build id (hex, "" when
 * none was saved). */
const char *tk_symbols_where(struct tk_symbols *s, uint32_t pid, uint64_t addr,
			     uint64_t *bias, const char **build_id);
void tk_symbols_free(struct tk_symbols *s);

/* Parse a maps line or a .sym line (for the fuzzer too): 0 or -EINVAL. */
int tk_symbols_parse_sym_line(char *line, struct tk_sym *out);

/* demangle.cc: the C++ name of a mangled @name, malloc'd; NULL if it is
 * not a C++ name. */
char *tk_demangle(const char *name);

#endif /* TK_SYMBOLS_H */
