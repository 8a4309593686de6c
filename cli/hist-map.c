/* SPDX-License-Identifier: MIT */
/*
 * hist-map.c - fixed-size key records to dense indexes (hist.h), for the
 * histogram's entries and the latency's pending starts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"

static uint64_t hash_key(const unsigned char *k, size_t size)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < size; i += 8) {
		uint64_t w;

		memcpy(&w, k + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static int map_grow(struct hist_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	unsigned char *keys = realloc(m->keys, cap * m->keysize + 8);

	if (!keys)
		return -ENOMEM;
	m->keys = keys;
	free(m->slots);
	m->nslots = cap * 2;
	m->slots = calloc(m->nslots, sizeof(*m->slots));
	if (!m->slots)
		return -ENOMEM;
	m->cap = cap;
	for (size_t i = 0; i < m->n; i++) {
		size_t s = hash_key(m->keys + i * m->keysize, m->keysize) & (m->nslots - 1);

		while (m->slots[s])
			s = (s + 1) & (m->nslots - 1);
		m->slots[s] = (uint32_t)(i + 1);
	}
	return 0;
}

long hist_map_get(struct hist_map *m, const unsigned char *k, bool *added)
{
	size_t s;

	*added = false;
	if (m->n + 1 > m->cap && (m->n >= UINT32_MAX / 4 || map_grow(m) < 0))
		return -1;
	for (s = hash_key(k, m->keysize) & (m->nslots - 1); m->slots[s];
	     s = (s + 1) & (m->nslots - 1)) {
		size_t i = m->slots[s] - 1;

		if (!memcmp(m->keys + i * m->keysize, k, m->keysize))
			return (long)i;
	}
	memcpy(m->keys + m->n * m->keysize, k, m->keysize);
	m->slots[s] = (uint32_t)(m->n + 1);
	*added = true;
	return (long)m->n++;
}

long hist_map_find(const struct hist_map *m, const unsigned char *k)
{
	if (!m->n)
		return -1;
	for (size_t s = hash_key(k, m->keysize) & (m->nslots - 1); m->slots[s];
	     s = (s + 1) & (m->nslots - 1)) {
		size_t i = m->slots[s] - 1;

		if (!memcmp(m->keys + i * m->keysize, k, m->keysize))
			return (long)i;
	}
	return -1;
}

void hist_map_free(struct hist_map *m)
{
	free(m->keys);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
