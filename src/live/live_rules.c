/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live_rules.c - when a live capture stops and what it keeps: the samples
 * rule, the cut at the stopping point, and the loss rule (live_source.h
 * states them).  Functions of a capture, counters and the rule's pair
 * counter (src/correlate/pair_count.h: the pairs counted as events arrive,
 * so a round costs what it added, not the capture), so the unit tests
 * (tests/unit/test_live_rules.c) drive them with made-up captures; the
 * loop (live_run.c) calls them.
 *
 * Why the cut: the loop notices "enough" a poll period after the N-th
 * pair completed, and whatever arrived meanwhile is in the capture; cut
 * at the event that completed the N-th pair, the capture holds the same
 * events however fast this machine polled.
 *
 * Why losses after the cut do not count: a samples capture's ring is
 * sized for the capture plus a burst, not for everything a fast target
 * emits until the loop notices; a loss dated after the last kept event
 * lost nothing the measurement uses.  A loss that cannot be dated (the
 * Agent counts drops, not their times) is treated as inside.
 */
#include <errno.h>

#include "live_source.h"

int xp_live_count_pairs(struct xp_live_samples_rule *r, const struct xp_capture *c,
			uint64_t *matched, struct xp_error *err)
{
	struct xp_correlation corr;
	struct xp_error lerr = { 0 };
	int rc;

	*matched = 0;
	rc = xp_correlate(c, r->from, r->to, &r->opts, &corr, &lerr);
	if (!rc)
		*matched = corr.matched;
	else if (rc == -XPROBE_E_NO_MATCHED_SAMPLES || rc == -ECANCELED)
		rc = 0; /* none yet, or cancelled: the stop reason says which */
	else
		xp_error_move(err, &lerr);
	xp_correlation_free(&corr);
	xp_error_clear(&lerr);
	return rc;
}

/*
 * The counter's answer for @c: 1 with *@matched, 0 when it must walk the
 * whole capture again and @replay_ok is false, -ENOTSUP when the
 * correlator must count (the counter declines, or the capture is one the
 * correlator refuses: lossy, over its bound), -ENOMEM.
 */
static int count_incremental(struct xp_live_samples_rule *r, const struct xp_capture *c,
			     bool replay_ok, uint64_t *matched)
{
	int rc;

	if (r->counting < 0 || c->dropped || c->count > r->opts.max_events)
		return -ENOTSUP;
	if (!r->counting) {
		if (xp_pair_count_init(&r->pc, r->from, r->to, &r->opts)) {
			r->counting = -1;
			return -ENOTSUP;
		}
		r->counting = 1;
	}
	rc = xp_pair_count_update(&r->pc, c, replay_ok);
	if (rc == 1)
		*matched = xp_pair_count_matched(&r->pc);
	else if (rc < 0 && rc != -ENOTSUP && rc != -ENOMEM)
		rc = -ENOTSUP; /* a count the counter cannot vouch for */
	return rc;
}

int xp_live_samples_enough(struct xp_live_samples_rule *r, struct xp_capture *c,
			   uint64_t end_records, bool full, uint64_t now, struct xp_error *err)
{
	uint64_t samples = r->opts.samples, matched = 0;
	bool throttled;
	int rc;

	if (!samples)
		return 0;
	/* every pair uses its own end event */
	if (end_records < samples)
		return 0;
	throttled = !full && c->count >= XP_LIVE_RULE_CHEAP_EVENTS &&
		    c->count < r->last_count + r->last_count / 8 &&
		    now - r->last_ns < XP_LIVE_RULE_RECHECK_NS;
	if (!throttled) {
		r->last_count = c->count;
		r->last_ns = now;
	}
	rc = count_incremental(r, c, !throttled, &matched);
	if (rc == -ENOMEM)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	if (rc == 0)
		return 0; /* out of order: walked again at the next unthrottled round */
	if (rc < 0) {
		if (throttled)
			return 0;
		rc = xp_live_count_pairs(r, c, &matched, err);
		if (rc)
			return rc;
	}
	r->matched = matched;
	return matched >= samples;
}

