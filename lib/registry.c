/* SPDX-License-Identifier: MIT */
/*
 * registry.c - every event of the process, with its id and enable state.
 *
 * Each module (the program, each shared object, dlopen'd ones too) calls
 * tk__module_register() from a constructor in every file that includes
 * tracekit.h; the registry walks the module's "tk_meta" section once and
 * counts further calls, so dlclose (the destructors) unregisters the module
 * when its last file goes.  Several descriptors may name one event object
 * (each file emits the descriptors of the events it sees): the object is
 * registered once.
 *
 * An event's state follows from the session's rules and its probes:
 *   record  = a session is active and a rule matches "provider:name"
 *   filter  = the first matching rule's filter, compiled for its fields
 *   enabled = record || probes connected
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "common/pattern.h"

struct reg_event {
	struct tk_event *ev;
	struct reg_module *module;
	struct reg_event *next;
	char full_name[]; /* provider:name */
};

struct reg_module {
	const char *start;
	const char *stop;
	const char *keys_start; /* its tk_keys section */
	const char *keys_stop;
	unsigned refs;
	struct reg_module *next;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reg_event *reg_events;
static struct reg_module *reg_modules;
static uint32_t reg_next_id;
struct tk_session_config tk_config;
static uint64_t geometry; /* struct tk_geometry packed, atomic */

void tk_registry_lock(void)
{
	pthread_mutex_lock(&reg_lock);
}

void tk_registry_unlock(void)
{
	pthread_mutex_unlock(&reg_lock);
}

void tk_config_publish_locked(void)
{
	uint64_t g = (uint64_t)tk_config.active;

	__atomic_store_n(&geometry, g, __ATOMIC_RELEASE);
}

struct tk_geometry tk_config_geometry(void)
{
	uint64_t g = __atomic_load_n(&geometry, __ATOMIC_ACQUIRE);
	struct tk_geometry out = {
		.active = g & 1,
	};

