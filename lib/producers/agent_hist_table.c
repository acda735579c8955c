/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_hist_table.c - the histograms of a HISTOGRAM capture
 * (agent_hist_table.h says what it holds and who may touch it when).
 *
 * Invariants, enforced here:
 *   - ngroups <= capacity; keys[0 .. ngroups) are published, each
 *     reachable from its hash through the index, which is never more than
 *     half full (a probe always ends at an empty slot);
 *   - a slot is published (release) only after its key and hash are
 *     written, so a lock-free probe that sees the slot sees the key;
 *   - a stack is held by at most one thread: its `owned` flag goes 0 -> 1
 *     by compare-and-swap in take and back to 0 in give (the holder's
 *     exit); stacks_used counts the held ones, never more than nstacks;
 *   - nothing is allocated after xpl_hist_new().
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../internal.h"
#include "agent_table_key.h"
#include "agent_hist_table.h"

static void cell_init(struct xpl_hist_cell *c)
{
	atomic_store_explicit(&c->min_ns, UINT64_MAX, memory_order_relaxed);
}

int xpl_hist_new(uint64_t capacity, uint32_t by, uint64_t inflight, struct xpl_agent_hist **out)
{
	struct xpl_agent_hist *h;
	uint64_t nslots = 16, nopen = 16;
	pthread_mutex_t *lock;

	*out = NULL;
	if (capacity < 1 || capacity > XPROBE_AGENT_HIST_GROUPS_MAX ||
	    by >= XPROBE_AGENT_BY__COUNT || inflight < 1 || inflight > XPROBE_AGENT_INFLIGHT_MAX)
		return -EINVAL;
	while (nslots < 2 * capacity)
		nslots <<= 1;
	while (nopen < inflight)
		nopen <<= 1;
	h = calloc(1, sizeof(*h));
	lock = calloc(1, sizeof(*lock));
	if (!h || !lock) {
		free(h);
		free(lock);
		return -ENOMEM;
	}
	pthread_mutex_init(lock, NULL);
	h->lock = lock;
	h->by = by;
	h->capacity = capacity;
	h->mask = nslots - 1;
	h->nstacks = inflight;
	h->open_mask = nopen - 1;
	h->slots_bytes = nslots * sizeof(*h->slots);
	h->hashes_bytes = capacity * sizeof(*h->hashes);
	h->keys_bytes = capacity * sizeof(*h->keys);
	h->total_bytes = sizeof(*h->total);
	h->cells_bytes = capacity * sizeof(*h->cells);
	h->stacks_bytes = inflight * sizeof(*h->stacks);
	h->open_bytes = nopen * sizeof(*h->open);
	h->slots = xpl_table_map(h->slots_bytes);
	h->hashes = xpl_table_map(h->hashes_bytes);
	h->keys = xpl_table_map(h->keys_bytes);
	h->total = xpl_table_map(h->total_bytes);
	h->cells = xpl_table_map(h->cells_bytes);
	h->stacks = xpl_table_map(h->stacks_bytes);
	h->open = xpl_table_map(h->open_bytes);
	if (!h->slots || !h->hashes || !h->keys || !h->total || !h->cells || !h->stacks ||
	    !h->open) {
		xpl_hist_free(h);
		return -ENOMEM;
	}
	cell_init(h->total);
	*out = h;
	return 0;
}

void xpl_hist_free(struct xpl_agent_hist *h)
{
	if (!h)
		return;
	if (h->slots)
		munmap((void *)h->slots, h->slots_bytes);
	if (h->hashes)
		munmap(h->hashes, h->hashes_bytes);
	if (h->keys)
		munmap(h->keys, h->keys_bytes);
	if (h->total)
		munmap(h->total, h->total_bytes);
	if (h->cells)
		munmap(h->cells, h->cells_bytes);
	if (h->stacks)
		munmap(h->stacks, h->stacks_bytes);
	if (h->open)
		munmap(h->open, h->open_bytes);
	if (h->lock) {
		pthread_mutex_destroy(h->lock);
		free(h->lock);
	}
	free(h);
}

_Static_assert(sizeof(struct xpl_hist_key) == offsetof(struct xprobe_agent_hist, counters) -
						      offsetof(struct xprobe_agent_hist, key),
	       "a group key is the wire histogram's key fields");

static bool same_key(const struct xpl_hist_key *x, uint32_t kind, uint64_t key, const char *name,
		     uint32_t n, uint16_t flags)
{
	return x->kind == kind && x->key == key && x->flags == flags && x->name_len == n &&
	       !memcmp(x->name, name, n);
}

/* The slot holding the key (its group + 1 in *@s), or the empty slot a
 * probe from @hash ends at (*@s = 0). */
static uint64_t probe(struct xpl_agent_hist *h, uint64_t hash, uint32_t kind, uint64_t key,
		      const char *name, uint32_t n, uint16_t flags, uint32_t *s)
{
	uint64_t i;

	for (i = hash & h->mask;; i = (i + 1) & h->mask) {
		*s = atomic_load_explicit(&h->slots[i], memory_order_acquire);
		if (!*s)
			return i;
		if (h->hashes[*s - 1] == hash &&
		    same_key(&h->keys[*s - 1], kind, key, name, n, flags))
			return i;
	}
}

