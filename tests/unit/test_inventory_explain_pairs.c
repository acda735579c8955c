/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_inventory_explain_pairs.c - evidence pairs x scheduler timeline
 * (src/inventory/explain_pairs.c) on timelines written by hand: each state
 * change inside a pair moves its time to the right part, records of other
 * threads or outside the window change nothing, the parts add up to the
 * latency exactly, and pairs across threads, on a GPU clock or after a
 * gap in the timeline are counted, never explained.
 */
#include <stdlib.h>
#include <string.h>

#include "inventory/explain_pairs.h"
#include "testlib.h"

#define TID 100
#define OTHER 200

static struct xp_capture cap;
static struct xp_pair pairs[8];
static struct xp_correlation corr;
static struct xp_sched_timeline tl;

static void ev(uint32_t tid, uint64_t ts, unsigned clock)
{
	int rc = 0;
	struct xp_event *e = xp_capture_add(&cap, &rc);

	CHECK(e != NULL);
	e->tid = tid;
	e->timestamp_ns = ts;
	e->clock_domain = (uint8_t)clock;
}

/* A pair of events (start, end) on @tid_s/@tid_e. */
static void pair(uint32_t tid_s, uint64_t s, uint32_t tid_e, uint64_t e, unsigned clock)
{
	ev(tid_s, s, XP_CLOCK_HOST_MONOTONIC);
	ev(tid_e, e, clock);
	pairs[corr.npairs].start = (uint32_t)cap.count - 2;
	pairs[corr.npairs].end = (uint32_t)cap.count - 1;
	pairs[corr.npairs].latency_ns = e - s;
	corr.npairs++;
}

static void rec(uint16_t kind, uint32_t tid, uint64_t ts, uint8_t state)
{
	struct xp_sched_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.tid = tid;
	r.ts_ns = ts;
	r.state = state;
	r.syscall = kind == XP_SCHED_OUT && state != XP_SCHED_RUNNABLE ? 202 : -1; /* futex */
	r.ustack = kind == XP_SCHED_OUT ? 5 : kind == XP_SCHED_WAKEUP ? 6 : -1;
	r.kstack = -1;
	if (kind == XP_SCHED_WAKEUP) {
		r.waker_pid = 42;
		r.waker_tid = 43;
		memcpy(r.comm, "waker", 6);
	}
	CHECK(xp_sched_timeline_add(&tl, &r) == 0);
}

static void reset(void)
{
	xp_capture_free(&cap);
	xp_capture_init(&cap, 0);
	xp_sched_timeline_free(&tl);
	tl.cap = 1000;
	memset(&corr, 0, sizeof(corr));
	corr.pairs = pairs;
}

static uint64_t sum(const struct xp_ex_pair *p)
{
	return p->comp[XP_EX_ON_CPU] + p->comp[XP_EX_RUNQ] + p->comp[XP_EX_BLOCKED_S] +
	       p->comp[XP_EX_BLOCKED_D];
}

