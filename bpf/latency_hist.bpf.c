/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * latency_hist.bpf.c - the BPF side of `measure --histogram`: pair the
 * start and end of one host lifecycle per thread inside the kernel and add
 * each latency to a log-linear histogram; no event leaves the kernel
 * (layouts, buckets and the accounting identities: latency_hist.h).
 *
 *   xp_lh_up_start   uprobe on one function's entry
 *   xp_lh_up_end     uretprobe on its return
 *   xp_lh_usdt_start CPython python:gc__start (libbpf USDT)
 *   xp_lh_usdt_end   python:gc__done
 *   xp_lh_sys_enter  raw tracepoint sys_enter, the start syscall number
 *   xp_lh_sys_exit   raw tracepoint sys_exit, the same number
 *   xp_lh_task_exit  raw tracepoint sched_process_exit: a thread of the
 *                    target ends; its in-flight slot is released
 *
 * Every program does, in this order: (1) filter the target
 * (target_filter.bpf.h: the global tgid, then its own PID namespace when it
 * has one), (2) check the armed flag, (3) for syscalls compare the number,
 * then pair:
 *   start  exact: the thread's slot takes (time, key), a start still open
 *          there is counted superseded; stack-nested: push, or count
 *          depth_overflow beyond --max-depth (the matching ends then pop
 *          nothing: they come first, LIFO);
 *   end    pop the thread's open start, add now - start to the total and
 *          (--by) to its group; nothing open: unpaired_ends.
 * The time of a start is read last in its program and the time of an end
 * first, so the probes' own cost stays out of the latency as far as it
 * can.  The key (--by arg0) is read at the start only and only into the
 * slot: the first argument register (rdi) of a uprobe, the kernel's saved
 * rdi of a syscall, USDT argument 1 of gc__start (the generation, through
 * libbpf's bpf_usdt_arg, which may read the target's stack).  It is a
 * grouping key, never copied anywhere else.  Programs return 0, never
 * print, and allocate only a thread's slot (once) and a group (once).
 *
 * Concurrency.  The total is per CPU, but a program may be preempted on a
 * preemptible kernel by another thread hitting the same probe on the same
 * CPU, and groups are shared by all CPUs: every add is atomic
 * (__sync_fetch_and_add, BPF_XADD), so counts, sums and buckets are exact
 * under any preemption model; min/max are updated by compare-and-swap
 * (set_max: what it cannot settle is counted).  Slots are keyed by thread
 * and touched only by their thread.  Syscall pairs are exact only (the
 * usage check), so the exit program pairs through the exact slot alone.
 *
 * CO-RE: as bpf/xp_live.bpf.c, BPF_NO_PRESERVE_ACCESS_INDEX; the only
 * kernel layout read is x86-64 struct pt_regs (uapi), so nothing is
 * relocated and libbpf never parses the kernel's BTF at load.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "latency_hist.h"
#include "syscall_restart.bpf.h"
#include "target_filter.bpf.h"

#ifndef offsetof
#define offsetof(t, m) __builtin_offsetof(t, m)
#endif

/* --- configuration (rodata, set before load) ---------------------------- */

/* targ_tgid, use_pidns, ns_tgid, pidns_dev, pidns_ino: target_filter.bpf.h */
const volatile __u32 nested = 0; /* 1: stack-nested, 0: exact */
const volatile __u32 max_depth = XP_LH_MAX_DEPTH; /* 1..XP_LH_MAX_DEPTH */
const volatile __u32 group_by = XP_LH_BY_NONE;
/* syscall endpoints (the same syscall; the programs are loaded only for them) */
const volatile __s32 start_nr = 0;
const volatile __s32 end_nr = 0;

/* --- state ------------------------------------------------------------- */

/* 0 until every link is attached; back to 0 before the maps are read. */
__u32 armed = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_lh_total);
} xp_lh_total SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 256); /* --max-groups, set before load */
	__type(key, __u64);
	__type(value, struct xp_lh_hist);
} xp_lh_groups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024); /* --max-inflight (exact), set before load */
	__type(key, __u32);
	__type(value, struct xp_lh_open);
} xp_lh_open SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024); /* --max-inflight (stack-nested), set before load */
	__type(key, __u32);
	__type(value, struct xp_lh_stack);
} xp_lh_stack SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_lh_zero);
} xp_lh_zero SEC(".maps");

