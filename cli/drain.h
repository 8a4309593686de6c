/* SPDX-License-Identifier: MIT */
/*
 * drain.h - the recorder's writes to the trace files (drain.c).
 */
#ifndef TK_DRAIN_H
#define TK_DRAIN_H

#include <liburing.h>
#include <stdbool.h>
#include <sys/uio.h>
#include <stddef.h>
#include <stdint.h>

/* Offsets and lengths of O_DIRECT writes are multiples of this. */
#define DRAIN_ALIGN 4096u

/* At most this many buffers in one write. */
#define DRAIN_IOV_MAX 64

/* Memory ranges registered with the ring at once (drain_fixed_set), and
 * the most of one (the kernel's limit for a registered buffer). */
#define DRAIN_FIXED_MAX 64
#define DRAIN_FIXED_BYTES (1ull << 30)

/* One write: the @niov buffers of @iov, one after the other, at @off of
 * @fd.  done(r, res) is called once, with res the bytes written or
 * -errno; the request and its buffers must stay until then (iov is
 * changed on the way). */
struct drain_req {
	void (*done)(struct drain_req *r, int res);
	int fd;
	int fixed; /* a range of drain_fixed_set() that holds every buffer
		    * (the kernel then pins nothing per write), or -1 */
	bool alloc; /* not a write: the file allocated up to @off */
	struct iovec iov[DRAIN_IOV_MAX];
	unsigned niov;
	uint64_t off;
	size_t len;     /* set by drain_write: the sum */
	size_t written; /* so far */
	unsigned first; /* first iov not written yet */
	bool sent_fixed; /* its last submission used its fixed range */
};

struct drain {
	struct io_uring ring;
	bool uring;          /* else pwrite */
	bool no_direct;      /* O_DIRECT was refused: buffered from now on */
	bool fixed_ok;       /* vectored writes from registered memory */
	struct iovec fixed[DRAIN_FIXED_MAX]; /* the ranges registered */
	uint64_t writes_fixed, writes;
	unsigned cap;        /* requests that may be in flight */
	unsigned inflight;
	unsigned files_direct, files_buffered;
	char why_not_uring[96];
	char why_not_direct[96];
};

/* Choose the method (io_uring if the kernel gives one).  Returns 0. */
int drain_init(struct drain *d);
void drain_free(struct drain *d);
/* Create @path (O_EXCL, mode 0600), with O_DIRECT when the method and the
 * file system allow it (*direct says).  Returns the fd or -errno. */
int drain_open(struct drain *d, const char *path, bool *direct);
/* Requests that may still be started now. */
static inline unsigned drain_room(const struct drain *d)
{
	return d->uring ? d->cap - d->inflight : ~0u;
}
/* Register @len bytes at @base as range @slot (0 .. DRAIN_FIXED_MAX - 1)
 * for writes of requests whose fixed says so, in place of what the slot
 * held (@len 0: nothing); the kernel pins the pages once.  Returns 0, or
 * < 0 when it cannot be (not supported, over the locked-memory limit):
 * writes from there go as before.  Writes in flight from the old range
 * are not disturbed. */
int drain_fixed_set(struct drain *d, unsigned slot, void *base, size_t len);
/* Start @r (done at once with pwrite); drain_submit() sends what was
 * queued. */
void drain_write(struct drain *d, struct drain_req *r);
/* Allocate the first r->off bytes of r->fd (fallocate), in the kernel's
 * worker rather than here: done(r, 0 or -errno) as for a write. */
void drain_alloc(struct drain *d, struct drain_req *r);
void drain_submit(struct drain *d);
/* Complete the writes that have finished; returns how many. */
unsigned drain_reap(struct drain *d);
/* Wait until every write has completed. */
void drain_wait_all(struct drain *d);
/* The fd that is readable when writes completed (for poll), or -1. */
int drain_poll_fd(const struct drain *d);
/* "io_uring, O_DIRECT", or the fallback and why. */
void drain_describe(const struct drain *d, char *out, size_t len);

#endif /* TK_DRAIN_H */
