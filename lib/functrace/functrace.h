/* SPDX-License-Identifier: MIT */
/*
 * functrace.h - the function tracer inside libtracekit (docs/functrace.md).
 *
 *   functrace.c  options from the recorder's CONFIG, start and stop, the
 *                public tk_functrace_enable/disable, start-up constructor
 *   module.c     the loaded objects: patchable entries, symbols, stubs,
 *                patching (dl_iterate_phdr; dlopen/dlclose wrappers);
 *                their ELF files are read by common/elf-symbols.c
 *   handler.c    what the trampolines call: events, the shadow stack of
 *                function_graph, -g and the depth limit
 *   events.c     the built-in events (ftrace:function, ...)
 *   cyg.c        __cyg_profile_func_enter/exit (-finstrument-functions)
 *   wrap.c       pthread_exit and C++ unwinding put return addresses back
 *   plt.c        library calls: the traced objects' GOT slots hooked
 */
#ifndef TK_FUNCTRACE_H
#define TK_FUNCTRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

enum ft_mode {
	FT_OFF = 0,
	FT_FUNCTION = 1,
	FT_GRAPH = 2,
};

/*
 * Read by the handlers on every call, without a lock, while functrace.c
 * start_locked() and stop_locked() rewrite it under the tracer's lock
 * (a new session, an object loaded): every access of a word that changes
 * is atomic.  The options (max_depth, stack, graph_roots) are read with
 * FT_OPT, relaxed, each word on its own: a call during a change may act
 * on old and new ones mixed, as it may on either mode.  mode and cyg are
 * read with FT_MODE and FT_CYG_ON, ACQUIRE loads that pair with the RELEASE
 * stores of them in start_locked(), so that a handler that sees a tracer
 * on also sees what was set before it was turned on: the event ids
 * (written once, by events.c, before the first of those stores) and the
 * options.
 */
struct ft_state {
	uint32_t mode;        /* enum ft_mode; FT_OFF while nothing records */
	uint32_t max_depth;   /* frames recorded at most, UINT32_MAX: any */
	uint32_t stack;       /* --func-stack */
	uint32_t graph_roots; /* -g given: record only under a root */
	uint32_t cyg;         /* -finstrument-functions hooks are live */
	uint16_t id_function, id_entry, id_exit, id_stack;
};
extern struct ft_state tk_ft;

#define FT_MODE() __atomic_load_n(&tk_ft.mode, __ATOMIC_ACQUIRE)
#define FT_CYG_ON() __atomic_load_n(&tk_ft.cyg, __ATOMIC_ACQUIRE)
#define FT_OPT(field) __atomic_load_n(&tk_ft.field, __ATOMIC_RELAXED)
#define FT_OPT_SET(field, v) __atomic_store_n(&tk_ft.field, (v), __ATOMIC_RELAXED)

/* The recorder's options (CONFIG, "key=value" strings). */
struct ft_options {
	enum ft_mode tracer;
	char **filter;  /* -l */
	unsigned nfilter;
	char **notrace; /* -n */
	unsigned nnotrace;
	char **graph;   /* -g */
	unsigned ngraph;
	unsigned max_depth; /* 0: no limit */
	bool stack;
	bool libcall; /* hook library calls (libcall=0: --no-libcall) */
};

/* functrace.c: the session's options changed (NULL: no function tracer,
 * or the session ended).  Called by control.c, no lock held. */
void tk_functrace_session(char *const *opts, unsigned n);
/* A forked child joined its parent's session (with its parent's options):
 * tell the recorder its modules. */
void tk_functrace_child_joined(void);
/* After dlopen: patch the new objects as the session asks. */
void tk_ft_loaded(void);
/* Code can be patched here (text-patch.h ready). */
extern bool tk_ft_can_patch;
/* A session asks for a function tracer (read without the lock). */
bool tk_ft_active(void);
/* A message for the recorder's terminal ("process N: ..."). */
void tk_ft_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* events.c: register the built-in events once; fills tk_ft's ids. */
int tk_ft_events_register(void);

/* module.c, with the functrace lock held */
struct ft_selection {
	const struct ft_options *opt; /* NULL: patch nothing */
};
/* Find new loaded objects (and forget unloaded ones); @quiet: no thread
 * but this one runs user code, so single-byte NOPs may be converted. */
void tk_ft_modules_scan(bool quiet);
/* Patch the entries @opt selects, unpatch the others (@opt NULL: all).
 * Returns how many entries are patched. */
unsigned tk_ft_modules_apply(const struct ft_options *opt);
/* Send a MODULE message per object not yet sent this session. */
void tk_ft_modules_announce(bool all);
/* Rebuild the -finstrument-functions selection; returns functions. */
unsigned tk_ft_cyg_select(const struct ft_options *opt);
void tk_ft_lock(void);
void tk_ft_unlock(void);
/* Options currently in force (NULL: none), functrace lock held. */
const struct ft_options *tk_ft_options_locked(void);

/* cyg.c */
/* Selection of -finstrument-functions builds: function start -> flags. */
#define FT_CYG_TRACE 1u
#define FT_CYG_ROOT 2u
int tk_ft_cyg_set(const uintptr_t *addr, const uint8_t *flags, unsigned n);

/* handler.c */
/* Put back the return addresses of this thread's hooked frames (before
 * unwinding that does not go through them). */
void tk_ft_unhook_thread(void);
void tk_ft_handler_init(void);
/* Per-thread frames for -finstrument-functions (cyg.c). */
void tk_ft_cyg_enter(uintptr_t fn, uintptr_t site, uintptr_t sp,
		     unsigned flags);
void tk_ft_cyg_exit(uintptr_t fn, uintptr_t sp);

/* plt.c: library calls of one object, hooked in its GOT slots */
struct ft_plt_where {
	const void *dynamic;          /* its PT_DYNAMIC, loaded */
	uintptr_t bias, lo, hi;
	uintptr_t relro_lo, relro_hi; /* PT_GNU_RELRO, loaded */
};
struct ft_plt_slot {
	uintptr_t *got;
	uintptr_t orig;      /* what it held before the hook */
	const char *name;    /* in the object's dynamic string table */
	const char *version; /* the version it asks for, or NULL */
	bool hooked;
};
struct ft_plt {
	struct ft_plt_where where;
	struct ft_plt_slot *slot;
	unsigned n;
	uint8_t *stub;        /* code, never unmapped */
	size_t stub_size;
	uintptr_t (*pair)[2]; /* per slot: {slot, target}, never freed */
	unsigned npairs;
};
typedef bool (*tk_ft_wanted_fn)(const struct ft_options *o, const char *name,
				bool *root);
/* Whether @addr is code of a traced object (patchable or -finstrument-
 * functions): calls to it are seen at its entry, not in the PLT. */
typedef bool (*tk_ft_traced_at_fn)(uintptr_t addr);
/* Find the JUMP_SLOT relocations of the object at @w (from memory). */
void tk_ft_plt_read(struct ft_plt *p, const struct ft_plt_where *w);
/* Hook the slots @opt wants (@opt NULL: none) but calls into traced
 * objects, unhook the others; returns how many are hooked. */
unsigned tk_ft_plt_apply(struct ft_plt *p, tk_ft_wanted_fn wanted,
			 tk_ft_traced_at_fn traced_at, const struct ft_options *opt);
void tk_ft_plt_free(struct ft_plt *p);

#endif /* TK_FUNCTRACE_H */
