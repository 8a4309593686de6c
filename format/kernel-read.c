/* SPDX-License-Identifier: MIT */
/*
 * kernel-read.c - decode DIR/kernel/ (kernel-read.h).
 *
 * A CPU file is a sequence of the kernel's ring-buffer pages:
 *
 *   u64 timestamp | long commit (data bytes; bit 31 "events were missed
 *   before this page", bit 30 "their count is stored after the data")
 *   | data: events (kbuffer walks them, time extends included)
 *
 * kbuffer trusts the page; we check the commit size before handing it a
 * page, give it a copy with zeros after the end, and check that every
 * event it returns ends inside the data.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <event-parse.h>
#include <kbuffer.h>
#include "common/regular-file.h"
#include "kernel-read.h"
#include "trace.h"

#define MAX_SAVED_FILE (256u << 20)
#define MAX_CPUS 4096
#define PAGE_PAD 64 /* zeros after each page copy: kbuffer may peek */
#define MISSED_EVENTS (1ull << 31)
#define MISSED_STORED (1ull << 30)
#define COMMIT_FLAGS (MISSED_EVENTS | MISSED_STORED)

/* Read a whole file into a NUL-terminated buffer (free it). */
static int slurp(const char *path, char **buf, size_t *size)
{
	int fd = tk_open_regular(path);
	struct stat st;
	size_t got = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size > MAX_SAVED_FILE) {
		close(fd);
		return -EFBIG;
	}
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, *buf + got, (size_t)st.st_size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	(*buf)[got] = '\0';
	if (size)
		*size = got;
	return 0;
}

/* A manifest number (trace.h), at most @max. */
static bool num(const char *v, uint64_t max, uint64_t *out)
{
	return tk_manifest_u64(v, out) && *out <= max;
}

static bool page_size_ok(uint64_t n)
{
	return n >= 64 && n <= (64u << 20) && !(n & (n - 1));
}

/*
 * The manifest's "kernel" and "kcpu" records (others are read by
 * trace-read.c), split by tk_manifest_split leniently; unknown keys are
 * skipped, a number that is not one or out of range is an error.  The
 * first pass (@counts false) takes the kernel record; the second, once
 * the CPU files are open, the kcpu counts.
 */
static int read_manifest(const char *dir, struct tk_kernel *k, bool counts,
			 char *err, size_t errlen)
{
	char *path, *line = NULL;
	size_t cap = 0;
	int lineno = 0, ret = 0;
	FILE *f;

	if (asprintf(&path, "%s/%s", dir, TK_MANIFEST_NAME) < 0)
		return -ENOMEM;
	f = tk_fopen_regular(path);
	if (!f) {
		free(path);
		return 0;
	}
	while (!ret && getline(&line, &cap, f) > 0) {
		struct tk_manifest_rec r;
		const char *kind, *state;
		uint64_t cpu = UINT64_MAX, overrun = 0, dropped = 0, v;

		lineno++;
		tk_manifest_split(line, true, &r);
		kind = r.kind;
		state = tk_manifest_get(&r, "state");
		if (kind && !strcmp(kind, "tracekit") && state &&
		    !strcmp(state, "recording"))
			k->incomplete = true; /* the recorder never finished */
		if (!kind || (strcmp(kind, "kernel") && strcmp(kind, "kcpu")))
			continue;
		for (unsigned i = 0; !ret && i < r.n; i++) {
			const char *tok = r.kv[i].key, *val = r.kv[i].value;
			bool ok = true;

			if (!strcmp(kind, "kcpu")) {
				if (!strcmp(tok, "cpu"))
					ok = num(val, MAX_CPUS - 1, &cpu);
				else if (!strcmp(tok, "overrun"))
					ok = num(val, UINT64_MAX, &overrun);
				else if (!strcmp(tok, "dropped"))
					ok = num(val, UINT64_MAX, &dropped);
			} else if (counts) {
				continue;
			} else if (!strcmp(tok, "instance")) {
				snprintf(k->instance, sizeof(k->instance), "%s", val);
			} else if (!strcmp(tok, "clock")) {
				snprintf(k->clock, sizeof(k->clock), "%s", val);
			} else if (!strcmp(tok, "tracer")) {
				snprintf(k->tracer, sizeof(k->tracer), "%s", val);
			} else if (!strcmp(tok, "events") && !k->events) {
				k->events = strdup(val);
			} else if (!strcmp(tok, "pid_filter") && !k->pid_filter &&
				   *val) {
				k->pid_filter = strdup(val);
			} else if (!strcmp(tok, "stack")) {
				ok = num(val, 1, &v);
				k->stack = ok && v;
			} else if (!strcmp(tok, "page_size")) {
				ok = num(val, UINT32_MAX, &v) && page_size_ok(v);
				if (ok)
					k->page_size = (unsigned)v;
			}
			if (!ok) {
				snprintf(err, errlen, "'%s' line %d: bad %s %s '%s'", path,
					 lineno, kind, tok, val);
				ret = -EINVAL;
			}
		}
		if (!ret && counts && !strcmp(kind, "kcpu")) {
			for (unsigned i = 0; i < k->ncpus; i++)
				if (k->cpus[i].cpu == cpu) {
					k->cpus[i].overrun = overrun;
					k->cpus[i].dropped = dropped;
				}
		}
	}
	free(line);
	fclose(f);
	free(path);
	return ret;
}

