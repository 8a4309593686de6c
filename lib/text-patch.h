/* SPDX-License-Identifier: MIT */
/*
 * text-patch.h - rewrite call sites in running code (arch/<arch>/).
 *
 * A static-key site is 5 bytes (x86-64).  As compiled it is a jump to a
 * test of the event's enabled byte, which is correct without any patching
 * (the fallback).  Where code can be patched, each site becomes a NOP
 * while its event is off and a jump to the event's code while it is on.
 */
#ifndef TK_TEXT_PATCH_H
#define TK_TEXT_PATCH_H

#include <stdbool.h>
#include <stdint.h>

#define TK_SITE_BYTES 5

struct tk_site_patch {
	uint8_t *addr;
	uint8_t insn[TK_SITE_BYTES];
};

/* Prepare: returns 0 when sites can be patched here, else -errno with a
 * short reason in *why (static string). */
int tk_text_patch_init(const char **why);

/* The instruction a site holds when its event is on (jump to @target)
 * or off (NOP). */
void tk_text_site_insn(uint8_t *site, uint8_t *target, bool on,
		       uint8_t insn[TK_SITE_BYTES]);

/* Whether a site at @addr can be rewritten safely (its first two bytes
 * in one cache line); tk_text_patch() leaves the others as they are. */
bool tk_text_patchable_at(const void *addr);

/* Rewrite the sites, safely while other threads run them.  Sites whose
 * bytes already are the wanted ones are skipped.  Returns 0 or -errno. */
int tk_text_patch(const struct tk_site_patch *p, unsigned n);

#endif /* TK_TEXT_PATCH_H */
