/* SPDX-License-Identifier: MIT */
/*
 * record.h - record's engine as a function, for the verbs that record
 * without going through record's command line: stat records the user
 * events it counts with it.  `tracekit record` itself is its options
 * (cmd-record.c) in front of the same engine.
 */
#ifndef TK_RECORD_H
#define TK_RECORD_H

#include <stdbool.h>

struct opt_buffers; /* options.h */

/* What to record: what record's command line would say. */
struct record_request {
	const char *outdir;        /* -o: the trace directory */
	const char *const *events; /* -e, each: user or kernel events; */
	unsigned nevents;          /* none: every user event */
	char **argv;               /* -- CMD ARGS, NULL-terminated */
	bool quiet;                /* -q */
	const struct opt_buffers *buffers; /* -b, --subbufs, --pool, --block;
					    * NULL: record's defaults */
};

/* Run @q->argv and record it as `tracekit record` would, its messages
 * and summary on stderr.  Returns 0 once the trace is complete, with
 * the command's wait status in *status; TK_EXIT_FAILURE after saying
 * why the recording failed (what it wrote is kept or removed as record
 * does), 127 or 126 when the command cannot run (not found, not
 * executable: as a shell), TK_EXIT_USAGE for a request record would
 * refuse.  The
 * process's signal mask, SIGINT and SIGTERM actions and priority are as
 * they were when it returns. */
int record_run(const struct record_request *q, int *status);

#endif /* TK_RECORD_H */
