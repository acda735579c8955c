/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_correlate_view.c - the terminal view's histograms and per-thread
 * statistics (src/correlate/latency_view.h) on hand-built pairs: the
 * power-of-two bin of every boundary, the automatic linear step (smallest
 * 1/2/5 x 10^k within 20 buckets, lower bound rounded down, first and last
 * bucket non-empty), and per-thread counts and nearest ranks in order.
 */
#include <stdlib.h>
#include <string.h>

#include "correlate/latency_view.h"
#include "testlib.h"

static void test_pow2_bin(void)
{
	CHECK_EQ_U64(xp_pow2_bin(0), 0);
	CHECK_EQ_U64(xp_pow2_bin(1), 1); /* [1, 2) */
	CHECK_EQ_U64(xp_pow2_bin(2), 2); /* [2, 4) */
	CHECK_EQ_U64(xp_pow2_bin(3), 2);
	CHECK_EQ_U64(xp_pow2_bin(4), 3);
	CHECK_EQ_U64(xp_pow2_bin(1023), 10); /* [512, 1024) */
	CHECK_EQ_U64(xp_pow2_bin(1024), 11); /* [1024, 2048) */
	CHECK_EQ_U64(xp_pow2_bin(262143), 18);
	CHECK_EQ_U64(xp_pow2_bin(262144), 19); /* [2^18, 2^19) */
	CHECK_EQ_U64(xp_pow2_bin(UINT64_MAX), 64); /* [2^63, inf) */
}

static void pairs_of(struct xp_pair *p, const uint64_t *lat, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		p[i].start = (uint32_t)(2 * i);
		p[i].end = (uint32_t)(2 * i + 1);
		p[i].latency_ns = lat[i];
	}
}

static void test_pow2_counts(void)
{
	static const uint64_t lat[] = { 0, 1, 300, 511, 512, 5000, 5000, 8191, 8192 };
	struct xp_pair p[9];
	uint64_t bins[XP_POW2_BINS];
	size_t i;
	uint64_t sum = 0;

	pairs_of(p, lat, 9);
	xp_latency_pow2(p, 9, bins);
	CHECK_EQ_U64(bins[0], 1);
	CHECK_EQ_U64(bins[1], 1);
	CHECK_EQ_U64(bins[9], 2); /* [256, 512): 300, 511 */
	CHECK_EQ_U64(bins[10], 1); /* [512, 1024) */
	CHECK_EQ_U64(bins[13], 3); /* [4096, 8192): 5000, 5000, 8191 */
	CHECK_EQ_U64(bins[14], 1); /* [8192, 16384) */
	for (i = 0; i < XP_POW2_BINS; i++)
		sum += bins[i];
	CHECK_EQ_U64(sum, 9);
}

static void test_linear(void)
{
	/* 1000..2900 in 100s: a step of 50 needs 39 buckets, 100 needs 20 */
	uint64_t lat[20];
	struct xp_linear_hist h;
	struct xp_pair p[20];
	size_t i;

	for (i = 0; i < 20; i++)
		lat[i] = 1000 + 100 * i;
	pairs_of(p, lat, 20);
	xp_latency_linear(p, 20, &h);
	CHECK_EQ_U64(h.step, 100);
	CHECK_EQ_U64(h.step_exp, 2);
	CHECK_EQ_U64(h.lo, 1000);
	CHECK_EQ_U64(h.n, 20);
	for (i = 0; i < 20; i++)
		CHECK_EQ_U64(h.counts[i], 1);

	/* 1,234,567 .. 3,456,789 ns: range 2.2 ms; 100 us needs 23 buckets
	 * from 1.2 ms, 200 us needs 12 from 1.2 ms */
	lat[0] = 1234567;
	lat[1] = 3456789;
	lat[2] = 1400000; /* [1.4, 1.6) ms */
	pairs_of(p, lat, 3);
	xp_latency_linear(p, 3, &h);
	CHECK_EQ_U64(h.step, 200000);
	CHECK_EQ_U64(h.step_exp, 5);
	CHECK_EQ_U64(h.lo, 1200000);
	CHECK_EQ_U64(h.n, 12); /* (3456789 - 1200000) / 200000 + 1 */
	CHECK_EQ_U64(h.counts[0], 1);
	CHECK_EQ_U64(h.counts[1], 1);
	CHECK_EQ_U64(h.counts[11], 1);
	for (i = 2; i < 11; i++)
		CHECK_EQ_U64(h.counts[i], 0);

	/* one value: one bucket of 1 ns */
	lat[0] = 777;
	pairs_of(p, lat, 1);
	xp_latency_linear(p, 1, &h);
	CHECK_EQ_U64(h.step, 1);
	CHECK_EQ_U64(h.lo, 777);
	CHECK_EQ_U64(h.n, 1);
	CHECK_EQ_U64(h.counts[0], 1);

	/* the whole u64 range: 10^18 needs 19 buckets, 5 x 10^17 needs 37 */
	lat[0] = 0;
	lat[1] = UINT64_MAX;
	pairs_of(p, lat, 2);
	xp_latency_linear(p, 2, &h);
	CHECK_EQ_U64(h.step, 1000000000000000000ull);
	CHECK_EQ_U64(h.n, 19);
	CHECK_EQ_U64(h.counts[0], 1);
	CHECK_EQ_U64(h.counts[18], 1);

	xp_latency_linear(p, 0, &h);
	CHECK_EQ_U64(h.n, 0);
}

static void test_threads(void)
{
	/* tid 7: 10, 20, 30, 40; tid 3: 5, 500; tid 9: 1 */
	static const uint64_t lat[] = { 10, 5, 20, 1, 30, 500, 40 };
	static const uint32_t tid[] = { 7, 3, 7, 9, 7, 3, 7 };
	struct xp_event ev[14];
	struct xp_capture c;
	struct xp_pair p[7];
	struct xp_thread_latency *t;
	size_t i, n;

	memset(ev, 0, sizeof(ev));
	memset(&c, 0, sizeof(c));
	for (i = 0; i < 7; i++) {
		ev[2 * i].tid = tid[i];
		ev[2 * i + 1].tid = 999; /* the end's thread does not count */
	}
	c.events = ev;
	c.count = 14;
	pairs_of(p, lat, 7);
	CHECK(xp_latency_threads(&c, p, 7, &t, &n) == 0);
	CHECK_EQ_U64(n, 3);
	/* by count desc, then tid */
	CHECK_EQ_U64(t[0].tid, 7);
	CHECK_EQ_U64(t[0].count, 4);
	CHECK_EQ_U64(t[0].st.p50, 20); /* nearest rank: ceil(0.5 * 4) = 2nd */
	CHECK_EQ_U64(t[0].st.p99, 40);
	CHECK_EQ_U64(t[0].st.max, 40);
	CHECK_EQ_U64(t[1].tid, 3);
	CHECK_EQ_U64(t[1].count, 2);
	CHECK_EQ_U64(t[1].st.p50, 5);
	CHECK_EQ_U64(t[1].st.max, 500);
	CHECK_EQ_U64(t[2].tid, 9);
	CHECK_EQ_U64(t[2].count, 1);
	CHECK_EQ_U64(t[2].st.p99, 1);
	free(t);

	CHECK(xp_latency_threads(&c, p, 0, &t, &n) == 0);
	CHECK_EQ_U64(n, 0);
	CHECK(t == NULL);
}

int main(void)
{
	test_pow2_bin();
	test_pow2_counts();
	test_linear();
	test_threads();
	TEST_MAIN_END();
}
