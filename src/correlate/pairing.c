/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pairing.c - the pairing rules of the five policies (docs/correlation.md,
 * "Pairing rules and counters"; plus the CPython GC lifecycle, which is
 * the syscall one).
 *
 * Inputs are ranks into the start and end arrays, each sorted by
 * (timestamp, capture index); outputs are rank pairs in whatever order the
 * rule produces them (correlate.c orders them by start rank).  Every start
 * and every end rank is used by at most one pair, so min(starts, ends)
 * pairs always fit.
 *
 * Cost: O(n) hash-map passes for the keyed rules (CUPTI key, lifecycles,
 * stacks, streams) with counting sorts for grouping, O(n) for first-after,
 * O(n log n) for nearest (binary search plus union-find "next live bucket"
 * links standing in for an ordered map with deletion).  Allocation happens
 * once per pass, sized by the selected counts, never per event.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/search.h"
#include "keymap.h"
#include "pairing.h"

/* No event index (pending/head/below slots).  Group ids use the keymap's
 * own XP_KEYMAP_NONE ("no group": keyless, or the map was full). */
#define NO_INDEX UINT32_MAX

static inline const struct xp_event *ev(const struct xp_pairing *p, const struct xp_side *sd,
					size_t r)
{
	return &p->c->events[sd->idx[r]];
}

static inline void add_pair(struct xp_pairing *p, size_t s, size_t e, uint64_t latency)
{
	struct xp_rpair *x = &p->pairs[p->npairs++];

	x->s = (uint32_t)s;
	x->e = (uint32_t)e;
	x->latency = latency;
}

/* The sample bound is reached (never with samples == 0). */
static inline bool full(const struct xp_pairing *p)
{
	return p->samples && p->npairs >= p->samples;
}

static void *alloc_n(size_t n, size_t size)
{
	return malloc((n ? n : 1) * size);
}

/* Next timeline element: by timestamp, starts before ends on ties, rank
 * order (= capture order) within a side. */
static inline bool next_is_start(const struct xp_pairing *p, size_t i, size_t j)
{
	return i < p->s.n && (j == p->e.n || p->s.ts[i] <= p->e.ts[j]);
}

/* --- grouping by key (exact CUPTI key, stream order) --------------------- */

typedef bool (*key_fn)(const struct xp_event *e, struct xp_key *k);

struct groups {
	struct xp_keymap map;
	uint32_t n; /* groups */
	uint32_t *soff, *eoff; /* n + 1 offsets into sr / er */
	uint32_t *sr, *er; /* ranks by group, timestamp order within one */
};

static void groups_free(struct groups *g)
{
	xp_keymap_free(&g->map);
	free(g->soff);
	free(g->eoff);
	free(g->sr);
	free(g->er);
	memset(g, 0, sizeof(*g));
}

/* Counting sort of one side's ranks by group (stable, so timestamp order
 * survives within a group).  Keyless ranks (gid XP_KEYMAP_NONE) go to *keyless. */
static int bucket_side(const struct xp_side *sd, const uint32_t *gid, uint32_t ngroups,
		       uint32_t **off_out, uint32_t **ranks_out, uint64_t *keyless)
{
	uint32_t *off = calloc((size_t)ngroups + 1, sizeof(*off));
	uint32_t *cur = alloc_n((size_t)ngroups + 1, sizeof(*cur));
	uint32_t *ranks = alloc_n(sd->n, sizeof(*ranks));
	size_t r;

	if (!off || !cur || !ranks) {
		free(off);
		free(cur);
		free(ranks);
		return -ENOMEM;
	}
	for (r = 0; r < sd->n; r++) {
		if (gid[r] == XP_KEYMAP_NONE)
			(*keyless)++;
		else
			off[gid[r] + 1]++;
	}
	for (r = 0; r < ngroups; r++)
		off[r + 1] += off[r];
	memcpy(cur, off, ((size_t)ngroups + 1) * sizeof(*cur));
	for (r = 0; r < sd->n; r++)
		if (gid[r] != XP_KEYMAP_NONE)
			ranks[cur[gid[r]]++] = (uint32_t)r;
	free(cur);
	*off_out = off;
	*ranks_out = ranks;
	return 0;
}

