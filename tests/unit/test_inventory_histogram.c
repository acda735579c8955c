/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_inventory_histogram.c - the bucket math and the summary of `measure
 * --histogram` (bpf/latency_hist.h, src/inventory/latency_histogram_summary.c):
 * bucket indices and bounds (contiguous, covering every u64, at most 1/16
 * wide), percentiles against the exact nearest-rank value of known data
 * (within their own reported bound, and that within 1/32), folding
 * per-CPU copies, the accounting identities, the group order, warnings,
 * and the names of stop reasons and groupings (the terminal's duration
 * format is the report's: test_report_format.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "inventory/latency_histogram.h"
#include "testlib.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic, no libc rand() state */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void test_bucket_index(void)
{
	uint64_t v;

	for (v = 0; v < 16; v++)
		CHECK_EQ_U64(xp_lh_bucket_of(v), v);
	/* [16, 32): one value per bucket still (width 2^0) */
	CHECK_EQ_U64(xp_lh_bucket_of(16), 16);
	CHECK_EQ_U64(xp_lh_bucket_of(31), 31);
	/* [32, 64): width 2 */
	CHECK_EQ_U64(xp_lh_bucket_of(32), 32);
	CHECK_EQ_U64(xp_lh_bucket_of(33), 32);
	CHECK_EQ_U64(xp_lh_bucket_of(34), 33);
	CHECK_EQ_U64(xp_lh_bucket_of(63), 47);
	CHECK_EQ_U64(xp_lh_bucket_of(64), 48);
	/* 1 ms = 1,000,000 ns: k = 19, sub = (1e6 >> 15) & 15 = 14 */
	CHECK_EQ_U64(xp_lh_bucket_of(1000000), (19 - 3) * 16 + 14);
	CHECK_EQ_U64(xp_lh_bucket_of(1ull << 63), 960);
	CHECK_EQ_U64(xp_lh_bucket_of(UINT64_MAX), XP_LH_BUCKETS - 1);
}

static void check_in_bucket(uint64_t v)
{
	uint32_t b = xp_lh_bucket_of(v);
	uint64_t lo, hi;

	CHECK(b < XP_LH_BUCKETS);
	xp_inv_lh_bucket_bounds(b, &lo, &hi);
	CHECK(lo <= v);
	CHECK(v < hi || (hi == UINT64_MAX && b == XP_LH_BUCKETS - 1));
	if (lo >= XP_LH_EXACT_BELOW_NS)
		CHECK((double)(hi - lo) <= XP_LH_BUCKET_WIDTH_BOUND * (double)lo);
	else
		CHECK_EQ_U64(hi - lo, 1);
}

static void test_bucket_bounds(void)
{
	uint64_t lo, hi, plo, phi, v;
	uint32_t b;
	int k, i;

	/* contiguous, increasing, covering [0, 2^64) */
	xp_inv_lh_bucket_bounds(0, &plo, &phi);
	CHECK_EQ_U64(plo, 0);
	for (b = 1; b < XP_LH_BUCKETS; b++) {
		xp_inv_lh_bucket_bounds(b, &lo, &hi);
		CHECK_EQ_U64(lo, phi);
		CHECK(hi > lo);
		/* the index of its own bounds is itself */
		CHECK_EQ_U64(xp_lh_bucket_of(lo), b);
		if (b < XP_LH_BUCKETS - 1)
			CHECK_EQ_U64(xp_lh_bucket_of(hi - 1), b);
		plo = lo;
		phi = hi;
	}
	CHECK_EQ_U64(phi, UINT64_MAX);
	/* every power of two, its neighbours, and random values */
	for (k = 0; k < 64; k++) {
		v = 1ull << k;
		check_in_bucket(v);
		check_in_bucket(v - 1);
		check_in_bucket(v + 1);
		check_in_bucket(v + (v >> 1));
	}
	for (i = 0; i < 200000; i++) {
		v = rng() >> (rng() % 64);
		check_in_bucket(v);
		/* monotone */
		if (v)
			CHECK(xp_lh_bucket_of(v - 1) <= xp_lh_bucket_of(v));
	}
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static void add(struct xp_inv_lh_dist *h, uint64_t v)
{
	if (!h->count || v < h->min_ns)
		h->min_ns = v;
	if (!h->count || v > h->max_ns)
		h->max_ns = v;
	h->count++;
	h->sum_ns += v;
	h->buckets[xp_lh_bucket_of(v)]++;
}

/* Every percentile of @n values (sorted here) against the exact
 * nearest-rank value: within its reported bound, the bound within 1/32. */
static double check_percentiles(uint64_t *vals, size_t n)
{
	struct xp_inv_lh_dist *h = calloc(1, sizeof(*h));
	struct xp_inv_lh_percentile p;
	double worst = 0.0;
	size_t i;

	for (i = 0; i < n; i++)
		add(h, vals[i]);
	qsort(vals, n, sizeof(*vals), cmp_u64);
	for (i = 0; i < XP_LH_NPCT; i++) {
		uint32_t pm = xp_inv_lh_pct_permille[i];
		uint64_t rank = ((uint64_t)n * pm + 999) / 1000, truth;
		double err;

		CHECK(xp_inv_lh_percentile(h, pm, &p) == 0);
		CHECK_EQ_U64(p.rank, rank ? rank : 1);
		truth = vals[p.rank - 1];
		CHECK(p.bucket_lower_ns <= truth && truth < p.bucket_upper_ns);
		err = truth ? fabs((double)p.value_ns - (double)truth) / (double)truth :
			      (double)p.value_ns;
		CHECK(err <= p.rel_error + 1e-12);
		CHECK(p.rel_error < XP_LH_PCT_ERROR_BOUND);
		if (err > worst)
			worst = err;
		if (p.rank == n)
			CHECK_EQ_U64(p.value_ns, vals[n - 1]); /* max, exactly */
		if (p.rank == 1)
			CHECK_EQ_U64(p.value_ns, vals[0]);
	}
	free(h);
	return worst;
}

static void test_percentiles(void)
{
	static uint64_t vals[100000];
	static struct xp_inv_lh_dist empty;
	struct xp_inv_lh_percentile p;
	double worst = 0.0, w;
	size_t i, n;
	int round;

	CHECK(xp_inv_lh_percentile(&empty, 500, &p) == -ENOENT);

	/* log-uniform latencies from 10 ns to ~1 s, several sizes */
	for (round = 0; round < 40; round++) {
		n = 1 + rng() % 5000;
		for (i = 0; i < n; i++)
			vals[i] = 10 + (rng() >> (rng() % 34 + 30));
		w = check_percentiles(vals, n);
		worst = w > worst ? w : worst;
	}
	/* the worst case of the scheme: every value on a bucket's lower bound */
	for (round = 0; round < 20; round++) {
		n = 1000;
		for (i = 0; i < n; i++)
			vals[i] = 1ull << (5 + rng() % 40);
		w = check_percentiles(vals, n);
		worst = w > worst ? w : worst;
	}
	/* ... and on its last value */
	for (i = 0; i < 1000; i++)
		vals[i] = (1ull << 20) + (1ull << 16) - 1;
	check_percentiles(vals, 1000);
	/* small exact values: no error at all */
	for (i = 0; i < 500; i++)
		vals[i] = i % 16;
	CHECK(check_percentiles(vals, 500) == 0.0);
	/* the fixture's kind of plan: 1, 2, 5, 10, 20 ms in 40/30/20/8/2 */
	n = 0;
	for (i = 0; i < 40; i++)
		vals[n++] = 1060000 + i * 997;
	for (i = 0; i < 30; i++)
		vals[n++] = 2070000 + i * 1013;
	for (i = 0; i < 20; i++)
		vals[n++] = 5090000 + i * 1500;
	for (i = 0; i < 8; i++)
		vals[n++] = 10100000 + i * 3000;
	for (i = 0; i < 2; i++)
		vals[n++] = 20100000 + i * 5000;
	check_percentiles(vals, n);
	CHECK(worst < XP_LH_PCT_ERROR_BOUND);
	fprintf(stderr, "worst percentile error seen: %.5f (bound %.5f)\n", worst,
		XP_LH_PCT_ERROR_BOUND);
}

/* What a kernel copy holds after @n adds (latency_hist.bpf.c hist_add:
 * min kept as ~min, both extremes as maxima from zeroed memory). */
static void kernel_add(struct xp_lh_hist *h, uint64_t v)
{
	if (~v > h->min_inv)
		h->min_inv = ~v;
	if (v > h->max_ns)
		h->max_ns = v;
	h->sum_ns += v;
	h->buckets[xp_lh_bucket_of(v)]++;
}

static void test_fold(void)
{
	struct xp_lh_hist *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b)),
			  *c = calloc(1, sizeof(*c));
	struct xp_inv_lh_dist *sum = calloc(1, sizeof(*sum));

	kernel_add(a, 500);
	kernel_add(a, 900);
	/* b counted nothing: its zeroed extremes must not win */
	kernel_add(c, 700);
	kernel_add(c, 1200);
	kernel_add(c, 0); /* a zero latency is a real minimum */
	xp_inv_lh_hist_fold(sum, b);
	xp_inv_lh_hist_fold(sum, a);
	xp_inv_lh_hist_fold(sum, b);
	CHECK_EQ_U64(sum->min_ns, 500);
	xp_inv_lh_hist_fold(sum, c);
	CHECK_EQ_U64(sum->count, 5);
	CHECK_EQ_U64(sum->sum_ns, 3300);
	CHECK_EQ_U64(sum->min_ns, 0);
	CHECK_EQ_U64(sum->max_ns, 1200);
	CHECK_EQ_U64(sum->buckets[xp_lh_bucket_of(700)], 1);
	free(a);
	free(b);
	free(c);
	free(sum);
}

