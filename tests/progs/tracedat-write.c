/* SPDX-License-Identifier: MIT */
/*
 * tracedat-write.c - test driver for export/tracedat.c until `convert`
 * carries it: write trace DIR as the trace.dat file OUT.
 *
 *   prog-tracedat-write [--raw-ts] DIR OUT
 */
#include <stdio.h>
#include <string.h>
#include "export/tracedat.h"

int main(int argc, char **argv)
{
	struct tk_tracedat_opts o = { 0 };
	struct tk_tracedat_stats st;
	char err[512];

	if (argc == 4 && !strcmp(argv[1], "--raw-ts")) {
		o.raw_ts = 1;
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: prog-tracedat-write [--raw-ts] DIR OUT\n");
		return 2;
	}
	if (tk_tracedat_write(argv[1], argv[2], &o, &st, err, sizeof(err)) < 0) {
		fprintf(stderr, "tracekit: %s\n", err);
		return 1;
	}
	printf("cpus %u kernel %llu user %llu skipped %llu truncated %llu bytes %llu\n",
	       st.cpus, (unsigned long long)st.kernel_events,
	       (unsigned long long)st.user_events, (unsigned long long)st.skipped,
	       (unsigned long long)st.truncated, (unsigned long long)st.bytes);
	return 0;
}
