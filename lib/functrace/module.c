/* SPDX-License-Identifier: MIT */
/*
 * module.c - the loaded objects and their patchable entries.
 *
 * Each object the dynamic loader reports (dl_iterate_phdr: the program,
 * its libraries, dlopen'd ones) is read once from its file
 * (common/elf-symbols.c): the addresses of its entries, the function each
 * belongs to.  An entry is
 *
 *   untouched    its NOP, as compiled (the original bytes are kept)
 *   traced       a jump to its stub, in the module's stub area
 *
 * and goes from one to the other through tk_text_patch (arch/<arch>/text-patch.c:
 * a jump to itself over the first two bytes, membarrier, the tail,
 * membarrier, the head), so threads running the code meanwhile wait a few
 * microseconds and never see half an instruction.
 *
 * gcc's entries are five one-byte NOPs: a thread may be stopped between
 * two of them, so they cannot be rewritten while other threads run.  They
 * are turned into one five-byte NOP when the module is first seen while
 * only this thread runs user code (the start-up constructor, before main,
 * or just after dlopen); entries of this kind met later are left alone and
 * reported.
 *
 * The jump reaches +-2 GiB: each module gets a stub area (a stub per entry,
 * arch/<arch>/functrace.c) mapped within reach (a PIE program lives far
 * from the libraries); it is never unmapped, since a thread may be on its
 * way through it, but the area of an unloaded module (dlclose: no thread
 * runs its code any more) is kept for a later one within reach.
 *
 * Library calls are hooked in the GOT slots of the same objects (plt.c).
 *
 * Everything here runs under the functrace lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/elf-symbols.h"
#include "lib/internal.h"
#include "functrace.h"
#include "arch.h"

#define STUB_PAGE 4096

struct ft_site {
	uint8_t *addr;
	const struct tk_elf_func *func;
	uint8_t orig[TK_SITE_BYTES]; /* what untouched means */
	bool usable;
	bool traced;
	bool root;
};

struct ft_module {
	char *path;
	uintptr_t bias, lo, hi; /* load bias, mapped range */
	struct tk_elf_syms elf;
	struct ft_site *sites;
	unsigned nsites;
	unsigned unusable; /* single-byte NOPs met too late, other bytes */
	uint8_t *stub;
	size_t stub_size;
	struct ft_plt plt;
	bool seen;
	bool announced;
	struct ft_module *next;
};

/* recursive: dlclose runs destructors that may dlopen */
static pthread_mutex_t ft_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct ft_module *modules;

/* stub areas of unloaded modules, for reuse */
struct ft_spare {
	uint8_t *area;
	size_t size;
	struct ft_spare *next;
};
static struct ft_spare *spares;

void tk_ft_lock(void)
{
	pthread_mutex_lock(&ft_mutex);
}

void tk_ft_unlock(void)
{
	pthread_mutex_unlock(&ft_mutex);
}

struct found {
	char *path;
	uintptr_t bias, lo, hi;
	const void *dynamic;
	uintptr_t relro_lo, relro_hi;
};

struct found_list {
	struct found *item;
	unsigned count;
};

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct found_list *l = arg;
	struct found *grown, *f;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	char exe[4096];
	const char *name = info->dlpi_name;

	const void *dynamic = NULL;
	uintptr_t relro_lo = 0, relro_hi = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dynamic = (const void *)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type == PT_GNU_RELRO) {
			relro_lo = info->dlpi_addr + ph->p_vaddr;
			relro_hi = relro_lo + ph->p_memsz;
		}
		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (hi <= lo)
		return 0;
	if (!name || !*name) {
		/* the program; the first object without a name only */
		ssize_t n;

		if (l->count)
			return 0;
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return 0;
		exe[n] = '\0';
		name = exe;
	}
	grown = realloc(l->item, (l->count + 1) * sizeof(*grown));
	if (!grown)
		return 0;
	l->item = grown;
	f = &grown[l->count];
	f->path = strdup(name);
	if (!f->path)
		return 0;
	f->bias = info->dlpi_addr;
	f->lo = lo;
	f->hi = hi;
	f->dynamic = dynamic;
	f->relro_lo = relro_lo;
	f->relro_hi = relro_hi;
	l->count++;
	return 0;
}

