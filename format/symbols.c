/* SPDX-License-Identifier: MIT */
/*
 * symbols.c - function symbols: read from ELF files when recording
 * (common/elf-symbols.c, the reader the runtime uses too), written into
 * the trace as text, loaded and looked up when reading (symbols.h,
 * docs/format.md).
 *
 * The files under symbols/ come from outside when read, so every line is
 * checked; a bad line is skipped, not trusted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/regular-file.h"
#include "common/elf-symbols.h"
#include "symbols.h"

#define MAX_SYMS (1u << 22)

static int sym_cmp(const void *a, const void *b)
{
	const struct tk_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* aliases: global names (no leading underscore) first */
	return (x->name[0] == '_') - (y->name[0] == '_');
}

void tk_symtab_free(struct tk_symtab *t)
{
	for (unsigned i = 0; t && i < t->count; i++) {
		free(t->sym[i].name);
		free(t->sym[i].demangled);
	}
	if (t)
		free(t->sym);
	if (t)
		memset(t, 0, sizeof(*t));
}

void tk_elf_functrace_free(struct tk_elf_functrace *ft)
{
	for (unsigned i = 0; ft && i < ft->ntraceable; i++)
		free(ft->traceable[i]);
	if (ft) {
		free(ft->traceable);
		memset(ft, 0, sizeof(*ft));
	}
}

