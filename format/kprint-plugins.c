/* SPDX-License-Identifier: MIT */
/*
 * kprint-plugins.c - libtraceevent's plugin handlers, mirrored
 * (kprint-plugins.h).
 *
 * trace-cmd loads libtraceevent's plugins, and some replace or prefix an
 * event's print fmt.  We recognise a handler by the plugin file it lives
 * in (dladdr) and the event it serves, and print what it prints.  An event
 * that one of these plugins serves is printed so even when libtraceevent
 * found no plugin to load (its plugin package is apart: trace-cmd depends
 * on it, we do not), so that report reads as trace-cmd whatever is
 * installed:
 *
 *   plugin_sched_switch  sched_switch:  COMM:PID [PRIO] STATE ==> COMM:PID [PRIO]
 *                        (STATE: the letters of the bits set, joined by
 *                        '|', R when none), sched_wakeup(_new):
 *                        COMM:PID [PRIO] success=N CPU:NNN; both register
 *                        each comm they print with its pid
 *   plugin_kmem          "(FUNC+0xOFF) " of call_site, then the print fmt
 *   plugin_hrtimer       hrtimer_expire_entry: hrtimer=0x.. now=N
 *                        function=FUNC/0x..; hrtimer_start: hrtimer=0x..
 *                        function=FUNC/0x.. expires=N softexpires=N
 *
 * The state letters changed with libtraceevent 1.8: before, a fixed
 * "SDTtZXxW" for bits 0-7; since, the letters the kernel's own format
 * gives prev_state in its __print_flags() (on Linux 6.x "SDTtXZPI"), so
 * that a kernel that renumbers its states still reads right.  We do as
 * the libtraceevent we run with does (its version, from its file name).
 *
 * Fields are read as libtraceevent reads them (zero-extended); a handler
 * is mirrored only when every field it reads is there with a numeric
 * size, so its error texts never arise.  Other plugins (function, kvm,
 * scsi, ...) stay with libtraceevent.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include "kprint-out.h"
#include "kprint-plugins.h"

enum kind { K_SWITCH, K_WAKEUP, K_CALL_SITE, K_HRT_EXPIRE, K_HRT_START };

struct fld {
	int off; /* -1: absent */
	int size;
};

#define STATE_BITS 32

struct tk_kplugin {
	enum kind kind;
	struct tep_handle *tep;
	struct tk_ksym_cache *syms;
	struct fld f[8];
	struct fld comm[2];
	char states[STATE_BITS + 1]; /* K_SWITCH: letter of each state bit */
};

/* The events each mirrored plugin registers a handler for, by system. */
static const struct {
	const char *plugin, *system, *event;
	enum kind kind;
} served[] = {
	{ "plugin_sched_switch.so", "sched", "sched_switch", K_SWITCH },
	{ "plugin_sched_switch.so", "sched", "sched_wakeup", K_WAKEUP },
	{ "plugin_sched_switch.so", "sched", "sched_wakeup_new", K_WAKEUP },
	{ "plugin_kmem.so", "kmem", "kfree", K_CALL_SITE },
	{ "plugin_kmem.so", "kmem", "kmalloc", K_CALL_SITE },
	{ "plugin_kmem.so", "kmem", "kmalloc_node", K_CALL_SITE },
	{ "plugin_kmem.so", "kmem", "kmem_cache_alloc", K_CALL_SITE },
	{ "plugin_kmem.so", "kmem", "kmem_cache_alloc_node", K_CALL_SITE },
	{ "plugin_kmem.so", "kmem", "kmem_cache_free", K_CALL_SITE },
	{ "plugin_hrtimer.so", "timer", "hrtimer_expire_entry", K_HRT_EXPIRE },
	{ "plugin_hrtimer.so", "timer", "hrtimer_start", K_HRT_START },
};

/* Field names by handler, in f[] order (NULL ends; '?' prefix: optional;
 * '|' joins alternatives tried in order). */
