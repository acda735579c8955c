/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * latency_hist.h - the contract between bpf/latency_hist.bpf.c and the
 * collector of `measure --histogram` (src/inventory/latency_histogram.c): map
 * layouts, the log-linear bucket scheme, and the accounting identities.
 *
 * Maps:
 *   xp_lh_total     PERCPU_ARRAY, one struct xp_lh_total: the histogram of
 *                   every pair plus the rare-path counters.  Per CPU, so
 *                   CPUs never share a cache line; the collector folds the
 *                   copies after the window.
 *   xp_lh_groups    HASH (BPF_F_NO_PREALLOC), key __u64 group key (the
 *                   thread id, or the start endpoint's first argument),
 *                   value struct xp_lh_hist; max_entries = --max-groups.
 *                   Shared between CPUs (atomic adds, min/max by
 *                   compare-and-swap): a per-CPU copy of every group
 *                   would cost groups x CPUs x 7.8 KiB.  Only loaded with
 *                   --by; a pair whose group finds the map full is counted
 *                   in group_overflow (it stays in the total).
 *   xp_lh_open      HASH, key __u32 thread id, value struct xp_lh_open:
 *                   the thread's one open start (policy exact: a syscall
 *                   or CPython GC lifecycle cannot nest on a thread);
 *                   max_entries = --max-inflight (threads).
 *   xp_lh_stack     HASH, key __u32 thread id, value struct xp_lh_stack:
 *                   the thread's stack of open starts (policy
 *                   stack-nested: recursion), at most --max-depth deep;
 *                   max_entries = --max-inflight.  Only one of the two
 *                   in-flight maps is sized; the other holds one entry.
 *                   On the session path (below) neither is used: each
 *                   call's start is its session cookie.
 *   xp_lh_zero      ARRAY, one zeroed struct xp_lh_zero: what a new group
 *                   or stack slot is created from (BPF's stack is 512
 *                   bytes, these values are larger).  Never written.
 *
 * A thread's slot is created at its first start in the window and written
 * in place afterwards (no insert or delete per call); the thread-exit
 * program (raw tracepoint sched_process_exit) deletes it when the thread
 * ends, so threads that come and go do not fill --max-inflight.
 *
 * The session path (stack-nested uprobe pairs without --by arg0 or
 * --explain, on kernels with BPF_TRACE_UPROBE_SESSION): one program runs
 * at the entry and at the return of each call, and the kernel keeps one
 * 8-byte cookie per call between the two.  The entry stores its time
 * there, the return reads it: every return pairs with its own call's
 * entry, at any depth, with no per-thread state.  An entry that does not
 * store (not the target, not armed) returns 1 and the kernel skips that
 * call's return, so nothing is unpaired; starts are counted
 * (session_starts) for open_at_end.
 *
 * Accounting identities, at the end of the window (open_at_end counted by
 * the collector from the in-flight map, or session_starts - pairs):
 *   starts = pairs + superseded + open_at_end + thread_exit_open
 *            + inflight_overflow + depth_overflow
 *   ends   = pairs + unpaired_ends
 *   pairs  = the total's bucket sum = the groups' bucket sums
 *            + group_overflow + key_unreadable       (with --by)
 * starts and ends are not counted on the hot path: the identities give
 * them.  An end whose start was not stored (it began before the window,
 * or a bound dropped it) is an unpaired end.
 *
 * Buckets (log-linear, HdrHistogram style with 16 sub-buckets; the one
 * definition is include/xprobe/latency_buckets.h, shared with libxprobe's
 * in-target histograms): a value v < 16 ns has its own bucket v; above,
 * the power of two [2^k, 2^(k+1)) holding v is split into 16 equal
 * sub-buckets of width 2^(k-4).  976 buckets cover every __u64.  A bucket spans at most 1/16
 * (6.25%) of its lower bound; the midpoint of the part of a bucket that
 * lies within [min, max] is within 1/32 (3.125%) of any value in it
 * (docs/histograms.md, "Accuracy").
 *
 * Fixed-width fields only, largest first, no padding holes; the sizes are
 * asserted on the user side.
 */
#ifndef XP_BPF_LATENCY_HIST_H
#define XP_BPF_LATENCY_HIST_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#include "../include/xprobe/latency_buckets.h"

/* The bucket scheme is include/xprobe/latency_buckets.h's (one definition
 * for BPF, libxprobe and the CLI); these are its names here. */
#define XP_LH_SUB_BITS XPROBE_LH_SUB_BITS
#define XP_LH_SUB XPROBE_LH_SUB /* 16 sub-buckets per power of two */
#define XP_LH_BUCKETS XPROBE_LH_BUCKETS /* 976 */