int64_t xpl_hist_group(struct xpl_agent_hist *h, uint32_t kind, uint64_t key, const char *name,
		       uint32_t n, uint16_t flags)
{
	struct xpl_hist_key *x;
	uint64_t hash, i, ng;
	uint32_t s;

	switch (h->by) {
	case XPROBE_AGENT_BY_NONE:
		return XPL_HIST_NO_GROUP;
	case XPROBE_AGENT_BY_NAME:
		key = 0;
		if (NEVER(n > XPROBE_NAME_MAX))
			n = XPROBE_NAME_MAX;
		break;
	default: /* thread, stream, device: the number only */
		name = "";
		n = 0;
		flags = 0;
		break;
	}
	hash = xpl_key_mix(xpl_key_mix(0, kind), key ^ ((uint64_t)flags << 48 | n));
	hash = xpl_key_hash_bytes(hash, name, n);
	i = probe(h, hash, kind, key, name, n, flags, &s);
	if (likely(s))
		return s - 1;
	pthread_mutex_lock(h->lock);
	i = probe(h, hash, kind, key, name, n, flags, &s); /* another thread may have won */
	if (s) {
		pthread_mutex_unlock(h->lock);
		return s - 1;
	}
	ng = atomic_load_explicit(&h->ngroups, memory_order_relaxed);
	if (ng >= h->capacity) {
		pthread_mutex_unlock(h->lock);
		return XPL_HIST_FULL;
	}
	x = &h->keys[ng];
	x->key = key;
	x->kind = kind;
	x->flags = flags;
	x->name_len = (uint16_t)n;
	memcpy(x->name, name, n); /* the rest of the fresh page is zero */
	h->hashes[ng] = hash;
	cell_init(&h->cells[ng]);
	atomic_store_explicit(&h->ngroups, ng + 1, memory_order_release);
	atomic_store_explicit(&h->slots[i], (uint32_t)(ng + 1), memory_order_release);
	pthread_mutex_unlock(h->lock);
	return (int64_t)ng;
}

/*
 * One pair into @c.  The extremes first, the sum, then the bucket with a
 * release store: a reader that sees the bucket (acquire, cell_merge) sees
 * extremes that include the pair, so min and max always lie within the
 * buckets it read (the CLI's decoder checks exactly that).  On x86 the
 * release costs nothing over the relaxed add.
 */
static inline void cell_add(struct xpl_hist_cell *c, uint64_t ns)
{
	uint64_t v;

	v = atomic_load_explicit(&c->min_ns, memory_order_relaxed);
	while (ns < v && !atomic_compare_exchange_weak_explicit(&c->min_ns, &v, ns,
								memory_order_relaxed,
								memory_order_relaxed))
		;
	v = atomic_load_explicit(&c->max_ns, memory_order_relaxed);
	while (ns > v && !atomic_compare_exchange_weak_explicit(&c->max_ns, &v, ns,
								memory_order_relaxed,
								memory_order_relaxed))
		;
	atomic_fetch_add_explicit(&c->sum_ns, ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->buckets[xprobe_lh_bucket_of(ns)], 1, memory_order_release);
}

void xpl_hist_add(struct xpl_agent_hist *h, int64_t g, uint64_t ns)
{
	/* a pair with a group is counted there only: the total is the groups'
	 * merge plus this cell (xpl_hist_copy), half the atomics per pair */
	if (g >= 0 && ALWAYS((uint64_t)g < h->capacity)) {
		cell_add(&h->cells[g], ns);
		return;
	}
	cell_add(h->total, ns);
	if (g == XPL_HIST_FULL)
		xpl_hist_count(h, XPROBE_AGENT_HC_GROUP_OVERFLOW);
}

uint32_t xpl_hist_stack_take(struct xpl_agent_hist *h)
{
	uint64_t start;

	if (atomic_load_explicit(&h->stacks_used, memory_order_relaxed) >= h->nstacks)
		goto full;
	/* a thread's first push only: a scan from a moving start finds a
	 * free stack at once unless nearly all are held */
	start = atomic_fetch_add_explicit(&h->stacks_next, 1, memory_order_relaxed);
	for (uint64_t n = 0; n < h->nstacks; n++) {
		uint64_t i = (start + n) % h->nstacks;
		uint32_t free_flag = 0;

		if (atomic_load_explicit(&h->stacks[i].owned, memory_order_relaxed))
			continue;
		if (!atomic_compare_exchange_strong_explicit(&h->stacks[i].owned, &free_flag, 1,
							     memory_order_acquire,
							     memory_order_relaxed))
			continue;
		atomic_fetch_add_explicit(&h->stacks_used, 1, memory_order_relaxed);
		h->stacks[i].api_depth = 0;
		return (uint32_t)i + 1;
	}
full:
	xpl_hist_count(h, XPROBE_AGENT_HC_INFLIGHT_OVERFLOW);
	return 0;
}

