/* SPDX-License-Identifier: MIT */
/*
 * static-key.c - the call sites of every event, patched on and off.
 *
 * Each tk_trace()/tk_mark() site on x86-64 is a 5-byte instruction with an
 * entry in its module's "tk_keys" section (runtime.h, TK__SITE):
 *
 *   struct key_entry { int32 site, on, event; }   each relative to itself
 *
 * As compiled, the site jumps to a test of the event's enabled byte, so
 * it is right even if nothing here runs.  When a module registers and code
 * can be patched (text-patch.h), each site becomes a NOP while its event is
 * off and a jump to the event's code while it is on; the byte test is then
 * never executed.  Where patching is not possible the sites keep their
 * test: the "branch" mode, reported by `tracekit list PID` and `record`.
 * TRACEKIT_STATIC_KEYS=0 in the environment asks for that mode.
 *
 * All under the registry lock.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "text-patch.h"

struct key_entry {
	int32_t site;
	int32_t on;
	int32_t event;
};

struct site {
	uint8_t *addr;
	uint8_t *on;
	struct tk_event *ev;
	const char *module; /* its module's tk_meta start */
};

static struct site *all; /* sorted by event, then address */
static unsigned nall;
static int mode = -1; /* -1 not tried, 0 branch, 1 patching */
static const char *branch_why = "not tried";

static void *rel(const int32_t *field)
{
	return (char *)field + *field;
}

static int site_cmp(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	if (x->ev != y->ev)
		return x->ev < y->ev ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool patching(void)
{
	const char *env = getenv("TRACEKIT_STATIC_KEYS");

	if (mode >= 0)
		return mode == 1;
	if (env && !strcmp(env, "0")) {
		branch_why = "turned off by TRACEKIT_STATIC_KEYS=0";
		mode = 0;
	} else {
		mode = tk_text_patch_init(&branch_why) == 0;
	}
	return mode == 1;
}

static int patch_range(const struct site *s, unsigned n)
{
	struct tk_site_patch *p = malloc((n + 1) * sizeof(*p));
	int err;

	if (!p)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		p[i].addr = s[i].addr;
		tk_text_site_insn(s[i].addr, s[i].on,
				  __atomic_load_n(&s[i].ev->enabled, __ATOMIC_RELAXED),
				  p[i].insn);
	}
	err = tk_text_patch(p, n);
	free(p);
	return err;
}

void tk_keys_module_register_locked(const char *module, const char *start,
				    const char *stop)
{
	const struct key_entry *e = (const struct key_entry *)start;
	const struct key_entry *end = (const struct key_entry *)stop;
	struct site *grown, *mine;
	unsigned n = 0, count = (unsigned)(end - e);

	if (!start || !stop || stop <= start || !patching())
		return;
	grown = realloc(all, (nall + count) * sizeof(*all));
	if (!grown)
		return;
	all = grown;
	mine = malloc(count * sizeof(*mine));
	if (!mine)
		return;
	for (; e < end; e++) {
		struct tk_event *ev = rel(&e->event);

		if (!ev->priv) /* not a registered event: leave it testing */
			continue;
		mine[n].addr = rel(&e->site);
		mine[n].on = rel(&e->on);
		mine[n].ev = ev;
		mine[n].module = module;
		n++;
	}
	/* A failed patch leaves the sites as compiled, which is correct. */
	memcpy(all + nall, mine, n * sizeof(*mine));
	nall += n;
	qsort(all, nall, sizeof(*all), site_cmp);
	if (patch_range(mine, n) != 0)
		tk_keys_module_unregister_locked(module);
	free(mine);
}

void tk_keys_module_unregister_locked(const char *module)
{
	unsigned j = 0;

	for (unsigned i = 0; i < nall; i++)
		if (all[i].module != module)
			all[j++] = all[i];
	nall = j;
}

void tk_keys_update_locked(struct tk_event *ev)
{
	struct site key = { .ev = ev };
	unsigned lo = 0, hi = nall, first;

	if (mode != 1 || !nall)
		return;
	/* first site of ev */
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (all[mid].ev < key.ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < nall && all[lo].ev == ev)
		lo++;
	if (lo > first)
		patch_range(all + first, lo - first);
}

void tk_keys_init(void)
{
	patching();
}

bool tk_keys_active(const char **why)
{
	*why = mode == 1 ? NULL : branch_why;
	return mode == 1;
}

unsigned tk_keys_sites(void)
{
	return nall;
}
