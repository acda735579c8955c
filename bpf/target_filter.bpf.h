/* SPDX-License-Identifier: Apache-2.0 */
/*
 * target_filter.bpf.h - the one target filter every xprobe BPF program
 * runs first (filter by process identity before anything else;
 * docs/live-measurement.md, "What is attached").  Included by every
 * program: bpf/xp_live.bpf.c, bpf/syscall_agg.bpf.c and
 * bpf/latency_hist.bpf.c; user space fills the five rodata filters between open and load with
 * XP_TARGET_FILTER_APPLY (src/live/live.h) from a struct xp_live_filter.
 *
 * Two modes:
 *   - the target shares a PID namespace with the kernel's view of xprobe:
 *     compare the global tgid (one helper call, one compare);
 *   - the target lives in another PID namespace: also translate ids with
 *     bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino) and keep only
 *     ns_tgid; events then carry the ids the target sees itself.
 * targ_tgid 0 means "not filtered by the global tgid" (xprobe itself runs
 * in a non-initial PID namespace and cannot name the global id).
 */
#ifndef XP_TARGET_FILTER_BPF_H
#define XP_TARGET_FILTER_BPF_H

/* Global tgid of the target as the kernel numbers it; 0 = not filtered. */
const volatile __u32 targ_tgid = 0;
/* 1: resolve ids in the target's PID namespace and keep only ns_tgid. */
const volatile __u32 use_pidns = 0;
const volatile __u32 ns_tgid = 0;
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

/* uapi layout of struct bpf_pidns_info, declared here so that reading it
 * needs no CO-RE relocation. */
struct xp_pidns_info {
	__u32 pid;
	__u32 tgid;
};

/*
 * Is the current task a thread of the target?  On yes, *pid and *tid are
 * its ids as the events report them (namespace-relative in pidns mode).
 */
static __always_inline int xp_target_ids(__u32 *pid, __u32 *tid)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct xp_pidns_info ns;

	if (targ_tgid && (__u32)(id >> 32) != targ_tgid)
		return 0;
	if (!use_pidns) {
		*pid = id >> 32;
		*tid = (__u32)id;
		return 1;
	}
	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, (struct bpf_pidns_info *)&ns,
					sizeof(ns)))
		return 0;
	if (ns.tgid != ns_tgid)
		return 0;
	*pid = ns.tgid;
	*tid = ns.pid;
	return 1;
}

#endif /* XP_TARGET_FILTER_BPF_H */
