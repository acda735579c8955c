/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * xp_live.bpf.c - the BPF side of `xprobe measure --pid`: one program per
 * attachment kind, all writing into one ring buffer (layouts: xp_live.h).
 *
 *   xp_uprobe      uprobe and uretprobe links, one per endpoint, cookie =
 *                  endpoint index
 *   xp_usdt        USDT links through libbpf's USDT support (CPython
 *                  gc__start / gc__done), cookie = endpoint index
 *   xp_tracepoint  named tracepoints (perf tracepoint links), cookie =
 *                  endpoint index; identity and time only, no payload
 *   xp_sys_enter   raw tracepoint sys_enter: six scalar argument registers
 *   xp_sys_exit    raw tracepoint sys_exit: the scalar return value
 *
 * Every program does, in this order and nothing more: (1) filter the
 * target (global tgid, then the target's own PID namespace when it has
 * one), (2) check the armed flag, (3) for syscalls compare the number
 * against at most two, (4) read the kernel pt_regs of a matched syscall,
 * (5) reserve, fill and submit one record with BPF_RB_NO_WAKEUP.  A failed
 * reservation is counted in xp_drops (per CPU, with the time of the first
 * loss; the collector reports losses as EVENTS_DROPPED); nothing is lost
 * silently.  Programs return 0,
 * never print, have no loops, and never dereference user memory.
 *
 * Why no wakeups: a wakeup per record costs the target microseconds (the
 * anchors measured ~7 us per bpftrace printf; docs/live-measurement.md,
 * "Overhead"); the
 * collector consumes on its own short timer instead.
 *
 * CO-RE and BTF.  The object is compiled against vmlinux.h generated from
 * the build machine's BTF, with BPF_NO_PRESERVE_ACCESS_INDEX: the only
 * kernel structures it touches are x86-64 struct pt_regs (the syscall
 * entry frame, uapi-stable) and struct bpf_pidns_info (uapi), so it needs
 * no CO-RE relocation.  With none, libbpf does not parse the running
 * kernel's 5.5 MB vmlinux BTF at load, which is what keeps the collector
 * armed in milliseconds and its peak RSS in single-digit megabytes.
 *
 * Arming.  The collector attaches every link with armed == 0, so events
 * that fire during setup return at step (2); it then sets armed = 1 once.
 * Filters are rodata, written between open and load.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "syscall_restart.bpf.h"
#include "target_filter.bpf.h"
#include "xp_live.h"

#ifndef offsetof
#define offsetof(t, m) __builtin_offsetof(t, m)
#endif

/* --- filters (rodata, set before load) ---------------------------------- */

/* targ_tgid, use_pidns, ns_tgid, pidns_dev, pidns_ino: target_filter.bpf.h */
/* Syscall numbers per direction and the endpoint each one reports; the
 * first enter_count (exit_count) slots are used, the rest never compared. */
const volatile __u32 enter_count = 0;
const volatile __s32 enter_nr[XP_LIVE_MAX_SYSCALLS] = { 0, 0 };
const volatile __u32 enter_ep[XP_LIVE_MAX_SYSCALLS] = { 0, 0 };
const volatile __u32 exit_count = 0;
const volatile __s32 exit_nr[XP_LIVE_MAX_SYSCALLS] = { 0, 0 };
const volatile __u32 exit_ep[XP_LIVE_MAX_SYSCALLS] = { 0, 0 };

/* --- state ------------------------------------------------------------- */

/* 0 until every link is attached; the collector flips it once. */
__u32 armed = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024); /* resized from --max-events at load */
} xp_ring SEC(".maps");

