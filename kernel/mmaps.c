/* SPDX-License-Identifier: MIT */
/*
 * mmaps.c - where the traced processes map their code, for the user
 * stacks the kernel records with its events (options/userstacktrace):
 * they hold return addresses, to be named when the trace is read.
 *
 * The kernel says it: a software perf event (PERF_COUNT_SW_DUMMY, which
 * counts nothing and needs no PMU) with attr.mmap2 reports every
 * executable mapping a task makes (pid, address, length, file offset,
 * path), with attr.inherit its children's too, and with enable_on_exec
 * only from the command's exec on (not the recorder's own maps it runs
 * with between fork and exec).  Inherited per-task events cannot be
 * mapped (the kernel refuses: every child would write into one buffer),
 * so there is one event per CPU, as perf record opens them; one thread
 * drains their buffers as they fill.  A process that was running before
 * (-P) has its mappings read from /proc/PID/maps first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "kernel.h"
#include "format/symbols.h"

#define RING_PAGES 16 /* per CPU, a power of two */

struct cpu_ring {
	int fd;
	void *base; /* the control page, then the data pages */
};

struct tk_mmaps {
	struct cpu_ring *cpu;
	unsigned ncpu;
	size_t page, data_size;
	int stop_fd;
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	struct tk_code_map *map;
	unsigned nmaps, cap;
	uint64_t lost;
};

