/* SPDX-License-Identifier: MIT */
/*
 * map-drop.h - the readers map a trace's files whole (stream-read.c,
 * kernel-read.c) and read them once, front to back.  The pages left
 * behind are given back as the reading goes on, so that a reader's
 * resident memory stays what one window holds, not the file's size
 * (10 M events: 233 MB of RSS without this).  A page read again later
 * (a pointer kept into an earlier packet) faults back in from the page
 * cache: the mapping is private and never written, so its content is
 * the file's.
 */
#ifndef TK_FORMAT_MAP_DROP_H
#define TK_FORMAT_MAP_DROP_H

#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

#define TK_MAP_DROP_STEP ((size_t)1 << 20) /* a madvise per MiB read */

/* Give back the pages of @map (page aligned) below @off, from @*unmapped
 * (what was given back so far) on, once a whole step lies there. */
static inline void tk_map_drop_before(const void *map, size_t *unmapped, size_t off)
{
	size_t end;

	if (!map || off < *unmapped + TK_MAP_DROP_STEP)
		return;
	end = off & ~((size_t)sysconf(_SC_PAGESIZE) - 1);
	madvise((char *)map + *unmapped, end - *unmapped, MADV_DONTNEED);
	*unmapped = end;
}

#endif /* TK_FORMAT_MAP_DROP_H */
