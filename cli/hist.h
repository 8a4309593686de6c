/* SPDX-License-Identifier: MIT */
/*
 * hist.h - what the parts of `tracekit hist` share (cmd-hist.c parses and
 * drives; hist-keys.c, hist-table.c and hist-latency.c do the work).
 *
 * A key is a field of the event (user fields, or a kernel event's fields
 * from its saved format, common_* included) or one of the special keys
 * every event has:
 *
 *   common_pid, tid   the thread           cpu, common_cpu   the CPU
 *   comm, common_comm its command name     pid               the process
 *                                                            (user events)
 *
 * with an optional modifier, as ftrace's hist triggers write them:
 * FIELD.hex, .log2 (power-of-two buckets), .buckets=N, .execname (a pid
 * shown with its command name), .sym (an address shown as its
 * function: kernel symbols, or the user symbols saved with the trace).
 *
 * Each event is turned into a fixed-size key: 8 bytes per number, up to
 * HIST_STR_MAX bytes (zero-padded) per string, so that keys hash and
 * compare as bytes.
 */
#ifndef TK_HIST_H
#define TK_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "format/cursor.h"
#include "format/number.h"
#include "format/outbuf.h"
#include "report.h"

#define HIST_STR_MAX 64 /* a string key's bytes (longer ones are cut) */
#define HIST_MAX_KEYS 8
#define HIST_MAX_KINDS 64 /* definitions of one event name (processes) */

enum hist_mod { MOD_NONE, MOD_HEX, MOD_LOG2, MOD_BUCKETS, MOD_EXECNAME, MOD_SYM };

enum hist_src { SRC_FIELD, SRC_TID, SRC_PID, SRC_COMM, SRC_CPU };

/* One key (or match field) as the user wrote it, resolved for each kind
 * of the event it applies to. */
struct hist_key {
	char name[48];   /* without the modifier */
	enum hist_mod mod;
	uint64_t buckets; /* MOD_BUCKETS */
	bool string;     /* else a number */
	bool is_signed;
	bool is_double;
	bool pointer;    /* a TK_KIND_PTR field: shown as a symbol (.sym) */
	unsigned off, size; /* in the key record */
	/* per kind (index in the event's kinds): where the value comes from */
	enum hist_src src[HIST_MAX_KINDS];
	int field[HIST_MAX_KINDS];
};

/* The kinds one event name stands for, with their printable name. */
struct hist_event {
	const char *name;
	unsigned nkinds;
	struct tk_cursor_kind *kinds[HIST_MAX_KINDS];
};

/* Find @name's kinds in the trace; prints the error ("not in the trace",
 * with a did-you-mean) and returns -1 when there is none. */
int hist_event_find(struct tk_cursor *c, const char *name, struct hist_event *e);

/* Parse "FIELD[.modifier]" into @k and resolve it for every kind of @e;
 * prints the error and returns -1 for an unknown field or modifier, or a
 * field of two types. */
int hist_key_parse(const char *spec, const struct hist_event *e,
		   struct hist_key *k, const char *dir);

/* Index of @kind among e->kinds (kind->user holds it + 1 for the event
 * the cursor loop looks at). */
static inline unsigned hist_kind_index(const struct hist_event *e,
				       const struct tk_cursor_kind *kind)
{
	for (unsigned i = 0; i < e->nkinds; i++)
		if (e->kinds[i] == kind)
			return i;
	return 0;
}

/* Write the current event's value of @k at rec + k->off; false when the
 * record lacks it (a kernel record too short for its format). */
bool hist_key_encode(const struct hist_key *k, unsigned kind_index,
		     struct tk_cursor *c, const struct tk_value *values,
		     unsigned char *rec);

/* A key's value from a key record, as text into buf[size] (NUL
 * terminated); returns its length. */
size_t hist_key_format(const struct hist_key *k, const unsigned char *rec,
		       struct tk_cursor *c, char *buf, size_t size);

/* Addresses from here up are the kernel's (x86-64, arm64: the upper
 * half); .sym looks those up in the kernel's symbols, the others in the
 * user symbols saved with the trace. */
#define TK_KERNEL_ADDR_MIN 0xffff800000000000ull

/* The function holding @addr, as report names it, and the offset into
 * it in *off: a kernel address from the kernel's symbols, a user one from
 * the symbols saved with the trace for process @pid (0: any process).
 * NULL when unknown. */
const char *hist_function_name(struct tk_cursor *c, uint32_t pid, uint64_t addr,
			       uint64_t *off);

/* tk_filter_namer (common/filter.h) of -f, whose context is the cursor:
 * the function at @addr in the process of the event being read. */
const char *hist_filter_namer(void *cursor, uint64_t addr);

/* Free the user symbols loaded (at the end of the command). */
void hist_symbols_free(void);

