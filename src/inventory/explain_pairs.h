/* SPDX-License-Identifier: Apache-2.0 */
/*
 * explain_pairs.h - `measure --explain` in the exact modes: every evidence
 * pair of a capture intersected with the scheduler timeline of its thread
 * (src/live/live_sched.h), split into on CPU, run queue and blocked S/D
 * like --histogram --explain splits its pairs in the kernel
 * (docs/explain.md).
 *
 * A pair is explained when its start and end are on one thread, both on
 * the host's CLOCK_MONOTONIC (eBPF events, the Agent's NVTX records), and
 * the timeline has no gap (a lost record, or one past its bound) before
 * the pair's end.  Its thread is running at both ends (it hit the probe,
 * or called the NVTX push/pop); between them every switch out, wakeup and
 * switch in of the thread moves it between states, and the parts are the
 * time in each: they add up to the latency exactly, by construction.
 * Other pairs are counted by reason, never guessed.  A thread seen
 * running (it leaves its CPU, or the pair ends) while the walk has it
 * waiting or blocked had a switch in that left no record: the kernel's own
 * arrival time, carried by its next switch-out record, ends the stale
 * state (missed_in counts them).
 */
#ifndef XP_INVENTORY_EXPLAIN_PAIRS_H
#define XP_INVENTORY_EXPLAIN_PAIRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../correlate/correlate.h"
#include "../live/live_sched.h"
#include "../model/event.h"
#include "latency_histogram.h"

enum xp_ex_pair_status {
	XP_EXP_EXPLAINED = 0,
	XP_EXP_OTHER_THREAD, /* "threads_differ": its ends are on two threads */
	XP_EXP_OTHER_CLOCK,  /* "not_host_clock": a GPU timestamp */
	XP_EXP_GAP,          /* "scheduler_records_lost": the timeline has a gap before its end */
};
const char *xp_ex_pair_status_name(enum xp_ex_pair_status s);

/* One evidence pair's parts (XP_EX_* order). */
struct xp_ex_pair {
	uint64_t comp[XP_EX_NCOMP];
	uint32_t nvcsw, nivcsw, nmigr;
	uint32_t tid;
	uint8_t status; /* enum xp_ex_pair_status */
};

struct xp_explained {
	struct xp_ex_pair *pairs;    /* one per corr->pairs, in its order */
	size_t npairs;
	struct xp_ex_sums total;     /* over the explained pairs */
	uint64_t unexplained[4];     /* by enum xp_ex_pair_status (0 unused) */
	struct xp_inv_ex_result ex;  /* blocked by syscall, the slowest, their stacks */
	/* the timeline's own counters */
	uint64_t records, lost, beyond, unknown;
	uint64_t missed_in;          /* switch-ins no record showed, repaired */
	uint64_t first_gap_ns;       /* 0: none */
};

/*
 * Explain every pair of @corr (over @c) with @tl; keep the @top slowest
 * explained pairs with their longest block.  0 or -ENOMEM.
 */
int xp_inv_explain_pairs(const struct xp_capture *c, const struct xp_correlation *corr,
			 const struct xp_sched_timeline *tl, uint32_t top, struct xp_explained *out);

/*
 * Copy the stacks the slowest pairs name through @read (the timeline's
 * stack map: xp_live_sched_stack), then name their frames
 * (xp_inv_ex_symbolize) for the target @pid (@ns_pid in its namespace).
 */
int xp_inv_explain_pairs_stacks(struct xp_explained *x,
				int (*read)(void *ctx, int32_t id, uint64_t *ip, uint32_t max,
					    uint32_t *n),
				void *ctx, uint32_t pid, uint32_t ns_pid);

void xp_explained_free(struct xp_explained *x);

#endif /* XP_INVENTORY_EXPLAIN_PAIRS_H */
