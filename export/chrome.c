/* SPDX-License-Identifier: MIT */
/*
 * chrome.c - `convert --to chrome`: the Trace Event Format (JSON) that
 * Perfetto UI, chrome://tracing and speedscope open.
 *
 *   {"traceEvents":[
 *   {"ph":"M","pid":42,"tid":42,"name":"process_name","args":{"name":"app"}},
 *   {"ph":"X","pid":42,"tid":43,"ts":5123456.789,"dur":1.250,"name":"leaf","cat":"function_graph"},
 *   ...],
 *   "displayTimeUnit":"ns","otherData":{...}}
 *
 * What goes where, per thread TID of process PID (ts and dur in
 * microseconds of CLOCK_MONOTONIC with nanosecond decimals, one timeline
 * for user and kernel events since both are stamped by one clock):
 *
 *   track (PID, TID)          function_graph calls as complete ("X")
 *                             slices (calls.h: how calls that did not
 *                             return end; their category says
 *                             "unfinished"); -p function entries, user
 *                             events and other kernel events as instants
 *                             ("i", their fields as args); system calls
 *                             (sys_enter_X .. sys_exit_X) as slices;
 *                             each with the CPU it ran on as the arg
 *                             "common_cpu" (where a call began, for a
 *                             system call), as report prints it
 *   track (PID, TID|1<<30)    "TID sched": the thread's scheduling states
 *                             from sched_switch/sched_wakeup as slices:
 *                             running (args: cpu), runnable, sleeping,
 *                             uninterruptible...; a flow arrow ("s"/"f")
 *                             from each wakeup (an instant "wakeup" in
 *                             the waker's running slice) to the woken
 *                             thread's next run
 *   track (PID, TID|1<<29)    "TID lost": events the thread lost, as
 *                             slices named "lost N events" over the time
 *                             where they were lost (between the last event
 *                             seen before and the first after)
 *   track (0, CPU)            process "kernel": events of the idle task
 *                             and the ranges where each CPU lost events
 *
 * Scheduling slices and lost ranges have tracks of their own so that they
 * never cross the function calls' nesting (a call can span many runs of
 * its thread; calls its lost exits left unfinished end by the next event,
 * inside a lost range).
 * Slices are written when they end, so the array is not sorted by ts: the
 * format does not ask for it and viewers sort.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <event-parse.h>
#include "calls.h"
#include "export.h"

#define SCHED_TRACK (1u << 30) /* tids are below 2^22 (pid_max) */
#define LOST_TRACK (1u << 29)

enum tstate { T_UNKNOWN, T_RUNNING, T_WAITING, T_EXITED };

/* A thread seen in user streams or kernel events. */
struct thread {
	uint32_t tid, pid;
	bool named, sched_named, lost_named, proc_named;
	bool traced; /* its scheduling is recorded (see chrome.filtered) */
	/* scheduling */
	enum tstate state;
	const char *wait_name; /* T_WAITING: runnable, sleeping... */
	uint64_t since;
	uint32_t cpu;
	/* the wakeup whose arrow waits for the next run (waker NULL: none);
	 * waker_tid is the task that woke it (0: the idle task, an
	 * interrupt), which may have no track of its own (record -F) */
	struct thread *waker;
	uint32_t waker_tid;
	uint64_t woken_at;
	/* the open system call */
	const struct kev *sys;
	uint64_t sys_ts;
	uint32_t sys_cpu;
	uint64_t sys_args[6];
};

enum krole { K_OTHER, K_SWITCH, K_WAKEUP, K_SYS_ENTER, K_SYS_EXIT, K_STACK };

/* A kernel event type, looked at once. */
struct kev {
	struct tep_event *ev;
	enum krole role;
	char *name;       /* "system:event" as JSON, quoted */
	const char *sys;  /* K_SYS_*: the call's name ("write") */
	size_t sys_len;
	struct tep_format_field *f[6]; /* role's fields, or sys_enter's args */
	unsigned nf;
	struct tep_format_field **args; /* K_OTHER: the fields */
};

/* A user event type (tk_event_info.user). */
struct uev {
	enum tk_ft_kind kind;
	char *head; /* ,"name":"app:req","cat":"app" */
	size_t head_len;
};

struct chrome {
	struct tk_export *x;
	struct tk_calls *calls;
	uint64_t nevents; /* written to the array */
	uint64_t flows;
	struct thread **threads; /* each allocated alone: pointers stay valid */
	unsigned nthreads, cap;
	unsigned *hash; /* tid -> index + 1, open addressing */
	unsigned hash_size;
	struct kev *kevs; /* by kernel event id */
	unsigned nkevs;
	bool *cpu_named;
	bool kernel_named;
	/* The kernel events were recorded for some pids only (-F, -P): the
	 * kernel then records a sched_switch or a wakeup when either side
	 * is one of them, so other tasks are seen only in part: only the
	 * traced threads get scheduling slices.  Traced: the user streams'
	 * threads, the pids filtered, and the tasks of other kernel events
	 * (system calls...: those are recorded for the pids only). */
	bool filtered;
	struct uev **uevs; /* to free */
	unsigned nuevs;
	int pid_off, pid_size;
};

/* ---- threads ---- */

static struct thread *thread_find(struct chrome *ch, uint32_t tid)
{
	unsigned mask = ch->hash_size - 1, h = (tid * 0x9e3779b1u) & mask;

