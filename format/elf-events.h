/* SPDX-License-Identifier: MIT */
/*
 * elf-events.h - the events a program or library defines, read from its
 * ELF file without running it (section "tk_meta", see tracekit/desc.h).
 */
#ifndef TK_ELF_EVENTS_H
#define TK_ELF_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

/* The tk_meta section of one ELF file. */
struct tk_elf_module {
	char *path;  /* the file read */
	void *meta;  /* copy of the section's bytes, NULL if it has none */
	size_t size; /* bytes in meta */
	bool links_tracekit; /* DT_NEEDED names libtracekit.so.* */
};

struct tk_elf_modules {
	unsigned count;
	struct tk_elf_module *module;
};

/*
 * Read @path (an executable or shared object) and, if @with_needed, every
 * library it needs (DT_NEEDED, recursively, found as the dynamic loader
 * would: DT_RPATH/DT_RUNPATH with $ORIGIN, LD_LIBRARY_PATH, the default
 * directories; libraries not found are skipped).  Returns 0 and fills *out
 * (free with tk_elf_modules_free), or -errno with a one-line reason in
 * err[errlen], e.g. "'/bin/x' is not an ELF file".
 */
int tk_elf_modules_read(const char *path, bool with_needed,
			struct tk_elf_modules *out, char *err, size_t errlen);

void tk_elf_modules_free(struct tk_elf_modules *m);

#endif /* TK_ELF_EVENTS_H */