/* Compiled bound of --max-depth (a power of two: the index is masked). */
#define XP_LH_MAX_DEPTH 32

/* Grouping (rodata group_by). */
#define XP_LH_BY_NONE 0
#define XP_LH_BY_THREAD 1
#define XP_LH_BY_ARG0 2

/*
 * --explain: each pair's latency split by what its thread was doing
 * (latency_hist.bpf.c, "Explain").  The four components add up to the
 * latency exactly: on_cpu is the remainder of the other three.
 */
#define XP_EX_ON_CPU 0    /* the thread ran */
#define XP_EX_RUNQ 1      /* runnable, not running: preempted, or woken and waiting */
#define XP_EX_BLOCKED_S 2 /* off CPU, interruptible sleep (S) */
#define XP_EX_BLOCKED_D 3 /* off CPU, uninterruptible (D: I/O, page-in) */
#define XP_EX_NCOMP 4

struct xp_ex_sums {
	__u64 comp[XP_EX_NCOMP]; /* ns, summed over pairs */
	__u64 nvcsw;             /* voluntary switches (the thread blocked) */
	__u64 nivcsw;            /* involuntary switches (it was preempted) */
	__u64 nmigr;             /* migrations to another CPU */
	__u64 pairs;             /* pairs explained (every pair of an --explain run) */
};

struct xp_lh_hist {
	struct xp_ex_sums ex;         /* --explain: zero otherwise */
	__u64 sum_ns;                 /* sum of the pairs' latencies (their
					 count is the sum of the buckets) */
	__u64 min_inv;                /* ~(smallest latency): 0 = none yet, and
					 both extremes update as maxima */
	__u64 max_ns;
	__u64 buckets[XP_LH_BUCKETS]; /* pairs per bucket */
};

/* Rare-path counters only (the hot path adds into the histogram). */
struct xp_lh_counters {
	__u64 superseded;        /* exact: a start replaced by the thread's next start */
	__u64 unpaired_ends;     /* ends without a stored start */
	__u64 inflight_overflow; /* starts of threads that found no slot (--max-inflight) */
	__u64 depth_overflow;    /* stack-nested: starts deeper than --max-depth */
	__u64 group_overflow;    /* pairs whose group found the group map full */
	__u64 key_unreadable;    /* pairs whose arg0 key could not be read (no group) */
	__u64 thread_exit_open;  /* starts still open when their thread exited */
	__u64 minmax_contended;  /* min/max updates two compare-and-swaps could not
				    settle (0 in practice; min/max exact when 0) */
	/* --explain */
	__u64 ex_unexplained;    /* pairs whose thread had no explain slot
				    (--max-inflight) or frame (depth > XP_EX_MAX_DEPTH) */
	__u64 ex_clamped;        /* pairs whose parts exceeded the latency by a race
				    of two CPUs' clocks and were cut to it */
	__u64 ex_block_overflow; /* blocked time whose (syscall, state) found the
				    by-syscall map full */
	/* the session path (xp_lh_up_session) */
	__u64 session_starts;    /* starts kept in their call's cookie: no
				    in-flight map holds them, so what is open
				    at the end is session_starts - pairs */
};

struct xp_lh_total {
	struct xp_lh_counters c;
	struct xp_lh_hist h;
};

/* policy exact: one open start per thread */
struct xp_lh_open {
	__u64 ts;       /* bpf_ktime_get_ns() at the start (valid when busy) */
	__u64 key;      /* arg0 at the start */
	__u32 busy;     /* 1 while a start is open */
	__u32 key_bad;  /* 1: arg0 could not be read */
	__u32 restart;  /* XP_LH_RESTART_*: the open syscall was interrupted */
	__u32 pad;
};

/* xp_lh_open.restart (bpf/syscall_restart.bpf.h) */
#define XP_LH_RESTART_NONE 0
#define XP_LH_RESTART_SAME 1  /* runs again as itself, or ends in EINTR */
#define XP_LH_RESTART_BLOCK 2 /* goes on as restart_syscall, or ends in EINTR */

struct xp_lh_frame {
	__u64 ts;
	__u64 key;
};

/* policy stack-nested: the open starts of one thread, innermost last */
struct xp_lh_stack {
	__u32 depth;    /* frames stored */
	__u32 lost;     /* starts beyond --max-depth not stored; their ends come first */
	__u32 key_bad;  /* bit d: frame d's arg0 could not be read */
	__u32 pad;
	struct xp_lh_frame f[XP_LH_MAX_DEPTH];
};

/* What new groups and stack slots are created from. */
struct xp_lh_zero {
	struct xp_lh_hist h;
	struct xp_lh_stack s;
};

/* The bucket of @v (latency_buckets.h). */
static __always_inline __u32 xp_lh_bucket_of(__u64 v)
{
	return xprobe_lh_bucket_of(v);
}

