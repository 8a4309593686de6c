/* SPDX-License-Identifier: MIT */
/*
 * event-info.h - an event's description, checked, and its records decoded.
 *
 * Descriptors come from outside (a process over the control socket, an
 * ELF file, a trace on disk), so everything is checked before use.
 */
#ifndef TK_EVENT_INFO_H
#define TK_EVENT_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tracekit/desc.h"
#include "tracekit/value.h"

struct tk_print;

struct tk_event_info {
	uint32_t id;
	uint32_t flags; /* enum tk_desc_flags */
	char *provider;
	char *name;
	char *full_name; /* provider:name */
	char *fmt;
	char *args;
	unsigned nfields;
	struct tk_field_desc *fields;
	uint64_t min_size; /* payload bytes with every variable part empty */
	struct tk_print *print; /* prepared by the reader, may be NULL */
	bool print_failed;
	void *user; /* for the reader's own per-event state */
};

/*
 * Parse the descriptor at buf[0..len) into *out (strings and fields are
 * copied; free with tk_event_info_free).  *used gets the descriptor's size.
 * Returns 0, or -EINVAL with a reason in err[errlen], or -ENOMEM.
 */
int tk_event_info_parse(const void *buf, size_t len, struct tk_event_info *out,
			size_t *used, char *err, size_t errlen);
void tk_event_info_free(struct tk_event_info *ev);

/* Walk a tk_meta section read from a file: parse the next descriptor at
 * *p before @end into *ev, skipping the linker's zero padding and bytes
 * that do not parse, and advance *p past it.  Returns 0, or -ENOENT when
 * none is left. */
int tk_meta_next(const char **p, const char *end, struct tk_event_info *ev);

/* Split a marker name at its first underscore: "app_tick" -> app, tick. */
void tk_marker_split(const char *name, char *provider, size_t plen,
		     const char **event);

/*
 * Decode one record's payload at p[0..avail) into values[0..nfields).
 * String values point into p.  Returns the payload's size, or -1 when it
 * does not fit in avail or is malformed (a string without its NUL).
 */
long tk_record_decode(const struct tk_event_info *ev, const char *p,
		      size_t avail, struct tk_value *values);

/* The event whose full name is closest to @name (edit distance), for "did
 * you mean" hints; NULL if none is reasonably close. */
const char *tk_closest_name(const char *name, const char *const *names,
			    unsigned count);

/* Whether SYSTEM:NAME is a stack recorded after another event, which it
 * belongs to: ftrace:user_stack and ftrace:kernel_stack (the kernel's,
 * and the function tracer's user_stack), ftrace:event_stack (--ustack
 * with user events).  A selection of events keeps a stack with the
 * event it follows. */
bool tk_event_is_stack(const char *system, const char *name);

#endif /* TK_EVENT_INFO_H */
