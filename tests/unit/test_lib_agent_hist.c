/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_agent_hist.c - the histograms of a HISTOGRAM capture
 * (lib/producers/agent_hist_table.c), in process: the real table, no
 * socket.
 *
 *   buckets     a latency lands in xprobe_lh_bucket_of's bucket (the one
 *               definition the BPF side and the CLI use), the copy's count
 *               is its buckets' sum, min/max/sum exact;
 *   groups      by name (kept bytes and completeness), by thread (the key
 *               only), by none; a full table answers XPL_HIST_FULL and the
 *               pair is in the total and in group_overflow;
 *   stacks      --max-inflight thread stacks, the next take counted in
 *               inflight_overflow;
 *   open ranges an entry still held refuses the start `inflight` ranges
 *               later (counted), a wrong sequence takes nothing, the
 *               OPEN counter sees what is open;
 *   threads     four threads add 200k pairs each into one group and the
 *               total: every pair counted once (the atomics), min/max the
 *               extremes; a reader copying meanwhile always finds min and
 *               max covering the buckets it read (what the CLI's decoder
 *               checks: the extremes are updated before the bucket).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/producers/agent_hist_table.h"
#include "testlib.h"

static struct xprobe_agent_hist out[8];

static void test_buckets(void)
{
	struct xpl_agent_hist *h;
	uint64_t v[] = { 0, 15, 16, 1000, 1000, 123456789 };

	CHECK(xpl_hist_new(4, XPROBE_AGENT_BY_NONE, 8, &h) == 0);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		CHECK(xpl_hist_group(h, XPROBE_AGENT_KIND_NVTX_RANGE, 0, "a", 1, 0) ==
		      XPL_HIST_NO_GROUP);
		xpl_hist_add(h, XPL_HIST_NO_GROUP, v[i]);
	}
	CHECK_EQ_U64(xpl_hist_count_all(h), 1);
	CHECK_EQ_U64(xpl_hist_copy(h, 0, 8, out), 1);
	CHECK_EQ_U64(out[0].flags, XPROBE_AGENT_HIST_F_TOTAL);
	CHECK_EQ_U64(out[0].count, 6);
	CHECK_EQ_U64(out[0].min_ns, 0);
	CHECK_EQ_U64(out[0].max_ns, 123456789);
	CHECK_EQ_U64(out[0].sum_ns, 0 + 15 + 16 + 2000 + 123456789);
	CHECK_EQ_U64(out[0].buckets[xprobe_lh_bucket_of(1000)], 2);
	CHECK_EQ_U64(out[0].buckets[15], 1);
	CHECK_EQ_U64(out[0].buckets[xprobe_lh_bucket_of(123456789)], 1);
	CHECK_EQ_U64(xpl_hist_pairs(h), 6);
	xpl_hist_free(h);
	CHECK(xpl_hist_new(0, XPROBE_AGENT_BY_NONE, 8, &h) == -EINVAL);
	CHECK(xpl_hist_new(1, XPROBE_AGENT_BY__COUNT, 8, &h) == -EINVAL);
	CHECK(xpl_hist_new(1, XPROBE_AGENT_BY_NONE, 0, &h) == -EINVAL);
	CHECK(xpl_hist_new(1, XPROBE_AGENT_BY_NONE, XPROBE_AGENT_INFLIGHT_MAX + 1, &h) == -EINVAL);
}