	for (;; h = (h + 1) & mask) {
		unsigned i = ch->hash[h];

		if (!i)
			return NULL;
		if (ch->threads[i - 1]->tid == tid)
			return ch->threads[i - 1];
	}
}

static int rehash(struct chrome *ch, unsigned size)
{
	unsigned *h = calloc(size, sizeof(*h));

	if (!h)
		return -ENOMEM;
	free(ch->hash);
	ch->hash = h;
	ch->hash_size = size;
	for (unsigned i = 0; i < ch->nthreads; i++) {
		unsigned k = (ch->threads[i]->tid * 0x9e3779b1u) & (size - 1);

		while (h[k])
			k = (k + 1) & (size - 1);
		h[k] = i + 1;
	}
	return 0;
}

/* The thread @tid, added (in process @pid if not known: 0 means itself)
 * when new; NULL when out of memory. */
static struct thread *thread_get(struct chrome *ch, uint32_t tid, uint32_t pid)
{
	struct thread *t = ch->hash ? thread_find(ch, tid) : NULL;

	if (t)
		return t;
	if (ch->nthreads == ch->cap) {
		unsigned cap = ch->cap ? 2 * ch->cap : 256;
		struct thread **g = realloc(ch->threads, cap * sizeof(*g));

		if (!g)
			return NULL;
		ch->threads = g;
		ch->cap = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	ch->threads[ch->nthreads++] = t;
	t->tid = tid;
	t->pid = pid ? pid : tid;
	if (2 * ch->nthreads >= ch->hash_size &&
	    rehash(ch, ch->hash_size ? 2 * ch->hash_size : 1024) < 0) {
		ch->nthreads--;
		free(t);
		return NULL;
	}
	if (ch->hash_size && !thread_find(ch, tid)) {
		unsigned k = (tid * 0x9e3779b1u) & (ch->hash_size - 1);

		while (ch->hash[k])
			k = (k + 1) & (ch->hash_size - 1);
		ch->hash[k] = ch->nthreads;
	}
	return t;
}

/* @pre, @a[0..na) as a JSON string, then (@pre2 not NULL) @pre2 and
 * @b[0..nb) as one, in memory of their own (NUL-terminated, *@len bytes
 * before the NUL; NULL when out of memory): a name escaped once, not
 * per event.  A byte takes six at the most (\u00XX). */
static char *json_dup(const char *pre, const char *a, size_t na, const char *pre2,
		      const char *b, size_t nb, size_t *len)
{
	struct tk_out tmp = { .fd = -1 };

	tmp.cap = strlen(pre) + 6 * na + 2 + (pre2 ? strlen(pre2) + 6 * nb + 2 : 0) + 1;
	tmp.buf = malloc(tmp.cap);
	if (!tmp.buf)
		return NULL;
	tk_out_str(&tmp, pre);
	tk_out_json_str(&tmp, a, na);
	if (pre2) {
		tk_out_str(&tmp, pre2);
		tk_out_json_str(&tmp, b, nb);
	}
	tmp.buf[tmp.len] = '\0';
	*len = tmp.len;
	return tmp.buf;
}

/* ---- the array's elements ---- */

static void head(struct chrome *ch, char ph, uint32_t pid, uint32_t tid)
{
	struct tk_out *o = &ch->x->out;

	tk_out_reserve(o, 64);
	if (ch->nevents++)
		tk_out_mem(o, ",\n{\"ph\":\"", 9);
	else
		tk_out_mem(o, "{\"ph\":\"", 7);
	tk_out_char(o, ph);
	tk_out_mem(o, "\",\"pid\":", 8);
	tk_out_u64(o, pid);
	tk_out_mem(o, ",\"tid\":", 7);
	tk_out_u64(o, tid);
}

static void put_ts(struct chrome *ch, uint64_t ts)
{
	tk_out_mem(&ch->x->out, ",\"ts\":", 6);
	tk_out_us(&ch->x->out, tk_export_ns(ch->x, ts));
}

/* ,"ts":..,"dur":.. of [from, to]: ts + dur is exactly @to's time */
static void put_span(struct chrome *ch, uint64_t from, uint64_t to)
{
	uint64_t a = tk_export_ns(ch->x, from), b = tk_export_ns(ch->x, to);

	tk_out_mem(&ch->x->out, ",\"ts\":", 6);
	tk_out_us(&ch->x->out, a);
	tk_out_mem(&ch->x->out, ",\"dur\":", 7);
	tk_out_us(&ch->x->out, b > a ? b - a : 0);
}

static void put_name(struct chrome *ch, const char *name, const char *cat)
{
	struct tk_out *o = &ch->x->out;

	tk_out_mem(o, ",\"name\":", 8);
	tk_out_json_str(o, name, strlen(name));
	tk_out_mem(o, ",\"cat\":\"", 8);
	tk_out_str(o, cat);
	tk_out_char(o, '"');
}

/* A metadata element: @what's name @name, or (@name NULL) its sort index
 * @sort. */
static void meta(struct chrome *ch, uint32_t pid, uint32_t tid, const char *what,
		 const char *name, uint64_t sort)
{
	struct tk_out *o = &ch->x->out;

	head(ch, 'M', pid, tid);
	tk_out_mem(o, ",\"name\":\"", 9);
	tk_out_str(o, what);
	tk_out_mem(o, "\",\"args\":{", 10);
	if (!name) {
		tk_out_str(o, "\"sort_index\":");
		tk_out_u64(o, sort);
	} else {
		tk_out_str(o, "\"name\":");
		tk_out_json_str(o, name, strlen(name));
	}
	tk_out_mem(o, "}}", 2);
}

static const char *process_comm(struct chrome *ch, uint32_t pid)
{
	const struct tk_trace *t = ch->x->trace;

	for (unsigned i = 0; i < t->nprocesses; i++)
		if (t->processes[i].pid == pid)
			return t->processes[i].comm;
	if (ch->x->kernel)
		return tep_data_comm_from_pid(ch->x->kernel->tep, (int)pid);
	return "?";
}

/* @tid's name: the kernel's table, which gives a thread with a stream its
 * manifest name (tk_kernel_name_threads), else its stream's. */
static const char *thread_comm(struct chrome *ch, uint32_t tid)
{
	const struct tk_trace *t = ch->x->trace;
	const char *comm = NULL;

	if (ch->x->kernel)
		comm = tep_data_comm_from_pid(ch->x->kernel->tep, (int)tid);
	if (comm && strcmp(comm, "<...>"))
		return comm;
	for (unsigned i = 0; i < t->nstreams; i++)
		if (t->streams[i].tid == tid)
			return t->streams[i].comm;
	return comm ? comm : "?";
}

/* Name the thread's track (and its process) before its first element. */
static int name_thread(struct chrome *ch, struct thread *t)
{
	struct thread *p;
	char name[64];

	if (t->named)
		return 0;
	t->named = true;
	p = t->pid == t->tid ? t : thread_get(ch, t->pid, t->pid);
	if (!p)
		return -ENOMEM;
	if (!p->proc_named) {
		p->proc_named = true;
		meta(ch, t->pid, 0, "process_name", process_comm(ch, t->pid), 0);
	}
	snprintf(name, sizeof(name), "%s", thread_comm(ch, t->tid));
	meta(ch, t->pid, t->tid, "thread_name", name, 0);
	meta(ch, t->pid, t->tid, "thread_sort_index", NULL, 3 * (uint64_t)t->tid);
	return 0;
}

/* The track of a thread's lost events, below its scheduling track. */
static int name_lost(struct chrome *ch, struct thread *t)
{
	char name[64];

	if (t->lost_named)
		return 0;
	t->lost_named = true;
	if (name_thread(ch, t) < 0)
		return -ENOMEM;
	snprintf(name, sizeof(name), "%s %u lost", thread_comm(ch, t->tid), t->tid);
	meta(ch, t->pid, t->tid | LOST_TRACK, "thread_name", name, 0);
	meta(ch, t->pid, t->tid | LOST_TRACK, "thread_sort_index", NULL,
	     3 * (uint64_t)t->tid + 2);
	return 0;
}

static int name_sched(struct chrome *ch, struct thread *t)
{
	char name[64];

	if (t->sched_named)
		return 0;
	t->sched_named = true;
	if (name_thread(ch, t) < 0)
		return -ENOMEM;
	snprintf(name, sizeof(name), "%s %u sched", thread_comm(ch, t->tid), t->tid);
	meta(ch, t->pid, t->tid | SCHED_TRACK, "thread_name", name, 0);
	meta(ch, t->pid, t->tid | SCHED_TRACK, "thread_sort_index", NULL,
	     3 * (uint64_t)t->tid + 1);
	return 0;
}

static void name_cpu(struct chrome *ch, unsigned cpu)
{
	char name[32];

	if (!ch->cpu_named || cpu >= ch->x->kernel->ncpus || ch->cpu_named[cpu])
		return;
	ch->cpu_named[cpu] = true;
	if (!ch->kernel_named) {
		ch->kernel_named = true;
		meta(ch, 0, 0, "process_name", "kernel", 0);
	}
	snprintf(name, sizeof(name), "CPU %u", cpu);
	meta(ch, 0, cpu, "thread_name", name, 0);
}

/* ---- user events ---- */

static struct uev *uev_of(struct chrome *ch, const struct tk_event_info *ev)
{
	struct uev *u = ev->user, **list;
	char *h;