/* The thread of the target inside an execve (syscall endpoints execve or
 * execveat): a successful one returns on the leader's id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} xp_lh_exec SEC(".maps");

static __always_inline struct xp_lh_total *total(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xp_lh_total, &zero);
}

static __always_inline struct xp_lh_zero *zeroes(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xp_lh_zero, &zero);
}

/*
 * *p = max(*p, v), atomically.  A compare-and-swap that fails means
 * another writer moved *p meanwhile; one more try settles every case but
 * a third writer in the same few nanoseconds, which is counted
 * (minmax_contended: the extreme may then be off by that one value).
 * No loop, two tries inline: every way out of a loop is a verifier state
 * of its own, and the four calls per pair multiplied them (an 8-try loop
 * made the object 25,000 verified instructions and 30 ms of load CPU).
 */
static __always_inline void set_max(__u64 *p, __u64 v, __u64 *contended)
{
	__u64 old = *p, seen;

	if (v <= old)
		return;
	seen = __sync_val_compare_and_swap(p, old, v);
	if (seen == old || v <= seen)
		return;
	if (__sync_val_compare_and_swap(p, seen, v) != seen && v > *p)
		__sync_fetch_and_add(contended, 1);
}

/* min is kept as ~min (min_inv): zeroed memory is then "no minimum yet",
 * and both extremes are maxima (latency_hist.h). */
static __always_inline void hist_add(struct xp_lh_hist *h, __u64 d, __u32 b, __u64 *contended)
{
	set_max(&h->min_inv, ~d, contended);
	set_max(&h->max_ns, d, contended);
	/* no count: the buckets' sum is the count (one add less per pair) */
	__sync_fetch_and_add(&h->sum_ns, d);
	if (b < XP_LH_BUCKETS)
		__sync_fetch_and_add(&h->buckets[b], 1);
}

/* One pair: into the total and, with --by, into its group. */
static __always_inline void record(struct xp_lh_total *t, __u64 d, __u64 key, int key_bad,
				   __u32 tid)
{
	struct xp_lh_hist *g;
	struct xp_lh_zero *z;
	__u32 b = xp_lh_bucket_of(d);
	__u64 gk;

	hist_add(&t->h, d, b, &t->c.minmax_contended);
	if (group_by == XP_LH_BY_NONE)
		return;
	if (group_by == XP_LH_BY_ARG0 && key_bad) {
		__sync_fetch_and_add(&t->c.key_unreadable, 1);
		return;
	}
	gk = group_by == XP_LH_BY_THREAD ? (__u64)tid : key;
	g = bpf_map_lookup_elem(&xp_lh_groups, &gk);
	if (!g) {
		z = zeroes();
		if (z) /* -E2BIG when full; -EEXIST when another CPU just made it */
			bpf_map_update_elem(&xp_lh_groups, &gk, &z->h, BPF_NOEXIST);
		g = bpf_map_lookup_elem(&xp_lh_groups, &gk);
		if (!g) {
			__sync_fetch_and_add(&t->c.group_overflow, 1);
			return;
		}
	}
	hist_add(g, d, b, &t->c.minmax_contended);
}

/* A rare-path counter of the per-CPU total (the hot paths never touch
 * them, so a start looks the total up only when it must count). */
#define COUNT(field)                                           \
	do {                                                   \
		struct xp_lh_total *t_ = total();              \
		if (t_)                                        \
			__sync_fetch_and_add(&t_->c.field, 1); \
	} while (0)

