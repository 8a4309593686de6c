/* SPDX-License-Identifier: MIT */
/*
 * options.h - the options of every verb, in one table (options.c), and
 * the readers of the values several verbs take alike.
 *
 * A row of the table is an option: its letter, or for an option with
 * only a long name a number past every letter (enum opt_long, as
 * trace-cmd's LONG_OPT), its long name, whether it takes a value, and
 * the verbs that have it.  getopt's option string and long options are
 * made from the rows; nothing else spells them.  A verb reads its
 * options so:
 *
 *   struct opt_parser p;
 *   int c;
 *
 *   opt_init(&p, "start");
 *   while ((c = opt_next(&p, argc, argv)) != -1)
 *           switch (c) {
 *           case 'e': ...
 *           case OPT_STACK: ...
 *           default: return TK_EXIT_USAGE; // said by opt_next
 *           }
 *
 * The same letter can mean other things to other verbs (-o is record's
 * directory, convert's output file and list's mode), one row for each;
 * record, start and stat, which trace alike, share the rows of what
 * they share (-e, -f, -P, -p, -l, -n, -g, --stack) and the readers of
 * their values (opt_rules_add, opt_pid, opt_kb).
 */
#ifndef TK_OPTIONS_H
#define TK_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "common/ringbuf-layout.h"
#include "kernel/kernel.h"

/* The options that have only a long name. */
enum opt_long {
	OPT_LONG_FIRST = 256,
	/* record, start */
	OPT_STACK = OPT_LONG_FIRST,
	/* record */
	OPT_OVERWRITE,
	OPT_NO_FOLLOW,
	OPT_FORCE,
	OPT_SUBBUFS,
	OPT_POOL,
	OPT_BLOCK,
	OPT_MAX_GRAPH_DEPTH,
	OPT_FUNC_STACK,
	OPT_KERNEL_BUFFER,
	OPT_USTACK,
	OPT_NO_LIBCALL,
	/* stat */
	OPT_SORT,
	/* report; --to also convert's */
	OPT_EVENTS,
	OPT_TS,
	OPT_NO_HEADER,
	OPT_COUNT,
	OPT_PROFILE,
	OPT_TEP_PRINT,
	OPT_TEP_STATS,
	OPT_PID,
	OPT_TID,
	OPT_COMM,
	OPT_FROM,
	OPT_TO,
	OPT_NO_CUT,
	/* convert */
	OPT_CALLS,
	OPT_ON_CPU,
	OPT_STACKS,
	OPT_TITLE,
	OPT_UNTIL,
	/* hist; --sort also stat's, --from and --to report's */
	OPT_KEY,
	OPT_VAL,
	OPT_LIMIT,
	OPT_MATCH,
	OPT_SLOWEST,
	OPT_UNIT,
	/* list */
	OPT_NAMES,
};

/* Room for the most options a verb has, and the terminating row. */
#define OPT_MAX 32

struct opt_parser {
	const char *verb;
	char optstring[2 * OPT_MAX + 2];
	struct option longopts[OPT_MAX + 1];
};

/* Make @p's getopt tables of the options of @verb ("record", ...).
 * record, start, stat, show, extract, reset and stop stop at their
 * first operand (what follows is a command, or a mistake); report, list,
 * convert and hist take options after their operands too. */
void opt_init(struct opt_parser *p, const char *verb);

/* The next option of @argv: its letter or OPT_*, with its value in
 * optarg; -1 when there is none more (optind: the first operand); '?'
 * after saying what was wrong (an unknown option, or one without its
 * value). */
int opt_next(struct opt_parser *p, int argc, char **argv);

/* Whether at most @max operands follow the options (argv[optind..]).
 * If more do, says the first one too many ("unexpected argument"), for
 * the verbs whose options end at their first operand with a pointer to
 * their --help (it may be a misplaced option), and returns false. */
bool opt_operands_max(const struct opt_parser *p, int argc, char **argv,
		      int max);

/* -e @arg (@c 'e': a pattern more) or -f @arg (@c 'f': the filter of
 * the last pattern).  Keeps @arg, not a copy.  0, or -1 after saying
 * why (an empty -e, a -f before any -e, out of memory). */
struct opt_rules {
	struct tk_krule *rule;
	unsigned count;
};
int opt_rules_add(struct opt_rules *l, int c, const char *arg);
void opt_rules_free(struct opt_rules *l);

/* -P @arg, a process id; false after saying why. */
bool opt_pid(const char *arg, pid_t *out);

/* A buffer size in KiB of option @opt, from @min to @max; false after
 * saying why, naming @max only if @say_max. */
bool opt_kb(const char *opt, const char *arg, unsigned long min,
	    unsigned long max, bool say_max, uint32_t *out);

/* The user events' buffers, as record sizes them and stat (which
 * records the user events it counts) too: -b, --subbufs, --pool,
 * --block[=MS].  Zeros: not given (buffer_kb 0: OPT_BUFFER_DEFAULT_KB). */
#define OPT_BUFFER_DEFAULT_KB 16384
#define OPT_SUBBUF_DEFAULT_KB 64
#define OPT_BLOCK_DEFAULT_MS 1000
#define OPT_POOL_MAX_KB ((uint32_t)(TK_POOL_MAX >> 10)) /* -b and --pool */
struct opt_buffers {
	uint32_t buffer_kb; /* -b */
	uint32_t nsub;      /* --subbufs */
	uint32_t pool_kb;   /* --pool */
	uint32_t block_ms;  /* --block */
	bool block_bare;    /* --block without =MS */
};
/* Take option @c (its value @arg) into @b if it is one of those: 1, or
 * -1 after saying why its value is wrong; 0 if it is another option. */
int opt_buffers_take(struct opt_buffers *b, int c, const char *arg);
/* Once the options are read (@cmd: the command after them, or NULL):
 * false after saying why they are wrong together ('--block 5 -- prog'
 * would run a command named 5). */
bool opt_buffers_done(const struct opt_buffers *b, char *const *cmd);
/* The lines of -h for them. */
void opt_buffers_usage(FILE *f, bool overwrite);

/* --kernel-buffer (start's -b too): the kernel's buffer per CPU in KiB,
 * 4 KiB to 4 GiB; false after saying why. */
bool opt_kernel_kb(const char *arg, uint32_t *out);
/* Say on stderr what the kernel made of --kernel-buffer @asked (KiB per
 * CPU) when it is not @made: it rounds up to whole pages of events. */
void opt_kernel_kb_made(uint32_t asked, uint32_t made);

/* @s as a decimal number at most @max (no sign, nothing after it). */
bool opt_uint(const char *s, unsigned long max, unsigned long *out);

#endif /* TK_OPTIONS_H */