	if (u)
		return u;
	u = calloc(1, sizeof(*u));
	list = realloc(ch->uevs, (ch->nuevs + 1) * sizeof(*list));
	if (!u || !list) {
		free(u);
		return NULL;
	}
	ch->uevs = list;
	u->kind = tk_ft_kind_of(ev);
	/* ,"name":"FULL","cat":"PROVIDER" made once, escaped */
	h = json_dup(",\"name\":", ev->full_name, strnlen(ev->full_name, 400),
		     ",\"cat\":", ev->provider, strnlen(ev->provider, 400), &u->head_len);
	if (!h) {
		free(u);
		return NULL;
	}
	u->head = h;
	list[ch->nuevs++] = u;
	((struct tk_event_info *)ev)->user = u;
	return u;
}

static void put_double(struct tk_out *o, double d)
{
	if (isfinite(d))
		tk_out_printf(o, "%.17g", d);
	else
		tk_out_str(o, isnan(d) ? "\"nan\"" : d > 0 ? "\"inf\"" : "\"-inf\"");
}

static void put_hex_bytes(struct tk_out *o, const char *p, uint32_t len)
{
	static const char hex[] = "0123456789abcdef";

	tk_out_char(o, '"');
	for (uint32_t i = 0; i < len; i++) {
		tk_out_char(o, hex[(unsigned char)p[i] >> 4]);
		tk_out_char(o, hex[(unsigned char)p[i] & 15]);
	}
	tk_out_char(o, '"');
}

/* ,"args":{"common_cpu":N (the CPU the event ran on): the start of every
 * event's args; its own fields follow, each after a comma */
static void put_args_cpu(struct tk_out *o, uint32_t cpu)
{
	tk_out_str(o, ",\"args\":{\"common_cpu\":");
	tk_out_u64(o, cpu);
}

/* ,"args":{"common_cpu":N,"field":value,...} of a user event */
static void put_user_args(struct tk_out *o, const struct tk_event_info *ev,
			  const struct tk_value *v, uint32_t cpu)
{
	put_args_cpu(o, cpu);
	for (unsigned i = 0; i < ev->nfields; i++) {
		const struct tk_field_desc *f = &ev->fields[i];

		tk_out_char(o, ',');
		tk_out_json_str(o, f->name, strnlen(f->name, sizeof(f->name)));
		tk_out_char(o, ':');
		switch (f->kind) {
		case TK_KIND_INT:
			tk_out_s64(o, v[i].i);
			break;
		case TK_KIND_UINT:
			tk_out_u64(o, v[i].u);
			break;
		case TK_KIND_PTR:
			tk_out_printf(o, "\"0x%" PRIx64 "\"", v[i].u);
			break;
		case TK_KIND_DOUBLE:
			put_double(o, v[i].d);
			break;
		case TK_KIND_CHARS:
			tk_out_json_str(o, v[i].str, strnlen(v[i].str, v[i].len));
			break;
		case TK_KIND_STRING:
			tk_out_json_str(o, v[i].str, v[i].len);
			break;
		default:
			put_hex_bytes(o, v[i].str, v[i].len);
		}
	}
	tk_out_char(o, '}');
}

static int call_closed(void *ctx, const struct tk_trace_stream *s,
		       const struct tk_call *c, uint64_t end, bool finished)
{
	struct chrome *ch = ctx;
	struct tk_out *o = &ch->x->out;

	/* unfinished: said by the category, not args (speedscope names a
	 * frame by its name and args) */
	head(ch, 'X', s->pid, s->tid);
	put_span(ch, c->ts, end);
	put_name(ch, tk_calls_name(ch->calls, s->pid, c->func),
		 finished ? "function_graph" : "function_graph,unfinished");
	tk_out_char(o, '}');
	return 0;
}

static int chrome_user_event(struct tk_export *x, struct tk_stream_reader *rd)
{
	struct chrome *ch = x->priv;
	const struct tk_trace_stream *s = rd->stream;
	struct uev *u = uev_of(ch, rd->event);
	struct tk_out *o = &x->out;
	struct thread *t = thread_get(ch, s->tid, s->pid);

	if (!u || !t || name_thread(ch, t) < 0)
		return tk_export_error(x, "out of memory");
	switch (u->kind) {
	case TK_FT_ENTRY:
		return tk_calls_entry(ch->calls, rd) ? 0 : tk_export_error(x, "out of memory");
	case TK_FT_EXIT:
		return tk_calls_exit(ch->calls, rd);
	case TK_FT_STACK:
	case TK_FT_EVENT_STACK:
		tk_calls_seen(ch->calls, s, rd->ts);
		return 0;
	case TK_FT_FUNCTION:
		tk_calls_seen(ch->calls, s, rd->ts);
		head(ch, 'i', s->pid, s->tid);
		put_ts(ch, rd->ts);
		put_name(ch, tk_calls_name(ch->calls, s->pid, rd->values[0].u), "function");
		tk_out_str(o, ",\"s\":\"t\"");
		put_args_cpu(o, rd->cpu);
		tk_out_str(o, ",\"caller\":");
		{
			const char *caller = tk_calls_caller(ch->calls, s->pid, rd->values[1].u);

			tk_out_json_str(o, caller, strlen(caller));
		}
		tk_out_mem(o, "}}", 2);
		return 0;
	default:
		break;
	}
	tk_calls_seen(ch->calls, s, rd->ts);
	head(ch, 'i', s->pid, s->tid);
	put_ts(ch, rd->ts);
	tk_out_mem(o, u->head, u->head_len);
	tk_out_str(o, ",\"s\":\"t\"");
	put_user_args(o, rd->event, rd->values, rd->cpu);
	tk_out_char(o, '}');
	return 0;
}

static int chrome_user_lost(struct tk_export *x, const struct tk_trace_stream *s,
			    uint64_t from, uint64_t to, uint64_t count)
{
	struct chrome *ch = x->priv;
	struct thread *t = thread_get(ch, s->tid, s->pid);
	char name[64];

	if (!t || name_lost(ch, t) < 0)
		return tk_export_error(x, "out of memory");
	if (!from)
		from = x->first_ts;
	if (!to)
		to = x->last_ts > from ? x->last_ts : from;
	snprintf(name, sizeof(name), "lost %" PRIu64 " events", count);
	head(ch, 'X', s->pid, s->tid | LOST_TRACK);
	put_span(ch, from, to);
	put_name(ch, name, "lost");
	tk_out_str(&x->out, ",\"args\":{\"lost\":");
	tk_out_u64(&x->out, count);
	tk_out_mem(&x->out, "}}", 2);
	return 0;
}

/* ---- kernel events ---- */

static uint64_t kfield(const unsigned char *data, unsigned size,
		       const struct tep_format_field *f)
{
	uint64_t v = 0;

	if (!f || (unsigned)f->offset + (unsigned)f->size > size || f->size > 8)
		return 0;
	memcpy(&v, data + f->offset, (size_t)f->size);
	if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8 &&
	    (v >> (f->size * 8 - 1)) & 1)
		v |= ~0ull << (f->size * 8);
	return v;
}