static __always_inline void on_start(__u32 tid, __u64 key, int key_bad)
{
	struct xp_lh_open *o, n = {};
	struct xp_lh_stack *s;
	struct xp_lh_zero *z;
	__u32 d;

	if (!nested) {
		o = bpf_map_lookup_elem(&xp_lh_open, &tid);
		if (o) {
			/* the thread's own slot, written in place */
			if (o->busy)
				COUNT(superseded);
			o->key = key;
			o->key_bad = key_bad;
			o->busy = 1;
			o->restart = XP_LH_RESTART_NONE;
			o->ts = bpf_ktime_get_ns();
			return;
		}
		n.key = key;
		n.key_bad = key_bad;
		n.busy = 1;
		n.ts = bpf_ktime_get_ns();
		if (bpf_map_update_elem(&xp_lh_open, &tid, &n, BPF_NOEXIST))
			COUNT(inflight_overflow);
		return;
	}
	s = bpf_map_lookup_elem(&xp_lh_stack, &tid);
	if (!s) {
		z = zeroes();
		if (z)
			bpf_map_update_elem(&xp_lh_stack, &tid, &z->s, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&xp_lh_stack, &tid);
		if (!s) {
			COUNT(inflight_overflow);
			return;
		}
	}
	if (s->lost || s->depth >= max_depth || s->depth >= XP_LH_MAX_DEPTH) {
		/* deeper than the bound: not stored, its end pops nothing */
		s->lost++;
		COUNT(depth_overflow);
		return;
	}
	d = s->depth & (XP_LH_MAX_DEPTH - 1);
	if (group_by == XP_LH_BY_ARG0) {
		s->f[d].key = key;
		if (key_bad)
			s->key_bad |= 1u << d;
		else
			s->key_bad &= ~(1u << d);
	}
	s->depth = d + 1;
	s->f[d].ts = bpf_ktime_get_ns();
}

static __always_inline void on_end(__u32 tid, __u64 now)
{
	struct xp_lh_total *t = total();
	struct xp_lh_open *o;
	struct xp_lh_stack *s;
	__u32 d;

	if (!t)
		return;
	if (!nested) {
		o = bpf_map_lookup_elem(&xp_lh_open, &tid);
		if (!o || !o->busy) {
			__sync_fetch_and_add(&t->c.unpaired_ends, 1);
			return;
		}
		o->busy = 0;
		record(t, now - o->ts, o->key, o->key_bad, tid);
		return;
	}
	s = bpf_map_lookup_elem(&xp_lh_stack, &tid);
	if (s && s->lost) {
		/* the end of a start beyond --max-depth */
		s->lost--;
		__sync_fetch_and_add(&t->c.unpaired_ends, 1);
		return;
	}
	if (!s || !s->depth) {
		__sync_fetch_and_add(&t->c.unpaired_ends, 1);
		return;
	}
	d = (s->depth - 1) & (XP_LH_MAX_DEPTH - 1);
	s->depth = d;
	record(t, now - s->f[d].ts, s->f[d].key, (s->key_bad >> d) & 1, tid);
}

/* The start and end of a uprobe pair are two programs: the role is the
 * program, not a cookie read (bpf_get_attach_cookie) on every hit. */
SEC("uprobe")
int xp_lh_up_start(struct pt_regs *ctx)
{
	__u32 pid, tid;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	on_start(tid, group_by == XP_LH_BY_ARG0 ? ctx->di : 0, 0);
	return 0;
}

SEC("uprobe")
int xp_lh_up_end(struct pt_regs *ctx)
{
	__u32 pid, tid;
	__u64 now;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	now = bpf_ktime_get_ns();
	on_end(tid, now);
	return 0;
}

SEC("usdt")
int xp_lh_usdt_start(struct pt_regs *ctx)
{
	__u32 pid, tid;
	long arg = 0;
	int bad = 0;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	if (group_by == XP_LH_BY_ARG0)
		bad = bpf_usdt_arg(ctx, 0, &arg) != 0;
	on_start(tid, (__u64)arg, bad);
	return 0;
}

SEC("usdt")
int xp_lh_usdt_end(struct pt_regs *ctx)
{
	__u32 pid, tid;
	__u64 now;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	now = bpf_ktime_get_ns();
	on_end(tid, now);
	return 0;
}

/* sys_enter(struct pt_regs *regs, long id) */
SEC("raw_tp/sys_enter")
int xp_lh_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct xp_lh_open *o;
	__u64 key = 0;
	__u32 pid, tid;
	__s64 nr;
	int bad = 0;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	nr = (__s64)ctx->args[1];
	if (nr < 0 || nr != start_nr)
		return 0;
	o = bpf_map_lookup_elem(&xp_lh_open, &tid);
	if (o && o->busy && o->restart == XP_LH_RESTART_SAME) {
		/* the interrupted call runs again: the same call goes on */
		o->restart = XP_LH_RESTART_NONE;
		return 0;
	}
	if (nr == XP_NR_EXECVE || nr == XP_NR_EXECVEAT)
		bpf_map_update_elem(&xp_lh_exec, &pid, &tid, BPF_ANY);
	if (group_by == XP_LH_BY_ARG0)
		bad = bpf_probe_read_kernel(
			      &key, sizeof(key),
			      (void *)(ctx->args[0] + offsetof(struct pt_regs, di))) != 0;
	on_start(tid, key, bad);
	return 0;
}

