/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_bars.h - the terminal's latency histograms in bpftrace's layout,
 * one line per bucket:
 *
 *   [262us, 524us)             40 |@@@@@@@@@@@@@                           |
 *
 * the bucket's [lower, upper) in readable units, its count, and a bar
 * scaled to the widest bucket (a non-empty bucket gets at least one @);
 * empty buckets before the first and after the last non-empty one are
 * not printed.  Written once for every human view that shows a
 * distribution: `measure --histogram` (render_histogram.c, folded from
 * its log-linear buckets) and exact measurements (render_measurement.c,
 * from the pairs: src/correlate/latency_view.h).
 */
#ifndef XP_REPORT_RENDER_BARS_H
#define XP_REPORT_RENDER_BARS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../correlate/latency_view.h"

#define XP_BAR_WIDTH 40 /* '@' of the widest bucket */

/* SGR sequences of the human views, used only when @color is set. */
#define XP_SGR_BAR "\033[32m"
#define XP_SGR_BOLD "\033[1m"
#define XP_SGR_WARN "\033[33m"
#define XP_SGR_RESET "\033[0m"

/* Power-of-two bins (bin 0: [0, 1); bin k + 1: [2^k, 2^(k+1)) ns). */
void xp_render_pow2_bars(FILE *out, const uint64_t bins[XP_POW2_BINS], bool color);

/*
 * The same bars, each split by what its pairs' time was made of: bin i's
 * bar is drawn with glyphs[j] for a share of its length proportional to
 * parts[i][j] (largest remainders, so the shares fill the bar exactly),
 * e.g. "ccccrrrrSSSSSSSS" for a bucket a quarter on CPU, a quarter in the
 * run queue and half blocked (--explain).
 */
#define XP_BAR_PARTS 4
void xp_render_pow2_bars_parts(FILE *out, const uint64_t bins[XP_POW2_BINS],
			       const uint64_t (*parts)[XP_BAR_PARTS], const char *glyphs,
			       bool color);

/* A linear histogram; its bounds printed exactly, in the unit of its
 * largest bound with as many decimals as its step needs. */
void xp_render_linear_bars(FILE *out, const struct xp_linear_hist *h, bool color);

/* The linear step exactly, in the largest unit it is a whole number of
 * ("100ns", "5us", "200us", "2ms"). */
void xp_render_linear_step(char *buf, size_t size, const struct xp_linear_hist *h);

#endif /* XP_REPORT_RENDER_BARS_H */