static int group_by_key(struct xp_pairing *p, key_fn key, struct groups *g)
{
	uint32_t *sgid, *egid;
	size_t r;
	int rc = -ENOMEM;

	memset(g, 0, sizeof(*g));
	if (xp_keymap_init(&g->map, p->s.n + p->e.n))
		return -ENOMEM;
	sgid = alloc_n(p->s.n, sizeof(*sgid));
	egid = alloc_n(p->e.n, sizeof(*egid));
	if (!sgid || !egid)
		goto out;
	for (r = 0; r < p->s.n; r++) {
		struct xp_key k;

		sgid[r] = key(ev(p, &p->s, r), &k) ? xp_keymap_put(&g->map, &k) : XP_KEYMAP_NONE;
	}
	for (r = 0; r < p->e.n; r++) {
		struct xp_key k;

		egid[r] = key(ev(p, &p->e, r), &k) ? xp_keymap_put(&g->map, &k) : XP_KEYMAP_NONE;
	}
	g->n = g->map.count;
	if (bucket_side(&p->s, sgid, g->n, &g->soff, &g->sr, &p->unmatched_start) ||
	    bucket_side(&p->e, egid, g->n, &g->eoff, &g->er, &p->unmatched_end))
		goto out;
	rc = 0;
out:
	free(sgid);
	free(egid);
	if (rc)
		groups_free(g);
	return rc;
}

/* --- exact: CUPTI correlation key ---------------------------------------- */

/*
 * NVTX (pid, range_kind, range_id) when the event has an NVTX part, else
 * CUDA (pid, context_id, correlation_id) when it has a correlation id, as
 * the contract keys it: the Agent records the API call's context (CUPTI's
 * contextUid, the id its activity records name).  When an event of the
 * capture has a correlation id but no context (an Event document without
 * one, a capture of an older Agent), every event is keyed by (pid,
 * correlation_id) instead and p->without_context counts them, which the
 * result says (a warning): a key with and without the context could never
 * meet.
 */
bool xp_pair_key_cupti(const struct xp_event *e, struct xp_key *k, bool context)
{
	if (e->flags & XP_EVF_NVTX) {
		k->a = e->pid;
		k->b = e->nvtx.range_id;
		k->c = (1ull << 32) | e->nvtx.range_kind;
		return true;
	}
	if ((e->flags & XP_EVF_CUDA) && (e->cuda.flags & XP_CUDAF_CORRELATION_ID)) {
		k->a = e->pid;
		k->b = e->cuda.correlation_id;
		k->c = (2ull << 32) | (context ? e->cuda.context_id : 0);
		return true;
	}
	return false;
}

static bool cupti_key(const struct xp_event *e, struct xp_key *k)
{
	return xp_pair_key_cupti(e, k, true);
}

static bool cupti_key_no_context(const struct xp_event *e, struct xp_key *k)
{
	return xp_pair_key_cupti(e, k, false);
}

bool xp_pair_without_context(const struct xp_event *e)
{
	return !(e->flags & XP_EVF_NVTX) && (e->flags & XP_EVF_CUDA) &&
	       (e->cuda.flags & XP_CUDAF_CORRELATION_ID) && !(e->cuda.flags & XP_CUDAF_CONTEXT_ID);
}

static uint64_t count_without_context(const struct xp_pairing *p, const struct xp_side *sd)
{
	uint64_t n = 0;

	for (size_t i = 0; i < sd->n; i++)
		n += xp_pair_without_context(ev(p, sd, i));
	return n;
}

/*
 * Both endpoints GPU activity (kernel start -> kernel end, ...): the key
 * also holds where the activity ran, (pid, correlation_id, device_id,
 * context_id, stream_id), ids CUPTI did not give counting as their own
 * value.  One launch (a graph, a cooperative launch) may start several
 * activities under one correlation id on several streams, which overlap;
 * on one stream they run one after another, so zipping a key's starts and
 * ends in timestamp order pairs each activity's start with its own end.
 */
bool xp_pair_key_activity(const struct xp_event *e, struct xp_key *k)
{
	const struct xp_cuda_part *c = &e->cuda;
	uint64_t have = c->flags & (XP_CUDAF_DEVICE_ID | XP_CUDAF_CONTEXT_ID | XP_CUDAF_STREAM_ID);

	if (!(e->flags & XP_EVF_CUDA) || !(c->flags & XP_CUDAF_CORRELATION_ID))
		return false;
	k->a = ((uint64_t)e->pid << 32) | c->correlation_id;
	k->b = (have << 56) | ((uint64_t)(c->flags & XP_CUDAF_DEVICE_ID ? c->device_id : 0) << 32) |
	       (c->flags & XP_CUDAF_CONTEXT_ID ? c->context_id : 0);
	k->c = c->flags & XP_CUDAF_STREAM_ID ? c->stream_id : 0;
	return true;
}