static __always_inline int read_nr(struct bpf_raw_tracepoint_args *ctx, __s64 *nr)
{
	return bpf_probe_read_kernel(nr, sizeof(*nr),
				     (void *)(ctx->args[0] + offsetof(struct pt_regs, orig_ax)));
}

/*
 * sys_exit(struct pt_regs *regs, long ret).  A thread executes one syscall
 * at a time, so an open start of this thread is the start of the call now
 * exiting: paired without reading the number.  Unless that call was
 * interrupted (syscall_restart.bpf.h): then only restart_syscall's exit
 * or an rt_sigreturn exit returning -EINTR ends it, and the exits of a
 * handler's syscalls meanwhile are not its end.  An exit that finds
 * nothing open reads regs->orig_ax, to tell an unpaired end of the
 * measured syscall (or an execve returning on the leader's id) from any
 * other exit.
 */
SEC("raw_tp/sys_exit")
int xp_lh_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	long ret = (long)ctx->args[1];
	struct xp_lh_total *t;
	struct xp_lh_open *o;
	__u32 pid, tid, *etid;
	__s64 nr;
	__u64 now;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	now = bpf_ktime_get_ns();
	o = bpf_map_lookup_elem(&xp_lh_open, &tid);
	if (o && o->busy && o->restart) {
		if (read_nr(ctx, &nr))
			return 0;
		if (!(nr == XP_NR_RESTART_SYSCALL && o->restart == XP_LH_RESTART_BLOCK) &&
		    !(nr < 0 && ret == -XP_EINTR))
			return 0; /* a handler's syscall, or the call runs again */
	} else if (o && o->busy && xp_sys_restarting(ret)) {
		o->restart = ret == -XP_ERESTART_RESTARTBLOCK ? XP_LH_RESTART_BLOCK :
								 XP_LH_RESTART_SAME;
		return 0;
	}
	if (!o || !o->busy) {
		if (read_nr(ctx, &nr) || nr < 0 || nr != end_nr)
			return 0;
		etid = (nr == XP_NR_EXECVE || nr == XP_NR_EXECVEAT) ?
			       bpf_map_lookup_elem(&xp_lh_exec, &pid) :
			       NULL;
		if (etid) {
			/* a successful execve, back on the leader's id */
			tid = *etid;
			bpf_map_delete_elem(&xp_lh_exec, &pid);
			o = bpf_map_lookup_elem(&xp_lh_open, &tid);
		}
		if (!o || !o->busy) {
			if ((t = total()))
				__sync_fetch_and_add(&t->c.unpaired_ends, 1);
			return 0;
		}
	}
	t = total();
	if (!t)
		return 0;
	o->busy = 0;
	o->restart = XP_LH_RESTART_NONE;
	record(t, now - o->ts, o->key, o->key_bad, tid);
	return 0;
}

/*
 * A thread of the target ends (exit(2), exit_group(2), a fatal signal):
 * its slot goes, and the starts it left open are counted.  Runs in the
 * exiting task.
 */
SEC("raw_tp/sched_process_exit")
int xp_lh_task_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct xp_lh_total *t;
	struct xp_lh_open *o;
	struct xp_lh_stack *s;
	__u32 pid, tid;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	t = total();
	if (!t)
		return 0;
	if (!nested) {
		o = bpf_map_lookup_elem(&xp_lh_open, &tid);
		if (!o)
			return 0;
		if (o->busy)
			__sync_fetch_and_add(&t->c.thread_exit_open, 1);
		bpf_map_delete_elem(&xp_lh_open, &tid);
		return 0;
	}
	s = bpf_map_lookup_elem(&xp_lh_stack, &tid);
	if (!s)
		return 0;
	if (s->depth || s->lost)
		__sync_fetch_and_add(&t->c.thread_exit_open, (__u64)s->depth + s->lost);
	bpf_map_delete_elem(&xp_lh_stack, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
