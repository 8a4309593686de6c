/* SPDX-License-Identifier: MIT */
/*
 * tracekit/runtime.h - what the generated code needs from libtracekit.
 *
 * The layouts here are used by inline code in the instrumented program, so
 * they are part of the library's ABI; applications must not touch them
 * directly.  Everything named tk__ is internal.
 *
 * The fast path of a recorded event, all inline in the caller:
 *
 *   busy = 1                       (a signal handler that traces now sees
 *                                   busy and counts its event as lost)
 *   p = pos; if p + size > end, or the thread's CPU is not its packet's
 *                                  -> tk__reserve_slow (library: first
 *                                   buffer, packet switch, a packet for
 *                                   the new CPU, lost counting)
 *   write the header (id, time) and the fields at p
 *   pos = p + size; *commit = offset of pos   (one release store: the
 *                                   recorder may copy up to here)
 *   busy = 0
 *
 * No lock, no atomic read-modify-write, no call into the library unless
 * the packet is full.
 */
#ifndef TRACEKIT_RUNTIME_H
#define TRACEKIT_RUNTIME_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include "desc.h"
#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Declarations the headers generate in the program, C linkage in C++. */
#ifdef __cplusplus
#define TK__C_BEGIN extern "C" {
#define TK__C_END }
#else
#define TK__C_BEGIN
#define TK__C_END
#endif

/* On every function of the runtime that lands in the program's code (the
 * inline helpers here, the emit and probe functions TK_EVENT generates,
 * the module constructor): the function tracer never traces them, however
 * the program is built for it (no -finstrument-functions or -pg call, no
 * patchable entry). */
#if defined(__has_attribute)
#if __has_attribute(patchable_function_entry)
#define TK__NOTRACE                                                           \
	__attribute__((no_instrument_function, patchable_function_entry(0, 0)))
#endif
#endif
#ifndef TK__NOTRACE
#define TK__NOTRACE __attribute__((no_instrument_function))
#endif

#define TK__LIKELY(x) __builtin_expect(!!(x), 1)
#define TK__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TK__BARRIER() __asm__ __volatile__("" ::: "memory")

struct tk_filter;
struct tk__probe_array;

/**
 * struct tk_event - one event of this process.
 * @enabled: the call site's test: recorded, filtered or probed.
 * @record: the recording probe is connected (TK__RECORD), and the user
 *	stack is recorded after each event (TK__RECORD_STACK).
 * @id: the registry's id, stamped into each record.
 * @reserved: 0.
 * @filter: the compiled filter, NULL when every hit passes.
 * @probes: the user probes, NULL if none.
 * @desc: the event's descriptor (tracekit/desc.h).
 * @priv: the registry's bookkeeping.
 *
 * One per definition per module, one per tk_mark() call site.  Written by
 * the registry, read by the call sites: applications only take its
 * address, through the macros.
 */
struct tk_event {
	uint8_t enabled; /* the call site's test: record, filter or probes */
	uint8_t record;  /* TK__RECORD, | TK__RECORD_STACK */
	uint16_t id;     /* registry id, stamped into each record */
	uint32_t reserved;
	struct tk_filter *filter;	/* NULL: every hit passes */
	struct tk__probe_array *probes; /* user probes, NULL if none */
	const struct tk_desc_head *desc;
	void *priv; /* registry's bookkeeping */
};

/* The calling thread's place in its buffer.  pos and end bound the free
 * space of the current packet; end is NULL when there is none, which sends
 * the next event to the slow path. */
struct tk__thread {
	char *pos;
	char *end;
	uint64_t *commit; /* committed bytes of the current packet (shm) */
	char *packet;     /* start of the current packet */
	uint64_t events;  /* events in the current packet */
	uint64_t last_tsc; /* time of the previous event (or packet start) */
	uint32_t busy;    /* inside the fast path (signal nesting guard) */
	uint32_t mono;    /* stamp with CLOCK_MONOTONIC, not the TSC (set by
			   * the library with each packet: tk__clock_of) */
	/* where the thread's CPU is read: the kernel keeps it current
	 * (glibc's rseq area); set before the first packet opens */
	const int32_t *cpu_src;
	int32_t cpu;      /* the CPU the current packet records */
	uint32_t lost_pending; /* nested losses before the buffer exists */
	uint64_t stack_tsc; /* the event just committed wants its user
			     * stack (record --ustack): its time */
	void *stream;     /* library's */
};

extern __thread struct tk__thread tk__thread
	__attribute__((tls_model("initial-exec")));

/* struct tk_event's record: the recording probe is connected, and the
 * user stack goes with each event recorded (record --ustack). */
#define TK__RECORD 1
#define TK__RECORD_STACK 2

/* Library entry points of the slow paths (see lib/). */
char *tk__reserve_slow(uint32_t size, uint64_t tsc);
/* The user stack of the event just committed (stack_tsc), walked from
 * the caller's frame pointer: called by the event's call site. */
