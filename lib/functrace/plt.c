/* SPDX-License-Identifier: MIT */
/*
 * plt.c - library calls of the traced objects (malloc, strlen,
 * pthread_mutex_lock ...), recorded as functions, as uftrace does.
 *
 * A traced object (one with patchable entries or -finstrument-functions
 * hooks) calls into other objects through its PLT, which jumps to the
 * address its GOT slot holds.  Each slot of a JUMP_SLOT relocation is
 * hooked by pointing it at a stub (arch/<arch>/functrace.c) that records
 * the call as function "slot address" (the tools name it after the
 * relocation's symbol: format/elf-plt.c) and goes on to the target, with
 * the return hooked as for any traced function.  A slot is one aligned
 * word: a thread calling meanwhile goes to the old target or to the
 * stub, never elsewhere.  Unhooked, the slot gets back what it held.
 *
 * The relocations are read from the loaded image (the dynamic section,
 * its tables as the loader mapped them): nothing is read from files.  A
 * slot not bound yet (lazy binding: it still points into the object's
 * own PLT) gets the target the loader would give it (resolve()).  Slots in the RELRO region (full RELRO) are
 * made writable for the store and read-only again.
 *
 * Not hooked: calls into objects that are traced themselves (their
 * functions show through their own entries, once), into libtracekit
 * itself (its hooks and API), and functions whose return is not an
 * ordinary one: the setjmp family
 * (they save the return address, which would be the hook's), vfork (the
 * child returns on the parent's stack), the context switchers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fnmatch.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "functrace.h"
#include "arch.h"

#define MAX_SLOTS (1u << 16)

static const char *const not_hooked[] = {
	"setjmp", "_setjmp", "__sigsetjmp", "sigsetjmp", "savectx", "vfork",
	"__vfork", "getcontext", "swapcontext", "setcontext", "makecontext",
	"__tls_get_addr", "__cyg_profile_func_*", "_dl_*",
};

struct plt_scan {
	const ElfW(Rela) *rela;
	size_t nrela;
	const ElfW(Sym) *symtab;
	const char *strtab;
	size_t strsz;
	const ElfW(Half) *versym;
	const ElfW(Verneed) *verneed;
	size_t nverneed;
};

/* A d_ptr value: adjusted to the load address by the loader already (it
 * does so where the dynamic section is writable), or not. */
static uintptr_t dyn_ptr(ElfW(Addr) v, const struct ft_plt_where *w)
{
	return v >= w->lo && v < w->hi ? (uintptr_t)v : (uintptr_t)v + w->bias;
}

static bool scan_dynamic(const struct ft_plt_where *w, struct plt_scan *s)
{
	size_t pltrelsz = 0;
	bool rela = false;

	memset(s, 0, sizeof(*s));
	if (!w->dynamic)
		return false;
	for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)w->dynamic; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_JMPREL:
			s->rela = (const ElfW(Rela) *)dyn_ptr(d->d_un.d_ptr, w);
			break;
		case DT_PLTRELSZ:
			pltrelsz = d->d_un.d_val;
			break;
		case DT_PLTREL:
			rela = d->d_un.d_val == DT_RELA;
			break;
		case DT_SYMTAB:
			s->symtab = (const ElfW(Sym) *)dyn_ptr(d->d_un.d_ptr, w);
			break;
		case DT_STRTAB:
			s->strtab = (const char *)dyn_ptr(d->d_un.d_ptr, w);
			break;
		case DT_STRSZ:
			s->strsz = d->d_un.d_val;
			break;
		case DT_VERSYM:
			s->versym = (const ElfW(Half) *)dyn_ptr(d->d_un.d_ptr, w);
			break;
		case DT_VERNEED:
			s->verneed = (const ElfW(Verneed) *)dyn_ptr(d->d_un.d_ptr, w);
			break;
		case DT_VERNEEDNUM:
			s->nverneed = d->d_un.d_val;
			break;
		default:
			break;
		}
	}
	s->nrela = pltrelsz / sizeof(ElfW(Rela));
	return rela && s->rela && s->symtab && s->strtab && s->strsz && s->nrela &&
	       s->nrela <= MAX_SLOTS;
}

static const char *sym_name(const struct plt_scan *s, size_t idx)
{
	ElfW(Word) off = s->symtab[idx].st_name;

	return off < s->strsz ? s->strtab + off : NULL;
}

