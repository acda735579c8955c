/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_live_rules.c - the rules of a live capture (src/live/
 * live_rules.c, stated in live_source.h) on hand-made captures: the
 * samples rule (waits for enough end records, throttles on large
 * captures, counts pairs of a merged host + NVTX stream), the cut at the
 * stopping point, and the loss rule (dated losses after the cut are not
 * losses of the capture; undated ones and ones inside the window are).
 */
#include <stdlib.h>

#include "live/live_source.h"
#include "selector/selector.h"
#include "testlib.h"
#include "test_selector_events.h"

struct rule_fx {
	struct xp_selector from, to;
	struct xp_live_samples_rule r;
};

static void rule_init(struct rule_fx *f, const char *from, const char *to, enum xp_policy p,
		      uint64_t samples)
{
	struct xp_error err = { 0 };

	memset(f, 0, sizeof(*f));
	if (xp_selector_parse(from, &f->from, &err) || xp_selector_parse(to, &f->to, &err)) {
		fprintf(stderr, "selector: %s\n", err.message);
		abort();
	}
	f->r.from = &f->from;
	f->r.to = &f->to;
	f->r.opts.policy = p;
	f->r.opts.samples = samples;
	f->r.opts.max_events = 1u << 20;
}

static void rule_free(struct rule_fx *f)
{
	xp_live_samples_rule_free(&f->r);
	xp_selector_free(&f->from);
	xp_selector_free(&f->to);
}

/* @n more read() calls on thread 7, 100 ns apart, each 10 ns long: the
 * k-th call of a capture enters at 1000 + 100 k. */
static void reads(struct xp_capture *c, int n)
{
	uint64_t k0 = 0;
	size_t j;
	int i;

	for (j = 0; j < c->count; j++)
		k0 += c->events[j].event_type == XP_EV_SYSCALL_ENTRY;
	for (i = 0; i < n; i++) {
		uint64_t k = k0 + (uint64_t)i;

		tev_syscall(c, 100u * k + 1000, 7, "read", 0);
		tev_syscall(c, 100u * k + 1010, 7, "read", 1);
	}
}

#define READ_FROM "syscall:read:entry"
#define READ_TO "syscall:read:exit"

static void test_count_pairs(void)
{
	struct xp_error err = { 0 };
	struct rule_fx f;
	struct xp_capture c;
	uint64_t m = 99;

	rule_init(&f, READ_FROM, READ_TO, XP_POLICY_EXACT, 3);
	xp_capture_init(&c, 1000);
	CHECK(xp_live_count_pairs(&f.r, &c, &m, &err) == 0); /* none: 0, not an error */
	CHECK_EQ_U64(m, 0);
	reads(&c, 5);
	CHECK(xp_live_count_pairs(&f.r, &c, &m, &err) == 0);
	CHECK_EQ_U64(m, 3); /* the correlator stops at the bound */
	xp_capture_free(&c);
	rule_free(&f);
}

static void test_enough(void)
{
	struct xp_error err = { 0 };
	struct rule_fx f;
	struct xp_capture c;

	rule_init(&f, READ_FROM, READ_TO, XP_POLICY_EXACT, 3);
	xp_capture_init(&c, 1u << 20);
	reads(&c, 2);
	/* not enough end records: the correlator is not even asked */
	CHECK(xp_live_samples_enough(&f.r, &c, 2, false, 1, &err) == 0);
	CHECK_EQ_U64(f.r.last_count, 0);
	/* enough end records but only two pairs */
	CHECK(xp_live_samples_enough(&f.r, &c, 3, false, 1, &err) == 0);
	CHECK_EQ_U64(f.r.last_count, 4);
	reads(&c, 1);
	CHECK(xp_live_samples_enough(&f.r, &c, 3, false, 2, &err) == 1);
	/* the bound 0 never stops */
	f.r.opts.samples = 0;
	CHECK(xp_live_samples_enough(&f.r, &c, 3, false, 3, &err) == 0);
	xp_capture_free(&c);
	rule_free(&f);
}