static void module_free(struct ft_module *m)
{
	struct ft_spare *sp = m->stub ? malloc(sizeof(*sp)) : NULL;

	if (sp) {
		sp->area = m->stub;
		sp->size = m->stub_size;
		sp->next = spares;
		spares = sp;
	}
	tk_elf_syms_free(&m->elf);
	tk_ft_plt_free(&m->plt);
	free(m->sites);
	free(m->path);
	free(m);
}

static bool stubs_fill(const struct ft_module *m, uint8_t *p, size_t size)
{
	tk_ft_arch_stubs_init(p);
	for (unsigned i = 0; i < m->nsites; i++)
		tk_ft_arch_stub_site(p, i, m->sites[i].addr);
	return mprotect(p, size, PROT_READ | PROT_EXEC) == 0;
}

/* A spare area big enough and within reach of @m, made writable. */
static uint8_t *stub_spare(const struct ft_module *m, size_t size,
			   size_t *got)
{
	uintptr_t reach = tk_ft_arch_reach();

	for (struct ft_spare **pp = &spares; *pp; pp = &(*pp)->next) {
		struct ft_spare *sp = *pp;
		uintptr_t a = (uintptr_t)sp->area, z = a + sp->size;
		/* module and area together span less than the reach */
		uintptr_t lo = a < m->lo ? a : m->lo, hi = z > m->hi ? z : m->hi;

		if (sp->size < size || hi - lo >= reach ||
		    mprotect(sp->area, sp->size, PROT_READ | PROT_WRITE) < 0)
			continue;
		*pp = sp->next;
		*got = sp->size;
		free(sp);
		return (uint8_t *)a;
	}
	return NULL;
}

