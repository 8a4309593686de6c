/* SPDX-License-Identifier: MIT */
/*
 * drain.c - the recorder's writes: packets go from the shared buffers to
 * the trace files without a copy and without waiting.
 *
 * The method is chosen by what the system allows, once per recording,
 * and said in the summary (drain_describe):
 *
 *   io_uring + O_DIRECT   the normal case: each write is submitted
 *                         straight from the shared mapping and completes
 *                         later; nothing goes through the page cache
 *   io_uring, buffered    the file system refuses O_DIRECT (or wants an
 *                         alignment larger than a page): the kernel copies,
 *                         in its own worker, not in our loop
 *   pwrite, buffered      io_uring is refused (disabled, seccomp, old
 *                         kernel): a copy into the page cache in our loop
 *
 * With io_uring, memory registered with drain_fixed_set() (a process's
 * pool) is written by vectored writes from registered buffers, where the
 * kernel has them: its pages are pinned once, not at every write.
 *
 * A request completes through its done() callback, from drain_reap() (or
 * at once with pwrite).  Files grow ahead of the writes by requests of
 * their own (drain_alloc): fallocate takes ext4's journal, which waits
 * for the disk; measured in the drain loop, one took 79 ms while two
 * writers flooded their rings.  A short write continues where it stopped; an
 * O_DIRECT write the file system refuses is done again without O_DIRECT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "drain.h"

#define RING_ENTRIES 256
/* Vectored writes from registered buffers (Linux 6.15); liburing and the
 * headers of this system may be older than the kernel. */
#ifndef IORING_OP_WRITEV_FIXED
#define IORING_OP_WRITEV_FIXED 61
#endif

/* Whether the kernel has vectored writes from registered buffers, and a
 * sparse table of them is made. */
static bool fixed_init(struct drain *d)
{
	struct io_uring_probe *p = io_uring_get_probe_ring(&d->ring);
	bool ok = p && io_uring_opcode_supported(p, IORING_OP_WRITEV_FIXED);

	if (p)
		io_uring_free_probe(p);
	return ok && io_uring_register_buffers_sparse(&d->ring, DRAIN_FIXED_MAX) == 0;
}

int drain_init(struct drain *d)
{
	int ret;

	memset(d, 0, sizeof(*d));
	ret = io_uring_queue_init(RING_ENTRIES, &d->ring, 0);
	if (ret < 0) {
		snprintf(d->why_not_uring, sizeof(d->why_not_uring), "%s",
			 strerror(-ret));
		return 0;
	}
	d->uring = true;
	d->cap = RING_ENTRIES;
	d->fixed_ok = fixed_init(d);
	return 0;
}

int drain_fixed_set(struct drain *d, unsigned slot, void *base, size_t len)
{
	struct iovec v = { len ? base : NULL, len };
	__u64 tag = 0;
	int ret;

	if (!d->uring || !d->fixed_ok || slot >= DRAIN_FIXED_MAX)
		return -EOPNOTSUPP;
	if (len > DRAIN_FIXED_BYTES)
		v.iov_len = len = DRAIN_FIXED_BYTES;
	ret = io_uring_register_buffers_update_tag(&d->ring, slot, &v, &tag, 1);
	if (ret < 0) {
		/* the slot is left empty: writes from it go as before */
		v = (struct iovec){ NULL, 0 };
		io_uring_register_buffers_update_tag(&d->ring, slot, &v, &tag, 1);
		d->fixed[slot] = v;
		return ret;
	}
	d->fixed[slot] = v;
	return 0;
}

/* Whether every buffer of @r left to write lies in its fixed range. */
static bool fixed_covers(const struct drain *d, const struct drain_req *r)
{
	const struct iovec *f;

	if (r->fixed < 0 || r->fixed >= DRAIN_FIXED_MAX || !d->fixed_ok)
		return false;
	f = &d->fixed[r->fixed];
	for (unsigned i = r->first; i < r->niov; i++) {
		uintptr_t b = (uintptr_t)r->iov[i].iov_base;

		if (b < (uintptr_t)f->iov_base ||
		    b + r->iov[i].iov_len > (uintptr_t)f->iov_base + f->iov_len)
			return false;
	}
	return f->iov_len != 0;
}

