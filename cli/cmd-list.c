/* SPDX-License-Identifier: MIT */
/*
 * cmd-list.c - tracekit list: the events a process, program or library
 * defines, with their fields, as the kernel shows events/<name>/format;
 * and, as trace-cmd list does, the kernel's events, tracers, functions
 * and options.
 *
 *   tracekit list [--names] [PID | PROGRAM | LIBRARY]
 *   tracekit list -e [GLOB] [PID | PROGRAM | LIBRARY]
 *   tracekit list -t | -f [GLOB] | -o
 *
 * With no argument: the running instrumented processes that would answer
 * us (ours; all of them for root).  A
 * PID is asked over its control socket (HELLO and its events, then the
 * connection is closed: nothing is enabled); a file is read as ELF, its
 * USDT probes (stapsdt notes) listed after its events.
 * -e lists event names, "system:event", the kernel's and the named
 * target's together, sorted.  Every name read from a file or a process
 * is printed with control characters escaped (common/visible.h): a
 * program can carry terminal escape sequences in its notes.  The kernel side only reads tracefs
 * (kernel/), mounting it for the time of the listing if needed.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "cli.h"
#include "control-client.h"
#include "find-program.h"
#include "format/elf-events.h"
#include "format/event-info.h"
#include "format/probes.h"
#include "kernel/kernel.h"
#include "common/pattern.h"
#include "common/protocol.h"
#include "common/unix-socket.h"
#include "common/visible.h"
#include "options.h"

struct event_list {
	unsigned count;
	struct tk_event_info *events;
};

static int list_add(struct event_list *l, const void *desc, size_t len,
		    uint32_t id, size_t *used)
{
	struct tk_event_info *grown;
	char why[160];
	int ret;

	grown = realloc(l->events, (l->count + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	l->events = grown;
	ret = tk_event_info_parse(desc, len, &l->events[l->count], used, why,
				  sizeof(why));
	if (ret)
		return ret;
	l->events[l->count++].id = id;
	return 0;
}

/* Take @ev into the list, numbered in the order found. */
static int list_append(struct event_list *l, struct tk_event_info *ev)
{
	struct tk_event_info *grown;

	grown = realloc(l->events, (l->count + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	l->events = grown;
	ev->id = l->count;
	l->events[l->count++] = *ev;
	return 0;
}

static const char *type_name(const struct tk_field_desc *f, char *buf,
			     size_t len)
{
	switch (f->kind) {
	case TK_KIND_INT:
		snprintf(buf, len, "int%u_t", f->size * 8);
		break;
	case TK_KIND_UINT:
		snprintf(buf, len, "uint%u_t", f->size * 8);
		break;
	case TK_KIND_PTR:
		return "void *";
	case TK_KIND_DOUBLE:
		return "double";
	case TK_KIND_CHARS:
		return "char";
	case TK_KIND_STRING:
		return "__data_loc char[]";
	case TK_KIND_BYTES:
		return "__data_loc uint8_t[]";
	default:
		return "?";
	}
	return buf;
}

static void print_event(const struct tk_event_info *ev, bool names_only)
{
	char shown[1024];
	unsigned offset = 0;
	bool fixed = true;

	printf("%s\n", tk_visible(shown, sizeof(shown), ev->full_name));
	if (names_only)
		return;
	printf("\tID: %u%s\n", ev->id, ev->flags & TK_DESC_MARKER ? " (marker)" : "");
	for (unsigned i = 0; i < ev->nfields; i++) {
		const struct tk_field_desc *f = &ev->fields[i];
		char tbuf[32], arr[24] = "";
		unsigned size = f->kind == TK_KIND_CHARS ? f->array_len : f->size;
		bool is_signed = f->kind == TK_KIND_INT || f->kind == TK_KIND_DOUBLE;

		if (f->kind == TK_KIND_CHARS)
			snprintf(arr, sizeof(arr), "[%u]", f->array_len);
		printf("\tfield:%s %s%s;\t", type_name(f, tbuf, sizeof(tbuf)),
		       tk_visible(shown, sizeof(shown), f->name), arr);
		if (fixed)
			printf("offset:%u;\t", offset);
		else
			printf("offset:var;\t");
		if (f->kind == TK_KIND_STRING || f->kind == TK_KIND_BYTES)
			printf("size:var;\tsigned:0;\n");
		else
			printf("size:%u;\tsigned:%d;\n", size, is_signed);
		if (f->kind == TK_KIND_STRING || f->kind == TK_KIND_BYTES)
			fixed = false;
		else
			offset += size;
	}
	printf("\tprint fmt: \"");
	for (const char *p = ev->fmt; *p; p++) {
		if (*p == '"' || *p == '\\')
			putchar('\\');
		if (*p == '\n')
			fputs("\\n", stdout);
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			printf("\\x%02x", (unsigned char)*p);
		else
			putchar(*p);
	}
	printf("\"%s%s\n\n", ev->args[0] ? ", " : "",
	       tk_visible(shown, sizeof(shown), ev->args));
}

/* The process at @name is @pid and may talk to us; says why not. */
static bool peer_ok(int fd, pid_t pid)
{
	char why[256];

	if (ctl_peer_check(fd, pid, why, sizeof(why)) == 0)
		return true;
	tk_error("%s", why);
	return false;
}

static int list_process(pid_t pid, struct event_list *l, bool names_only)
{
	struct sockaddr_un sa;
	char name[64], buf[TK_MSG_MAX];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), n;
	const struct tk_msg *m = (const struct tk_msg *)buf;
	bool heard = false;

	snprintf(name, sizeof(name), TK_SOCKET_PREFIX "%d", (int)pid);
	if (fd < 0 ||
	    connect(fd, (struct sockaddr *)&sa, tk_abstract_addr(&sa, name)) < 0) {
		int err = errno;

		if (kill(pid, 0) < 0 && errno == ESRCH)
			tk_error("no process with pid %d", (int)pid);
		else
			tk_error("process %d is not instrumented with tracekit (no control socket @%s: %s)",
				 (int)pid, name, strerror(err));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!peer_ok(fd, pid)) {
		close(fd);
		return -1;
	}
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		char why[200];

		if (poll(&pfd, 1, TK_CTL_ANSWER_MS) <= 0) {
			ctl_no_answer(pid, false, why, sizeof(why));
			tk_error("%s", why);
			break;
		}
		n = (int)recv(fd, buf, sizeof(buf), 0);
		if (n < (int)sizeof(*m) || m->len != (uint32_t)n) {
			if (heard) {
				tk_error("process %d closed the connection", (int)pid);
				break;
			}
			ctl_no_answer(pid, true, why, sizeof(why));
			tk_error("%s", why);
			break;
		}
		heard = true;
		if (m->type == TK_MSG_HELLO && !names_only &&
		    n >= (int)sizeof(struct tk_msg_hello)) {
			const struct tk_msg_hello *h = (const void *)buf;

			if (h->keys)
				printf("# process %d: static keys, %u call sites patched\n",
				       (int)pid, h->nsites);
			else
				printf("# process %d: call sites test a byte (no static keys: %.64s)\n",
				       (int)pid, h->keys_why);
		}
		if (m->type == TK_MSG_EVENTS_DONE) {
			close(fd);
			return 0;
		}
		if (m->type == TK_MSG_ERROR)
			continue; /* busy with a recorder: it still lists */
		if (m->type == TK_MSG_EVENT && n >= (int)sizeof(struct tk_msg_event)) {
			const struct tk_msg_event *e = (const void *)buf;

			if (list_add(l, e + 1, (size_t)n - sizeof(*e), e->id, NULL)) {
				tk_error("process %d sent a bad event descriptor",
					 (int)pid);
				break;
			}
		}
	}
	close(fd);
	return -1;
}