/* @v in decimal (format/number.h), NUL-terminated in @buf; returns where
 * it starts. */
static inline const char *hist_u64(char buf[TK_NUM_MAX], uint64_t v)
{
	buf[TK_NUM_MAX - 1] = '\0';
	return tk_num_dec(buf + TK_NUM_MAX - 1, v);
}

/* Start text in buf[size] (a key, a sum, a duration): a line buffer
 * (format/outbuf.h) with room for a NUL, which hist_text_end() puts. */
static inline void hist_text_start(struct tk_obuf *o, char *buf, size_t size)
{
	tk_obuf_init(o, buf, size - 1);
}

static inline size_t hist_text_end(struct tk_obuf *o)
{
	o->p[o->n] = '\0';
	return o->n;
}

/* Nanoseconds of @ticks of the trace's clock (exact integer arithmetic:
 * ticks * 10^9 / freq, rounded down). */
uint64_t hist_ticks_to_ns(const struct tk_trace_clock *clk, uint64_t ticks);

/* Fixed-size key records to dense indexes 0, 1, ...: an open-addressing
 * table of 32-bit slots over an array of the records.  The caller keeps
 * its per-entry data in arrays of map->cap elements (grown when
 * hist_map_get reports that cap changed). */
struct hist_map {
	size_t keysize; /* a multiple of 8 */
	unsigned char *keys;
	size_t n, cap;
	uint32_t *slots; /* index + 1, 0 free */
	size_t nslots;   /* a power of two, twice cap */
};

/* The index of key record @k, added if new (*added set); -1 when out of
 * memory. */
long hist_map_get(struct hist_map *m, const unsigned char *k, bool *added);
/* The index of @k, -1 when it is not there. */
long hist_map_find(const struct hist_map *m, const unsigned char *k);
void hist_map_free(struct hist_map *m);

/* The event histogram: keys, values, sort and how many lines to print. */
struct hist_table_opts {
	const char *key_text;  /* --key as given, modifiers included */
	unsigned nkeys;
	struct hist_key *keys;
	unsigned nvals;
	struct hist_key *vals; /* numeric fields, summed */
	const char *sort;      /* "count", "KEY", "VAL" [.ascending|.descending], comma list */
	const char *filter;    /* ftrace syntax, on the event's fields */
	unsigned long limit;   /* 0: every entry */
};

/* -f FILTER compiled for each kind of an event.  Beside the event's own
 * fields it knows those that --key knows of every event, as report -F
 * knows common_pid, common_comm and common_cpu: common_pid and tid (the
 * thread), pid (a user event's process), comm and common_comm, cpu and
 * common_cpu; an event's own field of the same name comes first. */
struct tk_filter;
struct hist_filter {
	struct tk_filter *f[HIST_MAX_KINDS]; /* per kind; NULL: no filter */
	struct tk_value *values;             /* a kind's values, then those
					      * of the fields above */
};

/* Compile @filter (NULL: none) for each kind of @e into @hf,
 * FIELD.function naming addresses as the events of @c are read; prints
 * the error and returns -1 when it does not compile.  Free with
 * hist_filter_free, also after a failure. */
int hist_filters_compile(struct tk_cursor *c, const char *filter,
			 const struct hist_event *e, struct hist_filter *hf);

/* Whether the current event of @c, of kind number @ki, with field
 * @values, passes the filter (true when there is none). */
bool hist_filter_match(struct tk_cursor *c, struct hist_filter *hf, unsigned ki,
		       const struct tk_value *values);

void hist_filter_free(struct hist_filter *hf);

int hist_table_run(struct tk_cursor *c, const struct hist_event *e,
		   const struct hist_table_opts *o, const char *dir);

/* The latency between two events with the same match fields. */
struct hist_latency_opts {
	unsigned nmatch;
	struct hist_key from_keys[HIST_MAX_KEYS], to_keys[HIST_MAX_KEYS];
	const char *match_text; /* as given, for the title */
	unsigned slowest;       /* instances to list */
	enum ts_mode ts;
	const char *unit;       /* ns, us, ms, s */
	/* which starts count: -f on the --from event's fields, and the
	 * thread of the --from event (--pid, --tid, --comm) */
	const char *filter;
	const struct report_who *who;
	/* --key: one histogram per value of these fields of the start */
	unsigned nkeys;
	struct hist_key keys[HIST_MAX_KEYS];
	const char *key_text;
};

int hist_latency_run(struct tk_cursor *c, struct hist_event *from,
		     struct hist_event *to, const struct hist_latency_opts *o,
		     const char *dir);

/* Lost-event lines of the trace, "# warning: ..." (nothing if none). */
void hist_print_lost(FILE *f, const struct tk_cursor *c);

#endif /* TK_HIST_H */