/* A large capture is recounted only after 1/8 growth or 20 ms, unless full. */
static void test_enough_throttle(void)
{
	struct xp_error err = { 0 };
	struct rule_fx f;
	struct xp_capture c;
	uint64_t now = 1000000000ull;
	int i;

	rule_init(&f, READ_FROM, READ_TO, XP_POLICY_EXACT, 5000);
	xp_capture_init(&c, 1u << 20);
	/* 4000 exits without entries: no pairs, many end records */
	for (i = 0; i < 4000; i++)
		tev_syscall(&c, 10u + (uint64_t)i, 9, "read", 1);
	CHECK(xp_live_samples_enough(&f.r, &c, 5000, false, now, &err) == 0);
	CHECK_EQ_U64(f.r.last_count, 4000);
	reads(&c, 100); /* 4200 events, still no 5000 pairs */
	CHECK(xp_live_samples_enough(&f.r, &c, 5000, false, now + 1, &err) == 0);
	CHECK_EQ_U64(f.r.last_count, 4000); /* throttled: not recounted */
	CHECK(xp_live_samples_enough(&f.r, &c, 5000, true, now + 2, &err) == 0);
	CHECK_EQ_U64(f.r.last_count, 4200); /* full: counted at once */
	reads(&c, 5000); /* 5100 pairs now */
	CHECK(xp_live_samples_enough(&f.r, &c, 9100, false, now + 3, &err) == 1);
	xp_capture_free(&c);
	rule_free(&f);
}

/* After the target exited: the final capture decides, losses aside. */
static void test_samples_formed(void)
{
	struct xp_error err = { 0 };
	struct rule_fx f;
	struct xp_capture c;

	rule_init(&f, READ_FROM, READ_TO, XP_POLICY_EXACT, 3);
	xp_capture_init(&c, 1u << 20);
	reads(&c, 2);
	CHECK(xp_live_samples_formed(&f.r, &c, &err) == 0);
	reads(&c, 1);
	c.dropped = 5; /* the correlator alone would refuse it */
	CHECK(xp_live_samples_formed(&f.r, &c, &err) == 1);
	CHECK_EQ_U64(c.dropped, 5); /* left for the cut rule */
	CHECK(xp_live_samples_formed(NULL, &c, &err) == 0); /* a duration capture */
	xp_capture_free(&c);
	rule_free(&f);
}

static void test_trim(void)
{
	struct rule_fx f;
	struct xp_capture c;

	rule_init(&f, READ_FROM, READ_TO, XP_POLICY_EXACT, 3);
	xp_capture_init(&c, 100);
	reads(&c, 10);
	xp_capture_sort_and_sequence(&c);
	{
		const struct xp_live_source_stats host = { .dropped = 0 };
		const struct xp_live_source_stats *st[1] = { &host };

		CHECK(xp_live_cut_at_stop(&f.r, &c, st, 1) == 0);
	}
	/* the exit of the third read is event 5 */
	CHECK_EQ_U64(c.count, 6);
	CHECK_EQ_U64(c.events[5].timestamp_ns, 1210);
	CHECK_EQ_U64(c.dropped, 0);
	xp_capture_free(&c);
	rule_free(&f);
}

/* Losses: dated after the cut, dated inside, undated; one or two sources. */
static void test_losses(void)
{
	struct xp_live_source_stats host = { 0 }, agent = { 0 };
	const struct xp_live_source_stats *st[2] = { &host, &agent };
	struct rule_fx f;
	struct xp_capture c;

	rule_init(&f, READ_FROM, READ_TO, XP_POLICY_EXACT, 3);
	xp_capture_init(&c, 100);
	reads(&c, 10);

	/* a loss dated after the last kept event: cut kept, no loss */
	host.dropped = 4;
	host.first_drop_ts = 1211;
	CHECK(xp_live_cut_at_stop(&f.r, &c, st, 2) == 0);
	CHECK_EQ_U64(c.count, 6);
	CHECK_EQ_U64(c.dropped, 0);

	/* dated at the last kept event: inside, everything kept */
	c.count = 20;
	host.first_drop_ts = 1210;
	CHECK(xp_live_cut_at_stop(&f.r, &c, st, 2) == 0);
	CHECK_EQ_U64(c.count, 20);
	CHECK_EQ_U64(c.dropped, 4);

	/* a source that cannot date its losses: inside, all sources summed */
	host.first_drop_ts = 5000;
	agent.dropped = 2;
	agent.first_drop_ts = 0; /* the Agent counts drops, not their times */
	CHECK(xp_live_cut_at_stop(&f.r, &c, st, 2) == 0);
	CHECK_EQ_U64(c.count, 20);
	CHECK_EQ_U64(c.dropped, 6);

	/* without a cut every loss counts */
	agent.dropped = 0;
	xp_live_losses(&c, st, 2);
	CHECK_EQ_U64(c.dropped, 4);
	host.dropped = 0;
	xp_live_losses(&c, st, 2);
	CHECK_EQ_U64(c.dropped, 0);
	xp_capture_free(&c);
	rule_free(&f);
}

