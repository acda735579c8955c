/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * xp_sched.bpf.c - the scheduler timeline of `measure --explain` in the
 * exact modes: every switch out, switch in, wakeup and migration of a
 * thread of the target, one record each into a ring of its own (layout:
 * xp_sched.h).  The CLI intersects the timeline with every evidence pair
 * of the capture (src/inventory/explain_pairs.c).
 *
 *   xp_sched_switch    tp_btf/sched_switch: prev out (runnable, or blocked
 *                      S/D with the syscall and stacks), next in
 *   xp_sched_wakeup    tp_btf/sched_wakeup and sched_wakeup_new: a
 *                      blocked thread becomes runnable; the waker's ids,
 *   xp_sched_wakeup_new  comm and stacks (the tracepoint runs in its
 *                      context)
 *   xp_sched_migrate   tp_btf/sched_migrate_task
 *
 * Every program does, in this order: (1) the armed flag, (2) the target
 * filter on the task's tgid (two loads, a compare: for every other task of
 * the machine nothing more), (3) reserve, fill and submit one record with
 * BPF_RB_NO_WAKEUP.  A failed reservation is counted per CPU with the
 * time of the first (xp_sched_drops): the explanation of a pair that
 * overlaps a loss is withheld, never guessed.  Wakeups are recorded only
 * for a thread the programs saw block (xp_sched_blocked), so a wakeup of
 * a thread that is still running costs one lookup.  No loops, no
 * allocation beyond the ring, never a user-memory read except the
 * stacks the kernel's helper walks.
 *
 * CO-RE.  What the programs read of a task is sched_task.bpf.h's (shared
 * with latency_hist.bpf.c's --explain); unlike xp_live.bpf.c this
 * object needs the running kernel's BTF, so it is its own object and
 * loaded only with --explain.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sched_task.bpf.h"
#include "xp_sched.h"

/* The target's global tgid (rodata, set before load). */
const volatile __u32 targ_tgid = 0;

/* 0 until every program is attached; the collector flips it once. */
__u32 armed = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024); /* resized from --max-events at load */
} xp_sched_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_sched_drops);
} xp_sched_drops SEC(".maps");

/* Threads that blocked and were not woken yet (value unused). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XP_SCHED_MAX_BLOCKED);
	__type(key, __u32);
	__type(value, __u8);
} xp_sched_blocked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, XP_SCHED_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, XP_SCHED_STACK_DEPTH * sizeof(__u64));
} xp_sched_stacks SEC(".maps");

static __always_inline void count_drop(__u64 ts)
{
	__u32 zero = 0;
	struct xp_sched_drops *v = bpf_map_lookup_elem(&xp_sched_drops, &zero);

	if (!v)
		return;
	if (!v->first_ts)
		v->first_ts = ts;
	v->count += 1;
}

/* A zeroed record of @kind for @tid at @ts, or NULL (counted). */
static __always_inline struct xp_sched_rec *rec_new(__u16 kind, __u32 tid, __u64 ts)
{
	struct xp_sched_rec *r = bpf_ringbuf_reserve(&xp_sched_ring, sizeof(*r), 0);

	if (!r) {
		count_drop(ts);
		return NULL;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->ts_ns = ts;
	r->tid = tid;
	r->cpu = bpf_get_smp_processor_id();
	r->kind = kind;
	r->syscall = -1;
	r->ustack = -1;
	r->kstack = -1;
	return r;
}

/* sched_switch(bool preempt, struct task_struct *prev, struct task_struct
 * *next, unsigned int prev_state); runs in prev's context. */
SEC("tp_btf/sched_switch")
int BPF_PROG(xp_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct xp_sched_rec *r;
	__u32 tid;
	__u64 now;
	__u8 one = 1;

	if (!armed)
		return 0;
	now = 0;
	if (xp_sched_task_of(prev, targ_tgid, &tid)) {
		now = bpf_ktime_get_ns();
		r = rec_new(XP_SCHED_OUT, tid, now);
		if (r) {
			r->arrival_age_ns = xp_sched_arrival_age(prev);
			if (preempt || !(prev_state & 0xff)) {
				r->state = XP_SCHED_RUNNABLE;
			} else {
				r->state = (prev_state & 2) ? XP_SCHED_BLOCKED_D : XP_SCHED_BLOCKED_S;
				r->syscall = xp_sched_syscall_of(prev);
				r->ustack = bpf_get_stackid(ctx, &xp_sched_stacks, BPF_F_USER_STACK);
				r->kstack = bpf_get_stackid(ctx, &xp_sched_stacks, 0);
				bpf_map_update_elem(&xp_sched_blocked, &tid, &one, BPF_ANY);
			}
			bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
		}
	}
	if (xp_sched_task_of(next, targ_tgid, &tid)) {
		if (!now)
			now = bpf_ktime_get_ns();
		/* switched in: whatever it waited for is over */
		bpf_map_delete_elem(&xp_sched_blocked, &tid);
		r = rec_new(XP_SCHED_IN, tid, now);
		if (r)
			bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	}
	return 0;
}

/* A thread of the target becomes runnable; runs in the waker's context. */
static __always_inline int woken(void *ctx, struct task_struct *p, __u8 flags)
{
	struct xp_sched_rec *r;
	__u64 id, now;
	__u32 tid;

	if (!armed || !xp_sched_task_of(p, targ_tgid, &tid))
		return 0;
	if (flags != XP_SCHED_F_NEW) {
		if (!bpf_map_lookup_elem(&xp_sched_blocked, &tid))
			return 0; /* not seen blocking: nothing ends */
		bpf_map_delete_elem(&xp_sched_blocked, &tid);
	}
	now = bpf_ktime_get_ns();
	r = rec_new(XP_SCHED_WAKEUP, tid, now);
	if (!r)
		return 0;
	id = bpf_get_current_pid_tgid();
	r->flags = flags;
	r->waker_pid = id >> 32;
	r->waker_tid = (__u32)id;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->ustack = bpf_get_stackid(ctx, &xp_sched_stacks, BPF_F_USER_STACK);
	r->kstack = bpf_get_stackid(ctx, &xp_sched_stacks, 0);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(xp_sched_wakeup, struct task_struct *p)
{
	return woken(ctx, p, 0);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(xp_sched_wakeup_new, struct task_struct *p)
{
	return woken(ctx, p, XP_SCHED_F_NEW);
}

/* sched_migrate_task(struct task_struct *p, int dest_cpu) */
SEC("tp_btf/sched_migrate_task")
int BPF_PROG(xp_sched_migrate, struct task_struct *p, int dest_cpu)
{
	struct xp_sched_rec *r;
	__u32 tid;

	if (!armed || !xp_sched_task_of(p, targ_tgid, &tid))
		return 0;
	r = rec_new(XP_SCHED_MIGRATE, tid, bpf_ktime_get_ns());
	if (!r)
		return 0;
	r->dest_cpu = (__u32)dest_cpu;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Dual licensed; the kernel sees the GPL option (GPL-only helpers:
 * bpf_probe_read_kernel, bpf_get_stackid, ring buffers). */
char LICENSE[] SEC("license") = "GPL";