	return out;
}

static const char *desc_str(const struct tk_desc_head *d, uint16_t off)
{
	return (const char *)d + off;
}

/* Markers are named provider_event; the provider is what comes before the
 * first underscore ("mark" when there is none). */
static char *desc_full_name(const struct tk_desc_head *d)
{
	const char *prov = desc_str(d, d->off_provider);
	const char *name = desc_str(d, d->off_name);
	char *out;
	int n;

	if (d->flags & TK_DESC_MARKER) {
		const char *us = strchr(name, '_');

		if (us && us != name && us[1])
			n = asprintf(&out, "%.*s:%s", (int)(us - name), name,
				     us + 1);
		else
			n = asprintf(&out, "mark:%s", name);
	} else {
		n = asprintf(&out, "%s:%s", prov, name);
	}
	return n < 0 ? NULL : out;
}

static const struct tk_rule *first_matching_rule(const char *full_name)
{
	for (unsigned i = 0; i < tk_config.nrules; i++)
		if (tk_pattern_match(tk_config.rules[i].pattern, full_name))
			return &tk_config.rules[i];
	return NULL;
}

void tk_registry_apply_locked(struct tk_event *ev)
{
	const struct reg_event *re = ev->priv;
	const struct tk_rule *rule = NULL;
	struct tk_filter *filter = NULL;
	bool record = false;

	if (tk_config.active && re)
		rule = first_matching_rule(re->full_name);
	if (rule) {
		record = true;
		if (rule->filter && rule->filter[0]) {
			const struct tk_desc_head *d = ev->desc;
			struct tk_filter_error err;

			/* The recorder checked the filter against the fields
			 * it was told of; a mismatch leaves the event off. */
			if (tk_filter_compile(rule->filter,
					      (const struct tk_field_desc *)(d + 1),
					      d->nfields, &filter, &err) < 0)
				record = false;
		}
	}
	uint8_t was = ev->enabled, now;

	tk_filter_replace(ev, record ? filter : NULL);
	if (!record)
		tk_filter_free(filter);
	__atomic_store_n(&ev->record,
			 !record ? 0 : (tk_config.flags & TK_CONFIG_USER_STACK) && tk_ustack_id
					       ? TK__RECORD | TK__RECORD_STACK : TK__RECORD,
			 __ATOMIC_RELAXED);
	now = record || __atomic_load_n(&ev->probes, __ATOMIC_RELAXED);
	/* No partner: the sites test `enabled` (runtime.h TK__SITE,
	 * tracepoint.h tk_enabled) and then read `record` (TK__EVENT_EMIT,
	 * mark.c) with RELAXED loads, the filter and the probes under RCU,
	 * each on its own: a hit during a change acts on the old setting or
	 * the new one, and nothing it reads needs to come with the byte.
	 * The call sites' jumps follow (tk_keys_update_locked). */
	__atomic_store_n(&ev->enabled, now, __ATOMIC_RELAXED);
	if (now != was)
		tk_keys_update_locked(ev);
}

void tk_registry_apply_all_locked(void)
{
	for (struct reg_event *re = reg_events; re; re = re->next)
		tk_registry_apply_locked(re->ev);
}

static int announce_event(int fd, const struct tk_event *ev)
{
	const struct tk_desc_head *d = ev->desc;
	char buf[TK_MSG_MAX];
	struct tk_msg_event *m = (struct tk_msg_event *)buf;
	size_t len = sizeof(*m) + d->size;

	if (len > sizeof(buf))
		return -E2BIG;
	m->m.type = TK_MSG_EVENT;
	m->m.len = (uint32_t)len;
	m->id = ev->id;
	m->pad = 0;
	memcpy(m + 1, d, d->size);
	((struct tk_desc_head *)(m + 1))->event = NULL;
	return tk_send_to(fd, m, len, -1);
}

int tk_registry_announce_locked(int fd)
{
	struct tk_msg done = { TK_MSG_EVENTS_DONE, sizeof(done) };
	int err;

	for (struct reg_event *re = reg_events; re; re = re->next) {
		err = announce_event(fd, re->ev);
		if (err < 0)
			return err;
	}
	return tk_send_to(fd, &done, sizeof(done), -1);
}

static bool desc_valid(const struct tk_desc_head *d, const char *stop)
{
	size_t avail = (size_t)(stop - (const char *)d);

	return d->magic == TK_DESC_MAGIC && d->version == TK_DESC_VERSION &&
	       d->size >= sizeof(*d) && d->size <= avail && d->size % 8 == 0;
}

static void register_event(struct reg_module *mod,
			   const struct tk_desc_head *d)
{
	struct tk_event *ev = d->event;
	struct reg_event *re;
	char *full;

	if (!ev || ev->priv) /* already registered from another file */
		return;
	if (reg_next_id >= TK__ID_EXTENDED) /* ids are 16 bits, one is taken */
		return;
	full = desc_full_name(d);
	if (!full)
		return;
	re = malloc(sizeof(*re) + strlen(full) + 1);
	if (!re) {
		free(full);
		return;
	}
	re->ev = ev;
	re->module = mod;
	strcpy(re->full_name, full);
	free(full);
	ev->desc = d;
	ev->id = (uint16_t)reg_next_id++;
	ev->priv = re;
	re->next = reg_events;
	reg_events = re;
	if (tk_config.active) {
		int fd = tk_session_fd_locked();

		if (fd >= 0)
			announce_event(fd, ev);
	}
	tk_registry_apply_locked(ev);
}

static struct reg_module *find_module(const char *start)
{
	for (struct reg_module *m = reg_modules; m; m = m->next)
		if (m->start == start)
			return m;
	return NULL;
}

TK_EXPORT void tk__module_register(const char *start, const char *stop,
				    const char *keys_start, const char *keys_stop)
{
	if (!start || !stop || stop <= start)
		return;
	tk_runtime_init();
	tk_registry_add_module(start, stop, keys_start, keys_stop);
}

void tk_registry_add_module(const char *start, const char *stop,
			    const char *keys_start, const char *keys_stop)
{
	struct reg_module *mod;

	tk_registry_lock();
	mod = find_module(start);
	if (mod) {
		mod->refs++;
		goto out;
	}
	mod = calloc(1, sizeof(*mod));
	if (!mod)
		goto out;
	mod->start = start;
	mod->stop = stop;
	mod->keys_start = keys_start;
	mod->keys_stop = keys_stop;
	mod->refs = 1;
	mod->next = reg_modules;
	reg_modules = mod;
	/* The linker may pad between files' contributions with zeros. */
	for (const char *p = start; p + sizeof(struct tk_desc_head) <= stop;) {
		const struct tk_desc_head *d = (const struct tk_desc_head *)p;

		if (!desc_valid(d, stop)) {
			p += 8;
			continue;
		}
		register_event(mod, d);
		p += d->size;
	}
	tk_keys_module_register_locked(start, keys_start, keys_stop);
out:
	tk_registry_unlock();
}

static void unregister_events_of(struct reg_module *mod)
{
	struct reg_event **pp = &reg_events;

	while (*pp) {
		struct reg_event *re = *pp;

		if (re->module != mod) {
			pp = &re->next;
			continue;
		}
		*pp = re->next;
		__atomic_store_n(&re->ev->enabled, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&re->ev->record, 0, __ATOMIC_RELAXED);
		tk_filter_replace(re->ev, NULL);
		re->ev->priv = NULL;
		free(re);
	}
}

TK_EXPORT void tk__module_unregister(const char *start, const char *stop)
{
	struct reg_module **pp;

	(void)stop;
	if (!start)
		return;
	tk_registry_lock();
	for (pp = &reg_modules; *pp; pp = &(*pp)->next) {
		struct reg_module *mod = *pp;

		if (mod->start != start)
			continue;
		if (--mod->refs == 0) {
			tk_keys_module_unregister_locked(mod->start);
			unregister_events_of(mod);
			*pp = mod->next;
			free(mod);
		}
		break;
	}
	tk_registry_unlock();
}

static int set_local_rule(const char *pattern, bool on)
{
	int matched = 0;

	if (!pattern)
		return -EINVAL;
	tk_registry_lock();
	if (on) {
		struct tk_rule *rules = realloc(tk_config.rules,
			(tk_config.nrules + 1) * sizeof(*rules));

		if (!rules) {
			tk_registry_unlock();
			return -ENOMEM;
		}
		tk_config.rules = rules;
		rules[tk_config.nrules].pattern = strdup(pattern);
		rules[tk_config.nrules].filter = NULL;
		if (!rules[tk_config.nrules].pattern) {
			tk_registry_unlock();
			return -ENOMEM;
		}
		tk_config.nrules++;
	} else {
		/* Drop every rule equal to the pattern, and every rule that
		 * the pattern covers (disable "app:*" removes "app:req"). */
		unsigned j = 0;

		for (unsigned i = 0; i < tk_config.nrules; i++) {
			struct tk_rule *r = &tk_config.rules[i];

			if (strcmp(r->pattern, pattern) == 0 ||
			    tk_pattern_match(pattern, r->pattern)) {
				free(r->pattern);
				free(r->filter);
				continue;
			}
			tk_config.rules[j++] = *r;
		}
		tk_config.nrules = j;
	}
	for (struct reg_event *re = reg_events; re; re = re->next)
		if (tk_pattern_match(pattern, re->full_name))
			matched++;
	tk_registry_apply_all_locked();
	tk_registry_unlock();
	return matched;
}

TK_EXPORT int tk_enable(const char *pattern)
{
	return set_local_rule(pattern, true);
}

TK_EXPORT int tk_disable(const char *pattern)
{
	return set_local_rule(pattern, false);
}

TK_EXPORT const char *tk_version(void)
{
	return TK_VERSION_STRING;
}
