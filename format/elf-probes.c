/* SPDX-License-Identifier: MIT */
/*
 * elf-probes.c - dynamic probes resolved against ELF files (probes.h):
 * which file a PATH names, where a function or a USDT site is in it (a
 * file offset, as the kernel's uprobes take it), what the fields are.
 *
 * A PATH without a '/' is looked for, in order:
 *   1. among the recorded program's objects: the program and the
 *      libraries it loads (elf-events.c finds them as ld.so does), or the
 *      files a running process (-P) maps: the name itself, a soname, or
 *      NAME.so* ("libc" is libc.so.6);
 *   2. as a command in $PATH;
 *   3. as a library: in LD_LIBRARY_PATH, /etc/ld.so.cache, then the
 *      default directories; NAME, else NAME.so* (two different versions
 *      found there is an error naming both).
 *
 * Fields: a uprobe without (ARGS) gets arg0..arg5 (the integer argument
 * registers, u64) and, on a function's entry and with DWARF, each
 * parameter under its name and type; a uretprobe gets retval; a USDT
 * probe arg0.. typed from its note's sizes.  With (ARGS) exactly those
 * fields: a name DWARF knows is that parameter, argN is register N, any
 * other typed name the argument in its position.
 *
 * A probe inside a function (FUNC+OFF, 0xADDR) must be on the first byte
 * of an instruction: the kernel would copy and run whatever it finds
 * there, and a probe in the middle of one changes what the program does.
 * The function's code is decoded from its start (capstone) up to the
 * probe; where no symbol holds the address (a stripped file), from the
 * start of its section.
 *
 * With record --ustack, a probe where the function has not built its
 * frame yet (its first instruction, a USDT site before the prologue)
 * also reads the return address from the stack, as field __caller: the
 * kernel's frame-pointer walk starts from rbp, which is still the
 * caller's, and would give the caller's caller next; readers put
 * __caller back between the two (format/ustack-check.h).  Where that
 * holds is read from the file's unwind tables (CFI): the return address
 * is at CFA - 8 with CFA = rsp + N, and rbp is the caller's ("same
 * value").
 *
 * The x86-64 register names and calling convention are here, in tables:
 * the only architecture these probes are built for.
 */
#define _GNU_SOURCE
#include <capstone/capstone.h>
#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/elf-symbols.h"
#include "common/visible.h"
#include "elf-events.h"
#include "event-info.h"
#include "probes.h"

#define MAX_ARGS 12
#define EVENT_NAME_MAX 48
#define NT_STAPSDT 3
#define LDSO_CACHE "/etc/ld.so.cache"
#define LDSO_CACHE_MAGIC "glibc-ld.so.cache1.1"

/* The integer argument registers of the x86-64 System V ABI. */
static const char *const abi_regs[] = { "di", "si", "dx", "cx", "r8", "r9" };
#define ABI_REGS 6

static const char *const default_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
	"/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
};

/* ------------------------------------------------------------ files */

struct pe_file {
	char *path;
	int fd;
	struct stat st; /* of @fd */
	Elf *elf;
	GElf_Phdr *load; /* PT_LOAD segments */
	size_t nload;
	struct tk_elf_syms syms; /* functions and objects, once asked for */
	bool have_syms;
	Dwarf_CFI *cfi;   /* its .eh_frame, once asked for */
	bool cfi_tried;
	bool want_caller; /* probes read their return address (--ustack) */
};

static void pe_close(struct pe_file *f)
{
	tk_elf_syms_free(&f->syms);
	free(f->load);
	if (f->cfi)
		dwarf_cfi_end(f->cfi);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

static int pe_open(const char *path, struct pe_file *f, char *err, size_t errlen)
{
	GElf_Ehdr eh;
	size_t n;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	elf_version(EV_CURRENT);
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(e));
		pe_close(f);
		return -e;
	}
	if (fstat(f->fd, &f->st) < 0 || !S_ISREG(f->st.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file", path);
		pe_close(f);
		return -EINVAL;
	}
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh) ||
	    gelf_getclass(f->elf) != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    elf_getphdrnum(f->elf, &n) != 0) {
		snprintf(err, errlen, "'%s' is not an x86-64 program or library", path);
		pe_close(f);
		return -ENOEXEC;
	}
	f->load = calloc(n ? n : 1, sizeof(*f->load));
	if (!f->load) {
		pe_close(f);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(f->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->load[f->nload++] = ph;
	}
	return 0;
}

/* The segment holding link-time address @addr in the file, or NULL. */
static const GElf_Phdr *pe_segment(const struct pe_file *f, uint64_t addr)
{
	for (size_t i = 0; i < f->nload; i++)
		if (addr >= f->load[i].p_vaddr &&
		    addr - f->load[i].p_vaddr < f->load[i].p_filesz)
			return &f->load[i];
	return NULL;
}

static bool pe_file_offset(const struct pe_file *f, uint64_t addr, uint64_t *off)
{
	const GElf_Phdr *ph = pe_segment(f, addr);

	if (!ph)
		return false;
	*off = addr - ph->p_vaddr + ph->p_offset;
	return true;
}