static void test_finish_and_warnings(void)
{
	struct xp_inv_lh_result r;
	struct xp_warnings ws = { 0 };
	size_t i;

	memset(&r, 0, sizeof(r));
	r.total.count = 10;
	r.c.superseded = 1;
	r.open_at_end = 2;
	r.c.thread_exit_open = 3;
	r.c.inflight_overflow = 4;
	r.c.depth_overflow = 5;
	r.c.unpaired_ends = 6;
	r.c.group_overflow = 7;
	r.c.key_unreadable = 8;
	r.c.minmax_contended = 1;
	r.inflight_capacity = 2;
	r.max_depth = 3;
	r.group_capacity = 2;
	r.groups = calloc(3, sizeof(*r.groups));
	r.ngroups = 3;
	r.groups[0].key = 9;
	r.groups[0].h.count = 1;
	r.groups[1].key = 5;
	r.groups[1].h.count = 4;
	r.groups[2].key = 2;
	r.groups[2].h.count = 4;
	xp_inv_lh_result_finish(&r);
	CHECK_EQ_U64(r.pairs, 10);
	CHECK_EQ_U64(r.unpaired_starts, 1 + 2 + 3);
	CHECK_EQ_U64(r.starts, 10 + 6 + 4 + 5);
	CHECK_EQ_U64(r.ends, 10 + 6);
	/* count desc, then key asc */
	CHECK_EQ_U64(r.groups[0].key, 2);
	CHECK_EQ_U64(r.groups[1].key, 5);
	CHECK_EQ_U64(r.groups[2].key, 9);
	CHECK(!xp_inv_lh_complete(&r));
	CHECK(xp_inv_lh_warnings(&r, &ws) == 0);
	CHECK_EQ_U64(ws.n, 5);
	CHECK_STR(ws.v[0].code, "INFLIGHT_TABLE_FULL");
	CHECK_STR(ws.v[1].code, "NESTING_DEPTH_EXCEEDED");
	CHECK_STR(ws.v[2].code, "HISTOGRAM_GROUPS_FULL");
	CHECK_STR(ws.v[3].code, "GROUP_KEY_UNREADABLE");
	CHECK_STR(ws.v[4].code, "MINMAX_CONTENDED");
	CHECK_STR(ws.v[0].details, "{\"inflight_capacity\":2,\"inflight_overflow\":4}");
	xp_warnings_free(&ws);

	/* nothing dropped: complete; no pair: NO_PAIRS alone */
	xp_inv_lh_result_free(&r);
	memset(&r, 0, sizeof(r));
	r.c.unpaired_ends = 1;
	xp_inv_lh_result_finish(&r);
	CHECK(xp_inv_lh_complete(&r));
	CHECK(xp_inv_lh_warnings(&r, &ws) == 0);
	CHECK_EQ_U64(ws.n, 1);
	CHECK_STR(ws.v[0].code, "NO_PAIRS");
	for (i = 0; i < ws.n; i++)
		CHECK(strstr(ws.v[i].message, "1 ends seen") != NULL);
	xp_warnings_free(&ws);
	xp_inv_lh_result_free(&r);
}

static void test_names(void)
{
	CHECK_STR(xp_inv_lh_stop_name(XP_LH_STOP_TARGET_EXITED), "target_exited");
	CHECK_STR(xp_inv_lh_by_name(XP_LH_BY_ARG0), "arg0");
}

int main(void)
{
	test_bucket_index();
	test_bucket_bounds();
	test_percentiles();
	test_fold();
	test_finish_and_warnings();
	test_names();
	TEST_MAIN_END();
}
