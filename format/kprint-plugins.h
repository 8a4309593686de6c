/* SPDX-License-Identifier: MIT */
/*
 * kprint-plugins.h - the field text libtraceevent's plugins give some
 * events (the ones trace-cmd loads: sched_switch, kmem, hrtimer), printed
 * straight from the record (kprint-plugins.c).
 */
#ifndef TK_KPRINT_PLUGINS_H
#define TK_KPRINT_PLUGINS_H

#include <stdbool.h>
#include <stddef.h>

struct tep_handle;
struct tep_event;
struct tk_kplugin;
struct tk_ksym_cache;

/* The plugin handler of @ev, mirrored: the handler libtraceevent loaded
 * for it, or the one a plugin we mirror registers for such an event when
 * libtraceevent loaded none.  NULL when there is none we mirror, or it
 * cannot be mirrored for this format (*known false in both cases).
 * Symbol lookups go through @syms (may be NULL).  Free with free(). */
struct tk_kplugin *tk_kplugin_prepare(struct tep_handle *tep, struct tep_event *ev,
				      struct tk_ksym_cache *syms, bool *known);

/* Whether a plugin we mirror serves @ev (tk_kplugin_prepare finds it). */
bool tk_kplugin_serves(struct tep_event *ev);

/* Print as the plugins of libtraceevent @version (major * 10000 + minor
 * * 100 + patch) do, not as those of the one loaded; for tests. */
void tk_kplugin_assume_tep_version(int version);

/* True when the handler comes from plugin_sched_switch (it registers the
 * comms it prints, which changes the COMM column of later lines). */
bool tk_kplugin_saves_comms(struct tep_event *ev);

/* True when the handler prints a prefix to the event's print fmt, false
 * when it prints instead of it. */
bool tk_kplugin_prefix(const struct tk_kplugin *pl);

/* Print what the handler prints for a record: the bytes written to
 * out[0..room), or -1 when this record must go through libtraceevent.
 * *then_fmt: the event's print fmt follows; *new_comm: a pid got a comm. */
/* True when running @pl registers the comms it prints (sched_switch,
 * sched_wakeup): as libtraceevent's plugin_sched_switch does. */
bool tk_kplugin_names_pids(const struct tk_kplugin *pl);

long tk_kplugin_run(const struct tk_kplugin *pl, const unsigned char *data,
		    unsigned size, char *out, size_t room, bool *then_fmt,
		    bool *new_comm);

#endif /* TK_KPRINT_PLUGINS_H */