/* One "\tfield:TYPE NAME;\toffset:N;\tsize:N;..." line, @len bytes: its
 * declaration's brackets balance and offset and size are numbers. */
static bool field_line_ok(const char *l, size_t len)
{
	const char *semi = memchr(l, ';', len);
	int depth = 0;

	if (!semi)
		return false;
	for (const char *c = l; c < semi; c++) {
		depth += (*c == '[') - (*c == ']');
		if (depth < 0 || depth > 1)
			return false;
	}
	if (depth)
		return false;
	for (const char *key = "\toffset:"; key; key = strcmp(key, "\tsize:") ? "\tsize:" : NULL) {
		const char *k = memmem(semi, len - (size_t)(semi - l), key, strlen(key));

		if (!k || k[strlen(key)] < '0' || k[strlen(key)] > '9')
			return false;
	}
	return true;
}

/* Whether @buf looks like a format file the kernel wrote: text with the
 * name, ID, format and print fmt parts, and well-formed field lines.
 * libtraceevent's parser trusts its input (a truncated field line crashes
 * it), so anything else is left out before it sees it. */
static bool format_looks_sane(const char *buf, size_t size)
{
	static const char *const parts[] = { "name: ", "ID: ", "format:", "print fmt: " };
	unsigned seen = 0;

	if (memchr(buf, '\0', size))
		return false;
	for (const char *l = buf, *end = buf + size; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t len = nl ? (size_t)(nl - l) : (size_t)(end - l);

		for (unsigned i = 0; i < 4; i++)
			if (len >= strlen(parts[i]) && !strncmp(l, parts[i], strlen(parts[i])))
				seen |= 1u << i;
		if (len > 7 && !strncmp(l, "\tfield:", 7) && !field_line_ok(l, len))
			return false;
		l += len + 1;
	}
	return seen == 0xf;
}

static int parse_formats(struct tk_kernel *k, const char *kdir, char *err,
			 size_t errlen)
{
	char *fdir;
	DIR *sys;
	struct dirent *s;
	int parsed = 0;

	if (asprintf(&fdir, "%s/formats", kdir) < 0)
		return -ENOMEM;
	sys = opendir(fdir);
	if (!sys) {
		snprintf(err, errlen, "cannot open '%s': %s", fdir, strerror(errno));
		free(fdir);
		return -EINVAL;
	}
	while ((s = readdir(sys))) {
		char *sdir;
		DIR *evs;
		struct dirent *e;

		if (s->d_name[0] == '.' || asprintf(&sdir, "%s/%s", fdir, s->d_name) < 0)
			continue;
		evs = opendir(sdir);
		while (evs && (e = readdir(evs))) {
			char *path, *buf;
			size_t size;

			if (e->d_name[0] == '.' ||
			    asprintf(&path, "%s/%s", sdir, e->d_name) < 0)
				continue;
			if (slurp(path, &buf, &size) == 0) {
				/* a format libtraceevent cannot parse only costs
				 * its event's field text */
				if (format_looks_sane(buf, size) &&
				    tep_parse_event(k->tep, buf, size, s->d_name) == 0)
					parsed++;
				free(buf);
			}
			free(path);
		}
		if (evs)
			closedir(evs);
		free(sdir);
	}
	closedir(sys);
	free(fdir);
	return parsed;
}

