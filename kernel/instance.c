/* SPDX-License-Identifier: MIT */
/*
 * instance.c - tracefs instances: a ring buffer per CPU with its own
 * events, tracer, clock and options, apart from the top-level buffer.
 *
 * tracekit writes only into instances it created: record makes
 * "tracekit-<its pid>", start makes "tracekit" (or the name given).  A
 * recorder that is killed cannot remove its instance; reset finds the
 * ones whose recorder is gone by the pid in the name.
 *
 * Whether that recorder is gone is not told by the pid alone (it may be
 * taken again) nor by the process's name (a recorder may run as a copy
 * named otherwise): a process that makes "tracekit-<its pid>" first
 * binds the abstract datagram socket "tracekit-owner-<its pid>" and
 * holds it until it exits, however it ends (the kernel releases the
 * name with the process, SIGKILL included).  The name is in use while
 * the recorder lives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <tracefs.h>
#include "kernel.h"

#define OWNER_PREFIX "tracekit-owner-"

/* A socket bound to @pid's owner name, or -errno (-EADDRINUSE: the
 * owner holds it). */
static int owner_bind(pid_t pid)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, OWNER_PREFIX "%d", (int)pid);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (const struct sockaddr *)&a,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* Held for the life of the process once it makes an instance of its own. */
static int owner_fd = -1;

_Static_assert(TK_KINSTANCE_NAME_MAX == 63, "the message below says 63");

const char *tk_kinstance_name_invalid(const char *name)
{
	/* "." and ".." would be instances/ itself and the top level */
	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return "an instance name is not empty, has no '/' and is not '.' or '..'";
	if (strlen(name) > TK_KINSTANCE_NAME_MAX)
		return "an instance name has at most 63 bytes";
	return NULL;
}

int tk_kinstance_create(struct tk_kinstance *k, const char *name, char *err,
			size_t errlen)
{
	const char *why = tk_kinstance_name_invalid(name);

	memset(k, 0, sizeof(*k));
	if (why) {
		snprintf(err, errlen, "'%s': %s", name, why);
		return -EINVAL;
	}
	if (tracefs_instance_exists(name)) {
		snprintf(err, errlen, "instance '%s' exists already", name);
		return -EEXIST;
	}
	/* a recorder's own instance: say that its owner lives */
	if (tk_kinstance_owner(name) == getpid() && owner_fd < 0)
		owner_fd = owner_bind(getpid());
	k->inst = tracefs_instance_create(name);
	if (!k->inst) {
		int e = errno ? errno : EIO;

		snprintf(err, errlen, "cannot create instance '%s': %s", name,
			 strerror(e));
		return -e;
	}
	if (!tracefs_instance_is_new(k->inst)) {
		/* someone made it between our look and our mkdir */
		tracefs_instance_free(k->inst);
		k->inst = NULL;
		snprintf(err, errlen, "instance '%s' exists already", name);
		return -EEXIST;
	}
	snprintf(k->name, sizeof(k->name), "%s", name);
	return 0;
}

int tk_kinstance_open(struct tk_kinstance *k, const char *name, char *err,
		      size_t errlen)
{
	const char *why = tk_kinstance_name_invalid(name);

	memset(k, 0, sizeof(*k));
	if (why) {
		snprintf(err, errlen, "'%s': %s", name, why);
		return -EINVAL;
	}
	if (!tracefs_instance_exists(name)) {
		snprintf(err, errlen, "no instance '%s'", name);
		return -ENOENT;
	}
	k->inst = tracefs_instance_alloc(NULL, name);
	if (!k->inst) {
		snprintf(err, errlen, "cannot open instance '%s': %s", name,
			 strerror(errno ? errno : ENOMEM));
		return -ENOMEM;
	}
	snprintf(k->name, sizeof(k->name), "%s", name);
	return 0;
}

int tk_kinstance_destroy(struct tk_kinstance *k)
{
	int ret = 0;

	if (!k->inst)
		return 0;
	/* rmdir fails (EBUSY) while a file of the instance is open */
	if (tracefs_instance_destroy(k->inst) < 0)
		ret = errno ? -errno : -EIO;
	tk_kinstance_close(k);
	return ret;
}

void tk_kinstance_close(struct tk_kinstance *k)
{
	if (k->inst)
		tracefs_instance_free(k->inst);
	k->inst = NULL;
}

void tk_kinstance_clock(struct tk_kinstance *k, char *out, size_t len)
{
	char *clock = tracefs_get_clock(k->inst);

	snprintf(out, len, "%s", clock ? clock : "?");
	free(clock);
}

int tk_kinstance_set_clock(struct tk_kinstance *k, const char *clock,
			   char *err, size_t errlen)
{
	char *offered;

	if (tracefs_instance_file_write(k->inst, "trace_clock", clock) >= 0)
		return 0;
	offered = tracefs_instance_file_read(k->inst, "trace_clock", NULL);
	if (offered) {
		/* "[local] global ... x86-tsc\n": the list, without marks */
		for (char *p = offered; *p; p++)
			if (*p == '[' || *p == ']' || *p == '\n')
				*p = *p == '\n' ? '\0' : ' ';
	}
	snprintf(err, errlen, "the kernel offers no trace clock '%s' (offered:%s)",
		 clock, offered ? offered : " ?");
	free(offered);
	return -EINVAL;
}

