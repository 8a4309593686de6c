/* SPDX-License-Identifier: MIT */
/*
 * uprobes.c - dynamic probes on user code (format/probes.h) defined in
 * the kernel's uprobe_events, and removed again.
 *
 * uprobe_events is global: a probe defined there shows in every
 * instance, and only an instance that enables it records it.  Ours live
 * in groups named after the recorder and the kind,
 *
 *     tracekit_<recorder pid>_uprobe | _uretprobe | _usdt
 *
 * so that two recordings never clash and 'tracekit reset' can tell a
 * killed recorder's probes (its pid is gone) from a running one's.  A
 * trace saves their formats under the kind alone (uprobe:NAME ...), see
 * tk_uprobe_kind_of().  A probe cannot be removed while an instance
 * enables it: the instance goes first.
 *
 * Probes are written as the kernel's uprobetracer documents them,
 *     p|r:GROUP/EVENT PATH:0xOFFSET[(0xREF_CTR_OFFSET)] [NAME=FETCHARG:TYPE]...
 * by this file rather than tracefs_uprobe_alloc(), which (libtracefs
 * 1.6) has no reference counter for USDT semaphores; removal and listing
 * go through libtracefs's dynamic event calls.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h>
#include "kernel.h"
#include "format/probes.h"

static const char *const kind_names[] = {
	[TK_PROBE_UPROBE] = "uprobe",
	[TK_PROBE_URETPROBE] = "uretprobe",
	[TK_PROBE_USDT] = "usdt",
};

#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))

static void group_name(char *out, size_t len, pid_t owner, enum tk_probe_kind kind)
{
	snprintf(out, len, TK_UPROBE_GROUP_PREFIX "%d_%s", (int)owner, kind_names[kind]);
}

/* The owner pid of group @group, with *kind its kind; 0 when it is not
 * one of ours. */
static pid_t group_owner(const char *group, const char **kind)
{
	const char *p = group + strlen(TK_UPROBE_GROUP_PREFIX);
	char *end;
	long pid;

	if (strncmp(group, TK_UPROBE_GROUP_PREFIX, strlen(TK_UPROBE_GROUP_PREFIX)) ||
	    !isdigit((unsigned char)*p) || *p == '0')
		return 0;
	pid = strtol(p, &end, 10);
	if (*end != '_' || pid <= 0 || pid > (1 << 22))
		return 0;
	for (size_t k = 0; k < NKINDS; k++)
		if (!strcmp(end + 1, kind_names[k])) {
			if (kind)
				*kind = kind_names[k];
			return (pid_t)pid;
		}
	return 0;
}

const char *tk_uprobe_kind_of(const char *group)
{
	const char *kind = NULL;

	return group_owner(group, &kind) ? kind : NULL;
}

/* "NAME=FETCH:TYPE": a string is fetched as the address it points to. */
static void put_field(FILE *f, const struct tk_probe_field *x)
{
	bool str = !strcmp(x->type, "string");
	char where[64];

	switch (x->loc) {
	case TK_LOC_REG:
		snprintf(where, sizeof(where), "%%%s", x->reg);
		break;
	case TK_LOC_MEM:
		snprintf(where, sizeof(where), "%s%" PRId64 "(%%%s)", x->disp < 0 ? "" : "+",
			 x->disp, x->reg);
		break;
	case TK_LOC_IMM:
		snprintf(where, sizeof(where), "\\%" PRId64, x->disp);
		break;
	case TK_LOC_FILE:
		snprintf(where, sizeof(where), "@+%" PRIu64, (uint64_t)x->disp);
		break;
	case TK_LOC_RETVAL:
		snprintf(where, sizeof(where), "$retval");
		break;
	}
	if (str)
		fprintf(f, " %s=+0(%s):ustring", x->name, where);
	else
		fprintf(f, " %s=%s:%s", x->name, where, x->type);
}

