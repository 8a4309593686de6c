/* SPDX-License-Identifier: MIT */
/*
 * tk-test.h - the few checks unit tests need.
 *
 * A unit test is one program; each failed CHECK prints where and what, and
 * the program exits 1 if any failed (meson counts the program as one test).
 */
#ifndef TK_TEST_H
#define TK_TEST_H

#include <stdio.h>
#include <string.h>
#include <inttypes.h>

static int tk_test_failures;

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                            \
			tk_test_failures++;                                  \
		}                                                            \
	} while (0)

#define CHECK_INT(got, want)                                                 \
	do {                                                                 \
		long long g_ = (long long)(got), w_ = (long long)(want);     \
		if (g_ != w_) {                                              \
			fprintf(stderr, "%s:%d: %s is %lld, want %lld\n",    \
				__FILE__, __LINE__, #got, g_, w_);           \
			tk_test_failures++;                                  \
		}                                                            \
	} while (0)

#define CHECK_STR(got, want)                                                 \
	do {                                                                 \
		const char *g_ = (got), *w_ = (want);                        \
		if (!g_ || strcmp(g_, w_) != 0) {                            \
			fprintf(stderr, "%s:%d: %s is \"%s\", want \"%s\"\n", \
				__FILE__, __LINE__, #got, g_ ? g_ : "(null)", \
				w_);                                         \
			tk_test_failures++;                                  \
		}                                                            \
	} while (0)

#define TEST_DONE()                                                          \
	(tk_test_failures ? (fprintf(stderr, "%d check(s) failed\n",         \
				     tk_test_failures), 1) : 0)

#endif /* TK_TEST_H */