/*
 * Per key: no end -> every start unmatched; no start -> every end
 * unmatched; different counts -> max(starts, ends) ambiguous (both groups
 * discarded); same counts -> zip in timestamp order, a zipped end before its
 * start counting one unmatched start and one unmatched end.
 */
int xp_pair_exact_key(struct xp_pairing *p)
{
	key_fn key = cupti_key;
	struct groups g;
	uint32_t i, k;

	if (p->activity_key) {
		key = xp_pair_key_activity;
	} else {
		p->without_context = count_without_context(p, &p->s) +
				     count_without_context(p, &p->e);
		if (p->without_context)
			key = cupti_key_no_context;
	}
	if (group_by_key(p, key, &g))
		return -ENOMEM;
	for (i = 0; i < g.n; i++) {
		uint32_t ns = g.soff[i + 1] - g.soff[i], ne = g.eoff[i + 1] - g.eoff[i];

		if (!ne) {
			p->unmatched_start += ns;
			continue;
		}
		if (!ns) {
			p->unmatched_end += ne;
			continue;
		}
		if (ns != ne) {
			p->ambiguous += ns > ne ? ns : ne;
			continue;
		}
		for (k = 0; k < ns; k++) {
			uint32_t s = g.sr[g.soff[i] + k], e = g.er[g.eoff[i] + k];

			if (p->e.ts[e] >= p->s.ts[s]) {
				add_pair(p, s, e, p->e.ts[e] - p->s.ts[s]);
			} else {
				p->unmatched_start++;
				p->unmatched_end++;
			}
		}
	}
	groups_free(&g);
	return 0;
}

/* --- exact: per-key lifecycle (syscalls, CPython GC, NVTX ranges) -------- */

bool xp_pair_key_life(const struct xp_event *e, enum xp_lifecycle_key kind, struct xp_key *k)
{
	if (kind == XP_LIFE_TID) {
		bool has = e->flags & XP_EVF_START_TIME;

		k->a = ((uint64_t)e->pid << 32) | e->tid;
		k->b = has ? e->process_start_time : 0;
		k->c = has;
		return true;
	}
	if (!(e->flags & XP_EVF_NVTX))
		return false;
	k->a = e->pid;
	k->b = e->nvtx.range_id;
	k->c = e->nvtx.range_kind;
	return true;
}

/*
 * Walk the merged timeline.  A start becomes its key's pending start (a
 * pending one it replaces counts ambiguous and is dropped); an end closes
 * its key's pending start (an end with none is unmatched).  Pending starts
 * left at the end are unmatched; keyless events are unmatched on their side.
 */
int xp_pair_lifecycle(struct xp_pairing *p, enum xp_lifecycle_key kind)
{
	struct xp_keymap map;
	uint32_t *pending;
	size_t i = 0, j = 0, g;

	if (xp_keymap_init(&map, p->s.n))
		return -ENOMEM;
	pending = alloc_n(p->s.n, sizeof(*pending));
	if (!pending) {
		xp_keymap_free(&map);
		return -ENOMEM;
	}
	while (i < p->s.n || j < p->e.n) {
		struct xp_key k;

		if (next_is_start(p, i, j)) {
			if (xp_pair_key_life(ev(p, &p->s, i), kind, &k)) {
				uint32_t before = map.count, grp = xp_keymap_put(&map, &k);

				if (grp == before)
					pending[grp] = NO_INDEX; /* new key */
				if (pending[grp] != NO_INDEX)
					p->ambiguous++;
				pending[grp] = (uint32_t)i;
			} else {
				p->unmatched_start++;
			}
			i++;
			continue;
		}
		if (xp_pair_key_life(ev(p, &p->e, j), kind, &k)) {
			uint32_t grp = xp_keymap_get(&map, &k);

			if (grp == XP_KEYMAP_NONE || pending[grp] == NO_INDEX) {
				p->unmatched_end++;
			} else {
				uint32_t s = pending[grp];

				pending[grp] = NO_INDEX;
				if (p->e.ts[j] >= p->s.ts[s])
					add_pair(p, s, j, p->e.ts[j] - p->s.ts[s]);
				else
					p->ambiguous++;
			}
		} else {
			p->unmatched_end++;
		}
		j++;
	}
	for (g = 0; g < map.count; g++)
		p->unmatched_start += pending[g] != NO_INDEX;
	xp_keymap_free(&map);
	free(pending);
	return 0;
}