/*
 * The lines of a printk_formats file that have the kernel's shape,
 * '0xADDR : "TEXT"', copied into a new buffer (NULL if out of memory).
 * libtraceevent (1.7) trusts the file: a line without " : " makes it read
 * past the line, and it trims the closing quote and a trailing "\n" by
 * looking two bytes back without checking the length, so a TEXT shorter
 * than two bytes gets a "\n" here that its trim takes off again.
 */
static char *printk_formats_sane(const char *buf)
{
	size_t cap = strlen(buf) * 2 + 1, n = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	for (const char *l = buf; *l;) {
		size_t len = strcspn(l, "\n"), hex = 0, text;

		if (len > 2 && l[0] == '0' && l[1] == 'x')
			hex = strspn(l + 2, "0123456789abcdefABCDEF");
		text = len - 2 - hex; /* from the space before ':' */
		if (hex >= 1 && hex <= 16 && text >= 5 && !strncmp(l + 2 + hex, " : \"", 4) &&
		    l[len - 1] == '"') {
			memcpy(out + n, l, len - 1);
			n += len - 1;
			if (text - 5 < 2) {
				memcpy(out + n, "\\n", 2);
				n += 2;
			}
			memcpy(out + n, "\"\n", 2);
			n += 2;
		}
		l += len + (l[len] == '\n');
	}
	out[n] = '\0';
	return out;
}

/*
 * The lines of a saved_cmdlines file that have the kernel's shape, 'PID
 * COMM', copied into a new buffer (NULL if out of memory), each control
 * byte of a COMM made '?'.  A task may name itself with any byte but NUL:
 * a newline in a name splits its line in two, and libtraceevent (1.7)
 * stops at the first line it cannot read, so that one such task left
 * every later pid without its name ("<...>") in every recording while
 * its line stayed in the kernel's cache.
 */
static char *saved_cmdlines_sane(const char *buf)
{
	size_t n = 0;
	char *out = malloc(strlen(buf) + 1);

	if (!out)
		return NULL;
	for (const char *l = buf; *l;) {
		size_t len = strcspn(l, "\n"), pid = strspn(l, "0123456789");

		if (pid >= 1 && pid <= 10 && pid + 1 < len && l[pid] == ' ') {
			for (size_t i = 0; i < len; i++)
				out[n + i] = (unsigned char)l[i] < 0x20 || l[i] == 0x7f ? '?'
											  : l[i];
			n += len;
			out[n++] = '\n';
		}
		l += len + (l[len] == '\n');
	}
	out[n] = '\0';
	return out;
}

/* Optional text files that name pids and printk strings (kallsyms, the
 * biggest, is read when first needed: tk_kernel_load_symbols). */
static void parse_extras(struct tk_kernel *k, const char *kdir)
{
	static const struct {
		const char *name;
		int (*parse)(struct tep_handle *, const char *);
		char *(*sane)(const char *);
	} extras[] = {
		{ "printk_formats", tep_parse_printk_formats, printk_formats_sane },
		{ "saved_cmdlines", tep_parse_saved_cmdlines, saved_cmdlines_sane },
	};

	for (size_t i = 0; i < sizeof(extras) / sizeof(extras[0]); i++) {
		char *path, *buf, *sane;

		if (asprintf(&path, "%s/%s", kdir, extras[i].name) < 0)
			continue;
		if (slurp(path, &buf, NULL) == 0) {
			sane = extras[i].sane ? extras[i].sane(buf) : buf;
			if (sane)
				extras[i].parse(k->tep, sane);
			if (sane != buf)
				free(sane);
			free(buf);
		}
		free(path);
	}
	/* Until its first lookup, libtraceevent keeps registered comms in a
	 * list that takes a pid twice, and the lookup then finds either:
	 * look one up now, so that a comm the sched_switch plugin registers
	 * later never replaces the one a pid has, whichever line is printed
	 * first. */
	(void)tep_data_comm_from_pid(k->tep, 1); /* not 0: "<idle>" has no lookup */
}

