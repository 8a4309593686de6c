/* SPDX-License-Identifier: MIT */
/*
 * save.c - what a reader needs beside the raw pages, saved into
 * DIR/kernel/ (docs/format.md, "Kernel events"): the page and event
 * header layouts, each event's format, kallsyms and printk_formats at the
 * start; saved_cmdlines and each CPU's stats at the end.  Files are
 * copied as the kernel shows them (saved_cmdlines gets the pids the
 * recorder named itself and the kernel forgot); only the stats are read,
 * for the counts the recorder reports.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <event-parse.h>
#include <tracefs.h>
#include "kernel.h"

/* Copy @src_fd (closed here) into @path. */
static int copy_fd(int src_fd, const char *path, char *err, size_t errlen)
{
	char buf[65536];
	int out, ret = 0;
	ssize_t n;

	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
		close(src_fd);
		return ret;
	}
	while ((n = read(src_fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot read the kernel's copy of '%s': %s",
				 path, strerror(errno));
			break;
		}
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				ret = -errno;
				snprintf(err, errlen, "cannot write '%s': %s", path,
					 strerror(errno));
				goto out;
			}
			done += w;
		}
	}
out:
	close(src_fd);
	if (close(out) < 0 && !ret) {
		ret = -errno;
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
	}
	return ret;
}

/* Copy tracefs file @file (of @k's instance, or the top level) to
 * @kdir/@name. */
static int save_tracefs(struct tk_kinstance *k, const char *file,
			const char *kdir, const char *name, char *err,
			size_t errlen)
{
	char *path;
	int fd, ret;

	fd = tracefs_instance_file_open(k ? k->inst : NULL, file, O_RDONLY);
	if (fd < 0) {
		ret = errno ? -errno : -ENOENT;
		snprintf(err, errlen, "cannot read tracefs '%s': %s", file,
			 strerror(-ret));
		return ret;
	}
	if (asprintf(&path, "%s/%s", kdir, name) < 0) {
		close(fd);
		return -ENOMEM;
	}
	ret = copy_fd(fd, path, err, errlen);
	free(path);
	return ret;
}

static int make_dir(const char *path, char *err, size_t errlen)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(e));
		return -e;
	}
	return 0;
}

/* A recording's own probes (uprobes.c) are saved under their kind, the
 * name a reader knows them by: uprobe:f, not tracekit_4242_uprobe:f. */
static int save_format(const char *kdir, const char *name, char *err,
		       size_t errlen)
{
	char file[512], dest[512], system[256], *sub;
	const char *colon = strchr(name, ':'), *saved;
	int ret;

	if (!colon || (size_t)(colon - name) >= sizeof(system))
		return 0;
	memcpy(system, name, (size_t)(colon - name));
	system[colon - name] = '\0';
	saved = tk_uprobe_kind_of(system);
	if (!saved)
		saved = system;
	if (asprintf(&sub, "%s/formats/%s", kdir, saved) < 0)
		return -ENOMEM;
	ret = make_dir(sub, err, errlen);
	free(sub);
	if (ret)
		return ret;
	snprintf(file, sizeof(file), "events/%s/%s/format", system, colon + 1);
	snprintf(dest, sizeof(dest), "formats/%s/%s", saved, colon + 1);
	return save_tracefs(NULL, file, kdir, dest, err, errlen);
}

static int page_size_of(const char *kdir, uint32_t *page_size)
{
	char *path, *text = NULL;
	size_t len = 0;
	struct tep_handle *tep;
	FILE *f;
	int ret = -EINVAL;

	if (asprintf(&path, "%s/header_page", kdir) < 0)
		return -ENOMEM;
	f = fopen(path, "re");
	free(path);
	if (!f)
		return -errno;
	if (getdelim(&text, &len, '\0', f) < 0) {
		fclose(f);
		free(text);
		return -EIO;
	}
	fclose(f);
	tep = tep_alloc();
	if (tep && tep_parse_header_page(tep, text, strlen(text), sizeof(long)) == 0 &&
	    tep_get_sub_buffer_size(tep) > 0) {
		*page_size = (uint32_t)tep_get_sub_buffer_size(tep);
		ret = 0;
	}
	tep_free(tep);
	free(text);
	return ret;
}

