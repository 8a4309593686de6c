/* SPDX-License-Identifier: MIT */
/*
 * text-patch.c (x86-64) - rewrite 5-byte call sites while threads run them.
 *
 * The protocol of the kernel's own text patching, in user space:
 *
 *   1. write int3 (0xcc) over the first byte of every site to change
 *   2. serialize every CPU running this process (membarrier SYNC_CORE)
 *   3. write bytes 1..4 of the new instructions
 *   4. serialize
 *   5. write the new first bytes
 *   6. serialize
 *
 * A thread that meets the int3 meanwhile gets SIGTRAP; the handler sees
 * the trap is at a known site and sends the thread back to the site's
 * first byte, which it executes again once the patch is complete (it never
 * runs a half-written instruction).  Any other SIGTRAP goes to the handler
 * that was there before, or gets the default action.
 *
 * Bytes are written through /proc/self/mem (opened for each batch, so a
 * forked child never writes into its parent), which needs no change to the
 * pages' protection; where that is refused, the page is made writable with
 * mprotect for the time of the write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include "text-patch.h"

#define INT3 0xcc

struct site_set {
	unsigned n;
	uint8_t *addr[];
};

static int barrier_cmd;
static bool use_proc_mem;
static struct site_set *sites; /* atomic pointer, read by the handler */
static struct sigaction old_trap;

static const uint8_t nop5[TK_SITE_BYTES] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static long membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

static bool is_site(const uint8_t *at)
{
	const struct site_set *s = __atomic_load_n(&sites, __ATOMIC_ACQUIRE);
	unsigned lo = 0, hi = s ? s->n : 0;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (s->addr[mid] == at)
			return true;
		if (s->addr[mid] < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uint8_t *at = (uint8_t *)uc->uc_mcontext.gregs[REG_RIP] - 1;

	if (is_site(at)) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)at;
		return;
	}
	if ((old_trap.sa_flags & SA_SIGINFO) && old_trap.sa_sigaction) {
		old_trap.sa_sigaction(sig, si, ctx);
	} else if (!(old_trap.sa_flags & SA_SIGINFO) &&
		   old_trap.sa_handler != SIG_DFL && old_trap.sa_handler != SIG_IGN) {
		old_trap.sa_handler(sig);
	} else {
		sigaction(SIGTRAP, &old_trap, NULL);
		raise(SIGTRAP);
	}
}

static int write_text_mprotect(uint8_t *addr, const uint8_t *bytes, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(page - 1);
	size_t len = (uintptr_t)addr + n - start;

	if (mprotect((void *)start, len, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		return -errno;
	for (size_t i = 0; i < n; i++)
		__atomic_store_n(&addr[i], bytes[i], __ATOMIC_RELAXED);
	mprotect((void *)start, len, PROT_READ | PROT_EXEC);
	return 0;
}

static int write_text(int fd, uint8_t *addr, const uint8_t *bytes, size_t n)
{
	if (fd >= 0 && pwrite(fd, bytes, n, (off_t)(uintptr_t)addr) == (ssize_t)n)
		return 0;
	return write_text_mprotect(addr, bytes, n);
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

int tk_text_patch_init(const char **why)
{
	long q = membarrier(MEMBARRIER_CMD_QUERY);
	struct sigaction sa;
	uint8_t probe;
	int fd;

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
	/* Can text be written?  Write a byte of our own code with itself. */
	probe = *(volatile uint8_t *)(void *)tk_text_patch_init;
	fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	use_proc_mem = fd >= 0 &&
		       pwrite(fd, &probe, 1, (off_t)(uintptr_t)(void *)tk_text_patch_init) == 1;
	if (fd >= 0)
		close(fd);
	if (!use_proc_mem &&
	    write_text_mprotect((uint8_t *)(void *)tk_text_patch_init, &probe, 1) < 0) {
		*why = "code cannot be made writable";
		return -EPERM;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, &old_trap) < 0) {
		*why = "cannot handle SIGTRAP";
		return -errno;
	}
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
	const uint8_t int3 = INT3;
	int fd = use_proc_mem ? open("/proc/self/mem", O_RDWR | O_CLOEXEC) : -1;
	bool *todo = calloc(n ? n : 1, sizeof(*todo));
	uint8_t (*orig)[TK_SITE_BYTES] = calloc(n ? n : 1, sizeof(*orig));
	int err = 0;

	if (!todo || !orig) {
		if (fd >= 0)
			close(fd);
		free(todo);
		free(orig);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n && !err; i++) {
		memcpy(orig[i], p[i].addr, TK_SITE_BYTES);
		todo[i] = memcmp(orig[i], p[i].insn, TK_SITE_BYTES) != 0;
		if (todo[i])
			err = write_text(fd, p[i].addr, &int3, 1);
	}
	if (!err)
		err = serialize();
	for (unsigned i = 0; i < n && !err; i++)
		if (todo[i])
			err = write_text(fd, p[i].addr + 1, p[i].insn + 1,
					 TK_SITE_BYTES - 1);
	if (!err)
		err = serialize();
	for (unsigned i = 0; i < n && !err; i++)
		if (todo[i])
			err = write_text(fd, p[i].addr, p[i].insn, 1);
	if (!err)
		err = serialize();
	if (err) {
		/* Never leave an int3 behind: put back what was there. */
		for (unsigned i = 0; i < n; i++)
			if (todo[i])
				write_text(fd, p[i].addr + 1, orig[i] + 1,
					   TK_SITE_BYTES - 1);
		serialize();
		for (unsigned i = 0; i < n; i++)
			if (todo[i])
				write_text(fd, p[i].addr, orig[i], 1);
		serialize();
	}
	if (fd >= 0)
		close(fd);
	free(todo);
	free(orig);
	return err;
}

void tk_text_set_sites(uint8_t *const *sorted, unsigned n)
{
	struct site_set *s = malloc(sizeof(*s) + n * sizeof(s->addr[0]));

	if (!s)
		return;
	s->n = n;
	memcpy(s->addr, sorted, n * sizeof(s->addr[0]));
	/* The old set is not freed: a handler may be reading it. */
	__atomic_store_n(&sites, s, __ATOMIC_RELEASE);
}
