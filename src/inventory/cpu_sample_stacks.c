/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_sample_stacks.c - the bounded table of distinct sampled stacks with
 * exact counts (struct xp_inv_stack_table, cpu_sample.h).
 *
 * Owns: hashing and equality of raw stacks (addresses + truncated bit),
 * the --max-groups bound, and the deterministic final order.
 * Invariants: n <= cap; slots is at most half full (nslots >= 2 * cap), so
 * linear probing always finds an empty slot; grouped_samples equals the
 * sum of the groups' counts; a sample is either grouped or counted in
 * ungrouped_samples, never both, never neither.
 * Allocation happens only when a new group is made (at most cap times).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_sample.h"

static uint32_t stack_hash(const uint64_t *frames, uint32_t n, bool truncated)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (truncated ? 0x9e3779b97f4a7c15ull : 0);
	uint32_t i;

	for (i = 0; i < n; i++) {
		h ^= frames[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	h ^= n;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (uint32_t)h;
}

int xp_inv_stack_table_init(struct xp_inv_stack_table *t, size_t max_groups)
{
	size_t nslots = 16;

	memset(t, 0, sizeof(*t));
	if (!max_groups)
		return -EINVAL;
	while (nslots < 2 * max_groups)
		nslots <<= 1;
	t->slots = calloc(nslots, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	t->nslots = nslots;
	t->cap = max_groups;
	return 0;
}

int xp_inv_stack_table_add(struct xp_inv_stack_table *t, const uint64_t *frames, uint32_t n,
			   bool truncated, uint64_t count)
{
	uint32_t h = stack_hash(frames, n, truncated);
	size_t mask = t->nslots - 1, i = h & mask;
	struct xp_inv_stack_group *g;

	if (!t->slots || !n) /* sorted (read-only) table, or an empty stack */
		return -EINVAL;
	for (;; i = (i + 1) & mask) {
		uint32_t s = t->slots[i];

		if (!s)
			break;
		g = &t->groups[s - 1];
		if (g->hash == h && g->nframes == n && g->truncated == truncated &&
		    memcmp(g->frames, frames, n * sizeof(*frames)) == 0) {
			g->count += count;
			t->grouped_samples += count;
			return 0;
		}
	}
	if (t->n == t->cap) {
		t->ungrouped_samples += count;
		return 1;
	}
	if (!t->groups) {
		/* all group headers at once: cap is the bound, not the rate */
		t->groups = calloc(t->cap, sizeof(*t->groups));
		if (!t->groups)
			return -ENOMEM;
	}
	g = &t->groups[t->n];
	g->frames = malloc(n * sizeof(*frames));
	if (!g->frames)
		return -ENOMEM;
	memcpy(g->frames, frames, n * sizeof(*frames));
	g->nframes = n;
	g->truncated = truncated;
	g->hash = h;
	g->count = count;
	t->grouped_samples += count;
	t->slots[i] = (uint32_t)++t->n;
	return 0;
}

static int group_cmp(const void *a, const void *b)
{
	const struct xp_inv_stack_group *x = a, *y = b;
	uint32_t i, n = x->nframes < y->nframes ? x->nframes : y->nframes;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	for (i = 0; i < n; i++)
		if (x->frames[i] != y->frames[i])
			return x->frames[i] < y->frames[i] ? -1 : 1;
	if (x->nframes != y->nframes)
		return x->nframes < y->nframes ? -1 : 1;
	return (int)x->truncated - (int)y->truncated;
}

void xp_inv_stack_table_sort(struct xp_inv_stack_table *t)
{
	if (t->n > 1)
		qsort(t->groups, t->n, sizeof(*t->groups), group_cmp);
	/* The hash slots point at the old order: drop them, the table is
	 * read-only from here on. */
	free(t->slots);
	t->slots = NULL;
	t->nslots = 0;
}

void xp_inv_stack_table_free(struct xp_inv_stack_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->groups[i].frames);
	free(t->groups);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
