/* SPDX-License-Identifier: MIT */
/*
 * record-functrace.c - tracekit record and the function tracer for user
 * code (docs/functrace.md).
 *
 * Before the program runs (after record-kernel.c sent a bare -p
 * function[_graph] to user code if functrace_program_is_patchable): -l and
 * -g globs must name functions that can be traced.  The program need not link libtracekit:
 * the runtime is preloaded (LD_PRELOAD), found next to this binary (build
 * tree or install tree) or named by TRACEKIT_LIBRARY.
 *
 * While it runs: the options go in the CONFIG; each process reports the
 * objects it has loaded (MODULE).  At the end their function symbols are
 * saved into DIR/symbols (format/symbols.h), so that reports resolve
 * addresses after the program is gone, on any machine.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "format/elf-events.h"
#include "common/protocol.h"
#include "record-functrace.h"
#include "format/symbols.h"

#define BUILD_FLAGS "-fpatchable-function-entry=5 (gcc, clang), " \
	"-pg -mfentry -mnop-mcount -mrecord-mcount with -fno-pie -no-pie (gcc) " \
	"or -finstrument-functions"

struct ft_mod {
	struct tk_sym_module m;
	uint32_t entries, traced, unusable, cyg, libcalls;
	bool warned;
};

/* What a program may announce (MODULE messages): a real one maps a few
 * hundred objects; more is a program that would grow our memory. */
#define MODULES_PER_PROCESS 4096
#define MODULES_MAX 65536
#define MODULE_PATH_MAX 4096

struct traceable {
	char **name;     /* functions with a patchable entry */
	unsigned count;
	char **libcall;  /* what they call through their PLT */
	unsigned nlibcall;
	bool patchable;
	bool links_tracekit;
};

static void traceable_free(struct traceable *t)
{
	for (unsigned i = 0; i < t->count; i++)
		free(t->name[i]);
	for (unsigned i = 0; i < t->nlibcall; i++)
		free(t->libcall[i]);
	free(t->name);
	free(t->libcall);
	memset(t, 0, sizeof(*t));
}

/* The functions a traced object calls through its PLT join @t's
 * library calls. */
static void add_plt_names(const char *path, struct traceable *t)
{
	struct tk_symtab plt = { NULL, 0 };
	char **grown;

	if (tk_elf_plt_symbols(path, &plt) == 0 && plt.count &&
	    (grown = realloc(t->libcall, (t->nlibcall + plt.count) * sizeof(*grown)))) {
		t->libcall = grown;
		for (unsigned i = 0; i < plt.count; i++) {
			grown[t->nlibcall++] = plt.sym[i].name;
			plt.sym[i].name = NULL;
		}
	}
	tk_symtab_free(&plt);
}

/* The functions of @program and the libraries it needs that can be
 * traced. */
static int traceable_read(const char *program, struct traceable *out)
{
	struct tk_elf_modules m;
	char err[512];

	memset(out, 0, sizeof(*out));
	if (tk_elf_modules_read(program, true, &m, err, sizeof(err)) < 0)
		return -ENOEXEC;
	for (unsigned i = 0; i < m.count; i++) {
		struct tk_symtab syms;
		struct tk_elf_functrace ft;
		const char *base = strrchr(m.module[i].path, '/');

		base = base ? base + 1 : m.module[i].path;
		out->links_tracekit |= m.module[i].links_tracekit ||
				       !strncmp(base, "libtracekit.so", 14);
		if (tk_elf_symbols_read(m.module[i].path, &syms, &ft, err,
					sizeof(err)) < 0)
			continue;
		if (ft.entries || ft.cyg) {
			out->patchable = true;
			/* its library calls can be traced too (-l strlen) */
			add_plt_names(m.module[i].path, out);
		}
		if (ft.ntraceable) {
			char **grown = realloc(out->name, (out->count + ft.ntraceable) *
							  sizeof(*grown));

			if (grown) {
				out->name = grown;
				memcpy(grown + out->count, ft.traceable,
				       ft.ntraceable * sizeof(*grown));
				out->count += ft.ntraceable;
				ft.ntraceable = 0;
			}
		}
		tk_elf_functrace_free(&ft);
		tk_symtab_free(&syms);
	}
	tk_elf_modules_free(&m);
	return 0;
}

bool functrace_program_is_patchable(const char *program)
{
	struct traceable t;
	bool yes;

	if (!program || traceable_read(program, &t) < 0)
		return false;
	yes = t.patchable;
	traceable_free(&t);
	return yes;
}

static bool glob_matches(char *const *names, unsigned count, const char *glob)
{
	for (unsigned i = 0; i < count; i++)
		if (fnmatch(glob, names[i], 0) == 0)
			return true;
	return false;
}

