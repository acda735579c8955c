/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xp_sched.h - the contract between bpf/xp_sched.bpf.c and its collector
 * (src/live/live_sched.c): the scheduler timeline of one target's threads
 * that `measure --explain` records beside an exact capture.  Nothing else.
 *
 * One record per scheduler event of a thread of the target, in one BPF
 * ring buffer of its own (the capture's ring stays the contract's):
 *
 *   kind               when                          fields used
 *   XP_SCHED_OUT       the thread left its CPU       state, syscall, ustack,
 *                      (sched_switch, prev)          kstack (blocked only),
 *                                                    arrival_age_ns
 *   XP_SCHED_IN        the thread got a CPU          -
 *                      (sched_switch, next)
 *   XP_SCHED_WAKEUP    a blocked thread became       waker_pid, waker_tid,
 *                      runnable (sched_wakeup[_new]) comm, ustack, kstack
 *                                                    (the waker's)
 *   XP_SCHED_MIGRATE   moved to another CPU          dest_cpu
 *
 * Ids are global (the scheduler's tracepoints see task_structs; --explain
 * is refused where the target's ids differ from them).  Stack ids index
 * the object's stack map; negative: not captured.
 *
 * Fixed-width fields only, largest first, padding explicit; the size is
 * asserted on both sides.  Include <linux/types.h> (user space) or
 * vmlinux.h (BPF) first.
 */
#ifndef XP_BPF_SCHED_H
#define XP_BPF_SCHED_H

#define XP_SCHED_OUT 1
#define XP_SCHED_IN 2
#define XP_SCHED_WAKEUP 3
#define XP_SCHED_MIGRATE 4

/* XP_SCHED_OUT's state: the state the thread left in. */
#define XP_SCHED_RUNNABLE 0 /* preempted: still runnable (run queue) */
#define XP_SCHED_BLOCKED_S 1 /* interruptible sleep */
#define XP_SCHED_BLOCKED_D 2 /* uninterruptible sleep */

/* XP_SCHED_WAKEUP's flags */
#define XP_SCHED_F_NEW 1 /* sched_wakeup_new: a new thread's first wakeup */

/* Threads blocked at once whose wakeup the programs follow. */
#define XP_SCHED_MAX_BLOCKED 4096
/* Stacks kept (1 KiB each): the blocked and wakers' stacks. */
#define XP_SCHED_STACKS 4096
#define XP_SCHED_STACK_DEPTH 127

struct xp_sched_rec {
	__u64 ts_ns;     /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 arrival_age_ns; /* OUT: how long it had been on this CPU by the
				 kernel's own clock (rq clock - sched_info.last_arrival),
				 0 unknown: dates a switch in no tracepoint reported */
	__u32 tid;       /* the target's thread (global id) */
	__u32 cpu;       /* where the event ran */
	__u16 kind;      /* XP_SCHED_* */
	__u8 state;      /* OUT: XP_SCHED_RUNNABLE / _BLOCKED_S / _BLOCKED_D */
	__u8 flags;      /* WAKEUP: XP_SCHED_F_* */
	__s32 syscall;   /* OUT blocked: the syscall it was in; -1 none */
	__s32 ustack;    /* OUT blocked: its stacks; WAKEUP: the waker's */
	__s32 kstack;
	__u32 waker_pid; /* WAKEUP: the waker (global ids) */
	__u32 waker_tid;
	__u32 dest_cpu;  /* MIGRATE */
	__u32 pad;
	char comm[16];   /* WAKEUP: the waker's comm */
};

/* Per-CPU value of xp_sched_drops: records the ring could not take, and
 * the timestamp of the first. */
struct xp_sched_drops {
	__u64 count;
	__u64 first_ts;
};

_Static_assert(sizeof(struct xp_sched_rec) == 72, "xp_sched_rec layout");

#endif /* XP_BPF_SCHED_H */