static void test_states(void)
{
	struct xp_explained x;
	const struct xp_ex_pair *p;

	reset();
	/* pair 0 [1000, 9000): preempted at 2000, back at 2500; blocks (S,
	 * futex) at 4000, woken at 7000, runs at 7300; migrates at 7300 */
	pair(TID, 1000, TID, 9000, XP_CLOCK_HOST_MONOTONIC);
	rec(XP_SCHED_IN, TID, 500, 0);                       /* before the pair */
	rec(XP_SCHED_OUT, TID, 2000, XP_SCHED_RUNNABLE);
	rec(XP_SCHED_OUT, OTHER, 2100, XP_SCHED_BLOCKED_D);  /* another thread */
	rec(XP_SCHED_IN, TID, 2500, 0);
	rec(XP_SCHED_OUT, TID, 4000, XP_SCHED_BLOCKED_S);
	rec(XP_SCHED_WAKEUP, TID, 7000, 0);
	rec(XP_SCHED_MIGRATE, TID, 7100, 0);
	rec(XP_SCHED_IN, TID, 7300, 0);
	rec(XP_SCHED_OUT, TID, 9500, XP_SCHED_BLOCKED_D);   /* after the pair */
	/* pair 1 [10000, 12000): D without a wakeup seen (10500 .. 11500) */
	pair(TID, 10000, TID, 12000, XP_CLOCK_HOST_MONOTONIC);
	rec(XP_SCHED_IN, TID, 9900, 0);
	rec(XP_SCHED_OUT, TID, 10500, XP_SCHED_BLOCKED_D);
	rec(XP_SCHED_IN, TID, 11500, 0);
	/* pair 2: a wakeup of a running thread changes nothing */
	pair(TID, 13000, TID, 14000, XP_CLOCK_HOST_MONOTONIC);
	rec(XP_SCHED_WAKEUP, TID, 13500, 0);
	xp_sched_timeline_sort(&tl);

	CHECK(xp_inv_explain_pairs(&cap, &corr, &tl, 2, &x) == 0);
	CHECK_EQ_U64(x.npairs, 3);
	p = &x.pairs[0];
	CHECK_EQ_U64(p->status, XP_EXP_EXPLAINED);
	CHECK_EQ_U64(p->comp[XP_EX_RUNQ], 500 + 300);
	CHECK_EQ_U64(p->comp[XP_EX_BLOCKED_S], 3000);
	CHECK_EQ_U64(p->comp[XP_EX_BLOCKED_D], 0);
	CHECK_EQ_U64(p->comp[XP_EX_ON_CPU], 1000 + 1500 + 1700);
	CHECK_EQ_U64(sum(p), 8000);
	CHECK_EQ_U64(p->nvcsw, 1);
	CHECK_EQ_U64(p->nivcsw, 1);
	CHECK_EQ_U64(p->nmigr, 1);
	p = &x.pairs[1];
	CHECK_EQ_U64(p->comp[XP_EX_BLOCKED_D], 1000);
	CHECK_EQ_U64(p->comp[XP_EX_ON_CPU], 1000);
	CHECK_EQ_U64(sum(p), 2000);
	p = &x.pairs[2];
	CHECK_EQ_U64(p->comp[XP_EX_ON_CPU], 1000);
	CHECK_EQ_U64(x.total.pairs, 3);
	CHECK_EQ_U64(x.total.comp[XP_EX_ON_CPU] + x.total.comp[XP_EX_RUNQ] +
			     x.total.comp[XP_EX_BLOCKED_S] + x.total.comp[XP_EX_BLOCKED_D],
		     8000 + 2000 + 1000);
	/* blocked per (syscall, state), largest first */
	CHECK_EQ_U64(x.ex.nblocked, 2);
	CHECK_EQ_U64(x.ex.blocked[0].ns, 3000);
	CHECK_EQ_U64(x.ex.blocked[0].state, XP_EX_ST_BLOCKED_S);
	CHECK_EQ_U64(x.ex.blocked[0].nr, 202);
	CHECK_EQ_U64(x.ex.blocked[1].state, XP_EX_ST_BLOCKED_D);
	/* the two slowest, slowest first, with their longest block */
	CHECK_EQ_U64(x.ex.nslow, 2);
	CHECK_EQ_U64(x.ex.slow[0].latency_ns, 8000);
	CHECK_EQ_U64(x.ex.slow[0].start_ns, 1000);
	CHECK_EQ_U64(x.ex.slow[0].longest.ns, 3000);
	CHECK(xp_ex_block_woken(&x.ex.slow[0].longest));
	CHECK_EQ_U64(x.ex.slow[0].longest.waker_tid, 43);
	CHECK_EQ_U64(x.ex.slow[0].longest.ustack, 5);
	CHECK_EQ_U64(x.ex.slow[0].longest.waker_ustack, 6);
	CHECK_EQ_U64(x.ex.slow[1].latency_ns, 2000);
	CHECK_EQ_U64(x.ex.slow[1].longest.ns, 1000);
	CHECK(!xp_ex_block_woken(&x.ex.slow[1].longest)); /* switched in, no wakeup */
	xp_explained_free(&x);
}

