/* SPDX-License-Identifier: MIT */
/*
 * folded.c - `convert --to folded`: folded stacks, one line per distinct
 * stack, outermost function first, then its weight:
 *
 *   main;loop_leaf;leaf 1234
 *
 * (the input of flamegraph.pl, inferno and speedscope).  Weights are self
 * time in ns of function_graph calls, calls with --calls, or the number
 * of stacks recorded with events (flame_source.c says which).  Lines are
 * sorted by stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "flame.h"

/* Write every stack of @f with a weight, depth first. */
int tk_flame_write_folded(struct tk_export *x, const struct tk_flame *f)
{
	struct { uint32_t node, next; } *st;
	uint32_t depth = 0, cap = 64;
	struct tk_out *o = &x->out;

	st = malloc(cap * sizeof(*st));
	if (!st)
		return tk_export_error(x, "out of memory");
	st[0].node = TK_FLAME_ROOT;
	st[0].next = 0;
	for (;;) {
		const struct tk_flame_node *n = &f->node[st[depth].node];
		uint32_t kid;

		if (st[depth].next == n->nchildren) {
			if (!depth)
				break;
			depth--;
			continue;
		}
		kid = tk_flame_kid(f, st[depth].node, st[depth].next++);
		if (depth + 2 > cap) {
			void *g = realloc(st, 2 * cap * sizeof(*st));

			if (!g) {
				free(st);
				return tk_export_error(x, "out of memory");
			}
			st = g;
			cap *= 2;
		}
		st[++depth].node = kid;
		st[depth].next = 0;
		if (!f->node[kid].self)
			continue;
		for (uint32_t i = 1; i <= depth; i++) {
			if (i > 1)
				tk_out_char(o, ';');
			tk_out_str(o, tk_flame_name(f, st[i].node));
		}
		tk_out_char(o, ' ');
		tk_out_u64(o, f->node[kid].self);
		tk_out_char(o, '\n');
	}
	free(st);
	return 0;
}

static int folded_end(struct tk_export *x)
{
	struct tk_flame *f = tk_flame_source_end(x);

	if (!f)
		return -EINVAL;
	return tk_flame_write_folded(x, f);
}

const struct tk_export_ops tk_export_folded = {
	.name = "folded",
	.summary = "folded stacks 'a;b;c N' (flamegraph.pl, inferno, speedscope)",
	.suffix = ".folded",
	.begin = tk_flame_source_begin,
	.user_event = tk_flame_source_user,
	.kernel_event = tk_flame_source_kernel,
	.end = folded_end,
	.free = tk_flame_source_free,
};
