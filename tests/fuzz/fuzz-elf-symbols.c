/* SPDX-License-Identifier: MIT */
/*
 * fuzz-elf-symbols.c - libFuzzer entry for the function tracer's ELF
 * reader (common/elf-symbols.c), which the runtime runs on every object a
 * traced process loads and record on the program and its libraries.
 *
 * The input is written to a temporary file (fuzz-file.h) and read as
 * record and its probes read it (TK_ELF_FUNCS and TK_ELF_OBJECTS; never
 * TK_ELF_LOADED, which reads the process's own memory).  The result must
 * be an error with nothing to free, or tables that hold what the header
 * promises: functions sorted by address, every name a string, every
 * entry's function one of them, and its site the entry or the function's
 * start.
 *
 *   tests/fuzz/run 1    # builds it in build-fuzz/ (tests/fuzz/meson.build)
 *   build-fuzz/tests/fuzz/fuzz-elf-symbols tests/fuzz/corpus/fuzz-elf-symbols
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-file.h"
#include "common/elf-symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	struct tk_elf_syms e;
	size_t sum = 0;
	int ret;

	/* with the data objects, as elf-probes.c reads them: the same table */
	ret = tk_elf_syms_read(path, 0x1000, TK_ELF_FUNCS | TK_ELF_OBJECTS, &e);
	if (ret) {
		if (ret > 0)
			__builtin_trap();
		return 0;
	}
	if (e.nentries > e.table_entries || e.build_id_len > sizeof(e.build_id))
		__builtin_trap();
	for (unsigned i = 0; i < e.nfuncs; i++) {
		if (i && e.funcs[i - 1].addr > e.funcs[i].addr)
			__builtin_trap();
		sum += strlen(tk_elf_func_name(&e, &e.funcs[i])); /* ASan: a string */
		if (tk_elf_func_at(&e, e.funcs[i].addr)->addr != e.funcs[i].addr)
			__builtin_trap();
	}
	for (unsigned i = 0; i < e.nobjs; i++)
		sum += strlen(tk_elf_func_name(&e, &e.objs[i])); /* a string */
	for (unsigned i = 0; i < e.nentries; i++) {
		uint64_t site;
		const struct tk_elf_func *fn = tk_elf_entry_func(&e, e.entries[i], &site);

		if (i && e.entries[i - 1] > e.entries[i])
			__builtin_trap();
		if (fn && (fn < e.funcs || fn >= e.funcs + e.nfuncs ||
			   (site != e.entries[i] && site != fn->addr)))
			__builtin_trap();
	}
	(void)sum;
	tk_elf_syms_free(&e);
	return 0;
}
