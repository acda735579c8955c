/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_hist_table.h - the histograms of a HISTOGRAM capture (agent.h,
 * MODE_HISTOGRAM): pairs formed inside the target, each latency counted
 * into the log-linear buckets of include/xprobe/latency_buckets.h, so no
 * record leaves the target per pair and a capture may run for hours at
 * any rate.  A producer-side table beside the capture buffer: NVTX
 * (lib/nvtx/inject.c) and the CUPTI backend (lib/device/cupti.c) fill it,
 * the Agent (lib/agent/server.c, through agent_capture.c) reads it; it
 * calls neither.
 *
 * What it owns, all allocated at ARM (anonymous, MAP_NORESERVE: pages are
 * touched as they are used) and never while pairs are added:
 *   - the total and up to `capacity` groups (--max-groups), each a struct
 *     xpl_hist_cell of atomic counters: a pair with a group is counted in
 *     its group only, one without (BY_NONE, a full table) in the total's
 *     cell, and the total sent is the merge of that cell and every group
 *     (one cell's atomics per pair, not two); the groups' keys, their hashes and
 *     an open-addressed index of 2^k >= 2 x capacity slots (group number +
 *     1, 0 empty, probed linearly; groups are never removed);
 *   - `inflight` thread stacks (--max-inflight): the open push of each
 *     NVTX level (< XPL_HIST_LEVELS) and the open CUDA API calls of a
 *     thread, handed out once per thread per capture (xpl_tls.agent_hslot);
 *   - an in-flight table of 2^k >= `inflight` entries for process ranges
 *     (start/end by range id, across threads), indexed by the range's
 *     sequence number: consecutive ranges take consecutive entries, so an
 *     entry is still held only when `inflight` or more ranges began since
 *     its own (the new start is then not stored: inflight_overflow).
 *
 * Hot path (no allocation, no I/O, no lock): a pair adds into its cells
 * with atomics (min and max by compare-and-swap, tried only when the value
 * improves them, then the sum, then the bucket with a release store, so a
 * read that sees a bucket sees extremes that cover it).  Finding a group is a
 * lock-free probe; only a key seen for the first time takes `lock` to
 * insert it (and publishes the slot with a release store after the key).
 * Reads (xpl_hist_copy) are not atomic as a whole: each counter is, so a
 * read may see a pair's sum or extremes without its bucket (agent.h says
 * so), never a bucket without its extremes.
 */
#ifndef XPL_AGENT_HIST_TABLE_H
#define XPL_AGENT_HIST_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xprobe/agent.h"

/* NVTX push levels paired per thread (a deeper push: depth_overflow). */
#define XPL_HIST_LEVELS 64
/* Open CUDA API calls per thread (a driver call inside a runtime call is
 * one level down; deeper: depth_overflow). */
#define XPL_HIST_API_LEVELS 16

/* xpl_hist_group's answers besides a group number. */
#define XPL_HIST_NO_GROUP (-1) /* BY_NONE: the total only */
#define XPL_HIST_FULL (-2) /* a new key, and the table is full */

struct xpl_hist_cell {
	_Atomic uint64_t sum_ns;
	_Atomic uint64_t min_ns; /* UINT64_MAX: none yet */
	_Atomic uint64_t max_ns;
	_Atomic uint64_t buckets[XPROBE_LH_BUCKETS];
};

/* A thread's open starts (one per thread and capture). */
struct xpl_hist_stack {
	uint64_t ts[XPL_HIST_LEVELS]; /* CLOCK_MONOTONIC ns of the push at each level */
	int64_t grp[XPL_HIST_LEVELS]; /* its group (xpl_hist_group) */
	uint64_t api_ts[XPL_HIST_API_LEVELS]; /* the open API calls, innermost last */
	int64_t api_grp[XPL_HIST_API_LEVELS];
	uint32_t api_depth; /* API calls open (may exceed XPL_HIST_API_LEVELS) */
	_Atomic uint32_t owned; /* 1 while a thread holds it (xpl_hist_stack_take) */
};

/* A group's key, as struct xprobe_agent_hist carries it (@32..@176). */
struct xpl_hist_key {
	uint64_t key;
	uint32_t kind;
	uint16_t flags;
	uint16_t name_len;
	char name[XPROBE_NAME_MAX + 1];
};

/* An open process range. */
struct xpl_hist_open {
	_Atomic uint64_t seq; /* 0 free; UINT64_MAX being written or taken */
	uint64_t ts;
	int64_t grp;
};