/*
 * The merged stream of two sources (host events and the Agent's NVTX
 * events, appended source by source, not in time order): the samples
 * rule counts pairs across sources (first-after from a syscall entry to
 * the end of the "step" range) and the cut lands on the NVTX end that
 * completed the second pair.
 */
static void test_merged_stream(void)
{
	struct xp_error err = { 0 };
	struct xp_live_source_stats host = { 0 }, agent = { 0 };
	const struct xp_live_source_stats *st[2] = { &host, &agent };
	struct rule_fx f;
	struct xp_capture c;
	uint64_t m = 0;
	int i;

	rule_init(&f, "syscall:read:entry", "cuda:nvtx_range_end:name~^step$",
		  XP_POLICY_FIRST_AFTER, 2);
	xp_capture_init(&c, 100);
	/* the eBPF source's poll: reads at 1000, 2000, 3000, 4000 */
	for (i = 1; i <= 4; i++)
		tev_syscall(&c, 1000u * (uint64_t)i, 7, "read", 0);
	/* the Agent's snapshot: step ranges ending 500 ns after each read,
	 * and a range of another name the end selector ignores */
	for (i = 1; i <= 4; i++) {
		tev_nvtx(&c, 1000u * (uint64_t)i + 100, 8, "step", 0, XP_NVTX_THREAD, (uint64_t)i);
		tev_nvtx(&c, 1000u * (uint64_t)i + 500, 8, "step", 1, XP_NVTX_THREAD, (uint64_t)i);
		tev_nvtx(&c, 1000u * (uint64_t)i + 600, 8, "other", 1, XP_NVTX_THREAD, 9);
	}
	CHECK(xp_live_count_pairs(&f.r, &c, &m, &err) == 0);
	CHECK_EQ_U64(m, 2);
	CHECK(xp_live_samples_enough(&f.r, &c, 4, false, 1, &err) == 1);
	xp_capture_sort_and_sequence(&c);
	CHECK(xp_live_cut_at_stop(&f.r, &c, st, 2) == 0);
	CHECK(c.count > 0);
	CHECK_EQ_U64(c.events[c.count - 1].timestamp_ns, 2500);
	CHECK(c.events[c.count - 1].event_type == XP_EV_NVTX_RANGE_END);
	CHECK_EQ_U64(c.dropped, 0);
	xp_capture_free(&c);
	rule_free(&f);
}

static int ok_at_least_7(void *ctx, struct xp_capture *c)
{
	(*(int *)ctx)++;
	return c->count >= 7;
}

static int fails(void *ctx, struct xp_capture *c)
{
	(void)ctx;
	(void)c;
	return -5;
}

static void test_live_trim(void)
{
	struct xp_capture c;
	int calls = 0, err, i;

	xp_capture_init(&c, 100);
	for (i = 0; i < 20; i++)
		xp_capture_add(&c, &err)->timestamp_ns = (uint64_t)i;
	CHECK(xp_live_trim(&c, 2, ok_at_least_7, &calls) == 7);
	CHECK_EQ_U64(c.count, 7);
	CHECK(calls <= 5); /* binary search, not a scan */
	CHECK(xp_live_trim(&c, 7, ok_at_least_7, &calls) == 7);
	/* a failing predicate restores the capture */
	c.count = 20;
	CHECK(xp_live_trim(&c, 2, fails, NULL) == -5);
	CHECK_EQ_U64(c.count, 20);
	xp_capture_free(&c);
}

int main(void)
{
	test_count_pairs();
	test_enough();
	test_enough_throttle();
	test_samples_formed();
	test_trim();
	test_losses();
	test_merged_stream();
	test_live_trim();
	TEST_MAIN_END();
}