static void common_field(struct tk_kernel *k, const char *name, unsigned *off,
			 unsigned *size)
{
	struct tep_event **evs = tep_list_events(k->tep, TEP_EVENT_SORT_ID);

	for (; evs && *evs; evs++) {
		struct tep_format_field *f = tep_find_common_field(*evs, name);

		if (f) {
			*off = (unsigned)f->offset;
			if (size)
				*size = (unsigned)f->size;
			return;
		}
	}
}

static int cpu_cmp(const void *a, const void *b)
{
	const struct tk_kernel_cpu *x = a, *y = b;

	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static int open_cpus(struct tk_kernel *k, const char *kdir, char *err,
		     size_t errlen)
{
	DIR *d = opendir(kdir);
	struct dirent *e;
	int ret = 0;

	if (!d) {
		snprintf(err, errlen, "cannot open '%s': %s", kdir, strerror(errno));
		return -errno;
	}
	while ((e = readdir(d)) && !ret) {
		struct tk_kernel_cpu *c;
		unsigned cpu;
		char tail[8];
		struct stat st;
		int fd;

		if (sscanf(e->d_name, "cpu%u.ra%1[w]%1s", &cpu, tail, tail + 2) != 2 ||
		    cpu >= MAX_CPUS)
			continue;
		c = realloc(k->cpus, (k->ncpus + 1) * sizeof(*c));
		if (!c) {
			ret = -ENOMEM;
			break;
		}
		k->cpus = c;
		c = &k->cpus[k->ncpus++];
		memset(c, 0, sizeof(*c));
		c->cpu = cpu;
		if (asprintf(&c->path, "%s/%s", kdir, e->d_name) < 0) {
			c->path = NULL;
			ret = -ENOMEM;
			break;
		}
		c->page = calloc(1, k->page_size + PAGE_PAD);
		c->kbuf = kbuffer_alloc(k->long_size == 4 ? KBUFFER_LSIZE_4 : KBUFFER_LSIZE_8,
					KBUFFER_ENDIAN_SAME_AS_HOST);
		if (!c->page || !c->kbuf) {
			ret = -ENOMEM;
			break;
		}
		fd = tk_open_regular(c->path);
		if (fd < 0 || fstat(fd, &st) < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot open '%s': %s", c->path,
				 strerror(errno));
			if (fd >= 0)
				close(fd);
			break;
		}
		c->size = (size_t)st.st_size;
		if (c->size) {
			void *m = mmap(NULL, c->size, PROT_READ, MAP_PRIVATE, fd, 0);

			if (m == MAP_FAILED) {
				ret = -errno;
				snprintf(err, errlen, "cannot map '%s': %s", c->path,
					 strerror(errno));
			} else {
				c->map = m;
				madvise(m, c->size, MADV_SEQUENTIAL);
			}
		}
		close(fd);
	}
	closedir(d);
	if (!ret && k->ncpus > 1)
		qsort(k->cpus, k->ncpus, sizeof(*k->cpus), cpu_cmp);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory reading '%s'", kdir);
	return ret;
}

void tk_kernel_name_threads(struct tk_kernel *k, const struct tk_trace *t)
{
	for (unsigned i = 0; i < t->nstreams; i++)
		if (t->streams[i].comm[0])
			tep_override_comm(k->tep, t->streams[i].comm, (int)t->streams[i].tid);
}