static Elf_Scn *pe_section(const struct pe_file *f, const char *name,
			   GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(f->elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(f->elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* The symbols of @f: functions by address, objects (common/elf-symbols.h,
 * TK_ELF_OBJECTS).  A file it cannot read has none.  0 or -ENOMEM. */
static int pe_symbols(struct pe_file *f)
{
	int ret;

	if (f->have_syms)
		return 0;
	ret = tk_elf_syms_read(f->path, 0, TK_ELF_FUNCS | TK_ELF_OBJECTS,
			       &f->syms);
	if (ret == -ENOMEM)
		return ret;
	f->have_syms = true;
	return 0;
}

static const char *pe_name(const struct pe_file *f, const struct tk_elf_func *y)
{
	return tk_elf_func_name(&f->syms, y);
}

/* The data object (@object), else the function, named @name. */
static const struct tk_elf_func *pe_symbol(const struct pe_file *f, const char *name,
			       bool object)
{
	const struct tk_elf_func *y = object ? f->syms.objs : f->syms.funcs;
	unsigned n = object ? f->syms.nobjs : f->syms.nfuncs;

	for (unsigned i = 0; i < n; i++)
		if (!strcmp(pe_name(f, &y[i]), name))
			return &y[i];
	return NULL;
}

/* Append a sentence to the note for the user ("; " between two). */
static void __attribute__((format(printf, 3, 4)))
add_note(char *note, size_t notelen, const char *fmt, ...)
{
	size_t n = strlen(note);
	va_list ap;

	if (n && n + 2 < notelen) {
		memcpy(note + n, "; ", 3);
		n += 2;
	}
	if (n + 1 >= notelen)
		return;
	va_start(ap, fmt);
	vsnprintf(note + n, notelen - n, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------ paths */

struct pe_candidates {
	char **path;
	unsigned count;
};

static void cand_free(struct pe_candidates *c)
{
	for (unsigned i = 0; i < c->count; i++)
		free(c->path[i]);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

/* Add @path (its real path) unless it is there already. */
static void cand_add(struct pe_candidates *c, const char *path)
{
	char *real = realpath(path, NULL), **grown;

	if (!real)
		return;
	for (unsigned i = 0; i < c->count; i++)
		if (!strcmp(c->path[i], real)) {
			free(real);
			return;
		}
	grown = realloc(c->path, (c->count + 1) * sizeof(*grown));
	if (!grown) {
		free(real);
		return;
	}
	c->path = grown;
	c->path[c->count++] = real;
}

/* Whether file name @base is what library name @name means: itself, or
 * NAME.so, NAME.so.N... */
static bool lib_name_matches(const char *base, const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(base, name))
		return true;
	if (strncmp(base, name, n))
		return false;
	if (strstr(name, ".so"))
		return base[n] == '.' && isdigit((unsigned char)base[n + 1]);
	return !strncmp(base + n, ".so", 3) && (!base[n + 3] || base[n + 3] == '.');
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool is_regular(const char *path, bool exec)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       (!exec || access(path, X_OK) == 0);
}

/* An ELF file: a command in $PATH may be a script (a wrapper) first. */
static bool is_elf(const char *path)
{
	char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool elf = fd >= 0 && read(fd, magic, 4) == 4 && !memcmp(magic, ELFMAG, 4);

	if (fd >= 0)
		close(fd);
	return elf;
}

/* The program's objects, or the files the process maps. */
static void target_objects(const struct tk_probe_target *t, struct pe_candidates *out)
{
	memset(out, 0, sizeof(*out));
	if (t->program) {
		struct tk_elf_modules m;
		char err[256];

		if (tk_elf_modules_read(t->program, true, &m, err, sizeof(err)) == 0) {
			for (unsigned i = 0; i < m.count; i++)
				cand_add(out, m.module[i].path);
			tk_elf_modules_free(&m);
		} else if (is_elf(t->program)) {
			/* a script (a wrapper found first in $PATH) has no code
			 * to probe: the name is then looked for as a command */
			cand_add(out, t->program);
		}
	}
	if (t->pid > 0) {
		char path[64], *line = NULL;
		size_t cap = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/maps", (int)t->pid);
		f = fopen(path, "re");
		while (f && getline(&line, &cap, f) > 0) {
			char *p = strchr(line, '/');

			if (!p)
				continue;
			p[strcspn(p, "\n")] = '\0';
			if (!strstr(p, " (deleted)"))
				cand_add(out, p);
		}
		free(line);
		if (f)
			fclose(f);
	}
}

static void search_dir(const char *dir, const char *name, struct pe_candidates *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *path;

	while (d && (e = readdir(d))) {
		if (!lib_name_matches(e->d_name, name) ||
		    asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (is_regular(path, false))
			cand_add(out, path);
		free(path);
	}
	if (d)
		closedir(d);
}

/* Libraries named @name in /etc/ld.so.cache (its "1.1" format: a header,
 * then entries of flags, key and value offsets into the file). */
static void search_ldso_cache(const char *name, struct pe_candidates *out)
{
	FILE *f = fopen(LDSO_CACHE, "re");
	char *data = NULL;
	size_t size = 0, cap = 0, n;
	uint32_t nlibs;

	if (!f)
		return;
	for (;;) {
		char *grown;

		if (size == cap) {
			cap = cap ? cap * 2 : 65536;
			if (cap > (64u << 20) || !(grown = realloc(data, cap)))
				break;
			data = grown;
		}
		n = fread(data + size, 1, cap - size, f);
		if (!n)
			break;
		size += n;
	}
	fclose(f);
	if (size < 48 || memcmp(data, LDSO_CACHE_MAGIC, strlen(LDSO_CACHE_MAGIC))) {
		free(data);
		return;
	}
	memcpy(&nlibs, data + 20, 4);
	for (uint32_t i = 0; i < nlibs && 48 + (size_t)(i + 1) * 24 <= size; i++) {
		const char *e = data + 48 + (size_t)i * 24;
		uint32_t flags, key, value;

		memcpy(&flags, e, 4);
		memcpy(&key, e + 4, 4);
		memcpy(&value, e + 8, 4);
		/* an x86-64 libc6 library (ldconfig's FLAG_ELF_LIBC6 |
		 * FLAG_X8664_LIB64) */
		if (flags != 0x0303 || key >= size || value >= size ||
		    !memchr(data + key, '\0', size - key) ||
		    !memchr(data + value, '\0', size - value))
			continue;
		if (lib_name_matches(data + key, name))
			cand_add(out, data + value);
	}
	free(data);
}

/* $PATH, as the shell finds a command; scripts are passed over (there
 * is no code of theirs to probe). */
static char *find_command(const char *name)
{
	const char *path = getenv("PATH");
	char *copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	char *dir, *save = NULL, *full = NULL;

	for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
	     dir = strtok_r(NULL, ":", &save)) {
		if (asprintf(&full, "%s/%s", *dir ? dir : ".", name) < 0) {
			full = NULL;
			break;
		}
		if (is_regular(full, true) && is_elf(full))
			break;
		free(full);
		full = NULL;
	}
	free(copy);
	return full;
}

static int find_file(const char *text, const char *name, const struct tk_probe_target *t,
		     char **out, char *note, size_t notelen, char *err, size_t errlen)
{
	struct pe_candidates objs, libs = { 0 };
	const char *llp = getenv("LD_LIBRARY_PATH");
	char *cmd;

	*out = NULL;
	if (strchr(name, '/')) {
		*out = realpath(name, NULL);
		if (!*out || !is_regular(*out, false)) {
			snprintf(err, errlen, "no file '%s'%s%s", name,
				 *out ? ": " : "", *out ? "not a regular file" : "");
			free(*out);
			*out = NULL;
			return -ENOENT;
		}
		return 0;
	}
	target_objects(t, &objs);
	for (unsigned i = 0; i < objs.count && !*out; i++)
		if (lib_name_matches(base_name(objs.path[i]), name))
			*out = strdup(objs.path[i]);
	cand_free(&objs);
	if (*out)
		return 0;
	cmd = find_command(name);
	if (cmd) {
		*out = realpath(cmd, NULL);
		free(cmd);
		/* a wrapper (pyenv's shim) may well run another program */
		if (*out && t->program && !strcmp(base_name(t->program), name) && !is_elf(t->program))
			add_note(note, notelen, "'%s': '%s' is a script: the probe is on '%s', the first program '%s' in $PATH, which may not be the one the script runs (give that one's path)",
				 text, t->program, *out, name);
		return *out ? 0 : -ENOMEM;
	}
	if (llp && *llp) {
		char *copy = strdup(llp), *dir, *save = NULL;

		for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !libs.count;
		     dir = strtok_r(NULL, ":", &save))
			search_dir(dir, name, &libs);
		free(copy);
	}
	if (!libs.count)
		search_ldso_cache(name, &libs);
	for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]) &&
			   !libs.count; i++)
		search_dir(default_dirs[i], name, &libs);
	if (libs.count > 1) {
		/* "libssl" with libssl.so.1.1 and libssl.so.3 side by side */
		snprintf(err, errlen, "'%s' names several libraries: '%s' and '%s'; give one",
			 name, libs.path[0], libs.path[1]);
		cand_free(&libs);
		return -EINVAL;
	}
	if (!libs.count) {
		snprintf(err, errlen, "no program or library '%s' (not among %s's objects, in $PATH or the library path)",
			 name, t->program ? base_name(t->program) : "the process");
		return -ENOENT;
	}
	*out = libs.path[0];
	libs.path[0] = NULL;
	cand_free(&libs);
	return 0;
}

/* ------------------------------------------------------------ probes */

static void field_free(struct tk_probe *p)
{
	free(p->fields);
	p->fields = NULL;
	p->nfields = 0;
}

void tk_probe_set_free(struct tk_probe_set *set)
{
	for (unsigned i = 0; i < set->count; i++) {
		free(set->probe[i].event);
		free(set->probe[i].path);
		free(set->probe[i].spec);
		field_free(&set->probe[i]);
	}
	free(set->probe);
	memset(set, 0, sizeof(*set));
}

static struct tk_probe_field *add_field(struct tk_probe *p, const char *name,
					const char *type, enum tk_probe_loc_kind loc,
					const char *reg, int64_t disp)
{
	struct tk_probe_field *grown = realloc(p->fields, (p->nfields + 1) * sizeof(*grown));
	struct tk_probe_field *f;

	if (!grown)
		return NULL;
	p->fields = grown;
	f = &grown[p->nfields++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->type, sizeof(f->type), "%s", type);
	f->loc = loc;
	snprintf(f->reg, sizeof(f->reg), "%s", reg ? reg : "");
	f->disp = disp;
	return f;
}

static const char *const kind_names[] = {
	[TK_PROBE_UPROBE] = "uprobe",
	[TK_PROBE_URETPROBE] = "uretprobe",
	[TK_PROBE_USDT] = "usdt",
};

/* An event name made of @text: [A-Za-z0-9_], not starting with a digit,
 * and unused in @set for @kind: NAME_2, NAME_3... after the first, which
 * the note (for -e @spec) says, or the user would not know which -e an
 * event is. */
static char *event_name(const struct tk_probe_set *set, enum tk_probe_kind kind,
			const char *text, const char *spec, char *note, size_t notelen)
{
	char base[EVENT_NAME_MAX + 1], *name;
	size_t n = 0;

	if (isdigit((unsigned char)*text))
		base[n++] = '_';
	for (const char *p = text; *p && n < EVENT_NAME_MAX; p++)
		base[n++] = isalnum((unsigned char)*p) ? *p : '_';
	base[n] = '\0';
	for (unsigned k = 1;; k++) {
		bool used = false;

		if (k == 1)
			name = strdup(base);
		else if (asprintf(&name, "%s_%u", base, k) < 0)
			name = NULL;
		if (!name)
			return NULL;
		for (unsigned i = 0; i < set->count && !used; i++)
			used = set->probe[i].kind == kind && set->probe[i].event &&
			       !strcmp(set->probe[i].event, name);
		if (!used) {
			if (k > 1)
				add_note(note, notelen, "'%s' records as %s:%s (%s:%s is another probe's)",
					 spec, kind_names[kind], name, kind_names[kind], base);
			return name;
		}
		free(name);
	}
}

static struct tk_probe *add_probe(struct tk_probe_set *set, enum tk_probe_kind kind,
				  const struct pe_file *f, uint64_t offset, const char *spec)
{
	struct tk_probe *grown = realloc(set->probe, (set->count + 1) * sizeof(*grown));
	struct tk_probe *p;

	if (!grown)
		return NULL;
	set->probe = grown;
	p = &grown[set->count];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->offset = offset;
	p->dev = f->st.st_dev;
	p->ino = f->st.st_ino;
	p->path = strdup(f->path);
	p->spec = strdup(spec);
	if (!p->path || !p->spec) {
		free(p->path);
		free(p->spec);
		return NULL;
	}
	set->count++;
	return p;
}

/* Drop the probes from index @from on (a -e that failed half way). */
static void truncate_set(struct tk_probe_set *set, unsigned from)
{
	while (set->count > from) {
		struct tk_probe *p = &set->probe[--set->count];

		free(p->event);
		free(p->path);
		free(p->spec);
		field_free(p);
	}
}

#define DWARF_RBP 6
#define DWARF_RSP 7

/* The offset from rsp of the return address at link-time address @addr
 * of @f, where the function has built no frame (CFA = rsp + N) and left
 * rbp as its caller had it; or -1. */
static int64_t caller_slot(struct pe_file *f, uint64_t addr)
{
	Dwarf_Op *ops, mem[3];
	Dwarf_Frame *frame;
	size_t nops;
	int64_t off = -1, slot = -1;

	if (!f->cfi_tried) {
		f->cfi_tried = true;
		f->cfi = dwarf_getcfi_elf(f->elf);
	}
	if (!f->cfi || dwarf_cfi_addrframe(f->cfi, addr, &frame) != 0)
		return -1;
	if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1) {
		if (ops[0].atom == DW_OP_bregx && ops[0].number == DWARF_RSP)
			off = (int64_t)ops[0].number2;
		else if (ops[0].atom == DW_OP_breg0 + DWARF_RSP)
			off = (int64_t)ops[0].number;
	}
	/* 0 and no operation: "same value", this frame left rbp alone */
	if (off >= 8 && dwarf_frame_register(frame, DWARF_RBP, mem, &ops, &nops) == 0 &&
	    nops == 0)
		slot = off - 8;
	free(frame);
	return slot;
}