static int add_sym(struct tk_symtab *t, unsigned *cap, uint64_t addr,
		   uint64_t size, const char *name)
{
	if (t->count >= MAX_SYMS)
		return 0;
	if (t->count == *cap) {
		unsigned c = *cap ? *cap * 2 : 256;
		struct tk_sym *grown = realloc(t->sym, c * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		t->sym = grown;
		*cap = c;
	}
	t->sym[t->count].name = strdup(name);
	if (!t->sym[t->count].name)
		return -ENOMEM;
	t->sym[t->count].addr = addr;
	t->sym[t->count].size = size;
	t->sym[t->count].demangled = NULL;
	t->count++;
	return 0;
}

static int add_traceable(struct tk_elf_functrace *ft, const char *name)
{
	char **grown = realloc(ft->traceable, (ft->ntraceable + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	ft->traceable = grown;
	grown[ft->ntraceable] = strdup(name);
	if (!grown[ft->ntraceable])
		return -ENOMEM;
	ft->ntraceable++;
	return 0;
}

int tk_elf_symbols_read(const char *path, struct tk_symtab *out,
			struct tk_elf_functrace *ft, char *err, size_t errlen)
{
	struct tk_elf_syms e;
	unsigned cap = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	if (ft)
		memset(ft, 0, sizeof(*ft));
	ret = tk_elf_syms_read(path, 0, TK_ELF_FUNCS, &e);
	if (ret == -ENOEXEC) {
		snprintf(err, errlen, "'%s' is not a 64-bit ELF file", path);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(-ret));
		return ret;
	}
	/* in tk_elf_syms's order: by address, global names first */
	for (unsigned i = 0; i < e.nfuncs && !ret; i++)
		ret = add_sym(out, &cap, e.funcs[i].addr, e.funcs[i].size,
			      tk_elf_func_name(&e, &e.funcs[i]));
	if (ft && !ret) {
		ft->entries = e.table_entries;
		ft->cyg = e.cyg;
		for (unsigned i = 0; i < e.nentries && !ret; i++) {
			uint64_t site;
			const struct tk_elf_func *fn = tk_elf_entry_func(&e, e.entries[i], &site);

			if (fn)
				ret = add_traceable(ft, tk_elf_func_name(&e, fn));
		}
		for (unsigned i = 0; e.cyg && i < e.nfuncs && !ret; i++)
			ret = add_traceable(ft, tk_elf_func_name(&e, &e.funcs[i]));
	}
	tk_elf_syms_free(&e);
	if (ret) {
		snprintf(err, errlen, "out of memory reading '%s'", path);
		tk_symtab_free(out);
		tk_elf_functrace_free(ft);
	}
	return ret;
}

const struct tk_sym *tk_symtab_find(const struct tk_symtab *t, uint64_t addr)
{
	unsigned lo = 0, hi = t->count;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (t->sym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	while (lo && t->sym[lo - 1].addr == t->sym[lo].addr)
		lo--;
	if (addr - t->sym[lo].addr >= (t->sym[lo].size ? t->sym[lo].size : 1))
		return NULL;
	return &t->sym[lo];
}

/* ---- the trace's symbols/ --------------------------------------------- */

static bool name_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ')
			return false;
	return true;
}

static int write_symfile(const char *path, const struct tk_symtab *t)
{
	FILE *f = fopen(path, "we");
	int ret = 0;

	if (!f)
		return -errno;
	for (unsigned i = 0; i < t->count; i++)
		if (name_ok(t->sym[i].name))
			fprintf(f, "%" PRIx64 " %" PRIx64 " %s\n", t->sym[i].addr,
				t->sym[i].size, t->sym[i].name);
	if (fflush(f) || ferror(f))
		ret = -EIO;
	fclose(f);
	return ret;
}

int tk_symbols_save(const char *dir, const struct tk_sym_module *mods,
		    unsigned n, char *err, size_t errlen)
{
	char *sub = NULL, *path = NULL;
	char **symfile = calloc(n + 1, sizeof(*symfile));
	unsigned next = 0;
	FILE *maps = NULL;
	int ret = 0;

	if (!symfile || asprintf(&sub, "%s/symbols", dir) < 0) {
		free(symfile);
		return -ENOMEM;
	}
	if (mkdir(sub, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "cannot create '%s': %s", sub, strerror(errno));
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		/* one file per object: same path and build id, same symbols */
		for (unsigned j = 0; j < i && !symfile[i]; j++)
			if (symfile[j] && !strcmp(mods[j].path, mods[i].path) &&
			    !strcmp(mods[j].build_id, mods[i].build_id))
				symfile[i] = strdup(symfile[j]);
		if (symfile[i] || !mods[i].syms || !mods[i].syms->count)
			continue;
		if (asprintf(&symfile[i], "symbols/%u.sym", next++) < 0 ||
		    asprintf(&path, "%s/%s", dir, symfile[i]) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		ret = write_symfile(path, mods[i].syms);
		if (ret) {
			snprintf(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
			goto out;
		}
		free(path);
		path = NULL;
	}
	if (asprintf(&path, "%s/symbols/maps", dir) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	maps = fopen(path, "we");
	if (!maps) {
		ret = -errno;
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		if (!name_ok(mods[i].path))
			continue;
		fprintf(maps, "%u %" PRIx64 " %" PRIx64 " %" PRIx64 " %s %s %s\n",
			mods[i].pid, mods[i].lo, mods[i].hi, mods[i].bias,
			mods[i].build_id[0] ? mods[i].build_id : "-",
			symfile[i] ? symfile[i] : "-", mods[i].path);
	}
	if (fflush(maps) || ferror(maps)) {
		ret = -EIO;
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(EIO));
	}
	fclose(maps);
out:
	for (unsigned i = 0; i < n; i++)
		free(symfile[i]);
	free(symfile);
	free(sub);
	free(path);
	return ret;
}

int tk_sym_modules_from_maps(const struct tk_code_map *maps, unsigned n,
			     struct tk_sym_module **out, unsigned *nout)
{
	struct tk_sym_module *mods = calloc(n + 1, sizeof(*mods));
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned k = 0;

	*out = mods;
	*nout = 0;
	if (!mods)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		const struct tk_code_map *x = &maps[i];
		struct tk_sym_module *m = NULL;
		uint64_t bias;

		for (unsigned j = 0; j < k && !m; j++)
			if (mods[j].pid == x->pid && !strcmp(mods[j].path, x->path) &&
			    x->addr + x->len >= mods[j].lo && x->addr <= mods[j].hi)
				m = &mods[j];
		if (m) {
			/* another piece of its code */
			m->lo = x->addr < m->lo ? x->addr : m->lo;
			m->hi = x->addr + x->len > m->hi ? x->addr + x->len : m->hi;
			continue;
		}
		if (tk_elf_map_bias(x->path, x->addr, x->pgoff, page, &bias) < 0)
			continue;
		m = &mods[k];
		m->path = strdup(x->path);
		if (!m->path) {
			tk_sym_modules_free(mods, k);
			*out = NULL;
			return -ENOMEM;
		}
		m->pid = x->pid;
		m->lo = x->addr;
		m->hi = x->addr + x->len;
		m->bias = bias;
		k++;
	}
	*nout = k;
	return 0;
}

void tk_sym_modules_free(struct tk_sym_module *mods, unsigned n)
{
	for (unsigned i = 0; mods && i < n; i++)
		free(mods[i].path);
	free(mods);
}

struct sym_map {
	uint32_t pid;
	uint64_t lo, hi, bias;
	int file; /* index in tk_symbols.file, -1: none */
	char *path;
	char build_id[41]; /* hex, "" if none */
};

struct tk_symbols {
	struct sym_map *map; /* sorted by pid, lo */
	unsigned nmaps;
	struct {
		char *file;
		struct tk_symtab syms;
	} *file;
	unsigned nfiles;
};

int tk_symbols_parse_sym_line(char *line, struct tk_sym *out)
{
	char *end, *name;

	out->addr = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return -EINVAL;
	line = end + 1;
	out->size = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return -EINVAL;
	name = end + 1;
	name[strcspn(name, "\n")] = '\0';
	if (!*name || !name_ok(name))
		return -EINVAL;
	out->name = name;
	out->demangled = NULL;
	return 0;
}

static int load_symfile(const char *path, struct tk_symtab *t)
{
	FILE *f = tk_fopen_regular(path);
	char *line = NULL;
	size_t cap = 0;
	unsigned tcap = 0;

	memset(t, 0, sizeof(*t));
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		struct tk_sym s;

		if (tk_symbols_parse_sym_line(line, &s) < 0)
			continue;
		if (add_sym(t, &tcap, s.addr, s.size, s.name) < 0)
			break;
	}
	free(line);
	fclose(f);
	if (t->count)
		qsort(t->sym, t->count, sizeof(*t->sym), sym_cmp);
	return 0;
}

static int map_cmp(const void *a, const void *b)
{
	const struct sym_map *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* A symbol file name we wrote: "symbols/N.sym", nothing else. */
static bool symfile_ok(const char *s)
{
	unsigned n;
	char tail[8];

	return sscanf(s, "symbols/%u%7s", &n, tail) == 2 && !strcmp(tail, ".sym");
}

int tk_symbols_load(const char *dir, struct tk_symbols **out, char *err,
		    size_t errlen)
{
	struct tk_symbols *s = calloc(1, sizeof(*s));
	char *path = NULL, *line = NULL;
	size_t cap = 0;
	FILE *f;

	(void)err;
	(void)errlen;
	*out = s;
	if (!s || asprintf(&path, "%s/symbols/maps", dir) < 0)
		return -ENOMEM;
	f = tk_fopen_regular(path);
	free(path);
	if (!f)
		return 0; /* no symbols saved: addresses stay numbers */
	while (getline(&line, &cap, f) > 0) {
		struct sym_map m, *grown;
		char bid[64], file[256];
		unsigned k;

		int at = 0;

		if (sscanf(line, "%u %" SCNx64 " %" SCNx64 " %" SCNx64 " %63s %255s %n",
			   &m.pid, &m.lo, &m.hi, &m.bias, bid, file, &at) != 6 ||
		    m.hi <= m.lo)
			continue;
		line[strcspn(line, "\n")] = '\0';
		m.path = at && line[at] ? strdup(line + at) : NULL;
		m.build_id[0] = '\0';
		if (strlen(bid) < sizeof(m.build_id) &&
		    strspn(bid, "0123456789abcdef") == strlen(bid))
			memcpy(m.build_id, bid, strlen(bid) + 1);
		m.file = -1;
		if (symfile_ok(file)) {
			for (k = 0; k < s->nfiles; k++)
				if (!strcmp(s->file[k].file, file))
					break;
			if (k == s->nfiles) {
				void *g = realloc(s->file, (s->nfiles + 1) * sizeof(*s->file));

				if (!g) {
					free(m.path);
					break;
				}
				s->file = g;
				s->file[k].file = strdup(file);
				if (asprintf(&path, "%s/%s", dir, file) < 0 || !s->file[k].file) {
					free(m.path);
					break;
				}
				load_symfile(path, &s->file[k].syms);
				free(path);
				s->nfiles++;
			}
			m.file = (int)k;
		}
		grown = realloc(s->map, (s->nmaps + 1) * sizeof(*grown));
		if (!grown) {
			free(m.path);
			break;
		}
		s->map = grown;
		s->map[s->nmaps++] = m;
	}
	free(line);
	fclose(f);
	if (s->nmaps)
		qsort(s->map, s->nmaps, sizeof(*s->map), map_cmp);
	return 0;
}

const char *tk_symbols_lookup(struct tk_symbols *s, uint32_t pid,
			      uint64_t addr, uint64_t *offset)
{
	for (unsigned i = 0; s && i < s->nmaps; i++) {
		struct sym_map *m = &s->map[i];
		struct tk_sym *sym;

		if (m->pid != pid || addr < m->lo || addr >= m->hi || m->file < 0)
			continue;
		sym = (struct tk_sym *)tk_symtab_find(&s->file[m->file].syms,
						      addr - m->bias);
		if (!sym)
			return NULL;
		if (!sym->demangled) {
			sym->demangled = tk_demangle(sym->name);
			if (!sym->demangled)
				sym->demangled = strdup(sym->name);
			if (!sym->demangled)
				return sym->name;
		}
		*offset = addr - m->bias - sym->addr;
		return sym->demangled;
	}
	return NULL;
}

const char *tk_symbols_object(struct tk_symbols *s, uint32_t pid, uint64_t addr)
{
	for (unsigned i = 0; s && i < s->nmaps; i++)
		if (s->map[i].pid == pid && addr >= s->map[i].lo && addr < s->map[i].hi)
			return s->map[i].path;
	return NULL;
}

const char *tk_symbols_where(struct tk_symbols *s, uint32_t pid, uint64_t addr,
			     uint64_t *bias, const char **build_id)
{
	for (unsigned i = 0; s && i < s->nmaps; i++)
		if (s->map[i].pid == pid && addr >= s->map[i].lo && addr < s->map[i].hi) {
			*bias = s->map[i].bias;
			*build_id = s->map[i].build_id;
			return s->map[i].path;
		}
	return NULL;
}

void tk_symbols_free(struct tk_symbols *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->nfiles; i++) {
		free(s->file[i].file);
		tk_symtab_free(&s->file[i].syms);
	}
	free(s->file);
	for (unsigned i = 0; i < s->nmaps; i++)
		free(s->map[i].path);
	free(s->map);
	free(s);
}