void tk__user_stack(void);
void tk__lost_nested(void);
int tk__filter_pass(struct tk_event *ev, const struct tk_value *values);
struct tk__probe_array *tk__probes_begin(struct tk_event *ev);
void tk__probes_end(void);
void tk__mark_record(struct tk_event *ev, const struct tk_value *values,
		     unsigned n);
void tk__module_register(const char *start, const char *stop,
			 const char *keys_start, const char *keys_stop);
void tk__module_unregister(const char *start, const char *stop);

typedef void (*tk__probe_fn)(void);
struct tk__probe_array {
	unsigned count;
	struct {
		tk__probe_fn fn;
		void *data;
	} probe[];
};

/**
 * tk_probe_connect_raw() - Call a function on every hit of an event.
 * @ev: the event.
 * @fn: called as fn(@data, <the event's arguments>) on the firing thread,
 *	after the recording, until disconnected.
 * @data: passed to @fn.
 *
 * Several probes may be connected to one event; connecting is safe while
 * other threads fire it.  Prefer the typed tk_probe_connect() macro.
 *
 * Context: any thread, not from inside a probe (it waits for an RCU grace
 * period).
 * Return: 0, -EINVAL, -EEXIST (@fn and @data are connected already) or
 * -ENOMEM.
 */
int tk_probe_connect_raw(struct tk_event *ev, tk__probe_fn fn, void *data);

/**
 * tk_probe_disconnect_raw() - Stop calling a probe.
 * @ev: the event.
 * @fn: the function given to tk_probe_connect_raw().
 * @data: the data given with it.
 *
 * When it returns, @fn is not running on any thread for this connection
 * and will not run again: it waits for an RCU grace period.
 *
 * Context: any thread, not from inside a probe.
 * Return: 0, -EINVAL, -ENOENT (not connected) or -ENOMEM.
 */
int tk_probe_disconnect_raw(struct tk_event *ev, tk__probe_fn fn, void *data);

/*
 * TK__SITE(evp): true when the event is on.  On x86-64 it is a 5-byte
 * instruction at an even address (so that its first two bytes can be
 * replaced by one atomic store) with an entry in the section "tk_keys"
 * (site, where to go when on, the event; each relative to itself, see
 * lib/static-key.c).  As
 * compiled the instruction jumps to a test of the enabled byte; the
 * runtime patches it into a NOP (event off) or a jump to the event's code
 * (on), so that a disabled site costs a NOP.  Define TK_NO_STATIC_KEYS to
 * build plain byte tests.
 */
#if defined(__x86_64__) && !defined(TK_NO_STATIC_KEYS)
#define TK_HAVE_STATIC_KEYS 1
#define TK__SITE(evp)                                                         \
	__extension__({                                                      \
		__label__ tk__site_test, tk__site_on;                        \
		int tk__site_r = 0;                                          \
		__asm__ goto(".balign 2, 0x90\n1:\n\t.byte 0xe9\n\t"       \
			     ".long %l[tk__site_test] - (1b + 5)\n\t"        \
			     ".pushsection tk_keys, \"aw\"\n\t"              \
			     ".balign 4\n\t"                                  \
			     ".long 1b - ., %l[tk__site_on] - ., %c0 - .\n\t" \
			     ".popsection"                                   \
			     : : "i"(evp) : : tk__site_test, tk__site_on);   \
		if (0) {                                                     \
		tk__site_test:                                               \
			tk__site_r = __atomic_load_n(&(evp)->enabled,        \
						     __ATOMIC_RELAXED);      \
		}                                                            \
		if (0) {                                                     \
		tk__site_on:                                                 \
			tk__site_r = 1;                                      \
		}                                                            \
		tk__site_r;                                                  \
	})
#else
#define TK__SITE(evp) __atomic_load_n(&(evp)->enabled, __ATOMIC_RELAXED)
#endif

/* The event clock: the TSC on x86 (where the recorder found it usable:
 * else, and elsewhere, CLOCK_MONOTONIC in ns). */
#if defined(__x86_64__) || defined(__i386__)
#define TK_CLOCK_TSC 1
#else
#define TK_CLOCK_TSC 0
#endif

uint64_t tk__clock_mono(void);

/* The TSC where the build has it, else CLOCK_MONOTONIC. */
TK__NOTRACE
static inline uint64_t tk__clock(void)
{
#if TK_CLOCK_TSC
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return tk__clock_mono();
#endif
}

/* The time for thread @t's next event: the session's clock, which the
 * library copies into t->mono when it opens a packet (a thread's first
 * event always does), so that the choice costs a test of a word the
 * event path reads anyway. */
TK__NOTRACE
static inline uint64_t tk__clock_of(const struct tk__thread *t)
{
	if (TK__UNLIKELY(t->mono))
		return tk__clock_mono();
	return tk__clock();
}

/* Event header (common/ringbuf-layout.h): u16 id + low 32 bits of the TSC
 * while less than 2^32 ticks passed since the thread's previous event,
 * else u16 0xffff + u16 id + u64 TSC. */
#define TK__ID_EXTENDED 0xffff
#define TK__HEADER_COMPACT 6
#define TK__HEADER_EXTENDED 12

