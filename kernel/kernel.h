/* SPDX-License-Identifier: MIT */
/*
 * kernel.h - tracekit's tracefs backend: what the tool uses to reach the
 * kernel's tracing (mounting tracefs, private instances, kernel events,
 * tracers, per-CPU capture).  Built on libtracefs and libtraceevent.
 *
 *   tracefs-mount.c  find tracefs, or mount a private one
 *   events.c         the kernel's event list, patterns, enabling, filters
 *   instance.c       create/open/destroy instances, clock, buffer, options
 *   tracer.c         the tracers, current_tracer, the traceable functions
 *                    and the function filter files
 *   pids.c           set_event_pid and event-fork (-P, -F)
 *   setup.c          a whole configuration applied to an instance at once
 *   capture.c        per-CPU trace_pipe_raw spliced to files
 *   save.c           what a reader needs beside the pages (formats, ...)
 *   kparse.c         the kernel text we parse: stats, error_log entries
 *   uprobes.c        dynamic probes on user code (uprobe_events)
 *   mmaps.c          where traced processes map code (perf mmap events)
 *
 * Only instances are ever written: the top-level buffer and the global
 * settings stay as they are.  Functions return 0 or -errno and never
 * print; where the reason is worth a sentence, they write it into the
 * caller's @err buffer.
 */
#ifndef TK_KERNEL_H
#define TK_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tracefs_instance;

/* ------------------------------------------------------------ tracefs */

/* Where tracefs is, and how we reach it. */
struct tk_tracefs {
	char dir[256];
	bool mounted_by_us; /* a classic mount we undo at close */
	int mount_fd;       /* a private (detached) mount, or -1 */
};

/* Find tracefs; when it is not mounted anywhere, mount a private copy
 * that no other process sees and that goes away with us (a detached
 * mount, reached through /proc/self/fd), or where the kernel lacks that,
 * mount it at /sys/kernel/tracing.  Points libtracefs at it.  Returns 0,
 * or -errno with the reason in @err. */
int tk_tracefs_open(struct tk_tracefs *fs, char *err, size_t errlen);

/* Where tracefs is mounted, into dir[len]: false when it is not (nothing
 * is mounted, unlike tk_tracefs_open). */
bool tk_tracefs_find(char *dir, size_t len);

/* Undo what tk_tracefs_open() mounted.  The kernel's instances and
 * settings stay. */
void tk_tracefs_close(struct tk_tracefs *fs);

/* ------------------------------------------------------------- events */

/* A list of kernel event names, "system:event", sorted. */
struct tk_kevents {
	char **name;
	unsigned count;
};

/* Every event the kernel offers.  Free with tk_kevents_free(). */
int tk_kevents_read(struct tk_kevents *all);

/* The events of @all that @pattern names (tk_pattern_match: "sys:ev",
 * "sys", globs in either part; "all" names none: it means user events).
 * The names in @out are copies.  Returns how many, or -ENOMEM. */
int tk_kevents_select(const struct tk_kevents *all, const char *pattern,
		      struct tk_kevents *out);

void tk_kevents_free(struct tk_kevents *l);

/* ---------------------------------------------------------- instances */

#define TK_KINSTANCE_PREFIX "tracekit"

#define TK_KINSTANCE_NAME_MAX 63

struct tk_kinstance {
	struct tracefs_instance *inst;
	char name[TK_KINSTANCE_NAME_MAX + 1];
};

/* Whether @name can name an instance: NULL if so, else why not (a
 * static string).  The kernel's rules (a directory in tracefs'
 * instances/: not empty, no '/', not "." nor "..") and ours (it fits
 * struct tk_kinstance).  Every verb that takes a name asks here. */
const char *tk_kinstance_name_invalid(const char *name);
/* Create instance @name; -EEXIST if it exists already. */
int tk_kinstance_create(struct tk_kinstance *k, const char *name, char *err,
			size_t errlen);
/* Open the existing instance @name; -ENOENT if there is none. */
int tk_kinstance_open(struct tk_kinstance *k, const char *name, char *err,
		      size_t errlen);
/* Remove the instance from the kernel (its events, tracer, filters and
 * buffers go with it) and free the handle.  Safe on a closed handle. */
