/* SPDX-License-Identifier: MIT */
/*
 * bigtls.c - linked into prog-basic to give it TLS_KB KiB of static TLS
 * (prog-tls256k, prog-tls1m, prog-tls16m), as servers with a
 * `static __thread char buf[1 << 20]` have: glibc takes static TLS out of
 * every thread's stack, the runtime's control thread's too.
 */
#include <stddef.h>

__thread char test_big_tls[TLS_KB * 1024];

__attribute__((constructor)) static void touch_big_tls(void)
{
	test_big_tls[0] = 1;
	test_big_tls[sizeof(test_big_tls) - 1] = 1;
}