void drain_free(struct drain *d)
{
	if (d->uring)
		io_uring_queue_exit(&d->ring);
	d->uring = false;
}

int drain_poll_fd(const struct drain *d)
{
	return d->uring ? d->ring.ring_fd : -1;
}

/* Whether the file system takes O_DIRECT writes of page-aligned buffers
 * at page-aligned offsets into @fd; else why not, in d->why_not_direct. */
static bool direct_ok(struct drain *d, int fd)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) < 0 ||
	    !(sx.stx_mask & STATX_DIOALIGN) || !sx.stx_dio_offset_align) {
		snprintf(d->why_not_direct, sizeof(d->why_not_direct),
			 "the file system gives no direct I/O alignment");
		return false;
	}
	if (sx.stx_dio_offset_align > DRAIN_ALIGN ||
	    sx.stx_dio_mem_align > DRAIN_ALIGN) {
		snprintf(d->why_not_direct, sizeof(d->why_not_direct),
			 "the file system wants %u-byte alignment",
			 sx.stx_dio_offset_align);
		return false;
	}
	return true;
}

int drain_open(struct drain *d, const char *path, bool *direct)
{
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
	int fd = -1;

	*direct = false;
	if (d->uring && !d->no_direct) {
		fd = open(path, flags | O_DIRECT, 0600);
		if (fd < 0 && errno == EINVAL) {
			/* the file was made (O_EXCL: by us) before O_DIRECT
			 * was refused: made again below, under its name */
			unlink(path);
			snprintf(d->why_not_direct, sizeof(d->why_not_direct),
				 "refused by the file system");
			d->no_direct = true;
		} else if (fd >= 0 && !direct_ok(d, fd)) {
			d->no_direct = true;
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_DIRECT);
		} else if (fd >= 0) {
			*direct = true;
		}
	}
	if (fd < 0 && (!d->uring || d->no_direct))
		fd = open(path, flags, 0600);
	if (fd < 0)
		return -errno;
	if (*direct)
		d->files_direct++;
	else
		d->files_buffered++;
	return fd;
}

static void finish(struct drain_req *r, int res)
{
	r->done(r, res < 0 ? res : (int)r->written);
}

/* @n more bytes of @r were written: move the iovecs on. */
static void advance(struct drain_req *r, size_t n)
{
	r->written += n;
	while (n && r->first < r->niov) {
		struct iovec *v = &r->iov[r->first];

		if (n < v->iov_len) {
			v->iov_base = (char *)v->iov_base + n;
			v->iov_len -= n;
			return;
		}
		n -= v->iov_len;
		v->iov_len = 0;
		r->first++;
	}
}

/* The rest of @r written by pwritev, here and now. */
static void write_now(struct drain_req *r)
{
	while (r->written < r->len) {
		ssize_t n = pwritev(r->fd, r->iov + r->first, (int)(r->niov - r->first),
				    (off_t)(r->off + r->written));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			finish(r, n < 0 ? -errno : -EIO);
			return;
		}
		advance(r, (size_t)n);
	}
	finish(r, 0);
}

/* @r's allocation, here and now. */
static void alloc_now(struct drain_req *r)
{
	r->done(r, fallocate(r->fd, 0, 0, (off_t)r->off) < 0 ? -errno : 0);
}

static void queue(struct drain *d, struct drain_req *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);

	if (!sqe) {
		io_uring_submit(&d->ring);
		sqe = io_uring_get_sqe(&d->ring);
	}
	if (!sqe) { /* cannot happen: in flight <= cap = ring entries */
		d->inflight--;
		if (r->alloc)
			alloc_now(r);
		else
			write_now(r);
		return;
	}
	if (r->alloc) {
		io_uring_prep_fallocate(sqe, r->fd, 0, 0, (__u64)r->off);
		io_uring_sqe_set_data(sqe, r);
		return;
	}
	d->writes++;
	r->sent_fixed = fixed_covers(d, r);
	if (r->sent_fixed) {
		io_uring_prep_rw(IORING_OP_WRITEV_FIXED, sqe, r->fd, r->iov + r->first,
				 r->niov - r->first, r->off + r->written);
		sqe->buf_index = (__u16)r->fixed;
		d->writes_fixed++;
	} else {
		io_uring_prep_writev(sqe, r->fd, r->iov + r->first,
				     r->niov - r->first, r->off + r->written);
	}
	io_uring_sqe_set_data(sqe, r);
}