int tk_kernel_open(const char *dir, struct tk_kernel *k, char *err,
		   size_t errlen)
{
	char *kdir = NULL, *path = NULL, *buf = NULL;
	struct stat st;
	size_t size;
	int ret;

	memset(k, 0, sizeof(*k));
	if (asprintf(&kdir, "%s/kernel", dir) < 0)
		return -ENOMEM;
	if (stat(kdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		free(kdir);
		return -ENOENT;
	}
	k->long_size = sizeof(long);
	k->page_size = 0;
	ret = read_manifest(dir, k, false, err, errlen); /* CPUs' counts below */
	if (ret)
		goto out;
	if (!k->page_size) /* a trace from before the manifest said it */
		k->page_size = (unsigned)sysconf(_SC_PAGESIZE);
	k->tep = tep_alloc();
	if (!k->tep) {
		ret = -ENOMEM;
		goto out;
	}
	tep_set_long_size(k->tep, (int)k->long_size);
	tep_set_page_size(k->tep, (int)k->page_size);
	tep_set_file_bigendian(k->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(k->tep, TEP_LITTLE_ENDIAN);
	if (asprintf(&path, "%s/header_page", kdir) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	ret = slurp(path, &buf, &size);
	if (ret || tep_parse_header_page(k->tep, buf, size, (int)k->long_size) < 0) {
		snprintf(err, errlen, "cannot %s '%s'%s%s", ret ? "read" : "parse",
			 path, ret ? ": " : "", ret ? strerror(-ret) : "");
		/* -ENOENT means "no kernel part" to the caller */
		ret = ret && ret != -ENOENT ? ret : -EINVAL;
		goto out;
	}
	ret = parse_formats(k, kdir, err, errlen);
	if (ret < 0)
		goto out;
	parse_extras(k, kdir);
	k->kdir = strdup(kdir);
	k->plugins = tep_load_plugins(k->tep);
	k->type_size = 2;
	common_field(k, "common_type", &k->type_off, &k->type_size);
	k->flags_off = 2;
	common_field(k, "common_flags", &k->flags_off, NULL);
	k->pc_off = 3;
	common_field(k, "common_preempt_count", &k->pc_off, NULL);
	k->pid_off = 4;
	common_field(k, "common_pid", &k->pid_off, NULL);
	ret = open_cpus(k, kdir, err, errlen);
	if (ret)
		goto out;
	tep_set_cpus(k->tep, (int)k->ncpus);
	ret = read_manifest(dir, k, true, err, errlen);
out:
	free(buf);
	free(path);
	free(kdir);
	if (ret)
		tk_kernel_close(k);
	return ret;
}

void tk_kernel_load_symbols(struct tk_kernel *k)
{
	char *path;

	if (k->symbols_loaded || !k->kdir)
		return;
	k->symbols_loaded = true;
	if (asprintf(&path, "%s/kallsyms", k->kdir) < 0)
		return;
	if (slurp(path, &k->kallsyms, NULL) == 0)
		tep_parse_kallsyms(k->tep, k->kallsyms);
	free(path);
}

int tk_kernel_symbol_addr(void *kernel, const char *name, uint64_t *addr)
{
	struct tk_kernel *k = kernel;
	size_t len = strlen(name);
	int found = 0;

	tk_kernel_load_symbols(k);
	if (!k->kallsyms || !len)
		return 0;
	/* lines are "ADDR TYPE NAME[\tMODULE]" */
	for (const char *s = k->kallsyms; (s = strstr(s, name)); s += len) {
		const char *line = s;
		unsigned long long a;
		char type;

		if (s - k->kallsyms < 3 || s[-1] != ' ' || s[-3] != ' ' ||
		    (s[len] && s[len] != '\n' && s[len] != '\t'))
			continue;
		while (line > k->kallsyms && line[-1] != '\n')
			line--;
		if (sscanf(line, "%llx %c ", &a, &type) != 2)
			continue;
		if (found++)
			return -1;
		*addr = a;
	}
	return found;
}

static int bad_page(struct tk_kernel_cpu *c, size_t off, const char *why,
		    char *err, size_t errlen)
{
	snprintf(err, errlen, "'%s' offset %zu: %s", c->path, off, why);
	c->next_page = c->size;
	c->loaded = false;
	return -EINVAL;
}

/* Load the next page that holds events; false at the end of the file. */
static int load_page(struct tk_kernel *k, struct tk_kernel_cpu *c, char *err,
		     size_t errlen)
{
	unsigned hdr = 8 + k->long_size;

	while (c->next_page < c->size) {
		size_t off = c->next_page, avail = c->size - off;
		uint64_t commit = 0;
		unsigned data;

		if (avail < hdr && k->incomplete)
			return 0; /* the recorder was killed while writing it */
		if (avail < hdr)
			return bad_page(c, off, "truncated page header", err, errlen);
		if (avail > k->page_size)
			avail = k->page_size;
		memcpy(c->page, c->map + off, avail);
		memset(c->page + avail, 0, k->page_size + PAGE_PAD - avail);
		c->next_page += k->page_size;
		memcpy(&commit, c->page + 8, k->long_size);
		data = (unsigned)(commit & ~COMMIT_FLAGS & 0xffffffffu);
		if (data > k->page_size - hdr ||
		    ((commit & MISSED_STORED) && data + k->long_size > k->page_size - hdr))
			return bad_page(c, off, "page commit size past the page", err,
					errlen);
		if (hdr + data > avail && k->incomplete)
			return 0;
		if (hdr + data > avail)
			return bad_page(c, off, "the file ends inside a page (truncated)",
					err, errlen);
		if (!data && !(commit & MISSED_EVENTS))
			continue;
		if (kbuffer_load_subbuffer(c->kbuf, c->page) < 0)
			return bad_page(c, off, "unreadable page", err, errlen);
		c->page_data = data;
		c->loaded = true;
		return 1;
	}
	return 0;
}

int tk_kernel_next(struct tk_kernel *k, struct tk_kernel_cpu *c, char *err,
		   size_t errlen)
{
	unsigned hdr = 8 + k->long_size;

	for (;;) {
		unsigned long long ts;
		void *ev;
		bool first = false;
		int ret;

		if (!c->loaded) {
			ret = load_page(k, c, err, errlen);
			if (ret <= 0)
				return ret;
			ev = kbuffer_read_event(c->kbuf, &ts);
			first = true;
		} else {
			ev = kbuffer_next_event(c->kbuf, &ts);
		}
		if (!ev) {
			c->loaded = false;
			continue;
		}
		int size = kbuffer_event_size(c->kbuf);
		const unsigned char *p = ev;

		if (size < 0 || p < c->page + hdr ||
		    (size_t)(p - c->page) + (unsigned)size > hdr + c->page_data)
			return bad_page(c, c->next_page - k->page_size,
					"event record past the page's data", err, errlen);
		c->missed = 0;
		if (first) {
			int m = kbuffer_missed_events(c->kbuf);

			c->missed = m;
			if (m > 0)
				c->missed_total += (uint64_t)m;
		}
		c->ts = ts;
		c->data = p;
		c->data_size = (unsigned)size;
		c->events++;
		return 1;
	}
}

static unsigned read_uint(const unsigned char *data, unsigned size,
			  unsigned off, unsigned width)
{
	uint64_t v = 0;

	if (off + width > size)
		return 0;
	memcpy(&v, data + off, width);
	return (unsigned)v;
}

int tk_kernel_event_id(const struct tk_kernel *k, const void *data)
{
	uint64_t v = 0;

	memcpy(&v, (const char *)data + k->type_off, k->type_size > 8 ? 8 : k->type_size);
	return (int)v;
}

int tk_kernel_pid(const struct tk_kernel *k, const void *data)
{
	int32_t pid;

	memcpy(&pid, (const char *)data + k->pid_off, 4);
	return pid;
}

unsigned tk_kernel_flags(const struct tk_kernel *k, const void *data)
{
	return read_uint(data, 64, k->flags_off, 1);
}

unsigned tk_kernel_preempt(const struct tk_kernel *k, const void *data)
{
	return read_uint(data, 64, k->pc_off, 1);
}

uint64_t tk_kernel_lost(const struct tk_kernel *k)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < k->ncpus; i++)
		n += k->cpus[i].overrun + k->cpus[i].dropped;
	return n;
}

void tk_kernel_close(struct tk_kernel *k)
{
	for (unsigned i = 0; i < k->ncpus; i++) {
		struct tk_kernel_cpu *c = &k->cpus[i];

		if (c->map)
			munmap((void *)c->map, c->size);
		if (c->kbuf)
			kbuffer_free(c->kbuf);
		free(c->page);
		free(c->path);
	}
	free(k->cpus);
	free(k->events);
	free(k->pid_filter);
	free(k->kdir);
	free(k->kallsyms);
	if (k->tep) {
		if (k->plugins)
			tep_unload_plugins(k->plugins, k->tep);
		tep_free(k->tep);
	}
	memset(k, 0, sizeof(*k));
}
