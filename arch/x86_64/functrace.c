/* SPDX-License-Identifier: MIT */
/*
 * functrace.c (x86-64) - the bytes of a function tracer entry.
 *
 *   gcc  -fpatchable-function-entry=5     90 90 90 90 90   (FT_ENTRY_NOPS)
 *   clang -fpatchable-function-entry=5    0f 1f 44 00 08   (FT_ENTRY_NOP)
 *   gcc -pg -mfentry -mnop-mcount         0f 1f 44 00 00   (FT_ENTRY_NOP)
 *   traced                                e8 <rel32>       call the stub
 *
 * A stub is "jmp *0(%rip)" followed by the trampoline's address: 14 bytes
 * that reach anywhere, placed within a call's reach of the module.
 */
#include <string.h>
#include "functrace/arch.h"

void tk__ft_tramp(void);
void tk__ft_tramp_root(void);
void tk__ft_return(void);

static const uint8_t nop5[TK_SITE_BYTES] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

enum ft_entry_kind tk_ft_arch_entry_kind(const uint8_t *site)
{
	static const uint8_t nops[TK_SITE_BYTES] = { 0x90, 0x90, 0x90, 0x90, 0x90 };

	if (!memcmp(site, nop5, 4))
		return FT_ENTRY_NOP; /* any displacement byte */
	if (!memcmp(site, nops, TK_SITE_BYTES))
		return FT_ENTRY_NOPS;
	if (site[0] == 0xe8)
		return FT_ENTRY_CALL;
	return FT_ENTRY_NONE;
}

void tk_ft_arch_nop(uint8_t insn[TK_SITE_BYTES])
{
	memcpy(insn, nop5, TK_SITE_BYTES);
}

bool tk_ft_arch_call(const uint8_t *site, const uint8_t *target,
		     uint8_t insn[TK_SITE_BYTES])
{
	intptr_t rel = (intptr_t)target - (intptr_t)(site + TK_SITE_BYTES);
	int32_t r32 = (int32_t)rel;

	if (rel != r32)
		return false;
	insn[0] = 0xe8;
	memcpy(insn + 1, &r32, 4);
	return true;
}

uintptr_t tk_ft_arch_reach(void)
{
	return 0x7fff0000u;
}

static void stub(uint8_t *at, void (*target)(void))
{
	static const uint8_t jmp_rip[6] = { 0xff, 0x25, 0, 0, 0, 0 };
	uintptr_t t = (uintptr_t)target;

	memcpy(at, jmp_rip, sizeof(jmp_rip));
	memcpy(at + sizeof(jmp_rip), &t, sizeof(t));
}

void tk_ft_arch_stubs(uint8_t *page)
{
	stub(page, tk__ft_tramp);
	stub(page + FT_STUB_ROOT, tk__ft_tramp_root);
}

uintptr_t tk_ft_arch_return_hook(void)
{
	return (uintptr_t)tk__ft_return;
}

bool tk_ft_arch_supported(void)
{
	return true;
}
