/* SPDX-License-Identifier: Apache-2.0 */
/*
 * latency_view.c - the terminal view's histograms and per-thread lines of
 * a measurement (latency_view.h): counts and nearest-rank statistics over
 * the correlation's pairs, nothing estimated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "latency_view.h"

unsigned xp_pow2_bin(uint64_t ns)
{
	/* ns in [2^k, 2^(k+1)) -> k + 1; 0 -> 0 */
	return ns ? 64u - (unsigned)__builtin_clzll(ns) : 0u;
}

void xp_latency_pow2(const struct xp_pair *p, size_t n, uint64_t bins[XP_POW2_BINS])
{
	size_t i;

	memset(bins, 0, XP_POW2_BINS * sizeof(bins[0]));
	for (i = 0; i < n; i++)
		bins[xp_pow2_bin(p[i].latency_ns)]++;
}

/* Buckets of @step from min rounded down to it, through max, less one
 * (the whole u64 range in 1 ns steps would overflow the count). */
static uint64_t steps_for(uint64_t min, uint64_t max, uint64_t step, uint64_t *lo)
{
	*lo = min / step * step;
	return (max - *lo) / step;
}

void xp_latency_linear(const struct xp_pair *p, size_t n, struct xp_linear_hist *h)
{
	static const uint64_t mant[] = { 1, 2, 5 };
	uint64_t min = UINT64_MAX, max = 0, pow10 = 1;
	size_t i;
	int k;

	memset(h, 0, sizeof(*h));
	if (!n)
		return;
	for (i = 0; i < n; i++) {
		if (p[i].latency_ns < min)
			min = p[i].latency_ns;
		if (p[i].latency_ns > max)
			max = p[i].latency_ns;
	}
	/* the smallest 1/2/5 x 10^k step that needs at most TARGET buckets;
	 * 5 x 10^18 always does (any u64 range is under 4 of them) */
	for (k = 0; k <= 18; k++, pow10 *= 10) {
		for (i = 0; i < sizeof(mant) / sizeof(mant[0]); i++) {
			uint64_t step = mant[i] * pow10, lo;

			if (steps_for(min, max, step, &lo) >= XP_LINEAR_TARGET)
				continue;
			h->lo = lo;
			h->step = step;
			h->step_exp = k;
			h->n = (size_t)steps_for(min, max, step, &lo) + 1;
			goto count;
		}
	}
	return; /* not reached */
count:
	/* invariant: lo <= min and (max - lo) / step < n <= TARGET */
	for (i = 0; i < n; i++)
		h->counts[(p[i].latency_ns - h->lo) / h->step]++;
}

struct tid_lat {
	uint32_t tid;
	uint64_t lat;
};

static int tid_cmp(const void *a, const void *b)
{
	const struct tid_lat *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct xp_thread_latency *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int xp_latency_threads(const struct xp_capture *c, const struct xp_pair *p, size_t n,
		       struct xp_thread_latency **out, size_t *nout)
{
	struct xp_thread_latency *t = NULL;
	struct tid_lat *v = NULL;
	uint64_t *lat = NULL;
	size_t i, j, nt = 0;
	int rc = -ENOMEM;

	*out = NULL;
	*nout = 0;
	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	lat = malloc(n * sizeof(*lat));
	if (!v || !lat)
		goto out;
	for (i = 0; i < n; i++) {
		v[i].tid = c->events[p[i].start].tid;
		v[i].lat = p[i].latency_ns;
	}
	qsort(v, n, sizeof(*v), tid_cmp);
	for (i = 0; i < n; i++)
		nt += !i || v[i].tid != v[i - 1].tid;
	t = calloc(nt, sizeof(*t));
	if (!t)
		goto out;
	nt = 0;
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && v[j].tid == v[i].tid; j++)
			lat[j] = v[j].lat;
		t[nt].tid = v[i].tid;
		t[nt].count = j - i;
		xp_latency_stats_compute(lat + i, j - i, &t[nt].st);
		nt++;
	}
	qsort(t, nt, sizeof(*t), thread_cmp);
	*out = t;
	*nout = nt;
	t = NULL;
	rc = 0;
out:
	free(t);
	free(v);
	free(lat);
	return rc;
}