static int kev_prepare(struct kev *k, struct tep_event *ev)
{
	char full[256];
	const char *sys = ev->system, *name = ev->name;
	size_t n;

	k->ev = ev;
	snprintf(full, sizeof(full), "%s:%s", sys, name);
	k->name = json_dup("", full, strlen(full), NULL, NULL, 0, &n);
	if (!k->name)
		return -ENOMEM;
	if (!strcmp(sys, "sched") && !strcmp(name, "sched_switch")) {
		k->role = K_SWITCH;
		k->f[0] = tep_find_field(ev, "prev_pid");
		k->f[1] = tep_find_field(ev, "prev_state");
		k->f[2] = tep_find_field(ev, "next_pid");
		if (!k->f[0] || !k->f[1] || !k->f[2])
			k->role = K_OTHER;
	} else if (!strcmp(sys, "sched") && (!strcmp(name, "sched_wakeup") ||
					      !strcmp(name, "sched_wakeup_new"))) {
		k->role = K_WAKEUP;
		k->f[0] = tep_find_field(ev, "pid");
		if (!k->f[0])
			k->role = K_OTHER;
	} else if (!strcmp(sys, "syscalls") && !strncmp(name, "sys_enter_", 10)) {
		struct tep_format_field **fs = tep_event_fields(ev);

		k->role = K_SYS_ENTER;
		k->sys = name + 10;
		for (unsigned i = 0; fs && fs[i] && k->nf < 6; i++)
			if (strcmp(fs[i]->name, "__syscall_nr") && fs[i]->size <= 8 &&
			    !(fs[i]->flags & TEP_FIELD_IS_ARRAY))
				k->f[k->nf++] = fs[i];
		free(fs);
	} else if (!strcmp(sys, "syscalls") && !strncmp(name, "sys_exit_", 9)) {
		k->role = K_SYS_EXIT;
		k->sys = name + 9;
		k->f[0] = tep_find_field(ev, "ret");
	} else if (!strcmp(sys, "ftrace") && (!strcmp(name, "kernel_stack") ||
					       !strcmp(name, "user_stack"))) {
		k->role = K_STACK;
	} else {
		k->role = K_OTHER;
		k->args = tep_event_fields(ev);
	}
	if (k->sys)
		k->sys_len = strlen(k->sys);
	return 0;
}

