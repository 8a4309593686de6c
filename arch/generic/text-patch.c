/* SPDX-License-Identifier: MIT */
/*
 * text-patch.c (generic) - no code patching: every site tests its event's
 * enabled byte, which the compiled code already does.
 */
#include <errno.h>
#include "lib/text-patch.h"

int tk_text_patch_init(const char **why)
{
	*why = "not supported on this architecture";
	return -ENOTSUP;
}

void tk_text_site_insn(uint8_t *site, uint8_t *target, bool on,
		       uint8_t insn[TK_SITE_BYTES])
{
	(void)site;
	(void)target;
	(void)on;
	(void)insn;
}

int tk_text_patch(const struct tk_site_patch *p, unsigned n)
{
	(void)p;
	(void)n;
	return -ENOTSUP;
}

bool tk_text_patchable_at(const void *addr)
{
	(void)addr;
	return false;
}
