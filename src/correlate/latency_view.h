/* SPDX-License-Identifier: Apache-2.0 */
/*
 * latency_view.h - what the terminal view of a measurement shows beyond
 * its percentiles, computed from the correlation's pairs: the power-of-two
 * histogram (bpftrace's hist()), a linear histogram with an automatic
 * step (bpftrace's lhist() without its arguments), and one line of
 * statistics per thread.  Pure functions of the pairs (and the capture,
 * for the threads), unit-tested in tests/unit/test_correlate_view.c; the
 * renderer (src/report/render_measurement.c) only prints them.  None of
 * this is in the JSON document: the contract's MeasurementResult is
 * closed, and every pair is in its evidence already.
 */
#ifndef XP_CORRELATE_LATENCY_VIEW_H
#define XP_CORRELATE_LATENCY_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "correlate.h"

/* [0, 1) and [2^k, 2^(k+1)) for k = 0..63: bin 0 holds 0 ns, bin k + 1
 * holds [2^k, 2^(k+1)) ns. */
#define XP_POW2_BINS 65

/* The power-of-two bin of @ns. */
unsigned xp_pow2_bin(uint64_t ns);

/* Count @n pairs' latencies into @bins (zeroed first). */
void xp_latency_pow2(const struct xp_pair *p, size_t n, uint64_t bins[XP_POW2_BINS]);

/* At most this many linear buckets (the automatic step aims at 20). */
#define XP_LINEAR_TARGET 20
#define XP_LINEAR_MAX_BUCKETS 24

/*
 * A linear histogram: bucket i is [lo + i * step, lo + (i + 1) * step).
 * step is the smallest of 1, 2, 5 x 10^k ns that covers [min, max] in at
 * most XP_LINEAR_TARGET steps from lo = min rounded down to a multiple
 * of step; the first and the last bucket are never empty.
 */
struct xp_linear_hist {
	uint64_t lo, step;
	size_t n; /* 0 when there are no pairs */
	int step_exp; /* step = {1,2,5} x 10^step_exp */
	uint64_t counts[XP_LINEAR_MAX_BUCKETS];
};

void xp_latency_linear(const struct xp_pair *p, size_t n, struct xp_linear_hist *h);

/* One thread's pairs (the start event's tid). */
struct xp_thread_latency {
	uint32_t tid;
	uint64_t count;
	struct xp_latency_stats st; /* nearest rank, as the summary's */
};

/*
 * Per-thread statistics of @n pairs of @c, sorted by count (descending),
 * then tid.  *@out (free() it) holds *@nout threads.  Returns 0 or
 * -ENOMEM.
 */
int xp_latency_threads(const struct xp_capture *c, const struct xp_pair *p, size_t n,
		       struct xp_thread_latency **out, size_t *nout);

#endif /* XP_CORRELATE_LATENCY_VIEW_H */
