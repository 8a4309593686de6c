/* SPDX-License-Identifier: MIT */
/*
 * probe.c - probes and filters, swapped while events fire.
 *
 * An event's probe array and filter are immutable once published; a change
 * publishes a new one and frees the old after an RCU grace period (liburcu,
 * "bulletproof" flavour: threads need no registration).  Readers are the
 * call sites, inside tk__probes_begin/end and tk__filter_pass.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <urcu-bp.h>
#include "internal.h"

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

TK_EXPORT struct tk__probe_array *tk__probes_begin(struct tk_event *ev)
{
	rcu_read_lock();
	return rcu_dereference(ev->probes);
}

TK_EXPORT void tk__probes_end(void)
{
	rcu_read_unlock();
}

TK_EXPORT int tk__filter_pass(struct tk_event *ev, const struct tk_value *values)
{
	const struct tk_filter *f;
	int pass = 1;

	rcu_read_lock();
	f = rcu_dereference(ev->filter);
	if (f)
		pass = tk_filter_match(f, values);
	rcu_read_unlock();
	return pass;
}

void tk_filter_replace(struct tk_event *ev, struct tk_filter *f)
{
	struct tk_filter *old = ev->filter;

	if (old == f)
		return;
	rcu_assign_pointer(ev->filter, f);
	if (old) {
		synchronize_rcu();
		tk_filter_free(old);
	}
}

static int find_probe(const struct tk__probe_array *a, tk__probe_fn fn,
		      void *data)
{
	for (unsigned i = 0; a && i < a->count; i++)
		if (a->probe[i].fn == fn && a->probe[i].data == data)
			return (int)i;
	return -1;
}

/* Publish @next in place of the event's array and free the old one once
 * no call site can be using it. */
static void publish(struct tk_event *ev, struct tk__probe_array *next)
{
	struct tk__probe_array *old = ev->probes;

	rcu_assign_pointer(ev->probes, next);
	tk_registry_lock();
	tk_registry_apply_locked(ev);
	tk_registry_unlock();
	synchronize_rcu();
	free(old);
}

TK_EXPORT int tk_probe_connect_raw(struct tk_event *ev, tk__probe_fn fn,
				   void *data)
{
	struct tk__probe_array *old, *next;
	unsigned n;

	if (!ev || !fn)
		return -EINVAL;
	pthread_mutex_lock(&probe_lock);
	old = ev->probes;
	if (find_probe(old, fn, data) >= 0) {
		pthread_mutex_unlock(&probe_lock);
		return -EEXIST;
	}
	n = old ? old->count : 0;
	next = malloc(sizeof(*next) + (n + 1) * sizeof(next->probe[0]));
	if (!next) {
		pthread_mutex_unlock(&probe_lock);
		return -ENOMEM;
	}
	next->count = n + 1;
	for (unsigned i = 0; i < n; i++)
		next->probe[i] = old->probe[i];
	next->probe[n].fn = fn;
	next->probe[n].data = data;
	publish(ev, next);
	pthread_mutex_unlock(&probe_lock);
	return 0;
}

TK_EXPORT int tk_probe_disconnect_raw(struct tk_event *ev, tk__probe_fn fn,
				      void *data)
{
	struct tk__probe_array *old, *next = NULL;
	int at;

	if (!ev || !fn)
		return -EINVAL;
	pthread_mutex_lock(&probe_lock);
	old = ev->probes;
	at = find_probe(old, fn, data);
	if (at < 0) {
		pthread_mutex_unlock(&probe_lock);
		return -ENOENT;
	}
	if (old->count > 1) {
		next = malloc(sizeof(*next) +
			      (old->count - 1) * sizeof(next->probe[0]));
		if (!next) {
			pthread_mutex_unlock(&probe_lock);
			return -ENOMEM;
		}
		next->count = 0;
		for (unsigned i = 0; i < old->count; i++)
			if ((int)i != at)
				next->probe[next->count++] = old->probe[i];
	}
	publish(ev, next);
	pthread_mutex_unlock(&probe_lock);
	return 0;
}