/* libtracekit next to this tool: build tree (build/cli/tracekit,
 * build/lib/) or install tree (bin/, lib/[triplet/]). */
static char *find_runtime(void)
{
	static const char *const rel[] = { "../lib/libtracekit.so.0",
					   "../lib64/libtracekit.so.0" };
	const char *env = getenv("TRACEKIT_LIBRARY");
	char exe[4096], *dir, *out = NULL;
	ssize_t n;
	glob_t g;

	if (env && *env)
		return access(env, R_OK) == 0 ? realpath(env, NULL) : NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	dir = dirname(exe);
	for (unsigned i = 0; i < 2 && !out; i++) {
		char *p;

		if (asprintf(&p, "%s/%s", dir, rel[i]) < 0)
			return NULL;
		if (access(p, R_OK) == 0)
			out = realpath(p, NULL);
		free(p);
	}
	if (!out) {
		char *pat;

		if (asprintf(&pat, "%s/../lib/*/libtracekit.so.0", dir) < 0)
			return NULL;
		if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc)
			out = realpath(g.gl_pathv[0], NULL);
		globfree(&g);
		free(pat);
	}
	return out;
}

const char *functrace_build_flags(void)
{
	return BUILD_FLAGS;
}

int functrace_record_check(struct rec_functrace *ft, struct rec_options *o,
			   const char *program, bool force)
{
	struct traceable t;
	char exe[64];
	bool known;

	if (!program && o->attach_pid) {
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)o->attach_pid);
		program = exe;
	}
	known = program && traceable_read(program, &t) == 0;
	ft->attach_pid = o->attach_pid;
	if (!o->user_tracer) {
		if (known)
			traceable_free(&t);
		return 0;
	}
	if (known && !t.patchable) {
		tk_error("'%s' is not built for function tracing: compile it with %s",
			 o->argv ? o->argv[0] : program, BUILD_FLAGS);
		goto fail;
	}
	if (strcmp(o->user_tracer, "function_graph")) {
		if (o->graph_funcs.count || o->max_graph_depth) {
			tk_error("%s needs -p function_graph",
				 o->graph_funcs.count ? "-g" : "--max-graph-depth");
			goto fail;
		}
	}
	for (unsigned k = 0; known && !force && k < 2; k++) {
		const struct rec_list *l = k ? &o->graph_funcs : &o->func_filter;

		for (unsigned i = 0; i < l->count; i++) {
			if (glob_matches(t.name, t.count, l->item[i]))
				continue;
			if (glob_matches(t.libcall, t.nlibcall, l->item[i])) {
				if (o->no_libcall)
					tk_warn("%s '%s' names only library calls of '%s', which --no-libcall leaves out: it matches nothing that is traced",
						k ? "-g" : "-l", l->item[i],
						o->argv ? o->argv[0] : program);
				continue;
			}
			tk_error("%s '%s' matches no function of '%s' that can be traced "
				 "(--force records anyway)",
				 k ? "-g" : "-l", l->item[i],
				 o->argv ? o->argv[0] : program);
			goto fail;
		}
	}
	if (o->argv && !(known && t.links_tracekit)) {
		free(ft->preload);
		ft->preload = find_runtime();
		if (!ft->preload) {
			tk_error("cannot find libtracekit.so.0 to preload next to tracekit "
				 "(set TRACEKIT_LIBRARY, or link the program with -ltracekit)");
			goto fail;
		}
	}
	if (known)
		traceable_free(&t);
	return 0;
fail:
	if (known)
		traceable_free(&t);
	return -EINVAL;
}

void functrace_child_env(const struct rec_functrace *ft,
			 const struct rec_options *o)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;

	if (!o->user_tracer)
		return;
	setenv(TK_FUNCTRACE_ENV, "1", 1);
	if (!ft->preload)
		return;
	if (old && *old && asprintf(&v, "%s:%s", ft->preload, old) >= 0)
		setenv("LD_PRELOAD", v, 1);
	else
		setenv("LD_PRELOAD", ft->preload, 1);
}

static long put(char *buf, size_t len, size_t cap, const char *key,
		const char *value)
{
	size_t need = strlen(key) + 1 + strlen(value) + 1;

	if (len + need > cap)
		return -E2BIG;
	sprintf(buf + len, "%s=%s", key, value);
	return (long)(len + need);
}

