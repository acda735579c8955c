/* SPDX-License-Identifier: Apache-2.0 */
/*
 * latency_histogram_summary.c - the summary of `measure --histogram` from
 * the raw map contents (latency_histogram.h): bucket bounds, folding per-CPU
 * copies, percentiles and their error bound, the accounting identities,
 * group order, completeness and warnings.  No BPF here, so every rule is
 * unit-tested (tests/unit/test_inventory_histogram.c).
 *
 * Percentiles.  The p-th percentile is the nearest-rank value: the
 * rank-th smallest latency, rank = ceil(p * count) (at least 1).  Counts
 * are exact, so the bucket holding it is known exactly; so are min and
 * max.  The true value therefore lies in [a, b] = [max(lower, min),
 * min(upper - 1, max)] (integer nanoseconds), and the estimate is the
 * midpoint m = a + (b - a) / 2 (rank 1 is min and rank count is max,
 * exactly).  Its relative error is at most
 * max((m - a) / a, (b - m) / b), which this file reports per percentile;
 * over every bucket that is below 1/32 (bucket [2^k, 2^k + 2^(k-4)):
 * (2^(k-5) - 1) / 2^k and 2^(k-5) / (2^k + 2^(k-4) - 1)), and 0 below
 * 16 ns where buckets are one value wide.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latency_histogram.h"

#ifndef __bpf__
_Static_assert(sizeof(struct xp_ex_sums) == 64, "xp_ex_sums layout");
_Static_assert(sizeof(struct xp_lh_hist) == 64 + 24 + 8 * XP_LH_BUCKETS, "xp_lh_hist layout");
_Static_assert(sizeof(struct xp_lh_counters) == 96, "xp_lh_counters layout");
_Static_assert(sizeof(struct xp_ex_buckets) <= 32768, "a per-CPU value is at most 32 KiB");
_Static_assert(XP_EX_BUCKET_ROWS >= XP_LH_BUCKETS &&
		       (XP_EX_BUCKET_ROWS & (XP_EX_BUCKET_ROWS - 1)) == 0,
	       "a masked bucket index stays in the rows");
_Static_assert(XP_EX_TOP_MAX == 64 && (XP_EX_MAX_DEPTH & (XP_EX_MAX_DEPTH - 1)) == 0 &&
		       (XP_EX_BY & (XP_EX_BY - 1)) == 0,
	       "the BPF side masks these indices");
_Static_assert(sizeof(struct xp_lh_open) == 32, "xp_lh_open layout");
_Static_assert(sizeof(struct xp_lh_stack) == 16 + 16 * XP_LH_MAX_DEPTH, "xp_lh_stack layout");
_Static_assert(XP_LH_BUCKETS == 976, "976 buckets cover every u64");
_Static_assert(XP_LH_MAX_DEPTH <= 32, "key_bad is a 32-bit mask");
#endif

const uint32_t xp_inv_lh_pct_permille[XP_LH_NPCT] = { 500, 900, 950, 990, 999 };

const char *xp_inv_lh_stop_name(enum xp_inv_lh_stop s)
{
	switch (s) {
	case XP_LH_STOP_DURATION:
		return "duration";
	case XP_LH_STOP_CANCELLED:
		return "cancelled";
	case XP_LH_STOP_TARGET_EXITED:
		return "target_exited";
	case XP_LH_STOP_TIMEOUT:
		return "timeout";
	}
	return "duration";
}

const char *xp_inv_lh_by_name(int by)
{
	switch (by) {
	case XP_LH_BY_THREAD:
		return "thread";
	case XP_LH_BY_ARG0:
		return "arg0";
	case XP_LH_BY_NAME:
		return "name";
	case XP_LH_BY_STREAM:
		return "stream";
	case XP_LH_BY_DEVICE:
		return "device";
	default:
		return "none";
	}
}

void xp_inv_lh_bucket_bounds(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	uint32_t k, s;
	uint64_t width;

	if (b < XP_LH_SUB) {
		*lo = b;
		*hi = (uint64_t)b + 1;
		return;
	}
	k = b / XP_LH_SUB + (XP_LH_SUB_BITS - 1);
	s = b % XP_LH_SUB;
	width = 1ull << (k - XP_LH_SUB_BITS);
	*lo = (1ull << k) + (uint64_t)s * width;
	/* the very last bucket ends at 2^64, which does not fit */
	*hi = *lo + width < *lo ? UINT64_MAX : *lo + width;
}