struct xpl_agent_hist {
	uint32_t by; /* enum xprobe_agent_hist_by, fixed at ARM */
	uint64_t capacity; /* groups */
	uint64_t mask; /* index slots - 1 */
	_Atomic uint32_t *slots; /* group number + 1, 0 empty */
	uint64_t *hashes; /* [capacity] */
	struct xpl_hist_key *keys; /* [capacity] */
	struct xpl_hist_cell *total;
	struct xpl_hist_cell *cells; /* [capacity] */
	uint64_t nstacks; /* --max-inflight */
	struct xpl_hist_stack *stacks; /* [nstacks] */
	uint64_t open_mask; /* open table entries - 1 */
	struct xpl_hist_open *open;
	size_t slots_bytes, hashes_bytes, keys_bytes, total_bytes, cells_bytes, stacks_bytes,
		open_bytes;
	void *lock; /* pthread_mutex_t, inserts only (agent_hist_table.c) */
	_Atomic uint64_t ngroups __attribute__((aligned(64)));
	_Atomic uint64_t stacks_used; /* held now */
	_Atomic uint64_t stacks_next; /* where the next take starts looking */
	_Atomic uint64_t counters[XPROBE_AGENT_HC__COUNT] __attribute__((aligned(64)));
};

/* A table of @capacity groups grouped @by, with @inflight thread stacks
 * and in-flight entries.  0, -EINVAL (a bound out of range) or -ENOMEM. */
int xpl_hist_new(uint64_t capacity, uint32_t by, uint64_t inflight, struct xpl_agent_hist **out);
void xpl_hist_free(struct xpl_agent_hist *h);

/*
 * The group of a pair whose start had @kind, @key (thread, stream or
 * device id) and name @name/@n (kept bytes, n <= XPROBE_NAME_MAX) with
 * @flags (XPROBE_AGENT_HIST_F_NAME_COMPLETE): only what the table's `by`
 * uses is part of the key.  A group number, XPL_HIST_NO_GROUP (BY_NONE) or
 * XPL_HIST_FULL.  Lock-free unless the key is new.
 */
int64_t xpl_hist_group(struct xpl_agent_hist *h, uint32_t kind, uint64_t key, const char *name,
		       uint32_t n, uint16_t flags);

/* Count one pair of latency @ns into group @g (a number xpl_hist_group
 * returned), or, without one, the total's own cell (XPL_HIST_FULL is also
 * counted in group_overflow). */
void xpl_hist_add(struct xpl_agent_hist *h, int64_t g, uint64_t ns);

static inline void xpl_hist_count(struct xpl_agent_hist *h, enum xprobe_agent_hist_counter i)
{
	atomic_fetch_add_explicit(&h->counters[i], 1, memory_order_relaxed);
}

/* A thread's stack: a free one (its number + 1), or 0 when all
 * `nstacks` are held (inflight_overflow counted).  The thread gives it
 * back when it exits (xpl_hist_stack_give), so threads that come and go
 * hold at most as many stacks as are alive at once. */
uint32_t xpl_hist_stack_take(struct xpl_agent_hist *h);
/* Stack @k (a number xpl_hist_stack_take returned) is free again. */
void xpl_hist_stack_give(struct xpl_agent_hist *h, uint32_t k);

/* A process range's start (@seq >= 1) at @ts in group @g: true when
 * stored; false when its entry is held (inflight_overflow counted). */
bool xpl_hist_open_put(struct xpl_agent_hist *h, uint64_t seq, uint64_t ts, int64_t g);
/* Its end: true with the start's @ts and @g, the entry freed; false when
 * the start was not stored. */
bool xpl_hist_open_take(struct xpl_agent_hist *h, uint64_t seq, uint64_t *ts, int64_t *g);

/* Histograms in use: the total and the groups. */
uint64_t xpl_hist_count_all(const struct xpl_agent_hist *h);
/* Pairs counted (the total's buckets). */
uint64_t xpl_hist_pairs(const struct xpl_agent_hist *h);
/* Copy histograms [@from, @from + @count) (0 the total) to @out; the
 * number copied. */
uint64_t xpl_hist_copy(const struct xpl_agent_hist *h, uint64_t from, uint64_t count,
		       struct xprobe_agent_hist *out);

#endif /* XPL_AGENT_HIST_TABLE_H */
