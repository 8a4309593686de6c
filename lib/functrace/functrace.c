/* SPDX-License-Identifier: MIT */
/*
 * functrace.c - the function tracer's life: the recorder's options come in
 * the CONFIG (protocol.h, "key=value" strings), the entries they select
 * are patched, and everything is unpatched when the session ends.
 *
 *   tracer=function|function_graph   filter=GLOB (-l)   notrace=GLOB (-n)
 *   graph=GLOB (-g)   depth=N (--max-graph-depth)   stack=1 (--func-stack)
 *   libcall=0 (--no-libcall: library calls through the PLT not hooked)
 *
 * A program that does not link libtracekit gets it from LD_PRELOAD
 * (tracekit record does that) with TK_FUNCTRACE_ENV set: the constructor
 * below then reads the loaded objects (so that gcc's single-byte NOPs are
 * converted while only one thread runs, for a later record -P too) and
 * starts the runtime, which joins the session and patches before main()
 * runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/internal.h"
#include "functrace.h"
#include "tracekit/functrace.h"
#include "lib/text-patch.h"

static struct ft_options *current; /* under the functrace lock */
static bool active;                 /* current != NULL, read without it */
bool tk_ft_can_patch;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;

void tk_ft_warn(const char *fmt, ...)
{
	struct tk_msg_error e;
	va_list ap;

	memset(&e, 0, sizeof(e));
	e.m.type = TK_MSG_ERROR;
	e.m.len = sizeof(e);
	va_start(ap, fmt);
	vsnprintf(e.text, sizeof(e.text), fmt, ap);
	va_end(ap);
	tk_session_send(&e, sizeof(e), -1);
}

static void options_free(struct ft_options *o)
{
	if (!o)
		return;
	for (unsigned i = 0; i < o->nfilter; i++)
		free(o->filter[i]);
	for (unsigned i = 0; i < o->nnotrace; i++)
		free(o->notrace[i]);
	for (unsigned i = 0; i < o->ngraph; i++)
		free(o->graph[i]);
	free(o->filter);
	free(o->notrace);
	free(o->graph);
	free(o);
}