/* PERF_RECORD_MMAP2's body (before the sample_id fields). */
struct mmap2_record {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

static int add_map(struct tk_mmaps *m, uint32_t pid, uint64_t addr, uint64_t len,
		   uint64_t pgoff, const char *path)
{
	struct tk_code_map *x;

	if (path[0] != '/')
		return 0; /* [vdso], anonymous code: no file to name it */
	if (m->nmaps == m->cap) {
		unsigned cap = m->cap ? m->cap * 2 : 64;
		struct tk_code_map *grown = realloc(m->map, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		m->map = grown;
		m->cap = cap;
	}
	x = &m->map[m->nmaps];
	x->path = strdup(path);
	if (!x->path)
		return -ENOMEM;
	x->pid = pid;
	x->addr = addr;
	x->len = len;
	x->pgoff = pgoff;
	m->nmaps++;
	return 0;
}

/* Take the records of one CPU's buffer. */
static void drain(struct tk_mmaps *m, struct cpu_ring *r)
{
	struct perf_event_mmap_page *ctl = r->base;
	const char *data = (const char *)r->base + m->page;
	uint64_t head = __atomic_load_n(&ctl->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = ctl->data_tail;

	pthread_mutex_lock(&m->lock);
	while (tail < head) {
		struct perf_event_header h;
		char rec[sizeof(struct mmap2_record) + 4096 + 64];
		size_t at = tail % m->data_size, size;

		memcpy(&h, data + at, sizeof(h)); /* headers are 8-byte aligned */
		size = h.size;
		if (size < sizeof(h) || size > sizeof(rec))
			break;
		/* a record may wrap around the end of the buffer */
		for (size_t i = 0; i < size; i++)
			rec[i] = data[(at + i) % m->data_size];
		if (h.type == PERF_RECORD_MMAP2 &&
		    size > sizeof(h) + sizeof(struct mmap2_record)) {
			struct mmap2_record *x = (struct mmap2_record *)(rec + sizeof(h));

			rec[size - 1] = '\0';
			add_map(m, x->pid, x->addr, x->len, x->pgoff, x->filename);
		} else if (h.type == PERF_RECORD_LOST) {
			uint64_t lost[2];

			memcpy(lost, rec + sizeof(h), sizeof(lost));
			m->lost += lost[1];
		}
		tail += size;
	}
	__atomic_store_n(&ctl->data_tail, tail, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&m->lock);
}

static void *drainer(void *arg)
{
	struct tk_mmaps *m = arg;
	struct pollfd *p = calloc(m->ncpu + 1, sizeof(*p));

	if (!p)
		return NULL;
	for (unsigned i = 0; i < m->ncpu; i++) {
		p[i].fd = m->cpu[i].fd;
		p[i].events = POLLIN;
	}
	p[m->ncpu].fd = m->stop_fd;
	p[m->ncpu].events = POLLIN;
	while (!(p[m->ncpu].revents & POLLIN)) {
		if (poll(p, m->ncpu + 1, -1) < 0 && errno != EINTR)
			break;
		for (unsigned i = 0; i < m->ncpu; i++) {
			if (p[i].revents & (POLLIN | POLLHUP))
				drain(m, &m->cpu[i]);
			/* the processes are gone: it stays readable, and
			 * tk_mmaps_stop drains what comes after */
			if (p[i].revents & POLLHUP)
				p[i].fd = -1;
		}
	}
	free(p);
	return NULL;
}

/* The executable file mappings of running process @pid. */
static int read_proc_maps(struct tk_mmaps *m, pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!ret && getline(&line, &cap, f) > 0) {
		unsigned long long lo, hi, off;
		char perms[8];
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off, &n) < 4 ||
		    !n || perms[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = '\0';
		ret = add_map(m, (uint32_t)pid, lo, hi - lo, off, line + n);
	}
	free(line);
	fclose(f);
	return ret;
}

int tk_mmaps_start(pid_t pid, bool from_exec, struct tk_mmaps **out, char *err,
		   size_t errlen)
{
	struct perf_event_attr a;
	struct tk_mmaps *m = calloc(1, sizeof(*m));
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int ret = 0;

	*out = NULL;
	if (!m || ncpu < 1)
		goto nomem;
	pthread_mutex_init(&m->lock, NULL);
	m->stop_fd = -1;
	m->page = (size_t)sysconf(_SC_PAGESIZE);
	m->data_size = m->page * RING_PAGES;
	m->cpu = calloc((size_t)ncpu, sizeof(*m->cpu));
	if (!m->cpu)
		goto nomem;
	if (!from_exec && (ret = read_proc_maps(m, pid)) < 0) {
		snprintf(err, errlen, "cannot read the maps of process %d: %s", (int)pid,
			 strerror(-ret));
		goto fail;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.mmap = 1;
	a.mmap2 = 1;
	a.inherit = 1;
	a.disabled = from_exec;
	a.enable_on_exec = from_exec;
	a.wakeup_events = 1;
	a.exclude_kernel = 1;
	for (long c = 0; c < ncpu; c++) {
		struct cpu_ring *r = &m->cpu[m->ncpu];

		r->fd = (int)syscall(SYS_perf_event_open, &a, pid, (int)c, -1,
				     PERF_FLAG_FD_CLOEXEC);
		if (r->fd < 0 && errno == ENODEV)
			continue; /* an offline CPU */
		if (r->fd < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot follow the mappings of process %d (perf_event_open): %s",
				 (int)pid, strerror(errno));
			goto fail;
		}
		r->base = mmap(NULL, m->page * (RING_PAGES + 1), PROT_READ | PROT_WRITE,
			       MAP_SHARED, r->fd, 0);
		if (r->base == MAP_FAILED) {
			ret = -errno;
			close(r->fd);
			snprintf(err, errlen, "cannot map a perf buffer: %s", strerror(-ret));
			goto fail;
		}
		m->ncpu++;
	}
	m->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (m->stop_fd < 0 || pthread_create(&m->thread, NULL, drainer, m)) {
		ret = -ENOMEM;
		snprintf(err, errlen, "cannot start the mappings' reader");
		goto fail;
	}
	m->thread_started = true;
	*out = m;
	return 0;
nomem:
	ret = -ENOMEM;
	snprintf(err, errlen, "out of memory");
fail:
	tk_mmaps_free(m);
	return ret;
}

int tk_mmaps_stop(struct tk_mmaps *m, pid_t alive)
{
	uint64_t one = 1;
	int ret = 0;

	if (!m || !m->thread_started)
		return 0;
	if (write(m->stop_fd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	pthread_join(m->thread, NULL);
	m->thread_started = false;
	for (unsigned i = 0; i < m->ncpu; i++)
		drain(m, &m->cpu[i]);
	/* a process still running (-P) may have mapped code before the
	 * events were opened and after: its maps now cover both */
	if (alive > 0)
		ret = read_proc_maps(m, alive);
	return ret == -ENOENT || ret == -ESRCH ? 0 : ret;
}

const struct tk_code_map *tk_mmaps_list(const struct tk_mmaps *m, unsigned *count,
				    uint64_t *lost)
{
	*count = m ? m->nmaps : 0;
	if (lost)
		*lost = m ? m->lost : 0;
	return m ? m->map : NULL;
}

void tk_mmaps_free(struct tk_mmaps *m)
{
	if (!m)
		return;
	if (m->thread_started)
		tk_mmaps_stop(m, 0);
	for (unsigned i = 0; i < m->ncpu; i++) {
		munmap(m->cpu[i].base, m->page * (RING_PAGES + 1));
		close(m->cpu[i].fd);
	}
	for (unsigned i = 0; i < m->nmaps; i++)
		free(m->map[i].path);
	if (m->stop_fd >= 0)
		close(m->stop_fd);
	pthread_mutex_destroy(&m->lock);
	free(m->map);
	free(m->cpu);
	free(m);
}
