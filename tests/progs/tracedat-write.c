/* SPDX-License-Identifier: MIT */
/*
 * tracedat-write.c - test driver for export/tracedat.c until `convert`
 * carries it: write trace DIR as the trace.dat file OUT.
 *
 *   prog-tracedat-write DIR OUT
 */
#include <stdio.h>
#include "export/tracedat.h"

int main(int argc, char **argv)
{
	struct tk_tracedat_stats st;
	char err[512];

	if (argc != 3) {
		fprintf(stderr, "usage: prog-tracedat-write DIR OUT\n");
		return 2;
	}
	if (tk_tracedat_write(argv[1], argv[2], &st, err, sizeof(err)) < 0) {
		fprintf(stderr, "tracekit: %s\n", err);
		return 1;
	}
	printf("cpus %u kernel_bytes %llu\n", st.cpus, (unsigned long long)st.kernel_bytes);
	return 0;
}
