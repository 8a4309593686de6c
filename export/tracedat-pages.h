/* SPDX-License-Identifier: MIT */
/*
 * tracedat-pages.h - one CPU's events written as the kernel's ring-buffer
 * pages (the layout tracefs's events/header_page and header_event
 * describe, which libtraceevent's kbuffer reads), spilled to a file as
 * each page fills.
 *
 *   page    u64 timestamp      the time of its first event
 *           u64 commit         bytes of events after the header; bit 31:
 *                              events were lost before this page, bit 30:
 *                              their count follows the events (u64)
 *           events, then zeros to the page's end
 *
 *   event   u32 type_len:5, time_delta:27 (since the previous event)
 *           type_len 1..28     the data follows, type_len * 4 bytes
 *           type_len 0         u32 (data length + 4), the data
 *           type_len 30        time extend: u32 delta >> 27, the next
 *                              event's delta is 0
 *
 * Timestamps are given in order; one earlier than the previous (never
 * seen from one source) is written as equal to it.
 */
#ifndef TK_TRACEDAT_PAGES_H
#define TK_TRACEDAT_PAGES_H

#include <stdbool.h>
#include <stdint.h>

struct td_pages {
	int fd;               /* where full pages go */
	unsigned page_size;
	unsigned char *buf;   /* pages not yet written out */
	unsigned nbuf;        /* complete pages in buf */
	unsigned char *page;  /* the page being filled, after them */
	unsigned used;        /* bytes of events in it */
	bool open;            /* it holds an event */
	long long page_lost;  /* lost before it: 0, N, -1 unknown */
	uint64_t last_ts;
	long long lost;       /* to mark on the next page: 0, N, -1 unknown */
	uint64_t pages, events, bytes;
	int error;            /* first write error, -errno */
};

/* The largest record (data) a page can take. */
static inline unsigned td_pages_max_record(unsigned page_size)
{
	/* header 16, event header 8, room for a stored lost count 8 */
	return page_size - 32;
}

/* Start writing pages of @page_size bytes to @fd.  0 or -ENOMEM. */
int td_pages_init(struct td_pages *p, unsigned page_size, int fd);

/* Add a record of @len bytes (at most td_pages_max_record) at @ts. */
void td_pages_add(struct td_pages *p, uint64_t ts, const void *data,
		  unsigned len);

/* Events were lost before the next record: @count, or -1 if unknown. */
void td_pages_lost(struct td_pages *p, long long count);

/* Write the last page.  Returns 0 or the first write error (-errno). */
int td_pages_finish(struct td_pages *p);

void td_pages_free(struct td_pages *p);

#endif /* TK_TRACEDAT_PAGES_H */