/* --- first-after ----------------------------------------------------------- */

/*
 * For each start in order: ends before it are unmatched; the next end at or
 * after it pairs and is consumed; with no end left every remaining start is
 * unmatched.  Stops at the sample bound; the ends left over count as
 * unmatched only when the bound was not reached.  No pid/tid scoping.
 */
int xp_pair_first_after(struct xp_pairing *p)
{
	size_t i, j = 0;

	for (i = 0; i < p->s.n; i++) {
		if (full(p))
			break;
		while (j < p->e.n && p->e.ts[j] < p->s.ts[i]) {
			p->unmatched_end++;
			j++;
		}
		if (j == p->e.n) {
			p->unmatched_start += p->s.n - i;
			break;
		}
		add_pair(p, i, j, p->e.ts[j] - p->s.ts[i]);
		j++;
	}
	if (!full(p))
		p->unmatched_end += p->e.n - j;
	return 0;
}

/* --- nearest ---------------------------------------------------------------- */

static uint32_t dsu_find(uint32_t *parent, uint32_t x)
{
	uint32_t root = x, next;

	while (parent[root] != root)
		root = parent[root];
	while (parent[x] != root) {
		next = parent[x];
		parent[x] = root;
		x = next;
	}
	return root;
}

/* First bucket whose timestamp is >= ts (upper: > ts). */
struct ts_key {
	const uint64_t *ts;
	uint64_t at;
};

static bool ts_below(const void *ctx, size_t i)
{
	const struct ts_key *k = ctx;

	return k->ts[i] < k->at;
}

static bool ts_at_or_below(const void *ctx, size_t i)
{
	const struct ts_key *k = ctx;

	return k->ts[i] <= k->at;
}

static uint32_t bucket_bound(const uint64_t *bts, uint32_t nb, uint64_t ts, bool upper)
{
	struct ts_key k = { bts, ts };

	return (uint32_t)xpc_partition_point(nb, upper ? ts_at_or_below : ts_below, &k);
}

/*
 * Ends form buckets of equal timestamps.  For each start: the closest live
 * bucket at or before it and the closest at or after it; the earlier one
 * wins only when strictly closer; the bucket's last end is taken.  Latency
 * is the absolute difference.  With no end left the remaining starts are
 * unmatched; the ends left are unmatched unless the sample bound stopped
 * the loop.
 *
 * Live buckets: right[b] leads to the first live bucket >= b (nb = none);
 * left[b + 1] to the last live bucket <= b, shifted by one (0 = none).
 */
int xp_pair_nearest(struct xp_pairing *p)
{
	uint32_t nb = 0, b, *lo = NULL, *top = NULL, *right = NULL, *left = NULL;
	uint64_t *bts = NULL;
	size_t i, live = p->e.n;
	bool limited = false;
	int rc = -ENOMEM;

	bts = alloc_n(p->e.n, sizeof(*bts));
	lo = alloc_n(p->e.n, sizeof(*lo));
	top = alloc_n(p->e.n, sizeof(*top));
	right = alloc_n(p->e.n + 1, sizeof(*right));
	left = alloc_n(p->e.n + 1, sizeof(*left));
	if (!bts || !lo || !top || !right || !left)
		goto out;
	for (i = 0; i < p->e.n; i++) {
		if (!nb || bts[nb - 1] != p->e.ts[i]) {
			bts[nb] = p->e.ts[i];
			lo[nb] = (uint32_t)i;
			nb++;
		}
		top[nb - 1] = (uint32_t)i + 1;
	}
	for (b = 0; b <= nb; b++)
		right[b] = left[b] = b;

	for (i = 0; i < p->s.n; i++) {
		uint64_t ts = p->s.ts[i];
		uint32_t before, after, pick;

		if (full(p)) {
			limited = true;
			break;
		}
		if (!live) {
			p->unmatched_start += p->s.n - i;
			break;
		}
		before = dsu_find(left, bucket_bound(bts, nb, ts, true)); /* shifted */
		after = dsu_find(right, bucket_bound(bts, nb, ts, false));
		if (before && (after == nb || ts - bts[before - 1] < bts[after] - ts))
			pick = before - 1;
		else
			pick = after;
		top[pick]--;
		live--;
		add_pair(p, i, top[pick], bts[pick] >= ts ? bts[pick] - ts : ts - bts[pick]);
		if (top[pick] == lo[pick]) { /* bucket emptied */
			right[pick] = pick + 1;
			left[pick + 1] = pick;
		}
	}
	if (!limited)
		p->unmatched_end += live;
	rc = 0;
out:
	free(bts);
	free(lo);
	free(top);
	free(right);
	free(left);
	return rc;
}