long functrace_config_append(const struct rec_options *o, char *buf, size_t len,
			     size_t cap, uint32_t *flags)
{
	const struct { const char *key; const struct rec_list *l; } lists[] = {
		{ "filter", &o->func_filter },
		{ "notrace", &o->func_notrace },
		{ "graph", &o->graph_funcs },
	};
	long n = (long)len;
	char num[16];

	if (!o->user_tracer)
		return n;
	*flags |= TK_CONFIG_FUNCTRACE;
	n = put(buf, (size_t)n, cap, "tracer", o->user_tracer);
	for (unsigned k = 0; k < 3 && n >= 0; k++)
		for (unsigned i = 0; i < lists[k].l->count && n >= 0; i++)
			n = put(buf, (size_t)n, cap, lists[k].key, lists[k].l->item[i]);
	if (n >= 0 && o->max_graph_depth) {
		snprintf(num, sizeof(num), "%u", o->max_graph_depth);
		n = put(buf, (size_t)n, cap, "depth", num);
	}
	if (n >= 0 && o->func_stack)
		n = put(buf, (size_t)n, cap, "stack", "1");
	if (n >= 0 && o->no_libcall)
		n = put(buf, (size_t)n, cap, "libcall", "0");
	return n;
}

/* A new object at the end of ft->mods, zeroed, its path a copy of
 * @path; NULL when out of memory. */
static struct ft_mod *mod_add(struct rec_functrace *ft, const char *path)
{
	struct ft_mod *f;

	if (ft->nmods == ft->mods_cap) {
		unsigned cap = ft->mods_cap ? 2 * ft->mods_cap : 16;
		struct ft_mod *grown = realloc(ft->mods, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		ft->mods = grown;
		ft->mods_cap = cap;
	}
	f = &ft->mods[ft->nmods];
	memset(f, 0, sizeof(*f));
	f->m.path = strdup(path);
	if (!f->m.path)
		return NULL;
	ft->nmods++;
	return f;
}

int functrace_on_module(struct rec_functrace *ft, uint32_t pid,
			const void *msg, size_t len)
{
	const struct tk_msg_module *m = msg;
	const char *path = (const char *)(m + 1);
	size_t plen = len - sizeof(*m);
	struct ft_mod *mods = ft->mods, *f = NULL;
	unsigned mine = 0;

	if (len <= sizeof(*m) || !memchr(path, '\0', plen) || !*path ||
	    strlen(path) >= MODULE_PATH_MAX ||
	    m->build_id_len > sizeof(m->build_id) || m->hi <= m->lo)
		return -EPROTO;
	for (unsigned i = 0; i < ft->nmods && !f; i++) {
		if (mods[i].m.pid != pid)
			continue;
		mine++;
		if (mods[i].m.lo == m->lo && !strcmp(mods[i].m.path, path))
			f = &mods[i];
	}
	if (!f && (mine >= MODULES_PER_PROCESS || ft->nmods >= MODULES_MAX)) {
		bool said = false;

		for (unsigned i = 0; i < ft->nrefused && !said; i++)
			said = ft->refused[i] == pid;
		if (!said && ft->nrefused < FUNCTRACE_REFUSED_SAID) {
			ft->refused[ft->nrefused++] = pid;
			tk_warn("process %u: announced more objects than are kept (%u per process, %u in all); the others' functions are not named",
				pid, MODULES_PER_PROCESS, MODULES_MAX);
		}
		return 0;
	}
	if (!f && !(f = mod_add(ft, path)))
		return -ENOMEM;
	f->m.pid = pid;
	f->m.lo = m->lo;
	f->m.hi = m->hi;
	f->m.bias = m->bias;
	for (unsigned i = 0; i < m->build_id_len; i++)
		sprintf(f->m.build_id + 2 * i, "%02x", m->build_id[i]);
	f->entries = m->entries;
	f->traced = m->traced;
	f->unusable = m->unusable;
	f->cyg = m->cyg;
	f->libcalls = m->libcalls;
	/* started by record, the program converted gcc's NOPs before main:
	 * what is left cannot be patched (record -P: functrace_attach_check) */
	if (f->unusable && !f->warned && !ft->attach_pid) {
		tk_warn("process %u: '%s': %u of %u function entries cannot be patched (their first bytes straddle a cache line)",
			pid, path, f->unusable, f->entries);
		f->warned = true;
	}
	return 0;
}

int functrace_add_modules(struct rec_functrace *ft,
			  const struct tk_sym_module *m, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct ft_mod *f = mod_add(ft, m[i].path);
		char *path;

		if (!f)
			return -ENOMEM;
		path = f->m.path;
		f->m = m[i];
		f->m.syms = NULL;
		f->m.path = path;
	}
	return 0;
}

