/* SPDX-License-Identifier: MIT */
/*
 * trace-write.c - write a trace directory's index: manifest, descriptors,
 * CTF metadata (the stream files, and the kernel's pages and formats, are
 * written by the recorder as it goes).
 *
 * Each file is written under a temporary name and renamed into place, so
 * a reader never sees half a file and a failure leaves the old one.
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
#include "trace.h"

static void put_value(FILE *f, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	if (!*s) {
		fputc('%', f); /* "%" alone: the empty string */
		return;
	}
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= ' ' || c == '%' || c == '=' || c >= 0x7f) {
			fputc('%', f);
			fputc(hex[c >> 4], f);
			fputc(hex[c & 15], f);
		} else {
			fputc(c, f);
		}
	}
}

static void put_kernel(FILE *f, const struct tk_trace_kernel *k)
{
	fprintf(f, "kernel instance=");
	put_value(f, k->instance);
	fprintf(f, " clock=");
	put_value(f, k->clock);
	fprintf(f, " page_size=%u cpus=%u buffer_kb=%u tracer=", k->page_size,
		k->cpus, k->buffer_kb);
	put_value(f, k->tracer);
	fprintf(f, " events=");
	put_value(f, k->events);
	fprintf(f, " pid_filter=");
	put_value(f, k->pid_filter);
	fprintf(f, " event_fork=%d stack=%d\n", k->event_fork, k->stack);
	for (unsigned i = 0; i < k->nkcpu; i++) {
		const struct tk_trace_kcpu *c = &k->kcpu[i];

		fprintf(f, "kcpu cpu=%u file=", c->cpu);
		put_value(f, c->file);
		fprintf(f, " bytes=%" PRIu64 " pages=%" PRIu64 " entries=%" PRIu64
			" overrun=%" PRIu64 " dropped=%" PRIu64 "\n", c->bytes,
			c->pages, c->entries, c->overrun, c->dropped);
	}
}

void tk_trace_put_process(FILE *f, const struct tk_trace_process *p)
{
	fprintf(f, "process pid=%u ppid=%u class=%u comm=", p->pid, p->ppid,
		p->class_id);
	put_value(f, p->comm);
	fprintf(f, " exe=");
	put_value(f, p->exe ? p->exe : "");
	fprintf(f, " events=events/%u.desc", p->class_id);
	if (p->lost_nobuf)
		fprintf(f, " lost_nobuf=%" PRIu64, p->lost_nobuf);
	fputc('\n', f);
}

void tk_trace_put_stream(FILE *f, const struct tk_trace_stream *s)
{
	fprintf(f, "stream file=");
	put_value(f, s->file);
	fprintf(f, " pid=%u tid=%u class=%u instance=%" PRIu64 " comm=",
		s->pid, s->tid, s->class_id, s->instance);
	put_value(f, s->comm);
	fprintf(f, " events=%" PRIu64 " bytes=%" PRIu64 " packets=%" PRIu64
		" lost_full=%" PRIu64 " lost_nested=%" PRIu64
		" lost_big=%" PRIu64 " lost_overwritten=%" PRIu64 "\n",
		s->events, s->bytes, s->packets, s->lost_full,
		s->lost_nested, s->lost_big, s->lost_overwritten);
}

static void put_manifest(FILE *f, const struct tk_trace *t)
{
	const struct tk_trace_clock *c = &t->clock;

	fprintf(f, "tracekit version=%d%s\n", TK_TRACE_VERSION,
		t->incomplete ? " state=recording" : t->recovered ? " state=recovered" : "");
	fprintf(f, "host name=");
	put_value(f, t->host);
	fprintf(f, " mode=");
	put_value(f, t->mode);
	fprintf(f, "\nclock source=%s freq=%" PRIu64 " tsc_start=%" PRIu64
		" mono_start=%" PRIu64 " real_start=%" PRIu64 " tsc_stop=%" PRIu64
		" mono_stop=%" PRIu64 " real_stop=%" PRIu64 "\n",
		c->tsc ? "tsc" : "mono", c->freq, c->tsc_start, c->mono_start,
		c->real_start, c->tsc_stop, c->mono_stop, c->real_stop);
	for (unsigned i = 0; i < t->nprocesses; i++)
		if (!t->processes[i].desc_only)
			tk_trace_put_process(f, &t->processes[i]);
	if (t->done.processes_len)
		fwrite(t->done.processes, 1, t->done.processes_len, f);
	for (unsigned i = 0; i < t->nstreams; i++)
		tk_trace_put_stream(f, &t->streams[i]);
	if (t->done.streams_len)
		fwrite(t->done.streams, 1, t->done.streams_len, f);
	if (t->kernel)
		put_kernel(f, t->kernel);
	else if (t->kernel_lines)
		fputs(t->kernel_lines, f);
}

typedef void (*write_fn)(FILE *f, const void *arg);

/* Add the file @path (relative to the trace directory), as fn writes it,
 * to @x; the disk is not touched. */
