/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pairing.h - the pairing algorithms behind the five policies, internal to
 * src/correlate.  Each takes the selected start and end events (as ranks
 * into arrays sorted by (timestamp, capture index)) and produces rank pairs
 * plus the policy's unmatched/ambiguous counters.  correlate.c orders the
 * pairs by start, truncates them to the sample bound and computes
 * statistics; docs/correlation.md states every rule these implement.
 */
#ifndef XP_CORRELATE_PAIRING_H
#define XP_CORRELATE_PAIRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/event.h"
#include "keymap.h"

/* One side's selected events, sorted by (timestamp_ns, capture index). */
struct xp_side {
	const uint32_t *idx; /* capture->events index of rank i */
	const uint64_t *ts;  /* timestamp_ns of rank i */
	size_t n;
};

/* A pair of ranks (start rank, end rank) and its latency. */
struct xp_rpair {
	uint32_t s, e;
	uint64_t latency;
};

struct xp_pairing {
	const struct xp_capture *c;
	struct xp_side s, e;
	uint64_t samples;        /* 0 = no bound */
	bool activity_key;       /* exact key: both endpoints GPU activity (pairing.c) */
	/* out of the exact CUPTI key: CUDA events that carry no context id, so
	 * the key fell back to (pid, correlation_id) for the whole capture */
	uint64_t without_context;
	/* out: pairs has room for min(s.n, e.n) (every rank pairs at most once) */
	struct xp_rpair *pairs;
	size_t npairs;
	uint64_t unmatched_start, unmatched_end, ambiguous;
};

/* Lifecycle keys: who an exact start/end pair must share. */
enum xp_lifecycle_key {
	XP_LIFE_TID = 0, /* (pid, tid, process_start_time): syscalls, GC */
	XP_LIFE_NVTX,    /* (pid, range_kind, range_id) */
};

/*
 * The keys the rules group by, shared with the incremental counter
 * (pair_count.c): false when @e has none (it is then unmatched).
 * life: the lifecycle key; cupti: the exact key, (pid, context_id,
 * correlation_id) or without the context; activity: the exact key of two
 * GPU activity endpoints; stream: (pid, device, context, stream).
 */
bool xp_pair_key_life(const struct xp_event *e, enum xp_lifecycle_key kind, struct xp_key *k);
bool xp_pair_key_cupti(const struct xp_event *e, struct xp_key *k, bool context);
bool xp_pair_key_activity(const struct xp_event *e, struct xp_key *k);
bool xp_pair_key_stream(const struct xp_event *e, struct xp_key *k);
/* A CUDA event with a correlation id and no context id: the exact key
 * then drops the context for the whole capture. */
bool xp_pair_without_context(const struct xp_event *e);

/* All return 0 or -ENOMEM. */
int xp_pair_exact_key(struct xp_pairing *p);
int xp_pair_lifecycle(struct xp_pairing *p, enum xp_lifecycle_key key);
int xp_pair_first_after(struct xp_pairing *p);
int xp_pair_nearest(struct xp_pairing *p);
int xp_pair_stack_nested(struct xp_pairing *p);
int xp_pair_stream_order(struct xp_pairing *p);

#endif /* XP_CORRELATE_PAIRING_H */
