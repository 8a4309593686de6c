/* SPDX-License-Identifier: MIT */
/*
 * filter-check.c - which error a filter that compiles for none of its
 * events is shown with (filter-check.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "filter-check.h"

void filter_check_note(struct filter_check *fc, const char *event,
		       const struct tk_filter_error *fe)
{
	if (!fe) {
		fc->any_compiled = true;
		return;
	}
	if (fc->first_event && fe->column <= fc->column) {
		if (fe->column == fc->column && strcmp(event, fc->first_event))
			fc->tied = true;
		return;
	}
	fc->first_event = event;
	fc->tied = false;
	fc->column = fe->column;
	snprintf(fc->message, sizeof(fc->message), "%s", fe->message);
}

int filter_check_result(const struct filter_check *fc, const char *expr,
			char *out, size_t len)
{
	if (fc->any_compiled || !fc->first_event)
		return 0;
	if (fc->tied)
		snprintf(out, len, "bad filter '%s' at column %d: %s", expr,
			 fc->column, fc->message);
	else
		snprintf(out, len, "bad filter '%s' for '%s' at column %d: %s", expr,
			 fc->first_event, fc->column, fc->message);
	return -EINVAL;
}
