/* SPDX-License-Identifier: MIT */
/*
 * tracedat.c - write a trace directory as trace-cmd's trace.dat v7
 * (tracedat.h).
 *
 * The file, as trace-cmd 3.x writes it (Documentation/trace-cmd/
 * trace-cmd.dat.v7.5.txt in trace-cmd; all numbers little-endian):
 *
 *   0x17 0x08 0x44 "tracing" "7\0"  u8 endian (0)  u8 long size (8)
 *   u32 page size   "none\0" "\0" (no compression)
 *   u64 offset of the first options section
 *   sections, each: u16 id, u16 flags, u32 description (a string id:
 *   its offset in the strings section), u64 size, then the data:
 *     16 headers        "header_page\0" u64 size, data, "header_event\0" ...
 *     17 ftrace events  u32 count, (u64 size, format) each
 *     18 event formats  u32 systems, (name\0, u32 count, (u64 size, format))
 *     19 kallsyms       u32 size, data
 *     20 printk         u32 size, data
 *     21 command lines  u64 size, data
 *      0 options        (u16 id, u32 size, data)... DONE (u64 next options)
 *      3 flyrecord      padding to a page, each CPU's pages
 *      0 options        BUFFER: u64 flyrecord offset, name\0, clock\0,
 *                       u32 page size, u32 cpus, (u32 cpu, u64 offset,
 *                       u64 size) each; DONE 0
 *     15 strings        the descriptions
 *
 * libtracecmd (libtracecmd-dev 3.1.6) is not used to write it: its
 * installed header declares only the reading API; the output functions
 * the library exports are declared in a private header it does not
 * install, and they read formats from a live tracefs directory, not from
 * saved files.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/kernel-read.h"
#include "tracedat.h"

enum { SEC_OPTIONS = 0, SEC_FLYRECORD = 3, SEC_STRINGS = 15, SEC_HEADERS = 16,
       SEC_FTRACE = 17, SEC_EVENTS = 18, SEC_KALLSYMS = 19, SEC_PRINTK = 20,
       SEC_CMDLINES = 21 };
enum { OPT_DONE = 0, OPT_CPUSTAT = 2, OPT_BUFFER = 3, OPT_TRACECLOCK = 4,
       OPT_UNAME = 5, OPT_VERSION = 9, OPT_CPUCOUNT = 8, OPT_HEADER_INFO = 16,
       OPT_FTRACE_EVENTS = 17, OPT_EVENT_FORMATS = 18, OPT_KALLSYMS = 19,
       OPT_PRINTK = 20, OPT_CMDLINES = 21 };

/* the section descriptions, in the strings section */
static const char strings[] = "headers\0ftrace events\0events format\0kallsyms\0"
			      "printk\0command lines\0options\0buffer flyrecord\0strings";

static uint32_t string_id(const char *s)
{
	for (size_t off = 0; off < sizeof(strings);) {
		if (!strcmp(strings + off, s))
			return (uint32_t)off;
		off += strlen(strings + off) + 1;
	}
	return 0;
}

struct out {
	FILE *f;
	int error; /* first errno */
	long long sec_start; /* the open section's header */
};

static void put(struct out *o, const void *p, size_t n)
{
	if (!o->error && n && fwrite(p, 1, n, o->f) != n)
		o->error = errno ? errno : EIO;
}

static void put16(struct out *o, uint16_t v) { put(o, &v, 2); }
static void put32(struct out *o, uint32_t v) { put(o, &v, 4); }
static void put64(struct out *o, uint64_t v) { put(o, &v, 8); }
static void puts0(struct out *o, const char *s) { put(o, s, strlen(s) + 1); }

static long long pos(struct out *o)
{
	return ftello(o->f);
}

static void seek(struct out *o, long long off)
{
	if (!o->error && fseeko(o->f, off, SEEK_SET) < 0)
		o->error = errno;
}