/* With --ustack, field __caller at @addr where caller_slot() finds one;
 * with @always, 0 elsewhere (the sites of one USDT event must all have
 * the same fields). */
static int add_caller(struct tk_probe *p, struct pe_file *f, uint64_t addr, bool always)
{
	int64_t slot = f->want_caller ? caller_slot(f, addr) : -1;

	if (slot < 0 && (!always || !f->want_caller))
		return 0;
	return add_field(p, TK_PROBE_CALLER_FIELD, "x64", slot < 0 ? TK_LOC_IMM : TK_LOC_MEM,
			 slot < 0 ? NULL : "sp", slot < 0 ? 0 : slot) ? 0 : -ENOMEM;
}

/* A field of type "string" is the string its value points to. */
static const char *type_or(const char *given, const char *dflt)
{
	return given ? given : dflt;
}

/* --------------------------------------------------------- uprobes */

struct uprobe_ctx {
	const char *text;
	const struct tk_probe_spec *spec;
	const struct pe_file *file;
	const char *func;     /* its name, NULL for an address */
	uint64_t addr;        /* the function's address (link time) */
	bool at_entry;
	struct tk_dwarf_func dwarf;
	int dwarf_ret;        /* tk_dwarf_func_read's result */
	char dwarf_err[256];
	bool dwarf_tried;
	char *note;           /* what to tell the user, appended to */
	size_t notelen;
};

