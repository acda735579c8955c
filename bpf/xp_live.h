/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xp_live.h - the contract between bpf/xp_live.bpf.c and the live collector
 * (src/live/): record kinds and the ring record layouts.  Nothing else.
 *
 * One BPF ring buffer carries every record of a live capture.  Each record
 * starts with struct xp_live_hdr; its `kind` says which layout follows and
 * the consumer checks the record's size against that layout before reading
 * (short or unknown records are counted as unknown, never trusted).
 *
 *   kind                 layout                     size  ring slot (+8 hdr)
 *   XP_REC_UPROBE        xp_live_hdr                 24    32
 *   XP_REC_USDT          xp_live_hdr                 24    32
 *   XP_REC_TRACEPOINT    xp_live_hdr                 24    32
 *   XP_REC_SYS_ENTER     xp_live_sys_enter           72    80
 *   XP_REC_SYS_EXIT      xp_live_sys_exit            32    40
 *
 * `endpoint` is the index of the endpoint in the collector's plan: the BPF
 * cookie of the link for uprobes, tracepoints and USDT, the slot of the
 * matched syscall number for the raw syscall tracepoints.  Records carry no
 * pointer-referenced memory: uprobe/USDT/tracepoint records are identity
 * and time only; syscall entries keep the six scalar argument registers,
 * exits the scalar return value.
 *
 * Fixed-width fields only, largest first, padding explicit; the sizes are
 * asserted on both sides.  Include <linux/types.h> (user space) or
 * vmlinux.h (BPF) first.
 */
#ifndef XP_BPF_LIVE_H
#define XP_BPF_LIVE_H

#define XP_REC_UPROBE 1
#define XP_REC_USDT 2
#define XP_REC_TRACEPOINT 3
#define XP_REC_SYS_ENTER 4
#define XP_REC_SYS_EXIT 5

/* Syscall numbers one capture filters on, per direction (the contract's
 * "up to two endpoints"); a count says how many slots are used. */
#define XP_LIVE_MAX_SYSCALLS 2
/* Threads with an interrupted call kept open (bpf/syscall_restart.bpf.h). */
#define XP_LIVE_MAX_RESTARTS 4096
/* Endpoints of one capture: a start and an end selector. */
#define XP_LIVE_MAX_ENDPOINTS 2
#define XP_LIVE_SYSCALL_ARGS 6

struct xp_live_hdr {
	__u64 ts_ns;    /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;      /* tgid as seen in the target's PID namespace */
	__u32 tid;      /* thread id, same namespace */
	__u32 cpu;      /* bpf_get_smp_processor_id() */
	__u16 kind;     /* XP_REC_* */
	__u16 endpoint; /* index into the plan's endpoints */
};

struct xp_live_sys_enter {
	struct xp_live_hdr hdr;
	__u64 args[XP_LIVE_SYSCALL_ARGS]; /* rdi, rsi, rdx, r10, r8, r9 */
};

struct xp_live_sys_exit {
	struct xp_live_hdr hdr;
	__s64 ret; /* the scalar return register */
};

/* A thread's interrupted syscall, kept open until it runs again or ends. */
struct xp_live_restart {
	__s32 nr; /* the exit endpoint's syscall */
	__u16 ep; /* its endpoint */
	__u8 block; /* -ERESTART_RESTARTBLOCK: goes on as restart_syscall */
	__u8 pad;
};

/*
 * Per-CPU value of the xp_drops map: records lost on this CPU (ring
 * reservation or register read failures) and the timestamp of the first
 * one.  Every lost record carries a timestamp at or after the smallest
 * first_ts over all CPUs, which tells whether a loss fell inside a
 * capture's window or after its stopping point.
 */
struct xp_live_drops {
	__u64 count;
	__u64 first_ts; /* bpf_ktime_get_ns() of the first loss, 0 = none */
};

_Static_assert(sizeof(struct xp_live_hdr) == 24, "xp_live_hdr layout");
_Static_assert(sizeof(struct xp_live_sys_enter) == 72, "xp_live_sys_enter layout");
_Static_assert(sizeof(struct xp_live_sys_exit) == 32, "xp_live_sys_exit layout");

/* Largest record plus the ring's 8-byte record header: what the ring is
 * sized with per record of capacity. */
#define XP_LIVE_RING_SLOT_MAX (sizeof(struct xp_live_sys_enter) + 8)

#endif /* XP_BPF_LIVE_H */
