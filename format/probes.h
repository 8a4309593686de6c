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
	dev_t dev;          /* the file read, (st_dev, st_ino): the kernel is */
	ino_t ino;          /* given @path, and what is there must be it */
};

struct tk_probe_set {
	struct tk_probe *probe;
	unsigned count;
};

/* What the probed program is, for PATH names and usdt without a path. */
struct tk_probe_target {
	const char *program; /* the command, resolved; or NULL */
	pid_t pid;           /* record -P; or 0 */
	bool ustack;         /* record --ustack: see TK_PROBE_CALLER_FIELD */
};

/* With --ustack, a probe where the function has built no frame (its
 * first instruction) reads the return address from the stack into this
 * field (x64; 0 where a USDT event's other sites have none): the
 * kernel's user stack misses that frame (elf-probes.c). */
#define TK_PROBE_CALLER_FIELD "__caller"

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

/* A program's USDT probes, for list: "provider:name", the argument
 * types ("s32 u64") and whether a semaphore guards it, one call per
 * probe (each name once). */
typedef void (*tk_usdt_visit_fn)(const char *provider, const char *name,
				 const char *types, bool semaphore, void *ctx);
int tk_usdt_list(const char *path, tk_usdt_visit_fn fn, void *ctx,
		 char *err, size_t errlen);

/* ------------------------------------------------- what the kernel takes */

/*
 * A probe reaches the kernel as one line of uprobe_events, which the
 * kernel (kernel/trace/trace_probe.c, trace_uprobe.c) ends at a newline,
 * cuts at '#' (a comment), splits into words at white space (its
 * isspace(): space, \t \n \v \f \r and the byte 0xa0) and each field at
 * '='.  A string that held any of them would be read as something else:
 * a second probe, a probe on another file or offset.  Event and field
 * names are C identifiers, and lengths are bounded.
 */
#define TK_PROBE_FIELD_NAME_MAX 32 /* MAX_ARG_NAME_LEN */
#define TK_PROBE_EVENT_NAME_MAX 63 /* MAX_EVENT_NAME_LEN, less its NUL */
#define TK_PROBE_FIELDS_MAX 128    /* MAX_TRACE_ARGS */
#define TK_PROBE_LINE_MAX 4094     /* WRITE_BUFSIZE, less '\n' and NUL */

/* Whether @name is a C identifier of at most @max characters. */
bool tk_probe_name_ok(const char *name, size_t max);

/* Whether the kernel can be given file @path in a probe: 0, or -EINVAL
 * with a line naming -e @spec and what in the path cannot be ("it holds
 * '#' (a comment to the kernel) at byte 12") in @err. */
int tk_probe_path_ok(const char *spec, const char *path, char *err, size_t errlen);

/*
 * Every string of probe @p in group @group, and @line, the line that
 * defines it, checked against what the kernel's probe syntax can carry:
 * the one check made before anything is written to uprobe_events.
 * Returns 0, or -EINVAL with a one-line reason naming what and where in
 * @err.
 */
int tk_probe_check(const struct tk_probe *p, const char *group, const char *line,
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
