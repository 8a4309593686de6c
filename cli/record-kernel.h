/* SPDX-License-Identifier: MIT */
/*
 * record-kernel.h - the kernel half of tracekit record: which -e
 * patterns are kernel events, the private instance, its capture, and the
 * kernel part of the trace's manifest and summary.
 */
#ifndef TK_RECORD_KERNEL_H
#define TK_RECORD_KERNEL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "format/probes.h"
#include "kernel/kernel.h"
#include "session.h"

struct record_kernel {
	struct tk_tracefs fs;
	bool fs_open;
	int fs_errno;          /* tk_tracefs_open() failed with it */
	char fs_error[256];
	struct tk_kevents all; /* every kernel event (read once) */
	bool have_all;
	struct tk_krule *rules; /* the kernel's -e patterns and filters */
	unsigned nrules;
	unsigned nplain_rules;  /* of which -e patterns (the probes' follow) */
	/* dynamic probes (uprobe:, uretprobe:, usdt:), their -e and -f */
	struct tk_probe_set probes;
	struct tk_krule *probe_rules;
	unsigned nprobe_rules;
	const char **probe_filter; /* per probe */
	char **probe_events;       /* "group:event" once defined, per probe */
	bool probes_defined;       /* some are in uprobe_events */
	const char *tracer;    /* kernel tracer, or NULL */
	bool wanted;           /* events, a tracer or --stack for the kernel */
	struct tk_kinstance inst;
	struct tk_kcapture *cap;
	struct tk_mmaps *maps;     /* --ustack: the processes' code mappings */
	struct tk_trace_kernel manifest;
	char *pid_text;
	struct tk_kcomms comms; /* the traced pids' comms, read by us */
};

/* Keep @pid's comm, as /proc says it now, for the trace's
 * saved_cmdlines (while capturing; the kernel's own may have lost it). */
void record_kernel_name(struct record_kernel *rk, pid_t pid);

/* Whether kernel pages are being captured (between a successful
 * record_kernel_start and record_kernel_stop). */
bool record_kernel_capturing(const struct record_kernel *rk);
/* The kernel's part so far, for the live line (while capturing): events
 * written to its buffers and events lost (each CPU's stats), bytes of
 * pages written to @dir/kernel. */
void record_kernel_progress(struct record_kernel *rk, const char *dir,
			    uint64_t *events, uint64_t *bytes, uint64_t *lost);

/* Which tracer a bare -p function|function_graph means for @program
 * (user code if it is built for it, else the kernel), then refuse what
 * the kernel side cannot do.  Prints and returns -1 on error. */
int record_kernel_tracer(struct rec_options *o, const char *program);

/* How many kernel events @pattern names (0 when none, or when tracefs
 * cannot be reached: rk->fs_error then says why). */
int record_kernel_lookup(struct record_kernel *rk, const char *pattern);

/* Whether @pattern's system part (before ':', a glob or not) names a
 * system of kernel events. */
bool record_kernel_has_system(struct record_kernel *rk, const char *pattern);

/* The kernel event name closest to @pattern, or NULL. */
const char *record_kernel_closest(struct record_kernel *rk, const char *pattern);

/* Record @rule's events from the kernel (the caller decides whether it
 * stays a user rule too). */
int record_kernel_add_rule(struct record_kernel *rk, const struct rec_rule *rule);

/* Resolve the dynamic probe @rule->pattern (uprobe:, uretprobe:, usdt:)
 * for @program (the command, or NULL) or process @pid, to be defined at
 * the start (@ustack: record --ustack, the probes read their return
 * address where the stack would miss it).  Prints and returns -1 on
 * error. */
int record_kernel_add_probe(struct record_kernel *rk, const struct rec_rule *rule,
			    const char *program, pid_t pid, bool ustack, bool quiet);

/* Settle what the kernel side records once the rules are sorted; checks
 * -F, --stack, -l/-n/-g make sense.  Prints and returns -1 on error. */
int record_kernel_check(struct record_kernel *rk, const struct rec_options *o);

/* Create and set up the instance, save the formats, start the capture,
 * turn tracing on.  @child is the held command (-F) or 0.  Prints and
 * returns -1 on error, after removing the instance. */
int record_kernel_start(struct record_kernel *rk, const struct rec_options *o,
			const char *dir, pid_t child);

/* Tracing off, capture flushed, counts saved; s->kernel points at the
 * manifest part.  Prints and returns -1 on error. */
int record_kernel_stop(struct record_kernel *rk, struct rec_session *s,
		       const char *dir);

/* Per-CPU events, lost, bytes. */
void record_kernel_summary(const struct record_kernel *rk, FILE *f);

/* "N kernel events" (", L lost" when some were), for the summary's last
 * line; empty when nothing was recorded from the kernel. */
void record_kernel_describe(const struct record_kernel *rk, char *out,
			    size_t len);

/* Remove the instance (if any), undo the mount, free everything.  Every
 * path out of record goes through here. */
void record_kernel_free(struct record_kernel *rk);

#endif /* TK_RECORD_KERNEL_H */
