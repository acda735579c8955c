/* SPDX-License-Identifier: Apache-2.0 */
/*
 * latency_histogram.h - `measure --histogram`: the latency distribution of one
 * host lifecycle (syscall entry/exit, uprobe entry/return, CPython GC
 * start/end), paired and counted in the kernel by bpf/latency_hist.bpf.c
 * into log-linear histograms (layouts: bpf/latency_hist.h), read once when
 * the window ends.  No event stream, no capture, no correlator: the pairing
 * rule is the kernel's (exact: one open start per thread; stack-nested: a
 * bounded stack per thread).
 *
 * What this module owns: loading and attaching the programs for a live
 * plan's two endpoints with the map sizes of the flags (latency_histogram.c),
 * the window (duration, stop request, target exit, deadline), reading the
 * maps, and the summary (latency_histogram_summary.c, pure, unit-tested):
 * per-CPU folding, group order, bucket bounds, percentiles with their
 * error bound, accounting and warnings.  Rendering is
 * src/report/render_histogram.c.
 */
#ifndef XP_COLLECT_LATENCY_HISTOGRAM_H
#define XP_COLLECT_LATENCY_HISTOGRAM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "../../bpf/latency_hist.h" /* XP_LH_*, struct xp_lh_hist, xp_lh_bucket_of */
#include "xprobe/record.h" /* XPROBE_NAME_MAX */
#include "../model/error_record.h"
#include "../process/identity.h"
#include "../live/live.h"

#define XP_LH_MAX_GROUPS_LIMIT 16384u    /* --max-groups: 7.8 KiB of kernel memory each */
#define XP_LH_MAX_INFLIGHT_LIMIT 65536u  /* --max-inflight: threads with a slot */
#define XP_LH_DEFAULT_MAX_GROUPS 256u
#define XP_LH_DEFAULT_MAX_INFLIGHT 1024u
#define XP_LH_DEFAULT_MAX_DEPTH XP_LH_MAX_DEPTH

/* The percentiles every histogram reports, in per-mille (p99.9 = 999). */
#define XP_LH_NPCT 5
extern const uint32_t xp_inv_lh_pct_permille[XP_LH_NPCT];

/* Below this every value has its own bucket (no estimate error). */
#define XP_LH_EXACT_BELOW_NS ((uint64_t)XP_LH_SUB)
/* A bucket spans at most this fraction of its lower bound (1/16). */
#define XP_LH_BUCKET_WIDTH_BOUND (1.0 / XP_LH_SUB)
/* A percentile estimate is within this relative error of the true
 * nearest-rank value (1/32, strictly below; latency_histogram_summary.c). */
#define XP_LH_PCT_ERROR_BOUND (1.0 / (2 * XP_LH_SUB))

enum xp_inv_lh_stop {
	XP_LH_STOP_DURATION = 0, /* "duration": --duration-ms elapsed */
	XP_LH_STOP_CANCELLED, /* "cancelled": SIGINT/SIGTERM/SIGHUP */
	XP_LH_STOP_TARGET_EXITED, /* "target_exited": the target's last thread ended */
	XP_LH_STOP_TIMEOUT, /* "timeout": --timeout-ms passed first */
};
const char *xp_inv_lh_stop_name(enum xp_inv_lh_stop s);

/* Groupings only the Agent's in-target histograms have (cuda: endpoints;
 * src/agent/agent_histogram.h), after bpf/latency_hist.h's XP_LH_BY_*. */
#define XP_LH_BY_NAME 3 /* the range's or the kernel's name */
#define XP_LH_BY_STREAM 4 /* the CUDA stream id */
#define XP_LH_BY_DEVICE 5 /* the CUDA device id */

/* "none", "thread", "arg0", "name", "stream", "device" for XP_LH_BY_*. */
const char *xp_inv_lh_by_name(int by);

/* --explain (bpf/latency_hist.h, "--explain"; docs/explain.md) */
#define XP_EX_TOP_DEFAULT 20u
#define XP_EX_STACK_ENTRIES 2048u /* stacks kept in the kernel (1 KiB each) */
#define XP_EX_STACK_DEPTH 127

/* Blocked time inside pairs per (syscall, state), folded. */
struct xp_inv_ex_blocked {
	int32_t nr;     /* -1: no syscall (a page fault, a lock taken in user mode) */
	uint32_t state; /* XP_EX_ST_BLOCKED_S or _D */
	uint64_t ns;
};

