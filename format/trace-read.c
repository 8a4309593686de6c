/* SPDX-License-Identifier: MIT */
/*
 * trace-read.c - read a trace directory's index (manifest, descriptors).
 *
 * The manifest is a line per record, "kind key=value ...", values
 * %XX-escaped; unknown kinds and keys are skipped so that later versions
 * can add to it.  Everything is checked: a trace is input from outside.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/regular-file.h"
#include "common/ringbuf-layout.h"
#include "common/visible.h"
#include "trace.h"

#define MAX_DESC_FILE (64u << 20)

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decode a %XX-escaped value in place; false if malformed (with
 * @lenient, a bad escape is kept as it is). */
static bool unescape(char *s, bool lenient)
{
	char *o = s;

	if (strcmp(s, "%") == 0) {
		*s = '\0';
		return true;
	}
	while (*s) {
		int h = *s == '%' ? hexval(s[1]) : -1;
		int l = h < 0 ? -1 : hexval(s[2]);

		if (*s == '%' && (h < 0 || l < 0) && !lenient)
			return false;
		if (h >= 0 && l >= 0) {
			*o++ = (char)(h * 16 + l);
			s += 3;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return true;
}

int tk_manifest_split(char *line, bool lenient, struct tk_manifest_rec *r)
{
	char *save, *tok;

	r->n = 0;
	r->kind = strtok_r(line, " \t\n", &save);
	if (!r->kind)
		return 0;
	while (r->n < TK_MANIFEST_MAX_KEYS &&
	       (tok = strtok_r(NULL, " \t\n", &save))) {
		char *eq = strchr(tok, '=');

		if (!eq && lenient)
			continue;
		if (!eq)
			return -EINVAL;
		*eq = '\0';
		if (!unescape(eq + 1, lenient))
			return -EINVAL;
		r->kv[r->n].key = tok;
		r->kv[r->n++].value = eq + 1;
	}
	return 0;
}

const char *tk_manifest_get(const struct tk_manifest_rec *r, const char *key)
{
	for (unsigned i = 0; i < r->n; i++)
		if (strcmp(r->kv[i].key, key) == 0)
			return r->kv[i].value;
	return NULL;
}

/* A key that must be there, with a number at most @max. */
static bool get_num(const struct tk_manifest_rec *r, const char *key,
		    uint64_t max, uint64_t *out)
{
	const char *v = tk_manifest_get(r, key);

	return v && tk_manifest_u64(v, out) && *out <= max;
}

static bool get_u64(const struct tk_manifest_rec *r, const char *key,
		    uint64_t *out)
{
	return get_num(r, key, UINT64_MAX, out);
}

static bool get_u32(const struct tk_manifest_rec *r, const char *key,
		    uint32_t *out)
{
	uint64_t v;

	if (!get_num(r, key, UINT32_MAX, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

/* A key that may be absent (then *out is left as it is); if there, it is
 * a number. */
static bool opt_u64(const struct tk_manifest_rec *r, const char *key,
		    uint64_t *out)
{
	return !tk_manifest_get(r, key) || get_u64(r, key, out);
}

static bool opt_u32(const struct tk_manifest_rec *r, const char *key,
		    uint32_t *out)
{
	return !tk_manifest_get(r, key) || get_u32(r, key, out);
}

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

static int event_cmp(const void *a, const void *b)
{
	const struct tk_event_info *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int read_file(const char *path, char **buf, size_t *size)
{
	FILE *f = tk_fopen_regular(path);
	long n;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 ||
	    (unsigned long)n > MAX_DESC_FILE || fseek(f, 0, SEEK_SET) < 0) {
		fclose(f);
		return -EFBIG;
	}
	*buf = malloc((size_t)n + 1);
	if (!*buf) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(*buf, 1, (size_t)n, f) != (size_t)n) {
		free(*buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*size = (size_t)n;
	return 0;
}

/* Parse records (u32 id, u32 size, descriptor padded to 8). */
static int parse_descs(struct tk_trace_process *p, const char *path, char *err,
		       size_t errlen)
{
	size_t off = 0;
	char why[160];

	while (off < p->desc_blob_size) {
		uint32_t id, size;
		struct tk_event_info *ev;
		int ret;

		if (p->desc_blob_size - off < 8)
			goto bad;
		memcpy(&id, p->desc_blob + off, 4);
		memcpy(&size, p->desc_blob + off + 4, 4);
		off += 8;
		if (size > p->desc_blob_size - off)
			goto bad;
		ev = realloc(p->events, (p->nevents + 1) * sizeof(*ev));
		if (!ev)
			return -ENOMEM;
		p->events = ev;
		ret = tk_event_info_parse(p->desc_blob + off, size,
					  &p->events[p->nevents], NULL, why,
					  sizeof(why));
		if (ret) {
			snprintf(err, errlen, "'%s': %s", path, why);
			return ret;
		}
		p->events[p->nevents++].id = id;
		off += (size + 7) & ~7u;
	}
	if (p->nevents > 1)
		qsort(p->events, p->nevents, sizeof(*p->events), event_cmp);
	return 0;
bad:
	snprintf(err, errlen, "'%s' is truncated", path);
	return -EINVAL;
}

static int add_process(struct tk_trace *t, const struct tk_manifest_rec *r,
		       char *err, size_t errlen)
{
	struct tk_trace_process *p;
	const char *events = tk_manifest_get(r, "events");
	char *path;
	int ret;

	p = realloc(t->processes, (t->nprocesses + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	t->processes = p;
	p = &t->processes[t->nprocesses];
	memset(p, 0, sizeof(*p));
	if (!get_u32(r, "pid", &p->pid) || !get_u32(r, "class", &p->class_id) ||
	    !events || strstr(events, "..") || events[0] == '/')
		return -EINVAL;
	if (!opt_u32(r, "ppid", &p->ppid))
		return -EINVAL;
	if (!opt_u64(r, "lost_nobuf", &p->lost_nobuf))
		return -EINVAL;
	copy_str(p->comm, sizeof(p->comm), tk_manifest_get(r, "comm"));
	tk_visible_name(p->comm); /* printed on every line */
	p->exe = strdup(tk_manifest_get(r, "exe") ? tk_manifest_get(r, "exe") : "");
	t->nprocesses++;
	if (asprintf(&path, "%s/%s", t->dir, events) < 0)
		return -ENOMEM;
	ret = read_file(path, &p->desc_blob, &p->desc_blob_size);
	if (ret) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(-ret));
		free(path);
		return ret;
	}
	ret = parse_descs(p, path, err, errlen);
	free(path);
	return ret;
}

static int add_stream(struct tk_trace *t, const struct tk_manifest_rec *r)
{
	struct tk_trace_stream *s;
	const char *file = tk_manifest_get(r, "file");

	if (!file || !*file || strstr(file, "..") || file[0] == '/')
		return -EINVAL;
	s = realloc(t->streams, (t->nstreams + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	t->streams = s;
	s = &t->streams[t->nstreams];
	memset(s, 0, sizeof(*s));
	if (!get_u32(r, "pid", &s->pid) || !get_u32(r, "tid", &s->tid) ||
	    !get_u32(r, "class", &s->class_id))
		return -EINVAL;
	s->file = strdup(file);
	t->nstreams++;
	copy_str(s->comm, sizeof(s->comm), tk_manifest_get(r, "comm"));
	tk_visible_name(s->comm);
	if (!opt_u64(r, "instance", &s->instance) ||
	    !opt_u64(r, "events", &s->events) ||
	    !opt_u64(r, "bytes", &s->bytes) ||
	    !opt_u64(r, "packets", &s->packets) ||
	    !opt_u64(r, "lost_full", &s->lost_full) ||
	    !opt_u64(r, "lost_nested", &s->lost_nested) ||
	    !opt_u64(r, "lost_big", &s->lost_big) ||
	    !opt_u64(r, "lost_overwritten", &s->lost_overwritten))
		return -EINVAL;
	return 0;
}

static int set_clock(struct tk_trace *t, const struct tk_manifest_rec *r)
{
	struct tk_trace_clock *c = &t->clock;
	const char *src = tk_manifest_get(r, "source");

	if (!src || !get_u64(r, "freq", &c->freq) || c->freq == 0 ||
	    !get_u64(r, "tsc_start", &c->tsc_start) ||
	    !get_u64(r, "mono_start", &c->mono_start) ||
	    !get_u64(r, "real_start", &c->real_start))
		return -EINVAL;
	c->tsc = strcmp(src, "tsc") == 0;
	if (!opt_u64(r, "tsc_stop", &c->tsc_stop) ||
	    !opt_u64(r, "mono_stop", &c->mono_stop) ||
	    !opt_u64(r, "real_stop", &c->real_stop))
		return -EINVAL;
	return 0;
}

/* One name per thread: a thread with several streams (a buffer per
 * session, a restart) goes by its last stream's name, the one the
 * recorder read last (docs/format.md, "Thread names"). */
static void name_threads(struct tk_trace *t)
{
	for (unsigned i = t->nstreams; i-- > 0;) {
		const struct tk_trace_stream *last = &t->streams[i];

		for (unsigned j = 0; j < i; j++)
			if (t->streams[j].tid == last->tid)
				memcpy(t->streams[j].comm, last->comm, sizeof(last->comm));
	}
}

/* The events_discarded of the last whole packet header of @s's file: what
 * its writer had lost by then.  0 if there is none. */
static uint64_t discarded_at_end(const struct tk_trace *t,
				 const struct tk_trace_stream *s)
{
	struct tk_packet_header ph;
	uint64_t discarded = 0, off = 0;
	char *path;
	int fd;

	if (asprintf(&path, "%s/%s", t->dir, s->file) < 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return 0;
	/* space allocated ahead and never written reads as zeros */
	while (pread(fd, &ph, sizeof(ph), (off_t)off) == (ssize_t)sizeof(ph) &&
	       ph.magic == TK_CTF_MAGIC && ph.packet_size % 8 == 0 &&
	       ph.packet_size / 8 >= sizeof(ph) &&
	       ph.packet_size / 8 <= (uint64_t)INT64_MAX - off) {
		discarded = ph.events_discarded;
		off += ph.packet_size / 8;
	}
	close(fd);
	return discarded;
}

/* A recorder killed after its last update left counts that are too low
 * where its writers lost events since: the packets it wrote after that
 * say how many, in the header of each (lost so far). */
static void lost_since_update(struct tk_trace *t)
{
	for (unsigned i = 0; i < t->nstreams; i++) {
		struct tk_trace_stream *s = &t->streams[i];
		uint64_t discarded = discarded_at_end(t, s);

		if (discarded > tk_stream_lost(s))
			s->lost_later = discarded - tk_stream_lost(s);
	}
}

int tk_trace_read_index(const char *dir, struct tk_trace *t, char *err,
			size_t errlen)
{
	char *path = NULL, *line = NULL;
	size_t cap = 0;
	FILE *f;
	int lineno = 0, ret = 0;
	bool have_clock = false;

	memset(t, 0, sizeof(*t));
	if (errlen)
		err[0] = '\0';
	t->dir = strdup(dir);
	if (!t->dir || asprintf(&path, "%s/%s", dir, TK_MANIFEST_NAME) < 0)
		return -ENOMEM;
	f = tk_fopen_regular(path);
	if (!f) {
		struct stat st;

		ret = -errno;
		if (stat(dir, &st) < 0)
			snprintf(err, errlen, "cannot open '%s': %s", dir,
				 strerror(errno));
		else if (ret == -ENOENT)
			snprintf(err, errlen, "'%s' is not a tracekit trace (no %s)",
				 dir, TK_MANIFEST_NAME);
		else
			snprintf(err, errlen, "cannot open '%s': %s", path,
				 tk_open_strerror(-ret));
		free(path);
		tk_trace_free(t);
		return ret;
	}
	while (getline(&line, &cap, f) > 0) {
		struct tk_manifest_rec r;
		const char *kind;

		lineno++;
		if (tk_manifest_split(line, false, &r))
			goto bad;
		kind = r.kind;
		if (!kind)
			continue;
		if (lineno == 1) {
			const char *state = tk_manifest_get(&r, "state");

			if (strcmp(kind, "tracekit") != 0)
				goto bad;
			t->incomplete = state && !strcmp(state, "recording");
			continue;
		}
		if (strcmp(kind, "host") == 0) {
			copy_str(t->host, sizeof(t->host), tk_manifest_get(&r, "name"));
			copy_str(t->mode, sizeof(t->mode), tk_manifest_get(&r, "mode"));
		} else if (strcmp(kind, "clock") == 0) {
			if (set_clock(t, &r))
				goto bad;
			have_clock = true;
		} else if (strcmp(kind, "process") == 0) {
			ret = add_process(t, &r, err, errlen);
			if (ret == -EINVAL && !err[0])
				goto bad;
			if (ret)
				goto out;
		} else if (strcmp(kind, "stream") == 0) {
			if (add_stream(t, &r))
				goto bad;
		}
	}
	name_threads(t);
	if (t->incomplete)
		lost_since_update(t);
	if (lineno == 0 || !have_clock) {
		snprintf(err, errlen, "'%s' is not a tracekit manifest%s", path,
			 lineno ? " (no clock line)" : " (empty)");
		ret = -EINVAL;
	}
	goto out;
bad:
	snprintf(err, errlen, "'%s' line %d is malformed", path, lineno);
	ret = -EINVAL;
out:
	fclose(f);
	free(line);
	free(path);
	if (ret)
		tk_trace_free(t);
	return ret;
}

void tk_trace_free(struct tk_trace *t)
{
	for (unsigned i = 0; i < t->nprocesses; i++) {
		struct tk_trace_process *p = &t->processes[i];

		for (unsigned j = 0; j < p->nevents; j++)
			tk_event_info_free(&p->events[j]);
		free(p->events);
		free(p->exe);
		free(p->desc_blob);
	}
	for (unsigned i = 0; i < t->nstreams; i++)
		free(t->streams[i].file);
	free(t->processes);
	free(t->streams);
	free(t->dir);
	memset(t, 0, sizeof(*t));
}

const struct tk_event_info *tk_process_event(const struct tk_trace_process *p,
					     uint32_t id)
{
	unsigned lo = 0, hi = p->nevents;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (p->events[mid].id == id)
			return &p->events[mid];
		if (p->events[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct tk_trace_process *tk_trace_process_of(const struct tk_trace *t,
						   uint32_t class_id)
{
	for (unsigned i = 0; i < t->nprocesses; i++)
		if (t->processes[i].class_id == class_id)
			return &t->processes[i];
	return NULL;
}

static uint64_t ticks_to_ns(const struct tk_trace_clock *c, uint64_t ts,
			    uint64_t base_ns)
{
	if (ts >= c->tsc_start)
		return base_ns + (uint64_t)((unsigned __int128)(ts - c->tsc_start) *
					    1000000000u / c->freq);
	return base_ns - (uint64_t)((unsigned __int128)(c->tsc_start - ts) *
				    1000000000u / c->freq);
}

uint64_t tk_clock_to_mono(const struct tk_trace_clock *c, uint64_t ts)
{
	return ticks_to_ns(c, ts, c->mono_start);
}

uint64_t tk_clock_to_real(const struct tk_trace_clock *c, uint64_t ts)
{
	return ticks_to_ns(c, ts, c->real_start);
}