int tk_ksave_start(const char *dir, const struct tk_kevents *events,
		   uint32_t *page_size, char *err, size_t errlen)
{
	char *kdir = NULL, *formats = NULL;
	char **ftrace = NULL;
	int ret, fd;

	if (asprintf(&kdir, "%s/kernel", dir) < 0 ||
	    asprintf(&formats, "%s/formats", kdir) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	if ((ret = make_dir(kdir, err, errlen)) || (ret = make_dir(formats, err, errlen)))
		goto out;
	if ((ret = save_tracefs(NULL, "events/header_page", kdir, "header_page", err,
				errlen)) ||
	    (ret = save_tracefs(NULL, "events/header_event", kdir, "header_event",
				err, errlen)) ||
	    (ret = save_tracefs(NULL, "printk_formats", kdir, "printk_formats", err,
				errlen)))
		goto out;
	if ((ret = page_size_of(kdir, page_size)) < 0) {
		snprintf(err, errlen, "cannot read the ring buffer's page layout (events/header_page)");
		goto out;
	}
	for (unsigned i = 0; i < events->count && !ret; i++)
		ret = save_format(kdir, events->name[i], err, errlen);
	/* the tracers' and --stack's events (function, kernel_stack ...) */
	ftrace = tracefs_system_events(NULL, "ftrace");
	for (unsigned i = 0; ftrace && ftrace[i] && !ret; i++) {
		char name[256];

		snprintf(name, sizeof(name), "ftrace:%s", ftrace[i]);
		ret = save_format(kdir, name, err, errlen);
	}
	if (ret)
		goto out;
	fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot read '/proc/kallsyms': %s", strerror(errno));
		goto out;
	}
	free(formats);
	if (asprintf(&formats, "%s/kallsyms", kdir) < 0) {
		close(fd);
		formats = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = copy_fd(fd, formats, err, errlen);
out:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	tracefs_list_free(ftrace);
	free(formats);
	free(kdir);
	return ret;
}

bool tk_kcomms_read(struct tk_kcomms *t, int pid)
{
	char path[64], comm[sizeof(t->e->comm)];
	struct tk_kcomm *e = NULL;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, comm, sizeof(comm) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	for (unsigned i = 0; i < t->n && !e; i++)
		if (t->e[i].pid == pid)
			e = &t->e[i];
	if (!e) {
		if (t->n == t->cap) {
			unsigned cap = t->cap ? 2 * t->cap : 16;
			struct tk_kcomm *g = realloc(t->e, cap * sizeof(*g));

			if (!g)
				return false;
			t->e = g;
			t->cap = cap;
		}
		e = &t->e[t->n++];
		e->pid = pid;
	}
	memcpy(e->comm, comm, sizeof(comm));
	return true;
}

void tk_kcomms_free(struct tk_kcomms *t)
{
	free(t->e);
	memset(t, 0, sizeof(*t));
}

/* The saved_cmdlines file @path with the comms of @seen: they were read
 * later than the kernel's (at exit, the last name), so they win. */
static int add_comms(const char *path, const struct tk_kcomms *seen, char *err,
		     size_t errlen)
{
	bool *named = calloc(seen->n, sizeof(*named));
	char *text = NULL, line[256];
	size_t size = 0;
	FILE *in = fopen(path, "re"), *out = open_memstream(&text, &size);
	int ret = 0;

	if (!named || !in || !out) {
		ret = in ? -ENOMEM : -errno;
		goto out;
	}
	while (fgets(line, sizeof(line), in)) {
		int pid = 0;
		unsigned i = 0;

		if (sscanf(line, "%d", &pid) == 1)
			while (i < seen->n && seen->e[i].pid != pid)
				i++;
		if (pid && i < seen->n) {
			fprintf(out, "%d %s\n", pid, seen->e[i].comm);
			named[i] = true;
		} else {
			fputs(line, out);
		}
	}
	for (unsigned i = 0; i < seen->n; i++)
		if (!named[i])
			fprintf(out, "%d %s\n", seen->e[i].pid, seen->e[i].comm);
	fclose(in);
	in = NULL;
	if (fflush(out) != 0) {
		ret = -ENOMEM;
		goto out;
	}
	in = fopen(path, "we");
	if (!in || fwrite(text, 1, size, in) != size || fflush(in) != 0)
		ret = -errno;
out:
	if (ret)
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	free(text);
	free(named);
	return ret;
}

int tk_ksave_end(struct tk_kinstance *k, const char *dir, struct tk_kcpu *cpus,
		 unsigned count, const struct tk_kcomms *seen, char *err,
		 size_t errlen)
{
	char *kdir = NULL, *stats = NULL;
	int ret;

	if (asprintf(&kdir, "%s/kernel", dir) < 0 ||
	    asprintf(&stats, "%s/stats", kdir) < 0) {
		free(kdir);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = save_tracefs(NULL, "saved_cmdlines", kdir, "saved_cmdlines", err,
			   errlen);
	if (!ret && seen && seen->n) {
		char *path;

		if (asprintf(&path, "%s/saved_cmdlines", kdir) < 0) {
			ret = -ENOMEM;
			snprintf(err, errlen, "out of memory");
		} else {
			ret = add_comms(path, seen, err, errlen);
			free(path);
		}
	}
	if (!ret)
		ret = make_dir(stats, err, errlen);
	for (unsigned i = 0; i < count && !ret; i++) {
		char file[64], name[64];
		char *text;
		int len;

		snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", cpus[i].cpu);
		snprintf(name, sizeof(name), "stats/cpu%u", cpus[i].cpu);
		ret = save_tracefs(k, file, kdir, name, err, errlen);
		if (ret)
			break;
		text = tracefs_instance_file_read(k->inst, file, &len);
		if (!text || tk_kstats_parse(text, (size_t)len, &cpus[i]) < 0) {
			snprintf(err, errlen, "cannot read the counts in tracefs '%s'",
				 file);
			ret = -EIO;
		}
		free(text);
	}
	free(stats);
	free(kdir);
	return ret;
}
