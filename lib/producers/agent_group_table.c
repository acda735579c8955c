/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_group_table.c - the group table of an AGGREGATE capture
 * (agent_group_table.h says what it holds and who may touch it when).
 *
 * Invariants, enforced here:
 *   - ngroups <= capacity; groups[0 .. ngroups) are in use, each with
 *     count >= 1 and min_ns <= total_ns / count <= max_ns;
 *   - every group in use is reachable from its key's hash through the
 *     index, and the index is never more than half full (nslots >=
 *     2 x capacity), so a probe always ends at an empty slot;
 *   - nothing is allocated after xpl_agg_new().
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../internal.h"
#include "agent_table_key.h"
#include "agent_group_table.h"

struct xpl_agent_agg {
	pthread_mutex_t lock;
	uint64_t capacity;
	uint64_t mask; /* nslots - 1 */
	uint32_t *slots; /* group number + 1, 0 = empty */
	uint64_t *hashes; /* [capacity] */
	struct xprobe_agent_group *groups; /* [capacity] */
	size_t slots_bytes, hashes_bytes, groups_bytes;
	_Atomic uint64_t ngroups;
	_Atomic uint64_t grouped;
	_Atomic bool full;
};

int xpl_agg_new(uint64_t capacity, struct xpl_agent_agg **out)
{
	struct xpl_agent_agg *g;
	uint64_t nslots = 16;

	*out = NULL;
	if (capacity < 1 || capacity > XPROBE_AGENT_CAPACITY_MAX)
		return -EINVAL;
	while (nslots < 2 * capacity)
		nslots <<= 1;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	pthread_mutex_init(&g->lock, NULL);
	g->capacity = capacity;
	g->mask = nslots - 1;
	g->slots_bytes = nslots * sizeof(*g->slots);
	g->hashes_bytes = capacity * sizeof(*g->hashes);
	g->groups_bytes = capacity * sizeof(*g->groups);
	g->slots = xpl_table_map(g->slots_bytes);
	g->hashes = xpl_table_map(g->hashes_bytes);
	g->groups = xpl_table_map(g->groups_bytes);
	if (!g->slots || !g->hashes || !g->groups) {
		xpl_agg_free(g);
		return -ENOMEM;
	}
	*out = g;
	return 0;
}

void xpl_agg_free(struct xpl_agent_agg *g)
{
	if (!g)
		return;
	if (g->slots)
		munmap(g->slots, g->slots_bytes);
	if (g->hashes)
		munmap(g->hashes, g->hashes_bytes);
	if (g->groups)
		munmap(g->groups, g->groups_bytes);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

void xpl_agg_lock(struct xpl_agent_agg *g)
{
	pthread_mutex_lock(&g->lock);
}

void xpl_agg_unlock(struct xpl_agent_agg *g)
{
	pthread_mutex_unlock(&g->lock);
}

static bool same_key(const struct xprobe_agent_group *x, uint32_t kind, uint32_t device,
		     uint32_t memcpy_kind, uint16_t flags, const char *name, uint32_t n)
{
	return x->kind == kind && x->device == device && x->memcpy_kind == memcpy_kind &&
	       x->flags == flags && x->name_len == n && !memcmp(x->name, name, n);
}

/* Writers hold the lock; readers of the counters may not: single-writer
 * increments, relaxed. */
static inline void inc(_Atomic uint64_t *v)
{
	atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

void xpl_agg_bump(struct xpl_agent_agg *g, int64_t idx, uint64_t dur_ns, uint64_t bytes)
{
	struct xprobe_agent_group *x;

	if (NEVER(idx < 0 || (uint64_t)idx >= xpl_agg_groups(g)))
		return;
	x = &g->groups[idx];
	x->count++;
	x->total_ns += dur_ns;
	if (dur_ns < x->min_ns)
		x->min_ns = dur_ns;
	if (dur_ns > x->max_ns)
		x->max_ns = dur_ns;
	x->bytes += bytes;
	inc(&g->grouped);
}

int64_t xpl_agg_add(struct xpl_agent_agg *g, uint32_t kind, uint32_t device, uint32_t memcpy_kind,
		    uint16_t flags, const char *name, uint32_t n, uint64_t dur_ns, uint64_t bytes)
{
	uint64_t h, i, ng;
	struct xprobe_agent_group *x;

	if (NEVER(n > XPROBE_NAME_MAX))
		n = XPROBE_NAME_MAX;
	h = xpl_key_mix(xpl_key_mix(0, (uint64_t)kind << 32 | device),
		(uint64_t)memcpy_kind << 32 | (uint64_t)flags << 16 | n);
	h = xpl_key_hash_bytes(h, name, n);
	for (i = h & g->mask;; i = (i + 1) & g->mask) {
		uint32_t s = g->slots[i];

		if (!s)
			break;
		if (g->hashes[s - 1] == h &&
		    same_key(&g->groups[s - 1], kind, device, memcpy_kind, flags, name, n)) {
			xpl_agg_bump(g, s - 1, dur_ns, bytes);
			return s - 1;
		}
	}
	ng = atomic_load_explicit(&g->ngroups, memory_order_relaxed);
	if (ng >= g->capacity) {
		atomic_store_explicit(&g->full, true, memory_order_relaxed);
		return -ENOSPC;
	}
	x = &g->groups[ng];
	x->count = 1;
	x->total_ns = x->min_ns = x->max_ns = dur_ns;
	x->bytes = bytes;
	x->kind = kind;
	x->device = device;
	x->memcpy_kind = memcpy_kind;
	x->flags = flags;
	x->name_len = (uint16_t)n;
	memcpy(x->name, name, n); /* the rest of the fresh page is zero */
	g->hashes[ng] = h;
	g->slots[i] = (uint32_t)(ng + 1);
	atomic_store_explicit(&g->ngroups, ng + 1, memory_order_release);
	inc(&g->grouped);
	return (int64_t)ng;
}

uint64_t xpl_agg_groups(const struct xpl_agent_agg *g)
{
	return atomic_load_explicit(&g->ngroups, memory_order_acquire);
}

uint64_t xpl_agg_grouped(const struct xpl_agent_agg *g)
{
	return atomic_load_explicit(&g->grouped, memory_order_relaxed);
}

bool xpl_agg_full(const struct xpl_agent_agg *g)
{
	return atomic_load_explicit(&g->full, memory_order_relaxed);
}

uint64_t xpl_agg_copy(const struct xpl_agent_agg *g, uint64_t from, uint64_t count,
		      struct xprobe_agent_group *out)
{
	uint64_t ng = xpl_agg_groups(g);

	if (from >= ng)
		return 0;
	if (count > ng - from)
		count = ng - from;
	memcpy(out, &g->groups[from], count * sizeof(*out));
	return count;
}
