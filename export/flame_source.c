/* SPDX-License-Identifier: MIT */
/*
 * flame_source.c - a flame tree (flame.h) from a trace's events, for the
 * formats that draw one (folded, svg).
 *
 * Two trees are filled in the same walk:
 *   graph    function_graph calls, each adding its self time (ns; the
 *            time in calls it made is its children's) or, with --calls,
 *            1 to its stack.  Self time is wall-clock time: it includes
 *            the time the thread was off a CPU (asleep, blocked, waiting
 *            to run) inside the call.  With --on-cpu that time is taken
 *            out: a thread's sched_switch away from its CPU and the one
 *            back (an event of the task it replaces, so read before the
 *            selection: kernel_any) bound a time off CPU, which belongs to
 *            the call innermost then (calls.h: off_cpu_ns); when the
 *            switch back in is missing, the thread's next event ends it
 *   stacks   stacks recorded with events, 1 each: the function tracer's
 *            ftrace:user_stack (--func-stack: the callers of the function
 *            just entered, innermost first) and the kernel's
 *            ftrace:kernel_stack (--stack) and ftrace:user_stack (--ustack:
 *            a thread's user stack with a kernel event, named from the
 *            trace's symbols as the function tracer's addresses are), and
 *            ftrace:event_stack (--ustack with user events); the last two
 *            are frame-pointer walks, cut where they stop being the
 *            stack (format/ustack-check.h)
 * The graph is written when it has any call and --stacks was not given,
 * else the stacks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include "calls.h"
#include "flame.h"
#include "format/probes.h"
#include "format/ustack-check.h"

#define MAX_FRAMES 256

struct tk_flame_source {
	struct tk_flame graph, stacks;
	struct tk_export *x;
	struct tk_calls *calls;
	uint64_t *last_func; /* per stream: the function last entered */
	struct tk_ustack_check *check;
	int kstack_id;       /* ftrace:kernel_stack's id, -1 if none */
	unsigned kstack_size_off, kstack_caller_off;
	int ustack_id;       /* ftrace:user_stack's (kernel's) id, -1 if none */
	unsigned ustack_tgid_off, ustack_caller_off;
	uint64_t *caller;    /* per kernel CPU: the last event's __caller */
	int *caller_off;     /* per kernel event id: its __caller field, -1 none,
			      * -2 not looked up yet */
	unsigned nids;
	uint64_t ncalls;
	/* --on-cpu */
	int switch_id;       /* sched:sched_switch's id */
	unsigned prev_pid_off, next_pid_off;
	struct tid_stream *by_tid; /* streams by thread id */
	unsigned nby_tid;
	uint64_t *off_since; /* per stream: switched out at, 0 when on a CPU */
	uint64_t switches;   /* of threads with streams */
	uint64_t unseen_in;  /* switches back in missing from the trace */
};

struct tid_stream {
	int32_t tid;
	unsigned stream;
};

/* A function name as a frame: ';' separates frames in folded stacks. */
static const char *frame(char *buf, size_t len, const char *name)
{
	if (!strpbrk(name, ";\n"))
		return name;
	snprintf(buf, len, "%s", name);
	for (char *p = buf; *p; p++)
		if (*p == ';' || *p == '\n')
			*p = *p == ';' ? ':' : ' ';
	return buf;
}

static int graph_closed(void *ctx, const struct tk_trace_stream *s,
			const struct tk_call *c, uint64_t end, bool finished)
{
	struct tk_flame_source *fs = ctx;
	uint32_t node = (uint32_t)(uintptr_t)c->user;
	uint64_t self;

	(void)s;
	(void)finished;
	if (!node)
		return 0;
	tk_calls_ns(fs->calls, c, end, &self);
	if (fs->x->opts->on_cpu)
		self = self > c->off_cpu_ns ? self - c->off_cpu_ns : 0;
	tk_flame_add(&fs->graph, node, fs->x->opts->weight_calls ? 1 : self);
	return 0;
}

static int tid_cmp(const void *a, const void *b)
{
	const struct tid_stream *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->stream > y->stream) - (x->stream < y->stream);
}

