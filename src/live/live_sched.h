/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live_sched.h - the scheduler timeline of `measure --explain` in the exact
 * modes: bpf/xp_sched.bpf.c's records of the target's threads (switch out,
 * switch in, wakeup, migration), collected beside the capture by the live
 * loop (live_run.c) and handed to the command once the capture is final.
 * What the timeline says about each evidence pair is not decided here:
 * src/inventory/explain_pairs.c intersects the two.
 *
 * Bounds.  The timeline keeps at most @capacity records (the measurement's
 * --max-events); the ring is sized from it.  Records the ring could not
 * take (lost) and records past the capacity (beyond) are counted with the
 * time of the first of each: a pair that ends after the earliest of them
 * is not explained (the timeline may miss a switch inside it).
 *
 * Ids are global thread ids: the caller refuses --explain for a target
 * whose PID namespace is not xprobe's (xp_live_sched_open's @tgid is the
 * global one, and the capture's events then carry the same ids).
 */
#ifndef XP_LIVE_SCHED_H
#define XP_LIVE_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "xp_sched.h"
#include "../model/error_record.h"

struct xp_sched_timeline {
	struct xp_sched_rec *rec; /* sorted by ts_ns once stopped */
	size_t n;
	size_t alloc;            /* records allocated (grows to cap) */
	size_t cap;              /* at most this many kept */
	uint64_t lost;           /* the ring could not take them */
	uint64_t first_lost_ts;  /* 0: none */
	uint64_t beyond;         /* past the capacity */
	uint64_t first_beyond_ts; /* 0: none */
	uint64_t unknown;        /* malformed records (never trusted) */
	uint64_t armed_ns;       /* CLOCK_MONOTONIC when the programs armed */
	uint64_t stopped_ns;     /* ... when they disarmed */
};

/* The earliest loss of @tl (lost or beyond), 0 when it is complete. */
uint64_t xp_sched_timeline_first_gap(const struct xp_sched_timeline *tl);

/* Add one record as the collector does (the capacity and counters
 * applied); also what tests build timelines with.  0 or -ENOMEM. */
int xp_sched_timeline_add(struct xp_sched_timeline *tl, const struct xp_sched_rec *r);

/* Sort by time (stable: records of one CPU keep their order). */
void xp_sched_timeline_sort(struct xp_sched_timeline *tl);

void xp_sched_timeline_free(struct xp_sched_timeline *tl);

/*
 * The timeline as records of xprobe's own event extension
 * (schemas/sched-event.schema.json, docs/output.md), for --events-out
 * beside the capture's Event lines: in JSONL one compact SchedEvent per
 * line; in a Chrome trace one thread-scoped instant per record (cat
 * "sched", the SchedEvent in args).  @pid: the target.
 */
struct xpc_json;
void xp_sched_timeline_write(struct xpc_json *w, const struct xp_sched_timeline *tl, uint32_t pid,
			     bool chrome);

struct xp_live_sched;

/*
 * Open, load and attach the scheduler programs for the global @tgid, with
 * a timeline of at most @capacity records; nothing is recorded until
 * xp_live_sched_arm.  Contract errors (PERMISSION_DENIED, INTERNAL with
 * libbpf's message) on failure.
 */
int xp_live_sched_open(uint32_t tgid, uint64_t capacity, struct xp_live_sched **out,
		       struct xp_error *err);
/* Start recording. */
void xp_live_sched_arm(struct xp_live_sched *s);
/* Take what the ring holds; returns the records taken. */
int xp_live_sched_poll(struct xp_live_sched *s);
/* Stop recording, take the rest and the losses, sort the timeline. */
void xp_live_sched_stop(struct xp_live_sched *s);
/* The timeline (final once stopped). */
const struct xp_sched_timeline *xp_live_sched_timeline(const struct xp_live_sched *s);
/*
 * Copy stack @id (innermost first) into @ip (at most @max frames), its
 * frame count into *@n.  0, or -ENOENT when it was not captured.  The
 * stacks stay readable until xp_live_sched_free.
 */
int xp_live_sched_stack(const struct xp_live_sched *s, int32_t id, uint64_t *ip, uint32_t max,
			uint32_t *n);
/* Detach everything and free; NULL is fine. */
void xp_live_sched_free(struct xp_live_sched *s);

#endif /* XP_LIVE_SCHED_H */
