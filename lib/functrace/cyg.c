/* SPDX-License-Identifier: MIT */
/*
 * cyg.c - the portable fallback: code built with -finstrument-functions
 * calls __cyg_profile_func_enter/exit at every function's entry and exit.
 * libtracekit defines both (ahead of the C library's empty ones), so such
 * a build is traced wherever it runs, patching nothing.  Each call tests
 * one flag (tk_ft.cyg); while it is on, the function is looked up in the
 * selection (-l/-n/-g), an open-addressing hash of function addresses
 * replaced as a whole (RCU-style: the old table is kept, never freed, as
 * a reader may still be in it; it changes only when a session starts).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include "lib/internal.h"
#include "functrace.h"

struct cyg_table {
	unsigned mask;
	struct {
		uintptr_t addr;
		uint8_t flags;
	} slot[];
};

static struct cyg_table *table;

static unsigned hash(uintptr_t a, unsigned mask)
{
	return (unsigned)((a >> 4) * 0x9e3779b97f4a7c15ull >> 32) & mask;
}

int tk_ft_cyg_set(const uintptr_t *addr, const uint8_t *flags, unsigned n)
{
	struct cyg_table *t;
	unsigned size = 16;

	while (size < 2 * n)
		size *= 2;
	t = calloc(1, sizeof(*t) + size * sizeof(t->slot[0]));
	if (!t)
		return -ENOMEM;
	t->mask = size - 1;
	for (unsigned i = 0; i < n; i++) {
		unsigned h = hash(addr[i], t->mask);

		while (t->slot[h].addr && t->slot[h].addr != addr[i])
			h = (h + 1) & t->mask;
		t->slot[h].addr = addr[i];
		t->slot[h].flags = flags[i];
	}
	/* the old table stays allocated: a hook may be reading it */
	__atomic_store_n(&table, t, __ATOMIC_RELEASE);
	return 0;
}

static unsigned lookup(uintptr_t a)
{
	const struct cyg_table *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	unsigned h;

	if (!t)
		return 0;
	for (h = hash(a, t->mask); t->slot[h].addr; h = (h + 1) & t->mask)
		if (t->slot[h].addr == a)
			return t->slot[h].flags;
	return 0;
}

TK_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	unsigned flags;

	if (TK__LIKELY(!FT_CYG_ON()))
		return;
	flags = lookup((uintptr_t)fn);
	if (flags)
		tk_ft_cyg_enter((uintptr_t)fn, (uintptr_t)site,
				(uintptr_t)__builtin_frame_address(0), flags);
}

TK_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	if (TK__LIKELY(!FT_CYG_ON()))
		return;
	if (lookup((uintptr_t)fn))
		tk_ft_cyg_exit((uintptr_t)fn, (uintptr_t)__builtin_frame_address(0));
}