/* --on-cpu: sched_switch's fields, and the streams by thread. */
static int on_cpu_begin(struct tk_flame_source *fs)
{
	struct tk_export *x = fs->x;
	const struct tk_trace *t = x->trace;
	struct tep_event *ev = x->kernel ? tep_find_event_by_name(x->kernel->tep, "sched",
								   "sched_switch") : NULL;
	struct tep_format_field *prev = ev ? tep_find_field(ev, "prev_pid") : NULL;
	struct tep_format_field *next = ev ? tep_find_field(ev, "next_pid") : NULL;

	if (!prev || !next || prev->size != 4 || next->size != 4)
		return tk_export_error(x, "--on-cpu: trace '%s' has no sched:sched_switch events "
				       "(record them with -e sched:sched_switch)", x->trace->dir);
	fs->switch_id = ev->id;
	fs->prev_pid_off = (unsigned)prev->offset;
	fs->next_pid_off = (unsigned)next->offset;
	fs->by_tid = calloc(t->nstreams + 1, sizeof(*fs->by_tid));
	fs->off_since = calloc(t->nstreams + 1, sizeof(*fs->off_since));
	if (!fs->by_tid || !fs->off_since)
		return tk_export_error(x, "out of memory");
	for (unsigned i = 0; i < t->nstreams; i++)
		fs->by_tid[i] = (struct tid_stream){ (int32_t)t->streams[i].tid, i };
	fs->nby_tid = t->nstreams;
	qsort(fs->by_tid, fs->nby_tid, sizeof(*fs->by_tid), tid_cmp);
	fs->graph.weighs = "self time on a CPU";
	return 0;
}

