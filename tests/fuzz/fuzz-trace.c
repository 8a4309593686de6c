/* SPDX-License-Identifier: MIT */
/*
 * fuzz-trace.c - libFuzzer entry for reading a trace directory.
 *
 * The input is split into the three files of a small trace, written into a
 * private directory (made once per process under $TMPDIR, else /dev/shm or
 * /tmp; reused; removed at exit):
 *
 *   byte 0        flags: bit 0 clear: the manifest is the fixed one below
 *                 (a clock, process 1 of class 1 with events/1.desc, its
 *                 stream user/s) followed by the manifest part; set: the
 *                 manifest part alone.  Bit 1: a short error buffer.
 *   bytes 1-2     length of the manifest part (u16, little-endian)
 *   bytes 3-4     length of the descriptor file (u16, little-endian)
 *   then          the manifest part  -> DIR/tracekit.manifest
 *                 the descriptors    -> DIR/events/1.desc
 *                 the rest           -> DIR/user/s
 *
 * Lengths past the end of the input are cut to it, missing bytes are zero.
 * The index is read with tk_trace_read_index(); when it reads, every
 * stream is opened and its events read to the end or the first error, each
 * event printed as `tracekit report` prints it.  Errors must come with a
 * message, and nothing may be left to free.
 *
 *   tests/fuzz/run 1    # builds it in build-fuzz/ (tests/fuzz/meson.build)
 *   tests/fuzz/make-seeds.sh corpus && build-fuzz/tests/fuzz/fuzz-trace \
 *	-max_len=8192 corpus
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/printfmt.h"
#include "format/stream-read.h"
#include "format/trace.h"

static const char fixed_manifest[] =
	"tracekit version=1\n"
	"clock source=tsc freq=1000000000 tsc_start=0 mono_start=0 "
	"real_start=0\n"
	"process pid=1 class=1 comm=x exe=/x events=events/1.desc\n"
	"stream file=user/s pid=1 tid=1 class=1\n";

static char dir[4096];

static void path_of(char *buf, size_t size, const char *name)
{
	if ((size_t)snprintf(buf, size, "%s/%s", dir, name) >= size)
		abort();
}

static void fuzz_cleanup(void)
{
	static const char *const files[] = { "tracekit.manifest",
					     "events/1.desc", "user/s" };
	char p[4200];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		path_of(p, sizeof(p), files[i]);
		unlink(p);
	}
	path_of(p, sizeof(p), "events");
	rmdir(p);
	path_of(p, sizeof(p), "user");
	rmdir(p);
	rmdir(dir);
}

static void make_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	char p[4200];

	/* Files rewritten on every input: tmpfs is ten times faster. */
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
	if ((size_t)snprintf(dir, sizeof(dir), "%s/fuzz-trace.XXXXXX", tmp) >=
	    sizeof(dir) - 64 || !mkdtemp(dir))
		abort();
	atexit(fuzz_cleanup);
	path_of(p, sizeof(p), "events");
	if (mkdir(p, 0700) < 0)
		abort();
	path_of(p, sizeof(p), "user");
	if (mkdir(p, 0700) < 0)
		abort();
}

