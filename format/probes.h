/* SPDX-License-Identifier: MIT */
/*
 * probes.h - dynamic probes on code not built for tracekit: the -e
 * spelling (bpftrace's), and its resolution against ELF files into
 * probes the kernel can place (kernel/uprobes.c writes them).
 *
 *   uprobe:PATH:FUNC[+OFF][(ARGS)]      FUNC a symbol or a glob
 *   uprobe:PATH:0xADDR[(ARGS)]          a link-time address
 *   uretprobe:PATH:FUNC[(NAME[:TYPE])]  the return of FUNC
 *   usdt:[PATH:]PROVIDER:NAME[(ARGS)]   a stapsdt note (globs allowed)
 *
 * ARGS is "name[:type], ..." with the kernel's fetch types u8..u64,
 * s8..s64, x8..x64 and string.  PATH is a file, a command found in
 * $PATH, or a library named as the dynamic loader finds it ("libc",
 * "libssl.so.3"): first among the recorded program's objects.
 *
 *   probe-spec.c    parsing the spelling (no file is read)
 *   elf-probes.c    files, symbols, USDT notes, fields (libelf)
 *   dwarf-params.c  parameter names and types (libdw)
 */
#ifndef TK_PROBES_H
#define TK_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum tk_probe_kind {
	TK_PROBE_UPROBE,
	TK_PROBE_URETPROBE,
	TK_PROBE_USDT,
};

/* ---------------------------------------------------------- spelling */

struct tk_probe_arg {
	char *name;
	char *type; /* NULL: from DWARF or the note */
};

struct tk_probe_spec {
	enum tk_probe_kind kind;
	char *path;      /* NULL: usdt:PROVIDER:NAME */
	char *func;      /* uprobes: symbol or glob; NULL with an address */
	uint64_t offset; /* FUNC+OFF */
	uint64_t addr;   /* 0xADDR */
	bool has_addr;
	char *provider;  /* usdt */
	char *name;
	struct tk_probe_arg *args; /* the (ARGS) suffix */
	unsigned nargs;
	bool has_args;   /* "()" counts: no fields at all */
};

/* Whether @text is spelt as a dynamic probe (uprobe:, uretprobe:, usdt:). */
bool tk_probe_spec_is(const char *text);

/* Parse @text.  Returns 0, or -EINVAL with a one-line reason in @err
 * (free *out with tk_probe_spec_free() after success only). */
int tk_probe_spec_parse(const char *text, struct tk_probe_spec *out,
			char *err, size_t errlen);
void tk_probe_spec_free(struct tk_probe_spec *s);

/* Whether @type is a fetch type we take (u8..x64, string). */
bool tk_probe_type_ok(const char *type);

/* ------------------------------------------------------------ probes */

/* Where a field's value is, when the probe hits. */
enum tk_probe_loc_kind {
	TK_LOC_REG,    /* register @reg */
	TK_LOC_MEM,    /* memory at @reg + @disp */
	TK_LOC_IMM,    /* the constant @disp */
	TK_LOC_FILE,   /* memory at file offset @disp of the probed file, as
			* the kernel maps it from the probe's own segment */
	TK_LOC_RETVAL, /* the return value */
};

struct tk_probe_field {
	char name[64];
	char type[8];  /* u8..x64, string (the value is its address) */
	enum tk_probe_loc_kind loc;
	char reg[8];   /* the kernel's name: "di", "r8", "sp" ... */
	int64_t disp;
};

struct tk_probe {
	enum tk_probe_kind kind;
	char *event;        /* [A-Za-z0-9_]+, unique in its kind */
	char *path;         /* the file probed */
	uint64_t offset;    /* file offset of the probed instruction */
	uint64_t ref_ctr;   /* file offset of the USDT semaphore, 0: none */
	struct tk_probe_field *fields;
	unsigned nfields;
	char *spec;         /* the -e it came from */
};

struct tk_probe_set {
	struct tk_probe *probe;
	unsigned count;
};

/* What the probed program is, for PATH names and usdt without a path. */
struct tk_probe_target {
	const char *program; /* the command, resolved; or NULL */
	pid_t pid;           /* record -P; or 0 */
};

/* At most this many probes from one -e (a glob, a USDT name). */
#define TK_PROBES_MAX_MATCH 512
/* The longest -e probe taken (a C++ name, its arguments): messages quote
 * it whole (with its file and name again), in TK_PROBE_ERR_MAX bytes. */
#define TK_PROBE_SPEC_MAX 2048
#define TK_PROBE_ERR_MAX (3 * TK_PROBE_SPEC_MAX + 1024)

/*
 * Resolve @text into probes appended to @set.  Returns how many, or
 * -errno with a one-line reason in @err ("no function 'fo' in '/bin/x'
 * (did you mean 'foo'?)").  @note gets a line worth telling the user
 * (how many functions a glob matched), or "".
 */
int tk_probes_resolve(const char *text, const struct tk_probe_target *t,
		      struct tk_probe_set *set, char *note, size_t notelen,
		      char *err, size_t errlen);
void tk_probe_set_free(struct tk_probe_set *set);

/* A program's USDT probes, for list: "provider:name" and the argument
 * types ("s32 u64"), one call per probe (each name once). */
typedef void (*tk_usdt_visit_fn)(const char *provider, const char *name,
				 const char *types, void *ctx);
int tk_usdt_list(const char *path, tk_usdt_visit_fn fn, void *ctx,
		 char *err, size_t errlen);

/* ------------------------------------------------------------- DWARF */

/* A parameter's (or return value's) type as DWARF tells it. */
struct tk_dwarf_value {
	char name[64];
	char type[8];  /* fetch type, "" when it cannot be fetched */
	char why[48];  /* then why: "double", "struct passed by value" */
	int reg;       /* integer argument register (0..5), else -1 */
	int stack;     /* else its slot above the return address, or -1 */
};

struct tk_dwarf_func {
	struct tk_dwarf_value *param;
	unsigned nparams;
	struct tk_dwarf_value ret; /* type "" for void */
};

/* The parameters of the function at link-time address @addr of @path,
 * from its DWARF (in the file, or the file its .gnu_debuglink or build
 * id names).  Returns 0, -ENODATA when there is no DWARF for it (@err
 * says so), or -errno. */
int tk_dwarf_func_read(const char *path, uint64_t addr,
		       struct tk_dwarf_func *out, char *err, size_t errlen);
void tk_dwarf_func_free(struct tk_dwarf_func *f);

#endif /* TK_PROBES_H */