int tk_kinstance_destroy(struct tk_kinstance *k);
/* Free the handle, leaving the instance in the kernel. */
void tk_kinstance_close(struct tk_kinstance *k);

int tk_kinstance_set_clock(struct tk_kinstance *k, const char *clock,
			   char *err, size_t errlen);
/* Per-CPU buffer size in KiB (0: leave the kernel's). */
int tk_kinstance_set_buffer_kb(struct tk_kinstance *k, unsigned kb, char *err,
			       size_t errlen);
unsigned tk_kinstance_buffer_kb(struct tk_kinstance *k);
/* An option of the instance's options/ directory (stacktrace, event-fork,
 * overwrite ...). */
int tk_kinstance_set_option(struct tk_kinstance *k, const char *option,
			    bool on, char *err, size_t errlen);
int tk_kinstance_tracing_on(struct tk_kinstance *k, bool on);
/* The instance's current trace_clock, into @out. */
void tk_kinstance_clock(struct tk_kinstance *k, char *out, size_t len);
/* How many per_cpu/cpuN directories the instance has. */
int tk_kinstance_cpus(struct tk_kinstance *k);

/* tk_tracefs_open() then tk_kinstance_open(): what stop, show and reset
 * do first.  On error nothing stays open. */
int tk_kinstance_find(struct tk_tracefs *fs, struct tk_kinstance *k,
		      const char *name, char *err, size_t errlen);

/* Open the instance's 'trace' file for reading: what its buffer holds,
 * as the kernel formats it (reading does not consume).  Returns the file
 * descriptor (the caller closes it) or -errno. */
int tk_kinstance_trace_open(struct tk_kinstance *k);
/* The text of the instance's @file (set_event, tracing_cpumask...)
 * without its trailing newlines and spaces, "" if it cannot be read; a
 * string the caller frees, NULL when out of memory. */
char *tk_kinstance_file_text(struct tk_kinstance *k, const char *file);

/* The top level's trace_options as the kernel writes them, "name" when
 * on and "noname" when off, a line each: a string in *out the caller
 * frees.  Returns 0, or -errno with the reason in @err. */
int tk_koptions_read(char **out, char *err, size_t errlen);

/* Names of the instances that start with TK_KINSTANCE_PREFIX, sorted, in
 * a NULL-terminated array *out (free with tk_kinstance_names_free).
 * Returns 0, or -errno (-EACCES: tracefs's instances/ is not readable). */
int tk_kinstance_names(char ***out);
void tk_kinstance_names_free(char **names);
/* The recorder pid in a name "tracekit-PID", or 0 for other names. */
pid_t tk_kinstance_owner(const char *name);
/* Whether @name is a recorder's instance whose recorder is gone: no
 * process holds its owner's name (see instance.c). */
bool tk_kinstance_is_stale(const char *name);

/* ------------------------------------------------------------ tracers */

/* The tracers the kernel offers in instance @k (NULL: at the top level,
 * where there can be more), with nop, as one space-separated string. */
int tk_ktracers(struct tk_kinstance *k, char *out, size_t len);
/* Call @fn with each line of available_filter_functions (the functions
 * the function tracer can trace: "name" or "name [module]", newline
 * included) whose name matches the fnmatch() @glob (NULL: every one).
 * Returns 0, or -errno with the reason in @err (-EPERM: the kernel does
 * not let tracing list its functions). */
int tk_kfunctions(const char *glob, void (*fn)(const char *line, void *ctx),
		  void *ctx, char *err, size_t errlen);
/* The tracers instance @k (new, tracing off) can run: each one it offers
 * is tried; @usable gets those current_tracer takes (nop first), @refused
 * those it refuses, as "name (why)", both space-separated.  Leaves nop.
 * What list -t says and what record and start accept. */
int tk_ktracers_usable(struct tk_kinstance *k, char *usable, size_t ulen,
		       char *refused, size_t rlen);
/* Set current_tracer; -ENOENT if the kernel does not offer it (the
 * usable and refused ones are in @err), -EPERM if the kernel refuses it. */
int tk_kinstance_set_tracer(struct tk_kinstance *k, const char *tracer,
			    char *err, size_t errlen);