static struct kev *kev_of(struct chrome *ch, int id)
{
	struct tep_event *ev;

	if (id < 0 || id > 65535)
		return NULL;
	if ((unsigned)id >= ch->nkevs) {
		unsigned n = (unsigned)id + 64;
		struct kev *g = realloc(ch->kevs, n * sizeof(*g));

		if (!g)
			return NULL;
		memset(g + ch->nkevs, 0, (n - ch->nkevs) * sizeof(*g));
		ch->kevs = g;
		ch->nkevs = n;
	}
	if (ch->kevs[id].ev)
		return &ch->kevs[id];
	ev = tep_find_event(ch->x->kernel->tep, id);
	if (!ev || kev_prepare(&ch->kevs[id], ev) < 0)
		return NULL;
	return &ch->kevs[id];
}

/* A number field of a kernel event: pointers in hex, as the kernel
 * prints them. */
static void put_knum(struct tk_out *o, const struct tep_format_field *f, uint64_t v)
{
	if (f->type && strchr(f->type, '*'))
		tk_out_printf(o, "\"0x%" PRIx64 "\"", v);
	else if (f->flags & TEP_FIELD_IS_SIGNED)
		tk_out_s64(o, (int64_t)v);
	else
		tk_out_u64(o, v);
}

/* ,"args":{...} of a kernel event: its CPU, its own fields (not the
 * common ones) */
static void put_kernel_args(struct tk_out *o, const struct kev *k,
			    const unsigned char *data, unsigned size,
			    uint32_t cpu)
{
	put_args_cpu(o, cpu);
	for (unsigned i = 0; k->args && k->args[i]; i++) {
		const struct tep_format_field *f = k->args[i];
		unsigned off = (unsigned)f->offset, len = (unsigned)f->size;

		if (f->flags & TEP_FIELD_IS_DYNAMIC) {
			uint32_t loc;

			if (off + 4 > size)
				continue;
			memcpy(&loc, data + off, 4);
			len = loc >> 16;
			off = (f->flags & TEP_FIELD_IS_RELATIVE ? off + 4 : 0) + (loc & 0xffff);
		}
		if (off + len > size)
			continue;
		tk_out_char(o, ',');
		tk_out_json_str(o, f->name, strlen(f->name));
		tk_out_char(o, ':');
		if (f->flags & TEP_FIELD_IS_STRING)
			tk_out_json_str(o, (const char *)data + off,
					strnlen((const char *)data + off, len));
		else if ((f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) || len > 8)
			put_hex_bytes(o, (const char *)data + off, len);
		else
			put_knum(o, f, kfield(data, size, f));
	}
	tk_out_char(o, '}');
}

/* The name of a state a task was switched out in: prev_state's bits as
 * sched_switch's print fmt names them (S D T t X Z P I; none: R). */