/* Ring reservation (and pt_regs read) failures, per CPU, with the time of
 * the first (struct xp_live_drops). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_live_drops);
} xp_drops SEC(".maps");

/* Threads whose exit endpoint's syscall exited with a restart code
 * (syscall_restart.bpf.h): the call is still open.  Full: the restart is
 * reported as the kernel shows it (an exit, then a new entry). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XP_LIVE_MAX_RESTARTS);
	__type(key, __u32);
	__type(value, struct xp_live_restart);
} xp_restart SEC(".maps");

/* An execve entry endpoint per process: its exit comes on the leader's id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XP_LIVE_MAX_RESTARTS);
	__type(key, __u32);
	__type(value, __u32);
} xp_exec SEC(".maps");

/* @ts: the lost record's timestamp. */
static __always_inline void count_drop(__u64 ts)
{
	__u32 zero = 0;
	struct xp_live_drops *v = bpf_map_lookup_elem(&xp_drops, &zero);

	if (!v)
		return;
	if (!v->first_ts)
		v->first_ts = ts;
	v->count += 1;
}

static __always_inline void fill_hdr(struct xp_live_hdr *h, __u64 ts, __u32 pid, __u32 tid,
				     __u16 kind, __u64 endpoint)
{
	h->ts_ns = ts;
	h->pid = pid;
	h->tid = tid;
	h->cpu = bpf_get_smp_processor_id();
	h->kind = kind;
	h->endpoint = (__u16)endpoint;
}

