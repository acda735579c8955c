/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * syscall_agg.h - map layouts shared by bpf/syscall_agg.bpf.c and the
 * collector of `measure --syscall-aggregate` (src/inventory/syscall_aggregate.c).
 *
 * Maps:
 *   xp_sa_groups    PERCPU_HASH  key __u32 syscall number (the kernel's
 *                   orig_ax, as a 32-bit pattern), value struct
 *                   xp_sa_group; max_entries = --max-groups (keys)
 *   xp_sa_inflight  HASH         key __u32 thread id, value struct
 *                   xp_sa_start: the thread's slot, kept from its first
 *                   syscall in the window until it calls exit(2), written
 *                   in place (busy while a call is open); max_entries =
 *                   --max-inflight
 *   xp_sa_counters  PERCPU_ARRAY one struct xp_sa_counters
 *
 * Per-CPU group values need no atomics: each CPU adds into its own copy,
 * the collector sums them (min/max combined) after the window.  The
 * in-flight map is keyed by thread, and only that thread touches its slot,
 * so it never races; a slot is inserted once per thread, not per call
 * (measured: an insert + delete per syscall cost more than everything
 * else together).
 *
 * Accounting identity, per syscall number, at the end of the window:
 *   entries = matched_exits + inflight_at_end + inflight_drops
 *             + superseded + noreturn
 * where inflight_at_end is counted by the collector from the busy slots of
 * xp_sa_inflight.
 * Every exit is either matched (a start of the same thread was stored) or
 * unmatched (entered before arming, or its start was dropped/superseded).
 *
 * Fixed-width fields only, largest first, no padding holes.
 */
#ifndef XP_BPF_SYSCALL_AGG_H
#define XP_BPF_SYSCALL_AGG_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* x86_64 syscalls that never return to user space: no start is kept. */
#define XP_SA_NR_EXIT 60
#define XP_SA_NR_EXIT_GROUP 231
#define XP_SA_NR_RT_SIGRETURN 15

/* A return value in [-XP_SA_MAX_ERRNO, -1] is an error (IS_ERR_VALUE). */
#define XP_SA_MAX_ERRNO 4095

struct xp_sa_group {
	__u64 entries;          /* sys_enter hits */
	__u64 matched_exits;    /* sys_exit hits with this thread's start stored */
	__u64 unmatched_exits;  /* sys_exit hits without a stored start */
	__u64 errors;           /* exits returning -1..-4095 (matched or not) */
	__u64 total_ns;         /* sum of matched durations */
	__u64 min_ns;           /* smallest matched duration; 0 = none (see has_min) */
	__u64 max_ns;           /* largest matched duration */
	__u64 inflight_drops;   /* entries whose start found xp_sa_inflight full */
	__u64 superseded;       /* stored starts replaced by a later entry of the thread */
	__u64 noreturn;         /* entries of exit/exit_group (no start kept) */
	__u32 has_min;          /* 1 once min_ns holds a duration */
	__u32 pad;
};

struct xp_sa_start {
	__u64 start_ns;         /* bpf_ktime_get_ns() at sys_enter (valid when busy) */
	__u32 nr;               /* syscall number (valid when busy) */
	__u32 busy;             /* 1 while the thread is inside a syscall */
	/* an interrupted call kept open (bpf/syscall_restart.bpf.h): it runs
	 * again or ends in EINTR, and a handler's syscalls may come between */
	__u64 restart_ns;       /* its start (valid when restarting) */
	__u32 restart_nr;       /* its number */
	__u32 restarting;       /* XP_SA_RESTART_* */
};

#define XP_SA_RESTART_NONE 0
#define XP_SA_RESTART_SAME 1  /* runs again as itself, or ends in EINTR */
#define XP_SA_RESTART_BLOCK 2 /* goes on as restart_syscall, or ends in EINTR */

/* Rare-path counters only: the hot path touches no counter map (totals
 * are the sums of the groups plus these drops). */
struct xp_sa_counters {
	__u64 group_drop_entries; /* entries whose group found xp_sa_groups full */
	__u64 group_drop_exits;   /* exits whose group found xp_sa_groups full */
	__u64 inflight_drops;   /* starts not stored: xp_sa_inflight full */
	__u64 regs_read_errors; /* orig_ax unreadable on an unmatched exit */
};

#ifndef __bpf__
_Static_assert(sizeof(struct xp_sa_group) == 88, "xp_sa_group layout");
_Static_assert(sizeof(struct xp_sa_start) == 32, "xp_sa_start layout");
_Static_assert(sizeof(struct xp_sa_counters) == 32, "xp_sa_counters layout");
#endif

#endif /* XP_BPF_SYSCALL_AGG_H */