int xp_live_samples_formed(struct xp_live_samples_rule *r, struct xp_capture *c,
			   struct xp_error *err)
{
	uint64_t dropped = c->dropped, matched = 0;
	int rc;

	if (!r || !r->opts.samples)
		return 0;
	/* the correlator refuses a lossy capture: count without the losses,
	 * the cut rule then decides whether one lies inside */
	c->dropped = 0;
	rc = xp_live_count_pairs(r, c, &matched, err);
	c->dropped = dropped;
	if (rc)
		return rc;
	return matched >= r->opts.samples;
}

long xp_live_trim(struct xp_capture *c, size_t lo, int (*ok)(void *ctx, struct xp_capture *c),
		  void *ctx)
{
	size_t full = c->count, hi = full, a = lo < full ? lo : full;

	/* invariant: ok(hi) holds; the answer lies in [a, hi] */
	while (a < hi) {
		size_t mid = a + (hi - a) / 2;
		int rc;

		c->count = mid;
		rc = ok(ctx, c);
		if (rc < 0) {
			c->count = full;
			return rc;
		}
		if (rc)
			hi = mid;
		else
			a = mid + 1;
	}
	c->count = hi;
	return (long)hi;
}

/* xp_live_trim's predicate: the prefix already holds the samples. */
static int trim_ok(void *ctx, struct xp_capture *c)
{
	struct xp_live_samples_rule *r = ctx;
	struct xp_error err = { 0 };
	uint64_t matched;
	int rc = xp_live_count_pairs(r, c, &matched, &err);

	xp_error_clear(&err);
	if (rc)
		return rc;
	return matched >= r->opts.samples;
}

/*
 * What xp_live_trim(c, samples, trim_ok) finds, in one walk of the sorted
 * capture: the shortest prefix holding the samples (its count only grows
 * with the prefix, so the bisection finds that one too), at least
 * min(samples, count) events, the whole capture when no prefix holds
 * them.  -EAGAIN/-ENOTSUP where the counter cannot tell (then bisect).
 */
static long first_prefix(struct xp_live_samples_rule *r, struct xp_capture *c)
{
	struct xp_pair_count pc;
	size_t lo = (size_t)r->opts.samples < c->count ? (size_t)r->opts.samples : c->count;
	long first;

	if (xp_pair_count_init(&pc, r->from, r->to, &r->opts))
		return -ENOTSUP;
	first = xp_pair_count_first_prefix(&pc, c, r->opts.samples);
	xp_pair_count_free(&pc);
	if (first < 0)
		return first == -ENOMEM ? -ENOMEM : first;
	if (!first)
		first = (long)c->count;
	if ((size_t)first < lo)
		first = (long)lo;
	c->count = (size_t)first;
	return first;
}

void xp_live_samples_rule_free(struct xp_live_samples_rule *r)
{
	if (!r)
		return;
	xp_pair_count_free(&r->pc);
	r->counting = 0;
}

static uint64_t all_losses(const struct xp_live_source_stats *const *st, size_t n)
{
	uint64_t d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d += st[i]->dropped;
	return d;
}

void xp_live_losses(struct xp_capture *c, const struct xp_live_source_stats *const *st, size_t n)
{
	c->dropped = all_losses(st, n);
}

int xp_live_cut_at_stop(struct xp_live_samples_rule *r, struct xp_capture *c,
			const struct xp_live_source_stats *const *st, size_t n)
{
	size_t full = c->count, i;
	uint64_t last;
	long cut;

	/* the correlator refuses a lossy capture: count pairs without them */
	c->dropped = 0;
	cut = first_prefix(r, c);
	if (cut == -EAGAIN || cut == -ENOTSUP)
		cut = xp_live_trim(c, (size_t)r->opts.samples, trim_ok, r);
	if (cut < 0) {
		c->dropped = all_losses(st, n);
		return (int)cut;
	}
	last = c->count ? c->events[c->count - 1].timestamp_ns : 0;
	for (i = 0; i < n; i++) {
		if (!st[i]->dropped)
			continue;
		if (!c->count || st[i]->first_drop_ts <= last) {
			/* a loss inside the window: keep everything for the artifact */
			c->count = full;
			c->dropped = all_losses(st, n);
			return 0;
		}
	}
	return 0;
}
