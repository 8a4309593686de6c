/* SPDX-License-Identifier: MIT */
/*
 * bench-usdt.c - a USDT probe (sys/sdt.h) that nothing attached to: a NOP
 * with its arguments' locations in an ELF note.
 *
 *   bench-usdt site N
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/sdt.h>

#define BENCH_SITES(X)                                                       \
	X(site, DTRACE_PROBE3(bench, event, (int64_t)i, (int64_t)idx,        \
			      "hello world!"))
#include "bench-harness.h"