static void uprobe_dwarf(struct uprobe_ctx *c)
{
	if (c->dwarf_tried)
		return;
	c->dwarf_tried = true;
	c->dwarf_ret = tk_dwarf_func_read(c->file->path, c->addr, &c->dwarf,
					  c->dwarf_err, sizeof(c->dwarf_err));
}

static const struct tk_dwarf_value *dwarf_param(const struct uprobe_ctx *c,
						const char *name)
{
	for (unsigned i = 0; c->dwarf_ret == 0 && i < c->dwarf.nparams; i++)
		if (!strcmp(c->dwarf.param[i].name, name))
			return &c->dwarf.param[i];
	return NULL;
}

/* The place of a parameter at the function's entry. */
static int param_field(struct tk_probe *p, const char *name, const char *type,
		       int reg, int stack)
{
	if (reg >= 0)
		return add_field(p, name, type, TK_LOC_REG, abi_regs[reg], 0) ? 0 : -ENOMEM;
	/* stack slot N is above the return address */
	return add_field(p, name, type, TK_LOC_MEM, "sp", 8 * (stack + 1)) ? 0 : -ENOMEM;
}

static void param_names(const struct uprobe_ctx *c, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < c->dwarf.nparams && n < len; i++) {
		char shown[80];

		n += (size_t)snprintf(out + n, len - n, "%s%s", i ? ", " : "",
				      tk_visible(shown, sizeof(shown), c->dwarf.param[i].name));
	}
	if (!c->dwarf.nparams)
		snprintf(out, len, "none");
}