/* The first of the streams of thread @tid in by_tid, or nby_tid. */
static unsigned streams_of(const struct tk_flame_source *fs, int32_t tid)
{
	unsigned lo = 0, hi = fs->nby_tid;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (fs->by_tid[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Stream @s's thread is back on a CPU at @ts: its time off CPU goes to
 * its innermost call. */
static void back_on_cpu(struct tk_flame_source *fs, unsigned s, uint64_t ts)
{
	struct tk_export *x = fs->x;
	struct tk_call *top = tk_calls_top(fs->calls, &x->trace->streams[s]);

	if (top && fs->off_since[s] && ts > fs->off_since[s])
		top->off_cpu_ns += tk_export_ns(x, ts) - tk_export_ns(x, fs->off_since[s]);
	fs->off_since[s] = 0;
}

int tk_flame_source_kernel_any(struct tk_export *x, struct tk_kernel_cpu *c)
{
	struct tk_flame_source *fs = x->priv;
	int32_t prev, next;

	if (!x->opts->on_cpu || c->data_size < 2 ||
	    tk_kernel_event_id(x->kernel, c->data) != fs->switch_id ||
	    c->data_size < fs->prev_pid_off + 4 || c->data_size < fs->next_pid_off + 4)
		return 0;
	memcpy(&prev, c->data + fs->prev_pid_off, 4);
	memcpy(&next, c->data + fs->next_pid_off, 4);
	for (unsigned i = streams_of(fs, prev); i < fs->nby_tid && fs->by_tid[i].tid == prev; i++) {
		if (!fs->off_since[fs->by_tid[i].stream])
			fs->off_since[fs->by_tid[i].stream] = c->ts;
		fs->switches++;
	}
	for (unsigned i = streams_of(fs, next); i < fs->nby_tid && fs->by_tid[i].tid == next; i++) {
		back_on_cpu(fs, fs->by_tid[i].stream, c->ts);
		fs->switches++;
	}
	return 0;
}

int tk_flame_source_begin(struct tk_export *x)
{
	struct tk_flame_source *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return tk_export_error(x, "out of memory");
	x->priv = fs;
	fs->x = x;
	fs->kstack_id = -1;
	fs->ustack_id = -1;
	if (tk_flame_init(&fs->graph) < 0 || tk_flame_init(&fs->stacks) < 0)
		return tk_export_error(x, "out of memory");
	fs->graph.unit = x->opts->weight_calls ? "calls" : "ns";
	fs->graph.weighs = x->opts->weight_calls ? "calls" : "wall-clock self time";
	fs->stacks.unit = "samples";
	fs->stacks.weighs = "samples";
	fs->calls = tk_calls_new(x->trace, NULL, graph_closed, fs);
	fs->last_func = calloc(x->trace->nstreams + 1, sizeof(*fs->last_func));
	if (fs->calls)
		fs->check = tk_ustack_check_new(tk_calls_symbols(fs->calls));
	if (!fs->calls || !fs->last_func || !fs->check)
		return tk_export_error(x, "out of memory");
	if (x->kernel) {
		struct tep_event *ev = tep_find_event_by_name(x->kernel->tep, "ftrace",
							       "kernel_stack");
		struct tep_format_field *size = ev ? tep_find_field(ev, "size") : NULL;
		struct tep_format_field *caller = ev ? tep_find_field(ev, "caller") : NULL;

		struct tep_event *uev = tep_find_event_by_name(x->kernel->tep, "ftrace",
								"user_stack");
		struct tep_format_field *tgid = uev ? tep_find_field(uev, "tgid") : NULL;
		struct tep_format_field *ucaller = uev ? tep_find_field(uev, "caller") : NULL;

		if (size && caller && size->size == 4 && caller->offset >= 0) {
			fs->kstack_id = ev->id;
			fs->kstack_size_off = (unsigned)size->offset;
			fs->kstack_caller_off = (unsigned)caller->offset;
		}
		if (tgid && ucaller && tgid->size == 4 && tgid->offset >= 0 &&
		    ucaller->offset >= 0) {
			fs->ustack_id = uev->id;
			fs->ustack_tgid_off = (unsigned)tgid->offset;
			fs->ustack_caller_off = (unsigned)ucaller->offset;
		}
		fs->caller = calloc(x->kernel->ncpus + 1, sizeof(*fs->caller));
		if (!fs->caller)
			return tk_export_error(x, "out of memory");
	}
	return x->opts->on_cpu ? on_cpu_begin(fs) : 0;
}

/* Add the stack names[n-1] (outermost) .. names[0] to the stacks tree. */
static int add_stack(struct tk_flame_source *fs, const char *const *names,
		     unsigned n)
{
	uint32_t node = TK_FLAME_ROOT;
	char buf[512];

	for (unsigned i = n; i-- > 0;) {
		node = tk_flame_child(&fs->stacks, node, frame(buf, sizeof(buf), names[i]));
		if (!node)
			return tk_export_error(fs->x, "out of memory");
	}
	if (n)
		tk_flame_add(&fs->stacks, node, 1);
	return 0;
}

/* --func-stack: the callers of the function last entered on the stream */
static int user_stack(struct tk_flame_source *fs, const struct tk_stream_reader *rd)
{
	const struct tk_value *v = &rd->values[0];
	uint64_t func = fs->last_func[rd->stream - fs->x->trace->streams];
	uint32_t pid = rd->stream->pid;
	char *copies[MAX_FRAMES + 1];
	const char *names[MAX_FRAMES + 1];
	unsigned n = 0;
	int ret;

	if (!func)
		return 0;
	/* names may share the calls' number buffer: keep copies */
	copies[n] = strdup(tk_calls_name(fs->calls, pid, func));
	names[n] = copies[n];
	n++;
	for (uint32_t i = 0; i + 8 <= v->len && n <= MAX_FRAMES; i += 8) {
		uint64_t a;

		memcpy(&a, v->str + i, 8);
		copies[n] = strdup(tk_calls_caller(fs->calls, pid, a));
		names[n] = copies[n];
		n++;
	}
	for (unsigned i = 0; i < n; i++)
		if (!copies[i]) {
			n = i;
			break;
		}
	ret = add_stack(fs, names, n);
	for (unsigned i = 0; i < n; i++)
		free(copies[i]);
	return ret;
}

/* A frame-pointer walk of process @pid, as much of it as is the stack
 * (format/ustack-check.h); @first_is_pc: the kernel's, with @caller the
 * return address its event's probe read (0: none). */
static int walked_stack(struct tk_flame_source *fs, uint32_t pid, const uint64_t *got,
			unsigned n, bool first_is_pc, uint64_t caller)
{
	char *copies[MAX_FRAMES] = { NULL };
	uint64_t addr[MAX_FRAMES];
	unsigned k = 0;
	int ret;

	if (first_is_pc) {
		n = tk_ustack_with_caller(fs->check, pid, got, n, caller, addr, MAX_FRAMES);
	} else {
		memcpy(addr, got, n * sizeof(*addr));
		n = tk_ustack_trusted(fs->check, pid, addr, n, false);
	}
	for (; k < n; k++) {
		/* names may share the calls' number buffer: keep copies; a
		 * pc is where the thread is (a probe on a function's first
		 * byte), a return address is after its call */
		copies[k] = strdup(k == 0 && first_is_pc ? tk_calls_name(fs->calls, pid, addr[k])
						       : tk_calls_caller(fs->calls, pid, addr[k]));
		if (!copies[k])
			break;
	}
	ret = add_stack(fs, (const char *const *)copies, k);
	for (unsigned i = 0; i < k; i++)
		free(copies[i]);
	return ret;
}

/* --ustack with user events: the runtime's walk, from the event's call */
static int event_stack(struct tk_flame_source *fs, const struct tk_stream_reader *rd)
{
	const struct tk_value *v = &rd->values[0];
	uint64_t addr[MAX_FRAMES];
	unsigned n = 0;

	for (uint32_t i = 0; i + 8 <= v->len && n < MAX_FRAMES; i += 8)
		memcpy(&addr[n++], v->str + i, 8);
	return walked_stack(fs, rd->stream->pid, addr, n, false, 0);
}

int tk_flame_source_user(struct tk_export *x, struct tk_stream_reader *rd)
{
	struct tk_flame_source *fs = x->priv;
	enum tk_ft_kind k = tk_calls_kind(fs->calls, rd->event);
	unsigned si = (unsigned)(rd->stream - x->trace->streams);
	const struct tk_call *open;
	struct tk_call *c;
	unsigned n;
	char buf[512];

	/* an event of a thread switched out: its switch back in was not
	 * recorded (this kernel sometimes leaves one out); it ran by now */
	if (fs->off_since && fs->off_since[si]) {
		back_on_cpu(fs, si, rd->ts);
		fs->unseen_in++;
	}

	switch (k) {
	case TK_FT_ENTRY:
		fs->last_func[rd->stream - x->trace->streams] = rd->values[0].u;
		c = tk_calls_entry(fs->calls, rd);
		if (!c)
			return tk_export_error(x, "out of memory");
		open = tk_calls_open(fs->calls, rd->stream, &n);
		c->user = (void *)(uintptr_t)tk_flame_child(
			&fs->graph, n > 1 ? (uint32_t)(uintptr_t)open[n - 2].user : TK_FLAME_ROOT,
			frame(buf, sizeof(buf),
			      tk_calls_name(fs->calls, rd->stream->pid, rd->values[0].u)));
		fs->ncalls++;
		return c->user ? 0 : tk_export_error(x, "out of memory");
	case TK_FT_EXIT:
		return tk_calls_exit(fs->calls, rd);
	case TK_FT_FUNCTION:
		fs->last_func[rd->stream - x->trace->streams] = rd->values[0].u;
		break;
	case TK_FT_STACK:
		return user_stack(fs, rd);
	case TK_FT_EVENT_STACK:
		return event_stack(fs, rd);
	default:
		break;
	}
	tk_calls_seen(fs->calls, rd->stream, rd->ts);
	return 0;
}

/* --ustack: the thread's return addresses, innermost first, until 0 */
static int kernel_user_stack(struct tk_flame_source *fs, const struct tk_kernel_cpu *c,
			     uint64_t caller)
{
	unsigned max = (c->data_size - fs->ustack_caller_off) / 8, n = 0;
	uint64_t addr[MAX_FRAMES];
	uint32_t tgid;

	memcpy(&tgid, c->data + fs->ustack_tgid_off, 4);
	while (n < max && n < MAX_FRAMES) {
		memcpy(&addr[n], c->data + fs->ustack_caller_off + 8 * n, 8);
		if (addr[n] == 0 || addr[n] == ~0ull)
			break;
		n++;
	}
	return walked_stack(fs, tgid, addr, n, true, caller);
}


/* The __caller field (format/probes.h) of kernel event @c (id @id) into
 * *out, 0 if it has none: the user stack that follows misses it. */
static void note_caller(struct tk_flame_source *fs, const struct tk_kernel *k,
			const struct tk_kernel_cpu *c, int id, uint64_t *out)
{
	*out = 0;
	if (id < 0 || id >= 65536)
		return;
	if ((unsigned)id >= fs->nids) {
		unsigned n = (unsigned)id + 64;
		int *grown = realloc(fs->caller_off, n * sizeof(*grown));

		if (!grown)
			return;
		for (unsigned i = fs->nids; i < n; i++)
			grown[i] = -2;
		fs->caller_off = grown;
		fs->nids = n;
	}
	if (fs->caller_off[id] == -2) {
		struct tep_event *e = tep_find_event(k->tep, id);
		struct tep_format_field *f = e ? tep_find_field(e, TK_PROBE_CALLER_FIELD) : NULL;

		fs->caller_off[id] = f && f->size == 8 && f->offset >= 0 ? f->offset : -1;
	}
	if (fs->caller_off[id] >= 0 && (unsigned)fs->caller_off[id] + 8 <= c->data_size)
		memcpy(out, c->data + fs->caller_off[id], 8);
}

int tk_flame_source_kernel(struct tk_export *x, struct tk_kernel_cpu *c)
{
	struct tk_flame_source *fs = x->priv;
	const char *names[MAX_FRAMES];
	char nums[MAX_FRAMES][20];
	unsigned max, n = 0;
	int32_t count;

	int id = tk_kernel_event_id(x->kernel, c->data);
	unsigned cpu = (unsigned)(c - x->kernel->cpus);

	if (fs->ustack_id >= 0 && id == fs->ustack_id && c->data_size >= fs->ustack_caller_off)
		return kernel_user_stack(fs, c, fs->caller[cpu]);
	if (id != fs->kstack_id)
		note_caller(fs, x->kernel, c, id, &fs->caller[cpu]);
	if (fs->kstack_id < 0 || id != fs->kstack_id || c->data_size < fs->kstack_caller_off)
		return 0;
	if (!x->kernel->symbols_loaded)
		tk_kernel_load_symbols(x->kernel);
	max = (c->data_size - fs->kstack_caller_off) / 8;
	memcpy(&count, c->data + fs->kstack_size_off, 4);
	if (count >= 0 && (unsigned)count < max)
		max = (unsigned)count;
	for (unsigned i = 0; i < max && n < MAX_FRAMES; i++) {
		uint64_t addr;
		const char *name;

		memcpy(&addr, c->data + fs->kstack_caller_off + 8 * i, 8);
		if (addr == 0 || addr == ~0ull)
			break;
		name = tep_find_function(x->kernel->tep, addr);
		if (!name) {
			snprintf(nums[n], sizeof(nums[n]), "0x%" PRIx64, addr);
			name = nums[n];
		}
		names[n++] = name;
	}
	return add_stack(fs, names, n);
}

struct tk_flame *tk_flame_source_end(struct tk_export *x)
{
	struct tk_flame_source *fs = x->priv;
	struct tk_flame *f;

	if (tk_calls_finish(fs->calls) < 0)
		return NULL;
	f = fs->ncalls && !x->opts->stacks ? &fs->graph : &fs->stacks;
	if (x->opts->on_cpu && f == &fs->graph && !fs->switches)
		tk_export_warn(x, "--on-cpu: no sched_switch of a traced thread was read: "
			       "the weights are wall-clock times");
	if (x->opts->on_cpu && f == &fs->graph && fs->unseen_in)
		tk_export_warn(x, "--on-cpu: %" PRIu64 " switches of a thread back onto a CPU "
			       "are not in the trace: those times off CPU end at the "
			       "thread's next event", fs->unseen_in);
	if (tk_flame_sort(f) < 0) {
		tk_export_error(x, "out of memory");
		return NULL;
	}
	/* an empty graph is no answer: say why, and write nothing */
	if (!f->node[TK_FLAME_ROOT].total) {
		tk_export_error(x, "nothing to fold in trace '%s': %s", x->trace->dir,
				x->opts->stacks ? "no stack was recorded with the events read "
						  "(record --ustack, --stack or --func-stack)"
				: f == &fs->graph ? "the function_graph calls read weigh nothing"
						  : "no stack and no function_graph call in the "
						    "events read");
		return NULL;
	}
	return f;
}

void tk_flame_source_free(struct tk_export *x)
{
	struct tk_flame_source *fs = x->priv;

	if (!fs)
		return;
	tk_ustack_check_free(fs->check);
	tk_calls_free(fs->calls);
	tk_flame_free(&fs->graph);
	tk_flame_free(&fs->stacks);
	free(fs->last_func);
	free(fs->caller);
	free(fs->caller_off);
	free(fs->by_tid);
	free(fs->off_since);
	free(fs);
	x->priv = NULL;
}
