/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * latency_buckets.h - the one definition of the log-linear latency bucket
 * scheme, shared by everything that counts a latency into a histogram: the
 * BPF programs of `measure --histogram` (bpf/latency_hist.h includes this
 * file by its relative path), libxprobe's in-target histograms
 * (lib/producers/agent_hist_table.c, MODE_HISTOGRAM of agent.h) and the
 * CLI's summary and renderers (src/inventory/latency_histogram*.c).  One
 * copy, so a bucket number means the same interval on every side.
 *
 * The scheme (HdrHistogram style, 16 sub-buckets): a value v < 16 ns has
 * its own bucket v; above, the power of two [2^k, 2^(k+1)) holding v is
 * split into 16 equal sub-buckets of width 2^(k-4):
 *
 *   bucket(v) = v                                     v < 16
 *             = (k - 3) * 16 + ((v >> (k - 4)) & 15)  k = floor(log2 v) >= 4
 *
 * 61 x 16 = 976 buckets cover every 64-bit value.  A bucket spans at most
 * 1/16 (6.25%) of its lower bound (docs/histograms.md, "Accuracy").
 *
 * What this file deliberately is not: it holds no map or record layout
 * and includes nothing (the BPF side has no libc; the types are the C
 * base types, 64 and 32 bits on every target xprobe builds for).
 */
#ifndef XPROBE_LATENCY_BUCKETS_H
#define XPROBE_LATENCY_BUCKETS_H

#define XPROBE_LH_SUB_BITS 4
#define XPROBE_LH_SUB (1u << XPROBE_LH_SUB_BITS) /* 16 sub-buckets per power of two */
#define XPROBE_LH_BUCKETS ((64 - XPROBE_LH_SUB_BITS + 1) * XPROBE_LH_SUB) /* 976 */

/*
 * The bucket of @v (above).  No loop, no clz (BPF has neither cheap) and no
 * branch but the first: floor(log2 v) by six steps whose "is the upper half
 * non-zero" test is arithmetic ((y + 2^n - 1) >> n is 1 for any y in
 * [1, 2^n), 0 for y == 0).  A branch per step would make 64 paths through
 * every BPF program for the verifier to walk.
 */
static inline __attribute__((always_inline)) unsigned int xprobe_lh_bucket_of(unsigned long long v)
{
	unsigned long long x = v, t, k;

	if (v < XPROBE_LH_SUB)
		return (unsigned int)v;
	t = ((x >> 32) + 0xffffffffull) >> 32; /* x >> 32 < 2^32 */
	k = t << 5;
	x >>= t << 5;
	t = ((x >> 16) + 0xffffull) >> 16; /* x < 2^32: x >> 16 < 2^16 */
	k += t << 4;
	x >>= t << 4;
	t = ((x >> 8) + 0xffull) >> 8;
	k += t << 3;
	x >>= t << 3;
	t = ((x >> 4) + 0xfull) >> 4;
	k += t << 2;
	x >>= t << 2;
	t = ((x >> 2) + 0x3ull) >> 2;
	k += t << 1;
	x >>= t << 1;
	k += x >> 1; /* x < 4 */
	return (unsigned int)((k - (XPROBE_LH_SUB_BITS - 1)) * XPROBE_LH_SUB +
			      ((v >> (k - XPROBE_LH_SUB_BITS)) & (XPROBE_LH_SUB - 1)));
}

#endif /* XPROBE_LATENCY_BUCKETS_H */
