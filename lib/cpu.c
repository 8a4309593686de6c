/* SPDX-License-Identifier: MIT */
/*
 * cpu.c - where a thread reads the CPU it runs on, for its events.
 *
 * Each event is recorded with the CPU it ran on: a packet says its CPU
 * (cpu_id), and a thread that moved to another CPU starts a new packet
 * (stream.c packet_split).  To notice the move, the fast path compares
 * the thread's CPU now with its packet's (tk__cpu_moved in runtime.h),
 * which must cost next to nothing: glibc (2.35 and later) registers an
 * rseq area for every thread, whose cpu_id the kernel keeps up to date
 * whenever the thread returns to user space, so reading it is one load.
 *
 * Where no rseq area is registered (an older C library, glibc's
 * glibc.pthread.rseq=0 tunable, a program that registered its own), the
 * source is a constant -1: every event then takes the slow path, which
 * asks sched_getcpu() (a vDSO call) and still records the true CPU, at
 * some tens of ns per event.  tk_cpu_rseq() says which, for the HELLO.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stddef.h>
#include "internal.h"
#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define HAVE_RSEQ 1
#endif
#endif

static const int32_t cpu_unknown = -1;

const int32_t *tk_cpu_source(void)
{
#ifdef HAVE_RSEQ
	if (__rseq_size >= offsetof(struct rseq, cpu_id) + sizeof(uint32_t)) {
		struct rseq *r = (struct rseq *)((char *)__builtin_thread_pointer() +
						 __rseq_offset);

		if ((int32_t)__atomic_load_n(&r->cpu_id, __ATOMIC_RELAXED) >= 0)
			return (const int32_t *)&r->cpu_id;
	}
#endif
	return &cpu_unknown;
}

bool tk_cpu_rseq(void)
{
	return tk_cpu_source() != &cpu_unknown;
}

int32_t tk_cpu_now(const int32_t *src)
{
	int32_t cpu = __atomic_load_n(src, __ATOMIC_RELAXED);

	if (cpu < 0)
		cpu = sched_getcpu();
	return cpu < 0 ? 0 : cpu;
}
