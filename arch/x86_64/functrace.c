/* SPDX-License-Identifier: MIT */
/*
 * functrace.c (x86-64) - the bytes of a function tracer entry.
 *
 *   gcc  -fpatchable-function-entry=5     90 90 90 90 90   (FT_ENTRY_NOPS)
 *   clang -fpatchable-function-entry=5    0f 1f 44 00 08   (FT_ENTRY_NOP)
 *   gcc -pg -mfentry -mnop-mcount         0f 1f 44 00 00   (FT_ENTRY_NOP)
 *   traced                                e9 <rel32>       jump to its stub
 *
 * The stubs of a module are an area within a jump's reach of it:
 *
 *   0   jmp *0(%rip); .quad tk__ft_tramp          (14 bytes: reach anywhere)
 *   16  jmp *0(%rip); .quad tk__ft_tramp_root
 *   32 + 32 i       entry i: movabs $entry+5, %r11; jmp area+0
 *   32 + 32 i + 16  entry i as a -g root: the same, jmp area+16
 *
 * A stub per entry tells the trampoline which function it is without a
 * call, so the CPU's return stack stays in step with the real one
 * (functrace-tramp.S).
 *
 * A library call is hooked in its GOT slot (an absolute address: the
 * stubs can be anywhere), 48 bytes of code per slot, written once:
 *
 *   0   movabs $pair, %r11; jmp *0(%rip); .quad tk__ft_tramp_plt
 *   24  the same with tk__ft_tramp_plt_root (-g)
 *
 * where pair, in writable memory apart from the code, is {slot (the
 * function recorded), target (where the call goes on)}.
 */
#include <string.h>
#include "lib/functrace/arch.h"

void tk__ft_tramp(void);
void tk__ft_tramp_root(void);
void tk__ft_tramp_plt(void);
void tk__ft_tramp_plt_root(void);
void tk__ft_return(void);

static const uint8_t nop5[TK_SITE_BYTES] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

enum ft_entry_kind tk_ft_arch_entry_kind(const uint8_t *site)
{
	static const uint8_t nops[TK_SITE_BYTES] = { 0x90, 0x90, 0x90, 0x90, 0x90 };

	if (!memcmp(site, nop5, 4))
		return FT_ENTRY_NOP; /* any displacement byte */
	if (!memcmp(site, nops, TK_SITE_BYTES))
		return FT_ENTRY_NOPS;
	if (site[0] == 0xe8 || site[0] == 0xe9)
		return FT_ENTRY_CALL;
	return FT_ENTRY_NONE;
}

void tk_ft_arch_nop(uint8_t insn[TK_SITE_BYTES])
{
	memcpy(insn, nop5, TK_SITE_BYTES);
}

/* "jmp target" (e9 rel32) at @site into @insn; false if out of reach. */
static bool jump(const uint8_t *site, const uint8_t *target, uint8_t insn[5])
{
	intptr_t rel = (intptr_t)target - (intptr_t)(site + 5);
	int32_t r32 = (int32_t)rel;

	if (rel != r32)
		return false;
	insn[0] = 0xe9;
	memcpy(insn + 1, &r32, 4);
	return true;
}

bool tk_ft_arch_jump(const uint8_t *site, const uint8_t *target,
		     uint8_t insn[TK_SITE_BYTES])
{
	return jump(site, target, insn);
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

#define STUB_HEAD 32
#define STUB_SITE 32

size_t tk_ft_arch_stubs_size(unsigned nsites)
{
	return STUB_HEAD + (size_t)nsites * STUB_SITE;
}

void tk_ft_arch_stubs_init(uint8_t *area)
{
	memset(area, 0xcc, STUB_HEAD);
	stub(area, tk__ft_tramp);
	stub(area + 16, tk__ft_tramp_root);
}

void tk_ft_arch_stub_site(uint8_t *area, unsigned i, const uint8_t *entry)
{
	uint8_t *at = area + STUB_HEAD + (size_t)i * STUB_SITE;
	uintptr_t next = (uintptr_t)entry + TK_SITE_BYTES;

	for (int root = 0; root < 2; root++, at += 16) {
		at[0] = 0x49; /* movabs $next, %r11 */
		at[1] = 0xbb;
		memcpy(at + 2, &next, 8);
		jump(at + 10, area + 16 * root, at + 10); /* within the area */
		at[15] = 0xcc;
	}
}

const uint8_t *tk_ft_arch_stub(const uint8_t *area, unsigned i, bool root)
{
	return area + STUB_HEAD + (size_t)i * STUB_SITE + (root ? 16 : 0);
}

#define PLT_STUB 48

size_t tk_ft_arch_plt_stubs_size(unsigned nslots)
{
	return (size_t)nslots * PLT_STUB;
}

void tk_ft_arch_plt_stub(uint8_t *area, unsigned i, const uintptr_t pair[2])
{
	uint8_t *at = area + (size_t)i * PLT_STUB;
	uintptr_t p = (uintptr_t)pair;

	for (int root = 0; root < 2; root++) {
		uint8_t *s = at + 24 * root;

		s[0] = 0x49; /* movabs $pair, %r11 */
		s[1] = 0xbb;
		memcpy(s + 2, &p, 8);
		stub(s + 10, root ? tk__ft_tramp_plt_root : tk__ft_tramp_plt);
	}
}

uintptr_t tk_ft_arch_plt_entry(const uint8_t *area, unsigned i, bool root)
{
	return (uintptr_t)(area + (size_t)i * PLT_STUB + (root ? 24 : 0));
}

uintptr_t tk_ft_arch_return_hook(void)
{
	return (uintptr_t)tk__ft_return;
}

bool tk_ft_arch_supported(void)
{
	return true;
}
