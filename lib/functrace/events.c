/* SPDX-License-Identifier: MIT */
/*
 * events.c - the function tracer's built-in events, registered like any
 * module's (registry.c) the first time a session asks for the tracer, so
 * they get ids and descriptors the recorder and the readers know:
 *
 *   ftrace:function        ip (ptr), parent_ip (ptr)   -p function
 *   ftrace:funcgraph_entry func (ptr), depth (u32)     -p function_graph
 *   ftrace:funcgraph_exit  func (ptr), depth (u32)
 *   ftrace:user_stack      stack (bytes: u64 addresses) --func-stack
 *   ftrace:event_stack     stack (bytes: u64 addresses) --ustack: after a
 *                          user event, by lib/ustack.c
 *
 * Durations are not recorded: a reader takes them from the timestamps of
 * entry and exit.  The events are written straight into the thread's
 * buffer by handler.c, whatever -e selects.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "lib/internal.h"
#include "functrace.h"

struct ft_event_def {
	const char *name;
	const char *fmt;
	const char *args;
	unsigned nfields;
	struct tk_field_desc field[2];
};

static const struct ft_event_def defs[] = {
	{ "function", "ip=0x%lx parent_ip=0x%lx", "ip, parent_ip", 2,
	  { { "ip", TK_KIND_PTR, 8, 0, 0 }, { "parent_ip", TK_KIND_PTR, 8, 0, 0 } } },
	{ "funcgraph_entry", "func=0x%lx depth=%u", "func, depth", 2,
	  { { "func", TK_KIND_PTR, 8, 0, 0 }, { "depth", TK_KIND_UINT, 4, 0, 0 } } },
	{ "funcgraph_exit", "func=0x%lx depth=%u", "func, depth", 2,
	  { { "func", TK_KIND_PTR, 8, 0, 0 }, { "depth", TK_KIND_UINT, 4, 0, 0 } } },
	{ "user_stack", "", "", 1, { { "stack", TK_KIND_BYTES, 0, 0, 0 } } },
	{ "event_stack", "", "", 1, { { "stack", TK_KIND_BYTES, 0, 0, 0 } } },
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

static struct tk_event events[NDEFS];
static uint64_t blob[NDEFS * 64]; /* the descriptors, 8-aligned */
static bool registered;

/* Lay out one descriptor (tracekit/desc.h) at p; returns its size. */
static size_t build(char *p, const struct ft_event_def *d, struct tk_event *ev)
{
	struct tk_desc_head *h = (struct tk_desc_head *)p;
	size_t off = sizeof(*h) + d->nfields * sizeof(struct tk_field_desc);
	const char *strs[4] = { "ftrace", d->name, d->fmt, d->args };
	uint16_t *offs[4] = { &h->off_provider, &h->off_name, &h->off_fmt,
			      &h->off_args };

	memset(h, 0, sizeof(*h));
	h->magic = TK_DESC_MAGIC;
	h->version = TK_DESC_VERSION;
	h->nfields = (uint16_t)d->nfields;
	h->event = ev;
	memcpy(h + 1, d->field, d->nfields * sizeof(struct tk_field_desc));
	for (int i = 0; i < 4; i++) {
		size_t len = strlen(strs[i]) + 1;

		*offs[i] = (uint16_t)off;
		memcpy(p + off, strs[i], len);
		off += len;
	}
	off = (off + 7) & ~(size_t)7;
	h->size = (uint32_t)off;
	return off;
}

int tk_ft_events_register(void)
{
	char *p = (char *)blob;

	if (registered)
		return 0;
	memset(blob, 0, sizeof(blob));
	for (unsigned i = 0; i < NDEFS; i++)
		p += build(p, &defs[i], &events[i]);
	tk_registry_add_module((const char *)blob, p, NULL, NULL);
	if (!events[0].priv)
		return -ENOMEM;
	tk_ft.id_function = events[0].id;
	tk_ft.id_entry = events[1].id;
	tk_ft.id_exit = events[2].id;
	tk_ft.id_stack = events[3].id;
	tk_ustack_id = events[4].id;
	registered = true;
	return 0;
}
