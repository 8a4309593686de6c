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
 * and nothing is written before tk_probe_check() has found every part of
 * the line to be what the kernel's syntax reads as that part: a path or
 * a name from a hostile file (a DWARF string, a symbolic link) could
 * otherwise end the line and define a probe of its own.
 *
 * The kernel is given a path, the canonical one (no symbolic link, no
 * "..": elf-probes.c resolves it), and looks it up again: what is there
 * when the line is written must be the file whose symbols and code gave
 * the offset, or the probe would land in another file, maybe in the
 * middle of an instruction.  Its (st_dev, st_ino), taken on the file
 * descriptor the file was read through, is compared with the path's
 * before the line is written and again after, when the probe goes if
 * they differ.  What remains is a window no path can close: a file
 * replaced just before the kernel's lookup and put back before the
 * second comparison, within microseconds of each other.  It needs write
 * access to a directory on the path, which root's own directories
 * (/usr/bin, /usr/lib) do not give anyone else.
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
#include <sys/stat.h>
#include <tracefs.h>
#include "common/visible.h"
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

/* The kernel's reason ("Invalid fetch argument"), from the error_log
 * entry the write added (@before: the last one before it), else
 * strerror(@e). */
static void refusal(const char *before, int e, char *why, size_t len)
{
	char *log = tracefs_error_last(NULL);

	if (!tk_kerror_new(before, log, why, len))
		snprintf(why, len, "%s", strerror(e));
	free(log);
}

/* Whether the file at @p's path is the one it was resolved in, as the
 * kernel finds it (following symbolic links); else a line in @err. */
static bool same_file(const struct tk_probe *p, bool defined, char *err, size_t errlen)
{
	char shown[TK_PROBE_SPEC_MAX];
	struct stat st;

	if (stat(p->path, &st) == 0 && st.st_dev == p->dev && st.st_ino == p->ino)
		return true;
	snprintf(err, errlen, "'%s': '%s' is no longer the file that was read (it was replaced or removed)%s",
		 p->spec, tk_visible(shown, sizeof(shown), p->path),
		 defined ? " while its probe was being defined: the probe is removed" : "");
	return false;
}

static void remove_event(const char *group, const char *event)
{
	struct tracefs_dynevent *ev =
		tracefs_dynevent_get(TRACEFS_DYNEVENT_UPROBE | TRACEFS_DYNEVENT_URETPROBE,
				     group, event);

	if (ev)
		tracefs_dynevent_destroy(ev, false);
	tracefs_dynevent_free(ev);
}

int tk_uprobe_define(pid_t owner, const struct tk_probe *p, char *name,
		     size_t namelen, char *err, size_t errlen)
{
	char group[64], why[160], *line, *before;
	int e;

	group_name(group, sizeof(group), owner, p->kind);
	line = probe_line(p, group);
	if (!line) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (tk_probe_check(p, group, line, err, errlen) < 0) {
		free(line);
		return -EINVAL;
	}
	if (!same_file(p, false, err, errlen)) {
		free(line);
		return -ESTALE;
	}
	before = tracefs_error_last(NULL);
	if (tracefs_instance_file_append(NULL, "uprobe_events", line) >= 0) {
		free(before);
		free(line);
		/* the kernel looked the path up again: the same file? */
		if (!same_file(p, true, err, errlen)) {
			remove_event(group, p->event);
			return -ESTALE;
		}
		snprintf(name, namelen, "%s:%s", group, p->event);
		return 0;
	}
	e = errno ? errno : EINVAL;
	refusal(before, e, why, sizeof(why));
	free(before);
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