int tk_kinstance_set_buffer_kb(struct tk_kinstance *k, unsigned kb, char *err,
			       size_t errlen)
{
	if (!kb)
		return 0;
	if (tracefs_instance_set_buffer_size(k->inst, kb, -1) < 0) {
		int e = errno ? errno : EIO;

		snprintf(err, errlen, "cannot set the kernel buffer to %u KiB per CPU: %s",
			 kb, strerror(e));
		return -e;
	}
	return 0;
}

unsigned tk_kinstance_buffer_kb(struct tk_kinstance *k)
{
	ssize_t kb = tracefs_instance_get_buffer_size(k->inst, 0);

	return kb > 0 ? (unsigned)kb : 0;
}

int tk_kinstance_set_option(struct tk_kinstance *k, const char *option,
			    bool on, char *err, size_t errlen)
{
	char path[96];

	snprintf(path, sizeof(path), "options/%s", option);
	if (!tracefs_file_exists(k->inst, path)) {
		snprintf(err, errlen, "the kernel has no trace option '%s'", option);
		return -ENOENT;
	}
	if (tracefs_instance_file_write(k->inst, path, on ? "1" : "0") < 0) {
		int e = errno ? errno : EIO;

		snprintf(err, errlen, "cannot set trace option '%s': %s", option,
			 strerror(e));
		return -e;
	}
	return 0;
}

int tk_kinstance_tracing_on(struct tk_kinstance *k, bool on)
{
	int ret = on ? tracefs_trace_on(k->inst) : tracefs_trace_off(k->inst);

	return ret < 0 ? (errno ? -errno : -EIO) : 0;
}

int tk_kinstance_cpus(struct tk_kinstance *k)
{
	char path[32];
	int n = 0;

	for (;; n++) {
		snprintf(path, sizeof(path), "per_cpu/cpu%d", n);
		if (!tracefs_dir_exists(k->inst, path))
			return n;
	}
}

int tk_kinstance_trace_open(struct tk_kinstance *k)
{
	int fd = tracefs_instance_file_open(k->inst, "trace", O_RDONLY);

	return fd < 0 ? (errno ? -errno : -EIO) : fd;
}

char *tk_kinstance_file_text(struct tk_kinstance *k, const char *file)
{
	char *text = tracefs_instance_file_read(k->inst, file, NULL);
	size_t n;

	if (!text)
		return strdup("");
	n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
		text[--n] = '\0';
	return text;
}

int tk_koptions_read(char **out, char *err, size_t errlen)
{
	char *text = tracefs_instance_file_read(NULL, "trace_options", NULL);
	int e = errno ? errno : ENOENT;

	*out = text;
	if (!text) {
		snprintf(err, errlen, "cannot read '%s/trace_options': %s",
			 tracefs_tracing_dir(), strerror(e));
		return -e;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int tk_kinstance_names(char ***out)
{
	char *path = NULL, **names = NULL, **grown;
	size_t n = 0;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	*out = NULL;
	if (asprintf(&path, "%s/instances", tracefs_tracing_dir()) < 0)
		return -ENOMEM;
	d = opendir(path);
	ret = d ? 0 : -errno;
	free(path);
	if (!d)
		return ret;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, TK_KINSTANCE_PREFIX, strlen(TK_KINSTANCE_PREFIX)))
			continue;
		grown = realloc(names, (n + 2) * sizeof(*grown));
		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		names = grown;
		names[n] = strdup(de->d_name);
		names[n + 1] = NULL;
		if (!names[n]) {
			ret = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (!ret && !names && !(names = calloc(1, sizeof(*names))))
		ret = -ENOMEM;
	if (ret < 0) {
		tk_kinstance_names_free(names);
		return ret;
	}
	qsort(names, n, sizeof(*names), by_name);
	*out = names;
	return 0;
}

void tk_kinstance_names_free(char **names)
{
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
}

pid_t tk_kinstance_owner(const char *name)
{
	const char *p = name + strlen(TK_KINSTANCE_PREFIX "-");
	char *end;
	long pid;

	if (strncmp(name, TK_KINSTANCE_PREFIX "-", strlen(TK_KINSTANCE_PREFIX "-")) ||
	    *p < '1' || *p > '9')
		return 0;
	pid = strtol(p, &end, 10);
	return *end || pid <= 0 || pid > (1 << 22) ? 0 : (pid_t)pid;
}

int tk_kinstance_find(struct tk_tracefs *fs, struct tk_kinstance *k,
		      const char *name, char *err, size_t errlen)
{
	int ret = tk_tracefs_open(fs, err, errlen);

	if (ret < 0)
		return ret;
	ret = tk_kinstance_open(k, name, err, errlen);
	if (ret < 0)
		tk_tracefs_close(fs);
	return ret;
}

bool tk_kinstance_is_stale(const char *name)
{
	pid_t pid = tk_kinstance_owner(name);
	int fd;

	if (!pid || pid == getpid())
		return false;
	fd = owner_bind(pid);
	if (fd >= 0) {
		close(fd); /* nobody holds the name: its recorder is gone */
		return true;
	}
	return false; /* held (EADDRINUSE), or it cannot be told: alive */
}
