/* SPDX-License-Identifier: MIT */
/*
 * report-lost.c - where each user stream lost events, for report's
 * listing (report.h).
 *
 * Each packet of a stream says in events_discarded how many events its
 * thread had lost by the packet's end (a running count, CTF 1.8's).  A
 * rise from one packet to the next is a loss between the last event
 * before and the first after; it is placed before that first event, as
 * trace-cmd places a kernel CPU's.  What a stream lost after its last
 * event is counted by its final packet, which holds no event
 * (cli/consumer.c write_final): it is placed right after that last
 * event, when the merge finds the stream ended.  A stream with no event
 * at all has its losses placed before the listing's first event.
 *
 *     stream 3:  e1 e2 | e3 e4 | e5 |  (end packet)
 *     discarded:   0   |   0   | 40 |  55
 *     listing:   e1 e2 e3 e4 [40 EVENTS DROPPED] e5 [15 EVENTS DROPPED]
 *
 * In overwrite mode the events a stream's ring overwrote were all older
 * than the first it kept, whenever its packets counted them: they are
 * placed before that first event.
 *
 * Where the manifest counts more than the packets say (packets that
 * could not be written), the rest goes with the stream's end too, so
 * that a stream's lines sum to its count in the header.  The packets'
 * counts are the program's (it may write over them): in a finished
 * trace no line takes a stream past the recorder's count; in one whose
 * recorder never finished it (killed), the packets may know more.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

int report_lost_open(struct report_lost *l, const struct tk_merge *m)
{
	memset(l, 0, sizeof(*l));
	l->m = m;
	l->prev = ~0u;
	l->overwrite = !strcmp(m->trace->mode, "overwrite");
	l->seen = calloc(m->nreaders + 1, sizeof(*l->seen));
	l->last = calloc(m->nreaders + 1, sizeof(*l->last));
	if (!l->seen || !l->last) {
		report_lost_close(l);
		return -ENOMEM;
	}
	return 0;
}

void report_lost_close(struct report_lost *l)
{
	free(l->seen);
	free(l->last);
	l->seen = l->last = NULL;
}

/* @have, the events stream @src had lost by some packet's end, as far
 * as the recorder's count allows (see the top). */
static uint64_t lost_capped(const struct report_lost *l, unsigned src, uint64_t have)
{
	uint64_t lost = tk_stream_lost(&l->m->trace->streams[src]);

	return have > lost && !l->m->trace->incomplete ? lost : have;
}

/* Stream @src has ended: what it lost after its last event. */
static void stream_end(struct report_lost *l, unsigned src,
		       void (*say)(void *, const struct report_loss *), void *arg)
{
	const struct tk_stream_reader *rd = &l->m->readers[src];
	uint64_t lost = tk_stream_lost(&l->m->trace->streams[src]);
	struct report_loss loss = { src, 0, l->last[src], 0 };

	if (rd->discarded > lost && l->m->trace->incomplete)
		lost = rd->discarded; /* see the top */
	if (lost <= l->seen[src])
		return;
	loss.count = lost - l->seen[src];
	l->seen[src] = lost;
	/* the final packet's time, when the reader got to it: the losses
	 * came before it */
	if (rd->map && rd->last_ts >= loss.after)
		loss.before = rd->last_ts;
	say(arg, &loss);
}

void report_lost_before(struct report_lost *l, const struct tk_merge_event *ev,
			void (*say)(void *, const struct report_loss *), void *arg)
{
	const struct tk_merge *m = l->m;
	uint64_t have;
	unsigned src;

	if (!l->started) {
		/* every source is open: those out of the heap have no event */
		bool *in = calloc(m->nreaders + 1, sizeof(*in));

		l->started = true;
		for (unsigned i = 0; in && i < m->heap_len; i++)
			if (m->heap[i].src < m->nreaders)
				in[m->heap[i].src] = true;
		for (unsigned i = 0; in && i < m->nreaders; i++)
			if (!in[i])
				stream_end(l, i, say, arg);
		free(in);
	} else if (l->prev < m->nreaders && m->heap_len < l->heap_len) {
		/* the source of the event before left the heap: it ended
		 * (or failed) */
		stream_end(l, l->prev, say, arg);
	}
	l->heap_len = m->heap_len;
	l->prev = ~0u;
	if (!ev)
		return;
	if (!ev->user) {
		l->prev = m->nreaders; /* a kernel CPU */
		return;
	}
	src = (unsigned)(ev->user - m->readers);
	l->prev = src;
	have = lost_capped(l, src, ev->user->discarded);
	/* overwrite mode: the events overwritten were all older than the
	 * first kept, whenever the packets counted them */
	if (l->overwrite && !l->last[src] &&
	    m->trace->streams[src].lost_overwritten > have)
		have = m->trace->streams[src].lost_overwritten;
	if (have > l->seen[src]) {
		struct report_loss loss = { src, have - l->seen[src], l->last[src],
					    ev->ts };

		l->seen[src] = have;
		say(arg, &loss);
	}
	l->last[src] = ev->ts;
}