static const char *const field_names[][8] = {
	[K_SWITCH] = { "prev_pid", "prev_prio", "prev_state", "next_pid", "next_prio" },
	[K_WAKEUP] = { "pid", "?prio", "?success", "?target_cpu" },
	[K_CALL_SITE] = { "?call_site" },
	[K_HRT_EXPIRE] = { "timer|hrtimer", "now", "?function" },
	[K_HRT_START] = { "timer|hrtimer", "?function", "expires", "softexpires" },
};

static bool num_size(int size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

static const char *plugin_of(tep_event_handler_func fn)
{
	Dl_info info;
	const char *base;

	if (!dladdr((void *)fn, &info) || !info.dli_fname)
		return "";
	base = strrchr(info.dli_fname, '/');
	return base ? base + 1 : info.dli_fname;
}

bool tk_kplugin_saves_comms(struct tep_event *ev)
{
	return ev->handler && !strcmp(plugin_of(ev->handler), "plugin_sched_switch.so");
}

bool tk_kplugin_names_pids(const struct tk_kplugin *pl)
{
	return pl->kind == K_SWITCH || pl->kind == K_WAKEUP;
}

/* The handler a plugin we mirror has (or would have, had libtraceevent
 * loaded it) for @ev: its entry in served[], or -1. */
static int served_by(struct tep_event *ev)
{
	const char *plugin = ev->handler ? plugin_of(ev->handler) : NULL;

	for (int i = 0; i < (int)(sizeof(served) / sizeof(served[0])); i++)
		if (!strcmp(ev->name, served[i].event) &&
		    (plugin ? !strcmp(plugin, served[i].plugin)
			    : ev->system && !strcmp(ev->system, served[i].system)))
			return i;
	return -1;
}

bool tk_kplugin_serves(struct tep_event *ev)
{
	return served_by(ev) >= 0;
}

/* libtraceevent's version as major * 10000 + minor * 100 + patch, from the
 * name of the file it was loaded from (libtraceevent.so.1.7.1); -1 when
 * that does not say. */
static int version = -2;

void tk_kplugin_assume_tep_version(int v)
{
	version = v;
}

static int tep_version(void)
{
	Dl_info info;
	char *path;
	const char *v;
	unsigned major, minor, patch = 0;

	if (version != -2)
		return version;
	version = -1;
	if (!dladdr((void *)tep_alloc, &info) || !info.dli_fname)
		return version;
	path = realpath(info.dli_fname, NULL);
	v = path ? strstr(path, ".so.") : NULL;
	if (v && sscanf(v + 4, "%u.%u.%u", &major, &minor, &patch) >= 2)
		version = (int)(major * 10000 + minor * 100 + patch);
	free(path);
	return version;
}

/* Whether @arg, through the operators around it, reads field @name. */
static bool reads_field(const struct tep_print_arg *arg, const char *name)
{
	if (!arg)
		return false;
	if (arg->type == TEP_PRINT_FIELD)
		return arg->field.name && !strcmp(arg->field.name, name);
	if (arg->type == TEP_PRINT_TYPE)
		return reads_field(arg->typecast.item, name);
	if (arg->type == TEP_PRINT_OP)
		return reads_field(arg->op.left, name) || reads_field(arg->op.right, name);
	return false;
}

/* The __print_flags() of field @name in @arg or the operators around it. */
static const struct tep_print_flag_sym *flags_of(const struct tep_print_arg *arg,
						 const char *name)
{
	const struct tep_print_flag_sym *sym;

	if (!arg)
		return NULL;
	if (arg->type == TEP_PRINT_FLAGS)
		return reads_field(arg->flags.field, name) ? arg->flags.flags : NULL;
	if (arg->type != TEP_PRINT_OP)
		return NULL;
	sym = flags_of(arg->op.left, name);
	return sym ? sym : flags_of(arg->op.right, name);
}

/* The letter of each prev_state bit, as the plugin of the libtraceevent
 * we run with prints it (top comment); the letters stop at the first
 * bit that has none. */
static void state_letters(struct tep_event *ev, char *states)
{
	const struct tep_print_flag_sym *sym = NULL;
	int version = tep_version();

	memset(states, 0, STATE_BITS + 1);
	if (version >= 0 && version < 10800) {
		memcpy(states, "SDTtZXxW", 8);
		return;
	}
	for (const struct tep_print_arg *arg = ev->print_fmt.args; arg && !sym; arg = arg->next)
		sym = flags_of(arg, "prev_state");
	if (!sym) {
		memcpy(states, "SDTtXZPI", 8);
		return;
	}
	for (; sym; sym = sym->next) {
		unsigned long bits = strtoul(sym->value, NULL, 0);
		int bit = bits ? __builtin_ctzl(bits) : STATE_BITS;

		if (bit < STATE_BITS && sym->str && sym->str[0])
			states[bit] = sym->str[0];
	}
}

static bool find(struct tep_event *ev, const char *spec, struct fld *out)
{
	bool optional = spec[0] == '?';
	char names[64];
	char *save, *name;

	snprintf(names, sizeof(names), "%s", spec + optional);
	out->off = -1;
	for (name = strtok_r(names, "|", &save); name; name = strtok_r(NULL, "|", &save)) {
		struct tep_format_field *f = tep_find_field(ev, name);

		if (f && f->offset >= 0 && num_size(f->size)) {
			out->off = f->offset;
			out->size = f->size;
			return true;
		}
		if (f && !optional)
			return false; /* present but unreadable: its error text */
	}
	return optional;
}

static bool find_comm(struct tep_event *ev, const char *name, struct fld *out)
{
	struct tep_format_field *f = tep_find_any_field(ev, name);

	out->off = -1;
	if (!f)
		return true;
	if (f->offset < 0 || f->size <= 0)
		return false;
	out->off = f->offset;
	out->size = f->size;
	return true;
}

struct tk_kplugin *tk_kplugin_prepare(struct tep_handle *tep, struct tep_event *ev,
				      struct tk_ksym_cache *syms, bool *known)
{
	int i = served_by(ev);
	struct tk_kplugin *pl;
	enum kind kind;

	*known = false;
	if (i < 0)
		return NULL;
	kind = served[i].kind;
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return NULL;
	pl->kind = kind;
	pl->tep = tep;
	pl->syms = syms;
	for (int j = 0; j < 8; j++) {
		pl->f[j].off = -1;
		if (field_names[kind][j] && !find(ev, field_names[kind][j], &pl->f[j]))
			goto no;
	}
	if ((kind == K_SWITCH && (!find_comm(ev, "prev_comm", &pl->comm[0]) ||
				  !find_comm(ev, "next_comm", &pl->comm[1]))) ||
	    (kind == K_WAKEUP && !find_comm(ev, "comm", &pl->comm[0])))
		goto no;
	if (kind == K_SWITCH)
		state_letters(ev, pl->states);
	*known = true;
	return pl;
no:
	free(pl);
	return NULL;
}

bool tk_kplugin_prefix(const struct tk_kplugin *pl)
{
	return pl->kind == K_CALL_SITE;
}

static uint64_t rd(const unsigned char *data, const struct fld *f)
{
	uint64_t v = 0;

	memcpy(&v, data + f->off, (size_t)f->size); /* little-endian host */
	return v;
}

/* "%.*s" of the comm field, registered with pid as the plugin does. */
static void comm(const struct tk_kplugin *pl, const unsigned char *data,
		 const struct fld *f, uint64_t pid, struct tk_obuf *o, bool *new_comm)
{
	char name[256];
	size_t len = strnlen((const char *)data + f->off, (size_t)f->size);

	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, data + f->off, len);
	name[len] = '\0';
	tk_oput(o, name, len);
	if ((int)pid && tep_register_comm(pl->tep, name, (int)pid) == 0)
		*new_comm = true;
	tk_oput(o, ":", 1);
}

