/* SPDX-License-Identifier: MIT */
/*
 * fuzz-kparse.c - the parsers of kernel text (kernel/kparse.c): a CPU's
 * ring-buffer stats, a filter's error_log entry and a refused write's,
 * on arbitrary bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/kernel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tk_kcpu cpu;
	char *text = malloc(size + 1);
	char err[256];

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&cpu, 0, sizeof(cpu));
	tk_kstats_parse(text, size, &cpu); /* ASan/UBSan: no overread, no overflow trap */
	if (tk_kerror_new(NULL, text, err, sizeof(err)) && !memchr(err, '\0', sizeof(err)))
		abort();
	tk_kerror_filter(text, "sys:event", "a == 1", 22, err, sizeof(err));
	/* whatever the log, the line names the filter and the event */
	if (!memchr(err, '\0', sizeof(err)) ||
	    strncmp(err, "bad filter 'a == 1' for 'sys:event'", 35))
		abort();
	free(text);
	return 0;
}
