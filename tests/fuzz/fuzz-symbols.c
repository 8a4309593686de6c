/* SPDX-License-Identifier: MIT */
/*
 * fuzz-symbols.c - libFuzzer entry for the symbols a trace carries
 * (format/symbols.h): the input is split into DIR/symbols/maps and
 * DIR/symbols/0.sym (byte 0-1: length of the maps part, u16), loaded with
 * tk_symbols_load and looked up at addresses taken from the input.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/symbols.h"

static char dir[256];

static void cleanup(void)
{
	char p[300];

	snprintf(p, sizeof(p), "%s/symbols/maps", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/symbols/0.sym", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/symbols", dir);
	rmdir(p);
	rmdir(dir);
}

static void put(const char *name, const uint8_t *data, size_t len)
{
	char p[300];
	FILE *f;

	snprintf(p, sizeof(p), "%s/symbols/%s", dir, name);
	f = fopen(p, "w");
	if (!f)
		abort();
	fwrite(data, 1, len, f);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tk_symbols *s;
	size_t maps_len;
	char err[128];

	if (!dir[0]) {
		char p[300];

		snprintf(dir, sizeof(dir), "%s/tk-fuzz-symbols-%d",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
		mkdir(dir, 0700);
		snprintf(p, sizeof(p), "%s/symbols", dir);
		mkdir(p, 0700);
		atexit(cleanup);
	}
	if (size < 2)
		return 0;
	maps_len = (size_t)data[0] | (size_t)data[1] << 8;
	if (maps_len > size - 2)
		maps_len = size - 2;
	put("maps", data + 2, maps_len);
	put("0.sym", data + 2 + maps_len, size - 2 - maps_len);
	if (tk_symbols_load(dir, &s, err, sizeof(err)) < 0) {
		tk_symbols_free(s);
		return 0;
	}
	for (size_t i = 0; i + 12 <= size; i += 12) {
		uint64_t addr, off;
		uint32_t pid;

		memcpy(&addr, data + i, 8);
		memcpy(&pid, data + i + 8, 4);
		tk_symbols_lookup(s, pid, addr, &off);
		tk_symbols_lookup(s, 1, addr, &off);
	}
	tk_symbols_free(s);
	return 0;
}
