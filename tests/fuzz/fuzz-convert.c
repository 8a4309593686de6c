/* SPDX-License-Identifier: MIT */
/*
 * fuzz-convert.c - libFuzzer entry for `tracekit convert`: a trace
 * directory written as Chrome JSON, folded stacks, an SVG flame graph or
 * a trace.dat (export/export.h).
 *
 * The input is laid out as fuzz-trace's (fuzz-trace-input.h; so its
 * seeds, make-seeds.sh, serve here too):
 *
 *   byte 0        flags: bit 0 clear: the manifest is fixed_manifest
 *                 followed by the manifest part; set: the manifest part
 *                 alone.  Bits 2-3: the format (chrome, folded, svg,
 *                 tracedat).  Bit 4: --calls.  Bit 5: --stacks.
 *   bytes 1-2     length of the manifest part (u16, little-endian)
 *   bytes 3-4     length of the descriptor file (u16, little-endian)
 *   then          the manifest part  -> T/tracekit.manifest
 *                 the descriptors    -> T/events/1.desc
 *                 the rest           -> T/user/s
 *
 * A conversion fails with a message, or writes a file: a Chrome one must
 * be JSON (checked by a small parser below), an SVG one UTF-8 without
 * the control bytes XML refuses; either way nothing is left to free.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "export/export.h"
#include "fuzz-dir.h"
#include "fuzz-trace-input.h"

static void write_parts(const char *name, const void *a, size_t na,
			const void *b, size_t nb)
{
	char *all = malloc(na + nb + 1);

	if (!all)
		abort();
	memcpy(all, a, na);
	memcpy(all + na, b, nb);
	write_file(name, all, na + nb);
	free(all);
}

/* ---- a JSON syntax check (RFC 8259), enough to say "it parses" ---- */

struct json {
	const char *p, *end;
	unsigned depth;
};

static void ws(struct json *j)
{
	while (j->p < j->end && strchr(" \t\n\r", *j->p) && *j->p)
		j->p++;
}

static bool lit(struct json *j, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n))
		return false;
	j->p += n;
	return true;
}

static bool digits(struct json *j)
{
	const char *s = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > s;
}

static bool number(struct json *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (!digits(j))
		return false;
	if (j->p < j->end && *j->p == '.' && (j->p++, !digits(j)))
		return false;
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		return digits(j);
	}
	return true;
}

static bool string(struct json *j)
{
	if (!lit(j, "\""))
		return false;
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p++;

		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (j->p >= j->end)
			return false;
		c = (unsigned char)*j->p++;
		if (c == 'u') {
			for (int i = 0; i < 4; i++, j->p++)
				if (j->p >= j->end || !strchr("0123456789abcdefABCDEF", *j->p) ||
				    !*j->p)
					return false;
		} else if (!strchr("\"\\/bfnrt", c) || !c) {
			return false;
		}
	}
	return lit(j, "\"");
}

static bool value(struct json *j);

static bool members(struct json *j, char close, bool keys)
{
	ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return true;
	}
	for (;;) {
		ws(j);
		if (keys) {
			if (!string(j))
				return false;
			ws(j);
			if (!lit(j, ":"))
				return false;
		}
		if (!value(j))
			return false;
		ws(j);
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return true;
		}
		if (!lit(j, ","))
			return false;
	}
}

static bool value(struct json *j)
{
	bool ok;

	ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{':
	case '[':
		if (++j->depth > 64)
			return false;
		j->p++;
		ok = members(j, j->p[-1] == '{' ? '}' : ']', j->p[-1] == '{');
		j->depth--;
		return ok;
	case '"':
		return string(j);
	case 't':
		return lit(j, "true");
	case 'f':
		return lit(j, "false");
	case 'n':
		return lit(j, "null");
	default:
		return number(j);
	}
}

/* The SVG is UTF-8 with no byte XML 1.0 refuses (C0 controls but tab,
 * newline and carriage return). */
static bool svg_text_ok(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t u = s[i] < 0x80 ? 1 : s[i] >= 0xf0 ? 4 : s[i] >= 0xe0 ? 3 : 2;

		if (s[i] < 0x20 && !strchr("\t\n\r", s[i]))
			return false;
		if ((s[i] >= 0x80 && s[i] < 0xc2) || s[i] > 0xf4 || i + u > n)
			return false;
		for (size_t k = 1; k < u; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
		i += u;
	}
	return true;
}

static void check_output(const char *path, const struct tk_export_ops *ops)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0;
	struct json j;

	check(f != NULL);
	if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > 0) {
		len = (size_t)ftell(f);
		buf = malloc(len);
		check(buf && fseek(f, 0, SEEK_SET) == 0 && fread(buf, 1, len, f) == len);
	}
	fclose(f);
	if (ops == &tk_export_chrome) {
		j = (struct json){ buf, buf + len, 0 };
		check(value(&j));
		ws(&j);
		check(j.p == j.end);
	} else if (ops == &tk_export_svg) {
		check(svg_text_ok((const unsigned char *)buf, len));
	}
	free(buf);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	uint8_t flags = size ? data[0] : 0;
	const struct tk_export_ops *ops = tk_export_formats[(flags >> 2) & 3];
	struct tk_export_opts o = { 0 };
	char trace[PATH_MAX], out[PATH_MAX], *err = NULL, *warn = NULL;
	static const char *const names[3] = { ("t/" TK_MANIFEST_NAME),
					      "t/events/1.desc", "t/user/s" };
	int ret;

	if (!ready) {
		static const char *const dirs[] = { "t", "t/events", "t/user" };

		fuzz_dir_make("fuzz-convert");
		for (unsigned i = 0; i < 3; i++) {
			path_of(trace, sizeof(trace), dirs[i]);
			if (mkdir(trace, 0700) < 0)
				abort();
		}
		ready = true;
	}
	path_of(trace, sizeof(trace), "t");
	path_of(out, sizeof(out), "out");

	fuzz_trace_write(data, size, names, write_parts);

	o.dir = trace;
	o.output = out;
	o.weight_calls = flags & 0x10;
	o.stacks = flags & 0x20;
	ret = tk_export_run(ops, &o, &err, &warn);
	if (ret < 0) {
		check(err && err[0]);
		check(access(out, F_OK) < 0); /* nothing written half */
	} else {
		check(!err);
		check_output(out, ops);
	}
	free(err);
	free(warn);
	return 0;
}