/* The stub area of @m within a jump's reach of the whole module. */
static uint8_t *stub_area(struct ft_module *m)
{
	uintptr_t reach = tk_ft_arch_reach(), step = 1u << 24;
	size_t size = tk_ft_arch_stubs_size(m->nsites), got;
	uint8_t *p;

	size = (size + STUB_PAGE - 1) & ~(size_t)(STUB_PAGE - 1);
	p = stub_spare(m, size, &got);
	if (p) {
		m->stub_size = got;
		return stubs_fill(m, p, got) ? p : NULL;
	}
	for (int dir = 0; dir < 2; dir++) {
		for (uintptr_t d = step; d + size < reach - (m->hi - m->lo); d += step) {
			uintptr_t hint;

			if (dir == 0) {
				if (m->lo < d + size)
					break;
				hint = (m->lo - d - size) & ~(uintptr_t)(STUB_PAGE - 1);
			} else {
				hint = (m->hi + d) & ~(uintptr_t)(STUB_PAGE - 1);
			}
			p = mmap((void *)hint, size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if (!stubs_fill(m, p, size)) {
				munmap(p, size);
				return NULL;
			}
			m->stub_size = size;
			return p;
		}
	}
	return NULL;
}

/* Turn the single-byte NOPs of @m into one NOP each, where allowed. */
static void convert_nops(struct ft_module *m, bool quiet)
{
	struct tk_site_patch *p = calloc(m->nsites + 1, sizeof(*p));
	unsigned n = 0;

	for (unsigned i = 0; i < m->nsites; i++) {
		struct ft_site *s = &m->sites[i];

		if (!s->usable || tk_ft_arch_entry_kind(s->addr) != FT_ENTRY_NOPS)
			continue;
		if (!quiet || !p) {
			s->usable = false;
			m->unusable++;
			continue;
		}
		p[n].addr = s->addr;
		tk_ft_arch_nop(p[n].insn);
		n++;
	}
	if (n && tk_text_patch(p, n) < 0) {
		for (unsigned i = 0; i < m->nsites; i++)
			if (m->sites[i].usable &&
			    tk_ft_arch_entry_kind(m->sites[i].addr) == FT_ENTRY_NOPS) {
				m->sites[i].usable = false;
				m->unusable++;
			}
	}
	for (unsigned i = 0; i < m->nsites; i++)
		if (m->sites[i].usable)
			memcpy(m->sites[i].orig, m->sites[i].addr, TK_SITE_BYTES);
	free(p);
}

static struct ft_module *module_new(const struct found *f, bool quiet)
{
	struct ft_module *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->path = strdup(f->path);
	m->bias = f->bias;
	m->lo = f->lo;
	m->hi = f->hi;
	if (!m->path || tk_elf_syms_read(m->path, m->bias, TK_ELF_LOADED, &m->elf) < 0) {
		/* no file (the vdso), or unreadable: nothing to patch */
		return m;
	}
	if (m->elf.nentries || m->elf.cyg) {
		/* a traced object: its library calls too */
		struct ft_plt_where w = { f->dynamic, f->bias, f->lo, f->hi,
					  f->relro_lo, f->relro_hi };

		tk_ft_plt_read(&m->plt, &w);
	}
	if (!m->elf.nentries || !tk_ft_arch_supported() || !tk_ft_can_patch)
		return m;
	m->sites = calloc(m->elf.nentries, sizeof(*m->sites));
	if (!m->sites)
		return m;
	for (unsigned i = 0; i < m->elf.nentries; i++) {
		uint64_t a;
		const struct tk_elf_func *fn = tk_elf_entry_func(&m->elf, m->elf.entries[i], &a);
		struct ft_site *s = &m->sites[m->nsites];

		if (!fn)
			continue;
		if (a < m->lo || a + TK_SITE_BYTES > m->hi)
			continue;
		s->addr = (uint8_t *)(uintptr_t)a;
		s->func = fn;
		switch (tk_ft_arch_entry_kind(s->addr)) {
		case FT_ENTRY_NOP:
		case FT_ENTRY_NOPS:
			s->usable = tk_text_patchable_at(s->addr);
			m->unusable += !s->usable;
			break;
		default:
			m->unusable++;
			break;
		}
		m->nsites++;
	}
	convert_nops(m, quiet);
	return m;
}

void tk_ft_modules_scan(bool quiet)
{
	struct found_list l = { NULL, 0 };
	struct ft_module **pp;

	dl_iterate_phdr(collect, &l);
	for (struct ft_module *m = modules; m; m = m->next)
		m->seen = false;
	for (unsigned i = 0; i < l.count; i++) {
		struct ft_module *m;

		for (m = modules; m; m = m->next)
			if (m->bias == l.item[i].bias && m->lo == l.item[i].lo &&
			    !strcmp(m->path, l.item[i].path))
				break;
		if (!m) {
			m = module_new(&l.item[i], quiet);
			if (!m)
				continue;
			m->next = modules;
			modules = m;
		}
		m->seen = true;
	}
	/* unloaded (dlclose): its code is gone, forget its entries */
	for (pp = &modules; *pp;) {
		struct ft_module *m = *pp;

		if (m->seen) {
			pp = &m->next;
			continue;
		}
		*pp = m->next;
		module_free(m);
	}
	for (unsigned i = 0; i < l.count; i++)
		free(l.item[i].path);
	free(l.item);
}

static bool match_any(char *const *globs, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (fnmatch(globs[i], name, 0) == 0)
			return true;
	return false;
}

static bool wanted(const struct ft_options *o, const char *name, bool *root)
{
	bool in = !o->nfilter || match_any(o->filter, o->nfilter, name);

	*root = o->ngraph && match_any(o->graph, o->ngraph, name);
	/* the runtime's code generated into the program (runtime.h marks
	 * it TK__NOTRACE; this is for compilers that lack the attribute) */
	if (!strncmp(name, "tk__", 4))
		return *root = false;
	if (o->nnotrace && match_any(o->notrace, o->nnotrace, name))
		return false;
	return in || *root;
}

static bool traced_at(uintptr_t addr)
{
	for (struct ft_module *m = modules; m; m = m->next)
		if (addr >= m->lo && addr < m->hi)
			return m->nsites || m->elf.cyg;
	return false;
}

unsigned tk_ft_modules_apply(const struct ft_options *opt)
{
	struct tk_site_patch *p;
	unsigned total = 0, traced = 0, n = 0;

	for (struct ft_module *m = modules; m; m = m->next)
		total += m->nsites;
	p = calloc(total + 1, sizeof(*p));
	if (!p)
		return 0;
	for (struct ft_module *m = modules; m; m = m->next) {
		for (unsigned i = 0; i < m->nsites; i++) {
			struct ft_site *s = &m->sites[i];
			bool root = false;
			bool on = opt && s->usable &&
				  wanted(opt, tk_elf_func_name(&m->elf, s->func), &root);

			if (on && !m->stub)
				m->stub = stub_area(m);
			if (on && (!m->stub ||
				   !tk_ft_arch_jump(s->addr, tk_ft_arch_stub(m->stub, i, root),
						    p[n].insn)))
				on = false;
			if (!on)
				memcpy(p[n].insn, s->orig, TK_SITE_BYTES);
			if (!s->usable)
				continue;
			p[n].addr = s->addr;
			s->traced = on;
			s->root = root;
			traced += on;
			n++;
		}
	}
	if (n && tk_text_patch(p, n) < 0)
		traced = 0;
	free(p);
	/* library calls: not counted here (announced per object) */
	for (struct ft_module *m = modules; m; m = m->next)
		tk_ft_plt_apply(&m->plt, wanted, traced_at, opt);
	return traced;
}

unsigned tk_ft_cyg_select(const struct ft_options *opt)
{
	uintptr_t *addr = NULL;
	uint8_t *flags = NULL;
	unsigned n = 0, cap = 0;

	for (struct ft_module *m = modules; opt && m; m = m->next) {
		if (!m->elf.cyg)
			continue;
		for (unsigned i = 0; i < m->elf.nfuncs; i++) {
			const struct tk_elf_func *fn = &m->elf.funcs[i];
			bool root;

			if (!wanted(opt, tk_elf_func_name(&m->elf, fn), &root))
				continue;
			if (n == cap) {
				unsigned c = cap ? cap * 2 : 256;
				uintptr_t *a = realloc(addr, c * sizeof(*a));
				uint8_t *f = a ? realloc(flags, c) : NULL;

				if (a)
					addr = a;
				if (!f)
					break;
				flags = f;
				cap = c;
			}
			addr[n] = fn->addr;
			flags[n] = FT_CYG_TRACE | (root ? FT_CYG_ROOT : 0);
			n++;
		}
	}
	if (tk_ft_cyg_set(addr, flags, n) < 0)
		n = 0;
	free(addr);
	free(flags);
	return n;
}

void tk_ft_modules_announce(bool all)
{
	char buf[sizeof(struct tk_msg_module) + 4096];
	struct tk_msg_module *msg = (struct tk_msg_module *)buf;

	for (struct ft_module *m = modules; m; m = m->next) {
		size_t len = strlen(m->path) + 1;
		unsigned traced = 0;

		if (m->announced && !all)
			continue;
		if (len > 4096)
			continue;
		for (unsigned i = 0; i < m->nsites; i++)
			traced += m->sites[i].traced;
		memset(msg, 0, sizeof(*msg));
		for (unsigned i = 0; i < m->plt.n; i++)
			msg->libcalls += m->plt.slot[i].hooked;
		msg->m.type = TK_MSG_MODULE;
		msg->m.len = (uint32_t)(sizeof(*msg) + len);
		msg->bias = m->bias;
		msg->lo = m->lo;
		msg->hi = m->hi;
		msg->entries = m->nsites;
		msg->traced = traced;
		msg->unusable = m->unusable;
		msg->cyg = m->elf.cyg;
		memcpy(msg->build_id, m->elf.build_id, sizeof(msg->build_id));
		msg->build_id_len = m->elf.build_id_len;
		memcpy(msg + 1, m->path, len);
		/* the recorder says what unusable entries mean (its
		 * record-functrace.c): it knows how it was started */
		if (tk_session_send(msg, msg->m.len, -1) == 0)
			m->announced = true;
	}
}