/* A stack the slowest pairs name, copied out of the kernel's map. */
struct xp_inv_ex_stack {
	int32_t id;
	uint32_t n;      /* frames, innermost first */
	bool kernel;     /* a kernel stack, else a user stack of @pid */
	uint32_t pid;    /* whose user stack (the target, or a waker) */
	uint64_t ip[XP_EX_STACK_DEPTH];
	char *names[XP_EX_STACK_DEPTH]; /* xp_inv_ex_symbolize: "[unknown]" when unresolved */
};

struct xp_inv_ex_result {
	uint64_t (*buckets)[XP_EX_NCOMP];  /* XP_LH_BUCKETS rows: each bucket's parts */
	struct xp_inv_ex_blocked *blocked; /* sorted: ns desc */
	size_t nblocked;
	struct xp_ex_slow *slow;           /* the slowest pairs, latency desc */
	size_t nslow;
	struct xp_inv_ex_stack *stacks;    /* every stack the slow pairs name */
	size_t nstacks;
	uint32_t top;                      /* --explain-top */
};

struct xp_inv_lh_result;

/* The stack of id @id among @ex's, NULL when it was not captured. */
const struct xp_inv_ex_stack *xp_inv_ex_stack_find(const struct xp_inv_ex_result *ex, int32_t id);

/*
 * Name every frame of @ex's stacks (explain.c): kernel frames from
 * /proc/kallsyms, user frames of the target (@pid, @ns_pid: its id in its
 * own namespace) by its symbolizer; a waker's user frames in another
 * process, and anything unresolved, are "[unknown]" (as offcputime
 * prints them).  0 or -ENOMEM; an unreadable kallsyms or maps leaves
 * frames unknown, not an error.
 */
int xp_inv_ex_symbolize(struct xp_inv_ex_result *ex, uint32_t pid, uint32_t ns_pid);

/* Keep stack @id (@n frames @ip, innermost first; a kernel stack, or a
 * user stack of @pid) unless @ex has it already.  0 or -ENOMEM. */
int xp_inv_ex_add_stack(struct xp_inv_ex_result *ex, int32_t id, bool kernel, uint32_t pid,
			const uint64_t *ip, uint32_t n);

/* Free what @ex holds (it is zeroed). */
void xp_inv_ex_result_free(struct xp_inv_ex_result *ex);

/* A histogram folded from the kernel's copies: what the documents show. */
struct xp_inv_lh_dist {
	struct xp_ex_sums ex;   /* --explain: the pairs' parts (zero otherwise) */
	uint64_t count;         /* pairs */
	uint64_t sum_ns;
	uint64_t min_ns;        /* valid when count > 0 */
	uint64_t max_ns;
	/* min_ns/max_ns are the bounds of the lowest and highest non-empty
	 * buckets, not exact extremes (an interval's difference of two reads:
	 * xp_inv_lh_dist_delta) */
	bool bucket_extremes;
	uint64_t buckets[XP_LH_BUCKETS];
};

/*
 * @into = @now - @before, two cumulative reads of one distribution (the
 * kernel's counters only grow): count, sum, buckets and --explain's parts
 * exact; min/max the bounds of the extreme non-empty buckets
 * (bucket_extremes).
 */
void xp_inv_lh_dist_delta(struct xp_inv_lh_dist *into, const struct xp_inv_lh_dist *now,
			  const struct xp_inv_lh_dist *before);

/*
 * --interval-ms: what one interval of the window added.  The kernel's maps
 * are read, never reset: each interval is the difference of two cumulative
 * reads (xp_inv_lh_dist_delta), so no pair completing while the maps are
 * read is lost or counted twice -- it falls in this interval or the next.
 * (A pair's bucket and its sum are two additions: one read may see one of
 * them, so an interval's sum may hold up to a pair in flight per CPU of
 * its neighbour's; the counts are exact.)
 */
struct xp_inv_lh_interval {
	uint64_t index;            /* 0, 1, ... */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC of the two reads */
	struct xp_inv_lh_dist total;
	struct xp_inv_lh_group *groups; /* groups with pairs in the interval, count desc */
	size_t ngroups;
	struct xp_lh_counters c;   /* the counters' growth */
	/* the whole window so far (cumulative), for an exposition of totals */
	const struct xp_inv_lh_result *cumulative;
};