/* --- stack-nested ---------------------------------------------------------- */

/*
 * Merged timeline, starts first on ties; one LIFO stack per (pid, tid).  An
 * end pops its thread's top start and pairs with it while the sample bound
 * allows (popping goes on after it); an end on an empty stack is unmatched;
 * starts left on stacks are unmatched.
 */
int xp_pair_stack_nested(struct xp_pairing *p)
{
	struct xp_keymap map;
	uint32_t *head, *below;
	size_t i = 0, j = 0;
	uint64_t pushes = 0, pops = 0;

	if (xp_keymap_init(&map, p->s.n))
		return -ENOMEM;
	head = alloc_n(p->s.n, sizeof(*head));
	below = alloc_n(p->s.n, sizeof(*below));
	if (!head || !below) {
		free(head);
		free(below);
		xp_keymap_free(&map);
		return -ENOMEM;
	}
	while (i < p->s.n || j < p->e.n) {
		struct xp_key k = { 0, 0, 0 };
		const struct xp_event *e;

		if (next_is_start(p, i, j)) {
			uint32_t before = map.count, grp;

			e = ev(p, &p->s, i);
			k.a = ((uint64_t)e->pid << 32) | e->tid;
			grp = xp_keymap_put(&map, &k);
			if (grp == before)
				head[grp] = NO_INDEX;
			below[i] = head[grp];
			head[grp] = (uint32_t)i;
			pushes++;
			i++;
			continue;
		}
		e = ev(p, &p->e, j);
		k.a = ((uint64_t)e->pid << 32) | e->tid;
		{
			uint32_t grp = xp_keymap_get(&map, &k);

			if (grp == XP_KEYMAP_NONE || head[grp] == NO_INDEX) {
				p->unmatched_end++;
			} else {
				uint32_t s = head[grp];

				head[grp] = below[s];
				pops++;
				if (!full(p))
					add_pair(p, s, j, p->e.ts[j] - p->s.ts[s]);
			}
		}
		j++;
	}
	p->unmatched_start += pushes - pops;
	xp_keymap_free(&map);
	free(head);
	free(below);
	return 0;
}

/* --- stream-order ---------------------------------------------------------- */

/* (pid, device_id, context_id, stream_id); all three ids required. */
bool xp_pair_key_stream(const struct xp_event *e, struct xp_key *k)
{
	const uint16_t need = XP_CUDAF_DEVICE_ID | XP_CUDAF_CONTEXT_ID | XP_CUDAF_STREAM_ID;

	if (!(e->flags & XP_EVF_CUDA) || (e->cuda.flags & need) != need)
		return false;
	k->a = ((uint64_t)e->pid << 32) | e->cuda.device_id;
	k->b = e->cuda.context_id;
	k->c = e->cuda.stream_id;
	return true;
}

/*
 * Per stream: for each start in order, ends before it are unmatched, the
 * next end pairs and is consumed, none left -> the start is unmatched.
 * Ends left over, and streams with ends only, are unmatched.
 */
int xp_pair_stream_order(struct xp_pairing *p)
{
	struct groups g;
	uint32_t i;

	if (group_by_key(p, xp_pair_key_stream, &g))
		return -ENOMEM;
	for (i = 0; i < g.n; i++) {
		uint32_t a = g.soff[i], a_end = g.soff[i + 1];
		uint32_t b = g.eoff[i], b_end = g.eoff[i + 1];

		for (; a < a_end; a++) {
			uint32_t s = g.sr[a];

			while (b < b_end && p->e.ts[g.er[b]] < p->s.ts[s]) {
				p->unmatched_end++;
				b++;
			}
			if (b == b_end) {
				p->unmatched_start++;
				continue;
			}
			add_pair(p, s, g.er[b], p->e.ts[g.er[b]] - p->s.ts[s]);
			b++;
		}
		p->unmatched_end += b_end - b;
	}
	groups_free(&g);
	return 0;
}
