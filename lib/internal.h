/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the files of libtracekit share.
 *
 *   registry.c  events of every loaded module, ids, enable state
 *   probe.c     probe arrays, filters on the fast path (RCU)
 *   stream.c    per-thread buffers: creation, packet switch, loss, exit, fork
 *   control.c   the listener thread and the session with the recorder
 *   mark.c      printf-style markers
 *   cpu.c       where a thread reads its CPU (rseq)
 *   ustack.c    the user stack after each event (record --ustack)
 *   self.c      our pid and tid, without system calls the program counts
 */
#ifndef TK_INTERNAL_H
#define TK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#define TK__IN_LIBRARY 1
#include "tracekit/tracekit.h"
#include "common/protocol.h"
#include "common/filter.h"

#define TK_EXPORT __attribute__((visibility("default")))

#include "config.h"
#include "arena.h"

/* What the recorder asked for (CONFIG), under the registry lock. */
struct tk_session_config {
	bool active;
	struct tk_arena_geom geom;
	uint32_t pool_init_child; /* geom.pool_init of a forked child */
	uint32_t flags;
	unsigned nrules;
	struct tk_rule *rules;
};

/* ustack.c: the user stack after each recorded event (--ustack) */
#define TK_USTACK_MAX 64
extern uint16_t tk_ustack_id; /* ftrace:event_stack's id */
/* Write an ftrace:event_stack record: @pc, then the return address of
 * each frame above @fp, the frame pointer of the function that called
 * at @pc, which must stay live meanwhile (no tail call to here). */
void tk_ustack_put(uintptr_t pc, const uintptr_t *fp);

/* registry.c */
void tk_registry_lock(void);
void tk_registry_unlock(void);
/* Recompute every event's state from the session and the probes; with the
 * lock held.  Sends nothing. */
void tk_registry_apply_all_locked(void);
void tk_registry_apply_locked(struct tk_event *ev);
/* Register the events of [start, stop) (tk__module_register without
 * starting the runtime: the function tracer's own events). */
void tk_registry_add_module(const char *start, const char *stop,
			    const char *keys_start, const char *keys_stop);
/* Send an EVENT message for every registered event, then EVENTS_DONE. */
int tk_registry_announce_locked(int fd);
extern struct tk_session_config tk_config; /* under the registry lock */

/* Whether a session records, readable without the lock (a thread opening
 * its stream may be a signal handler that interrupted a holder of the
 * registry lock).  Publish after every change of tk_config. */
struct tk_geometry {
	bool active;
};
void tk_config_publish_locked(void);
struct tk_geometry tk_config_geometry(void);

/* probe.c */
void tk_filter_replace(struct tk_event *ev, struct tk_filter *f);

/* stream.c */
void tk_streams_init(void);
/* Create the calling thread's buffer now if a session is active and it has
 * none (the function tracer does, at a thread's first traced call, so that
 * the call's time does not include making the buffer). */
void tk_stream_prepare(void);
/* Make every thread take the slow path on its next event and leave the
 * session's buffers (called when a session starts or ends). */
void tk_streams_session_changed(void);
extern uint64_t tk_session_gen;
/* The session stamps events with CLOCK_MONOTONIC (CONFIG's
 * TK_CONFIG_CLOCK_MONO): the recorder found the TSC unusable.  Threads
 * copy it into their tk__thread.mono when they open a packet. */
extern uint32_t tk_clock_mono;
/* The arena new streams are opened in (NULL: none); the one it replaces
 * is freed once no thread uses it. */
void tk_streams_set_arena(struct tk_arena_map *a);
struct tk_arena_map *tk_streams_arena(void);
/* Events lost because the session had no arena (it could not be made). */
uint64_t tk_streams_lost_nobuf(void);

/* control.c */
void tk_runtime_init(void);
/* Send a message on @sock (tk_send_to) or to the session's recorder, with
 * an fd if fd >= 0.  Waits at most a second for room in the socket.
 * Returns 0 or -errno. */
int tk_send_to(int sock, const void *msg, size_t len, int fd);
int tk_send_fds_to(int sock, const void *msg, size_t len, const int *fds,
		   unsigned nfds);
int tk_session_send(const void *msg, size_t len, int fd);
/* The session's socket, -1 if none; with the registry lock held. */
int tk_session_fd_locked(void);
/* In a forked child (locks held by the fork handlers released). */
void tk_session_after_fork_child(void);
/* The recorder's wake-up eventfd, -1 before the first session. */
extern int tk_wake_fd;
/* Whether @fd (tk_wake_fd, loaded) is still the recorder's eventfd, not
 * a file the program opened on its number after closing it. */
bool tk_wake_fd_ours(int fd);

/* self.c */
/* Read the pid (and, if @comm, the process's name into comm[len]) from
 * /proc/self/stat; remembered for tk_self_pid.  Returns the pid. */
uint32_t tk_self_read(char *comm, size_t len);
/* The process's pid, read once (tk_self_read). */
uint32_t tk_self_pid(void);
/* The calling thread's tid: the pid for the main thread, else gettid. */
uint32_t tk_self_tid(void);
/* At start-up: a process with no other thread is on its main thread. */
void tk_self_init(void);
/* In a forked child: a new pid, and the forking thread is the main one. */
void tk_self_after_fork_child(void);

/* cpu.c */
/* Where the calling thread reads its CPU: glibc's rseq cpu_id, or a
 * constant -1 where no rseq area is registered (see cpu.c). */
const int32_t *tk_cpu_source(void);
/* Whether the calling thread's CPU comes from rseq (one load per event)
 * rather than sched_getcpu() (a call per event). */
bool tk_cpu_rseq(void);
/* The CPU now, read from @src (tk_cpu_source), sched_getcpu() if none. */
int32_t tk_cpu_now(const int32_t *src);

/* static-key.c */
void tk_keys_init(void); /* find out once whether code can be patched */
void tk_keys_module_register_locked(const char *module, const char *start,
				    const char *stop);
void tk_keys_module_unregister_locked(const char *module);
/* Patch @ev's sites to its enabled state. */
void tk_keys_update_locked(struct tk_event *ev);
/* Whether sites are patched (else each tests its byte; *why says why). */
bool tk_keys_active(const char **why);
unsigned tk_keys_sites(void);

#endif /* TK_INTERNAL_H */