bool functrace_heard_from(const struct rec_functrace *ft, uint32_t pid)
{
	for (unsigned i = 0; i < ft->nmods; i++)
		if (ft->mods[i].m.pid == pid)
			return true;
	return false;
}

int functrace_attach_check(const struct rec_functrace *ft,
			   const struct rec_options *o, uint32_t pid,
			   bool force, char *err, size_t len)
{
	const struct ft_mod *mods = ft->mods;
	uint32_t traced = 0, unusable = 0;
	const char *path = NULL;

	for (unsigned i = 0; i < ft->nmods; i++) {
		if (mods[i].m.pid != pid)
			continue;
		traced += mods[i].traced + mods[i].cyg;
		unusable += mods[i].unusable;
		if (mods[i].unusable && !path)
			path = mods[i].m.path;
	}
	if (traced || !unusable)
		return 0;
	snprintf(err, len,
		 "process %u: none of the %u function entries of '%s' can be patched: "
		 "gcc's single-byte NOPs become patchable only before the program's "
		 "threads run; start it with TRACEKIT_FUNCTRACE=1 in its environment "
		 "(and LD_PRELOAD=libtracekit.so.0 if it does not link libtracekit), "
		 "or record it from its start: tracekit record -p %s -- CMD%s",
		 pid, unusable, path, o->user_tracer,
		 force ? "" : " (--force records anyway)");
	if (!force)
		return -1;
	tk_warn("%s", err);
	return 0;
}

int functrace_save_symbols(const struct rec_functrace *ft,
			   const struct rec_options *o, const char *dir)
{
	const struct ft_mod *mods = ft->mods;
	unsigned nmods = ft->nmods;
	struct tk_sym_module *list;
	struct tk_symtab *tabs;
	char err[512];
	int ret;

	(void)o;
	if (!nmods)
		return 0;
	list = calloc(nmods, sizeof(*list));
	tabs = calloc(nmods, sizeof(*tabs));
	if (!list || !tabs) {
		free(list);
		free(tabs);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < nmods; i++) {
		list[i] = mods[i].m;
		/* read each file once */
		for (unsigned j = 0; j < i && !list[i].syms; j++)
			if (!strcmp(mods[j].m.path, mods[i].m.path))
				list[i].syms = list[j].syms;
		if (!list[i].syms && mods[i].m.path[0] == '/' &&
		    tk_elf_symbols_read(mods[i].m.path, &tabs[i], NULL, err,
					sizeof(err)) == 0)
			list[i].syms = &tabs[i];
		/* library calls are recorded as their GOT slots' addresses */
		if (list[i].syms == &tabs[i] && mods[i].libcalls &&
		    tk_elf_plt_symbols(mods[i].m.path, &tabs[i]) < 0)
			tk_warn("cannot read the library calls of '%s'", mods[i].m.path);
	}
	ret = tk_symbols_save(dir, list, nmods, err, sizeof(err));
	if (ret < 0)
		tk_error("%s", err);
	for (unsigned i = 0; i < nmods; i++)
		tk_symtab_free(&tabs[i]);
	free(tabs);
	free(list);
	return ret;
}

void functrace_print_summary(const struct rec_functrace *ft,
			     const struct rec_options *o, FILE *f)
{
	const struct ft_mod *mods = ft->mods;
	unsigned nmods = ft->nmods;
	uint32_t done[64];
	unsigned ndone = 0;

	if (!o->user_tracer)
		return;
	for (unsigned i = 0; i < nmods && ndone < 64; i++) {
		uint32_t pid = mods[i].m.pid, traced = 0, objects = 0, libcalls = 0;
		bool seen = false, cyg = false;

		for (unsigned k = 0; k < ndone; k++)
			seen |= done[k] == pid;
		if (seen)
			continue;
		done[ndone++] = pid;
		for (unsigned j = i; j < nmods; j++) {
			if (mods[j].m.pid != pid)
				continue;
			traced += mods[j].traced;
			libcalls += mods[j].libcalls;
			objects += mods[j].traced > 0 || mods[j].cyg;
			cyg |= mods[j].cyg != 0;
		}
		fprintf(f, "tracekit: process %u: %s: %u function entries patched in %u object%s%s, %u library call%s hooked\n",
			pid, o->user_tracer, traced, objects, objects == 1 ? "" : "s",
			cyg ? " (and -finstrument-functions hooks)" : "", libcalls,
			libcalls == 1 ? "" : "s");
	}
}

void functrace_free(struct rec_functrace *ft)
{
	for (unsigned i = 0; i < ft->nmods; i++)
		free(ft->mods[i].m.path);
	free(ft->mods);
	free(ft->preload);
	memset(ft, 0, sizeof(*ft));
}