static __always_inline int emit_hdr(__u16 kind, __u64 endpoint, __u32 pid, __u32 tid)
{
	__u64 ts = bpf_ktime_get_ns();
	struct xp_live_hdr *h;

	h = bpf_ringbuf_reserve(&xp_ring, sizeof(*h), 0);
	if (!h) {
		count_drop(ts);
		return 0;
	}
	fill_hdr(h, ts, pid, tid, kind, endpoint);
	bpf_ringbuf_submit(h, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe")
int xp_uprobe(struct pt_regs *ctx)
{
	__u32 pid, tid;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	return emit_hdr(XP_REC_UPROBE, bpf_get_attach_cookie(ctx), pid, tid);
}

SEC("usdt")
int xp_usdt(struct pt_regs *ctx)
{
	__u32 pid, tid;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	return emit_hdr(XP_REC_USDT, bpf_usdt_cookie(ctx), pid, tid);
}

SEC("tracepoint")
int xp_tracepoint(void *ctx)
{
	__u32 pid, tid;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	return emit_hdr(XP_REC_TRACEPOINT, bpf_get_attach_cookie(ctx), pid, tid);
}

/*
 * sys_enter(struct pt_regs *regs, long id).  The six argument registers
 * r10, r9, r8, ax, cx, dx, si, di lie contiguously in pt_regs from r10 to
 * di: one 64-byte read, after the number matched.
 */
#define XP_REGS_FIRST offsetof(struct pt_regs, r10)
#define XP_REGS_SPAN (offsetof(struct pt_regs, di) + 8 - XP_REGS_FIRST)
#define XP_REG(r) ((offsetof(struct pt_regs, r) - XP_REGS_FIRST) / 8)

/* The endpoint syscall @nr reports in a direction, or -1.  Negative
 * numbers never match (rt_sigreturn's exit, syscall(-1)). */
static __always_inline int enter_endpoint(__s64 nr)
{
	if (nr < 0)
		return -1;
	if (enter_count > 0 && nr == enter_nr[0])
		return (int)enter_ep[0];
	if (enter_count > 1 && nr == enter_nr[1])
		return (int)enter_ep[1];
	return -1;
}

static __always_inline int exit_endpoint(__s64 nr)
{
	if (nr < 0)
		return -1;
	if (exit_count > 0 && nr == exit_nr[0])
		return (int)exit_ep[0];
	if (exit_count > 1 && nr == exit_nr[1])
		return (int)exit_ep[1];
	return -1;
}

SEC("raw_tp/sys_enter")
int xp_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 regs[XP_REGS_SPAN / 8];
	struct xp_live_sys_enter *r;
	struct xp_live_restart *rs;
	__u32 pid, tid;
	__s64 nr;
	__u64 ts;
	int ep;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	nr = (__s64)ctx->args[1];
	ep = enter_endpoint(nr);
	if (ep < 0)
		return 0;
	rs = bpf_map_lookup_elem(&xp_restart, &tid);
	if (rs && rs->nr == nr && !rs->block) {
		/* the interrupted call runs again: the same call goes on */
		bpf_map_delete_elem(&xp_restart, &tid);
		return 0;
	}
	if (nr == XP_NR_EXECVE || nr == XP_NR_EXECVEAT)
		bpf_map_update_elem(&xp_exec, &pid, &tid, BPF_ANY);
	ts = bpf_ktime_get_ns();
	if (bpf_probe_read_kernel(regs, sizeof(regs), (void *)(ctx->args[0] + XP_REGS_FIRST))) {
		count_drop(ts);
		return 0;
	}
	r = bpf_ringbuf_reserve(&xp_ring, sizeof(*r), 0);
	if (!r) {
		count_drop(ts);
		return 0;
	}
	fill_hdr(&r->hdr, ts, pid, tid, XP_REC_SYS_ENTER, (__u64)ep);
	r->args[0] = regs[XP_REG(di)];
	r->args[1] = regs[XP_REG(si)];
	r->args[2] = regs[XP_REG(dx)];
	r->args[3] = regs[XP_REG(r10)];
	r->args[4] = regs[XP_REG(r8)];
	r->args[5] = regs[XP_REG(r9)];
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline int emit_exit(__u32 pid, __u32 tid, int ep, long ret)
{
	__u64 ts = bpf_ktime_get_ns();
	struct xp_live_sys_exit *r;

	r = bpf_ringbuf_reserve(&xp_ring, sizeof(*r), 0);
	if (!r) {
		count_drop(ts);
		return 0;
	}
	fill_hdr(&r->hdr, ts, pid, tid, XP_REC_SYS_EXIT, (__u64)ep);
	r->ret = ret;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

/*
 * An exit that is no endpoint may still end an interrupted call of this
 * thread (syscall_restart.bpf.h): restart_syscall's exit, or an
 * rt_sigreturn exit returning -EINTR.
 */
static __always_inline int restart_end(__u32 pid, __u32 tid, __s64 nr, long ret)
{
	struct xp_live_restart *rs;
	int ep;

	if (nr != XP_NR_RESTART_SYSCALL && nr >= 0)
		return 0;
	rs = bpf_map_lookup_elem(&xp_restart, &tid);
	if (!rs)
		return 0;
	ep = rs->ep;
	if (nr == XP_NR_RESTART_SYSCALL ? rs->block : ret == -XP_EINTR) {
		bpf_map_delete_elem(&xp_restart, &tid);
		return emit_exit(pid, tid, ep, ret);
	}
	return 0;
}

/*
 * sys_exit(struct pt_regs *regs, long ret).  The number is not an argument
 * here: read regs->orig_ax (8 bytes) to compare it; the return value is.
 */
SEC("raw_tp/sys_exit")
int xp_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct xp_live_restart rs = {};
	__u32 pid, tid, *etid;
	long ret;
	__s64 nr;
	int ep;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	if (bpf_probe_read_kernel(&nr, sizeof(nr),
				  (void *)(ctx->args[0] + offsetof(struct pt_regs, orig_ax)))) {
		count_drop(bpf_ktime_get_ns());
		return 0;
	}
	ret = (long)ctx->args[1];
	ep = exit_endpoint(nr);
	if (ep < 0)
		return restart_end(pid, tid, nr, ret);
	if (xp_sys_restarting(ret)) {
		rs.nr = (__s32)nr;
		rs.ep = (__u16)ep;
		rs.block = ret == -XP_ERESTART_RESTARTBLOCK;
		if (!bpf_map_update_elem(&xp_restart, &tid, &rs, BPF_ANY))
			return 0;
	}
	if (nr == XP_NR_EXECVE || nr == XP_NR_EXECVEAT) {
		/* a successful execve returns on the leader's id: report the caller's */
		etid = bpf_map_lookup_elem(&xp_exec, &pid);
		if (etid) {
			tid = *etid;
			bpf_map_delete_elem(&xp_exec, &pid);
		}
	}
	return emit_exit(pid, tid, ep, ret);
}

/* Dual licensed; the kernel sees the GPL option (GPL-only helpers:
 * bpf_probe_read_kernel, ring buffers). */
char LICENSE[] SEC("license") = "GPL";