void xpl_hist_stack_give(struct xpl_agent_hist *h, uint32_t k)
{
	if (!ALWAYS(k >= 1 && k <= h->nstacks))
		return;
	atomic_store_explicit(&h->stacks[k - 1].owned, 0, memory_order_release);
	atomic_fetch_sub_explicit(&h->stacks_used, 1, memory_order_relaxed);
}

bool xpl_hist_open_put(struct xpl_agent_hist *h, uint64_t seq, uint64_t ts, int64_t g)
{
	struct xpl_hist_open *o = &h->open[seq & h->open_mask];
	uint64_t free_seq = 0;

	if (!atomic_compare_exchange_strong_explicit(&o->seq, &free_seq, UINT64_MAX,
						     memory_order_acquire, memory_order_relaxed)) {
		xpl_hist_count(h, XPROBE_AGENT_HC_INFLIGHT_OVERFLOW);
		return false;
	}
	o->ts = ts;
	o->grp = g;
	atomic_store_explicit(&o->seq, seq, memory_order_release);
	return true;
}

bool xpl_hist_open_take(struct xpl_agent_hist *h, uint64_t seq, uint64_t *ts, int64_t *g)
{
	struct xpl_hist_open *o = &h->open[seq & h->open_mask];
	uint64_t want = seq;

	if (!atomic_compare_exchange_strong_explicit(&o->seq, &want, UINT64_MAX,
						     memory_order_acquire, memory_order_relaxed))
		return false;
	*ts = o->ts;
	*g = o->grp;
	atomic_store_explicit(&o->seq, 0, memory_order_release);
	return true;
}

uint64_t xpl_hist_count_all(const struct xpl_agent_hist *h)
{
	return 1 + atomic_load_explicit(&h->ngroups, memory_order_acquire);
}

/*
 * Add @c into @x (zeroed by the caller before the first cell): buckets
 * first (acquire), then the extremes and the sum, so the extremes cover
 * the buckets read (cell_add's order).  The count is the buckets' sum.
 */
static void cell_merge(const struct xpl_hist_cell *c, struct xprobe_agent_hist *x)
{
	uint64_t n = 0, v, mn, mx;

	for (uint32_t b = 0; b < XPROBE_LH_BUCKETS; b++) {
		v = atomic_load_explicit(&c->buckets[b], memory_order_acquire);
		x->buckets[b] += v;
		n += v;
	}
	x->sum_ns += atomic_load_explicit(&c->sum_ns, memory_order_relaxed);
	if (!n)
		return;
	mn = atomic_load_explicit(&c->min_ns, memory_order_relaxed);
	mx = atomic_load_explicit(&c->max_ns, memory_order_relaxed);
	x->min_ns = x->count && x->min_ns < mn ? x->min_ns : mn;
	x->max_ns = x->count && x->max_ns > mx ? x->max_ns : mx;
	x->count += n;
}

uint64_t xpl_hist_pairs(const struct xpl_agent_hist *h)
{
	uint64_t n = 0, ng = atomic_load_explicit(&h->ngroups, memory_order_acquire);

	for (uint32_t b = 0; b < XPROBE_LH_BUCKETS; b++) {
		n += atomic_load_explicit(&h->total->buckets[b], memory_order_relaxed);
		for (uint64_t g = 0; g < ng; g++)
			n += atomic_load_explicit(&h->cells[g].buckets[b], memory_order_relaxed);
	}
	return n;
}

/* Process ranges open now (the total's OPEN counter). */
static uint64_t open_now(const struct xpl_agent_hist *h)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i <= h->open_mask; i++) {
		uint64_t s = atomic_load_explicit(&h->open[i].seq, memory_order_relaxed);

		n += s != 0 && s != UINT64_MAX;
	}
	return n;
}

uint64_t xpl_hist_copy(const struct xpl_agent_hist *h, uint64_t from, uint64_t count,
		       struct xprobe_agent_hist *out)
{
	uint64_t all = xpl_hist_count_all(h), i;

	if (from >= all)
		return 0;
	if (count > all - from)
		count = all - from;
	for (i = 0; i < count; i++) {
		struct xprobe_agent_hist *x = &out[i];
		uint64_t k = from + i;

		memset(x, 0, sizeof(*x));
		if (k == 0) {
			/* every pair: the ungrouped ones and each group's */
			uint64_t ng = all - 1;

			x->flags = XPROBE_AGENT_HIST_F_TOTAL;
			cell_merge(h->total, x);
			for (uint64_t g = 0; g < ng; g++)
				cell_merge(&h->cells[g], x);
			for (int c = 0; c < XPROBE_AGENT_HC__COUNT; c++)
				x->counters[c] =
					atomic_load_explicit(&h->counters[c], memory_order_relaxed);
			x->counters[XPROBE_AGENT_HC_OPEN] = open_now(h);
			x->counters[XPROBE_AGENT_HC_STACKS] =
				atomic_load_explicit(&h->stacks_used, memory_order_relaxed);
			continue;
		}
		memcpy(&x->key, &h->keys[k - 1], sizeof(h->keys[k - 1]));
		cell_merge(&h->cells[k - 1], x);
	}
	return count;
}
