/* SPDX-License-Identifier: MIT */
/*
 * fuzz-elf-events.c - libFuzzer entry for reading ELF files.
 *
 * The input is written to a temporary file (fuzz-file.h) and read with
 * its needed libraries, which the input may name as paths or find through
 * its DT_RPATH/DT_RUNPATH.  The result must be either an error with a
 * message and nothing to free, or a module list whose first module is the
 * file itself.
 *
 *   tests/fuzz/run 1    # builds it in build-fuzz/ (tests/fuzz/meson.build)
 *   mkdir corpus && cp /bin/true small-elf-files... corpus/
 *   build-fuzz/tests/fuzz/fuzz-elf-events corpus
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-file.h"
#include "format/elf-events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	struct tk_elf_modules m;
	char err[256];
	unsigned i, sum = 0;
	size_t k;
	int ret;

	err[0] = 'x';
	ret = tk_elf_modules_read(path, true, &m, err, sizeof(err));
	if (ret) {
		if (ret > 0 || m.count || m.module || !err[0] ||
		    !memchr(err, '\0', sizeof(err)))
			__builtin_trap();
		return 0;
	}
	if (!m.count || strcmp(m.module[0].path, path) != 0)
		__builtin_trap();
	for (i = 0; i < m.count; i++) {
		if (!m.module[i].path || (!m.module[i].meta) != !m.module[i].size)
			__builtin_trap();
		/* Read every byte, so ASan sees a short copy. */
		for (k = 0; k < m.module[i].size; k++)
			sum += ((const volatile uint8_t *)m.module[i].meta)[k];
	}
	(void)sum;
	tk_elf_modules_free(&m);
	return 0;
}