/* Write function globs into @file (set_ftrace_filter, set_ftrace_notrace,
 * set_graph_function) of the instance. */
int tk_kinstance_func_file(struct tk_kinstance *k, const char *file,
			   const char *const *globs, unsigned count, char *err,
			   size_t errlen);

/* --------------------------------------------------------------- pids */

/* The threads of process @pid (/proc/PID/task), into a malloc'd array. */
int tk_pid_threads(pid_t pid, pid_t **tids, unsigned *count);
/* Only these pids' events (set_event_pid), and their children's too when
 * @fork (options/event-fork). */
int tk_kinstance_set_pids(struct tk_kinstance *k, const pid_t *pids,
			  unsigned count, bool fork, char *err, size_t errlen);

/* Turn tracing on in @k when process @pid execs (and leave it as it is
 * until then).  0, or -errno with the reason in @err. */
int tk_kinstance_on_exec(struct tk_kinstance *k, pid_t pid, char *err, size_t errlen);

/* -------------------------------------------------------------- setup */

struct tk_krule {
	const char *pattern;
	const char *filter; /* NULL: none */
};

/* What to set in an instance; see tk_kinstance_apply(). */
struct tk_kconfig {
	const char *clock;      /* trace_clock, NULL: the kernel's default */
	unsigned buffer_kb;     /* per CPU, 0: the kernel's default */
	bool overwrite;         /* keep the newest events when full */
	const struct tk_krule *rules;
	unsigned nrules;
	const char *tracer;     /* NULL: none (nop) */
	const char *const *func_filter;
	unsigned nfunc_filter;
	const char *const *func_notrace;
	unsigned nfunc_notrace;
	const char *const *graph_funcs;
	unsigned ngraph_funcs;
	const pid_t *pids;      /* set_event_pid, none: every process */
	unsigned npids;
	bool event_fork;
	bool stack;             /* options/stacktrace */
	bool user_stack;        /* options/userstacktrace */
};

/* Apply @c to the (new, tracing off) instance, with @all the kernel's
 * events: clock, buffer, options, events and filters, pid filter, tracer
 * last.  Returns 0, or -errno with a one-line reason in @err (a rejected
 * filter: the kernel's error_log message and column). */
int tk_kinstance_apply(struct tk_kinstance *k, const struct tk_kevents *all,
		       const struct tk_kconfig *c, char *err, size_t errlen);

/* ------------------------------------------------------------ capture */

/* One CPU's raw pages on disk, and the kernel's counts at the end. */
struct tk_kcpu {
	unsigned cpu;
	char file[32];     /* relative to the trace directory */
	uint64_t bytes;    /* written to file */
	uint64_t entries;  /* events in the file (stats: read + left, less
			    * read_before) */
	uint64_t read_before; /* read out before the capture began (by a
			       * recorder killed, an earlier extract) */
	uint64_t overrun;  /* overwritten by the kernel (overwrite mode) */
	uint64_t dropped;  /* not written for lack of space (discard mode) */
};

struct tk_kcapture;

/* Start moving each CPU's trace_pipe_raw into @dir/kernel/cpuN.raw, one
 * thread per CPU, with splice.  With @live false, nothing moves until
 * tk_kcapture_stop() (flight recorder).  Returns 0 or -errno with @err. */
int tk_kcapture_start(struct tk_kinstance *k, const char *dir, bool live,
		      struct tk_kcapture **out, char *err, size_t errlen);
/* Tracing must be off: move everything left, partial pages included, and
 * stop the threads.  Returns 0 or the first write error (-errno, @err). */
int tk_kcapture_stop(struct tk_kcapture *c, char *err, size_t errlen);
/* Per-CPU results (valid after stop; counts come from tk_ksave_end). */
struct tk_kcpu *tk_kcapture_cpus(struct tk_kcapture *c, unsigned *count);
/* Close the files and free; the instance can then be destroyed. */
void tk_kcapture_free(struct tk_kcapture *c);

/* --------------------------------------------------------------- save */

/* Save into @dir/kernel/ what decoding needs and is known at the start:
 * header_page, header_event, the format of each event in @events and of
 * every ftrace event, kallsyms, printk_formats.  *page_size gets the
 * ring buffer's page size. */
