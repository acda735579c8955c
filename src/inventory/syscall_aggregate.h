/* SPDX-License-Identifier: Apache-2.0 */
/*
 * syscall_aggregate.h - `measure --syscall-aggregate`: per-syscall counts and
 * durations of one process, counted in the kernel (bpf/syscall_agg.bpf.c)
 * in two bounded BPF maps, read once at the end of the window into one
 * bounded summary.  No per-call events, no argument or pointer values.
 *
 * What this module owns: loading and attaching the two raw tracepoint
 * programs with the map sizes of the flags (syscall_aggregate.c), arming and
 * disarming, reading the maps, and the summary (syscall_agg_summary.c):
 * summing per-CPU group values, counting in-flight starts per number,
 * x86_64 names and exact `syscall:NAME:entry|exit` selector hints for
 * known numbers (unknown numbers stay numeric, without hints), and the
 * deterministic group order.  Rendering is src/report/render_syscall_agg.c.
 *
 * Numbers: the kernel's syscall number is a 32-bit pattern in the maps;
 * the summary shows it as a signed int (syscall(-1) stays -1).
 */
#ifndef XP_COLLECT_SYSCALL_AGGREGATE_H
#define XP_COLLECT_SYSCALL_AGGREGATE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "../live/live.h"

#define XP_SA_MAX_GROUPS_LIMIT 65536u    /* keys of the per-CPU group map */
#define XP_SA_MAX_INFLIGHT_LIMIT 1048576u /* entries of the in-flight map */

/* One syscall number's summary (all counts exact). */
struct xp_inv_sa_summary_group {
	int32_t nr;                 /* syscall number */
	const char *name;           /* x86_64 name, NULL when unknown (static) */
	uint64_t entries;
	uint64_t matched_exits;
	uint64_t unmatched_exits;
	uint64_t inflight_at_end;   /* busy slots when the window closed */
	uint64_t inflight_drops;    /* starts not stored (in-flight map full) */
	uint64_t superseded;        /* starts replaced before their exit was seen */
	uint64_t noreturn;          /* exit/exit_group entries */
	uint64_t errors;            /* exits returning -1..-4095 */
	uint64_t total_ns;          /* over matched exits */
	uint64_t min_ns;            /* valid when matched_exits > 0 */
	uint64_t max_ns;
};

enum xp_inv_sa_stop_reason {
	XP_SA_STOP_DURATION = 0, /* "duration" */
	XP_SA_STOP_CANCELLED, /* "cancelled": SIGINT/SIGTERM */
};
const char *xp_inv_sa_stop_reason_name(enum xp_inv_sa_stop_reason r);

struct xp_inv_sa_result {
	struct xp_inv_sa_summary_group *groups; /* sorted: total_ns desc, entries desc, nr asc */
	size_t ngroups;
	/* totals over groups, plus the drops that have no group */
	uint64_t entries, matched_exits, unmatched_exits, inflight_at_end, errors;
	uint64_t group_drop_entries, group_drop_exits;
	uint64_t inflight_drops, superseded, noreturn, regs_read_errors;
	uint64_t group_capacity, inflight_capacity;
	uint64_t inflight_occupied;  /* in-flight slots (threads) in use at the end */
	enum xp_inv_sa_stop_reason stop_reason;
	uint64_t setup_ns;           /* collector start -> armed */
	uint64_t window_ns;          /* armed -> disarmed */
	uint64_t armed_at_ns;        /* CLOCK_MONOTONIC when armed (benchmarks) */
	int ncpus;                   /* possible CPUs (per-CPU values summed) */
};

/* How BPF recognizes the target (see src/live/live.h, xp_live_filter). */
struct xp_inv_sa_opts {
	uint32_t pid;               /* as xprobe sees it */
	struct xp_live_filter filter; /* xp_live_filter_init */
	uint64_t max_groups;        /* 1..XP_SA_MAX_GROUPS_LIMIT */
	uint64_t max_inflight;      /* 1..XP_SA_MAX_INFLIGHT_LIMIT */
	uint64_t duration_ms;       /* > 0 */
	const volatile sig_atomic_t *stop; /* non-zero ends the window early; may be NULL */
	/* Called once armed, before the window (the caller re-verifies the
	 * target identity there); a non-zero return aborts with its error. */
	int (*on_armed)(void *ctx, struct xp_error *err);
	void *on_armed_ctx;
	/* Called from the window's wait (every XP_SA_POLL_MS) with the time
	 * since arming: the command's progress line; NULL: none. */
	void (*progress)(void *ctx, uint64_t elapsed_ns, uint64_t count);
	void *progress_ctx;
};

/*
 * Load, attach, arm, wait out the window, disarm, read, clean up (links
 * and maps freed on every path).  Errors: PERMISSION_DENIED (bpf/attach
 * EPERM), SESSION_LIMIT_EXCEEDED (map sizes the kernel refuses),
 * INTERNAL (load), or what on_armed returned.  @r needs xp_inv_sa_result_free.
 */
int xp_inv_sa_collect(const struct xp_inv_sa_opts *o, struct xp_inv_sa_result *r,
		      struct xp_error *err);
void xp_inv_sa_result_free(struct xp_inv_sa_result *r);

/*
 * validate's proof that the aggregate path loads here: open the real
 * syscall_agg object, size its maps with @max_groups / @max_inflight and
 * load it (map creation and the verifier), attaching nothing.  Everything
 * is freed before returning.  Returns 0 or a negative errno; @detail
 * (@size bytes) gets a sentence either way.
 */
int xp_inv_sa_load_check(uint64_t max_groups, uint64_t max_inflight, char *detail, size_t size);

/* --- the summary, pure (unit-tested) ----------------------------------- */

struct xp_sa_group;   /* bpf/syscall_agg.h */

/* Fold @ncpus per-CPU values of one key into @g (sums, min/max). */
void xp_inv_sa_fold_percpu(struct xp_inv_sa_summary_group *g, const struct xp_sa_group *vals,
			   int ncpus);
/* Find or add the group of @nr in @r (keeps @r->groups unsorted). NULL: -ENOMEM. */
struct xp_inv_sa_summary_group *xp_inv_sa_result_group(struct xp_inv_sa_result *r, int32_t nr);
/* Names, totals and the final order.  Call once after folding. */
void xp_inv_sa_result_finish(struct xp_inv_sa_result *r);

/* Drops of every kind (schema collection.dropped). */
uint64_t xp_inv_sa_dropped(const struct xp_inv_sa_result *r);
/* Nothing dropped, window not cancelled (schema completeness). */
bool xp_inv_sa_complete(const struct xp_inv_sa_result *r);
/* The result's warnings, in a fixed order.  0 or -ENOMEM. */
int xp_inv_sa_warnings(const struct xp_inv_sa_result *r, struct xp_warnings *ws);

/* "syscall:NAME:entry" / "syscall:NAME:exit" into @buf; false when the
 * number is unknown (no hint). */
bool xp_inv_sa_selector_hint(int32_t nr, bool exit, char *buf, size_t size);

#endif /* XP_COLLECT_SYSCALL_AGGREGATE_H */