static const char *wait_state(uint64_t s)
{
	if (!(s & 0xff))
		return "runnable (preempted)";
	if (s & 0x01)
		return "sleeping";
	if (s & 0x02)
		return "uninterruptible";
	if (s & 0x0c)
		return "stopped";
	if (s & 0x40)
		return "parked";
	if (s & 0x80)
		return "idle";
	return "waiting";
}

/* End @t's current scheduling slice at @ts. */
static int sched_close(struct chrome *ch, struct thread *t, uint64_t ts)
{
	struct tk_out *o = &ch->x->out;
	uint64_t from = t->since;

	if (t->state == T_UNKNOWN || t->state == T_EXITED)
		return 0;
	if (name_sched(ch, t) < 0)
		return -ENOMEM;
	head(ch, 'X', t->pid, t->tid | SCHED_TRACK);
	put_span(ch, from, ts);
	if (t->state == T_RUNNING) {
		put_name(ch, "running", "sched");
		tk_out_str(o, ",\"args\":{\"cpu\":");
		tk_out_u64(o, t->cpu);
		tk_out_char(o, '}');
	} else {
		put_name(ch, t->wait_name, "sched");
	}
	tk_out_char(o, '}');
	return 0;
}

/* A flow arrow's end ("s" or "f") at @ts on @t's scheduling track. */
static int flow(struct chrome *ch, struct thread *t, char ph, uint64_t id, uint64_t ts)
{
	struct tk_out *o = &ch->x->out;

	if (name_sched(ch, t) < 0)
		return -ENOMEM;
	head(ch, ph, t->pid, t->tid | SCHED_TRACK);
	put_ts(ch, ts);
	put_name(ch, "wakeup", "sched");
	tk_out_str(o, ",\"id\":");
	tk_out_u64(o, id);
	if (ph == 'f')
		tk_out_str(o, ",\"bp\":\"e\"");
	tk_out_char(o, '}');
	return 0;
}

/* The instant "wakeup" (args: the woken thread, and the waker as
 * "COMM TID") on the waker's scheduling track, where an arrow starts; on
 * the woken thread's own when the waker has no track (the idle task, or
 * a task record -F left out).  Viewers that bind a flow's
 * start to the slice enclosing it (catapult's trace viewer, Perfetto)
 * find the waker's running slice there; Chrome DevTools' Performance
 * panel binds it only to an event of the same ts, thread and category:
 * this one.  (Its end binds to the woken thread's running slice, which
 * starts at its ts, in every viewer.) */
static void wakeup_mark(struct chrome *ch, const struct thread *waker,
			const struct thread *woken, uint64_t ts)
{
	struct tk_out *o = &ch->x->out;
	char by[64];
	int n = snprintf(by, sizeof(by), "%s %u",
			 woken->waker_tid ? thread_comm(ch, woken->waker_tid) : "<idle>",
			 woken->waker_tid);

	head(ch, 'i', waker->pid, waker->tid | SCHED_TRACK);
	put_ts(ch, ts);
	put_name(ch, "wakeup", "sched");
	tk_out_str(o, ",\"s\":\"t\",\"args\":{\"woken\":");
	tk_out_u64(o, woken->tid);
	tk_out_str(o, ",\"waker\":");
	tk_out_json_str(o, by, n < 0 ? 0 : (size_t)n < sizeof(by) ? (size_t)n : sizeof(by) - 1);
	tk_out_mem(o, "}}", 2);
}

/* @t runs again at @ts: the arrow from its wakeup, both ends written
 * now (a thread woken but never run in the trace gets none). */
static int arrow(struct chrome *ch, struct thread *t, uint64_t ts)
{
	uint64_t id = ++ch->flows;

	if (!t->waker)
		return 0;
	if (flow(ch, t->waker, 's', id, t->woken_at) < 0)
		return -ENOMEM;
	wakeup_mark(ch, t->waker, t, t->woken_at);
	if (flow(ch, t, 'f', id, ts) < 0)
		return -ENOMEM;
	t->waker = NULL;
	return 0;
}