int tk_ksave_start(const char *dir, const struct tk_kevents *events,
		   uint32_t *page_size, char *err, size_t errlen);
/* Comms the recorder read itself (/proc/PID/comm), for the pids the
 * kernel's saved_cmdlines may have lost: it keeps 128 by default, and a
 * busy machine pushes a traced program's out in a second. */
struct tk_kcomm {
	int pid;
	char comm[17];
};
struct tk_kcomms {
	struct tk_kcomm *e;
	unsigned n, cap;
};
/* Read /proc/@pid/comm into @t (the last read wins); false if it could
 * not be read (the process is gone). */
bool tk_kcomms_read(struct tk_kcomms *t, int pid);
void tk_kcomms_free(struct tk_kcomms *t);

/* Save saved_cmdlines, with the pids of @seen (may be NULL) it does not
 * name, and each CPU's stats; fill the counts of @cpus. */
int tk_ksave_end(struct tk_kinstance *k, const char *dir, struct tk_kcpu *cpus,
		 unsigned count, const struct tk_kcomms *seen, char *err,
		 size_t errlen);

/* ------------------------------------------------------------ uprobes */

struct tk_probe;

/* Our probes' groups are "tracekit_<recorder pid>_<kind>". */
#define TK_UPROBE_GROUP_PREFIX "tracekit_"

/* Define @p (format/probes.h) in uprobe_events, in @owner's group for its
 * kind; *name gets "group:event".  Returns 0, or -errno with the
 * kernel's reason in @err. */
int tk_uprobe_define(pid_t owner, const struct tk_probe *p, char *name,
		     size_t namelen, char *err, size_t errlen);
/* Remove every probe of @owner's groups; no instance may enable them
 * still.  Returns 0 or the first failure (-errno). */
int tk_uprobes_remove(pid_t owner);
/* The pids owning probe groups of ours, into a malloc'd array. */
int tk_uprobe_owners(pid_t **owners, unsigned *count);
/* "uprobe", "uretprobe" or "usdt" for a group of ours (the system a
 * trace saves its events under), else NULL. */
const char *tk_uprobe_kind_of(const char *group);

/* -------------------------------------------------------------- mmaps */

struct tk_code_map; /* format/symbols.h */
struct tk_mmaps;

/* Follow the executable mappings of process @pid and its children to
 * come: from its exec on (@from_exec: a command held before exec), or
 * from now on with those it has (read from /proc).  Returns 0 or -errno
 * with @err. */
int tk_mmaps_start(pid_t pid, bool from_exec, struct tk_mmaps **out, char *err,
		   size_t errlen);
/* Stop following; with @alive (-P), read that process's maps once more. */
int tk_mmaps_stop(struct tk_mmaps *m, pid_t alive);
/* What was seen (valid until tk_mmaps_free); *lost: records the kernel
 * could not write (its buffer was full). */
const struct tk_code_map *tk_mmaps_list(const struct tk_mmaps *m, unsigned *count,
					uint64_t *lost);
void tk_mmaps_free(struct tk_mmaps *m);

/* ------------------------------------------------------------ parsing */

/* Parse a per_cpu/cpuN/stats text into @cpu's counts (unknown lines are
 * skipped).  Returns 0, or -EINVAL when a needed line is missing. */
int tk_kstats_parse(const char *text, size_t len, struct tk_kcpu *cpu);

/* One line for a filter the kernel refused, from its error_log entry
 * @log (may be NULL or anything): "bad filter 'F' for 'EVENT' at column
 * N: MESSAGE", or with strerror(@e) when the log says nothing usable. */
void tk_kerror_filter(const char *log, const char *event, const char *filter,
		      int e, char *err, size_t errlen);

/* The kernel's reason for refusing a write, from error_log's last entry
 * @after, into @why ("Failed to find the given file"): only when it is
 * an entry that was not the last one before the write (@before; either
 * may be NULL): an older entry, another writer's or a recorder's of long
 * ago, says nothing of this write.  Returns whether @why was set. */
bool tk_kerror_new(const char *before, const char *after, char *why, size_t len);

#endif /* TK_KERNEL_H */
