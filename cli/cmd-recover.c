/* SPDX-License-Identifier: MIT */
/*
 * cmd-recover.c - tracekit recover: make the trace of a recorder that was
 * killed whole for every reader.
 *
 * A killed recorder leaves its stream files longer than what it wrote
 * (it allocates ahead of its direct writes: zeros after the last packet)
 * and its manifest with the counts of its last update.  report reads
 * such a trace as it is; babeltrace2 stops at the first zero magic.
 * recover cuts each stream file after its last whole packet, counts the
 * events that are there, and writes the manifest again, marked
 * "recovered": what the kernel lost stays unknown, the user losses are
 * those the packets say.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "common/ringbuf-layout.h"
#include "format/stream-read.h"
#include "format/trace.h"
#include "options.h"

struct recovered {
	uint64_t events, lost, cut; /* cut: bytes past the last whole packet */
	unsigned unreadable;        /* streams with a malformed record */
};

/* Whether what follows the last whole packet, from @end to @size, is
 * what a killed recorder leaves: zeros (space allocated ahead of its
 * writes), or a packet of @class_id the file cuts short.  Anything else
 * is not ours to cut. */
static bool ours_to_cut(int fd, uint64_t end, uint64_t size, uint32_t class_id)
{
	struct tk_packet_header ph;
	char buf[65536];

	if (pread(fd, &ph, sizeof(ph), (off_t)end) == (ssize_t)sizeof(ph) &&
	    ph.magic == TK_CTF_MAGIC && ph.stream_id == class_id)
		return true;
	while (end < size) {
		size_t want = size - end < sizeof(buf) ? (size_t)(size - end) : sizeof(buf);
		ssize_t n = pread(fd, buf, want, (off_t)end);

		if (n <= 0)
			return false;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i])
				return false;
		end += (uint64_t)n;
	}
	return true;
}

/* Cut @s's file after its last whole packet (not when @dry); *@cut +=
 * the bytes past it. */
static int cut_stream(const struct tk_trace *t, struct tk_trace_stream *s, bool dry,
		      uint64_t *cut)
{
	struct tk_stream_packets sp;
	struct stat st;
	char *path;
	int fd, ret = 0;

	if (asprintf(&path, "%s/%s", t->dir, s->file) < 0)
		return -ENOMEM;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT && !s->bytes) {
		free(path); /* never made: nothing was written */
		return 0;
	}
	if (fd < 0 || fstat(fd, &st) < 0 || (ret = tk_stream_whole_packets(fd, s->class_id, &sp))) {
		ret = ret ? ret : -errno;
		tk_error("cannot read '%s': %s", path, strerror(-ret));
	} else if (!S_ISREG(st.st_mode) ||
		   !ours_to_cut(fd, sp.end, (uint64_t)st.st_size, s->class_id)) {
		ret = -EINVAL;
		tk_error("'%s' offset %" PRIu64 ": neither a packet nor space never written: not a stream file to recover",
			 path, sp.end);
	} else if (!dry && (uint64_t)st.st_size > sp.end && ftruncate(fd, (off_t)sp.end) < 0) {
		ret = -errno;
		tk_error("cannot cut '%s': %s", path, strerror(-ret));
	} else {
		*cut += (uint64_t)st.st_size - sp.end;
		s->bytes = sp.end;
		s->packets = sp.packets;
	}
	if (fd >= 0)
		close(fd);
	free(path);
	return ret;
}

/* Count the events of @s's file up to s->bytes, where it is cut. */
static int count_stream(const struct tk_trace *t, struct tk_trace_stream *s,
			struct recovered *rc)
{
	struct tk_stream_reader r;
	char err[512] = "";
	uint64_t n = 0;
	int ret;

	ret = tk_stream_open(&r, t, s, err, sizeof(err));
	if (!ret)
		while ((ret = tk_stream_next(&r, err, sizeof(err))) == 1 &&
		       r.pos <= s->bytes)
			n++;
	if (ret == 1)
		ret = 0;
	tk_stream_close(&r);
	if (ret == -EINVAL) {
		/* a packet the program scribbled on: every reader stops there */
		tk_warn("%s: its events after that are not counted", err);
		rc->unreadable++;
	} else if (ret < 0) {
		tk_error("%s", err[0] ? err : strerror(-ret));
		return ret;
	}
	s->events = n;
	rc->events += n;
	rc->lost += tk_stream_lost(s);
	return 0;
}

static int parse(int argc, char **argv, const char **dir, bool *dry)
{
	struct opt_parser p;
	int c;

	opt_init(&p, "recover");
	while ((c = opt_next(&p, argc, argv)) != -1) {
		if (c == 'n') {
			*dry = true;
			continue;
		}
		if (c != 'h')
			return TK_EXIT_USAGE;
		printf("usage: tracekit recover [-n] DIR\n\n"
		       "Make the trace DIR of a recorder that was killed whole: cut its\n"
		       "stream files after their last whole packet, count their events\n"
		       "and write its manifest again, so that babeltrace2 reads DIR/user\n"
		       "and report prints exact counts.\n\n"
		       "  -n  say what it would do, and change nothing\n");
		return 1;
	}
	if (!opt_operands_max(&p, argc, argv, 1))
		return TK_EXIT_USAGE;
	if (optind >= argc) {
		tk_error("recover needs the trace directory (tracekit recover DIR)");
		return TK_EXIT_USAGE;
	}
	*dir = argv[optind];
	return 0;
}

int cmd_recover(int argc, char **argv)
{
	struct recovered rc = { 0, 0, 0, 0 };
	struct tk_trace t;
	const char *dir = NULL;
	char err[512] = "", *reserve = NULL;
	bool dry = false;
	int ret = parse(argc, argv, &dir, &dry);

	if (ret)
		return ret == 1 ? 0 : ret;
	if (tk_trace_read_index(dir, &t, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		tk_trace_free(&t);
		return TK_EXIT_FAILURE;
	}
	if (!t.incomplete) {
		printf("'%s' is %s: nothing to recover\n", dir,
		       t.recovered ? "recovered already" : "complete");
		tk_trace_free(&t);
		return 0;
	}
	ret = TK_EXIT_FAILURE;
	for (unsigned i = 0; i < t.nstreams; i++)
		if (cut_stream(&t, &t.streams[i], dry, &rc.cut) < 0 ||
		    count_stream(&t, &t.streams[i], &rc) < 0)
			goto out;
	t.incomplete = false;
	t.recovered = true;
	if (!dry && tk_trace_write_index(&t, err, sizeof(err)) < 0) {
		tk_error("%s", err);
		goto out;
	}
	if (!dry && asprintf(&reserve, "%s/" TK_INDEX_RESERVE, dir) >= 0)
		unlink(reserve);
	printf("%s '%s': %" PRIu64 " user events in %u streams, %" PRIu64
	       " lost; %" PRIu64 " bytes never written %s%s\n",
	       dry ? "would recover" : "recovered", dir, rc.events, t.nstreams, rc.lost, rc.cut,
	       dry ? "to cut" : "cut", t.kernel_lines ? "; kernel events as captured, their losses unknown" : "");
	ret = rc.unreadable ? TK_EXIT_FAILURE : 0;
out:
	free(reserve);
	tk_trace_free(&t);
	return ret;
}