static void state(struct tk_obuf *o, const char *states, int val)
{
	bool found = false;

	for (unsigned i = 0; states[i]; i++) {
		if (!(val & (1 << i)))
			continue;
		if (found)
			tk_oput(o, "|", 1);
		found = true;
		tk_oput(o, &states[i], 1);
	}
	if (!found)
		tk_oput(o, "R", 1);
}

/* tep_print_func_field(): " function=NAME/0x(start - addr)"; false when
 * the address is in no symbol (left to libtraceevent). */
static bool func_field(const struct tk_kplugin *pl, const unsigned char *data,
		       const struct fld *f, struct tk_obuf *o)
{
	const char *name;
	uint64_t start, v;

	if (f->off < 0)
		return true;
	v = rd(data, f);
	if (!(name = tk_ksym_find(pl->tep, pl->syms, v, &start)))
		return false;
	tk_oput(o, " function=", 10);
	tk_oput(o, name, strlen(name));
	tk_oput(o, "/0x", 3);
	tk_ohex(o, start - v);
	return true;
}

/* "%lld" of a value read zero-extended (never negative below 8 bytes) */
static void lld(struct tk_obuf *o, uint64_t v)
{
	tk_odec(o, (int64_t)v);
}

long tk_kplugin_run(const struct tk_kplugin *pl, const unsigned char *data,
		    unsigned size, char *out, size_t room, bool *then_fmt,
		    bool *new_comm)
{
	const struct fld *f = pl->f;
	struct tk_obuf o;

	tk_obuf_init(&o, out, room);
	(void)size;
	*then_fmt = false;
	switch (pl->kind) {
	case K_SWITCH: {
		uint64_t pid = rd(data, &f[0]);

		if (pl->comm[0].off >= 0)
			comm(pl, data, &pl->comm[0], pid, &o, new_comm);
		lld(&o, pid);
		tk_oput(&o, " [", 2);
		tk_odec(&o, (int)rd(data, &f[1]));
		tk_oput(&o, "] ", 2);
		state(&o, pl->states, (int)rd(data, &f[2]));
		tk_oput(&o, " ==> ", 5);
		pid = rd(data, &f[3]);
		if (pl->comm[1].off >= 0)
			comm(pl, data, &pl->comm[1], pid, &o, new_comm);
		lld(&o, pid);
		tk_oput(&o, " [", 2);
		tk_odec(&o, (int)rd(data, &f[4]));
		tk_oput(&o, "]", 1);
		break;
	}
	case K_WAKEUP: {
		uint64_t pid = rd(data, &f[0]);

		if (pl->comm[0].off >= 0)
			comm(pl, data, &pl->comm[0], pid, &o, new_comm);
		lld(&o, pid);
		if (f[1].off >= 0) {
			tk_oput(&o, " [", 2);
			lld(&o, rd(data, &f[1]));
			tk_oput(&o, "]", 1);
		}
		if (f[2].off >= 0) {
			tk_oput(&o, " success=", 9);
			lld(&o, rd(data, &f[2]));
		}
		if (f[3].off >= 0) {
			tk_oput(&o, " CPU:", 5);
			tk_onum(&o, rd(data, &f[3]), false, 10, false, 3, true);
		}
		break;
	}
	case K_CALL_SITE: {
		const char *name;
		uint64_t start, v;

		*then_fmt = true;
		if (f[0].off < 0)
			break;
		v = rd(data, &f[0]);
		if ((name = tk_ksym_find(pl->tep, pl->syms, v, &start))) {
			/* "(%s+0x%x) " of (int)(v - start) */
			tk_oput(&o, "(", 1);
			tk_oput(&o, name, strlen(name));
			tk_oput(&o, "+0x", 3);
			tk_ohex(&o, (uint32_t)(v - start));
			tk_oput(&o, ") ", 2);
		}
		break;
	}
	case K_HRT_EXPIRE:
		tk_oput(&o, "hrtimer=0x", 10);
		tk_ohex(&o, rd(data, &f[0]));
		tk_oput(&o, " now=", 5);
		tk_onum(&o, rd(data, &f[1]), false, 10, false, 0, false);
		if (!func_field(pl, data, &f[2], &o))
			return -1;
		break;
	case K_HRT_START:
		tk_oput(&o, "hrtimer=0x", 10);
		tk_ohex(&o, rd(data, &f[0]));
		if (!func_field(pl, data, &f[1], &o))
			return -1;
		tk_oput(&o, " expires=", 9);
		tk_onum(&o, rd(data, &f[2]), false, 10, false, 0, false);
		tk_oput(&o, " softexpires=", 13);
		tk_onum(&o, rd(data, &f[3]), false, 10, false, 0, false);
		break;
	}
	return (long)o.n;
}