static void test_groups(void)
{
	struct xpl_agent_hist *h;
	int64_t a, b, c;

	CHECK(xpl_hist_new(2, XPROBE_AGENT_BY_NAME, 8, &h) == 0);
	a = xpl_hist_group(h, XPROBE_AGENT_KIND_KERNEL, 7, "gemm", 4,
			   XPROBE_AGENT_HIST_F_NAME_COMPLETE);
	/* by name: the key (stream, thread) is not part of it */
	CHECK(xpl_hist_group(h, XPROBE_AGENT_KIND_KERNEL, 9, "gemm", 4,
			     XPROBE_AGENT_HIST_F_NAME_COMPLETE) == a);
	/* a cut name is another group than the whole one */
	b = xpl_hist_group(h, XPROBE_AGENT_KIND_KERNEL, 7, "gemm", 4, 0);
	CHECK(a == 0 && b == 1);
	c = xpl_hist_group(h, XPROBE_AGENT_KIND_KERNEL, 7, "flash", 5, 0);
	CHECK(c == XPL_HIST_FULL);
	xpl_hist_add(h, a, 100);
	xpl_hist_add(h, b, 200);
	xpl_hist_add(h, c, 300);
	CHECK_EQ_U64(xpl_hist_copy(h, 0, 8, out), 3);
	CHECK_EQ_U64(out[0].count, 3);
	CHECK_EQ_U64(out[0].counters[XPROBE_AGENT_HC_GROUP_OVERFLOW], 1);
	CHECK_EQ_U64(out[1].count, 1);
	CHECK_EQ_U64(out[1].key, 0);
	CHECK_EQ_U64(out[1].flags, XPROBE_AGENT_HIST_F_NAME_COMPLETE);
	CHECK(out[1].name_len == 4 && !memcmp(out[1].name, "gemm", 5));
	CHECK_EQ_U64(out[2].flags, 0);
	CHECK_EQ_U64(out[2].counters[XPROBE_AGENT_HC_GROUP_OVERFLOW], 0);
	/* from an offset */
	CHECK_EQ_U64(xpl_hist_copy(h, 2, 8, out), 1);
	CHECK_EQ_U64(out[0].sum_ns, 200);
	CHECK_EQ_U64(xpl_hist_copy(h, 3, 8, out), 0);
	xpl_hist_free(h);

	CHECK(xpl_hist_new(4, XPROBE_AGENT_BY_THREAD, 8, &h) == 0);
	a = xpl_hist_group(h, XPROBE_AGENT_KIND_NVTX_RANGE, 41, "x", 1, 0);
	CHECK(xpl_hist_group(h, XPROBE_AGENT_KIND_NVTX_RANGE, 41, "other", 5, 2) == a);
	CHECK(xpl_hist_group(h, XPROBE_AGENT_KIND_NVTX_RANGE, 42, "x", 1, 0) != a);
	CHECK_EQ_U64(xpl_hist_copy(h, 0, 8, out), 3);
	CHECK(out[1].key == 41 && out[1].name_len == 0 && out[2].key == 42);
	xpl_hist_free(h);
}

static void test_stacks_and_open(void)
{
	struct xpl_agent_hist *h;
	uint64_t ts;
	int64_t g;

	CHECK(xpl_hist_new(1, XPROBE_AGENT_BY_NONE, 3, &h) == 0);
	CHECK_EQ_U64(xpl_hist_stack_take(h), 1);
	CHECK_EQ_U64(xpl_hist_stack_take(h), 2);
	CHECK_EQ_U64(xpl_hist_stack_take(h), 3);
	CHECK_EQ_U64(xpl_hist_stack_take(h), 0);
	CHECK_EQ_U64(xpl_hist_stack_take(h), 0);
	/* 3 in-flight entries round up to 16: seq 1 and 17 share one */
	CHECK(xpl_hist_open_put(h, 1, 1000, 0));
	CHECK(xpl_hist_open_put(h, 2, 1100, XPL_HIST_NO_GROUP));
	CHECK(!xpl_hist_open_put(h, 17, 1200, 0));
	CHECK(!xpl_hist_open_take(h, 17, &ts, &g));
	CHECK_EQ_U64(xpl_hist_copy(h, 0, 1, out), 1);
	CHECK_EQ_U64(out[0].counters[XPROBE_AGENT_HC_INFLIGHT_OVERFLOW], 3);
	CHECK_EQ_U64(out[0].counters[XPROBE_AGENT_HC_OPEN], 2);
	CHECK_EQ_U64(out[0].counters[XPROBE_AGENT_HC_STACKS], 3);
	CHECK(xpl_hist_open_take(h, 1, &ts, &g) && ts == 1000 && g == 0);
	CHECK(!xpl_hist_open_take(h, 1, &ts, &g)); /* taken once */
	CHECK(xpl_hist_open_put(h, 17, 1300, 0)); /* free again */
	CHECK(xpl_hist_open_take(h, 2, &ts, &g) && ts == 1100 && g == XPL_HIST_NO_GROUP);
	CHECK_EQ_U64(xpl_hist_copy(h, 0, 1, out), 1);
	CHECK_EQ_U64(out[0].counters[XPROBE_AGENT_HC_OPEN], 1);
	/* a thread's exit gives its stack back: the next thread takes it */
	xpl_hist_stack_give(h, 2);
	CHECK_EQ_U64(xpl_hist_copy(h, 0, 1, out), 1);
	CHECK_EQ_U64(out[0].counters[XPROBE_AGENT_HC_STACKS], 2);
	CHECK_EQ_U64(xpl_hist_stack_take(h), 2);
	CHECK_EQ_U64(xpl_hist_stack_take(h), 0);
	CHECK_EQ_U64(xpl_hist_copy(h, 0, 1, out), 1);
	CHECK_EQ_U64(out[0].counters[XPROBE_AGENT_HC_STACKS], 3);
	CHECK_EQ_U64(out[0].counters[XPROBE_AGENT_HC_INFLIGHT_OVERFLOW], 4);
	xpl_hist_free(h);
}