static void test_unexplained(void)
{
	struct xp_explained x;

	reset();
	pair(TID, 1000, OTHER, 2000, XP_CLOCK_HOST_MONOTONIC);  /* two threads */
	pair(TID, 3000, TID, 4000, XP_CLOCK_CUPTI_NORMALIZED); /* a GPU clock */
	pair(TID, 5000, TID, 6000, XP_CLOCK_HOST_MONOTONIC);   /* before the gap */
	pair(TID, 7000, TID, 9000, XP_CLOCK_HOST_MONOTONIC);   /* ends after it */
	tl.cap = 1;
	rec(XP_SCHED_OUT, TID, 5500, XP_SCHED_RUNNABLE);
	rec(XP_SCHED_IN, TID, 8000, 0); /* past the bound: the gap */
	CHECK_EQ_U64(tl.beyond, 1);
	CHECK_EQ_U64(xp_sched_timeline_first_gap(&tl), 8000);
	xp_sched_timeline_sort(&tl);

	CHECK(xp_inv_explain_pairs(&cap, &corr, &tl, 20, &x) == 0);
	CHECK_EQ_U64(x.pairs[0].status, XP_EXP_OTHER_THREAD);
	CHECK_EQ_U64(x.pairs[1].status, XP_EXP_OTHER_CLOCK);
	CHECK_EQ_U64(x.pairs[2].status, XP_EXP_EXPLAINED);
	CHECK_EQ_U64(x.pairs[3].status, XP_EXP_GAP);
	CHECK_EQ_U64(x.unexplained[XP_EXP_OTHER_THREAD], 1);
	CHECK_EQ_U64(x.unexplained[XP_EXP_OTHER_CLOCK], 1);
	CHECK_EQ_U64(x.unexplained[XP_EXP_GAP], 1);
	/* preempted at 5500 and no switch-in before its end: run queue */
	CHECK_EQ_U64(x.pairs[2].comp[XP_EX_RUNQ], 500);
	CHECK_EQ_U64(x.total.pairs, 1);
	CHECK_EQ_U64(x.ex.nslow, 1);
	xp_explained_free(&x);
	/* a lost record not dated (first_lost_ts 0) is a gap from the start */
	tl.lost = 1;
	tl.first_lost_ts = 0;
	tl.beyond = 0;
	tl.first_beyond_ts = 0;
	CHECK_EQ_U64(xp_sched_timeline_first_gap(&tl), 1);
	CHECK(xp_inv_explain_pairs(&cap, &corr, &tl, 20, &x) == 0);
	CHECK_EQ_U64(x.total.pairs, 0);
	xp_explained_free(&x);
	/* unknown kinds are counted, never kept */
	{
		struct xp_sched_rec r = { .kind = 9 };

		tl.cap = 10;
		CHECK(xp_sched_timeline_add(&tl, &r) == 0);
		CHECK_EQ_U64(tl.unknown, 1);
	}
	xp_sched_timeline_free(&tl);
	xp_capture_free(&cap);
}

static void rec_age(uint16_t kind, uint32_t tid, uint64_t ts, uint8_t state, uint64_t age)
{
	rec(kind, tid, ts, state);
	tl.rec[tl.n - 1].arrival_age_ns = age;
}

/* A switch in that left no record: the next switch out's arrival age
 * (the kernel's own clock) dates it, inside the window or after it. */
static void test_missed_switch_in(void)
{
	struct xp_explained x;
	const struct xp_ex_pair *p;

	reset();
	/* [1000, 9000): preempted at 2000, back at 4000 unseen, blocks at
	 * 5000 (on its CPU for 1000 by then), switched in at 6000 */
	pair(TID, 1000, TID, 9000, XP_CLOCK_HOST_MONOTONIC);
	rec(XP_SCHED_OUT, TID, 2000, XP_SCHED_RUNNABLE);
	rec_age(XP_SCHED_OUT, TID, 5000, XP_SCHED_BLOCKED_S, 1000);
	rec(XP_SCHED_IN, TID, 6000, 0);
	/* [10000, 16000): preempted at 11000, back at 12000 unseen; its next
	 * switch out, at 17000, has been on its CPU for 5000 */
	pair(TID, 10000, TID, 16000, XP_CLOCK_HOST_MONOTONIC);
	rec(XP_SCHED_OUT, TID, 11000, XP_SCHED_RUNNABLE);
	rec_age(XP_SCHED_OUT, TID, 17000, XP_SCHED_RUNNABLE, 5000);
	/* [20000, 22000): preempted at 20500, nothing after: stays waiting */
	pair(TID, 20000, TID, 22000, XP_CLOCK_HOST_MONOTONIC);
	rec(XP_SCHED_OUT, TID, 20500, XP_SCHED_RUNNABLE);
	xp_sched_timeline_sort(&tl);

	CHECK(xp_inv_explain_pairs(&cap, &corr, &tl, 5, &x) == 0);
	p = &x.pairs[0];
	CHECK_EQ_U64(p->comp[XP_EX_RUNQ], 2000);
	CHECK_EQ_U64(p->comp[XP_EX_BLOCKED_S], 1000);
	CHECK_EQ_U64(p->comp[XP_EX_ON_CPU], 1000 + 1000 + 3000);
	CHECK_EQ_U64(sum(p), 8000);
	p = &x.pairs[1];
	CHECK_EQ_U64(p->comp[XP_EX_RUNQ], 1000);
	CHECK_EQ_U64(p->comp[XP_EX_ON_CPU], 5000);
	p = &x.pairs[2];
	CHECK_EQ_U64(p->comp[XP_EX_RUNQ], 1500);
	CHECK_EQ_U64(x.missed_in, 2);
	xp_explained_free(&x);
	xp_sched_timeline_free(&tl);
	xp_capture_free(&cap);
}

int main(void)
{
	test_states();
	test_missed_switch_in();
	test_unexplained();
	TEST_MAIN_END();
}
