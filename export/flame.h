/* SPDX-License-Identifier: MIT */
/*
 * flame.h - call stacks merged into one tree, the data of folded stacks
 * and flame graphs: a node per distinct path from a root (function
 * names, outermost first), each with the weight of that exact stack
 * (self time, calls or samples).  Memory grows with the distinct stacks,
 * not with the number of events.
 *
 * flame_source.c fills one from a trace's events (function_graph calls,
 * or stacks recorded with events); folded.c and svg.c write it.
 */
#ifndef TK_EXPORT_FLAME_H
#define TK_EXPORT_FLAME_H

#include <stdbool.h>
#include <stdint.h>
#include "export.h"

#define TK_FLAME_ROOT 0u

struct tk_flame_node {
	uint32_t name;   /* tk_flame_name() */
	uint32_t parent;
	uint64_t self;   /* weight of this exact stack */
	uint64_t total;  /* self and every descendant's: tk_flame_sort() */
	uint32_t first;  /* children, sorted by name: tk_flame_sort() */
	uint32_t nchildren;
};

struct tk_flame {
	struct tk_flame_node *node; /* node[0] is the root (no name) */
	uint32_t nnodes, cap;
	uint32_t *hash; /* (parent, name) -> node index, 0 empty */
	uint32_t hash_size;
	char **names; /* interned function names */
	uint32_t nnames, names_cap;
	uint32_t *name_hash; /* name -> index + 1 */
	uint32_t name_hash_size;
	uint32_t *order; /* after tk_flame_sort: children of each node */
	const char *unit; /* "ns", "calls", "samples" */
	const char *weighs; /* what a weight is, said by the SVG: "wall-clock
			     * self time", "self time on a CPU", "calls", ... */
};

int tk_flame_init(struct tk_flame *f);
void tk_flame_free(struct tk_flame *f);

/* The child of @parent named @name, made when new: its index, or 0 when
 * out of memory (0 is the root, never a child). */
uint32_t tk_flame_child(struct tk_flame *f, uint32_t parent, const char *name);

static inline void tk_flame_add(struct tk_flame *f, uint32_t node, uint64_t w)
{
	f->node[node].self += w;
}

static inline const char *tk_flame_name(const struct tk_flame *f, uint32_t node)
{
	return f->names[f->node[node].name];
}

/* Compute totals and order children by name (once, after the last add).
 * Returns 0 or -ENOMEM. */
int tk_flame_sort(struct tk_flame *f);

/* The @i-th child of @node, after tk_flame_sort(). */
static inline uint32_t tk_flame_kid(const struct tk_flame *f, uint32_t node,
				    uint32_t i)
{
	return f->order[f->node[node].first + i];
}

/* Visit the nodes of a sorted tree depth first, children in order:
 * @visit gets the path from the root (path[0], depth 0) to the node
 * (path[depth]) and returns 1 to go into its children, 0 to skip them,
 * <0 to stop (returned).  Returns 0, <0 from @visit, or -ENOMEM. */
int tk_flame_walk(const struct tk_flame *f,
		  int (*visit)(void *ctx, const uint32_t *path, uint32_t depth),
		  void *ctx);

/* folded.c: every stack of @f with a weight, "a;b;c N" per line. */
int tk_flame_write_folded(struct tk_export *x, const struct tk_flame *f);

/* Fill @f from the events of the trace (flame_source.c): the ops a
 * format built on a flame tree uses; its state is x->priv, a struct
 * tk_flame_source whose first member is the tree. */
struct tk_flame_source;
int tk_flame_source_begin(struct tk_export *x);
int tk_flame_source_user(struct tk_export *x, struct tk_stream_reader *rd);
int tk_flame_source_kernel(struct tk_export *x, struct tk_kernel_cpu *c);
int tk_flame_source_kernel_any(struct tk_export *x, struct tk_kernel_cpu *c);
/* Close what is open; the tree is then sorted.  Returns it. */
struct tk_flame *tk_flame_source_end(struct tk_export *x);
void tk_flame_source_free(struct tk_export *x);

#endif /* TK_EXPORT_FLAME_H */
