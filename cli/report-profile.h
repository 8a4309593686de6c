/* SPDX-License-Identifier: MIT */
/*
 * report-profile.h - the table of tracekit report --profile
 * (report-profile.c): per function name, calls and times in ns, filled
 * by report-graph.c as it walks the function tracer's events.
 */
#ifndef TK_REPORT_PROFILE_H
#define TK_REPORT_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ftrace_profile;

/* An empty table; NULL on allocation failure. */
struct ftrace_profile *ftrace_profile_new(void);
/* One call of @name; @timed: total and self are known. */
void ftrace_profile_add(struct ftrace_profile *p, const char *name, bool timed,
			uint64_t total_ns, uint64_t self_ns);
/* The table on @f, sorted by total time. */
void ftrace_profile_print(struct ftrace_profile *p, FILE *f);
void ftrace_profile_free(struct ftrace_profile *p);

#endif /* TK_REPORT_PROFILE_H */