static int list_add(char ***list, unsigned *n, const char *v)
{
	char **grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	*list = grown;
	grown[*n] = strdup(v);
	if (!grown[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* NULL when an option is not one we know (from a newer recorder, say). */
static struct ft_options *options_parse(char *const *opts, unsigned n)
{
	struct ft_options *o = calloc(1, sizeof(*o));
	int err = 0;

	if (!o)
		return NULL;
	o->libcall = true;
	for (unsigned i = 0; i < n && !err; i++) {
		const char *kv = opts[i], *v = strchr(kv, '=');
		size_t klen = v ? (size_t)(v - kv) : 0;

		if (!v) {
			err = -EINVAL;
			break;
		}
		v++;
		if (!strncmp(kv, "tracer", klen) && klen == 6) {
			if (!strcmp(v, "function"))
				o->tracer = FT_FUNCTION;
			else if (!strcmp(v, "function_graph"))
				o->tracer = FT_GRAPH;
			else
				err = -EINVAL;
		} else if (!strncmp(kv, "filter", klen) && klen == 6) {
			err = list_add(&o->filter, &o->nfilter, v);
		} else if (!strncmp(kv, "notrace", klen) && klen == 7) {
			err = list_add(&o->notrace, &o->nnotrace, v);
		} else if (!strncmp(kv, "graph", klen) && klen == 5) {
			err = list_add(&o->graph, &o->ngraph, v);
		} else if (!strncmp(kv, "depth", klen) && klen == 5) {
			o->max_depth = (unsigned)strtoul(v, NULL, 10);
		} else if (!strncmp(kv, "stack", klen) && klen == 5) {
			o->stack = strcmp(v, "0") != 0;
		} else if (!strncmp(kv, "libcall", klen) && klen == 7) {
			o->libcall = strcmp(v, "0") != 0;
		} else {
			err = -EINVAL;
		}
	}
	if (err || o->tracer == FT_OFF) {
		options_free(o);
		return NULL;
	}
	return o;
}

/* No thread but this one: single-byte NOPs may be rewritten. */
static bool single_threaded(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	const char *t;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	t = strstr(buf, "\nThreads:");
	return t && strtol(t + 9, NULL, 10) == 1;
}

static void stop_locked(void)
{
	/* the same pairs as in start_locked(), with nothing to publish: a
	 * handler that still runs finishes on the options it read */
	__atomic_store_n(&tk_ft.mode, FT_OFF, __ATOMIC_RELEASE);
	__atomic_store_n(&tk_ft.cyg, 0, __ATOMIC_RELEASE);
	tk_ft_modules_apply(NULL);
}

static int start_locked(void)
{
	const struct ft_options *o = current;
	unsigned patched, cyg;

	if (tk_ft_events_register() < 0)
		return -ENOMEM;
	FT_OPT_SET(max_depth, o->max_depth ? o->max_depth : UINT32_MAX);
	FT_OPT_SET(stack, o->stack);
	FT_OPT_SET(graph_roots, o->ngraph > 0);
	/* pairs with the ACQUIRE loads of FT_MODE (functrace.h) in the
	 * handlers (handler.c, fast.c): the ids and options above first */
	__atomic_store_n(&tk_ft.mode, o->tracer, __ATOMIC_RELEASE);
	patched = tk_ft_modules_apply(o);
	cyg = tk_ft_cyg_select(o);
	/* pairs with the ACQUIRE loads of FT_CYG_ON in cyg.c's hooks: the
	 * mode and options above first (the table has its own pair) */
	__atomic_store_n(&tk_ft.cyg, cyg > 0, __ATOMIC_RELEASE);
	return (int)(patched + cyg);
}

static void handler_init(void)
{
	const char *why;

	tk_ft_handler_init();
	/* the static keys' protocol, ready whether or not they use it */
	tk_ft_can_patch = tk_text_patch_init(&why) == 0;
}

void tk_functrace_session(char *const *opts, unsigned n)
{
	struct ft_options *o = opts ? options_parse(opts, n) : NULL;

	if (opts && !o)
		tk_ft_warn("function tracer: options not understood");
	pthread_once(&handler_once, handler_init);
	tk_ft_lock();
	if (current || o)
		stop_locked();
	options_free(current);
	current = o;
	/* pairs with the ACQUIRE loads of active below (a quick look
	 * without the lock; what they then use is read under it) */
	__atomic_store_n(&active, o != NULL, __ATOMIC_RELEASE);
	if (o) {
		tk_ft_modules_scan(single_threaded());
		start_locked();
		tk_ft_modules_announce(true);
	}
	tk_ft_unlock();
}

void tk_functrace_child_joined(void)
{
	if (!__atomic_load_n(&active, __ATOMIC_ACQUIRE))
		return;
	tk_ft_lock();
	if (current)
		tk_ft_modules_announce(true);
	tk_ft_unlock();
}

/* After dlopen: the new objects' entries, patched as the session asks. */
void tk_ft_loaded(void)
{
	if (!__atomic_load_n(&active, __ATOMIC_ACQUIRE))
		return;
	tk_ft_lock();
	if (current) {
		/* the new object's code has not run on other threads yet */
		tk_ft_modules_scan(true);
		if (FT_MODE() != FT_OFF)
			start_locked();
		tk_ft_modules_announce(false);
	}
	tk_ft_unlock();
}

bool tk_ft_active(void)
{
	return __atomic_load_n(&active, __ATOMIC_ACQUIRE);
}

TK_EXPORT int tk_functrace_enable(void)
{
	int ret = -ENOENT;

	tk_ft_lock();
	if (current) {
		tk_ft_modules_scan(false);
		ret = start_locked();
	}
	tk_ft_unlock();
	return ret;
}

TK_EXPORT int tk_functrace_disable(void)
{
	int ret = -ENOENT;

	tk_ft_lock();
	if (current) {
		stop_locked();
		ret = 0;
	}
	tk_ft_unlock();
	return ret;
}

__attribute__((constructor)) static void functrace_ctor(void)
{
	pthread_once(&handler_once, handler_init);
	if (!getenv(TK_FUNCTRACE_ENV))
		return;
	/* Before main, one thread: the single-byte NOPs of the objects
	 * loaded now become patchable later too (record -P). */
	tk_ft_lock();
	tk_ft_modules_scan(single_threaded());
	tk_ft_unlock();
	tk_runtime_init();
}
