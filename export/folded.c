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
#include "flame.h"

struct folded {
	struct tk_export *x;
	const struct tk_flame *f;
};

static int line(void *ctx, const uint32_t *path, uint32_t depth)
{
	struct folded *w = ctx;
	struct tk_out *o = &w->x->out;

	if (!depth || !w->f->node[path[depth]].self)
		return 1;
	for (uint32_t i = 1; i <= depth; i++) {
		if (i > 1)
			tk_out_char(o, ';');
		tk_out_str(o, tk_flame_name(w->f, path[i]));
	}
	tk_out_char(o, ' ');
	tk_out_u64(o, w->f->node[path[depth]].self);
	tk_out_char(o, '\n');
	return 1;
}

/* Every stack of @f with a weight, depth first: sorted. */
int tk_flame_write_folded(struct tk_export *x, const struct tk_flame *f)
{
	struct folded w = { x, f };

	if (tk_flame_walk(f, line, &w) < 0)
		return tk_export_error(x, "out of memory");
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
	.kernel_any = tk_flame_source_kernel_any,
	.end = folded_end,
	.free = tk_flame_source_free,
};
