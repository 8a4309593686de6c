/* SPDX-License-Identifier: MIT */
/*
 * functrace.c (generic) - no trampolines: patchable entries stay NOPs and
 * only -finstrument-functions builds can be traced here.
 */
#include "lib/functrace/arch.h"

enum ft_entry_kind tk_ft_arch_entry_kind(const uint8_t *site)
{
	(void)site;
	return FT_ENTRY_NONE;
}

void tk_ft_arch_nop(uint8_t insn[TK_SITE_BYTES])
{
	(void)insn;
}

bool tk_ft_arch_jump(const uint8_t *site, const uint8_t *target,
		     uint8_t insn[TK_SITE_BYTES])
{
	(void)site;
	(void)target;
	(void)insn;
	return false;
}

uintptr_t tk_ft_arch_reach(void)
{
	return 0;
}

size_t tk_ft_arch_stubs_size(unsigned nsites)
{
	(void)nsites;
	return 0;
}

void tk_ft_arch_stubs_init(uint8_t *area)
{
	(void)area;
}

void tk_ft_arch_stub_site(uint8_t *area, unsigned i, const uint8_t *entry)
{
	(void)area;
	(void)i;
	(void)entry;
}

const uint8_t *tk_ft_arch_stub(const uint8_t *area, unsigned i, bool root)
{
	(void)i;
	(void)root;
	return area;
}

size_t tk_ft_arch_plt_stubs_size(unsigned nslots)
{
	(void)nslots;
	return 0;
}

void tk_ft_arch_plt_stub(uint8_t *area, unsigned i, const uintptr_t pair[2])
{
	(void)area;
	(void)i;
	(void)pair;
}

uintptr_t tk_ft_arch_plt_entry(const uint8_t *area, unsigned i, bool root)
{
	(void)area;
	(void)i;
	(void)root;
	return 0;
}

uintptr_t tk_ft_arch_return_hook(void)
{
	return 0;
}

bool tk_ft_arch_supported(void)
{
	return false;
}
