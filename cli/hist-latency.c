/* SPDX-License-Identifier: MIT */
/*
 * hist-latency.c - `tracekit hist --from A --to B --match FIELD`: the time
 * from each A to the next B with the same match fields, as ftrace's
 * synthetic latency events measure it (a wakeup to the woken task's
 * switch-in, a system call's entry to its exit, a request's start to its
 * end), printed as a log2 histogram with exact percentiles and the
 * slowest instances.
 *
 * Events are read in time order (cursor.c).  A pending start is kept per
 * distinct match key (hist_map): a later A with the same key replaces it
 * (counted), as a synthetic event's saved timestamp is overwritten; a B
 * takes the pending start of its key, if any.  When A and B are the same
 * event, each one ends the interval the previous one began.
 *
 * Percentiles are exact: every latency is kept (8 bytes per matched
 * pair); p is the nearest-rank value, the ceil(p/100 * n)-th smallest,
 * found by selection (quickselect, linear on average) rather than a full
 * sort.  The slowest N are a min-heap of N.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "cli.h"
#include "common/filter.h"
#include "hist.h"

struct point {
	uint64_t ts;
	unsigned src; /* the cursor's source: its comm is looked up if shown */
	int tid;
	unsigned cpu;
};

struct pending {
	struct point start;
	bool valid;
	bool selected; /* else its end is passed over, not counted */
	uint32_t key;  /* --key: the start's index in keymap */
};

struct instance {
	uint64_t lat; /* ticks */
	struct point start, end;
	size_t key;   /* its index in the map: the match values */
	uint32_t group; /* --key: its index in keymap */
	bool lost;    /* events were lost in between (lost_between) */
};

struct latency {
	struct hist_map map;
	struct pending *pending;
	size_t pending_cap;
	uint64_t *lats;
	size_t nlats, lats_cap;
	struct instance *slow; /* min-heap on lat, at most nslow */
	unsigned nslow, slow_cap;
	uint64_t unmatched_ends, replaced;
	uint64_t backwards; /* ends stamped before their start: left out */
	uint64_t unselected; /* starts left out by -f, --pid, --tid, --comm */
	struct hist_map keymap; /* --key: the starts' key values */
	uint32_t *lkeys;        /* --key: lats[i]'s index in keymap */
	size_t lkeys_cap;
	/* per source of the cursor: the user stream's events_discarded so
	 * far, and the time of the first event after its last loss (a
	 * kernel CPU's: after the last page that says it missed events) */
	uint64_t *discarded, *lost_at;
	uint64_t lost_spans; /* intervals with events lost in between */
};

/* Note a loss just before the cursor's current event, in its source. */
static void note_loss(struct latency *l, const struct tk_cursor *c)
{
	if (c->reader) {
		if (c->reader->discarded == l->discarded[c->src])
			return;
		l->discarded[c->src] = c->reader->discarded;
	} else if (!c->missed) {
		return;
	}
	l->lost_at[c->src] = c->ts;
}

/* Whether events of the start's or the end's source were lost between
 * them: the source went on after a loss later than the start (for the
 * end's source, the loss may also lie before the start, in the gap
 * between its last event before and its first after). */
static bool lost_between(const struct latency *l, const struct point *start,
			 const struct point *end)
{
	return l->lost_at[start->src] > start->ts || l->lost_at[end->src] > start->ts;
}

static void slow_down(struct latency *l, unsigned i)
{
	for (;;) {
		unsigned a = 2 * i + 1, m = i;

		if (a < l->nslow && l->slow[a].lat < l->slow[m].lat)
			m = a;
		if (a + 1 < l->nslow && l->slow[a + 1].lat < l->slow[m].lat)
			m = a + 1;
		if (m == i)
			return;
		struct instance t = l->slow[i];

		l->slow[i] = l->slow[m];
		l->slow[m] = t;
		i = m;
	}
}