void drain_write(struct drain *d, struct drain_req *r)
{
	r->written = 0;
	r->first = 0;
	r->len = 0;
	for (unsigned i = 0; i < r->niov; i++)
		r->len += r->iov[i].iov_len;
	if (!d->uring) {
		write_now(r);
		return;
	}
	d->inflight++;
	queue(d, r);
}

void drain_alloc(struct drain *d, struct drain_req *r)
{
	r->alloc = true;
	if (!d->uring) {
		alloc_now(r);
		return;
	}
	d->inflight++;
	queue(d, r);
}

void drain_submit(struct drain *d)
{
	if (d->uring && io_uring_sq_ready(&d->ring))
		io_uring_submit(&d->ring);
}

/* One completion of @r: done, continued, or done again without O_DIRECT. */
static void complete(struct drain *d, struct drain_req *r, int res)
{
	if (res == -EAGAIN || res == -EINTR) {
		queue(d, r);
		return;
	}
	if (r->alloc) {
		d->inflight--;
		r->done(r, res < 0 ? res : 0);
		return;
	}
	if (r->sent_fixed && (res == -EINVAL || res == -EFAULT ||
			      res == -EOPNOTSUPP)) {
		/* the kernel took the registration but not the write: as
		 * before, from here on */
		d->fixed_ok = false;
		queue(d, r);
		return;
	}
	if ((res == -EINVAL || res == -EOPNOTSUPP) &&
	    (fcntl(r->fd, F_GETFL) & O_DIRECT)) {
		/* the file system took the open but not the write */
		snprintf(d->why_not_direct, sizeof(d->why_not_direct),
			 "a write was refused: %s", strerror(-res));
		d->no_direct = true;
		fcntl(r->fd, F_SETFL, fcntl(r->fd, F_GETFL) & ~O_DIRECT);
		queue(d, r);
		return;
	}
	if (res > 0) {
		advance(r, (size_t)res);
		if (r->written < r->len) {
			queue(d, r);
			return;
		}
	}
	d->inflight--;
	finish(r, res == 0 ? -EIO : res < 0 ? res : 0);
}

unsigned drain_reap(struct drain *d)
{
	struct io_uring_cqe *cqe;
	unsigned n = 0;

	if (!d->uring)
		return 0;
	while (io_uring_peek_cqe(&d->ring, &cqe) == 0) {
		struct drain_req *r = io_uring_cqe_get_data(cqe);
		int res = cqe->res;

		io_uring_cqe_seen(&d->ring, cqe);
		complete(d, r, res);
		n++;
	}
	drain_submit(d);
	return n;
}

void drain_wait_all(struct drain *d)
{
	while (d->uring && d->inflight) {
		struct io_uring_cqe *cqe;
		int ret;

		drain_submit(d);
		ret = io_uring_wait_cqe(&d->ring, &cqe);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN)
			break;
		drain_reap(d);
	}
}

void drain_describe(const struct drain *d, char *out, size_t len)
{
	if (!d->uring)
		snprintf(out, len, "pwrite, buffered (io_uring: %s)",
			 d->why_not_uring);
	else if (!d->files_buffered)
		snprintf(out, len, "io_uring, O_DIRECT");
	else if (!d->files_direct)
		snprintf(out, len, "io_uring, buffered (O_DIRECT: %s)",
			 d->why_not_direct);
	else
		snprintf(out, len, "io_uring, O_DIRECT for %u files, buffered for %u (O_DIRECT: %s)",
			 d->files_direct, d->files_buffered, d->why_not_direct);
}