/* The uprobe_events line defining @p in @group. */
static char *probe_line(const struct tk_probe *p, const char *group)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	fprintf(f, "%c:%s/%s %s:0x%" PRIx64, p->kind == TK_PROBE_URETPROBE ? 'r' : 'p',
		group, p->event, p->path, p->offset);
	if (p->ref_ctr)
		fprintf(f, "(0x%" PRIx64 ")", p->ref_ctr);
	for (unsigned i = 0; i < p->nfields; i++)
		put_field(f, &p->fields[i]);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The kernel's reason, from the last error_log entry if it is about
 * @event ("trace_uprobe: error: Invalid fetch argument"), else strerror. */
static void refusal(const char *event, int e, char *why, size_t len)
{
	char *log = tracefs_error_last(NULL), *msg;

	if (log && strstr(log, event) && (msg = strstr(log, "error: "))) {
		msg += 7;
		msg[strcspn(msg, "\n")] = '\0';
		snprintf(why, len, "%s", msg);
	} else {
		snprintf(why, len, "%s", strerror(e));
	}
	free(log);
}

int tk_uprobe_define(pid_t owner, const struct tk_probe *p, char *name,
		     size_t namelen, char *err, size_t errlen)
{
	char group[64], why[160], *line;
	int e;

	if (strpbrk(p->path, " \t\n")) {
		snprintf(err, errlen, "'%s': cannot probe '%s': its path holds a space",
			 p->spec, p->path);
		return -EINVAL;
	}
	group_name(group, sizeof(group), owner, p->kind);
	line = probe_line(p, group);
	if (!line) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (tracefs_instance_file_append(NULL, "uprobe_events", line) >= 0) {
		free(line);
		snprintf(name, namelen, "%s:%s", group, p->event);
		return 0;
	}
	e = errno ? errno : EINVAL;
	refusal(p->event, e, why, sizeof(why));
	snprintf(err, errlen, "the kernel refuses probe '%s': %s (%s)", p->spec, why, line);
	free(line);
	return -e;
}

int tk_uprobes_remove(pid_t owner)
{
	struct tracefs_dynevent **all =
		tracefs_dynevent_get_all(TRACEFS_DYNEVENT_UPROBE | TRACEFS_DYNEVENT_URETPROBE,
					 NULL);
	int ret = 0;

	for (unsigned i = 0; all && all[i]; i++) {
		char *system = NULL, *event = NULL;
		struct tracefs_dynevent *again;

		tracefs_dynevent_info(all[i], &system, &event, NULL, NULL, NULL);
		if (system && event && group_owner(system, NULL) == owner &&
		    tracefs_dynevent_destroy(all[i], false) < 0) {
			/* an event of several probes goes at its first */
			again = tracefs_dynevent_get(TRACEFS_DYNEVENT_UPROBE |
							     TRACEFS_DYNEVENT_URETPROBE,
						     system, event);
			if (again && !ret)
				ret = errno ? -errno : -EBUSY;
			tracefs_dynevent_free(again);
		}
		free(system);
		free(event);
	}
	tracefs_dynevent_list_free(all);
	return ret;
}

int tk_uprobe_owners(pid_t **owners, unsigned *count)
{
	struct tracefs_dynevent **all =
		tracefs_dynevent_get_all(TRACEFS_DYNEVENT_UPROBE | TRACEFS_DYNEVENT_URETPROBE,
					 NULL);
	int ret = 0;

	*owners = NULL;
	*count = 0;
	for (unsigned i = 0; all && all[i] && !ret; i++) {
		char *system = NULL;
		pid_t pid, *grown;
		bool seen = false;

		tracefs_dynevent_info(all[i], &system, NULL, NULL, NULL, NULL);
		pid = system ? group_owner(system, NULL) : 0;
		free(system);
		for (unsigned k = 0; k < *count && !seen; k++)
			seen = (*owners)[k] == pid;
		if (!pid || seen)
			continue;
		grown = realloc(*owners, (*count + 1) * sizeof(*grown));
		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		*owners = grown;
		grown[(*count)++] = pid;
	}
	tracefs_dynevent_list_free(all);
	return ret;
}