static void slow_add(struct latency *l, const struct instance *in)
{
	if (!l->slow_cap)
		return;
	if (l->nslow < l->slow_cap) {
		unsigned i = l->nslow++;

		l->slow[i] = *in;
		while (i && l->slow[(i - 1) / 2].lat > l->slow[i].lat) {
			struct instance t = l->slow[i];

			l->slow[i] = l->slow[(i - 1) / 2];
			l->slow[(i - 1) / 2] = t;
			i = (i - 1) / 2;
		}
	} else if (in->lat > l->slow[0].lat) {
		l->slow[0] = *in;
		slow_down(l, 0);
	}
}

/* Every latency is kept: tens of MB for a long trace.  They live in
 * anonymous memory grown by mremap and asked for in huge pages, since
 * faulting it in 4 KiB pages cost a fifth of the run in a VM (each fault
 * is an exit to the host). */
static int add_lat(struct latency *l, uint64_t lat, uint32_t group)
{
	if (l->keymap.keysize && l->nlats == l->lkeys_cap) {
		size_t cap = l->lkeys_cap ? l->lkeys_cap * 2 : 4096;
		uint32_t *k = realloc(l->lkeys, cap * sizeof(*k));

		if (!k)
			return -ENOMEM;
		l->lkeys = k;
		l->lkeys_cap = cap;
	}
	if (l->keymap.keysize)
		l->lkeys[l->nlats] = group;
	if (l->nlats == l->lats_cap) {
		size_t cap = l->lats_cap ? l->lats_cap * 2 : (size_t)1 << 18;
		void *p = l->lats_cap ? mremap(l->lats, l->lats_cap * sizeof(*l->lats),
					      cap * sizeof(*l->lats), MREMAP_MAYMOVE)
				      : mmap(NULL, cap * sizeof(*l->lats),
					     PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -ENOMEM;
		madvise(p, cap * sizeof(*l->lats), MADV_HUGEPAGE);
		l->lats = p;
		l->lats_cap = cap;
	}
	l->lats[l->nlats++] = lat;
	return 0;
}

/* The k-th smallest of v[0..n) (0-based), moving elements: selection
 * with a three-way partition around a median-of-three pivot, so that
 * runs of equal latencies (common: the same short path taken again and
 * again) cost one pass. */
static uint64_t select_kth(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* the k-th lies in v[lo..hi) */

	while (hi - lo > 1) {
		uint64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi - 1];
		uint64_t pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,i) ==, [gt,hi) > */

		while (i < gt) {
			uint64_t x = v[i];

			if (x < pivot) {
				v[i++] = v[lt];
				v[lt++] = x;
			} else if (x > pivot) {
				v[i] = v[--gt];
				v[gt] = x;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return pivot;
	}
	return v[k];
}

static int cmp_slow(const void *a, const void *b)
{
	const struct instance *x = a, *y = b;

	if (x->lat != y->lat)
		return x->lat < y->lat ? 1 : -1;
	return x->start.ts < y->start.ts ? -1 : x->start.ts > y->start.ts;
}

static uint64_t unit_div(const char *unit)
{
	return !strcmp(unit, "ns") ? 1 : !strcmp(unit, "us") ? 1000
	       : !strcmp(unit, "ms") ? 1000000 : 1000000000;
}

/* @ns in @unit with every nanosecond shown: "1234.567 us" */
static void format_dur(uint64_t ns, const char *unit, char *buf, size_t size)
{
	struct tk_obuf t;

	hist_text_start(&t, buf, size);
	uint64_t div = unit_div(unit);
	unsigned digits = div == 1 ? 0 : div == 1000 ? 3 : div == 1000000 ? 6 : 9;

	tk_oudec(&t, ns / div);
	if (div > 1) {
		tk_oput(&t, ".", 1);
		tk_onum(&t, ns % div, false, 10, false, digits, true);
	}
	tk_oput(&t, " ", 1);
	tk_oputs(&t, unit);
	hist_text_end(&t);
}

/* min[b]: the fewest ticks whose duration in units of @div ns is at
 * least 2^b, so that a latency's log2 bucket is found by comparisons
 * rather than a 128-bit division per latency. */
static void log2_thresholds(const struct tk_trace_clock *clk, uint64_t div,
			    uint64_t min[64])
{
	for (int b = 0; b < 64; b++) {
		unsigned __int128 ns = ((unsigned __int128)1 << b) * div, t = ns;

		if (clk->freq && clk->freq != 1000000000u)
			t = (ns * clk->freq + 999999999u) / 1000000000u;
		min[b] = t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
	}
}

static void print_log2(const uint64_t *lats, size_t nlats,
		       const struct tk_trace_clock *clk, const char *unit)
{
	uint64_t buckets[65] = { 0 }, most = 0, div = unit_div(unit), min[64];
	int lo = 64, hi = 0;

	log2_thresholds(clk, div, min);
	for (size_t i = 0; i < nlats; i++) {
		uint64_t t = lats[i];
		int b = 0;

		/* the highest b with min[b] <= t (bucket 0 holds 0 and 1) */
		for (int step = 32; step; step >>= 1)
			if (b + step < 64 && min[b + step] <= t)
				b += step;
		buckets[b]++;
	}
	for (int b = 0; b < 64; b++) {
		if (!buckets[b])
			continue;
		lo = b < lo ? b : lo;
		hi = b;
		most = buckets[b] > most ? buckets[b] : most;
	}
	if (lo > hi)
		return;
	char top[TK_NUM_MAX], a[TK_NUM_MAX], c[TK_NUM_MAX];
	int w = (int)strlen(hist_u64(top, ((uint64_t)1 << hi) * 2 - 1));

	w = w < 5 ? 5 : w;
	printf("%*s : count     distribution\n", 2 * w + 4, unit);
	for (int b = lo; b <= hi; b++) {
		uint64_t from = b ? 1ull << b : 0, to = b ? (1ull << b) * 2 - 1 : 1;
		int stars = most ? (int)(buckets[b] * 40 / most) : 0;

		printf("%*s -> %-*s : %-9s |%-40.*s|\n", w, hist_u64(a, from), w,
		       hist_u64(top, to), hist_u64(c, buckets[b]), stars,
		       "****************************************");
	}
}

/* "comm-tid [cpu] time" as report prints an event's start, in buf[128] */
static void format_point(const struct tk_cursor *c, const struct point *p,
			 enum ts_mode ts, char *buf)
{
	const char *comm = tk_cursor_comm_of(c, p->src, p->tid);
	struct tk_obuf o;

	hist_text_start(&o, buf, 128);
	report_line_who(&o, comm, strlen(comm), (uint32_t)p->tid);
	report_line_cpu(&o, p->cpu);
	report_line_time(&o, &c->trace.clock, ts, p->ts);
	hist_text_end(&o);
}

static void print_slowest(struct tk_cursor *c, struct latency *l,
			  const struct hist_latency_opts *o)
{
	char dur[64], a[128], b[128], key[256];

	qsort(l->slow, l->nslow, sizeof(*l->slow), cmp_slow);
	printf("\nslowest %s:\n", hist_u64(key, l->nslow));
	for (unsigned i = 0; i < l->nslow; i++) {
		const struct instance *in = &l->slow[i];

		format_dur(hist_ticks_to_ns(&c->trace.clock, in->lat), o->unit, dur,
			   sizeof(dur));
		format_point(c, &in->start, o->ts, a);
		format_point(c, &in->end, o->ts, b);
		printf("%16s  from %s  to %s ", dur, a, b);
		for (unsigned k = 0; k < o->nmatch; k++) {
			struct hist_key shown = o->from_keys[k];

			if (shown.pointer)
				shown.mod = MOD_SYM; /* a function, as report names it */
			hist_key_format(&shown, l->map.keys + in->key * l->map.keysize,
					c, key, sizeof(key));
			printf(" %s=%s", o->from_keys[k].name, key);
		}
		printf("%s\n", in->lost ? "  [events lost in between]" : "");
	}
}

/* The log2 histogram of lats[0..n) and its count, min, p50, p90, p99,
 * max (moves the elements: selection). */
static void print_stats(struct tk_cursor *c, uint64_t *lats, size_t n,
			const struct hist_latency_opts *o)
{
	static const unsigned pct[] = { 50, 90, 99 };
	char buf[64], num[TK_NUM_MAX];
	uint64_t min = lats[0], max = lats[0];

	print_log2(lats, n, &c->trace.clock, o->unit);
	for (size_t i = 1; i < n; i++) {
		min = lats[i] < min ? lats[i] : min;
		max = lats[i] > max ? lats[i] : max;
	}
	printf("\ncount %s", hist_u64(num, n));
	format_dur(hist_ticks_to_ns(&c->trace.clock, min), o->unit, buf, sizeof(buf));
	printf("  min %s", buf);
	for (unsigned i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		size_t rank = (n * pct[i] + 99) / 100;
		uint64_t v = select_kth(lats, n, rank ? rank - 1 : 0);

		format_dur(hist_ticks_to_ns(&c->trace.clock, v), o->unit, buf, sizeof(buf));
		printf("  p%s %s", hist_u64(num, pct[i]), buf);
	}
	format_dur(hist_ticks_to_ns(&c->trace.clock, max), o->unit, buf, sizeof(buf));
	printf("  max %s\n", buf);
}

/* "{ tid: 4242, comm: worker }" for --key group @g, in buf[size] */
static void format_group(struct tk_cursor *c, const struct latency *l,
			 const struct hist_latency_opts *o, size_t g, char *buf, size_t size)
{
	struct tk_obuf t;
	char v[256];

	hist_text_start(&t, buf, size);
	tk_oputs(&t, "{ ");
	for (unsigned k = 0; k < o->nkeys; k++) {
		hist_key_format(&o->keys[k], l->keymap.keys + g * l->keymap.keysize, c, v,
				sizeof(v));
		tk_oputs(&t, k ? ", " : "");
		tk_oputs(&t, o->keys[k].name);
		tk_oputs(&t, ": ");
		tk_oputs(&t, v);
	}
	tk_oputs(&t, " }");
	hist_text_end(&t);
}

/* --key: one histogram per key value of the starts, in the order the
 * values first started an interval: the latencies grouped by a counting
 * sort on their key. */
static int print_groups(struct tk_cursor *c, struct latency *l,
			const struct hist_latency_opts *o)
{
	size_t ng = l->keymap.n, *at = calloc(ng + 1, sizeof(*at));
	uint64_t *grouped = malloc((l->nlats ? l->nlats : 1) * sizeof(*grouped));
	char head[512];

	if (!at || !grouped) {
		free(at);
		free(grouped);
		return -1;
	}
	for (size_t i = 0; i < l->nlats; i++)
		at[l->lkeys[i] + 1]++;
	for (size_t g = 0; g < ng; g++)
		at[g + 1] += at[g];
	for (size_t i = 0; i < l->nlats; i++)
		grouped[at[l->lkeys[i]]++] = l->lats[i];
	for (size_t g = 0, lo = 0; g < ng; lo = at[g++]) {
		if (at[g] == lo)
			continue; /* its starts never ended */
		format_group(c, l, o, g, head, sizeof(head));
		printf("%s%s\n", lo ? "\n" : "", head);
		print_stats(c, grouped + lo, at[g] - lo, o);
	}
	printf("\n");
	free(at);
	free(grouped);
	return 0;
}

static int print_result(struct tk_cursor *c, struct latency *l,
			const struct hist_event *from, const struct hist_event *to,
			const struct hist_latency_opts *o, uint64_t starts_left)
{
	char num[TK_NUM_MAX];

	printf("# latency from %s to %s, matched on %s", from->name, to->name,
	       o->match_text);
	if (o->nkeys)
		printf(", one histogram per %s", o->key_text);
	printf("\n#\n");
	hist_print_lost(stdout, c);
	if (!o->nkeys)
		print_stats(c, l->lats, l->nlats, o);
	else if (print_groups(c, l, o) < 0)
		return -1;
	printf("unmatched: %s starts without an end, ", hist_u64(num, starts_left));
	printf("%s ends without a start, ", hist_u64(num, l->unmatched_ends));
	printf("%s starts replaced by a later one\n", hist_u64(num, l->replaced));
	if (l->unselected)
		printf("not selected: %s starts (-f, --pid, --tid, --comm)\n",
		       hist_u64(num, l->unselected));
	if (l->lost_spans)
		printf("lost events: %s intervals have events lost in between (their "
		       "times hold recording gaps; marked in the slowest)\n",
		       hist_u64(num, l->lost_spans));
	if (l->backwards)
		printf("left out: %s ends stamped before their start (the trace's "
		       "time goes back)\n", hist_u64(num, l->backwards));
	if (l->nslow)
		print_slowest(c, l, o);
	return 0;
}

/* Whether the current --from event starts an interval: -f on its
 * fields and its thread (--pid, --tid, --comm), as a synthetic event's
 * start trigger carries the filter that decides which starts are saved.
 * Ends are not selected: an end counts when its start was kept. */
static bool start_selected(struct tk_cursor *c, const struct hist_latency_opts *o,
			   struct hist_filter *hf, unsigned ki, const struct tk_value *values)
{
	if (hf->f[ki] && !hist_filter_match(c, hf, ki, values))
		return false;
	if (!o->who || report_who_all(o->who))
		return true;
	return report_who_selects(o->who, c->pid > 0 ? (uint32_t)c->pid : 0,
				  (uint32_t)c->tid, tk_cursor_comm_of(c, c->src, c->tid));
}

#define ROLE_FROM 1u
#define ROLE_TO 2u

int hist_latency_run(struct tk_cursor *c, struct hist_event *from,
		     struct hist_event *to, const struct hist_latency_opts *o,
		     const char *dir)
{
	struct latency l = { 0 };
	struct hist_filter filters = { 0 };
	unsigned char *rec = NULL, *krec = NULL;
	uint64_t starts = 0, ends = 0, starts_left = 0, first = 0;
	bool same = !strcmp(from->name, to->name);
	int ret = -1;

	for (unsigned k = 0; k < o->nmatch; k++)
		l.map.keysize += o->from_keys[k].size;
	l.map.keysize = (l.map.keysize + 7) & ~(size_t)7;
	for (unsigned k = 0; k < o->nkeys; k++)
		l.keymap.keysize += o->keys[k].size;
	l.keymap.keysize = (l.keymap.keysize + 7) & ~(size_t)7;
	l.slow_cap = o->slowest;
	l.slow = calloc(o->slowest + 1, sizeof(*l.slow));
	l.discarded = calloc(c->merge.nsources + 1, sizeof(*l.discarded));
	l.lost_at = calloc(c->merge.nsources + 1, sizeof(*l.lost_at));
	if (hist_filters_compile(c, o->filter, from, &filters) < 0)
		goto out;
	rec = calloc(1, l.map.keysize + 8);
	krec = calloc(1, l.keymap.keysize + 8);
	if (!rec || !krec || !l.slow || !l.discarded || !l.lost_at)
		goto nomem;
	/* kind->user: roles (bits 0-1), from index (bits 8-15), to index
	 * (bits 16-23) */
	for (unsigned i = 0; i < from->nkinds; i++)
		from->kinds[i]->user = (void *)(uintptr_t)(ROLE_FROM | i << 8);
	for (unsigned i = 0; i < to->nkinds; i++)
		to->kinds[i]->user = (void *)((uintptr_t)to->kinds[i]->user | ROLE_TO |
					      (uintptr_t)i << 16);
	while (tk_cursor_next(c) > 0) {
		uintptr_t u = (uintptr_t)c->kind->user;
		const struct tk_value *values;
		struct point here;
		long idx;

		if (!first)
			first = c->ts; /* --ts start counts from there */
		if (c->reader ? c->reader->discarded != l.discarded[c->src] : c->missed != 0)
			note_loss(&l, c);
		if (!u)
			continue;
		values = tk_cursor_values(c);
		if (!values)
			continue;
		here.ts = c->ts;
		here.src = c->src;
		here.tid = c->tid;
		here.cpu = c->cpu;
		if (u & ROLE_TO) {
			unsigned ki = (u >> 16) & 0xff;

			ends++;
			for (unsigned k = 0; k < o->nmatch; k++)
				hist_key_encode(&o->to_keys[k], ki, c, values, rec);
			idx = hist_map_find(&l.map, rec);
			if (idx >= 0 && l.pending[idx].valid && !l.pending[idx].selected) {
				l.pending[idx].valid = false;
			} else if (idx >= 0 && l.pending[idx].valid &&
				   here.ts < l.pending[idx].start.ts) {
				/* a scribbled packet or clock: no latency of
				 * 584 years minus a bit */
				l.pending[idx].valid = false;
				l.backwards++;
			} else if (idx >= 0 && l.pending[idx].valid) {
				struct instance in;

				in.start = l.pending[idx].start;
				in.end = here;
				in.lat = here.ts - in.start.ts;
				in.key = (size_t)idx;
				in.group = l.pending[idx].key;
				in.lost = lost_between(&l, &in.start, &in.end);
				l.lost_spans += in.lost;
				l.pending[idx].valid = false;
				if (add_lat(&l, in.lat, in.group) < 0)
					goto nomem;
				slow_add(&l, &in);
			} else if (!same) {
				l.unmatched_ends++;
			}
		}
		if (u & ROLE_FROM) {
			unsigned ki = (u >> 8) & 0xff;
			bool added, sel;

			starts++;
			sel = start_selected(c, o, &filters, ki, values);
			l.unselected += !sel;
			for (unsigned k = 0; k < o->nmatch; k++)
				hist_key_encode(&o->from_keys[k], ki, c, values, rec);
			idx = hist_map_get(&l.map, rec, &added);
			if (idx < 0)
				goto nomem;
			if (l.map.cap != l.pending_cap) {
				struct pending *p = realloc(l.pending,
							    l.map.cap * sizeof(*p));

				if (!p)
					goto nomem;
				l.pending = p;
				l.pending_cap = l.map.cap;
			}
			if (added)
				l.pending[idx].valid = false;
			if (l.pending[idx].valid && l.pending[idx].selected)
				l.replaced++;
			l.pending[idx].start = here;
			l.pending[idx].valid = true;
			l.pending[idx].selected = sel;
			if (sel && o->nkeys) {
				long g;

				memset(krec, 0, l.keymap.keysize);
				for (unsigned k = 0; k < o->nkeys; k++)
					hist_key_encode(&o->keys[k], ki, c, values, krec);
				g = hist_map_get(&l.keymap, krec, &added);
				if (g < 0)
					goto nomem;
				l.pending[idx].key = (uint32_t)g;
			}
		}
	}
	if (c->nerrors)
		tk_error("%s", c->error);
	for (size_t i = 0; i < l.map.n; i++)
		starts_left += l.pending[i].valid && l.pending[i].selected;
	if (!starts) {
		tk_error("no '%s' event in trace '%s'", from->name, dir);
		goto out;
	}
	if (!same && !ends) {
		tk_error("no '%s' event in trace '%s'", to->name, dir);
		goto out;
	}
	if (!l.nlats) {
		tk_error("no '%s' matched a '%s' on %s in trace '%s' (%" PRIu64 " %s, %" PRIu64
			 " %s)", to->name, from->name, o->match_text, dir, starts, from->name,
			 ends, to->name);
		goto out;
	}
	report_time_origin(first);
	if (print_result(c, &l, from, to, o, starts_left) < 0)
		goto nomem;
	ret = c->nerrors ? -1 : 0;
	goto out;
nomem:
	tk_error("out of memory reading trace '%s'", dir);
out:
	hist_map_free(&l.map);
	hist_map_free(&l.keymap);
	free(l.lkeys);
	free(krec);
	free(l.pending);
	if (l.lats)
		munmap(l.lats, l.lats_cap * sizeof(*l.lats));
	free(l.slow);
	free(l.discarded);
	free(l.lost_at);
	free(rec);
	hist_filter_free(&filters);
	return ret;
}