/* The version the object asks for symbol @idx ("GLIBC_2.2.5"), or NULL. */
static const char *sym_version(const struct plt_scan *s, size_t idx)
{
	const ElfW(Verneed) *vn = s->verneed;
	ElfW(Half) want;

	if (!s->versym || !vn)
		return NULL;
	want = s->versym[idx] & 0x7fff;
	if (want < 2)
		return NULL; /* local or global: unversioned */
	for (size_t i = 0; i < s->nverneed; i++) {
		const ElfW(Vernaux) *a = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);

		for (unsigned k = 0; k < vn->vn_cnt; k++) {
			if (a->vna_other == want)
				return a->vna_name < s->strsz ? s->strtab + a->vna_name : NULL;
			a = (const ElfW(Vernaux) *)((const char *)a + a->vna_next);
		}
		if (!vn->vn_next)
			break;
		vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next);
	}
	return NULL;
}

static bool excluded(const char *name)
{
	if (!strncmp(name, "tk_", 3) || !strncmp(name, "tk__", 4))
		return true;
	for (size_t i = 0; i < sizeof(not_hooked) / sizeof(not_hooked[0]); i++)
		if (fnmatch(not_hooked[i], name, 0) == 0)
			return true;
	return false;
}

static struct link_map *map_of(const void *p)
{
	struct link_map *lm = NULL;
	Dl_info info;

	return dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP) ? lm : NULL;
}

/* Whether @a comes before @b in the loader's list (its search order for
 * the objects loaded at start). */
static bool earlier(const struct link_map *a, const struct link_map *b)
{
	for (const struct link_map *l = a; l; l = l->l_next)
		if (l == b)
			return true;
	return false;
}

static bool has_verdef(const struct link_map *lm)
{
	for (const ElfW(Dyn) *d = lm->l_ld; d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_VERDEF)
			return true;
	return false;
}

/*
 * Where the loader would bind @x for the object whose slot it is.  It
 * takes the first object in its search order with a definition the
 * reference accepts: one of the version asked for, or one without
 * versions at all (an LD_PRELOAD interposer such as libtracekit's own
 * dlopen).  dlvsym finds the first of the one kind, dlsym of the other
 * (as the default version, also); the earlier object wins, the versioned
 * one when both are in the same object.  Symbols not in the global scope
 * are looked up in the object's own (loaded RTLD_LOCAL): its link map
 * is a handle.
 */
static uintptr_t resolve(const struct ft_plt_slot *x)
{
	void *any = dlsym(RTLD_DEFAULT, x->name), *ver = NULL;
	struct link_map *own, *la, *lv;

	if (x->version)
		ver = dlvsym(RTLD_DEFAULT, x->name, x->version);
	if (any && ver && any != ver) {
		la = map_of(any);
		lv = map_of(ver);
		if (la && lv && la != lv && earlier(la, lv) && !has_verdef(la))
			return (uintptr_t)any;
		return (uintptr_t)ver;
	}
	if (any || ver)
		return (uintptr_t)(ver ? ver : any);
	own = map_of(x->got);
	if (!own)
		return 0;
	ver = x->version ? dlvsym(own, x->name, x->version) : NULL;
	return (uintptr_t)(ver ? ver : dlsym(own, x->name));
}

/* Our own object: calls into it are never hooked. */
static bool in_runtime(uintptr_t a)
{
	static uintptr_t base;
	Dl_info self, it;

	if (!base && dladdr((void *)(uintptr_t)&in_runtime, &self))
		base = (uintptr_t)self.dli_fbase;
	return dladdr((void *)a, &it) && (uintptr_t)it.dli_fbase == base;
}

void tk_ft_plt_read(struct ft_plt *p, const struct ft_plt_where *w)
{
	struct plt_scan s;

	memset(p, 0, sizeof(*p));
	p->where = *w;
	if (!tk_ft_arch_plt_stubs_size(1) || !scan_dynamic(w, &s))
		return;
	p->slot = calloc(s.nrela, sizeof(*p->slot));
	if (!p->slot)
		return;
	for (size_t i = 0; i < s.nrela; i++) {
		const ElfW(Rela) *r = &s.rela[i];
		struct ft_plt_slot *x = &p->slot[p->n];
		size_t idx = ELF64_R_SYM(r->r_info);
		uintptr_t got = w->bias + r->r_offset;

		if (ELF64_R_TYPE(r->r_info) != R_X86_64_JUMP_SLOT || !idx ||
		    got < w->lo || got + sizeof(uintptr_t) > w->hi || got % sizeof(uintptr_t))
			continue;
		x->name = sym_name(&s, idx);
		if (!x->name || !*x->name || excluded(x->name))
			continue;
		x->version = sym_version(&s, idx);
		x->got = (uintptr_t *)got;
		p->n++;
	}
}