static void write_file(const char *name, const void *a, size_t na,
		       const void *b, size_t nb)
{
	char p[4200];
	int fd;

	path_of(p, sizeof(p), name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	for (int part = 0; part < 2; part++) {
		const char *s = part ? b : a;
		size_t n = part ? nb : na, done = 0;

		while (done < n) {
			ssize_t w = write(fd, s + done, n - done);

			if (w <= 0)
				abort();
			done += (size_t)w;
		}
	}
	close(fd);
}

static void check(int ok)
{
	if (!ok)
		__builtin_trap();
}

/* A message was given, NUL-terminated inside the buffer. */
static void check_err(const char *err, size_t errlen)
{
	check(err[0] && memchr(err, '\0', errlen));
}

static size_t take_u16(const uint8_t *data, size_t size, size_t at)
{
	uint16_t v = 0;

	if (at < size)
		v |= data[at];
	if (at + 1 < size)
		v |= (uint16_t)(data[at + 1] << 8);
	return v;
}

static void print_event(struct tk_stream_reader *r, char *err, size_t errlen)
{
	struct tk_event_info *ev = (struct tk_event_info *)r->event;
	char fields[4096];
	size_t n;

	if (!ev->print && !ev->print_failed) {
		if (tk_print_prepare(ev->fmt, ev->args, ev->fields, ev->nfields,
				     &ev->print, err, errlen) < 0) {
			check(!ev->print);
			ev->print_failed = true;
			tk_print_prepare("", "", ev->fields, ev->nfields,
					 &ev->print, err, errlen);
		}
	}
	if (ev->print) {
		/* The text may hold NULs (%c of 0): only its end is known. */
		n = tk_print_format(ev->print, r->values, fields, sizeof(fields));
		check(fields[n < sizeof(fields) ? n : sizeof(fields) - 1] == '\0');
	}
}

static void read_stream(const struct tk_trace *t,
			const struct tk_trace_stream *s, char *err,
			size_t errlen)
{
	struct tk_stream_reader r;
	uint64_t sum = 0;
	int ret;

	err[0] = '\0';
	ret = tk_stream_open(&r, t, s, err, errlen);
	if (ret) {
		check(ret < 0);
		if (ret != -ENOMEM)
			check_err(err, errlen);
		tk_stream_close(&r);
		return;
	}
	check(r.process && r.process->class_id == s->class_id);
	while ((ret = tk_stream_next(&r, err, errlen)) > 0) {
		const struct tk_event_info *ev = r.event;

		check(ret == 1 && ev);
		check(ev >= r.process->events &&
		      ev < r.process->events + r.process->nevents);
		check(r.payload >= r.map && r.payload_size >= ev->min_size &&
		      r.payload + r.payload_size <= r.map + r.size);
		for (unsigned i = 0; i < ev->nfields; i++) {
			const struct tk_value *v = &r.values[i];

			if (ev->fields[i].kind < TK_KIND_CHARS)
				continue;
			check(v->str >= r.payload &&
			      v->str + v->len <= r.payload + r.payload_size);
		}
		sum += tk_clock_to_mono(&t->clock, r.ts);
		sum += tk_clock_to_real(&t->clock, r.ts);
		print_event(&r, err, errlen);
		err[0] = '\0';
	}
	if (ret < 0) {
		check(ret == -EINVAL || ret == -ENOMEM);
		if (ret == -EINVAL)
			check_err(err, errlen);
	}
	(void)sum;
	tk_stream_close(&r);
	check(!r.map && !r.values && !r.path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct tk_trace zero;
	struct tk_trace t;
	size_t nman, ndesc, off, errlen;
	bool fixed;
	char *err;
	int ret;

	if (!dir[0])
		make_dir();

	fixed = !(size && (data[0] & 1));
	errlen = size && (data[0] & 2) ? 8 : 512;
	nman = take_u16(data, size, 1);
	ndesc = take_u16(data, size, 3);
	off = size < 5 ? size : 5;
	if (nman > size - off)
		nman = size - off;
	write_file(TK_MANIFEST_NAME, fixed ? fixed_manifest : "",
		   fixed ? sizeof(fixed_manifest) - 1 : 0, data + off, nman);
	off += nman;
	if (ndesc > size - off)
		ndesc = size - off;
	write_file("events/1.desc", data + off, ndesc, "", 0);
	off += ndesc;
	write_file("user/s", data + off, size - off, "", 0);

	err = malloc(errlen);
	if (!err)
		return 0;
	memset(err, 'x', errlen);
	ret = tk_trace_read_index(dir, &t, err, errlen);
	if (ret) {
		check(ret < 0);
		if (ret != -ENOMEM)
			check_err(err, errlen);
		check(memcmp(&t, &zero, sizeof(t)) == 0);
		free(err);
		return 0;
	}
	check(t.dir && strcmp(t.dir, dir) == 0);
	check(t.clock.freq != 0);
	check(t.nprocesses >= 1 || !fixed);
	for (unsigned i = 0; i < t.nprocesses; i++) {
		const struct tk_trace_process *p = &t.processes[i];

		for (unsigned j = 0; j < p->nevents; j++) {
			check(p->events[j].full_name && p->events[j].fields);
			check(j == 0 || p->events[j - 1].id <= p->events[j].id);
			check(tk_process_event(p, p->events[j].id) &&
			      tk_process_event(p, p->events[j].id)->id ==
				      p->events[j].id);
		}
	}
	for (unsigned i = 0; i < t.nstreams; i++) {
		check(t.streams[i].file && t.streams[i].file[0]);
		read_stream(&t, &t.streams[i], err, errlen);
	}
	tk_trace_free(&t);
	check(memcmp(&t, &zero, sizeof(t)) == 0);
	free(err);
	return 0;
}