static int uprobe_default_fields(struct uprobe_ctx *c, struct tk_probe *p)
{
	char name[8];

	if (p->kind == TK_PROBE_URETPROBE)
		return add_field(p, "retval", "u64", TK_LOC_RETVAL, NULL, 0) ? 0 : -ENOMEM;
	for (int i = 0; i < ABI_REGS; i++) {
		snprintf(name, sizeof(name), "arg%d", i);
		if (!add_field(p, name, "u64", TK_LOC_REG, abi_regs[i], 0))
			return -ENOMEM;
	}
	if (!c->at_entry)
		return 0;
	uprobe_dwarf(c);
	for (unsigned i = 0; c->dwarf_ret == 0 && i < c->dwarf.nparams; i++) {
		const struct tk_dwarf_value *v = &c->dwarf.param[i];
		bool clash = false;

		for (unsigned j = 0; j < p->nfields; j++)
			clash |= !strcmp(p->fields[j].name, v->name);
		if (!v->type[0] || clash || !v->name[0] || (v->reg < 0 && v->stack < 0))
			continue;
		/* the name goes into the probe's definition: a name the
		 * kernel does not take (or that would end the line) is
		 * left to argN */
		if (!tk_probe_name_ok(v->name, TK_PROBE_FIELD_NAME_MAX)) {
			char shown[80], arg[32];

			snprintf(arg, sizeof(arg), v->reg >= 0 ? "it is arg%d" :
				 "it is not recorded", v->reg);
			add_note(c->note, c->notelen,
				 "'%s': parameter %u of '%s' is named '%s' in its DWARF, which is no field name: %s",
				 c->text, i, c->func, tk_visible(shown, sizeof(shown), v->name), arg);
			continue;
		}
		if (param_field(p, v->name, v->type, v->reg, v->stack) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int need_type(struct uprobe_ctx *c, const char *name, char *err, size_t errlen)
{
	char names[256];

	if (!c->at_entry) {
		/* past the first instruction the registers may hold anything
		 * else: DWARF's names are not looked at there */
		snprintf(err, errlen, "'%s': argument names come from DWARF at a function's entry only, and this probe is %s; give '%s' a type to read the register of its position (%s:u64)",
			 c->text, c->func ? "past it" : "at an address", name, name);
		return -ENODATA;
	}
	if (c->dwarf_ret) {
		snprintf(err, errlen, "'%s': no DWARF for argument '%s': %s; give its type (%s:u64)",
			 c->text, name, c->dwarf_err, name);
		return -ENODATA;
	}
	param_names(c, names, sizeof(names));
	snprintf(err, errlen, "'%s': '%s' has no parameter '%s' (its parameters: %s); give a type to take the argument in that position",
		 c->text, c->func, name, names);
	return -ENOENT;
}

static int uprobe_named_fields(struct uprobe_ctx *c, struct tk_probe *p,
			       char *err, size_t errlen)
{
	const struct tk_probe_spec *s = c->spec;

	uprobe_dwarf(c);
	if (p->kind == TK_PROBE_URETPROBE) {
		const char *type = s->nargs ? s->args[0].type : NULL;

		if (!s->nargs)
			return 0;
		if (!type && (c->dwarf_ret || !c->dwarf.ret.type[0])) {
			if (c->dwarf_ret)
				return need_type(c, s->args[0].name, err, errlen);
			snprintf(err, errlen, "'%s': the return value of '%s' cannot be fetched (%s)",
				 c->text, c->func, c->dwarf.ret.why);
			return -EINVAL;
		}
		return add_field(p, s->args[0].name, type ? type : c->dwarf.ret.type,
				 TK_LOC_RETVAL, NULL, 0) ? 0 : -ENOMEM;
	}
	for (unsigned k = 0; k < s->nargs; k++) {
		const struct tk_probe_arg *a = &s->args[k];
		const struct tk_dwarf_value *v = c->at_entry ? dwarf_param(c, a->name) : NULL;
		int ret;

		if (v) {
			if (!v->type[0] && !a->type) {
				snprintf(err, errlen, "'%s': parameter '%s' of '%s' cannot be fetched (%s)",
					 c->text, a->name, c->func, v->why);
				return -EINVAL;
			}
			if (v->reg < 0 && v->stack < 0) {
				snprintf(err, errlen, "'%s': where parameter '%s' of '%s' is passed is not known (%s)",
					 c->text, a->name, c->func,
					 v->type[0] ? "it follows an argument passed by value" : v->why);
				return -EINVAL;
			}
			ret = param_field(p, a->name, type_or(a->type, v->type), v->reg, v->stack);
		} else if (!strncmp(a->name, "arg", 3) && a->name[3] >= '0' &&
			   a->name[3] < '0' + ABI_REGS && !a->name[4]) {
			ret = add_field(p, a->name, type_or(a->type, "u64"), TK_LOC_REG,
					abi_regs[a->name[3] - '0'], 0) ? 0 : -ENOMEM;
		} else if (!strncmp(a->name, "arg", 3) &&
			   strspn(a->name + 3, "0123456789") == strlen(a->name + 3)) {
			snprintf(err, errlen, "'%s': there is no '%s': arg0..arg%d are the argument registers (%%rdi %%rsi %%rdx %%rcx %%r8 %%r9)",
				 c->text, a->name, ABI_REGS - 1);
			return -EINVAL;
		} else if (a->type) {
			ret = param_field(p, a->name, a->type, k < ABI_REGS ? (int)k : -1,
					  k < ABI_REGS ? -1 : (int)(k - ABI_REGS));
		} else {
			return need_type(c, a->name, err, errlen);
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The section holding link-time address @addr, executable, or NULL. */
static Elf_Scn *code_section(const struct pe_file *f, uint64_t addr, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(f->elf, scn))) {
		if (gelf_getshdr(scn, sh) && sh->sh_type == SHT_PROGBITS &&
		    (sh->sh_flags & SHF_EXECINSTR) && addr >= sh->sh_addr &&
		    addr - sh->sh_addr < sh->sh_size)
			return scn;
	}
	return NULL;
}

/* The function symbol whose code holds @addr, or NULL. */
static const struct tk_elf_func *func_holding(const struct pe_file *f, uint64_t addr)
{
	const struct tk_elf_func *y = tk_elf_func_at(&f->syms, addr);

	return y && !y->ifunc && addr - y->addr < y->size ? y : NULL;
}

/* Whether link-time address @addr of @f starts an instruction: decoded
 * from the start of the function holding it, or else of its section.
 * 0, or -EINVAL with the reason in err[errlen]. */
static int check_instruction(const char *text, struct pe_file *f, uint64_t addr,
			     char *err, size_t errlen)
{
	const struct tk_elf_func *func;
	const uint8_t *code, *file;
	uint64_t start, end, at, off;
	size_t filesize, size, shstrndx;
	const char *where = NULL;
	GElf_Shdr sh;
	cs_insn *insn;
	csh cs;
	bool ok;

	if (!code_section(f, addr, &sh)) {
		snprintf(err, errlen, "'%s': address 0x%" PRIx64 " is not in the code of '%s' (no executable section holds it)",
			 text, addr, f->path);
		return -EINVAL;
	}
	if (pe_symbols(f) == -ENOMEM)
		return -ENOMEM;
	func = func_holding(f, addr);
	if (func)
		where = pe_name(f, func);
	else if (elf_getshdrstrndx(f->elf, &shstrndx) == 0)
		where = elf_strptr(f->elf, shstrndx, sh.sh_name);
	where = where ? where : "its section";
	start = func ? func->addr : sh.sh_addr;
	end = func ? func->addr + func->size : sh.sh_addr + sh.sh_size;
	if (start == addr)
		return 0;
	file = (const uint8_t *)elf_rawfile(f->elf, &filesize);
	if (!file || !pe_file_offset(f, start, &off) || off > filesize ||
	    end - start > filesize - off) {
		snprintf(err, errlen, "'%s': cannot read the code of '%s' at 0x%" PRIx64, text,
			 f->path, start);
		return -EINVAL;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOMEM;
	cs_option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT); /* as objdump prints it */
	insn = cs_malloc(cs);
	if (!insn) {
		cs_close(&cs);
		return -ENOMEM;
	}
	code = file + off;
	size = end - start;
	at = start;
	ok = true;
	while (at < addr && (ok = cs_disasm_iter(cs, &code, &size, &at, insn)))
		;
	if (!ok)
		snprintf(err, errlen, "'%s': cannot decode the code of '%s' at %s+0x%" PRIx64 " to tell whether 0x%" PRIx64 " starts an instruction",
			 text, f->path, where, at - start, addr);
	else if (at != addr)
		snprintf(err, errlen, "'%s': 0x%" PRIx64 " is inside the instruction at %s+0x%" PRIx64 " ('%s%s%s', %u bytes): a probe goes on an instruction's first byte",
			 text, addr, where, insn->address - start,
			 insn->mnemonic, insn->op_str[0] ? " " : "", insn->op_str, insn->size);
	cs_free(insn, 1);
	cs_close(&cs);
	return ok && at == addr ? 0 : -EINVAL;
}

/* One probe at @addr + spec offset, for function @func (NULL: address). */
static int add_uprobe(struct tk_probe_set *set, const char *text,
		      const struct tk_probe_spec *s, const struct pe_file *f,
		      const char *func, uint64_t addr, char *note, size_t notelen,
		      char *err, size_t errlen)
{
	struct uprobe_ctx c = { .text = text, .spec = s, .file = f, .func = func,
				.addr = addr, .at_entry = func && !s->offset,
				.note = note, .notelen = notelen };
	uint64_t off;
	char label[EVENT_NAME_MAX + 32];
	struct tk_probe *p;
	int ret;

	if (!pe_file_offset(f, addr + s->offset, &off)) {
		snprintf(err, errlen, "'%s': address 0x%" PRIx64 " is in no loaded segment of '%s'",
			 text, addr + s->offset, f->path);
		return -EINVAL;
	}
	if (!func || s->offset) {
		ret = check_instruction(text, (struct pe_file *)f, addr + s->offset, err, errlen);
		if (ret)
			return ret;
	}
	p = add_probe(set, s->kind, f, off, text);
	if (!p)
		return -ENOMEM;
	if (func && s->offset)
		snprintf(label, sizeof(label), "%s_0x%" PRIx64, func, s->offset);
	else if (func)
		snprintf(label, sizeof(label), "%s", func);
	else
		snprintf(label, sizeof(label), "%.*s_0x%" PRIx64, EVENT_NAME_MAX - 20,
			 base_name(f->path), addr);
	p->event = event_name(set, s->kind, label, text, note, notelen);
	if (!p->event)
		ret = -ENOMEM;
	else if (s->has_args)
		ret = uprobe_named_fields(&c, p, err, errlen);
	else
		ret = uprobe_default_fields(&c, p);
	if (!ret && s->kind == TK_PROBE_UPROBE)
		ret = add_caller(p, (struct pe_file *)f, addr + s->offset, false);
	tk_dwarf_func_free(&c.dwarf);
	return ret;
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* Of aliases at one address, the one to name the event after. */
static bool better_alias(const char *a, const char *b)
{
	if ((a[0] == '_') != (b[0] == '_'))
		return b[0] == '_';
	return strlen(a) < strlen(b);
}

static int resolve_uprobe(const char *text, const struct tk_probe_spec *s,
			  struct pe_file *f, struct tk_probe_set *set, char *note,
			  size_t notelen, char *err, size_t errlen)
{
	const struct tk_elf_func **match = NULL;
	unsigned nmatch = 0, ifuncs = 0;
	int ret;

	if (s->has_addr)
		return add_uprobe(set, text, s, f, NULL, s->addr, note, notelen, err, errlen) ?: 1;
	ret = pe_symbols(f);
	if (ret)
		return ret;
	match = calloc(f->syms.nfuncs + 1, sizeof(*match));
	if (!match)
		return -ENOMEM;
	for (unsigned i = 0; i < f->syms.nfuncs; i++) {
		const struct tk_elf_func *y = &f->syms.funcs[i];
		const char *name = pe_name(f, y);
		bool dup = false;

		if (is_glob(s->func) ? fnmatch(s->func, name, 0) : strcmp(s->func, name))
			continue;
		if (y->ifunc) {
			ifuncs++;
			continue;
		}
		for (unsigned j = 0; j < nmatch && !dup; j++)
			if (match[j]->addr == y->addr) {
				dup = true;
				if (better_alias(name, pe_name(f, match[j])))
					match[j] = y;
			}
		if (!dup)
			match[nmatch++] = y;
	}
	if (!nmatch) {
		const char **names = calloc(f->syms.nfuncs + 1, sizeof(*names));
		unsigned n = 0;
		const char *near;

		for (unsigned i = 0; names && i < f->syms.nfuncs; i++)
			if (!f->syms.funcs[i].ifunc)
				names[n++] = pe_name(f, &f->syms.funcs[i]);
		near = names && !is_glob(s->func) ? tk_closest_name(s->func, names, n) : NULL;
		if (ifuncs && !is_glob(s->func))
			snprintf(err, errlen, "'%s': '%s' in '%s' is an IFUNC (its symbol is the resolver that picks an implementation once); probe the implementation",
				 text, s->func, f->path);
		else
			snprintf(err, errlen, "'%s': no function %s'%s' in '%s'%s%s%s", text,
				 is_glob(s->func) ? "matching " : "", s->func, f->path,
				 near ? " (did you mean '" : "", near ? near : "",
				 near ? "'?)" : "");
		free(names);
		free(match);
		return -ENOENT;
	}
	if (nmatch > TK_PROBES_MAX_MATCH) {
		snprintf(err, errlen, "'%s' matches %u functions in '%s'; at most %d can be probed at once: narrow the glob",
			 text, nmatch, f->path, TK_PROBES_MAX_MATCH);
		free(match);
		return -E2BIG;
	}
	for (unsigned i = 0; i < nmatch; i++) {
		if (s->offset && match[i]->size && s->offset >= match[i]->size) {
			snprintf(err, errlen, "'%s': offset 0x%" PRIx64 " is past the end of '%s' (%" PRIu64 " bytes)",
				 text, s->offset, pe_name(f, match[i]), match[i]->size);
			ret = -EINVAL;
			break;
		}
		ret = add_uprobe(set, text, s, f, pe_name(f, match[i]), match[i]->addr,
				 note, notelen, err, errlen);
		if (ret)
			break;
	}
	if (!ret && is_glob(s->func))
		add_note(note, notelen, "'%s' matched %u function%s in '%s'", text, nmatch,
			 nmatch == 1 ? "" : "s", f->path);
	free(match);
	return ret ? ret : (int)nmatch;
}

/* ------------------------------------------------------------ USDT */

struct usdt_arg {
	char type[8];
	enum tk_probe_loc_kind loc;
	char reg[8];
	int64_t disp;
	char sym[128]; /* a %rip-relative operand's symbol */
};

struct usdt_site {
	char provider[64], name[64];
	uint64_t pc, semaphore; /* link-time addresses */
	struct usdt_arg args[MAX_ARGS];
	unsigned nargs;
	char bad[160];          /* an argument we cannot fetch, why */
};

/* x86-64 register names as the assembler writes them, in every width,
 * to the kernel's names for the full register. */
static const char *kernel_reg(const char *r)
{
	static const struct {
		const char *names[4];
		const char *kernel;
	} regs[] = {
		{ { "rax", "eax", "ax", "al" }, "ax" },
		{ { "rbx", "ebx", "bx", "bl" }, "bx" },
		{ { "rcx", "ecx", "cx", "cl" }, "cx" },
		{ { "rdx", "edx", "dx", "dl" }, "dx" },
		{ { "rsi", "esi", "si", "sil" }, "si" },
		{ { "rdi", "edi", "di", "dil" }, "di" },
		{ { "rbp", "ebp", "bp", "bpl" }, "bp" },
		{ { "rsp", "esp", "sp", "spl" }, "sp" },
		{ { "rip", "eip", "ip", NULL }, "ip" },
	};
	static char rn[8];

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (int k = 0; k < 4; k++)
			if (regs[i].names[k] && !strcmp(r, regs[i].names[k]))
				return regs[i].kernel;
	/* r8..r15, r8d, r8w, r8b */
	if (r[0] == 'r' && isdigit((unsigned char)r[1])) {
		char *end;
		long n = strtol(r + 1, &end, 10);

		if (n >= 8 && n <= 15 && (!*end || ((*end == 'd' || *end == 'w' || *end == 'b') &&
						    !end[1]))) {
			snprintf(rn, sizeof(rn), "r%ld", n);
			return rn;
		}
	}
	return NULL;
}

/* One argument spec: "[-]N@OPERAND" (or an operand alone: 8 bytes). */
static int usdt_parse_arg(const char *spec, struct usdt_arg *a, char *why, size_t whylen)
{
	const char *at = strchr(spec, '@'), *op = spec;
	long size = 8;
	char reg[16];
	const char *kr;

	memset(a, 0, sizeof(*a));
	if (at) {
		char *end;

		size = strtol(spec, &end, 10);
		if (end != at || !size) {
			snprintf(why, whylen, "bad size in '%s'", spec);
			return -EINVAL;
		}
		op = at + 1;
	}
	if (labs(size) != 1 && labs(size) != 2 && labs(size) != 4 && labs(size) != 8) {
		snprintf(why, whylen, "'%s' is %ld bytes", spec, labs(size));
		return -EINVAL;
	}
	snprintf(a->type, sizeof(a->type), "%c%ld", size < 0 ? 's' : 'u', labs(size) * 8);
	if (*op == '%') {
		if (sscanf(op + 1, "%15[a-z0-9]", reg) != 1 || strlen(reg) != strlen(op + 1) ||
		    !(kr = kernel_reg(reg)) || !strcmp(kr, "ip")) {
			snprintf(why, whylen, "register '%s' cannot be fetched", op);
			return -EINVAL;
		}
		a->loc = TK_LOC_REG;
		snprintf(a->reg, sizeof(a->reg), "%s", kr);
		return 0;
	}
	if (*op == '$') {
		char *end;

		errno = 0;
		a->disp = strtoll(op + 1, &end, 0);
		if (errno || *end || end == op + 1) {
			snprintf(why, whylen, "bad constant '%s'", op);
			return -EINVAL;
		}
		a->loc = TK_LOC_IMM;
		return 0;
	}
	{
		const char *open = strchr(op, '('), *close = open ? strchr(open, ')') : NULL;
		char disp[128];
		size_t n = open ? (size_t)(open - op) : 0;

		if (!open || !close || close[1] || open[1] != '%' || strchr(open, ',') ||
		    n >= sizeof(disp)) {
			snprintf(why, whylen, "operand '%s' cannot be fetched", op);
			return -EINVAL;
		}
		if (sscanf(open + 2, "%15[a-z0-9]", reg) != 1 ||
		    (size_t)(close - open - 2) != strlen(reg) || !(kr = kernel_reg(reg))) {
			snprintf(why, whylen, "register in '%s' cannot be fetched", op);
			return -EINVAL;
		}
		memcpy(disp, op, n);
		disp[n] = '\0';
		if (!strcmp(kr, "ip")) {
			/* sym or sym+N relative to %rip: an address in the file */
			char *plus = strpbrk(disp, "+-");

			a->disp = plus ? strtoll(plus, NULL, 0) : 0;
			if (plus)
				*plus = '\0';
			if (!*disp || isdigit((unsigned char)*disp)) {
				snprintf(why, whylen, "operand '%s' cannot be fetched", op);
				return -EINVAL;
			}
			snprintf(a->sym, sizeof(a->sym), "%s", disp);
			a->loc = TK_LOC_FILE;
			return 0;
		}
		if (n) {
			char *end;

			errno = 0;
			a->disp = strtoll(disp, &end, 0);
			if (errno || *end) {
				snprintf(why, whylen, "operand '%s' cannot be fetched", op);
				return -EINVAL;
			}
		}
		a->loc = TK_LOC_MEM;
		snprintf(a->reg, sizeof(a->reg), "%s", kr);
		return 0;
	}
}

static void usdt_parse_args(const char *args, struct usdt_site *s)
{
	char *copy = strdup(args), *tok, *save = NULL;

	for (tok = copy ? strtok_r(copy, " ", &save) : NULL; tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (s->nargs == MAX_ARGS) {
			snprintf(s->bad, sizeof(s->bad), "more than %d arguments", MAX_ARGS);
			break;
		}
		if (usdt_parse_arg(tok, &s->args[s->nargs], s->bad, sizeof(s->bad)) < 0)
			break;
		s->nargs++;
	}
	free(copy);
}

/* Every USDT site of @f (its .note.stapsdt), addresses as loaded. */
static int usdt_sites(const struct pe_file *f, struct usdt_site **out, unsigned *count)
{
	GElf_Shdr sh, base_sh;
	Elf_Scn *scn = pe_section(f, ".note.stapsdt", &sh);
	bool have_base = pe_section(f, ".stapsdt.base", &base_sh) != NULL;
	Elf_Data *d;
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;

	*out = NULL;
	*count = 0;
	if (!scn || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
		return 0;
	while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const char *desc = (const char *)d->d_buf + desc_off, *p, *end;
		struct usdt_site *grown, *s;
		uint64_t addr[3];

		if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
		    memcmp((const char *)d->d_buf + name_off, "stapsdt", 8) ||
		    nh.n_descsz < 3 * 8 + 3)
			continue;
		memcpy(addr, desc, sizeof(addr));
		end = desc + nh.n_descsz;
		p = desc + 24;
		grown = realloc(*out, (*count + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		*out = grown;
		s = &grown[*count];
		memset(s, 0, sizeof(*s));
		/* provider, name, args: three strings, NUL-terminated */
		for (int k = 0; k < 3; k++) {
			const char *z = memchr(p, '\0', (size_t)(end - p));

			if (!z)
				break;
			if (k == 0)
				snprintf(s->provider, sizeof(s->provider), "%s", p);
			else if (k == 1)
				snprintf(s->name, sizeof(s->name), "%s", p);
			else
				usdt_parse_args(p, s);
			p = z + 1;
			if (k == 2)
				(*count)++;
		}
		/* prelink may have moved the file: .stapsdt.base says by
		 * how much, against the base the note was written with */
		s->pc = addr[0];
		s->semaphore = addr[2];
		if (have_base) {
			s->pc += base_sh.sh_addr - addr[1];
			if (s->semaphore)
				s->semaphore += base_sh.sh_addr - addr[1];
		}
	}
	return 0;
}

static void usdt_types(const struct usdt_site *s, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < s->nargs && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s", i ? " " : "", s->args[i].type);
}

/* A field for argument @a of site @s, as @name of @type. */
static int usdt_field(struct tk_probe *p, const struct pe_file *f, uint64_t pc,
		      const struct usdt_arg *a, const char *name, const char *type,
		      const char *text, char *err, size_t errlen)
{
	const GElf_Phdr *seg = pe_segment(f, pc);
	const struct tk_elf_func *sym;

	if (a->loc == TK_LOC_IMM && !strcmp(type, "string")) {
		snprintf(err, errlen, "'%s': argument '%s' is a constant, not a string's address",
			 text, name);
		return -EINVAL;
	}
	if (a->loc != TK_LOC_FILE)
		return add_field(p, name, type, a->loc, a->reg, a->disp) ? 0 : -ENOMEM;
	sym = pe_symbol(f, a->sym, true);
	if (!sym)
		sym = pe_symbol(f, a->sym, false);
	if (!sym || !seg) {
		snprintf(err, errlen, "'%s': no symbol '%s' in '%s' for argument '%s'",
			 text, a->sym, f->path, name);
		return -ENOENT;
	}
	/* the kernel finds file offset N at the probe's mapping + N: give
	 * the address as an offset from that segment */
	return add_field(p, name, type, TK_LOC_FILE, NULL,
			 (int64_t)(sym->addr + (uint64_t)a->disp - seg->p_vaddr +
				   seg->p_offset)) ? 0 : -ENOMEM;
}

static int usdt_fields(struct tk_probe *p, const struct pe_file *f,
		       const struct usdt_site *site, const struct tk_probe_spec *s,
		       const char *text, char *err, size_t errlen)
{
	unsigned n = s->has_args ? s->nargs : site->nargs;

	if (site->bad[0] && (!s->has_args || s->nargs > site->nargs)) {
		snprintf(err, errlen, "'%s': %s:%s in '%s': %s", text, site->provider,
			 site->name, f->path, site->bad);
		return -EINVAL;
	}
	if (s->has_args && s->nargs > site->nargs) {
		snprintf(err, errlen, "'%s': %s:%s has %u argument%s; '%s' would be number %u",
			 text, site->provider, site->name, site->nargs,
			 site->nargs == 1 ? "" : "s", s->args[site->nargs].name,
			 site->nargs + 1);
		return -EINVAL;
	}
	for (unsigned k = 0; k < n; k++) {
		char name[8];
		const char *type = site->args[k].type;
		int ret;

		snprintf(name, sizeof(name), "arg%u", k);
		if (s->has_args && s->args[k].type)
			type = s->args[k].type;
		ret = usdt_field(p, f, site->pc, &site->args[k],
				 s->has_args ? s->args[k].name : name, type, text, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

/* Sites of @f matching the spec; *added counts the probes made. */
static int resolve_usdt_file(const char *text, const struct tk_probe_spec *s,
			     const struct pe_file *f, struct tk_probe_set *set,
			     unsigned *added, char *note, size_t notelen,
			     char *err, size_t errlen)
{
	struct usdt_site *sites;
	const char **site_event;
	unsigned n;
	int ret = usdt_sites(f, &sites, &n);

	site_event = calloc(n + 1, sizeof(*site_event));
	if (!site_event)
		ret = -ENOMEM;
	for (unsigned i = 0; !ret && i < n; i++) {
		const struct usdt_site *site = &sites[i];
		char label[130];
		uint64_t off, ref = 0;
		struct tk_probe *p;
		char *event = NULL;

		if (fnmatch(s->provider, site->provider, 0) || fnmatch(s->name, site->name, 0))
			continue;
		if (*added == TK_PROBES_MAX_MATCH) {
			snprintf(err, errlen, "'%s' matches more than %d USDT sites; at most %d can be probed at once",
				 text, TK_PROBES_MAX_MATCH, TK_PROBES_MAX_MATCH);
			ret = -E2BIG;
			break;
		}
		if (!pe_file_offset(f, site->pc, &off) ||
		    (site->semaphore && !pe_file_offset(f, site->semaphore, &ref))) {
			snprintf(err, errlen, "'%s': %s:%s in '%s' is at an address outside the file",
				 text, site->provider, site->name, f->path);
			ret = -EINVAL;
			break;
		}
		snprintf(label, sizeof(label), "%s_%s", site->provider, site->name);
		/* another site of a probe seen before: one more place of
		 * the same event (the kernel appends it) */
		for (unsigned k = 0; k < i && !event; k++)
			if (site_event[k] && !strcmp(sites[k].provider, site->provider) &&
			    !strcmp(sites[k].name, site->name))
				event = strdup(site_event[k]);
		if (!event)
			event = event_name(set, TK_PROBE_USDT, label, text, note, notelen);
		p = event ? add_probe(set, TK_PROBE_USDT, f, off, text) : NULL;
		if (!p) {
			free(event);
			ret = -ENOMEM;
			break;
		}
		p->event = event;
		site_event[i] = event;
		p->ref_ctr = ref;
		ret = usdt_fields(p, f, site, s, text, err, errlen);
		if (!ret)
			ret = add_caller(p, (struct pe_file *)f, site->pc, true);
		(*added)++;
	}
	free(site_event);
	free(sites);
	return ret;
}

static int resolve_usdt(const char *text, const struct tk_probe_spec *s,
			const struct tk_probe_target *t, const char *path,
			struct tk_probe_set *set, char *note, size_t notelen,
			char *err, size_t errlen)
{
	struct pe_candidates files = { 0 };
	unsigned added = 0;
	int ret = 0;

	if (path)
		cand_add(&files, path);
	else
		target_objects(t, &files);
	if (!files.count) {
		snprintf(err, errlen, "'%s': no program to look for USDT probes in: give usdt:PATH:%s:%s",
			 text, s->provider, s->name);
		return -EINVAL;
	}
	for (unsigned i = 0; i < files.count && !ret; i++) {
		struct pe_file f;
		char why[TK_PROBE_SPEC_MAX + 256];

		if (pe_open(files.path[i], &f, why, sizeof(why)) < 0) {
			if (path) {
				snprintf(err, errlen, "'%s': %s", text, why);
				ret = -ENOEXEC;
			}
			continue;
		}
		f.want_caller = t->ustack;
		ret = resolve_usdt_file(text, s, &f, set, &added, note, notelen, err, errlen);
		pe_close(&f);
	}
	if (!ret && !added) {
		if (path)
			snprintf(err, errlen, "'%s': no USDT probe %s:%s in '%s'", text,
				 s->provider, s->name, path);
		else
			snprintf(err, errlen, "'%s': no USDT probe %s:%s in '%s' or the libraries it loads",
				 text, s->provider, s->name,
				 t->program ? t->program : "the process");
		ret = -ENOENT;
	}
	if (!ret && (strpbrk(s->provider, "*?[") || strpbrk(s->name, "*?[")))
		add_note(note, notelen, "'%s' matched %u USDT site%s", text, added,
			 added == 1 ? "" : "s");
	cand_free(&files);
	return ret ? ret : (int)added;
}

int tk_probes_resolve(const char *text, const struct tk_probe_target *t,
		      struct tk_probe_set *set, char *note, size_t notelen,
		      char *err, size_t errlen)
{
	struct tk_probe_spec s;
	char *path = NULL, why[TK_PROBE_SPEC_MAX + 256];
	unsigned first = set->count;
	struct pe_file f;
	int ret;

	note[0] = '\0';
	ret = tk_probe_spec_parse(text, &s, err, errlen);
	if (ret)
		return ret;
	if (s.path && (ret = find_file(text, s.path, t, &path, note, notelen, why,
				       sizeof(why))) < 0) {
		snprintf(err, errlen, "'%s': %s", text, why);
		goto out;
	}
	/* said here, before any message quotes the path (tk_probe_check()
	 * makes sure again before the kernel sees it) */
	if (path && (ret = tk_probe_path_ok(text, path, err, errlen)) < 0)
		goto out;
	if (s.kind == TK_PROBE_USDT) {
		ret = resolve_usdt(text, &s, t, path, set, note, notelen, err, errlen);
		goto out;
	}
	ret = pe_open(path, &f, why, sizeof(why));
	if (ret < 0) {
		snprintf(err, errlen, "'%s': %s", text, why);
		goto out;
	}
	f.want_caller = t->ustack;
	ret = resolve_uprobe(text, &s, &f, set, note, notelen, err, errlen);
	pe_close(&f);
out:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (ret < 0)
		truncate_set(set, first);
	free(path);
	tk_probe_spec_free(&s);
	return ret;
}

/* ------------------------------------------------------------ list */

int tk_usdt_list(const char *path, tk_usdt_visit_fn fn, void *ctx, char *err,
		 size_t errlen)
{
	struct usdt_site *sites;
	struct pe_file f;
	unsigned n;
	int ret = pe_open(path, &f, err, errlen);

	if (ret)
		return ret;
	ret = usdt_sites(&f, &sites, &n);
	for (unsigned i = 0; !ret && i < n; i++) {
		char types[128];
		bool seen = false;

		for (unsigned k = 0; k < i && !seen; k++)
			seen = !strcmp(sites[k].provider, sites[i].provider) &&
			       !strcmp(sites[k].name, sites[i].name);
		if (seen)
			continue;
		usdt_types(&sites[i], types, sizeof(types));
		fn(sites[i].provider, sites[i].name, sites[i].bad[0] ? "?" : types,
		   sites[i].semaphore != 0, ctx);
	}
	free(sites);
	pe_close(&f);
	return ret;
}