#define NTHREADS 4
#define PER 200000

static struct xpl_agent_hist *shared;
static int64_t shared_g;

static void *adder(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < PER; i++)
		xpl_hist_add(shared, shared_g, base + i % 1000);
	return NULL;
}

static _Atomic int writers_done;
static long reader_bad, reader_reads;

/* [lo, hi) of bucket @b (latency_buckets.h) */
static void bounds(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	uint32_t k = b / XPROBE_LH_SUB + XPROBE_LH_SUB_BITS - 1;

	if (b < XPROBE_LH_SUB) {
		*lo = b;
		*hi = b + 1;
		return;
	}
	*lo = (1ull << k) + ((uint64_t)(b % XPROBE_LH_SUB) << (k - XPROBE_LH_SUB_BITS));
	*hi = *lo + (1ull << (k - XPROBE_LH_SUB_BITS));
}

static void *reader(void *arg)
{
	static struct xprobe_agent_hist x[2];

	(void)arg;
	while (!atomic_load(&writers_done)) {
		uint64_t lo, hi;
		int b0 = -1, b1 = -1;

		xpl_hist_copy(shared, 0, 2, x);
		reader_reads++;
		for (int b = 0; b < (int)XPROBE_LH_BUCKETS; b++)
			if (x[1].buckets[b]) {
				if (b0 < 0)
					b0 = b;
				b1 = b;
			}
		if (b0 < 0)
			continue;
		bounds((uint32_t)b0, &lo, &hi);
		reader_bad += x[1].min_ns >= hi;
		bounds((uint32_t)b1, &lo, &hi);
		reader_bad += x[1].max_ns < lo;
	}
	return NULL;
}

static void test_threads(void)
{
	pthread_t th[NTHREADS], rd;
	uint64_t want_sum = 0;

	CHECK(xpl_hist_new(4, XPROBE_AGENT_BY_THREAD, 8, &shared) == 0);
	shared_g = xpl_hist_group(shared, XPROBE_AGENT_KIND_NVTX_RANGE, 1, "", 0, 0);
	CHECK(pthread_create(&rd, NULL, reader, NULL) == 0);
	for (int i = 0; i < NTHREADS; i++) {
		CHECK(pthread_create(&th[i], NULL, adder, (void *)(uintptr_t)(100 + 5000 * i)) ==
		      0);
		want_sum += (uint64_t)PER * (100 + 5000 * i) + (PER / 1000) * (999 * 1000 / 2);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	atomic_store(&writers_done, 1);
	pthread_join(rd, NULL);
	CHECK(reader_reads > 0);
	CHECK_EQ_U64(reader_bad, 0);
	CHECK_EQ_U64(xpl_hist_copy(shared, 0, 8, out), 2);
	for (int k = 0; k < 2; k++) {
		CHECK_EQ_U64(out[k].count, (uint64_t)NTHREADS * PER);
		CHECK_EQ_U64(out[k].sum_ns, want_sum);
		CHECK_EQ_U64(out[k].min_ns, 100);
		CHECK_EQ_U64(out[k].max_ns, 100 + 5000 * (NTHREADS - 1) + 999);
	}
	xpl_hist_free(shared);
}

int main(void)
{
	test_buckets();
	test_groups();
	test_stacks_and_open();
	test_threads();
	TEST_MAIN_END();
}
