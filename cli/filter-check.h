/* SPDX-License-Identifier: MIT */
/*
 * filter-check.h - one filter compiled for the several events it applies
 * to, and the one error said when it compiles for none: the same words
 * and the same rule for `record -f`, `report -F` and `hist -f`.
 *
 * A filter applies to the events that have the fields it names: an event
 * for which it does not compile is left out (report does not show it,
 * record does not record it, lib/registry.c).  It is an error only when
 * it compiles for none of them, and the error shown is the one that got
 * furthest into the expression, as the user meant it for the events with
 * those fields ('ms >' is a missing value for an event with a field ms,
 * not an unknown field of all the others); the event is named when it
 * alone got that far:
 *
 *   bad filter 'ms >' for 'srv:req_end' at column 5: expected a value after '>'
 *   bad filter 'ms ==' at column 6: expected a value after '=='
 */
#ifndef TK_FILTER_CHECK_H
#define TK_FILTER_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include "common/filter.h"

struct filter_check {
	bool any_compiled;       /* for some event */
	const char *first_event; /* the event of the error kept, or NULL */
	bool tied;               /* another event failed as far */
	int column;
	char message[160];
};

/* The filter compiled for an event (@fe NULL), or did not for @event
 * (kept as long as the filter_check; not copied), with error @fe. */
void filter_check_note(struct filter_check *fc, const char *event,
		       const struct tk_filter_error *fe);

/* 0 when the filter compiled for some event, or none was tried; else
 * -EINVAL with "bad filter 'EXPR' [for 'EVENT'] at column N: MESSAGE"
 * in out[len] (no "tracekit: "). */
int filter_check_result(const struct filter_check *fc, const char *expr,
			char *out, size_t len);

#endif /* TK_FILTER_CHECK_H */