/* --- --explain ---------------------------------------------------------- */

/* Frames of a thread explained (stack-nested); deeper pairs are counted in
 * ex_unexplained. */
#define XP_EX_MAX_DEPTH 8
/* Per thread: the syscalls (with the state) it blocked in, first come. */
#define XP_EX_BY 8
/* Compiled bound of --explain-top. */
#define XP_EX_TOP_MAX 64
/* Bound of the by-syscall totals map. */
#define XP_EX_BLOCK_KEYS 256

/* Thread states (struct xp_ex_thread.state). */
#define XP_EX_ST_RUNNING 0
#define XP_EX_ST_RUNQ 1
#define XP_EX_ST_BLOCKED_S 2
#define XP_EX_ST_BLOCKED_D 3

/* One blocked period: where it blocked and who woke it. */
struct xp_ex_block {
	__u64 ns;          /* 0: none */
	__s32 nr;          /* the syscall it blocked in; -1: none (a page fault) */
	__u32 state;       /* XP_EX_ST_BLOCKED_S or _D */
	__s32 ustack;      /* stack ids in xp_ex_stacks; negative: not captured */
	__s32 kstack;
	__u32 waker_pid;   /* the waker's ids: 0 for the idle task (an interrupt
			      on an idle CPU woke it) */
	__u32 waker_tid;
	__s32 waker_ustack;
	__s32 waker_kstack;
	char waker_comm[16]; /* "": switched in without a wakeup seen (every
				task, the idle one too, has a comm) */
};

static __always_inline int xp_ex_block_woken(const struct xp_ex_block *b)
{
	return b->waker_comm[0] != 0;
}

/* What a thread's counters were when one of its pairs started. */
struct xp_ex_frame {
	__u64 cum[XP_EX_NCOMP];
	__u64 nvcsw, nivcsw, nmigr;
	__u64 by_ns[XP_EX_BY];
	struct xp_ex_block longest; /* the longest blocked period inside the pair */
};

/* A thread of the target while --explain runs (global tid). */
struct xp_ex_thread {
	__u64 last_ts;               /* the last state change */
	__u64 cum[XP_EX_NCOMP];      /* time in each state since the slot was made */
	__u64 nvcsw, nivcsw, nmigr;
	__u64 by_ns[XP_EX_BY];       /* blocked time per (syscall, state) slot */
	__s32 by_nr[XP_EX_BY];
	__u32 by_state[XP_EX_BY];    /* 0: slot free */
	__u32 state;                 /* XP_EX_ST_* */
	__u32 depth;                 /* frames open (exact: 0 or 1) */
	struct xp_ex_block cur;      /* the blocked period in progress (ns: its start) */
	struct xp_ex_frame f[XP_EX_MAX_DEPTH];
};

/* A key of the by-syscall totals: (syscall + 1) << 8 | state. */
static __always_inline __u64 xp_ex_block_key(__s32 nr, __u32 state)
{
	return ((__u64)(__u32)(nr + 1) << 8) | (state & 0xff);
}

/* One of the slowest pairs. */
struct xp_ex_slow {
	__u64 start_ns;     /* CLOCK_MONOTONIC of the start */
	__u64 latency_ns;
	__u64 comp[XP_EX_NCOMP];
	__u64 nvcsw, nivcsw, nmigr;
	__u64 key;          /* the group key (--by), else 0 */
	__u32 tid;          /* global thread id */
	__u32 pad;
	struct xp_ex_block longest;
};

/*
 * The slowest pairs a CPU saw, kept in the kernel (a bounded set per CPU,
 * merged by the collector: the slowest N overall are among the N slowest
 * of each CPU).  Per CPU because uprobe programs may not take a
 * bpf_spin_lock, and need none here: a program of this object is never
 * re-entered on its CPU (the kernel skips a kprobe-type or raw-tracepoint
 * program that would nest on a CPU where it runs, and counts it missed).
 */
struct xp_ex_top {
	__u32 n;            /* slots used */
	__u32 min_i;        /* the slot of the smallest, once full */
	__u64 min_ns;       /* the smallest latency kept once full */
	struct xp_ex_slow s[XP_EX_TOP_MAX];
};

/*
 * Per latency bucket, each component's sum (per CPU).  1024 rows for the
 * 976 buckets: the index is masked (b & 1023), which the verifier can
 * bound where a compare the compiler moved it cannot; 32 KiB, the most a
 * per-CPU value may be.
 */
#define XP_EX_BUCKET_ROWS 1024
struct xp_ex_buckets {
	__u64 comp[XP_EX_BUCKET_ROWS][XP_EX_NCOMP];
};

#endif /* XP_BPF_LATENCY_HIST_H */