/* Store @v into slot @x, through the RELRO protection if need be. */
static bool slot_store(const struct ft_plt *p, struct ft_plt_slot *x, uintptr_t v)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)x->got & ~(page - 1);
	bool relro = (uintptr_t)x->got >= p->where.relro_lo &&
		     (uintptr_t)x->got < p->where.relro_hi;

	if (relro && mprotect((void *)a, page, PROT_READ | PROT_WRITE) < 0)
		return false;
	__atomic_store_n(x->got, v, __ATOMIC_RELEASE);
	if (relro)
		mprotect((void *)a, page, PROT_READ);
	return true;
}

/* Stub areas of unloaded objects, for reuse (as module.c does with the
 * entries' stubs): no thread runs the unloaded object's calls any more. */
struct plt_spare {
	uint8_t *stub;
	size_t stub_size;
	uintptr_t (*pair)[2];
	unsigned npairs;
	struct plt_spare *next;
};
static struct plt_spare *spares;

static bool stubs_make(struct ft_plt *p)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t code = (tk_ft_arch_plt_stubs_size(p->n) + page - 1) & ~(page - 1);

	for (struct plt_spare **pp = &spares; *pp; pp = &(*pp)->next) {
		struct plt_spare *sp = *pp;

		if (sp->stub_size < code || sp->npairs < p->n ||
		    mprotect(sp->stub, sp->stub_size, PROT_READ | PROT_WRITE) < 0)
			continue;
		p->stub = sp->stub;
		p->stub_size = sp->stub_size;
		p->pair = sp->pair;
		p->npairs = sp->npairs;
		*pp = sp->next;
		free(sp);
		break;
	}
	if (!p->stub) {
		p->pair = calloc(p->n, sizeof(*p->pair));
		if (!p->pair)
			return false;
		p->npairs = p->n;
		p->stub = mmap(NULL, code, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p->stub == MAP_FAILED) {
			p->stub = NULL;
			return false;
		}
		p->stub_size = code;
	}
	for (unsigned i = 0; i < p->n; i++) {
		p->pair[i][0] = (uintptr_t)p->slot[i].got;
		tk_ft_arch_plt_stub(p->stub, i, p->pair[i]);
	}
	return mprotect(p->stub, p->stub_size, PROT_READ | PROT_EXEC) == 0;
}

unsigned tk_ft_plt_apply(struct ft_plt *p, tk_ft_wanted_fn wanted,
			 tk_ft_traced_at_fn traced_at, const struct ft_options *opt)
{
	unsigned hooked = 0;

	for (unsigned i = 0; i < p->n; i++) {
		struct ft_plt_slot *x = &p->slot[i];
		bool root = false;
		bool on = opt && opt->libcall && wanted(opt, x->name, &root);
		uintptr_t cur = __atomic_load_n(x->got, __ATOMIC_ACQUIRE);

		uintptr_t target = 0;

		if (!x->hooked)
			x->orig = cur;
		if (on && !x->hooked) {
			/* bound, or still pointing into the object's own PLT */
			target = cur >= p->where.lo && cur < p->where.hi ? resolve(x) : cur;
			/* a call into a traced object shows through the
			 * callee's own entry already */
			on = target && !in_runtime(target) && !traced_at(target);
		}
		if (on && !p->stub && !stubs_make(p))
			on = false;
		if (on && !x->hooked)
			__atomic_store_n(&p->pair[i][1], target, __ATOMIC_RELEASE);
		if (on && slot_store(p, x, tk_ft_arch_plt_entry(p->stub, i, root))) {
			x->hooked = true;
			hooked++;
		} else if (x->hooked && slot_store(p, x, x->orig)) {
			x->hooked = false;
		}
	}
	return hooked;
}

void tk_ft_plt_free(struct ft_plt *p)
{
	struct plt_spare *sp = p->stub ? malloc(sizeof(*sp)) : NULL;

	/* the stubs are never unmapped: kept for a later object */
	if (sp) {
		sp->stub = p->stub;
		sp->stub_size = p->stub_size;
		sp->pair = p->pair;
		sp->npairs = p->npairs;
		sp->next = spares;
		spares = sp;
	}
	free(p->slot);
	memset(p, 0, sizeof(*p));
}