struct xp_inv_lh_group {
	uint64_t key; /* thread id, the start's first argument, or
				   (the Agent's) a stream or device id */
	bool named; /* XP_LH_BY_NAME: name is the key */
	bool name_complete; /* the whole name fit (else cut at 127 bytes) */
	char name[XPROBE_NAME_MAX + 1]; /* NUL-terminated when named */
	struct xp_inv_lh_dist h;
};

struct xp_inv_lh_result {
	struct xp_inv_lh_dist total; /* every pair (folded over CPUs) */
	struct xp_lh_counters c;   /* summed over CPUs */
	struct xp_inv_lh_group *groups; /* sorted: count desc, then key asc */
	size_t ngroups;
	uint64_t open_at_end;      /* starts still open when the window closed */
	uint64_t inflight_occupied; /* thread slots in use at the end */
	uint64_t inflight_capacity, group_capacity, max_depth;
	bool nested;
	/* paired through a session link's per-call cookies (no in-flight
	 * map: open_at_end = session_starts - pairs, and thread_exit_open,
	 * unpaired_ends, inflight_overflow and depth_overflow stay 0) */
	bool session;
	/* how the uprobe endpoints attached (xp_uprobe_kind_name), NULL
	 * without uprobe endpoints */
	const char *uprobe_link;
	int group_by;              /* XP_LH_BY_* */
	/* the Agent's histograms (cuda: endpoints): how its pairs were formed
	 * ("nvtx_range": push/pop and start/end, "cuda_api_call",
	 * "cuda_activity_record"); NULL for the kernel's */
	const char *agent_pairing;
	/* the Agent's pairs lost in the target: CUPTI's dropped activity
	 * records, records CUPTI never finished, starts of a signal handler
	 * inside a record (reply.dropped); 0 for the kernel's */
	uint64_t agent_dropped;
	/* derived by xp_inv_lh_result_finish (accounting identities) */
	uint64_t pairs, starts, ends, unpaired_starts;
	enum xp_inv_lh_stop stop;
	uint64_t setup_ns;         /* collector start -> armed */
	uint64_t window_ns;        /* armed -> disarmed */
	uint64_t armed_at_ns;      /* CLOCK_MONOTONIC when armed */
	int ncpus;
	bool explain;
	struct xp_inv_ex_result ex; /* with explain */
	uint64_t ex_missed_in;      /* switch-ins no tracepoint reported (repaired) */
	uint32_t target_pid;        /* global tgid (with explain) */
};

struct xp_inv_lh_opts {
	const struct xp_target *target;
	struct xp_live_filter filter;   /* xp_live_filter_init */
	const struct xp_live_endpoint *start, *end; /* the live plan's (caller-owned) */
	bool nested;                    /* stack-nested, else exact */
	int group_by;                   /* XP_LH_BY_* */
	uint64_t max_groups;            /* 1..XP_LH_MAX_GROUPS_LIMIT (with --by) */
	uint64_t max_inflight;          /* 1..XP_LH_MAX_INFLIGHT_LIMIT */
	uint64_t max_depth;             /* 1..XP_LH_MAX_DEPTH (stack-nested) */
	bool explain;                   /* follow the threads through the scheduler */
	uint32_t explain_top;           /* slowest pairs kept, 0..XP_EX_TOP_MAX */
	uint64_t duration_ms;           /* 0: until a stop request, exit or deadline */
	uint64_t deadline_ns;           /* CLOCK_MONOTONIC; 0: none */
	const volatile sig_atomic_t *stop; /* non-zero ends the window; may be NULL */
	/* Called once armed, before the window (the caller re-verifies the
	 * target identity there); a non-zero return aborts with its error. */
	int (*on_armed)(void *ctx, struct xp_error *err);
	void *on_armed_ctx;
	/* Called from the window's wait with the time since arming, at most
	 * every XP_LIVE_PROGRESS_NS (NULL: none); it must not allocate or
	 * block.  The pairs are in the kernel's maps until the window ends. */
	void (*progress)(void *ctx, uint64_t elapsed_ns);
	void *progress_ctx;
	/* --interval-ms: every interval_ns after arming (0: none) the maps are
	 * read and @on_interval called with what the interval added; a
	 * non-zero return ends the window with its error.  The final result
	 * covers the whole window as without intervals. */
	uint64_t interval_ns;
	int (*on_interval)(void *ctx, const struct xp_inv_lh_interval *iv, struct xp_error *err);
	void *interval_ctx;
	/* Non-NULL: a result leaves the probes attached (disarmed) in
	 * *keep, for the caller to write the result first and detach
	 * after (xp_inv_lh_detach); detaching waits a grace period per
	 * link in the kernel.  NULL: detached before returning. */
	struct xp_inv_lh_attached **keep;
};

