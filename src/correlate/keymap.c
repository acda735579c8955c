/* SPDX-License-Identifier: Apache-2.0 */
/*
 * keymap.c - see keymap.h.  Linear probing over a power-of-two table kept
 * at most half full; the hash is a multiply-xorshift mix of the three
 * words (keys are small integers: pids, tids, correlation ids).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "keymap.h"

static uint64_t mix(const struct xp_key *k)
{
	uint64_t h = k->a * 0x9e3779b97f4a7c15ull;

	h ^= (k->b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= (k->c + 0x8cb92ba72f3d8dd7ull) * 0x94d049bb133111ebull;
	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return h;
}

int xp_keymap_init(struct xp_keymap *m, size_t max)
{
	size_t n = 16;

	memset(m, 0, sizeof(*m));
	if (max > UINT32_MAX / 4)
		return -ENOMEM;
	while (n < max * 2)
		n <<= 1;
	m->slots = calloc(n, sizeof(*m->slots));
	m->keys = malloc((max ? max : 1) * sizeof(*m->keys));
	if (!m->slots || !m->keys) {
		xp_keymap_free(m);
		return -ENOMEM;
	}
	m->mask = (uint32_t)(n - 1);
	m->max = (uint32_t)max;
	return 0;
}

void xp_keymap_free(struct xp_keymap *m)
{
	free(m->slots);
	free(m->keys);
	memset(m, 0, sizeof(*m));
}

static int same(const struct xp_key *x, const struct xp_key *y)
{
	return x->a == y->a && x->b == y->b && x->c == y->c;
}

uint32_t xp_keymap_put(struct xp_keymap *m, const struct xp_key *k)
{
	uint32_t i = (uint32_t)mix(k) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		uint32_t g = m->slots[i];

		if (!g)
			break;
		if (same(&m->keys[g - 1], k))
			return g - 1;
	}
	if (m->count == m->max)
		return XP_KEYMAP_NONE;
	m->keys[m->count] = *k;
	m->slots[i] = ++m->count;
	return m->count - 1;
}

uint32_t xp_keymap_get(const struct xp_keymap *m, const struct xp_key *k)
{
	uint32_t i = (uint32_t)mix(k) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		uint32_t g = m->slots[i];

		if (!g)
			return XP_KEYMAP_NONE;
		if (same(&m->keys[g - 1], k))
			return g - 1;
	}
}

int xp_keymap_grow(struct xp_keymap *m)
{
	struct xp_keymap n;
	uint32_t g;

	if (xp_keymap_init(&n, m->max ? (size_t)m->max * 2 : 16))
		return -ENOMEM;
	/* the same keys in the same order: the same groups */
	for (g = 0; g < m->count; g++)
		xp_keymap_put(&n, &m->keys[g]);
	xp_keymap_free(m);
	*m = n;
	return 0;
}
