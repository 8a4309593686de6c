/* SPDX-License-Identifier: MIT */
/*
 * tracedat.c - `convert --to tracedat`: a trace directory as trace-cmd's
 * trace.dat, version 7 (docs/format.md, "trace.dat"), which `trace-cmd
 * report` and KernelShark open.  This file writes the file's sections;
 * tracedat-pages.c builds each CPU's pages, tracedat-events.c the user
 * events' formats and records.
 *
 * Kernel and user events share each CPU's ring-buffer pages, in time
 * order: a user event goes to the CPU its packet was recorded on, the
 * CPU `tracekit report` shows.  The kernel's formats, header_page,
 * header_event and printk formats are the saved ones; kallsyms and the
 * command lines are those of the saved ones that the events name
 * (tracedat-refs.c).  Timestamps are CLOCK_MONOTONIC nanoseconds (as `tracekit report`
 * prints them), or the recorded counter with --ts raw.
 *
 * The events come one at a time in time order (export.c's walk); each
 * CPU's pages are spilled to an unlinked file beside the output, and the
 * file is written at the end, with seeks back to fill in sizes and
 * offsets: so it cannot go to standard output.
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
 * saved files, nor take events of our own.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/regular-file.h"
#include "export.h"
#include "format/number.h"
#include "format/kernel-read.h"
#include "format/stream-read.h"
#include "format/trace.h"
#include "tracedat-events.h"
#include "tracedat-pages.h"
#include "tracedat-refs.h"

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
	FILE *f = tk_fopen_regular(path);
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

/* The header files of a trace with no kernel part: the layout of the
 * pages tracedat-pages.c writes, as a 64-bit kernel describes it. */
static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:%u;\tsigned:0;\n";
static const char header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n"
	"\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

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

/* One format file to write. */
struct fmt {
	const char *system;
	char *text;
	size_t len;
	unsigned order;
};

