/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_bars.c - bpftrace-style histogram lines (render_bars.h), for
 * power-of-two and linear buckets.  Labels of power-of-two bounds use the
 * histogram's readable units (xp_report_fmt_ns: three significant digits,
 * 2^18 ns prints as 262us); linear bounds are multiples of a 1/2/5 x 10^k
 * step and are printed exactly, with integer arithmetic.
 */
#include <inttypes.h>
#include <string.h>

#include "render_bars.h"
#include "format.h"

#define LABEL_MAX 64
#define LABEL_MIN_WIDTH 20

/* '@' for @count when @top fills the bar: at least one for a non-empty
 * bucket, XP_BAR_WIDTH for the widest. */
static unsigned scale(uint64_t count, uint64_t top)
{
	unsigned __int128 n = ((unsigned __int128)count * XP_BAR_WIDTH + top - 1) / top;

	return n > XP_BAR_WIDTH ? XP_BAR_WIDTH : (unsigned)n;
}

/* Fill @bar's first @k characters with @glyphs in proportion to @parts
 * (largest remainders); no parts at all: '@'. */
static void fill_parts(char *bar, unsigned k, const uint64_t *parts, const char *glyphs)
{
	unsigned n[XP_BAR_PARTS], used = 0, i, j, at = 0;
	double want[XP_BAR_PARTS], sum = 0.0;

	for (i = 0; i < XP_BAR_PARTS; i++)
		sum += (double)parts[i];
	if (sum <= 0.0) {
		memset(bar, '@', k);
		return;
	}
	for (i = 0; i < XP_BAR_PARTS; i++) {
		want[i] = (double)parts[i] * k / sum;
		n[i] = (unsigned)want[i];
		used += n[i];
	}
	while (used < k) { /* the largest remainder takes the next character */
		unsigned best = 0;

		for (i = 1; i < XP_BAR_PARTS; i++)
			if (want[i] - n[i] > want[best] - n[best])
				best = i;
		n[best]++;
		want[best] = n[best]; /* its remainder is spent */
		used++;
	}
	for (i = 0; i < XP_BAR_PARTS; i++)
		for (j = 0; j < n[i] && at < k; j++)
			bar[at++] = glyphs[i];
}

/* One line per bucket from the first non-empty to the last; @parts (may
 * be NULL) splits each bar. */
static void bars(FILE *out, char (*label)[LABEL_MAX], const uint64_t *counts, size_t n, bool color,
		 const uint64_t (*parts)[XP_BAR_PARTS], const char *glyphs)
{
	size_t first = n, last = 0, i;
	uint64_t top = 0;
	int width = LABEL_MIN_WIDTH;

	for (i = 0; i < n; i++) {
		if (!counts[i])
			continue;
		if (first == n)
			first = i;
		last = i;
		if (counts[i] > top)
			top = counts[i];
	}
	if (first == n)
		return;
	for (i = first; i <= last; i++)
		if ((int)strlen(label[i]) > width)
			width = (int)strlen(label[i]);
	for (i = first; i <= last; i++) {
		char bar[XP_BAR_WIDTH + 1];
		unsigned k = scale(counts[i], top);

		if (parts)
			fill_parts(bar, k, parts[i], glyphs);
		else
			memset(bar, '@', k);
		memset(bar + k, ' ', XP_BAR_WIDTH - k);
		bar[XP_BAR_WIDTH] = '\0';
		if (color && k)
			fprintf(out, "%-*s %8" PRIu64 " |" XP_SGR_BAR "%.*s" XP_SGR_RESET "%s|\n",
				width, label[i], counts[i], (int)k, bar, bar + k);
		else
			fprintf(out, "%-*s %8" PRIu64 " |%s|\n", width, label[i], counts[i], bar);
	}
}

static void pow2_bound(char *buf, size_t size, unsigned bin)
{
	if (bin == 0)
		snprintf(buf, size, "0");
	else if (bin >= 64)
		snprintf(buf, size, "inf");
	else
		xp_report_fmt_ns(buf, size, (double)(1ull << (bin - 1)));
}

static void pow2_labels(char (*label)[LABEL_MAX])
{
	unsigned i;

	for (i = 0; i < XP_POW2_BINS; i++) {
		char lo[24], hi[24];

		pow2_bound(lo, sizeof(lo), i);
		pow2_bound(hi, sizeof(hi), i + 1);
		snprintf(label[i], LABEL_MAX, "[%s, %s)", lo, hi);
	}
}

void xp_render_pow2_bars(FILE *out, const uint64_t bins[XP_POW2_BINS], bool color)
{
	char label[XP_POW2_BINS][LABEL_MAX];

	pow2_labels(label);
	bars(out, label, bins, XP_POW2_BINS, color, NULL, NULL);
}

void xp_render_pow2_bars_parts(FILE *out, const uint64_t bins[XP_POW2_BINS],
			       const uint64_t (*parts)[XP_BAR_PARTS], const char *glyphs,
			       bool color)
{
	char label[XP_POW2_BINS][LABEL_MAX];

	pow2_labels(label);
	bars(out, label, bins, XP_POW2_BINS, color, parts, glyphs);
}

/* @v ns exactly in the unit 10^@unit_exp ns with @dec decimals (v is a
 * multiple of 10^(unit_exp - dec)). */
static void exact_bound(char *buf, size_t size, uint64_t v, int unit_exp, int dec)
{
	static const char *const unit[] = { "ns", "", "", "us", "", "", "ms", "", "", "s" };
	uint64_t div = 1, cut = 1;
	int i;

	for (i = 0; i < unit_exp; i++)
		div *= 10;
	for (i = 0; i < unit_exp - dec; i++)
		cut *= 10;
	if (dec > 0)
		snprintf(buf, size, "%" PRIu64 ".%0*" PRIu64 "%s", v / div, dec, v % div / cut,
			 unit[unit_exp]);
	else
		snprintf(buf, size, "%" PRIu64 "%s", v / div, unit[unit_exp]);
}

void xp_render_linear_step(char *buf, size_t size, const struct xp_linear_hist *h)
{
	int unit_exp = h->step_exp / 3 * 3;

	exact_bound(buf, size, h->step, unit_exp > 9 ? 9 : unit_exp, 0);
}

void xp_render_linear_bars(FILE *out, const struct xp_linear_hist *h, bool color)
{
	char label[XP_LINEAR_MAX_BUCKETS][LABEL_MAX];
	unsigned __int128 top;
	int unit_exp, dec;
	size_t i;

	if (!h->n)
		return;
	/* the unit of the largest bound; decimals down to the step's digit */
	top = (unsigned __int128)h->lo + (unsigned __int128)h->step * h->n;
	unit_exp = top >= 1000000000u ? 9 : top >= 1000000u ? 6 : top >= 1000u ? 3 : 0;
	dec = unit_exp > h->step_exp ? unit_exp - h->step_exp : 0;
	for (i = 0; i < h->n; i++) {
		char lo[32], hi[32];
		uint64_t a = h->lo + h->step * i;
		unsigned __int128 b = (unsigned __int128)a + h->step;

		exact_bound(lo, sizeof(lo), a, unit_exp, dec);
		if (b > UINT64_MAX)
			snprintf(hi, sizeof(hi), "inf");
		else
			exact_bound(hi, sizeof(hi), (uint64_t)b, unit_exp, dec);
		snprintf(label[i], LABEL_MAX, "[%s, %s)", lo, hi);
	}
	bars(out, label, h->counts, h->n, color, NULL, NULL);
}