static int on_switch(struct chrome *ch, const struct kev *k, struct tk_kernel_cpu *c)
{
	uint32_t prev = (uint32_t)kfield(c->data, c->data_size, k->f[0]);
	uint64_t state = kfield(c->data, c->data_size, k->f[1]);
	uint32_t next = (uint32_t)kfield(c->data, c->data_size, k->f[2]);
	struct thread *t;

	if (prev) {
		t = thread_get(ch, prev, 0);
		if (!t)
			return -ENOMEM;
		if (ch->filtered && !t->traced)
			goto next;
		if (t->state == T_UNKNOWN || t->state == T_EXITED) {
			/* running since before the trace */
			t->state = T_RUNNING;
			t->since = ch->x->first_ts;
			t->cpu = c->cpu;
		}
		if (sched_close(ch, t, c->ts) < 0)
			return -ENOMEM;
		/* X or Z: it has exited, nothing follows */
		t->state = state & 0x30 ? T_EXITED : T_WAITING;
		t->wait_name = wait_state(state);
		t->since = c->ts;
	}
next:
	if (next) {
		t = thread_get(ch, next, 0);
		if (!t)
			return -ENOMEM;
		if (ch->filtered && !t->traced)
			return 0;
		if (sched_close(ch, t, c->ts) < 0)
			return -ENOMEM;
		t->state = T_RUNNING;
		t->since = c->ts;
		t->cpu = c->cpu;
		if (arrow(ch, t, c->ts) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int on_wakeup(struct chrome *ch, const struct kev *k, struct tk_kernel_cpu *c,
		     uint32_t waker)
{
	uint32_t pid = (uint32_t)kfield(c->data, c->data_size, k->f[0]);
	struct thread *t = thread_get(ch, pid, 0), *w;

	if (!t)
		return -ENOMEM;
	if (ch->filtered && !t->traced)
		return 0;
	if (t->state == T_RUNNING)
		return 0; /* woken while still on its CPU */
	if (sched_close(ch, t, c->ts) < 0)
		return -ENOMEM;
	t->state = T_WAITING;
	t->wait_name = "runnable";
	t->since = c->ts;
	/* the arrow starts in the waker's running slice, or (woken from the
	 * idle task: an interrupt) in the woken thread's runnable slice */
	w = waker ? thread_get(ch, waker, 0) : t;
	if (!w)
		return -ENOMEM;
	if (ch->filtered && !w->traced)
		w = t;
	if (w->state == T_UNKNOWN) {
		w->state = T_RUNNING;
		w->since = ch->x->first_ts;
		w->cpu = c->cpu;
	}
	t->waker = w;
	t->waker_tid = waker;
	t->woken_at = c->ts;
	return 0;
}

static int on_sys_enter(struct chrome *ch, const struct kev *k,
			struct tk_kernel_cpu *c, struct thread *t)
{
	if (t->sys) {
		/* its exit was not recorded: it ends here */
		const struct kev *open = t->sys;

		t->sys = NULL;
		head(ch, 'X', t->pid, t->tid);
		put_span(ch, t->sys_ts, c->ts);
		put_name(ch, open->sys, "syscall,unfinished");
		put_args_cpu(&ch->x->out, t->sys_cpu);
		tk_out_mem(&ch->x->out, "}}", 2);
	}
	t->sys = k;
	t->sys_ts = c->ts;
	t->sys_cpu = c->cpu;
	for (unsigned i = 0; i < k->nf; i++)
		t->sys_args[i] = kfield(c->data, c->data_size, k->f[i]);
	return 0;
}

static int on_sys_exit(struct chrome *ch, const struct kev *k,
		       struct tk_kernel_cpu *c, struct thread *t)
{
	struct tk_out *o = &ch->x->out;
	const struct kev *e = t->sys;

	if (!e || e->sys_len != k->sys_len || memcmp(e->sys, k->sys, k->sys_len))
		return 0; /* its entry was not recorded */
	t->sys = NULL;
	head(ch, 'X', t->pid, t->tid);
	put_span(ch, t->sys_ts, c->ts);
	put_name(ch, e->sys, "syscall");
	put_args_cpu(o, t->sys_cpu);
	for (unsigned i = 0; i < e->nf; i++) {
		tk_out_char(o, ',');
		tk_out_json_str(o, e->f[i]->name, strlen(e->f[i]->name));
		tk_out_char(o, ':');
		put_knum(o, e->f[i], t->sys_args[i]);
	}
	tk_out_str(o, ",\"ret\":");
	tk_out_s64(o, (int64_t)kfield(c->data, c->data_size, k->f[0]));
	tk_out_mem(o, "}}", 2);
	return 0;
}

static int chrome_kernel_event(struct tk_export *x, struct tk_kernel_cpu *c)
{
	struct chrome *ch = x->priv;
	int id = tk_kernel_event_id(x->kernel, c->data);
	uint32_t pid = (uint32_t)tk_kernel_pid(x->kernel, c->data);
	struct kev *k = kev_of(ch, id);
	struct thread *t = NULL;
	int ret = 0;

	if (!k)
		return 0; /* an event of no known type: nothing to show */
	if (pid && k->role != K_SWITCH && k->role != K_WAKEUP) {
		t = thread_get(ch, pid, 0);
		if (!t || name_thread(ch, t) < 0)
			return tk_export_error(x, "out of memory");
		t->traced = true;
	}
	switch (k->role) {
	case K_SWITCH:
		ret = on_switch(ch, k, c);
		break;
	case K_WAKEUP:
		ret = on_wakeup(ch, k, c, pid);
		break;
	case K_SYS_ENTER:
		if (t)
			ret = on_sys_enter(ch, k, c, t);
		break;
	case K_SYS_EXIT:
		if (t)
			ret = on_sys_exit(ch, k, c, t);
		break;
	case K_STACK:
		break;
	default:
		if (t) {
			head(ch, 'i', t->pid, t->tid);
		} else {
			name_cpu(ch, c->cpu);
			head(ch, 'i', 0, c->cpu);
		}
		put_ts(ch, c->ts);
		tk_out_mem(&x->out, ",\"name\":", 8);
		tk_out_str(&x->out, k->name);
		tk_out_mem(&x->out, ",\"cat\":", 7);
		tk_out_json_str(&x->out, k->ev->system, strlen(k->ev->system));
		tk_out_str(&x->out, ",\"s\":\"t\"");
		put_kernel_args(&x->out, k, c->data, c->data_size, c->cpu);
		tk_out_char(&x->out, '}');
	}
	return ret < 0 ? tk_export_error(x, "out of memory") : 0;
}

static int chrome_kernel_lost(struct tk_export *x, unsigned cpu, uint64_t from,
			      uint64_t to, long long count)
{
	struct chrome *ch = x->priv;
	char name[64];

	name_cpu(ch, cpu);
	if (count > 0)
		snprintf(name, sizeof(name), "lost %lld events", count);
	else
		snprintf(name, sizeof(name), "lost events");
	head(ch, 'X', 0, cpu);
	put_span(ch, from ? from : x->first_ts, to);
	put_name(ch, name, "lost");
	tk_out_str(&x->out, ",\"args\":{\"lost\":");
	tk_out_s64(&x->out, count);
	tk_out_mem(&x->out, "}}", 2);
	return 0;
}

/* ---- begin, end ---- */

static int chrome_begin(struct tk_export *x)
{
	struct chrome *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return tk_export_error(x, "out of memory");
	x->priv = ch;
	ch->x = x;
	ch->calls = tk_calls_new(x->trace, NULL, call_closed, ch);
	if (!ch->calls)
		return tk_export_error(x, "out of memory");
	if (x->kernel) {
		ch->cpu_named = calloc(x->kernel->ncpus + 1, sizeof(bool));
		if (!ch->cpu_named)
			return tk_export_error(x, "out of memory");
	}
	/* the user streams' threads first: kernel events of those threads
	 * then go to their process */
	for (unsigned i = 0; i < x->trace->nstreams; i++) {
		struct thread *t = thread_get(ch, x->trace->streams[i].tid,
					      x->trace->streams[i].pid);

		if (!t)
			return tk_export_error(x, "out of memory");
		t->traced = true;
	}
	if (x->kernel && x->kernel->pid_filter) {
		const char *p = x->kernel->pid_filter;

		ch->filtered = true;
		while (*p) {
			char *end;
			unsigned long pid = strtoul(p, &end, 10);
			struct thread *t;

			if (end == p)
				break;
			t = pid && pid < SCHED_TRACK ? thread_get(ch, (uint32_t)pid, 0) : NULL;
			if (t)
				t->traced = true;
			p = *end == ',' ? end + 1 : end;
		}
	}
	tk_out_str(&x->out, "{\"traceEvents\":[\n");
	return 0;
}

static int chrome_end(struct tk_export *x)
{
	struct chrome *ch = x->priv;
	const struct tk_trace *t = x->trace;
	struct tk_out *o = &x->out;
	char start[64];
	time_t secs = (time_t)(t->clock.real_start / 1000000000u);
	struct tm tm;

	if (tk_calls_finish(ch->calls) < 0)
		return -EINVAL;
	for (unsigned i = 0; i < ch->nthreads; i++) {
		struct thread *th = ch->threads[i];

		if (sched_close(ch, th, x->last_ts) < 0)
			return tk_export_error(x, "out of memory");
		if (th->sys) {
			head(ch, 'X', th->pid, th->tid);
			put_span(ch, th->sys_ts, x->last_ts);
			put_name(ch, th->sys->sys, "syscall,unfinished");
			put_args_cpu(o, th->sys_cpu);
			tk_out_mem(o, "}}", 2);
		}
	}
	gmtime_r(&secs, &tm);
	strftime(start, sizeof(start), "%Y-%m-%d %H:%M:%S UTC", &tm);
	tk_out_str(o, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"trace\":");
	tk_out_json_str(o, t->dir, strlen(t->dir));
	tk_out_str(o, ",\"host\":");
	tk_out_json_str(o, t->host, strlen(t->host));
	tk_out_str(o, ",\"started\":");
	tk_out_json_str(o, start, strlen(start));
	tk_out_str(o, ",\"clock\":");
	tk_out_str(o, t->clock.tsc ? "\"tsc\"" : "\"mono\"");
	tk_out_str(o, ",\"ts\":\"microseconds of CLOCK_MONOTONIC\",\"converter\":\"tracekit ");
	tk_out_str(o, TK_VERSION_STRING);
	tk_out_str(o, "\"}}\n");
	return 0;
}

static void chrome_free(struct tk_export *x)
{
	struct chrome *ch = x->priv;

	if (!ch)
		return;
	tk_calls_free(ch->calls);
	for (unsigned i = 0; i < ch->nuevs; i++) {
		free(ch->uevs[i]->head);
		free(ch->uevs[i]);
	}
	for (unsigned i = 0; i < ch->nkevs; i++) {
		free(ch->kevs[i].name);
		free(ch->kevs[i].args);
	}
	/* the events' user pointers are ours: the trace outlives us */
	for (unsigned i = 0; i < x->trace->nprocesses; i++)
		for (unsigned j = 0; j < x->trace->processes[i].nevents; j++)
			x->trace->processes[i].events[j].user = NULL;
	free(ch->uevs);
	free(ch->kevs);
	for (unsigned i = 0; i < ch->nthreads; i++)
		free(ch->threads[i]);
	free(ch->threads);
	free(ch->hash);
	free(ch->cpu_named);
	free(ch);
	x->priv = NULL;
}

const struct tk_export_ops tk_export_chrome = {
	.name = "chrome",
	.summary = "Chrome trace event JSON (Perfetto UI, chrome://tracing, speedscope)",
	.suffix = ".json",
	.begin = chrome_begin,
	.user_event = chrome_user_event,
	.kernel_event = chrome_kernel_event,
	.user_lost = chrome_user_lost,
	.kernel_lost = chrome_kernel_lost,
	.end = chrome_end,
	.free = chrome_free,
};
