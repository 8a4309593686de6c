/* SPDX-License-Identifier: MIT */
/*
 * record-kernel.c - the kernel half of tracekit record.
 *
 * An -e pattern that names events of the program is a user pattern; one
 * that names kernel events (tracefs's list) is a kernel pattern; it can
 * be both.  The kernel's events are recorded in a private instance,
 * "tracekit-<recorder pid>", on the clock the user side stamps with, and
 * its per-CPU pages are spliced into DIR/kernel/ while the user side
 * drains its buffers.  Every way out (end of the command, Ctrl-C,
 * SIGTERM, SIGHUP, an error) passes through record_kernel_free(), which
 * removes the instance, then the dynamic probes the recording defined
 * (uprobe_events, kernel/uprobes.c); a recorder killed with SIGKILL
 * leaves both behind for 'tracekit reset'.
 *
 *   record_kernel_tracer   what a bare -p function means here
 *   record_kernel_lookup   is a pattern a kernel one?
 *   record_kernel_add_probe  a uprobe:, uretprobe: or usdt: -e, resolved
 *   record_kernel_start    instance, formats, capture, tracing on
 *   record_kernel_stop     tracing off, flush, counts, manifest part
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "common/clock.h"
#include "record-functrace.h"
#include "record-kernel.h"
#include "tracekit/runtime.h"

/* Append @from's items to @to; @from is left empty. */
static void move_globs(struct rec_list *to, struct rec_list *from)
{
	for (unsigned i = 0; i < from->count; i++) {
		const char **grown = realloc(to->item, (to->count + 1) * sizeof(*grown));

		if (!grown)
			break;
		to->item = grown;
		to->item[to->count++] = from->item[i];
	}
	free(from->item);
	from->item = NULL;
	from->count = 0;
}

int record_kernel_tracer(struct rec_options *o, const char *program)
{
	if (o->bare_tracer) {
		bool user = program && functrace_program_is_patchable(program);
		const char **slot = user ? &o->user_tracer : &o->kernel_tracer;

		if (*slot && strcmp(*slot, o->bare_tracer)) {
			tk_error("-p '%s': a tracer ('%s') is already chosen there",
				 o->bare_tracer, *slot);
			return -1;
		}
		*slot = o->bare_tracer;
		o->bare_went_kernel = !user && program;
		o->bare_tracer = NULL;
		/* its -l, -n, -g go with it */
		move_globs(user ? &o->func_filter : &o->kernel_funcs.filter,
			   &o->bare_funcs.filter);
		move_globs(user ? &o->func_notrace : &o->kernel_funcs.notrace,
			   &o->bare_funcs.notrace);
		move_globs(user ? &o->graph_funcs : &o->kernel_funcs.graph,
			   &o->bare_funcs.graph);
	}
	return 0;
}

static int open_tracefs(struct record_kernel *rk)
{
	int ret;

	if (rk->fs_open)
		return 0;
	if (rk->fs_errno)
		return -rk->fs_errno;
	ret = tk_tracefs_open(&rk->fs, rk->fs_error, sizeof(rk->fs_error));
	if (ret < 0) {
		rk->fs_errno = -ret;
		return ret;
	}
	rk->fs_open = true;
	ret = tk_kevents_read(&rk->all);
	if (ret < 0) {
		snprintf(rk->fs_error, sizeof(rk->fs_error),
			 "cannot read the kernel's events in '%s': %s", rk->fs.dir,
			 strerror(-ret));
		rk->fs_errno = -ret;
		return ret;
	}
	rk->have_all = true;
	return 0;
}

int record_kernel_lookup(struct record_kernel *rk, const char *pattern)
{
	struct tk_kevents sel;
	int n;

	if (!strcmp(pattern, "all") || open_tracefs(rk) < 0 || !rk->have_all)
		return 0;
	n = tk_kevents_select(&rk->all, pattern, &sel);
	tk_kevents_free(&sel);
	return n > 0 ? n : 0;
}

bool record_kernel_has_system(struct record_kernel *rk, const char *pattern)
{
	char *system = strndup(pattern, strcspn(pattern, ":"));
	bool found = system && *system && record_kernel_lookup(rk, system) > 0;

	free(system);
	return found;
}