/* A finished window's links and loaded object, disarmed. */
struct xp_inv_lh_attached;

/*
 * Load, attach (every link before arming), arm, wait out the window,
 * disarm, wait out the programs still running (else detach first), read
 * the maps, detach (or hand the links to @o->keep), free (every path).  A target that exits
 * during the window is a result (stop XP_LH_STOP_TARGET_EXITED).  Errors:
 * PERMISSION_DENIED, SESSION_LIMIT_EXCEEDED (map sizes the kernel
 * refuses), TARGET_EXITED (gone while attaching), BINARY_NOT_MAPPED /
 * INVALID_EVENT_SELECTOR (the kernel refused an attachment), INTERNAL, or
 * what on_armed returned.  @r needs xp_inv_lh_result_free.
 */
int xp_inv_lh_collect(const struct xp_inv_lh_opts *o, struct xp_inv_lh_result *r,
		      struct xp_error *err);
void xp_inv_lh_result_free(struct xp_inv_lh_result *r);

/* Detach and free what xp_inv_lh_collect kept (NULL: nothing).  Returns 0
 * or the first -errno of a link's close; everything is freed either way. */
int xp_inv_lh_detach(struct xp_inv_lh_attached *a);

/*
 * validate's proof that the histogram path loads here: the real object,
 * sized with the defaults, the programs @start/@end need, loaded (map
 * creation and the verifier) and freed, nothing attached.  Returns 0 or
 * a negative errno; @detail (@size bytes) gets a sentence either way.
 */
int xp_inv_lh_load_check(const struct xp_live_endpoint *start, const struct xp_live_endpoint *end,
			 bool nested, int group_by, char *detail, size_t size);

/* --- the summary, pure (unit-tested) ----------------------------------- */

/* [*lo, *hi) of bucket @b (< XP_LH_BUCKETS); the last bucket's upper
 * bound saturates at UINT64_MAX (2^64 does not fit). */
void xp_inv_lh_bucket_bounds(uint32_t b, uint64_t *lo, uint64_t *hi);

/* Add one kernel copy @h (a CPU's, or a group's) into @into: sums, and
 * min/max over the copies that counted something (the kernel keeps ~min). */
void xp_inv_lh_hist_fold(struct xp_inv_lh_dist *into, const struct xp_lh_hist *h);

struct xp_inv_lh_percentile {
	uint32_t permille;         /* 500, 900, 950, 990, 999 */
	uint64_t rank;             /* 1-based nearest rank: ceil(p * count) */
	uint64_t value_ns;         /* the estimate */
	uint64_t bucket_lower_ns;  /* [lower, upper) of the bucket holding it */
	uint64_t bucket_upper_ns;
	double rel_error;          /* |estimate - true| / true is at most this */
};

/*
 * The @permille percentile of @h by nearest rank: the bucket holding the
 * rank-th smallest pair (exact: counts are exact), narrowed to [min, max],
 * and the midpoint of that interval.  Returns 0, or -ENOENT when @h is
 * empty.
 */
int xp_inv_lh_percentile(const struct xp_inv_lh_dist *h, uint32_t permille,
			 struct xp_inv_lh_percentile *out);

/* Derived totals (pairs, starts, ends, unpaired_starts) and the group
 * order.  Call once after reading the maps. */
void xp_inv_lh_result_finish(struct xp_inv_lh_result *r);

/* No pair was dropped by a bound (completeness "complete"). */
bool xp_inv_lh_complete(const struct xp_inv_lh_result *r);

/* The result's warnings, in a fixed order.  0 or -ENOMEM. */
int xp_inv_lh_warnings(const struct xp_inv_lh_result *r, struct xp_warnings *ws);

#endif /* XP_COLLECT_LATENCY_HISTOGRAM_H */