static int list_file(const char *path, struct event_list *l)
{
	struct tk_elf_modules m;
	char err[512];

	if (tk_elf_modules_read(path, true, &m, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return -1;
	}
	for (unsigned i = 0; i < m.count; i++) {
		const char *p = m.module[i].meta, *end = p + m.module[i].size;
		struct tk_event_info ev;

		while (tk_meta_next(&p, end, &ev) == 0)
			if (list_append(l, &ev) < 0)
				tk_event_info_free(&ev);
	}
	tk_elf_modules_free(&m);
	return 0;
}

struct usdt_print {
	const char *path;
	bool names_only;
};

/* A USDT probe as -e spells it, its arguments as the note types them. */
static void print_usdt(const char *provider, const char *name, const char *types,
		       bool semaphore, void *ctx)
{
	struct usdt_print *u = ctx;
	char p[256], n[256], path[4096];
	unsigned k = 0;

	printf("usdt:%s:%s", tk_visible(p, sizeof(p), provider), tk_visible(n, sizeof(n), name));
	if (u->names_only) {
		putchar('\n');
		return;
	}
	putchar('(');
	for (const char *t = types; *t; k++) {
		size_t n = strcspn(t, " ");

		printf("%sarg%u:%.*s", k ? ", " : "", k, (int)n, t);
		t += n + (t[n] == ' ');
	}
	printf(")\n\tfile: %s\n", tk_visible(path, sizeof(path), u->path));
	/* guarded code runs only while a tracer holds the semaphore */
	if (semaphore)
		printf("\tsemaphore: yes (raised while it is traced)\n");
	putchar('\n');
}

/* The USDT probes (stapsdt notes) of @path and the libraries it loads,
 * to @fn; @path_of (if any) is set to each file's path first. */
static void each_usdt(const char *path, tk_usdt_visit_fn fn, void *ctx,
		      const char **path_of)
{
	struct tk_elf_modules m;
	char err[512];

	if (tk_elf_modules_read(path, true, &m, err, sizeof(err)) < 0)
		return;
	for (unsigned i = 0; i < m.count; i++) {
		if (path_of)
			*path_of = m.module[i].path;
		tk_usdt_list(m.module[i].path, fn, ctx, err, sizeof(err));
	}
	tk_elf_modules_free(&m);
}

static void list_usdt(const char *path, bool names_only)
{
	struct usdt_print u = { .names_only = names_only };

	each_usdt(path, print_usdt, &u, &u.path);
}

static bool seen_before(long *seen, unsigned *n, long pid)
{
	for (unsigned i = 0; i < *n; i++)
		if (seen[i] == pid)
			return true;
	if (*n < 1024)
		seen[(*n)++] = pid;
	return false;
}

/* Instrumented processes: abstract sockets "@tracekit-PID" in
 * /proc/net/unix. */
static int list_processes(void)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[512];
	long seen[1024];
	unsigned nseen = 0;
	int found = 0;

	if (!f) {
		tk_error("cannot open '/proc/net/unix': %s", strerror(errno));
		return TK_EXIT_FAILURE;
	}
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, " @" TK_SOCKET_PREFIX);
		char comm[64] = "", path[64], shown[256];
		struct stat st;
		FILE *c;
		long pid;

		if (!at || !isdigit((unsigned char)at[2 + strlen(TK_SOCKET_PREFIX)]))
			continue;
		pid = strtol(at + 2 + strlen(TK_SOCKET_PREFIX), NULL, 10);
		if (seen_before(seen, &nseen, pid))
			continue; /* listening and connected sockets share the name */
		snprintf(path, sizeof(path), "/proc/%ld", pid);
		if (stat(path, &st) < 0 || (geteuid() != 0 && st.st_uid != geteuid()))
			continue; /* only processes that would answer us */
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		c = fopen(path, "r");
		if (!c)
			continue;
		if (fgets(comm, sizeof(comm), c))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(c);
		printf("%ld %s\n", pid, tk_visible(shown, sizeof(shown), comm));
		found++;
	}
	fclose(f);
	if (!found)
		fprintf(stderr, "tracekit: no instrumented process is running\n");
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct names {
	char **v;
	unsigned n;
};

