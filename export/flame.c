/* SPDX-License-Identifier: MIT */
/*
 * flame.c - the tree of merged call stacks (flame.h).
 *
 * Nodes live in one array; a hash table keyed by (parent, name id) finds
 * a child, another interns names.  tk_flame_sort() sums totals bottom-up
 * (children always come after their parent in the array) and lists each
 * node's children sorted by name, as folded stacks are conventionally
 * sorted and flame graphs ordered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "flame.h"

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static uint32_t hash_pair(uint32_t parent, uint32_t name)
{
	return (uint32_t)(((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull >> 32);
}

int tk_flame_init(struct tk_flame *f)
{
	memset(f, 0, sizeof(*f));
	f->cap = 1024;
	f->node = calloc(f->cap, sizeof(*f->node));
	f->hash_size = 2048;
	f->hash = calloc(f->hash_size, sizeof(*f->hash));
	f->name_hash_size = 1024;
	f->name_hash = calloc(f->name_hash_size, sizeof(*f->name_hash));
	if (!f->node || !f->hash || !f->name_hash) {
		tk_flame_free(f);
		return -ENOMEM;
	}
	f->nnodes = 1;
	return 0;
}

void tk_flame_free(struct tk_flame *f)
{
	for (uint32_t i = 0; i < f->nnames; i++)
		free(f->names[i]);
	free(f->names);
	free(f->name_hash);
	free(f->node);
	free(f->hash);
	free(f->order);
	memset(f, 0, sizeof(*f));
}

/* The id of @name, interned when new; ~0u when out of memory. */
static uint32_t intern(struct tk_flame *f, const char *name)
{
	uint32_t mask = f->name_hash_size - 1, h = hash_str(name) & mask;

	for (;; h = (h + 1) & mask) {
		uint32_t i = f->name_hash[h];

		if (!i)
			break;
		if (!strcmp(f->names[i - 1], name))
			return i - 1;
	}
	if (f->nnames == f->names_cap) {
		uint32_t cap = f->names_cap ? 2 * f->names_cap : 256;
		char **g = realloc(f->names, cap * sizeof(*g));

		if (!g)
			return ~0u;
		f->names = g;
		f->names_cap = cap;
	}
	f->names[f->nnames] = strdup(name);
	if (!f->names[f->nnames])
		return ~0u;
	f->name_hash[h] = ++f->nnames;
	if (2 * f->nnames > f->name_hash_size) {
		uint32_t size = 2 * f->name_hash_size;
		uint32_t *t = calloc(size, sizeof(*t));

		if (!t)
			return ~0u;
		for (uint32_t i = 0; i < f->nnames; i++) {
			uint32_t k = hash_str(f->names[i]) & (size - 1);

			while (t[k])
				k = (k + 1) & (size - 1);
			t[k] = i + 1;
		}
		free(f->name_hash);
		f->name_hash = t;
		f->name_hash_size = size;
	}
	return f->nnames - 1;
}

static int grow_hash(struct tk_flame *f)
{
	uint32_t size = 2 * f->hash_size;
	uint32_t *t = calloc(size, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (uint32_t i = 1; i < f->nnodes; i++) {
		uint32_t k = hash_pair(f->node[i].parent, f->node[i].name) & (size - 1);

		while (t[k])
			k = (k + 1) & (size - 1);
		t[k] = i;
	}
	free(f->hash);
	f->hash = t;
	f->hash_size = size;
	return 0;
}

uint32_t tk_flame_child(struct tk_flame *f, uint32_t parent, const char *name)
{
	uint32_t id = intern(f, name), mask = f->hash_size - 1, h;

	if (id == ~0u)
		return 0;
	for (h = hash_pair(parent, id) & mask;; h = (h + 1) & mask) {
		uint32_t i = f->hash[h];

		if (!i)
			break;
		if (f->node[i].parent == parent && f->node[i].name == id)
			return i;
	}
	if (f->nnodes == f->cap) {
		uint32_t cap = 2 * f->cap;
		struct tk_flame_node *g = realloc(f->node, cap * sizeof(*g));

		if (!g)
			return 0;
		f->node = g;
		f->cap = cap;
	}
	f->node[f->nnodes] = (struct tk_flame_node){ .name = id, .parent = parent };
	f->hash[h] = f->nnodes++;
	if (2 * f->nnodes > f->hash_size && grow_hash(f) < 0)
		return 0;
	return f->nnodes - 1;
}

int tk_flame_walk(const struct tk_flame *f,
		  int (*visit)(void *ctx, const uint32_t *path, uint32_t depth),
		  void *ctx)
{
	uint32_t *path, *next, depth = 0, cap = 64;
	int ret = visit(ctx, (uint32_t[]){ TK_FLAME_ROOT }, 0);

	if (ret <= 0)
		return ret;
	path = malloc(cap * sizeof(*path));
	next = malloc(cap * sizeof(*next));
	if (!path || !next) {
		ret = -ENOMEM;
		goto out;
	}
	path[0] = TK_FLAME_ROOT;
	next[0] = 0;
	for (;;) {
		uint32_t node = path[depth];

		if (next[depth] == f->node[node].nchildren) {
			if (!depth)
				break;
			depth--;
			continue;
		}
		if (depth + 2 > cap) {
			uint32_t *p = realloc(path, 2 * cap * sizeof(*p));
			uint32_t *n = p ? realloc(next, 2 * cap * sizeof(*n)) : NULL;

			if (p)
				path = p;
			if (!n) {
				ret = -ENOMEM;
				goto out;
			}
			next = n;
			cap *= 2;
		}
		path[depth + 1] = tk_flame_kid(f, node, next[depth]++);
		ret = visit(ctx, path, depth + 1);
		if (ret < 0)
			goto out;
		if (ret > 0)
			next[++depth] = 0;
	}
	ret = 0;
out:
	free(path);
	free(next);
	return ret;
}

static const struct tk_flame *sort_flame;

static int by_name(const void *a, const void *b)
{
	const struct tk_flame *f = sort_flame;

	return strcmp(f->names[f->node[*(const uint32_t *)a].name],
		      f->names[f->node[*(const uint32_t *)b].name]);
}

int tk_flame_sort(struct tk_flame *f)
{
	uint32_t *fill;

	free(f->order);
	f->order = calloc(f->nnodes + 1, sizeof(*f->order));
	fill = calloc(f->nnodes + 1, sizeof(*fill));
	if (!f->order || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < f->nnodes; i++) {
		f->node[i].total = f->node[i].self;
		f->node[i].nchildren = 0;
	}
	/* children come after their parent: sum from the end */
	for (uint32_t i = f->nnodes - 1; i > 0; i--) {
		f->node[f->node[i].parent].total += f->node[i].total;
		f->node[f->node[i].parent].nchildren++;
	}
	for (uint32_t i = 0, at = 0; i < f->nnodes; i++) {
		f->node[i].first = at;
		at += f->node[i].nchildren;
	}
	for (uint32_t i = 1; i < f->nnodes; i++) {
		uint32_t p = f->node[i].parent;

		f->order[f->node[p].first + fill[p]++] = i;
	}
	free(fill);
	sort_flame = f;
	for (uint32_t i = 0; i < f->nnodes; i++)
		if (f->node[i].nchildren > 1)
			qsort(f->order + f->node[i].first, f->node[i].nchildren,
			      sizeof(uint32_t), by_name);
	return 0;
}
