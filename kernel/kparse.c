/* SPDX-License-Identifier: MIT */
/*
 * kparse.c - the little kernel text we read rather than copy: a CPU's
 * ring-buffer stats, and an error_log entry.  Kept apart from tracefs
 * access so that tests/fuzz can feed them anything.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel.h"

static bool stat_value(const char *line, const char *key, uint64_t *out)
{
	size_t n = strlen(key);
	char *end;

	if (strncmp(line, key, n) || line[n] != ':')
		return false;
	line += n + 1;
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line < '0' || *line > '9')
		return false;
	errno = 0;
	*out = strtoull(line, &end, 10);
	return !errno;
}

int tk_kstats_parse(const char *text, size_t len, struct tk_kcpu *cpu)
{
	uint64_t entries = 0, overrun = 0, commit_overrun = 0, dropped = 0, read = 0;
	unsigned have = 0;
	char line[128];

	for (size_t i = 0; i < len;) {
		size_t j = i;

		while (j < len && text[j] != '\n')
			j++;
		if (j - i < sizeof(line)) {
			memcpy(line, text + i, j - i);
			line[j - i] = '\0';
			if (stat_value(line, "entries", &entries))
				have |= 1;
			else if (stat_value(line, "overrun", &overrun))
				have |= 2;
			else if (stat_value(line, "commit overrun", &commit_overrun))
				;
			else if (stat_value(line, "dropped events", &dropped))
				;
			else if (stat_value(line, "read events", &read))
				have |= 4;
		}
		i = j + 1;
	}
	if (have != 7)
		return -EINVAL;
	/* what was read out since the capture began, plus what a failed
	 * move left behind */
	cpu->entries = (read > cpu->read_before ? read - cpu->read_before : 0) + entries;
	cpu->overrun = overrun + commit_overrun;
	cpu->dropped = dropped;
	return 0;
}

/*
 * The kernel's error_log entry for a rejected filter reads
 *
 *   [ 9958.516730] event filter parse error: error: Field not found
 *     Command: prev_pidd == 1
 *                        ^
 *
 * We say it in one line: "at column 11: Field not found".
 */
void tk_kerror_filter(const char *log, const char *event, const char *filter,
		      int e, char *err, size_t errlen)
{
	char *copy = log ? strdup(log) : NULL;
	char *msg = NULL, *line2, *cmd, *line3, *caret, *nl, *again;
	int column = 0;

	if (copy && (msg = strstr(copy, "error: "))) {
		nl = strchr(msg, '\n');
		if (nl)
			*nl = '\0';
		while ((again = strstr(msg + 7, "error: ")))
			msg = again;
		msg += 7;
		line2 = nl ? nl + 1 : NULL;
		cmd = line2 ? strstr(line2, "Command: ") : NULL;
		line3 = cmd ? strchr(cmd, '\n') : NULL;
		if (line3 && (caret = strchr(++line3, '^')))
			column = (int)((caret - line3) - (cmd + 9 - line2)) + 1;
	}
	if (msg && *msg && column > 0)
		snprintf(err, errlen, "bad filter '%s' for '%s' at column %d: %s",
			 filter, event, column, msg);
	else
		snprintf(err, errlen, "bad filter '%s' for '%s': %s", filter, event,
			 msg && *msg ? msg : strerror(e));
	free(copy);
}

bool tk_kerror_new(const char *before, const char *after, char *why, size_t len)
{
	const char *msg;
	size_t n;

	/* entries start with their time: the same text is the same entry */
	if (!after || (before && !strcmp(before, after)) || !(msg = strstr(after, "error: ")))
		return false;
	msg += 7;
	n = strcspn(msg, "\n");
	if (!n)
		return false;
	snprintf(why, len, "%.*s", (int)n, msg);
	return true;
}
