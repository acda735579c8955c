/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live_source.h - one live measurement's collection: the sources that feed
 * it, the loop that runs them, and the rules that decide when and where a
 * capture stops.
 *
 * The path is one-way.  A source (the eBPF collectors of live_ebpf.c; the
 * in-process Agent of agent_source.c) only collects: it adds events to the
 * one capture of the measurement and keeps its counters.  xp_live_run
 * prepares every source, arms them back to back, polls them on a short
 * timer, stops them by the rules below, and hands back the capture --
 * sorted, cut at its stopping point, its loss decided -- with each
 * source's counters and why it stopped, or an error.  It never renders,
 * writes the artifact or picks an exit code: src/cmd/measure.c does, from
 * what this returns.
 *
 * One capture, several sources.  Every source's timestamps are
 * CLOCK_MONOTONIC ns (BPF's bpf_ktime_get_ns, the Agent's
 * XPROBE_AGENT_F_HOST_MONOTONIC records), so events of a host endpoint and
 * an NVTX endpoint merge into one capture by timestamp; max_events bounds
 * the merged capture, and the samples rule runs over the merged stream.
 *
 * The rules (live_rules.c, unit-tested in tests/unit/test_live_rules.c):
 *   - stop: in this order each round -- a signal; the samples rule (once
 *     the end selector's records reach --samples, the pairs of the merged
 *     capture are counted as its events arrive, pair_count.h; a count
 *     that must walk the whole capture again -- records out of timeline
 *     order -- or the correlator's own count runs at most every 1/8
 *     growth or 20 ms once the capture is large); the capture full
 *     (max_events held); the
 *     target exited; the duration elapsed since arming; the deadline.
 *   - cut: a samples capture is cut at the event that completed its N-th
 *     pair (the shortest timestamp-ordered prefix that pairs N times), so
 *     what a capture holds never depends on poll timing.
 *   - loss: records a source lost make the capture lossy (capture.dropped,
 *     which the correlator answers with EVENTS_DROPPED) unless the capture
 *     was cut and every loss of every source is known to come after the
 *     cut (the source knows the earliest loss's timestamp); a source that
 *     cannot date its losses counts them inside the window.
 */
#ifndef XP_COLLECT_LIVE_SOURCE_H
#define XP_COLLECT_LIVE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../correlate/correlate.h"
#include "../correlate/pair_count.h"
#include "../model/error_record.h"
#include "../model/event.h"
#include "../process/identity.h"
#include "../selector/selector.h"

struct xp_live_sched;

#define XP_LIVE_MAX_SOURCES 2

enum xp_live_source_kind {
	XP_LIVE_SRC_EBPF = 0, /* host probes: the BPF ring */
	XP_LIVE_SRC_AGENT,    /* libxprobe in the target: the control socket */
};

/* What one source saw; filled by the source, final once it stopped. */
struct xp_live_source_stats {
	uint64_t capacity;      /* records its buffer holds (ring records, Agent capacity) */
	uint64_t observed;      /* records it was offered: events + dropped + beyond + unknown */
	uint64_t retained;      /* events of the capture it produced (after the cut) */
	uint64_t dropped;       /* records lost before xprobe got them */
	uint64_t first_drop_ts; /* earliest loss's timestamp; 0 = cannot tell (inside) */
	uint64_t beyond;        /* well-formed records the full capture refused */
	uint64_t unknown;       /* records it could not interpret */
	uint64_t end_records;   /* records of the measurement's end selector */
	bool full;              /* its own buffer is full (no more records will come) */
};

struct xp_live_source;

/*
 * What a source does, in the order xp_live_run calls it.  Every op
 * returns 0 (poll: records taken, >= 0) or a negative code with @err
 * filled with the contract's error.  stop and destroy run on every path
 * once prepare was called, whatever failed.
 */
struct xp_live_source_ops {
	/* Attach/connect everything; nothing admitted yet.  Events go to @c. */
	int (*prepare)(struct xp_live_source *s, struct xp_capture *c, struct xp_error *err);
	/* Begin admitting (all sources arm back to back after every prepare). */
	int (*arm)(struct xp_live_source *s, struct xp_error *err);
	/* Take what is ready (may stage it: see held/flush), at @now. */
	int (*poll)(struct xp_live_source *s, uint64_t now, struct xp_error *err);
	/* Turn staged records into events of the capture. */
	int (*flush)(struct xp_live_source *s, struct xp_error *err);
	/* Disarm, take the final records and counters (@collected: the loop
	 * ran and its records are wanted). */
	int (*stop)(struct xp_live_source *s, bool collected, struct xp_error *err);
	/* Release everything; the source itself is freed. */
	void (*destroy)(struct xp_live_source *s);
};

struct xp_live_source {
	const struct xp_live_source_ops *ops;
	enum xp_live_source_kind kind;
	const char *name;       /* "ebpf", "agent" (messages) */
	struct xp_live_source_stats st;
	size_t staged;          /* records taken, not yet events */
	bool busy;              /* the last poll found much: poll again soon */
};

/* --- the stopping rules (live_rules.c) ------------------------------ */

/* Below this many events the samples rule correlates every round. */
#define XP_LIVE_RULE_CHEAP_EVENTS 4096
/* Otherwise it waits for 1/8 more events or this long, whichever first. */
#define XP_LIVE_RULE_RECHECK_NS 20000000ull

/*
 * The samples rule: the measurement's selectors and policy, the bound,
 * and the throttle's memory.  The selectors are bound to the capture by
 * every count (xp_correlate).
 */
struct xp_live_samples_rule {
	struct xp_selector *from;
	struct xp_selector *to;
	struct xp_correlate_opts opts; /* policy, samples, duration_ns, max_events */
	size_t last_count;
	uint64_t last_ns;              /* 0: never counted */
	uint64_t matched;              /* pairs at the last count (progress) */
	/* the pairs counted as events arrive (pair_count.h); counting: 0 not
	 * yet set up, 1 on, -1 declined (every count correlates) */
	struct xp_pair_count pc;
	int counting;
};

/* Release what the rule's counts hold (a zeroed rule is fine). */
void xp_live_samples_rule_free(struct xp_live_samples_rule *r);

/*
 * Pairs the correlator forms in @c now: 0 with *@matched (0 when the
 * correlator finds none or was cancelled), or negative with @err filled.
 */
int xp_live_count_pairs(struct xp_live_samples_rule *r, const struct xp_capture *c,
			uint64_t *matched, struct xp_error *err);

/*
 * Has @c (every staged record flushed) reached the samples bound?  Only
 * once @end_records reached it (every pair needs its own end); when the
 * capture is large (XP_LIVE_RULE_CHEAP_EVENTS) and not @full, at most once
 * per 1/8 growth or XP_LIVE_RULE_RECHECK_NS does it walk the whole capture
 * (the counter's replay, or the correlator where the counter declines).
 * Returns 1, 0 or negative.
 */
int xp_live_samples_enough(struct xp_live_samples_rule *r, struct xp_capture *c,
			   uint64_t end_records, bool full, uint64_t now, struct xp_error *err);

/*
 * The target exited: does the final capture (sorted, every record taken,
 * @c->dropped as the loss rule set it) already hold the samples?  The
 * samples rule may have been throttled in the rounds before the exit, or
 * not run in the round that saw it; what the capture holds decides, not
 * when the loop looked.  Losses are ignored here (the cut rule decides
 * them).  Returns 1, 0 or negative with @err filled.
 */
int xp_live_samples_formed(struct xp_live_samples_rule *r, struct xp_capture *c,
			   struct xp_error *err);

/*
 * Shrink a sorted capture to its shortest prefix (in timestamp order) for
 * which @ok holds, knowing it holds for the whole capture and not for
 * fewer than @lo events.  @ok returns 1, 0 or negative (error,
 * propagated, the capture restored).  Returns the new count or negative.
 */
long xp_live_trim(struct xp_capture *c, size_t lo,
		  int (*ok)(void *ctx, struct xp_capture *c), void *ctx);

/*
 * The cut and loss rules for a capture the samples rule stopped: cut the
 * sorted @c at its stopping point, then keep the whole capture and set
 * c->dropped to every source's losses if any loss may lie inside the cut
 * (a source's loss not dated -- first_drop_ts 0 -- or dated at or before
 * the last kept event).
 * Returns 0, or negative from the correlator (the capture uncut).
 */
int xp_live_cut_at_stop(struct xp_live_samples_rule *r, struct xp_capture *c,
			const struct xp_live_source_stats *const *st, size_t n);

/* Loss rule without a cut: c->dropped = every source's losses. */
void xp_live_losses(struct xp_capture *c, const struct xp_live_source_stats *const *st, size_t n);

/* --- the loop (live_run.c) ------------------------------------------ */

enum xp_live_stop {
	XP_LIVE_STOP_ENOUGH = 0,   /* the samples rule said enough */
	XP_LIVE_STOP_DURATION,     /* duration elapsed since arming */
	XP_LIVE_STOP_TIMEOUT,      /* the deadline passed first */
	XP_LIVE_STOP_FULL,         /* the capture reached max_events, or a source is full */
	XP_LIVE_STOP_TARGET_EXITED,
	XP_LIVE_STOP_SIGNAL,       /* SIGINT/SIGTERM/SIGHUP to xprobe */
};
const char *xp_live_stop_name(enum xp_live_stop s);

#define XP_LIVE_POLL_US_DEFAULT 2000 /* poll period */
#define XP_LIVE_POLL_US_BUSY 250    /* ... after a round a source found busy */
/* A source turns staged records into events once this many are staged
 * (bounds the staging memory; a samples capture too, whose rule now
 * counts what each flush adds instead of waiting for --samples ends). */
#define XP_LIVE_FLUSH_RECORDS 65536u

/*
 * What a live capture has done so far, for a progress line: counters
 * only (the one-way rule: the command renders them, src/report/output.c
 * writes them).  Reported at most every XP_LIVE_PROGRESS_NS once armed,
 * from the loop, and never after it ended.
 */
#define XP_LIVE_PROGRESS_NS 100000000ull

struct xp_live_progress {
	uint64_t elapsed_ns;      /* since armed */
	uint64_t duration_ns;     /* the duration rule (0 = none) */
	uint64_t timeout_left_ns; /* until the deadline */
	uint64_t samples;         /* the samples bound (0 = none) */
	bool pairs_counted;       /* the samples rule counted pairs already ... */
	uint64_t pairs;           /* ... this many, at its last count */
	uint64_t end_records;     /* end-selector records so far: pairs <= this */
	uint64_t events;          /* records every source was offered so far */
	uint64_t dropped;         /* ... of which lost (as far as known yet) */
	uint64_t held;            /* events and staged records */
	uint64_t max_events;
};

struct xp_live_run_opts {
	const struct xp_target *target;
	uint64_t max_events;      /* the merged capture's bound (> 0) */
	uint64_t duration_ns;     /* 0 = no duration rule */
	uint64_t deadline_ns;     /* CLOCK_MONOTONIC; the timeout */
	uint32_t poll_us;         /* 0 = XP_LIVE_POLL_US_DEFAULT */
	uint32_t first_read_delay_ms; /* tests: wait after arming before the first poll */
	/* the samples rule, or NULL (a duration capture) */
	struct xp_live_samples_rule *samples;
	/* process identity the capture records (its events' pid) */
	uint32_t event_pid;
	/* called from the loop with the counters, at most every
	 * XP_LIVE_PROGRESS_NS (NULL: none); it must not allocate or block */
	void (*progress)(void *ctx, const struct xp_live_progress *p);
	void *progress_ctx;
	/* --explain: the scheduler timeline (live_sched.h), opened by the
	 * caller, or NULL; armed before the sources, polled with them,
	 * stopped after them.  Its records never enter the capture. */
	struct xp_live_sched *sched;
};

struct xp_live_result {
	enum xp_live_stop stop;
	int signo;                /* XP_LIVE_STOP_SIGNAL */
	bool collected;           /* the loop ran: the capture holds what came */
	uint64_t t_start_ns;      /* CLOCK_MONOTONIC at entry */
	uint64_t t_armed_ns;      /* when the last source armed (0 = never) */
	uint64_t t_stop_ns;       /* when collection stopped */
};

/*
 * Run one bounded live capture of @n sources into @c (initialized by the
 * caller with max_events).  Returns 0 with @res saying why it ended (the
 * capture sorted and sequenced, cut and its loss decided by the rules
 * above, each source's st final), or a negative code with @err filled
 * when collection could not run or failed (@res->collected says whether
 * the capture holds what was collected before, for the artifact).  Every
 * source prepared is stopped on every path; the caller destroys them
 * (xp_live_source_destroy) once it has read their counters.
 */
int xp_live_run(const struct xp_live_run_opts *o, struct xp_live_source **src, size_t n,
		struct xp_capture *c, struct xp_live_result *res, struct xp_error *err);

/* ops->destroy; NULL is fine. */
void xp_live_source_destroy(struct xp_live_source *s);

#endif /* XP_COLLECT_LIVE_SOURCE_H */