void xp_inv_lh_hist_fold(struct xp_inv_lh_dist *into, const struct xp_lh_hist *h)
{
	uint64_t min = ~(uint64_t)h->min_inv, count = 0;
	size_t i;

	for (i = 0; i < XP_LH_BUCKETS; i++)
		count += h->buckets[i];
	if (!count)
		return;
	if (!into->count || min < into->min_ns)
		into->min_ns = min;
	if (!into->count || h->max_ns > into->max_ns)
		into->max_ns = h->max_ns;
	into->count += count;
	into->sum_ns += h->sum_ns;
	for (i = 0; i < XP_EX_NCOMP; i++)
		into->ex.comp[i] += h->ex.comp[i];
	into->ex.nvcsw += h->ex.nvcsw;
	into->ex.nivcsw += h->ex.nivcsw;
	into->ex.nmigr += h->ex.nmigr;
	into->ex.pairs += h->ex.pairs;
	for (i = 0; i < XP_LH_BUCKETS; i++)
		into->buckets[i] += h->buckets[i];
}

/* ceil(permille * count / 1000), at least 1 (no overflow: 128-bit). */
static uint64_t nearest_rank(uint64_t count, uint32_t permille)
{
	unsigned __int128 r = ((unsigned __int128)count * permille + 999) / 1000;

	return r ? (uint64_t)r : 1;
}

int xp_inv_lh_percentile(const struct xp_inv_lh_dist *h, uint32_t permille,
			 struct xp_inv_lh_percentile *out)
{
	uint64_t rank, seen = 0, lo, hi, a, b, m;
	double ea, eb;
	uint32_t i;

