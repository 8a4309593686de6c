/* SPDX-License-Identifier: MIT */
/*
 * tracedat-pages.c - ring-buffer pages (tracedat-pages.h).
 *
 * Pages are built in a buffer of TD_BATCH pages and written out when it
 * is full, so a CPU's pages cost one write(2) per 256 KiB.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tracedat-pages.h"

#define TD_BATCH 64
#define TD_HEADER 16 /* u64 timestamp, u64 commit */
#define TD_DELTA_MAX ((1u << 27) - 1)
#define TD_TYPE_EXTEND 30
#define TD_SMALL_MAX (28 * 4)
#define TD_MISSED (1ull << 31)
#define TD_MISSED_STORED (1ull << 30)

int td_pages_init(struct td_pages *p, unsigned page_size, int fd)
{
	memset(p, 0, sizeof(*p));
	p->buf = malloc((size_t)TD_BATCH * page_size);
	if (!p->buf)
		return -ENOMEM;
	p->fd = fd;
	p->page_size = page_size;
	p->page = p->buf;
	return 0;
}

static void write_all(struct td_pages *p, const unsigned char *buf, size_t n)
{
	while (n && !p->error) {
		ssize_t w = write(p->fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			p->error = w < 0 ? -errno : -EIO;
			return;
		}
		buf += w;
		n -= (size_t)w;
	}
}

static void put64(unsigned char *at, uint64_t v)
{
	memcpy(at, &v, 8);
}

static void put32(unsigned char *at, uint32_t v)
{
	memcpy(at, &v, 4);
}

static void flush(struct td_pages *p)
{
	write_all(p, p->buf, (size_t)p->nbuf * p->page_size);
	p->nbuf = 0;
	p->page = p->buf;
}

/* Complete the page being filled: its commit word, the lost count after
 * its events when there is one, and on to the next page. */
static void close_page(struct td_pages *p)
{
	uint64_t commit = p->used;

	if (!p->open)
		return;
	if (p->page_lost) {
		commit |= TD_MISSED;
		if (p->page_lost > 0) {
			commit |= TD_MISSED_STORED;
			put64(p->page + TD_HEADER + p->used, (uint64_t)p->page_lost);
		}
	}
	put64(p->page + 8, commit);
	p->open = false;
	p->pages++;
	p->bytes += p->page_size;
	p->nbuf++;
	p->page += p->page_size;
	if (p->nbuf == TD_BATCH)
		flush(p);
}

/* Start a page whose first event is at @ts. */
static void open_page(struct td_pages *p, uint64_t ts)
{
	memset(p->page, 0, p->page_size);
	put64(p->page, ts);
	p->used = 0;
	p->open = true;
	p->last_ts = ts;
	p->page_lost = p->lost;
	p->lost = 0;
}

/* Bytes an event of @padded data bytes takes, with its header. */
static unsigned event_size(unsigned padded)
{
	return (padded && padded <= TD_SMALL_MAX ? 4 : 8) + padded;
}

void td_pages_add(struct td_pages *p, uint64_t ts, const void *data,
		  unsigned len)
{
	unsigned padded = (len + 3) & ~3u;
	unsigned room = p->page_size - TD_HEADER - p->used - 8; /* lost count */
	unsigned char *at;
	uint64_t delta = 0;

	if (p->open) {
		if (ts < p->last_ts)
			ts = p->last_ts;
		delta = ts - p->last_ts;
	}
	if (!p->open || p->lost ||
	    event_size(padded) + (delta > TD_DELTA_MAX ? 8 : 0) > room) {
		close_page(p);
		open_page(p, ts);
		delta = 0;
	}
	at = p->page + TD_HEADER + p->used;
	if (delta > TD_DELTA_MAX) {
		put32(at, TD_TYPE_EXTEND | (uint32_t)(delta & TD_DELTA_MAX) << 5);
		put32(at + 4, (uint32_t)(delta >> 27));
		at += 8;
		p->used += 8;
		delta = 0;
	}
	if (padded && padded <= TD_SMALL_MAX) {
		put32(at, padded / 4 | (uint32_t)delta << 5);
		at += 4;
	} else {
		put32(at, (uint32_t)delta << 5);
		put32(at + 4, len + 4);
		at += 8;
	}
	memcpy(at, data, len);
	p->used += event_size(padded);
	p->last_ts = ts;
	p->events++;
}

void td_pages_lost(struct td_pages *p, long long count)
{
	if (count < 0 || p->lost < 0)
		p->lost = -1;
	else
		p->lost += count;
}

int td_pages_finish(struct td_pages *p)
{
	close_page(p);
	flush(p);
	return p->error;
}

void td_pages_free(struct td_pages *p)
{
	free(p->buf);
	p->buf = p->page = NULL;
}
