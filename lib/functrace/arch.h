/* SPDX-License-Identifier: MIT */
/*
 * arch.h - what the function tracer needs from arch/<arch>/functrace*.
 *
 * A patchable entry is TK_SITE_BYTES long (text-patch.h).  Untraced it
 * holds a NOP as the compiler left it (or five one-byte NOPs turned into
 * one NOP before any thread could be inside them); traced, a jump to the
 * entry's own stub near its module, which goes on to the trampoline.
 */
#ifndef TK_FUNCTRACE_ARCH_H
#define TK_FUNCTRACE_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/text-patch.h"

enum ft_entry_kind {
	FT_ENTRY_NONE = 0, /* not an entry we can patch */
	FT_ENTRY_NOP,      /* one NOP of TK_SITE_BYTES: patch any time */
	FT_ENTRY_NOPS,     /* single-byte NOPs: convert while no thread runs */
	FT_ENTRY_CALL,     /* already a call or jump (patched by someone else) */
};

/* What the bytes at an entry are. */
enum ft_entry_kind tk_ft_arch_entry_kind(const uint8_t *site);

/* The NOP a FT_ENTRY_NOPS entry becomes. */
void tk_ft_arch_nop(uint8_t insn[TK_SITE_BYTES]);

/* "jump to target" at site; false if target is out of reach. */
bool tk_ft_arch_jump(const uint8_t *site, const uint8_t *target,
		     uint8_t insn[TK_SITE_BYTES]);

/* How far the jump reaches either way. */
uintptr_t tk_ft_arch_reach(void);

/* A module's stubs: an area of tk_ft_arch_stubs_size(nsites) bytes within
 * reach of its entries, written (while writable) by stubs_init and one
 * stub_site per entry; tk_ft_arch_stub is where entry @i jumps, as a -g
 * root or not. */
size_t tk_ft_arch_stubs_size(unsigned nsites);
void tk_ft_arch_stubs_init(uint8_t *area);
void tk_ft_arch_stub_site(uint8_t *area, unsigned i, const uint8_t *entry);
const uint8_t *tk_ft_arch_stub(const uint8_t *area, unsigned i, bool root);

/* Library calls: a stub per GOT slot, in an area of
 * tk_ft_arch_plt_stubs_size(nslots) bytes anywhere (the slot holds an
 * absolute address), written while writable by tk_ft_arch_plt_stub.  A
 * call through it is recorded as function pair[0] (the slot), then goes
 * on to pair[1]; the pair stays writable, the code not.  What the slot
 * gets, as a -g root or not: tk_ft_arch_plt_entry.  Size 0: no library
 * calls on this architecture. */
size_t tk_ft_arch_plt_stubs_size(unsigned nslots);
void tk_ft_arch_plt_stub(uint8_t *area, unsigned i, const uintptr_t pair[2]);
uintptr_t tk_ft_arch_plt_entry(const uint8_t *area, unsigned i, bool root);

/* The address traced functions return through (function_graph). */
uintptr_t tk_ft_arch_return_hook(void);

/* Whether this architecture has trampolines at all. */
bool tk_ft_arch_supported(void);

#endif /* TK_FUNCTRACE_ARCH_H */