static int names_add(struct names *l, char *name)
{
	char **grown = realloc(l->v, (l->n + 1) * sizeof(*grown));

	if (!grown) {
		free(name);
		return -ENOMEM;
	}
	l->v = grown;
	l->v[l->n++] = name;
	return 0;
}

static bool tracefs_up(struct tk_tracefs *fs)
{
	char err[256];

	if (tk_tracefs_open(fs, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return false;
	}
	return true;
}

/* The kernel's events matching @glob, as "system:event". */
static int kernel_event_names(const struct tk_tracefs *fs, const char *glob,
			      struct names *l)
{
	struct tk_kevents all;
	int ret = tk_kevents_read(&all);

	if (ret < 0) {
		tk_error("cannot list the kernel's events in '%s/events': %s", fs->dir,
			 strerror(-ret));
		return -1;
	}
	for (unsigned i = 0; i < all.count && !ret; i++) {
		char *colon = strchr(all.name[i], ':');
		const char *kind;

		/* a recording's probes, as -e and report name them:
		 * tracekit_PID_uprobe:f is uprobe:f */
		if (colon) {
			*colon = '\0';
			kind = tk_uprobe_kind_of(all.name[i]);
			*colon = ':';
			if (kind)
				memmove(all.name[i], colon - strlen(kind),
					strlen(colon - strlen(kind)) + 1);
		}
		if (glob && !tk_pattern_match(glob, all.name[i]))
			continue;
		ret = names_add(l, all.name[i]);
		all.name[i] = NULL; /* l has it, or names_add freed it */
	}
	tk_kevents_free(&all);
	if (ret < 0)
		tk_error("out of memory listing the kernel's events");
	return ret;
}

/* The kernel's tracers that record and start can use, on one line as
 * available_tracers has them (tried in an instance of our own, as theirs
 * are); those the kernel offers but refuses, on stderr. */
static int list_tracers(void)
{
	struct tk_tracefs fs;
	struct tk_kinstance k = { 0 };
	char err[512], name[64], usable[512], refused[512];
	int ret;

	if (tk_tracefs_open(&fs, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return TK_EXIT_FAILURE;
	}
	snprintf(name, sizeof(name), TK_KINSTANCE_PREFIX "-%d", (int)getpid());
	if (tk_kinstance_create(&k, name, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		tk_tracefs_close(&fs);
		return TK_EXIT_FAILURE;
	}
	ret = tk_ktracers_usable(&k, usable, sizeof(usable), refused, sizeof(refused));
	tk_kinstance_destroy(&k);
	tk_tracefs_close(&fs);
	if (ret < 0) {
		tk_error("cannot read the kernel's tracers: %s", strerror(-ret));
		return TK_EXIT_FAILURE;
	}
	printf("%s\n", usable);
	if (refused[0])
		fprintf(stderr, "tracekit: the kernel refuses here: %s\n", refused);
	return 0;
}

/* The top level's options, one per line, "name" when on and "noname"
 * when off (the trace_options file, as trace-cmd list -o prints it). */
static int list_options(void)
{
	char *text, err[512];

	if (tk_koptions_read(&text, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return TK_EXIT_FAILURE;
	}
	fputs(text, stdout);
	free(text);
	return 0;
}

static void put_line(const char *line, void *ctx)
{
	fputs(line, ctx);
}

/* Functions the function tracer can trace: available_filter_functions,
 * "name" or "name [module]" per line. */
static int list_functions(const char *glob)
{
	char err[512];

	if (tk_kfunctions(glob, put_line, stdout, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		return TK_EXIT_FAILURE;
	}
	return 0;
}

enum list_mode { LIST_USER, LIST_EVENTS, LIST_TRACERS, LIST_FUNCTIONS, LIST_OPTIONS };

static int list_kernel(enum list_mode mode, const char *glob)
{
	struct tk_tracefs fs;
	int ret;

	if (!tracefs_up(&fs))
		return TK_EXIT_FAILURE;
	if (mode == LIST_TRACERS)
		ret = list_tracers();
	else if (mode == LIST_OPTIONS)
		ret = list_options();
	else
		ret = list_functions(glob);
	tk_tracefs_close(&fs);
	return ret;
}

/* @arg as a target: itself, but a bare name that is no file here and no
 * pid is the command it names in $PATH, as record runs it.  Malloc'd. */
static char *target_of(const char *arg)
{
	struct stat st;
	char *end, *found;
	long pid = strtol(arg, &end, 10);

	if ((*arg && !*end && pid > 0) || strchr(arg, '/') || stat(arg, &st) == 0 ||
	    !(found = find_program(arg, true)))
		return strdup(arg);
	return found;
}

static bool is_target(const char *arg)
{
	struct stat st;
	char *end;
	long pid = strtol(arg, &end, 10);

	return (*arg && !*end && pid > 0) || stat(arg, &st) == 0;
}

static int read_target(const char *what, struct event_list *l, bool names_only)
{
	char *end;
	long pid = strtol(what, &end, 10);

	if (*what && !*end && pid > 0)
		return list_process((pid_t)pid, l, names_only);
	return list_file(what, l);
}

struct usdt_names {
	struct names *names;
	const char *glob;
	int ret;
};

/* A file's USDT probe as -e takes it, among the names -e lists. */
static void add_usdt_name(const char *provider, const char *name, const char *types,
			  bool semaphore, void *ctx)
{
	struct usdt_names *u = ctx;
	char *full;

	(void)types;
	(void)semaphore;
	if (u->ret || asprintf(&full, "usdt:%s:%s", provider, name) < 0) {
		u->ret = -1;
		return;
	}
	if (u->glob && !tk_pattern_match(u->glob, full))
		free(full);
	else if (names_add(u->names, full) < 0)
		u->ret = -1;
}

/* -e: kernel events and the target's user events and USDT probes, names
 * only, sorted. */
static int list_event_names(const char *glob, const char *target)
{
	struct event_list l = { 0, NULL };
	struct names names = { NULL, 0 };
	struct usdt_names u = { &names, glob, 0 };
	struct tk_tracefs fs;
	char shown[1024];
	int ret = 0;

	if (target && read_target(target, &l, true) < 0)
		return TK_EXIT_FAILURE;
	if (target && !isdigit((unsigned char)*target)) {
		each_usdt(target, add_usdt_name, &u, NULL);
		ret = u.ret;
	}
	for (unsigned i = 0; i < l.count && !ret; i++) {
		char *name = strdup(l.events[i].full_name);

		if (!name || (glob && !tk_pattern_match(glob, name)))
			free(name);
		else if (names_add(&names, name) < 0)
			ret = -1;
	}
	for (unsigned i = 0; i < l.count; i++)
		tk_event_info_free(&l.events[i]);
	free(l.events);
	if (!ret && tracefs_up(&fs)) {
		ret = kernel_event_names(&fs, glob, &names);
		tk_tracefs_close(&fs);
	} else {
		ret = -1;
	}
	if (!ret && names.n) {
		qsort(names.v, names.n, sizeof(*names.v), name_cmp);
		for (unsigned i = 0; i < names.n; i++)
			if (!i || strcmp(names.v[i], names.v[i - 1]))
				printf("%s\n", tk_visible(shown, sizeof(shown), names.v[i]));
	} else if (!ret) {
		tk_error("no event matches '%s'", glob ? glob : "*");
		ret = -1;
	}
	for (unsigned i = 0; i < names.n; i++)
		free(names.v[i]);
	free(names.v);
	return ret ? TK_EXIT_FAILURE : 0;
}

static int event_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tk_event_info *)a)->full_name,
		      ((const struct tk_event_info *)b)->full_name);
}

int cmd_list(int argc, char **argv)
{
	struct event_list l = { 0, NULL };
	enum list_mode mode = LIST_USER;
	bool names_only = false;
	const char *what, *glob = NULL;
	char *target = NULL;
	struct opt_parser p;
	int c, nargs, ret;

	opt_init(&p, "list");
	while ((c = opt_next(&p, argc, argv)) != -1) {
		switch (c) {
		case 'e':
			mode = LIST_EVENTS;
			break;
		case 't':
			mode = LIST_TRACERS;
			break;
		case 'f':
			mode = LIST_FUNCTIONS;
			break;
		case 'o':
			mode = LIST_OPTIONS;
			break;
		case OPT_NAMES:
			names_only = true;
			break;
		case 'h':
			printf("usage: tracekit list [--names] [PID | PROGRAM | LIBRARY]\n"
			       "       tracekit list -e [GLOB] [PID | PROGRAM | LIBRARY]\n"
			       "       tracekit list -t | -f [GLOB] | -o\n\n"
			       "  -e [GLOB]  event names, kernel and the target's (user) together\n"
			       "  -t         the kernel tracers record and start can use\n"
			       "             (those the kernel offers but refuses: on stderr)\n"
			       "  -f [GLOB]  kernel functions the function tracer can trace\n"
			       "  -o         the kernel's trace options (\"noNAME\" when off)\n");
			return 0;
		default:
			return TK_EXIT_USAGE;
		}
	}
	nargs = argc - optind;
	if (mode == LIST_EVENTS) {
		if (!opt_operands_max(&p, argc, argv, 2))
			return TK_EXIT_USAGE;
		target = nargs ? target_of(argv[optind + nargs - 1]) : NULL;
		if (nargs && !target) {
			tk_error("out of memory");
			return TK_EXIT_FAILURE;
		}
		if (nargs == 2)
			ret = list_event_names(argv[optind], target);
		else if (nargs == 1 && is_target(target))
			ret = list_event_names(NULL, target);
		else
			ret = list_event_names(nargs ? argv[optind] : NULL, NULL);
		free(target);
		return ret;
	}
	if (mode != LIST_USER) {
		if (!opt_operands_max(&p, argc, argv, mode == LIST_FUNCTIONS))
			return TK_EXIT_USAGE;
		glob = nargs ? argv[optind] : NULL;
		return list_kernel(mode, glob);
	}
	if (optind >= argc)
		return list_processes();
	what = target = target_of(argv[optind]);
	if (!what) {
		tk_error("out of memory");
		return TK_EXIT_FAILURE;
	}
	if (read_target(what, &l, names_only) < 0) {
		free(target);
		return TK_EXIT_FAILURE;
	}
	if (l.count)
		qsort(l.events, l.count, sizeof(*l.events), event_cmp);
	for (unsigned i = 0; i < l.count; i++) {
		/* a file's sections may hold one event more than once */
		if (i && !strcmp(l.events[i].full_name, l.events[i - 1].full_name) &&
		    !(l.events[i].flags & TK_DESC_MARKER))
			continue;
		print_event(&l.events[i], names_only);
	}
	/* USDT probes are not tracekit events: the line is true beside them */
	if (is_target(what) && !isdigit((unsigned char)*what))
		list_usdt(what, names_only);
	if (!l.count)
		fprintf(stderr, "tracekit: '%s' defines no tracekit events\n", what);
	for (unsigned i = 0; i < l.count; i++)
		tk_event_info_free(&l.events[i]);
	free(l.events);
	free(target);
	return 0;
}