static int render(struct tk_index *x, const char *path, write_fn fn,
		  const void *arg, char *err, size_t errlen)
{
	struct tk_index_file *grown = realloc(x->files, (x->n + 1) * sizeof(*grown));
	struct tk_index_file *fl;
	FILE *f;

	if (!grown)
		goto nomem;
	x->files = grown;
	fl = &x->files[x->n];
	memset(fl, 0, sizeof(*fl));
	fl->path = strdup(path);
	f = fl->path ? open_memstream(&fl->data, &fl->len) : NULL;
	if (!f) {
		free(fl->path);
		goto nomem;
	}
	fn(f, arg);
	if (fclose(f)) {
		free(fl->path);
		free(fl->data);
		goto nomem;
	}
	x->n++;
	return 0;
nomem:
	snprintf(err, errlen, "cannot write '%s/%s': %s", x->dir, path,
		 strerror(ENOMEM));
	return -ENOMEM;
}

/* Write file @fl of @x into place atomically (a rename), synced to the
 * disk first if x->sync.  The index written while recording is not: it
 * must survive the recorder being killed, which the page cache does, and
 * a recorder that waits on the disk lets the writers' buffers fill. */
static int store(const struct tk_index *x, const struct tk_index_file *fl,
		 char *err, size_t errlen)
{
	char *tmp = NULL, *final = NULL;
	int fd = -1, ret = 0;
	size_t done = 0;

	if (asprintf(&final, "%s/%s", x->dir, fl->path) < 0 ||
	    asprintf(&tmp, "%s.tmp", final) < 0) {
		ret = -ENOMEM;
		snprintf(err, errlen, "cannot write '%s/%s': %s", x->dir,
			 fl->path, strerror(-ret));
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	while (fd >= 0 && done < fl->len) {
		ssize_t n = write(fd, fl->data + done, fl->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (fd < 0 || done < fl->len || (x->sync && fsync(fd))) {
		ret = errno ? -errno : -EIO;
		snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(-ret));
		if (fd >= 0)
			unlink(tmp);
		goto out;
	}
	if (rename(tmp, final) < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot rename '%s': %s", tmp, strerror(-ret));
		unlink(tmp);
	}
out:
	if (fd >= 0)
		close(fd);
	free(tmp);
	free(final);
	return ret;
}

static void write_manifest(FILE *f, const void *arg)
{
	put_manifest(f, arg);
}

static void write_metadata(FILE *f, const void *arg)
{
	tk_ctf_write_metadata(f, arg);
}

static void write_desc(FILE *f, const void *arg)
{
	const struct tk_trace_process *p = arg;

	if (p->desc_blob_size) /* none when the process defines no event */
		fwrite(p->desc_blob, 1, p->desc_blob_size, f);
}

static bool same_size(const char *dir, const char *path, size_t size)
{
	struct stat st;
	char *full;
	bool same;

	if (asprintf(&full, "%s/%s", dir, path) < 0)
		return false;
	same = stat(full, &st) == 0 && (uint64_t)st.st_size == size;
	free(full);
	return same;
}

void tk_index_free(struct tk_index *x)
{
	for (unsigned i = 0; i < x->n; i++) {
		free(x->files[i].path);
		free(x->files[i].data);
	}
	free(x->files);
	free(x->dir);
	memset(x, 0, sizeof(*x));
}

int tk_trace_render_index(const struct tk_trace *t, struct tk_index *x,
			  char *err, size_t errlen)
{
	char path[64];
	int ret;

	memset(x, 0, sizeof(*x));
	x->sync = !t->incomplete;
	x->dir = strdup(t->dir);
	if (!x->dir) {
		snprintf(err, errlen, "cannot write '%s': %s", t->dir,
			 strerror(ENOMEM));
		return -ENOMEM;
	}
	for (unsigned i = 0; i < t->nprocesses; i++) {
		snprintf(path, sizeof(path), "events/%u.desc",
			 t->processes[i].class_id);
		if (same_size(t->dir, path, t->processes[i].desc_blob_size))
			continue; /* written before, and nothing was added */
		ret = render(x, path, write_desc, &t->processes[i], err, errlen);
		if (ret)
			goto fail;
	}
	ret = render(x, "user/metadata", write_metadata, t, err, errlen);
	if (!ret)
		ret = render(x, TK_MANIFEST_NAME, write_manifest, t, err, errlen);
	if (!ret)
		return 0;
fail:
	tk_index_free(x);
	return ret;
}

int tk_trace_store_index(const struct tk_index *x, char *err, size_t errlen)
{
	char *sub;
	int ret;

	for (unsigned i = 0; i < 2; i++) {
		if (asprintf(&sub, "%s/%s", x->dir, i ? "user" : "events") < 0)
			return -ENOMEM;
		if (mkdir(sub, 0700) < 0 && errno != EEXIST) {
			ret = -errno;
			snprintf(err, errlen, "cannot create '%s': %s", sub,
				 strerror(errno));
			free(sub);
			return ret;
		}
		free(sub);
	}
	for (unsigned i = 0; i < x->n; i++) {
		ret = store(x, &x->files[i], err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

int tk_trace_write_index(const struct tk_trace *t, char *err, size_t errlen)
{
	struct tk_index x;
	int ret = tk_trace_render_index(t, &x, err, errlen);

	if (ret)
		return ret;
	ret = tk_trace_store_index(&x, err, errlen);
	tk_index_free(&x);
	return ret;
}