const char *record_kernel_closest(struct record_kernel *rk, const char *pattern)
{
	if (!rk->have_all)
		return NULL;
	return tk_closest_name(pattern, (const char *const *)rk->all.name,
			       rk->all.count);
}

int record_kernel_add_rule(struct record_kernel *rk, const struct rec_rule *rule)
{
	struct tk_krule *grown = realloc(rk->rules, (rk->nrules + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	rk->rules = grown;
	rk->rules[rk->nrules].pattern = rule->pattern;
	rk->rules[rk->nrules].filter = rule->filter;
	rk->nrules++;
	return 0;
}

int record_kernel_add_probe(struct record_kernel *rk, const struct rec_rule *rule,
			    const char *program, pid_t pid, bool ustack, bool quiet)
{
	const struct tk_probe_target t = { program, pid, ustack };
	unsigned before = rk->probes.count;
	struct tk_krule *rules;
	const char **filters;
	char note[TK_PROBE_ERR_MAX], err[TK_PROBE_ERR_MAX];
	int n = tk_probes_resolve(rule->pattern, &t, &rk->probes, note, sizeof(note),
				  err, sizeof(err));

	if (n < 0) {
		tk_error("%s", err);
		return -1;
	}
	if (note[0] && !quiet)
		fprintf(stderr, "tracekit: %s\n", note);
	rules = realloc(rk->probe_rules, (rk->nprobe_rules + 1) * sizeof(*rules));
	filters = realloc(rk->probe_filter, (rk->probes.count + 1) * sizeof(*filters));
	if (rules)
		rk->probe_rules = rules;
	if (filters)
		rk->probe_filter = filters;
	if (!rules || !filters) {
		tk_error("out of memory");
		return -1;
	}
	rules[rk->nprobe_rules].pattern = rule->pattern;
	rules[rk->nprobe_rules++].filter = rule->filter;
	for (unsigned i = before; i < rk->probes.count; i++)
		filters[i] = rule->filter;
	return 0;
}

/* Define the probes in the kernel, and a rule for each event, with its
 * -f: they are enabled in the instance like any event. */
/* Probes a killed recorder left stay enabled by its instance: they
 * record into it, and keep the USDT semaphores raised, so that programs
 * run their guarded code.  Say so; reset removes them. */
static void warn_stale_probes(void)
{
	pid_t *owners;
	unsigned n;

	if (tk_uprobe_owners(&owners, &n) < 0)
		return;
	for (unsigned i = 0; i < n; i++) {
		char name[64];

		snprintf(name, sizeof(name), TK_KINSTANCE_PREFIX "-%d", (int)owners[i]);
		if (owners[i] != getpid() && tk_kinstance_is_stale(name))
			tk_warn("the probes of recorder %d, which was killed, are still defined "
				"(groups '" TK_UPROBE_GROUP_PREFIX "%d_*'): 'tracekit reset' removes them",
				(int)owners[i], (int)owners[i]);
	}
	free(owners);
}

static int define_probes(struct record_kernel *rk)
{
	char err[TK_PROBE_ERR_MAX];
	int ret;

	if (!rk->probes.count)
		return 0;
	warn_stale_probes();
	rk->probe_events = calloc(rk->probes.count, sizeof(*rk->probe_events));
	if (!rk->probe_events)
		return -ENOMEM;
	rk->probes_defined = true;
	for (unsigned i = 0; i < rk->probes.count; i++) {
		char name[256];
		bool again = false;

		if (tk_uprobe_define(getpid(), &rk->probes.probe[i], name, sizeof(name),
				     err, sizeof(err)) < 0) {
			tk_error("%s", err);
			return -1;
		}
		rk->probe_events[i] = strdup(name);
		if (!rk->probe_events[i])
			return -ENOMEM;
		/* more sites of one USDT probe: one event */
		for (unsigned j = 0; j < i && !again; j++)
			again = !strcmp(rk->probe_events[j], name);
		if (!again && record_kernel_add_rule(rk, &(struct rec_rule){
				.pattern = rk->probe_events[i],
				.filter = (char *)rk->probe_filter[i] }) < 0)
			return -ENOMEM;
	}
	/* the new events join the list the rules select from */
	tk_kevents_free(&rk->all);
	ret = tk_kevents_read(&rk->all);
	if (ret < 0)
		tk_error("cannot read the kernel's events in '%s': %s", rk->fs.dir,
			 strerror(-ret));
	return ret < 0 ? -1 : 0;
}

/* Remove the recording's probes; the instance must be gone already. */
static int remove_probes(struct record_kernel *rk)
{
	int ret;

	if (!rk->probes_defined)
		return 0;
	ret = tk_uprobes_remove(getpid());
	if (ret < 0) {
		tk_error("cannot remove the probes of group '" TK_UPROBE_GROUP_PREFIX "%d_*': %s ('tracekit reset' removes them)",
			 (int)getpid(), strerror(-ret));
		return -1;
	}
	rk->probes_defined = false;
	return 0;
}

int record_kernel_check(struct record_kernel *rk, const struct rec_options *o)
{
	bool user_lists = o->func_filter.count || o->func_notrace.count ||
			  o->graph_funcs.count;
	bool kernel_lists = o->kernel_funcs.filter.count ||
			    o->kernel_funcs.notrace.count || o->kernel_funcs.graph.count;

	rk->tracer = o->kernel_tracer;
	rk->wanted = rk->nrules || rk->tracer || rk->nprobe_rules;
	if ((o->kernel_stack || o->only_command) && !rk->wanted) {
		tk_error("%s applies to kernel events: give one (-e SYSTEM:EVENT) or a kernel tracer (-p)",
			 o->kernel_stack ? "--stack" : "-F");
		return -1;
	}
	if ((user_lists && !o->user_tracer) || (kernel_lists && !rk->tracer)) {
		tk_error("-l, -n and -g need a function tracer (-p function or -p function_graph)");
		return -1;
	}
	if (rk->wanted && open_tracefs(rk) < 0) {
		tk_error("%s", rk->fs_error);
		return -1;
	}
	return 0;
}

/* Every event the rules name, for saving their formats. */
static int selected_events(struct record_kernel *rk, struct tk_kevents *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < rk->nrules; i++) {
		struct tk_kevents sel;
		char **grown;

		if (tk_kevents_select(&rk->all, rk->rules[i].pattern, &sel) < 0)
			return -ENOMEM;
		grown = realloc(out->name, (out->count + sel.count + 1) * sizeof(*grown));
		if (!grown) {
			tk_kevents_free(&sel);
			return -ENOMEM;
		}
		out->name = grown;
		memcpy(out->name + out->count, sel.name, sel.count * sizeof(*grown));
		out->count += sel.count;
		free(sel.name); /* the names now belong to @out */
	}
	return 0;
}

static char *join_patterns(const struct record_kernel *rk)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	/* the probes' rules (appended last) as the user spelt them */
	for (unsigned i = 0; i < rk->nplain_rules; i++)
		fprintf(f, "%s%s", i ? "," : "", rk->rules[i].pattern);
	for (unsigned i = 0; i < rk->nprobe_rules; i++)
		fprintf(f, "%s%s", i || rk->nplain_rules ? "," : "",
			rk->probe_rules[i].pattern);
	fclose(f);
	return text;
}

