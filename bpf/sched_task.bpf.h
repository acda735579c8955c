/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched_task.bpf.h - what --explain's scheduler programs read of a task,
 * once for both of them: bpf/latency_hist.bpf.c (--histogram --explain,
 * in the kernel) and bpf/xp_sched.bpf.c (the exact modes' timeline).
 *
 * The task's pid and tgid are CO-RE relocated plain loads (the
 * tracepoints' arguments are typed BTF pointers: one instruction each on
 * every context switch of the machine, where BPF_CORE_READ would be a
 * helper call).  The rest is read on rare paths only, through
 * BPF_CORE_READ: the syscall a blocking task is in, and how long the
 * kernel says a task has been on its CPU.  Include vmlinux.h,
 * <bpf/bpf_helpers.h> and <bpf/bpf_core_read.h> first.
 */
#ifndef XP_SCHED_TASK_BPF_H
#define XP_SCHED_TASK_BPF_H

struct rq___xp {
	__u64 clock;
} __attribute__((preserve_access_index));

struct cfs_rq___xp {
	struct rq___xp *rq;
} __attribute__((preserve_access_index));

struct task_struct___xp {
	int pid;
	int tgid;
	struct {
		unsigned long long last_arrival;
	} sched_info;
	struct {
		struct cfs_rq___xp *cfs_rq;
	} se;
} __attribute__((preserve_access_index));

/* Is @p a thread of the process @tgid (global ids)?  *@tid: its id. */
static __always_inline int xp_sched_task_of(struct task_struct *p, __u32 tgid, __u32 *tid)
{
	struct task_struct___xp *t = (void *)p;

	if (t->tgid != (int)tgid)
		return 0;
	*tid = (__u32)t->pid;
	return 1;
}

/* The syscall @p is in (orig_ax of its saved user registers), -1: none. */
static __always_inline __s32 xp_sched_syscall_of(struct task_struct *p)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(p);
	__s64 nr = -1;

	if (!regs || bpf_probe_read_kernel(&nr, sizeof(nr), &regs->orig_ax))
		return -1;
	return nr < 0 ? -1 : (__s32)nr;
}

/*
 * How long @p, running, has been on its CPU by the kernel's own account:
 * its run queue's clock less sched_info.last_arrival (the same clock at
 * its switch in); 0 when unknown.  The clock is the one read at the last
 * update of that run queue (fresh in a switch, up to a tick old at a
 * probe), so the age comes out that much short, never long.
 */
static __always_inline __u64 xp_sched_arrival_age(struct task_struct *p)
{
	struct task_struct___xp *t = (void *)p;
	__u64 arr = BPF_CORE_READ(t, sched_info.last_arrival);
	__u64 clk = BPF_CORE_READ(t, se.cfs_rq, rq, clock);

	return arr && clk > arr ? clk - arr : 0;
}

#endif /* XP_SCHED_TASK_BPF_H */
