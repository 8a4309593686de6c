/* SPDX-License-Identifier: MIT */
/*
 * tracer.c - the kernel's tracers and traceable functions, an instance's
 * current_tracer and the function filter files.
 *
 * A locked-down kernel refuses the function tracers (current_tracer:
 * EPERM) and even opening set_ftrace_filter; we say so in one line
 * rather than fall back to something else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tracefs.h>
#include "kernel.h"

int tk_ktracers(struct tk_kinstance *k, char *out, size_t len)
{
	/* an instance offers fewer tracers than the top level (no blk) */
	char *dir = k ? tracefs_instance_get_dir(k->inst) : NULL;
	char **tracers = tracefs_tracers(dir);
	size_t used = 0;
	bool nop = false;

	free(dir);
	out[0] = '\0';
	if (!tracers)
		return errno ? -errno : -ENOENT;
	for (unsigned i = 0; tracers[i]; i++) {
		nop |= !strcmp(tracers[i], "nop");
		used += (size_t)snprintf(out + used, used < len ? len - used : 0,
					 "%s%s", used ? " " : "", tracers[i]);
	}
	/* libtracefs leaves nop out of its list; the kernel always has it */
	if (!nop)
		snprintf(out + used, used < len ? len - used : 0, "%snop",
			 used ? " " : "");
	tracefs_list_free(tracers);
	return 0;
}

int tk_kfunctions(const char *glob, void (*fn)(const char *line, void *ctx),
		  void *ctx, char *err, size_t errlen)
{
	char *path = tracefs_get_tracing_file("available_filter_functions");
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int e;

	if (!path) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	f = fopen(path, "r");
	if (!f) {
		e = errno;
		snprintf(err, errlen, "cannot read '%s': %s%s", path, strerror(e),
			 e == EPERM ? " (the kernel does not let tracing list its functions)"
				    : "");
		tracefs_put_tracing_file(path);
		return -e;
	}
	while (getline(&line, &cap, f) > 0) {
		size_t len = strcspn(line, " \t\n");
		char save = line[len];

		line[len] = '\0';
		if (glob && fnmatch(glob, line, 0))
			continue;
		line[len] = save;
		fn(line, ctx);
	}
	free(line);
	fclose(f);
	tracefs_put_tracing_file(path);
	return 0;
}

int tk_ktracers_usable(struct tk_kinstance *k, char *usable, size_t ulen,
		       char *refused, size_t rlen)
{
	char list[512], *save = NULL, *name;
	size_t u, r = 0;
	int ret = tk_ktracers(k, list, sizeof(list));

	if (ret < 0)
		return ret;
	u = (size_t)snprintf(usable, ulen, "nop");
	refused[0] = '\0';
	for (name = strtok_r(list, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
		if (!strcmp(name, "nop"))
			continue;
		if (tracefs_instance_file_write(k->inst, "current_tracer", name) >= 0)
			u += (size_t)snprintf(usable + u, u < ulen ? ulen - u : 0, " %s",
					      name);
		else
			r += (size_t)snprintf(refused + r, r < rlen ? rlen - r : 0,
					      "%s%s (%s)", r ? " " : "", name,
					      strerror(errno ? errno : EIO));
	}
	tracefs_instance_file_write(k->inst, "current_tracer", "nop");
	return 0;
}

static bool offered(const char *tracer, const char *list)
{
	size_t n = strlen(tracer);

	for (const char *p = list; (p = strstr(p, tracer)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

int tk_kinstance_set_tracer(struct tk_kinstance *k, const char *tracer,
			    char *err, size_t errlen)
{
	char list[512];
	int ret = tk_ktracers(k, list, sizeof(list));

	if (ret < 0) {
		snprintf(err, errlen, "cannot read the kernel's tracers: %s",
			 strerror(-ret));
		return ret;
	}
	if (!offered(tracer, list)) {
		char usable[512], refused[512];

		if (tk_ktracers_usable(k, usable, sizeof(usable), refused,
				       sizeof(refused)) < 0)
			snprintf(usable, sizeof(usable), "%s", list);
		snprintf(err, errlen, "tracer '%s' is not available (available: %s%s%s)",
			 tracer, usable, refused[0] ? "; refused here: " : "", refused);
		return -ENOENT;
	}
	if (tracefs_instance_file_write(k->inst, "current_tracer", tracer) >= 0)
		return 0;
	ret = errno ? -errno : -EIO;
	if (ret == -EPERM)
		snprintf(err, errlen,
			 "the kernel does not permit the %s tracer here (current_tracer: %s)",
			 tracer, strerror(-ret));
	else
		snprintf(err, errlen, "cannot set the %s tracer (current_tracer: %s)",
			 tracer, strerror(-ret));
	return ret;
}

int tk_kinstance_func_file(struct tk_kinstance *k, const char *file,
			   const char *const *globs, unsigned count, char *err,
			   size_t errlen)
{
	int fd, ret = 0;

	if (!count)
		return 0;
	/* O_TRUNC: replace what a previous tracer left (new instance: none) */
	fd = tracefs_instance_file_open(k->inst, file, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		ret = errno ? -errno : -EIO;
		snprintf(err, errlen, "cannot open '%s': %s%s", file, strerror(-ret),
			 ret == -EPERM ? " (the kernel does not permit function filters here)"
				       : "");
		return ret;
	}
	for (unsigned i = 0; i < count && !ret; i++) {
		/* one write per glob: the kernel parses each write apart */
		if (write(fd, globs[i], strlen(globs[i])) < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot write '%s' into '%s': %s",
				 globs[i], file,
				 ret == -EINVAL ? "no function matches" : strerror(-ret));
		}
	}
	close(fd);
	return ret;
}