static char *join_pids(const pid_t *pids, unsigned n)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", (int)pids[i]);
	fclose(f);
	return text;
}

/* Which pids the kernel's events are limited to: the held command (-F),
 * or every thread of the process (-P). */
static int pid_filter(const struct rec_options *o, pid_t child, pid_t **pids,
		      unsigned *n)
{
	int ret;

	*pids = NULL;
	*n = 0;
	if (o->only_command && child > 0) {
		*pids = malloc(sizeof(**pids));
		if (!*pids)
			return -ENOMEM;
		(*pids)[0] = child;
		*n = 1;
		return 0;
	}
	if (!o->attach_pid)
		return 0;
	ret = tk_pid_threads(o->attach_pid, pids, n);
	if (ret < 0)
		tk_error("no process with pid %d", (int)o->attach_pid);
	return ret;
}

int record_kernel_start(struct record_kernel *rk, const struct rec_options *o,
			const char *dir, pid_t child)
{
	struct tk_trace_kernel *m = &rk->manifest;
	struct tk_kconfig c = { 0 };
	struct tk_kevents formats = { 0 };
	char name[64], err[512] = "", clock[32];
	pid_t *pids = NULL;
	unsigned npids = 0;
	uint32_t page_size = 0;
	int ret;

	if (!rk->wanted) {
		/* --ustack of user events alone: their code's mappings */
		if (o->user_stack &&
		    tk_mmaps_start(child > 0 ? child : o->attach_pid, child > 0, &rk->maps,
				   err, sizeof(err)) < 0) {
			tk_error("%s", err);
			return -1;
		}
		return 0;
	}
	snprintf(name, sizeof(name), TK_KINSTANCE_PREFIX "-%d", (int)getpid());
	if (tk_kinstance_create(&rk->inst, name, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return -1;
	}
	if (pid_filter(o, child, &pids, &npids) < 0)
		goto fail_quiet;
	rk->nplain_rules = rk->nrules;
	ret = define_probes(rk);
	if (ret == -ENOMEM)
		tk_error("out of memory");
	if (ret)
		goto fail_quiet;
	c.clock = o->clock_mono ? TK_KCLOCK_MONO : TK_KINSTANCE_CLOCK;
	c.buffer_kb = o->kernel_buffer_kb;
	c.overwrite = o->overwrite;
	c.rules = rk->rules;
	c.nrules = rk->nrules;
	c.tracer = rk->tracer;
	c.func_filter = o->kernel_funcs.filter.item;
	c.nfunc_filter = o->kernel_funcs.filter.count;
	c.func_notrace = o->kernel_funcs.notrace.item;
	c.nfunc_notrace = o->kernel_funcs.notrace.count;
	c.graph_funcs = o->kernel_funcs.graph.item;
	c.ngraph_funcs = o->kernel_funcs.graph.count;
	c.pids = pids;
	c.npids = npids;
	c.event_fork = npids > 0;
	c.stack = o->kernel_stack;
	c.user_stack = o->user_stack;
	/* the stacks' addresses are named from where the code was mapped */
	if (o->user_stack &&
	    tk_mmaps_start(child > 0 ? child : o->attach_pid, child > 0, &rk->maps, err,
			   sizeof(err)) < 0) {
		tk_error("%s", err);
		goto fail_quiet;
	}
	ret = tk_kinstance_apply(&rk->inst, &rk->all, &c, err, sizeof(err));
	if (!ret)
		ret = selected_events(rk, &formats);
	if (!ret)
		ret = tk_ksave_start(dir, &formats, &page_size, err, sizeof(err));
	tk_kevents_free(&formats);
	if (!ret)
		ret = tk_kcapture_start(&rk->inst, dir, !o->overwrite, &rk->cap, err,
					sizeof(err));
	/* -F: from the command's exec on, not the recorder's code before */
	if (!ret && o->only_command && child > 0)
		ret = tk_kinstance_on_exec(&rk->inst, child, err, sizeof(err));
	else if (!ret && (ret = tk_kinstance_tracing_on(&rk->inst, true)) < 0)
		snprintf(err, sizeof(err), "cannot turn tracing on in instance '%s': %s",
			 name, strerror(-ret));
	if (ret && o->bare_went_kernel && o->argv) {
		/* the user meant the program's functions, most likely */
		tk_error("%s; and '%s' is not built for function tracing: compile it with %s",
			 err[0] ? err : strerror(-ret), o->argv[0],
			 functrace_build_flags());
		goto fail_quiet;
	}
	if (ret) {
		tk_error("%s", err[0] ? err : strerror(-ret));
		goto fail_quiet;
	}
	tk_kinstance_clock(&rk->inst, clock, sizeof(clock));
	m->instance = strdup(name);
	m->clock = strdup(clock);
	m->page_size = page_size;
	m->cpus = (uint32_t)tk_kinstance_cpus(&rk->inst);
	m->buffer_kb = tk_kinstance_buffer_kb(&rk->inst);
	m->tracer = strdup(rk->tracer ? rk->tracer : "nop");
	m->events = join_patterns(rk);
	m->pid_filter = join_pids(pids, npids);
	m->event_fork = npids > 0;
	m->stack = o->kernel_stack;
	free(pids);
	if (!m->instance || !m->clock || !m->tracer || !m->events || !m->pid_filter) {
		tk_error("out of memory");
		return -1;
	}
	return 0;
fail_quiet:
	free(pids);
	tk_mmaps_free(rk->maps);
	rk->maps = NULL;
	tk_kcapture_free(rk->cap);
	rk->cap = NULL;
	tk_kinstance_destroy(&rk->inst);
	remove_probes(rk);
	return -1;
}

/* --ustack: the objects the processes mapped join those whose symbols
 * the trace saves (record-functrace.c saves them). */
static int save_code_maps(struct record_kernel *rk, struct rec_session *s,
			  pid_t alive)
{
	const struct tk_code_map *maps;
	struct tk_sym_module *mods;
	unsigned n, nmods;
	uint64_t lost;
	int ret;

	if (!rk->maps)
		return 0;
	ret = tk_mmaps_stop(rk->maps, alive);
	if (ret < 0) {
		tk_error("cannot read the maps of process %d: %s", (int)alive, strerror(-ret));
		return -1;
	}
	maps = tk_mmaps_list(rk->maps, &n, &lost);
	if (lost)
		tk_warn("%llu code mappings were lost: some user stack frames stay addresses",
			(unsigned long long)lost);
	ret = tk_sym_modules_from_maps(maps, n, &mods, &nmods);
	if (!ret)
		ret = functrace_add_modules(s->functrace, mods, nmods);
	tk_sym_modules_free(mods, nmods);
	if (ret < 0)
		tk_error("out of memory");
	return ret;
}

void record_kernel_name(struct record_kernel *rk, pid_t pid)
{
	if (rk->cap && pid > 0)
		(void)tk_kcomms_read(&rk->comms, (int)pid);
}

bool record_kernel_capturing(const struct record_kernel *rk)
{
	return rk->cap != NULL;
}

void record_kernel_progress(struct record_kernel *rk, const char *dir,
			    uint64_t *events, uint64_t *bytes, uint64_t *lost)
{
	int ncpus = rk->cap ? tk_kinstance_cpus(&rk->inst) : 0;
	char *kdir;
	struct dirent *e;
	DIR *d;

	*events = *bytes = *lost = 0;
	for (int i = 0; i < ncpus; i++) {
		struct tk_kcpu c = { 0 };
		char file[48], *text;

		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", i);
		text = tk_kinstance_file_text(&rk->inst, file);
		if (text && tk_kstats_parse(text, strlen(text), &c) == 0) {
			*events += c.entries;
			*lost += c.overrun + c.dropped;
		}
		free(text);
	}
	if (!rk->cap || asprintf(&kdir, "%s/kernel", dir) < 0)
		return;
	d = opendir(kdir);
	while (d && (e = readdir(d))) {
		struct stat st;

		if (!strncmp(e->d_name, "cpu", 3) &&
		    fstatat(dirfd(d), e->d_name, &st, 0) == 0)
			*bytes += (uint64_t)st.st_size;
	}
	if (d)
		closedir(d);
	free(kdir);
}

int record_kernel_stop(struct record_kernel *rk, struct rec_session *s,
		       const char *dir)
{
	struct tk_trace_kernel *m = &rk->manifest;
	struct tk_kcpu *cpus;
	char err[512] = "";
	unsigned n;
	int ret, failed = 0;

	if (!rk->cap)
		return save_code_maps(rk, s, s->opt->attach_pid);
	record_kernel_name(rk, s->opt->attach_pid);
	tk_kinstance_tracing_on(&rk->inst, false);
	ret = tk_kcapture_stop(rk->cap, err, sizeof(err));
	if (ret) {
		tk_error("%s", err);
		failed = -1;
	}
	cpus = tk_kcapture_cpus(rk->cap, &n);
	ret = tk_ksave_end(&rk->inst, dir, cpus, n, &rk->comms, err, sizeof(err));
	if (ret) {
		tk_error("%s", err);
		failed = -1;
	}
	m->kcpu = calloc(n ? n : 1, sizeof(*m->kcpu));
	if (!m->kcpu) {
		tk_error("out of memory");
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		struct tk_trace_kcpu *k = &m->kcpu[i];

		k->cpu = cpus[i].cpu;
		k->file = strdup(cpus[i].file);
		k->bytes = cpus[i].bytes;
		k->pages = m->page_size ? cpus[i].bytes / m->page_size : 0;
		k->entries = cpus[i].entries;
		k->overrun = cpus[i].overrun;
		k->dropped = cpus[i].dropped;
		m->nkcpu++;
	}
	s->kernel = m;
	if (save_code_maps(rk, s, s->opt->attach_pid) < 0)
		failed = -1;
	/* the files must be closed before the instance can go */
	tk_kcapture_free(rk->cap);
	rk->cap = NULL;
	ret = tk_kinstance_destroy(&rk->inst);
	if (ret < 0) {
		tk_error("cannot remove instance '%s': %s ('tracekit reset -a' removes it)",
			 m->instance, strerror(-ret));
		failed = -1;
	}
	if (remove_probes(rk) < 0)
		failed = -1;
	return failed;
}

void record_kernel_summary(const struct record_kernel *rk, FILE *f)
{
	const struct tk_trace_kernel *m = &rk->manifest;
	uint64_t events = 0, lost = 0, bytes = 0;

	if (!m->kcpu)
		return;
	fprintf(f, "%-24s %8s %12s %12s %12s\n", "KERNEL CPU", "", "EVENTS", "LOST",
		"BYTES");
	for (unsigned i = 0; i < m->nkcpu; i++) {
		const struct tk_trace_kcpu *k = &m->kcpu[i];
		char name[24];

		snprintf(name, sizeof(name), "cpu%u", k->cpu);
		fprintf(f, "%-24s %8s %12llu %12llu %12llu\n", name, "",
			(unsigned long long)k->entries,
			(unsigned long long)(k->overrun + k->dropped),
			(unsigned long long)k->bytes);
		events += k->entries;
		lost += k->overrun + k->dropped;
		bytes += k->bytes;
	}
	fprintf(f, "%-24s %8s %12llu %12llu %12llu\n", "kernel total", "",
		(unsigned long long)events, (unsigned long long)lost,
		(unsigned long long)bytes);
}

void record_kernel_describe(const struct record_kernel *rk, char *out,
			    size_t len)
{
	const struct tk_trace_kernel *m = &rk->manifest;
	uint64_t events = 0, lost = 0;

	out[0] = '\0';
	if (!m->kcpu)
		return;
	for (unsigned i = 0; i < m->nkcpu; i++) {
		events += m->kcpu[i].entries;
		lost += m->kcpu[i].overrun + m->kcpu[i].dropped;
	}
	if (lost)
		snprintf(out, len, "%llu kernel event%s (%llu lost)",
			 (unsigned long long)events, events == 1 ? "" : "s",
			 (unsigned long long)lost);
	else
		snprintf(out, len, "%llu kernel event%s", (unsigned long long)events,
			 events == 1 ? "" : "s");
}

void record_kernel_free(struct record_kernel *rk)
{
	struct tk_trace_kernel *m = &rk->manifest;

	tk_kcapture_free(rk->cap);
	rk->cap = NULL;
	tk_kinstance_destroy(&rk->inst);
	remove_probes(rk);
	tk_mmaps_free(rk->maps);
	tk_kcomms_free(&rk->comms);
	for (unsigned i = 0; rk->probe_events && i < rk->probes.count; i++)
		free(rk->probe_events[i]);
	free(rk->probe_events);
	free(rk->probe_filter);
	free(rk->probe_rules);
	tk_probe_set_free(&rk->probes);
	if (rk->fs_open)
		tk_tracefs_close(&rk->fs);
	rk->fs_open = false;
	tk_kevents_free(&rk->all);
	free(rk->rules);
	for (unsigned i = 0; i < m->nkcpu; i++)
		free(m->kcpu[i].file);
	free(m->kcpu);
	free(m->instance);
	free(m->clock);
	free(m->tracer);
	free(m->events);
	free(m->pid_filter);
	memset(rk, 0, sizeof(*rk));
}
