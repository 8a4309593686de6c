/* SPDX-License-Identifier: MIT */
/*
 * test-kparse.c - the kernel text tracekit parses (kernel/kparse.c):
 * which error_log entry gives a refused write's reason.
 */
#include "kernel/kernel.h"
#include "tk-test.h"

#define OLD "[  100.000001] trace_uprobe: error: Failed to find the given file\n" \
	    "  Command: p:tracekit_1_uprobe/f /d#x/prog:0x1\n"
#define NEW "[  200.000002] trace_uprobe: error: This argument name is reserved\n" \
	    "  Command: p:tracekit_2_uprobe/f /bin/x:0x1 common_pid=%di:s32\n"

int main(void)
{
	char why[64] = "";

	/* an old entry naming the same event, and nothing new: no reason */
	CHECK(!tk_kerror_new(OLD, OLD, why, sizeof(why)));
	CHECK(!tk_kerror_new(NULL, NULL, why, sizeof(why)));
	/* the entry the write added, after another one or in an empty log */
	CHECK(tk_kerror_new(OLD, NEW, why, sizeof(why)));
	CHECK_STR(why, "This argument name is reserved");
	CHECK(tk_kerror_new(NULL, OLD, why, sizeof(why)));
	CHECK_STR(why, "Failed to find the given file");
	CHECK(!tk_kerror_new(NULL, "[ 1.0] no message\n", why, sizeof(why)));
	return TEST_DONE();
}