/* Write the header of event @id at time @tsc into @p, compact while less
 * than 2^32 ticks passed since the thread's previous event (or the start
 * of its packet), and return where the event's fields go. */
TK__NOTRACE
static inline char *tk__put_header(struct tk__thread *t, char *p, uint16_t id,
				   uint64_t tsc)
{
	uint64_t prev = t->last_tsc;
	uint32_t lo = (uint32_t)tsc;

	t->last_tsc = tsc;
	if (TK__LIKELY(!((tsc - prev) >> 32))) {
		memcpy(p, &id, 2);
		memcpy(p + 2, &lo, 4);
		return p + TK__HEADER_COMPACT;
	} else {
		const uint16_t ext = TK__ID_EXTENDED;

		memcpy(p, &ext, 2);
		memcpy(p + 2, &id, 2);
		memcpy(p + 4, &tsc, 8);
		return p + TK__HEADER_EXTENDED;
	}
}

/* Whether the thread now runs on another CPU than the one its current
 * packet records: one load where the kernel keeps the CPU (lib/cpu.c).
 * Only with a packet open (end not NULL): cpu_src is set then. */
TK__NOTRACE
static inline int tk__cpu_moved(const struct tk__thread *t)
{
	return __atomic_load_n(t->cpu_src, __ATOMIC_RELAXED) != t->cpu;
}

/* Reserve room for an event of @payload bytes, write its header with @id
 * and the time, and return where its fields go; NULL when the event is
 * lost (counted).  The clock is read once the thread is marked busy, so
 * that an event recorded by a signal handler can never come before an
 * earlier timestamp. */
TK__NOTRACE
static inline char *tk__reserve(uint32_t payload, uint16_t id)
{
	struct tk__thread *t = &tk__thread;
	uint32_t hsize;
	uint64_t tsc;
	char *p;

	if (TK__UNLIKELY(t->busy)) {
		tk__lost_nested();
		return NULL;
	}
	t->busy = 1;
	TK__BARRIER();
	tsc = tk__clock_of(t);
	hsize = TK__UNLIKELY((tsc - t->last_tsc) >> 32) ? TK__HEADER_EXTENDED
							 : TK__HEADER_COMPACT;
	p = t->pos;
	if (TK__UNLIKELY((uintptr_t)p + payload + hsize >
			 (uintptr_t)__atomic_load_n(&t->end, __ATOMIC_RELAXED)) ||
	    TK__UNLIKELY(tk__cpu_moved(t))) {
		/* a new packet starts at this event's time (last_tsc: the
		 * library may have read the clock again, if the session's
		 * changed): the header is compact (the library checks the
		 * room again where it keeps the packet) */
		p = tk__reserve_slow(payload + TK__HEADER_COMPACT, tsc);
		if (!p) {
			TK__BARRIER();
			t->busy = 0;
			return NULL;
		}
		tsc = t->last_tsc;
	}
	return tk__put_header(t, p, id, tsc);
}

/* Publish the event that ends at @end (reserved by tk__reserve). */
TK__NOTRACE
static inline void tk__commit(char *end)
{
	struct tk__thread *t = &tk__thread;

	t->pos = end;
	t->events++;
	/* pairs with the ACQUIRE load of commit in cli/consumer.c:write_copy():
	 * a copy of the open packet has the event whole */
	__atomic_store_n(t->commit, (uint64_t)(end - t->packet),
			 __ATOMIC_RELEASE);
	TK__BARRIER();
	t->busy = 0;
}

TK__NOTRACE
static inline const char *tk__str_or_null(const char *s)
{
	return s ? s : "(null)";
}

TK__NOTRACE
static inline uint32_t tk__strsize(const char *s)
{
	return (uint32_t)strlen(s) + 1;
}

TK__NOTRACE
static inline char *tk__put_str(char *p, const char *s, uint32_t size)
{
	memcpy(p, s, size);
	p[size - 1] = '\0'; /* s may have grown since it was measured */
	return p + size;
}

TK__NOTRACE
static inline char *tk__put_chars(char *p, const char *s, uint32_t n)
{
	uint32_t i = 0;

	for (; i < n && s[i]; i++)
		p[i] = s[i];
	for (; i < n; i++)
		p[i] = '\0';
	return p + n;
}

TK__NOTRACE
static inline char *tk__put_bytes(char *p, const void *b, uint32_t n)
{
	memcpy(p, &n, 4);
	if (n)
		memcpy(p + 4, b, n);
	return p + 4 + n;
}

TK__NOTRACE
static inline void tk__value_str(struct tk_value *v, const char *s)
{
	v->str = tk__str_or_null(s);
	v->len = (uint32_t)strlen(v->str);
}

TK__NOTRACE
static inline void tk__value_chars(struct tk_value *v, const char *s,
				   uint32_t n)
{
	uint32_t i = 0;

	while (i < n && s[i])
		i++;
	v->str = s;
	v->len = i;
}

TK__NOTRACE
static inline void tk__value_bytes(struct tk_value *v, const void *b,
				   uint32_t n)
{
	v->str = (const char *)b;
	v->len = n;
}

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_RUNTIME_H */
