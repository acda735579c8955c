/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pair_count.h - how many pairs xp_correlate would form in a capture that
 * grows, counted as its events arrive instead of correlating it again.
 *
 * The live samples rule asks "are there N pairs yet?" after every poll;
 * correlating the whole capture each time costs O(capture) per question.
 * This counter keeps each policy's pairing state across questions and
 * feeds it only the events added since the last one, so a question costs
 * O(new events).  Its answer is the correlator's `matched` for the same
 * capture, selectors and options (tests/unit/test_pair_count.c checks it
 * against xp_correlate on random streams, for every policy and key kind).
 *
 * Why that holds.  Every policy walks the merged timeline of selected
 * starts and ends -- by timestamp, starts before ends on a tie, capture
 * order within a side -- and each one's pair count is a function of a
 * running state along that walk: one counter of open starts (first-after),
 * one per stream (stream-order), one per thread (stack-nested: its depth),
 * an open start per key (the lifecycles), per key the starts, ends and
 * in-order zipped pairs (the exact CUPTI key: a key pairs only when both
 * counts agree); nearest pairs min(starts, ends).  Events that arrive in
 * timeline order extend the walk.  One that arrives before the walk's end
 * (two CPUs' records interleaved in the ring, or a start after an end of
 * the same timestamp) makes the state stale: the counter then replays the
 * whole capture in timeline order, when its caller allows (the caller
 * bounds how often, as it bounded full correlations).
 *
 * What the counter does not answer -- selected events of mixed clocks
 * (the correlator's CLOCK_ALIGNMENT_FAILED), a policy the selectors do
 * not allow -- it declines with -ENOTSUP, and the caller correlates.
 * Captures that drop events or exceed max_events are the caller's to
 * check (the correlator refuses both).
 */
#ifndef XP_CORRELATE_PAIR_COUNT_H
#define XP_CORRELATE_PAIR_COUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "correlate.h"
#include "keymap.h"

struct xp_pair_count_group;

struct xp_pair_count {
	struct xp_selector *start, *end;
	struct xp_correlate_opts opts;
	int rule;                   /* which walk (pair_count.c) */
	bool activity_key;          /* exact key over GPU activity */
	bool no_context;            /* exact key without context ids */
	size_t fed;                 /* capture events looked at */
	bool stale;                 /* an event arrived out of timeline order */
	bool clock_seen;            /* clock group of the first selected event */
	bool clock_cupti;
	bool clock_mixed;
	bool have_t0;               /* the duration window's limit is known */
	uint64_t limit;
	bool have_last;             /* the walk's last step */
	uint64_t last_ts;
	int last_side;
	uint64_t starts, ends;      /* selected inside the window */
	uint64_t open;              /* first-after: starts not yet paired */
	uint64_t pairs;
	struct xp_keymap map;       /* keyed walks: key -> group */
	struct xp_pair_count_group *grp; /* per group state */
	size_t grp_cap;
};

/*
 * Count pairs of @start -> @end under @opts (policy, samples, duration_ns,
 * max_events as xp_correlate takes them).  0, or -ENOTSUP when the
 * correlator would refuse the policy for these selectors.
 */
int xp_pair_count_init(struct xp_pair_count *pc, struct xp_selector *start,
		       struct xp_selector *end, const struct xp_correlate_opts *opts);
void xp_pair_count_free(struct xp_pair_count *pc);

/*
 * Take the events of @c added since the last call (all of them after a
 * shrink).  Returns 1 when xp_pair_count_matched() is @c's count now; 0
 * when the state went stale and @replay_ok is false (call again with it
 * true); -ENOTSUP when the correlator would fail on @c's selected events
 * (mixed clocks: correlate to get its error); -ENOMEM.
 */
int xp_pair_count_update(struct xp_pair_count *pc, const struct xp_capture *c, bool replay_ok);

/* The correlator's `matched`: the pairs, at most opts.samples. */
uint64_t xp_pair_count_matched(const struct xp_pair_count *pc);

/*
 * For a capture in timeline order (sorted by timestamp): the length of
 * its shortest prefix whose correlation holds @want pairs, feeding a fresh
 * counter event by event; 0 when even the whole capture holds fewer.
 * -EAGAIN when the prefix walk met an event out of order (a start after
 * an end of the same timestamp: the prefixes' walks then differ from the
 * counter's); -ENOTSUP or -ENOMEM as xp_pair_count_update.  Only policies
 * whose count never falls as a prefix grows answer (all but the exact
 * CUPTI key, which declines with -ENOTSUP: one more start makes a key
 * ambiguous).
 */
long xp_pair_count_first_prefix(struct xp_pair_count *pc, const struct xp_capture *c,
				uint64_t want);

#endif /* XP_CORRELATE_PAIR_COUNT_H */