/* Start a section: its header with the size filled in by end_section. */
static long long begin_section(struct out *o, uint16_t id, const char *desc)
{
	long long at = pos(o);

	o->sec_start = at;
	put16(o, id);
	put16(o, 0);
	put32(o, string_id(desc));
	put64(o, 0);
	return at;
}

static void end_section(struct out *o)
{
	long long end = pos(o);
	uint64_t size = (uint64_t)(end - o->sec_start - 16);

	seek(o, o->sec_start + 8);
	put64(o, size);
	seek(o, end);
}

static int slurp(const char *path, char **buf, size_t *size)
{
	FILE *f = fopen(path, "re");
	char *p = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return -errno;
	for (;;) {
		if (n + 65536 + 1 > cap) {
			char *q = realloc(p, cap = (n + 65536 + 1) * 2);

			if (!q) {
				free(p);
				fclose(f);
				return -ENOMEM;
			}
			p = q;
		}
		size_t got = fread(p + n, 1, cap - n - 1, f);

		if (!got)
			break;
		n += got;
	}
	fclose(f);
	p[n] = 0;
	*buf = p;
	*size = n;
	return 0;
}

/* A saved file's bytes, with its size in @width bytes before them; an
 * absent file is written empty. */
static void put_file(struct out *o, const char *path, unsigned width)
{
	char *buf = NULL;
	size_t size = 0;

	if (slurp(path, &buf, &size) < 0)
		size = 0;
	if (width == 4)
		put32(o, (uint32_t)size);
	else
		put64(o, size);
	put(o, buf, size);
	free(buf);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of @dir (not starting with '.'), sorted; NULL-terminated. */
static char **list_dir(const char *dir, unsigned *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;

	*n = 0;
	while (d && (e = readdir(d))) {
		char **grown;

		if (e->d_name[0] == '.')
			continue;
		grown = realloc(names, (*n + 2) * sizeof(*names));
		if (!grown)
			break;
		names = grown;
		names[(*n)++] = strdup(e->d_name);
	}
	if (d)
		closedir(d);
	if (names) {
		names[*n] = NULL;
		qsort(names, *n, sizeof(*names), name_cmp);
	}
	return names;
}

static void free_list(char **names)
{
	for (char **p = names; p && *p; p++)
		free(*p);
	free(names);
}

/* The formats of system @sys: u32 count, (u64 size, format) each. */
static void put_system(struct out *o, const char *kdir, const char *sys)
{
	char *sdir;
	char **evs;
	unsigned n;

	if (asprintf(&sdir, "%s/formats/%s", kdir, sys) < 0) {
		o->error = ENOMEM;
		return;
	}
	evs = list_dir(sdir, &n);
	put32(o, n);
	for (unsigned i = 0; i < n; i++) {
		char *path;

		if (asprintf(&path, "%s/%s", sdir, evs[i]) < 0) {
			o->error = ENOMEM;
			break;
		}
		put_file(o, path, 8);
		free(path);
	}
	free_list(evs);
	free(sdir);
}

static void put_option(struct out *o, uint16_t id, const void *p, uint32_t size)
{
	put16(o, id);
	put32(o, size);
	put(o, p, size);
}

static void put_option_u64(struct out *o, uint16_t id, uint64_t v)
{
	put_option(o, id, &v, 8);
}

static void put_option_str(struct out *o, uint16_t id, const char *s)
{
	put_option(o, id, s, (uint32_t)strlen(s) + 1);
}

int tk_tracedat_write(const char *dir, const char *out, struct tk_tracedat_stats *st,
		      char *err, size_t errlen)
{
	struct tk_kernel k;
	struct out o = { 0 };
	char *tmp = NULL, *path = NULL;
	char **systems = NULL;
	unsigned nsys = 0;
	long long sec[22] = { 0 }, done_at, fly, opts2;
	uint64_t *cpu_off = NULL;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = tk_kernel_open(dir, &k, err, errlen);
	if (ret == -ENOENT) {
		snprintf(err, errlen, "trace '%s' has no kernel events to write as trace.dat", dir);
		return -ENOENT;
	}
	if (ret < 0)
		return ret;
	if (asprintf(&tmp, "%s.tmp.%d", out, (int)getpid()) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	o.f = fopen(tmp, "we");
	if (!o.f) {
		ret = -errno;
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	cpu_off = calloc(k.ncpus + 1, sizeof(*cpu_off));
	if (!cpu_off) {
		ret = -ENOMEM;
		goto out;
	}

	/* the initial format */
	put(&o, "\x17\x08\x44tracing7", 11);
	put(&o, "", 1);
	put(&o, "\0\x08", 2);
	put32(&o, k.page_size);
	put(&o, "none\0", 6);
	long long first_opts_ptr = pos(&o);

	put64(&o, 0);

	sec[SEC_HEADERS] = begin_section(&o, SEC_HEADERS, "headers");
	if (asprintf(&path, "%s/header_page", k.kdir) < 0)
		goto nomem;
	puts0(&o, "header_page");
	put_file(&o, path, 8);
	free(path);
	if (asprintf(&path, "%s/header_event", k.kdir) < 0)
		goto nomem;
	puts0(&o, "header_event");
	put_file(&o, path, 8);
	free(path);
	path = NULL;
	end_section(&o);

	sec[SEC_FTRACE] = begin_section(&o, SEC_FTRACE, "ftrace events");
	put_system(&o, k.kdir, "ftrace");
	end_section(&o);

	sec[SEC_EVENTS] = begin_section(&o, SEC_EVENTS, "events format");
	if (asprintf(&path, "%s/formats", k.kdir) < 0)
		goto nomem;
	systems = list_dir(path, &nsys);
	free(path);
	path = NULL;
	{
		uint32_t n = 0;

		for (unsigned i = 0; i < nsys; i++)
			n += strcmp(systems[i], "ftrace") != 0;
		put32(&o, n);
	}
	for (unsigned i = 0; i < nsys; i++) {
		if (!strcmp(systems[i], "ftrace"))
			continue;
		puts0(&o, systems[i]);
		put_system(&o, k.kdir, systems[i]);
	}
	end_section(&o);

	static const struct { int sec; const char *file, *desc; unsigned width; } files[] = {
		{ SEC_KALLSYMS, "kallsyms", "kallsyms", 4 },
		{ SEC_PRINTK, "printk_formats", "printk", 4 },
		{ SEC_CMDLINES, "saved_cmdlines", "command lines", 8 },
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		sec[files[i].sec] = begin_section(&o, (uint16_t)files[i].sec, files[i].desc);
		if (asprintf(&path, "%s/%s", k.kdir, files[i].file) < 0)
			goto nomem;
		put_file(&o, path, files[i].width);
		free(path);
		path = NULL;
		end_section(&o);
	}

	/* the first options section */
	long long opts1 = begin_section(&o, SEC_OPTIONS, "options");

	put_option_u64(&o, OPT_HEADER_INFO, (uint64_t)sec[SEC_HEADERS]);
	put_option_u64(&o, OPT_FTRACE_EVENTS, (uint64_t)sec[SEC_FTRACE]);
	put_option_u64(&o, OPT_EVENT_FORMATS, (uint64_t)sec[SEC_EVENTS]);
	put_option_u64(&o, OPT_KALLSYMS, (uint64_t)sec[SEC_KALLSYMS]);
	put_option_u64(&o, OPT_PRINTK, (uint64_t)sec[SEC_PRINTK]);
	put_option_u64(&o, OPT_CMDLINES, (uint64_t)sec[SEC_CMDLINES]);
	{
		char clock[64];

		snprintf(clock, sizeof(clock), "[%s]\n", k.clock[0] ? k.clock : "local");
		put_option_str(&o, OPT_TRACECLOCK, clock);
	}
	put_option_str(&o, OPT_VERSION, "tracekit");
	{
		uint32_t n = k.ncpus;

		put_option(&o, OPT_CPUCOUNT, &n, 4);
	}
	for (unsigned i = 0; i < k.ncpus; i++) {
		char *stats = NULL;
		size_t size;

		if (asprintf(&path, "%s/stats/cpu%u", k.kdir, k.cpus[i].cpu) < 0)
			goto nomem;
		if (slurp(path, &stats, &size) == 0) {
			char *text;

			if (asprintf(&text, "CPU: %u\n%s", k.cpus[i].cpu, stats) >= 0) {
				put_option_str(&o, OPT_CPUSTAT, text);
				free(text);
			}
			free(stats);
		}
		free(path);
		path = NULL;
	}
	put16(&o, OPT_DONE);
	put32(&o, 8);
	done_at = pos(&o);
	put64(&o, 0);
	end_section(&o);

	/* the kernel's pages, each CPU's at a page boundary */
	fly = begin_section(&o, SEC_FLYRECORD, "buffer flyrecord");
	for (unsigned i = 0; i < k.ncpus; i++) {
		long long at = pos(&o);
		long long pad = (k.page_size - at % k.page_size) % k.page_size;
		static const char zeros[4096];

		while (pad > 0) {
			size_t n = pad > (long long)sizeof(zeros) ? sizeof(zeros) : (size_t)pad;

			put(&o, zeros, n);
			pad -= (long long)n;
		}
		cpu_off[i] = (uint64_t)pos(&o);
		put(&o, k.cpus[i].map, k.cpus[i].size);
		st->kernel_bytes += k.cpus[i].size;
	}
	end_section(&o);

	/* the second options section: where the pages are */
	opts2 = begin_section(&o, SEC_OPTIONS, "options");
	{
		long long opt = pos(&o);

		put16(&o, OPT_BUFFER);
		put32(&o, 0);
		put64(&o, (uint64_t)fly);
		puts0(&o, "");
		puts0(&o, k.clock[0] ? k.clock : "local");
		put32(&o, k.page_size);
		put32(&o, k.ncpus);
		for (unsigned i = 0; i < k.ncpus; i++) {
			put32(&o, k.cpus[i].cpu);
			put64(&o, cpu_off[i]);
			put64(&o, k.cpus[i].size);
		}
		long long end = pos(&o);

		seek(&o, opt + 2);
		put32(&o, (uint32_t)(end - opt - 6));
		seek(&o, end);
	}
	put16(&o, OPT_DONE);
	put32(&o, 8);
	put64(&o, 0);
	end_section(&o);

	begin_section(&o, SEC_STRINGS, "strings");
	put(&o, strings, sizeof(strings));
	end_section(&o);

	/* the links: to the first options section, from it to the second */
	seek(&o, first_opts_ptr);
	put64(&o, (uint64_t)opts1);
	seek(&o, done_at);
	put64(&o, (uint64_t)opts2);
	if (!o.error && fflush(o.f))
		o.error = errno;
	if (fclose(o.f) && !o.error)
		o.error = errno;
	o.f = NULL;
	if (o.error) {
		ret = -o.error;
		snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(o.error));
		goto out;
	}
	if (rename(tmp, out) < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot rename '%s' to '%s': %s", tmp, out,
			 strerror(errno));
		goto out;
	}
	st->cpus = k.ncpus;
	ret = 0;
	goto out;
nomem:
	ret = -ENOMEM;
	snprintf(err, errlen, "out of memory writing '%s'", out);
out:
	if (o.f)
		fclose(o.f);
	if (ret && tmp)
		unlink(tmp);
	free_list(systems);
	free(cpu_off);
	free(path);
	free(tmp);
	tk_kernel_close(&k);
	return ret;
}