	memset(out, 0, sizeof(*out));
	out->permille = permille;
	if (!h->count)
		return -ENOENT;
	rank = nearest_rank(h->count, permille);
	out->rank = rank;
	for (i = 0; i < XP_LH_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	if (i == XP_LH_BUCKETS) {
		/* buckets sum to less than count: cannot happen with one
		 * consistent read; answer with the extremes, bound from them */
		a = h->min_ns;
		b = h->max_ns;
		lo = a;
		hi = b < UINT64_MAX ? b + 1 : b;
	} else {
		xp_inv_lh_bucket_bounds(i, &lo, &hi);
		a = lo > h->min_ns ? lo : h->min_ns;
		b = hi - 1 < h->max_ns ? hi - 1 : h->max_ns;
		if (b < a) /* min/max outside the bucket: trust the bucket */
			a = lo, b = hi - 1;
	}
	/* the extremes are known exactly (unless they are bucket bounds) */
	if (h->bucket_extremes)
		;
	else if (rank == h->count)
		a = b = h->max_ns;
	else if (rank == 1)
		a = b = h->min_ns;
	m = a + (b - a) / 2;
	out->value_ns = m;
	out->bucket_lower_ns = lo;
	out->bucket_upper_ns = hi;
	ea = a ? (double)(m - a) / (double)a : 0.0;
	eb = b ? (double)(b - m) / (double)b : 0.0;
	out->rel_error = ea > eb ? ea : eb;
	return 0;
}

void xp_inv_lh_dist_delta(struct xp_inv_lh_dist *into, const struct xp_inv_lh_dist *now,
			  const struct xp_inv_lh_dist *before)
{
	uint64_t lo, hi;
	bool first = true;
	uint32_t b;
	int i;

	memset(into, 0, sizeof(*into));
	into->count = now->count - before->count;
	into->sum_ns = now->sum_ns - before->sum_ns;
	for (i = 0; i < XP_EX_NCOMP; i++)
		into->ex.comp[i] = now->ex.comp[i] - before->ex.comp[i];
	into->ex.nvcsw = now->ex.nvcsw - before->ex.nvcsw;
	into->ex.nivcsw = now->ex.nivcsw - before->ex.nivcsw;
	into->ex.nmigr = now->ex.nmigr - before->ex.nmigr;
	into->ex.pairs = now->ex.pairs - before->ex.pairs;
	into->bucket_extremes = true;
	for (b = 0; b < XP_LH_BUCKETS; b++) {
		into->buckets[b] = now->buckets[b] - before->buckets[b];
		if (!into->buckets[b])
			continue;
		xp_inv_lh_bucket_bounds(b, &lo, &hi);
		if (first)
			into->min_ns = lo;
		first = false;
		into->max_ns = hi - 1;
	}
}

static int group_cmp(const void *x, const void *y)
{
	const struct xp_inv_lh_group *a = x, *b = y;

	int c;

	if (a->h.count != b->h.count)
		return a->h.count > b->h.count ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	c = strcmp(a->name, b->name); /* "" unless named */
	if (c)
		return c;
	return a->name_complete - b->name_complete;
}

void xp_inv_lh_result_finish(struct xp_inv_lh_result *r)
{
	const struct xp_lh_counters *c = &r->c;

	r->pairs = r->total.count;
	r->unpaired_starts = c->superseded + r->open_at_end + c->thread_exit_open;
	r->starts = r->pairs + r->unpaired_starts + c->inflight_overflow + c->depth_overflow;
	r->ends = r->pairs + c->unpaired_ends;
	if (r->ngroups > 1)
		qsort(r->groups, r->ngroups, sizeof(*r->groups), group_cmp);
}

bool xp_inv_lh_complete(const struct xp_inv_lh_result *r)
{
	return !r->c.inflight_overflow && !r->c.depth_overflow && !r->c.group_overflow &&
	       !r->c.key_unreadable && !r->c.minmax_contended && !r->agent_dropped;
}

int xp_inv_lh_warnings(const struct xp_inv_lh_result *r, struct xp_warnings *ws)
{
	const struct xp_lh_counters *c = &r->c;
	char msg[512];
	int rc;

	if (!r->pairs) {
		snprintf(
			msg, sizeof(msg),
			"no start was followed by its end during the %.3f s window: the histogram is empty (%" PRIu64
			" starts, %" PRIu64 " ends seen)",
			(double)r->window_ns / 1e9, r->starts, r->ends);
		if ((rc = xp_warnings_add_u64(ws, "NO_PAIRS", msg, "ends", r->ends, "starts",
					      r->starts, "window_ns", r->window_ns, NULL)))
			return rc;
	}
	if (c->inflight_overflow) {
		snprintf(
			msg, sizeof(msg),
			"the %" PRIu64 "-thread in-flight table was full: %" PRIu64
			" starts were not kept, so their ends count as unpaired and their latencies are missing; raise --max-inflight",
			r->inflight_capacity, (uint64_t)c->inflight_overflow);
		if ((rc = xp_warnings_add_u64(ws, "INFLIGHT_TABLE_FULL", msg, "inflight_capacity",
					      r->inflight_capacity, "inflight_overflow",
					      (uint64_t)c->inflight_overflow, NULL)))
			return rc;
	}
	if (r->agent_dropped) {
		snprintf(
			msg, sizeof(msg),
			"the Agent lost %" PRIu64
			" pairs in the target (CUPTI dropped activity records or never finished them): their latencies are missing",
			r->agent_dropped);
		if ((rc = xp_warnings_add_u64(ws, "EVENTS_DROPPED", msg, "dropped",
					      r->agent_dropped, NULL)))
			return rc;
	}
	if (c->depth_overflow) {
		snprintf(
			msg, sizeof(msg),
			"%" PRIu64 " starts were nested deeper than --max-depth %" PRIu64
			" and were not kept: their latencies are missing (the pairs above them are intact)",
			(uint64_t)c->depth_overflow, r->max_depth);
		if ((rc = xp_warnings_add_u64(ws, "NESTING_DEPTH_EXCEEDED", msg, "depth_overflow",
					      (uint64_t)c->depth_overflow, "max_depth",
					      r->max_depth, NULL)))
			return rc;
	}
	if (c->group_overflow) {
		snprintf(msg, sizeof(msg),
			 "the %" PRIu64 "-group table was full: %" PRIu64
			 " pairs are in the total histogram but in no group; raise --max-groups",
			 r->group_capacity, (uint64_t)c->group_overflow);
		if ((rc = xp_warnings_add_u64(ws, "HISTOGRAM_GROUPS_FULL", msg, "group_capacity",
					      r->group_capacity, "group_overflow",
					      (uint64_t)c->group_overflow, NULL)))
			return rc;
	}
	if (c->key_unreadable) {
		snprintf(
			msg, sizeof(msg),
			"the first argument of %" PRIu64
			" starts could not be read: those pairs are in the total histogram but in no group",
			(uint64_t)c->key_unreadable);
		if ((rc = xp_warnings_add_u64(ws, "GROUP_KEY_UNREADABLE", msg, "key_unreadable",
					      (uint64_t)c->key_unreadable, NULL)))
			return rc;
	}
	if (c->minmax_contended) {
		snprintf(
			msg, sizeof(msg),
			"%" PRIu64
			" min/max updates lost a race with concurrent updates of the same histogram: min_ns and max_ns may each be off by those values (count, sum and buckets are exact)",
			(uint64_t)c->minmax_contended);
		if ((rc = xp_warnings_add_u64(ws, "MINMAX_CONTENDED", msg, "minmax_contended",
					      (uint64_t)c->minmax_contended, NULL)))
			return rc;
	}
	return 0;
}

const struct xp_inv_ex_stack *xp_inv_ex_stack_find(const struct xp_inv_ex_result *ex, int32_t id)
{
	size_t i;

	if (id < 0)
		return NULL;
	for (i = 0; i < ex->nstacks; i++)
		if (ex->stacks[i].id == id)
			return &ex->stacks[i];
	return NULL;
}

void xp_inv_lh_result_free(struct xp_inv_lh_result *r)
{
	free(r->groups);
	xp_inv_ex_result_free(&r->ex);
	memset(r, 0, sizeof(*r));
}
