/* SPDX-License-Identifier: MIT */
/*
 * text-patch.c (x86-64) - rewrite 5-byte call sites while threads run them.
 *
 * A site's first two bytes must not straddle a cache line: x86 stores
 * them in one atomic access then, aligned or not (static-key sites are at
 * even addresses, runtime.h; function entries may be anywhere).  To change
 * one:
 *
 *   1. store "jmp ." (eb fe, a jump to itself) over its first two bytes,
 *      in one atomic 16-bit store
 *   2. serialize every CPU running this process (membarrier SYNC_CORE)
 *   3. write bytes 2..4 of the new instruction
 *   4. serialize
 *   5. store the new first two bytes, again in one atomic store
 *   6. serialize
 *
 * A thread that reaches the site between 1 and 5 spins on the jump to
 * itself for those few microseconds, and never runs a half-written
 * instruction.  Unlike the kernel's int3, this needs no signal: a thread
 * that blocks SIGTRAP (as programs that handle signals with sigwait do)
 * would be killed by a forced SIGTRAP.
 *
 * The stores are plain atomic stores into the code, made writable for the
 * time of a batch with mprotect; where that is refused (W^X policies),
 * nothing is patched and the sites keep testing their enabled byte.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lib/text-patch.h"

static int barrier_cmd;
static long page_size;

static const uint8_t nop5[TK_SITE_BYTES] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const uint8_t jmp_self[2] = { 0xeb, 0xfe };

static long membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

static int serialize(void)
{
	if (membarrier(barrier_cmd) == 0)
		return 0;
	/* a forked child may have to register again */
	if (errno == EPERM &&
	    membarrier(barrier_cmd == MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE
			       ? MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE
			       : MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
	    membarrier(barrier_cmd) == 0)
		return 0;
	return -errno;
}

static void *page_of(const void *addr)
{
	return (void *)((uintptr_t)addr & ~(uintptr_t)(page_size - 1));
}

/* Make the pages of the sites writable (and still executable), or back. */
static int protect(const struct tk_site_patch *p, unsigned n, bool writable)
{
	int prot = PROT_READ | PROT_EXEC | (writable ? PROT_WRITE : 0);

	for (unsigned i = 0; i < n; i++) {
		/* a site may straddle two pages */
		void *first = page_of(p[i].addr);
		size_t len = (size_t)((char *)page_of(p[i].addr + TK_SITE_BYTES - 1) -
				      (char *)first) + (size_t)page_size;

		if (mprotect(first, len, prot) < 0)
			return -errno;
	}
	return 0;
}

/* One 16-bit store, in one instruction even at an odd address (a C
 * atomic on a misaligned pointer would be undefined). */
static void store2(uint8_t *addr, const uint8_t bytes[2])
{
	uint16_t v;

	memcpy(&v, bytes, 2);
	__asm__ volatile("movw %1, %0" : "=m"(*(uint16_t *)(void *)addr) : "r"(v)
			 : "memory");
}

bool tk_text_patchable_at(const void *addr)
{
	return ((uintptr_t)addr & 63) != 63;
}

int tk_text_patch_init(const char **why)
{
	long q = membarrier(MEMBARRIER_CMD_QUERY);
	uint8_t *self = (uint8_t *)(void *)tk_text_patch_init;
	struct tk_site_patch probe;

	page_size = sysconf(_SC_PAGESIZE);
	if (q < 0) {
		*why = "membarrier is not available";
		return -ENOSYS;
	}
	if ((q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) &&
	    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) == 0) {
		barrier_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE;
	} else if ((q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
		   membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
		/* the IPI's return to user space serializes on x86 */
		barrier_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
	} else {
		*why = "membarrier cannot serialize other CPUs";
		return -ENOSYS;
	}
	/* Can code be made writable?  Try on our own page, changing nothing. */
	probe.addr = self;
	if (protect(&probe, 1, true) < 0) {
		*why = "code cannot be made writable (mprotect refused)";
		return -EPERM;
	}
	protect(&probe, 1, false);
	*why = NULL;
	return 0;
}

void tk_text_site_insn(uint8_t *site, uint8_t *target, bool on,
		       uint8_t insn[TK_SITE_BYTES])
{
	int32_t rel;

	if (!on) {
		memcpy(insn, nop5, TK_SITE_BYTES);
		return;
	}
	rel = (int32_t)(target - (site + TK_SITE_BYTES));
	insn[0] = 0xe9; /* jmp rel32 */
	memcpy(insn + 1, &rel, 4);
}

int tk_text_patch(const struct tk_site_patch *p, unsigned n)
{
	bool *todo = calloc(n ? n : 1, sizeof(*todo));
	sigset_t all, old;
	int err;

	if (!todo)
		return -ENOMEM;
	/* A signal handler on this thread that fired a site mid-patch would
	 * spin on it forever: no handlers until the batch is done. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned i = 0; i < n; i++)
		todo[i] = memcmp(p[i].addr, p[i].insn, TK_SITE_BYTES) != 0 &&
			  tk_text_patchable_at(p[i].addr);
	err = protect(p, n, true);
	if (err) {
		protect(p, n, false);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		free(todo);
		return err;
	}
	for (unsigned i = 0; i < n; i++)
		if (todo[i])
			store2(p[i].addr, jmp_self);
	serialize();
	for (unsigned i = 0; i < n; i++)
		if (todo[i])
			for (unsigned b = 2; b < TK_SITE_BYTES; b++)
				__atomic_store_n(&p[i].addr[b], p[i].insn[b],
						 __ATOMIC_RELAXED);
	serialize();
	for (unsigned i = 0; i < n; i++)
		if (todo[i])
			store2(p[i].addr, p[i].insn);
	serialize();
	protect(p, n, false);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(todo);
	return 0;
}
