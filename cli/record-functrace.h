/* SPDX-License-Identifier: MIT */
/*
 * record-functrace.h - tracekit record's side of the function tracer for
 * user code (-p function|function_graph, -l, -n, -g, --max-graph-depth,
 * --func-stack): checks before the program runs, the runtime's options in
 * the CONFIG, LD_PRELOAD of libtracekit, the objects the processes report
 * and their symbols saved into the trace.
 * A bare "-p function" or "-p function_graph" traces the program's own
 * code when it was built with patchable function entries (or
 * -finstrument-functions), else the kernel's functions.
 */
#ifndef TK_RECORD_FUNCTRACE_H
#define TK_RECORD_FUNCTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "format/symbols.h"
#include "session.h"

#define FUNCTRACE_REFUSED_SAID 64 /* processes told about, at most */

/* The function tracer's side of one recording: what the processes
 * reported (MODULE messages) and the objects seen otherwise, libtracekit
 * to preload.  Zeroed to start; functrace_free() at the end.  Each
 * recording has its own, so that one in the same process after another
 * (stat, then record) starts from nothing. */
struct ft_mod;
struct rec_functrace {
	struct ft_mod *mods;
	unsigned nmods, mods_cap;
	uint32_t refused[FUNCTRACE_REFUSED_SAID]; /* pids told they
						    * announced too many */
	unsigned nrefused;
	char *preload;    /* libtracekit to preload, NULL if not needed */
	pid_t attach_pid; /* record -P */
};
void functrace_free(struct rec_functrace *ft);

/* Whether @program (or a library it needs) is built for the function
 * tracer: patchable entries or -finstrument-functions. */
bool functrace_program_is_patchable(const char *program);

/* The compiler flags that build a program for the function tracer. */
const char *functrace_build_flags(void);

/* Check the user tracer's options against @program (NULL: not known),
 * print one line and return < 0 when they cannot work.  @force: -l/-g may name functions of objects
 * loaded later (dlopen). */
int functrace_record_check(struct rec_functrace *ft, struct rec_options *o,
			   const char *program, bool force);

/* In the command's child, before exec: LD_PRELOAD libtracekit if the
 * program does not carry it, and say that a function tracer is wanted. */
void functrace_child_env(const struct rec_functrace *ft,
			 const struct rec_options *o);

/* Append the function tracer's options to a CONFIG message being built in
 * buf[0..len) (capacity cap); sets TK_CONFIG_FUNCTRACE in *flags.  Returns
 * the new length or -E2BIG. */
long functrace_config_append(const struct rec_options *o, char *buf, size_t len,
			     size_t cap, uint32_t *flags);

/* A MODULE message from process @pid.  Returns 0 or -EPROTO. */
int functrace_on_module(struct rec_functrace *ft, uint32_t pid,
			const void *msg, size_t len);

/* Objects seen otherwise (the kernel's mmap events, for user stacks of
 * kernel events): their symbols are saved too.  Returns 0 or -ENOMEM. */
int functrace_add_modules(struct rec_functrace *ft,
			  const struct tk_sym_module *m, unsigned n);
/* record -P with a user tracer: once process @pid has reported its
 * objects, whether tracing can go on.  Its entries may all be unusable
 * (gcc's single-byte NOPs are made patchable only before threads run):
 * then returns -1 with how to start the program in err[len], unless
 * @force (a warning then).  0 otherwise. */
int functrace_attach_check(const struct rec_functrace *ft,
			   const struct rec_options *o, uint32_t pid,
			   bool force, char *err, size_t len);
/* Whether process @pid has reported any object. */
bool functrace_heard_from(const struct rec_functrace *ft, uint32_t pid);

/* Save the symbols of the objects reported into @dir; prints and returns
 * < 0 on failure. */
int functrace_save_symbols(const struct rec_functrace *ft,
			   const struct rec_options *o, const char *dir);

/* Lines for record's summary: functions traced per process. */
void functrace_print_summary(const struct rec_functrace *ft,
			     const struct rec_options *o, FILE *f);

#endif /* TK_RECORD_FUNCTRACE_H */