static int fmt_cmp(const void *a, const void *b)
{
	const struct fmt *x = a, *y = b;
	int c = strcmp(x->system, y->system);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* The format's state (x->priv). */
struct tracedat {
	const struct tk_trace *trace;
	struct tk_kernel *k;
	bool raw;
	unsigned page_size;
	const char *out;      /* the output's name, for messages */
	char *spill;          /* prefix of the CPUs' spill files */
	struct td_events ev;
	struct td_refs refs;  /* what the kernel events name */
	struct td_pages *cpu; /* by CPU number */
	unsigned ncpu;
	uint64_t kernel_events, user_events;
	char **systems;       /* the kernel part's, for its formats */
	unsigned nsys;
	char error[512];      /* why an event could not be written */
	uint64_t *discarded;  /* per user stream: lost before its last packet */
	unsigned *last_cpu;   /* per user stream: its last event's CPU + 1 */
	uint64_t unmarked;    /* lost after the last events, with no page */
};

static uint64_t ts_out(const struct tracedat *w, uint64_t ts)
{
	return w->raw ? ts : tk_clock_to_mono(&w->trace->clock, ts);
}

/* The pages of CPU @cpu, started on first use; NULL on failure. */
static struct td_pages *cpu_pages(struct tracedat *w, unsigned cpu)
{
	if (cpu >= 4096)
		return NULL;
	if (cpu >= w->ncpu) {
		struct td_pages *p = realloc(w->cpu, (cpu + 1) * sizeof(*p));

		if (!p)
			return NULL;
		memset(p + w->ncpu, 0, (cpu + 1 - w->ncpu) * sizeof(*p));
		for (unsigned i = w->ncpu; i <= cpu; i++)
			p[i].fd = -1;
		w->cpu = p;
		w->ncpu = cpu + 1;
	}
	if (w->cpu[cpu].fd < 0) {
		char *path;
		int fd;

		if (asprintf(&path, "%s%u-XXXXXX", w->spill, cpu) < 0)
			return NULL;
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
		free(path);
		if (fd < 0) {
			snprintf(w->error, sizeof(w->error),
				 "cannot create a temporary file beside '%s': %s", w->out,
				 strerror(errno));
			return NULL;
		}
		if (td_pages_init(&w->cpu[cpu], w->page_size, fd) < 0) {
			close(fd);
			w->cpu[cpu].fd = -1;
			return NULL;
		}
	}
	return &w->cpu[cpu];
}

/* A saved file of the kernel part (an empty text if absent). */
static char *kernel_file(const struct tracedat *w, const char *name, size_t *size)
{
	char *path, *buf = NULL;

	*size = 0;
	if (w->k && asprintf(&path, "%s/%s", w->k->kdir, name) >= 0) {
		if (slurp(path, &buf, size) < 0)
			buf = NULL;
		free(path);
	}
	if (!buf) {
		buf = calloc(1, 1);
		*size = 0;
	}
	return buf;
}

static int td_begin(struct tk_export *x)
{
	const struct tk_trace *t = x->trace;
	const char *out = x->opts->output, *slash = strrchr(out, '/');
	struct tracedat *w = calloc(1, sizeof(*w));
	char err[512];
	int ret;

	x->priv = w;
	if (!w)
		return tk_export_error(x, "out of memory");
	w->trace = t;
	w->k = x->kernel && x->kernel->ncpus ? x->kernel : NULL;
	w->raw = x->opts->raw_ts;
	w->out = out;
	w->page_size = w->k ? w->k->page_size : (unsigned)sysconf(_SC_PAGESIZE);
	if (w->page_size < 1024 || w->page_size > 65536)
		return tk_export_error(x, "kernel page size %u cannot be written to a trace.dat",
				       w->page_size);
	w->discarded = calloc(t->nstreams + 1, sizeof(*w->discarded));
	w->last_cpu = calloc(t->nstreams + 1, sizeof(*w->last_cpu));
	/* the spill files: ".NAME.cpuN-XXXXXX" beside the output */
	if (!w->discarded || !w->last_cpu ||
	    asprintf(&w->spill, "%.*s.%s.cpu", slash ? (int)(slash - out + 1) : 0, out,
		     slash ? slash + 1 : out) < 0) {
		w->spill = NULL;
		return tk_export_error(x, "out of memory");
	}
	if (w->k) {
		char *path, *kallsyms;
		size_t size;

		if (asprintf(&path, "%s/formats", w->k->kdir) < 0)
			return tk_export_error(x, "out of memory");
		w->systems = list_dir(path, &w->nsys);
		free(path);
		kallsyms = kernel_file(w, "kallsyms", &size);
		if (!kallsyms || td_refs_init(&w->refs, w->k->tep, w->k->pid_off, kallsyms, size) < 0)
			return tk_export_error(x, "out of memory");
	}
	ret = td_events_init(&w->ev, t, w->k ? w->k->tep : NULL,
			     td_pages_max_record(w->page_size), !w->raw, err, sizeof(err));
	if (ret < 0)
		return tk_export_error(x, "%s", err);
	for (unsigned i = 0; w->k && i < w->k->ncpus; i++)
		if (!cpu_pages(w, w->k->cpus[i].cpu))
			return tk_export_error(x, "%s", w->error[0] ? w->error : "out of memory");
	return 0;
}

static int td_user_event(struct tk_export *x, struct tk_stream_reader *rd)
{
	struct tracedat *w = x->priv;
	uint64_t ts = ts_out(w, rd->ts);
	unsigned len = td_events_record(&w->ev, rd->process, rd->event,
					(unsigned)(rd->stream - w->trace->streams),
					(int)rd->stream->tid, rd->values, ts);
	uint64_t *lost = &w->discarded[rd->stream - w->trace->streams];
	struct td_pages *p;

	if (!len)
		return 0;
	p = cpu_pages(w, rd->cpu);
	if (!p)
		return tk_export_error(x, "%s", w->error[0] ? w->error : "out of memory");
	/* events lost since the stream's previous packet: marked where the
	 * stream goes on, as the kernel marks its own */
	if (rd->discarded > *lost) {
		td_pages_lost(p, (long long)(rd->discarded - *lost));
		*lost = rd->discarded;
	}
	td_pages_add(p, ts, w->ev.buf, len);
	w->last_cpu[rd->stream - w->trace->streams] = rd->cpu + 1;
	w->user_events++;
	return p->error ? tk_export_error(x, "cannot write beside '%s': %s", w->out,
					  strerror(-p->error)) : 0;
}

/* Losses of stream @s: those before an event td_user_event() marks (the
 * packets' events_discarded); those after its last event (@to 0, the
 * final packet's or the manifest's count) go on the last page of the
 * CPU of its last event (of the first CPU that has a page, for a stream
 * with no event), since trace-cmd reports a page's losses at its first
 * record and no record follows them. */
static int td_user_lost(struct tk_export *x, const struct tk_trace_stream *s,
			uint64_t from, uint64_t to, uint64_t count)
{
	struct tracedat *w = x->priv;
	unsigned cpu = w->last_cpu[s - w->trace->streams];
	struct td_pages *p = cpu && cpu - 1 < w->ncpu ? &w->cpu[cpu - 1] : NULL;

	(void)from;
	if (to)
		return 0;
	for (unsigned i = 0; (!p || !p->open) && i < w->ncpu; i++)
		p = &w->cpu[i];
	if (!p || !p->open) {
		w->unmarked += count;
		return 0;
	}
	if (p->page_lost >= 0)
		p->page_lost += (long long)count;
	return 0;
}

static int td_kernel_event(struct tk_export *x, struct tk_kernel_cpu *c)
{
	struct tracedat *w = x->priv;
	struct td_pages *p = cpu_pages(w, c->cpu);

	if (!p)
		return tk_export_error(x, "%s", w->error[0] ? w->error : "out of memory");
	if (c->data_size > td_pages_max_record(w->page_size))
		return tk_export_error(x, "kernel cpu %u: a record of %u bytes does not fit a page of %u",
				       c->cpu, c->data_size, w->page_size);
	if (c->missed)
		td_pages_lost(p, c->missed);
	td_pages_add(p, ts_out(w, c->ts), c->data, c->data_size);
	td_refs_kernel(&w->refs, c->data, c->data_size);
	w->kernel_events++;
	return p->error ? tk_export_error(x, "cannot write beside '%s': %s", w->out,
					  strerror(-p->error)) : 0;
}

/* Every format to write: the kernel part's, then the user events'. */
static struct fmt *all_formats(const struct tracedat *w, unsigned *n)
{
	struct fmt *f = NULL;
	unsigned cap = 0;

	*n = 0;
	for (unsigned s = 0; s < w->nsys; s++) {
		char *sdir;
		char **evs;
		unsigned ne;

		if (asprintf(&sdir, "%s/formats/%s", w->k->kdir, w->systems[s]) < 0)
			goto fail;
		evs = list_dir(sdir, &ne);
		for (unsigned i = 0; i < ne; i++) {
			char *path;

			if (*n + 1 > cap) {
				struct fmt *g = realloc(f, (cap = cap * 2 + 64) * sizeof(*f));

				if (!g)
					break;
				f = g;
			}
			if (asprintf(&path, "%s/%s", sdir, evs[i]) < 0)
				break;
			f[*n].system = w->systems[s];
			f[*n].order = *n;
			if (slurp(path, &f[*n].text, &f[*n].len) == 0)
				(*n)++;
			free(path);
		}
		free_list(evs);
		free(sdir);
	}
	for (unsigned i = 0; i < w->ev.nformats; i++) {
		if (*n + 1 > cap) {
			struct fmt *g = realloc(f, (cap = cap * 2 + 64) * sizeof(*f));

			if (!g)
				goto fail;
			f = g;
		}
		f[*n].system = w->ev.formats[i].system;
		f[*n].text = strdup(w->ev.formats[i].text);
		f[*n].len = strlen(w->ev.formats[i].text);
		f[*n].order = *n;
		if (!f[*n].text)
			goto fail;
		(*n)++;
	}
	if (f)
		qsort(f, *n, sizeof(*f), fmt_cmp);
	return f;
fail:
	for (unsigned i = 0; i < *n; i++)
		free(f[i].text);
	free(f);
	*n = 0;
	return NULL;
}

/* The formats of one system: u32 count, (u64 size, format) each. */
static void put_system(struct out *o, const struct fmt *f, unsigned n)
{
	put32(o, n);
	for (unsigned i = 0; i < n; i++) {
		put64(o, f[i].len);
		put(o, f[i].text, f[i].len);
	}
}

static bool has_stream(const struct tk_trace *t, unsigned n, long tid)
{
	for (unsigned j = 0; j < n; j++)
		if (t->streams[j].tid == tid)
			return true;
	return false;
}

/* The command lines: each user thread's, then the kernel's for the other
 * pids that the kernel events name (tracedat-refs.h).  libtraceevent sorts them without keeping the order of equal pids,
 * so a pid listed twice would take either name: a thread with a stream
 * goes by its manifest name (docs/format.md, "Thread names") alone. */
static char *cmdlines(const struct tracedat *w, size_t *size)
{
	size_t nkernel;
	char *kernel = kernel_file(w, "saved_cmdlines", &nkernel);
	const struct tk_trace *t = w->trace;
	char *buf = NULL;
	FILE *f;

	if (!kernel)
		return NULL;
	td_refs_cmdlines(&w->refs, kernel, &nkernel);
	f = open_memstream(&buf, size);
	if (!f)
		return kernel;
	for (unsigned i = 0; i < t->nstreams; i++) {
		char tid[TK_NUM_MAX + 1];

		if (has_stream(t, i, t->streams[i].tid))
			continue;
		tid[TK_NUM_MAX] = '\0';
		fprintf(f, "%s %s\n", tk_num_dec(tid + TK_NUM_MAX, t->streams[i].tid),
			t->streams[i].comm);
	}
	for (char *line = kernel, *end; line < kernel + nkernel; line = end + 1) {
		end = memchr(line, '\n', (size_t)(kernel + nkernel - line));
		if (!end)
			end = kernel + nkernel;
		if (!has_stream(t, t->nstreams, strtol(line, NULL, 10)))
			fwrite(line, 1, (size_t)(end - line), f), fputc('\n', f);
	}
	free(kernel);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
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

static void put_blob(struct out *o, const char *buf, size_t size, unsigned width)
{
	if (width == 4)
		put32(o, (uint32_t)size);
	else
		put64(o, size);
	put(o, buf, size);
}

/* Copy CPU @p's pages (spilled to its file) into the output. */
static void put_pages(struct out *o, struct td_pages *p)
{
	static char buf[1 << 20];
	ssize_t n;

	if (p->fd < 0 || lseek(p->fd, 0, SEEK_SET) < 0)
		return;
	while ((n = read(p->fd, buf, sizeof(buf))) > 0)
		put(o, buf, (size_t)n);
	if (n < 0 && !o->error)
		o->error = errno;
}

static int td_end(struct tk_export *x)
{
	struct tracedat *w = x->priv;
	struct out o = { 0 };
	struct fmt *fmts = NULL;
	unsigned nfmts = 0;
	long long sec[22] = { 0 }, done_at, fly, opts2, first_opts_ptr, opts1;
	uint64_t *cpu_off = NULL;
	const char *clock;
	char *buf = NULL;
	size_t size;
	int ret;

	for (unsigned i = 0; i < w->ncpu; i++) {
		if (w->cpu[i].fd >= 0 && (ret = td_pages_finish(&w->cpu[i])) < 0)
			return tk_export_error(x, "cannot write beside '%s': %s", w->out,
					       strerror(-ret));
	}
	if (!w->ncpu)
		return tk_export_error(x, "trace '%s' has no events to write as trace.dat",
				       w->trace->dir);
	fmts = all_formats(w, &nfmts);
	cpu_off = calloc(w->ncpu + 1, sizeof(*cpu_off));
	/* the driver's temporary file, written here with seeks */
	ret = dup(x->out.fd);
	o.f = ret < 0 ? NULL : fdopen(ret, "w");
	if (!o.f) {
		ret = -errno;
		tk_export_error(x, "cannot write '%s': %s", w->out, strerror(errno));
		goto out;
	}
	if (!cpu_off || (!fmts && nfmts))
		goto nomem;
	if (w->raw)
		clock = w->k && w->k->clock[0] ? w->k->clock
						 : w->trace->clock.tsc ? "x86-tsc" : "mono";
	else
		clock = "mono";

	/* the initial format */
	put(&o, "\x17\x08\x44tracing7", 11);
	put(&o, "", 1);
	put(&o, "\0\x08", 2);
	put32(&o, w->page_size);
	put(&o, "none\0", 6);
	first_opts_ptr = pos(&o);
	put64(&o, 0);

	sec[SEC_HEADERS] = begin_section(&o, SEC_HEADERS, "headers");
	puts0(&o, "header_page");
	if (w->k) {
		buf = kernel_file(w, "header_page", &size);
	} else if (asprintf(&buf, header_page, w->page_size - 16) >= 0) {
		size = strlen(buf);
	} else {
		buf = NULL;
		goto nomem;
	}
	put_blob(&o, buf, size, 8);
	free(buf);
	puts0(&o, "header_event");
	buf = w->k ? kernel_file(w, "header_event", &size) : strdup(header_event);
	if (!buf)
		goto nomem;
	put_blob(&o, buf, w->k ? size : strlen(buf), 8);
	free(buf);
	buf = NULL;
	end_section(&o);

	sec[SEC_FTRACE] = begin_section(&o, SEC_FTRACE, "ftrace events");
	{
		unsigned i = 0, n = 0;

		while (i < nfmts && strcmp(fmts[i].system, "ftrace"))
			i++;
		while (i + n < nfmts && !strcmp(fmts[i + n].system, "ftrace"))
			n++;
		put_system(&o, fmts + i, n);
	}
	end_section(&o);

	sec[SEC_EVENTS] = begin_section(&o, SEC_EVENTS, "events format");
	{
		uint32_t nsys = 0;

		for (unsigned i = 0; i < nfmts; i++)
			nsys += strcmp(fmts[i].system, "ftrace") &&
				(!i || strcmp(fmts[i].system, fmts[i - 1].system));
		put32(&o, nsys);
		for (unsigned i = 0, n; i < nfmts; i += n) {
			for (n = 1; i + n < nfmts && !strcmp(fmts[i + n].system, fmts[i].system);)
				n++;
			if (!strcmp(fmts[i].system, "ftrace"))
				continue;
			puts0(&o, fmts[i].system);
			put_system(&o, fmts + i, n);
		}
	}
	end_section(&o);

	sec[SEC_KALLSYMS] = begin_section(&o, SEC_KALLSYMS, "kallsyms");
	buf = td_refs_kallsyms(&w->refs, &size);
	if (!buf || td_events_kallsyms(&w->ev, &buf, &size) < 0)
		goto nomem;
	put_blob(&o, buf, size, 4);
	free(buf);
	end_section(&o);

	sec[SEC_PRINTK] = begin_section(&o, SEC_PRINTK, "printk");
	buf = kernel_file(w, "printk_formats", &size);
	if (!buf)
		goto nomem;
	put_blob(&o, buf, size, 4);
	free(buf);
	end_section(&o);

	sec[SEC_CMDLINES] = begin_section(&o, SEC_CMDLINES, "command lines");
	buf = cmdlines(w, &size);
	if (!buf)
		goto nomem;
	put_blob(&o, buf, size, 8);
	free(buf);
	buf = NULL;
	end_section(&o);

	/* the first options section */
	opts1 = begin_section(&o, SEC_OPTIONS, "options");
	put_option_u64(&o, OPT_HEADER_INFO, (uint64_t)sec[SEC_HEADERS]);
	put_option_u64(&o, OPT_FTRACE_EVENTS, (uint64_t)sec[SEC_FTRACE]);
	put_option_u64(&o, OPT_EVENT_FORMATS, (uint64_t)sec[SEC_EVENTS]);
	put_option_u64(&o, OPT_KALLSYMS, (uint64_t)sec[SEC_KALLSYMS]);
	put_option_u64(&o, OPT_PRINTK, (uint64_t)sec[SEC_PRINTK]);
	put_option_u64(&o, OPT_CMDLINES, (uint64_t)sec[SEC_CMDLINES]);
	{
		char text[80];
		uint32_t n = w->ncpu;

		snprintf(text, sizeof(text), "[%s]\n", clock);
		put_option_str(&o, OPT_TRACECLOCK, text);
		put_option_str(&o, OPT_VERSION, "tracekit");
		put_option(&o, OPT_CPUCOUNT, &n, 4);
	}
	for (unsigned i = 0; w->k && i < w->k->ncpus; i++) {
		char *path, *stats = NULL, *text;

		if (asprintf(&path, "%s/stats/cpu%u", w->k->kdir, w->k->cpus[i].cpu) < 0)
			goto nomem;
		if (slurp(path, &stats, &size) == 0 &&
		    asprintf(&text, "CPU: %u\n%s", w->k->cpus[i].cpu, stats) >= 0) {
			put_option_str(&o, OPT_CPUSTAT, text);
			free(text);
		}
		free(stats);
		free(path);
	}
	put16(&o, OPT_DONE);
	put32(&o, 8);
	done_at = pos(&o);
	put64(&o, 0);
	end_section(&o);

	/* each CPU's pages, at a page boundary */
	fly = begin_section(&o, SEC_FLYRECORD, "buffer flyrecord");
	for (unsigned i = 0; i < w->ncpu; i++) {
		static const char zeros[4096];
		long long pad = (w->page_size - pos(&o) % w->page_size) % w->page_size;

		while (pad > 0) {
			size_t n = pad > (long long)sizeof(zeros) ? sizeof(zeros) : (size_t)pad;

			put(&o, zeros, n);
			pad -= (long long)n;
		}
		cpu_off[i] = (uint64_t)pos(&o);
		put_pages(&o, &w->cpu[i]);
	}
	end_section(&o);

	/* the second options section: where the pages are */
	opts2 = begin_section(&o, SEC_OPTIONS, "options");
	{
		long long opt = pos(&o), end;

		put16(&o, OPT_BUFFER);
		put32(&o, 0);
		put64(&o, (uint64_t)fly);
		puts0(&o, "");
		puts0(&o, clock);
		put32(&o, w->page_size);
		put32(&o, w->ncpu);
		for (unsigned i = 0; i < w->ncpu; i++) {
			put32(&o, i);
			put64(&o, cpu_off[i]);
			put64(&o, w->cpu[i].bytes);
		}
		end = pos(&o);
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
		tk_export_error(x, "cannot write '%s': %s", w->out, strerror(o.error));
		goto out;
	}
	if (w->ev.skipped)
		tk_export_warn(x, "%" PRIu64 " user events have no trace.dat form (user_stack) and were left out",
			       w->ev.skipped);
	if (w->unmarked)
		tk_export_warn(x, "%" PRIu64 " user events lost after their stream's last event are not marked: no event follows them",
			       w->unmarked);
	if (w->ev.truncated)
		tk_export_warn(x, "%" PRIu64 " user events had their strings cut to fit a %u-byte page",
			       w->ev.truncated, w->page_size);
	ret = 0;
	goto out;
nomem:
	ret = tk_export_error(x, "out of memory writing '%s'", w->out);
out:
	if (o.f)
		fclose(o.f);
	for (unsigned i = 0; i < nfmts; i++)
		free(fmts[i].text);
	free(fmts);
	free(cpu_off);
	return ret;
}

static void td_free(struct tk_export *x)
{
	struct tracedat *w = x->priv;

	if (!w)
		return;
	for (unsigned i = 0; i < w->ncpu; i++) {
		td_pages_free(&w->cpu[i]);
		if (w->cpu[i].fd >= 0)
			close(w->cpu[i].fd);
	}
	free(w->cpu);
	free(w->discarded);
	free(w->last_cpu);
	td_events_free(&w->ev);
	td_refs_free(&w->refs);
	free_list(w->systems);
	free(w->spill);
	free(w);
	x->priv = NULL;
}

const struct tk_export_ops tk_export_tracedat = {
	.name = "tracedat",
	.summary = "trace-cmd trace.dat v7: trace-cmd report, KernelShark",
	.suffix = ".dat",
	.seeks = true,
	.begin = td_begin,
	.user_event = td_user_event,
	.kernel_event = td_kernel_event,
	.user_lost = td_user_lost,
	.end = td_end,
	.free = td_free,
};
