/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * latency_hist.bpf.c - the BPF side of `measure --histogram`: pair the
 * start and end of one host lifecycle per thread inside the kernel and add
 * each latency to a log-linear histogram; no event leaves the kernel
 * (layouts, buckets and the accounting identities: latency_hist.h).
 *
 *   xp_lh_up_start   uprobe on one function's entry
 *   xp_lh_up_end     uretprobe on its return
 *   xp_lh_up_session both at once, through a session link's per-call
 *                    cookie (stack-nested pairs on kernels that have it)
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
 * relocated.  The session kfuncs are extern symbols, so libbpf parses the
 * kernel's BTF at every load of an object that has them (to resolve them,
 * loaded program or not: ~30 ms on 6.18).  So this file is built twice
 * (cmake/bpf.cmake): as is, for the session path, and with
 * XP_LH_LEAN, the lean object: no kfuncs and none of --explain's task
 * reads (CO-RE relocations need the kernel's BTF too), its session and
 * scheduler programs stubs that are never loaded, --explain's branches
 * compiled out -- the same programs, maps and data, so one skeleton
 * serves both objects, and latency_histogram.c opens the lean bytes for
 * a run with neither a session link nor --explain.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>

#include "latency_hist.h"
#include "sched_task.bpf.h"
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
/* --explain: 1 follows the target's threads through the scheduler */
const volatile __u32 explain = 0;
/* explain, or 0 in the lean object (above), where the compiler drops
 * --explain's branches and with them their task reads */
#ifdef XP_LH_LEAN
#define ex_on 0
#else
#define ex_on explain
#endif
const volatile __u32 explain_top = 20; /* 0..XP_EX_TOP_MAX */

/* --- state ------------------------------------------------------------- */

/* 0 until every link is attached; back to 0 before the maps are read. */
__u32 armed = 0;

/* --explain: switch-ins no tracepoint reported (ex_seen_running). */
__u64 ex_missed_in = 0;

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

/* --- --explain state (sized 1 unless --explain) --------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1); /* --max-inflight with --explain, set before load */
	__type(key, __u32);     /* global thread id */
	__type(value, struct xp_ex_thread);
} xp_ex_thread SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_ex_thread);
} xp_ex_zero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_ex_buckets);
} xp_ex_buckets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, XP_EX_BLOCK_KEYS);
	__type(key, __u64); /* xp_ex_block_key(syscall, state) */
	__type(value, __u64); /* ns */
} xp_ex_blocked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_ex_top);
} xp_ex_top SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1); /* set before load with --explain */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
} xp_ex_stacks SEC(".maps");

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

/* --- Explain ----------------------------------------------------------------
 *
 * With --explain every thread of the target that opens a pair gets a slot
 * (xp_ex_thread, keyed by its global id: the scheduler's programs see
 * task_structs, not the ids the pair maps may use inside a PID namespace)
 * holding the time it spent in each state since the slot was made:
 * running, runnable (preempted, or woken and not yet running), blocked
 * interruptible (S), blocked uninterruptible (D).  The scheduler's raw
 * tracepoints move it between states (sched_switch, sched_wakeup[_new]) and
 * count migrations.  A pair's start keeps a copy of those sums (its
 * frame), its end subtracts: the differences are the pair's runq and
 * blocked times, and on_cpu the remainder, so the parts add up to the
 * latency exactly.  The blocked periods inside an open pair also keep
 * where the thread blocked (the syscall, user and kernel stack ids), who
 * woke it (pid, tid, comm, stacks), and per (syscall, state) how long.
 * Only threads with a slot are followed: the scheduler's programs do one
 * tgid compare and one lookup for every other task.
 */

static __always_inline __u32 global_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* Bring @t's sums up to @now: the time since its last change goes to the
 * state it has been in.  Clocks of two CPUs may disagree by a little: a
 * change dated before the last one adds nothing. */
static __always_inline void ex_advance(struct xp_ex_thread *t, __u64 now)
{
	__u64 d = now > t->last_ts ? now - t->last_ts : 0;

	/* a switch, not t->cum[state]: the verifier sees four constant
	 * offsets, not an index it cannot bound */
	switch (t->state) {
	case XP_EX_ST_RUNNING:
		t->cum[XP_EX_ON_CPU] += d;
		break;
	case XP_EX_ST_RUNQ:
		t->cum[XP_EX_RUNQ] += d;
		break;
	case XP_EX_ST_BLOCKED_S:
		t->cum[XP_EX_BLOCKED_S] += d;
		break;
	default:
		t->cum[XP_EX_BLOCKED_D] += d;
		break;
	}
	if (now > t->last_ts)
		t->last_ts = now;
}

static __always_inline struct xp_ex_thread *ex_slot(__u32 gtid, __u64 now)
{
	struct xp_ex_thread *t = bpf_map_lookup_elem(&xp_ex_thread, &gtid), *z;
	__u32 zero = 0;

	if (t)
		return t;
	z = bpf_map_lookup_elem(&xp_ex_zero, &zero);
	if (!z)
		return NULL;
	bpf_map_update_elem(&xp_ex_thread, &gtid, z, BPF_NOEXIST);
	t = bpf_map_lookup_elem(&xp_ex_thread, &gtid);
	if (t) {
		t->last_ts = now; /* it is running: it opens a pair */
		t->state = XP_EX_ST_RUNNING;
	}
	return t;
}

static __always_inline void ex_block_ends(struct xp_ex_thread *t, __u64 now);

/*
 * When the kernel last put @p on a CPU, in bpf_ktime_get_ns()'s time as of
 * @now, @p running now; 0: unknown (xp_sched_arrival_age: an age short by
 * the run queue clock's staleness, so the stale state keeps that much
 * more).  Rare path: probe reads.
 */
static __always_inline __u64 ex_arrival(struct task_struct *p, __u64 now)
{
	__u64 age = xp_sched_arrival_age(p);

	return age && age < now ? now - age : 0;
}

/*
 * @t's thread @p is seen running at @now (it hit a probe, or it is the
 * task a switch takes off its CPU) while its slot says it waits or is
 * blocked: a switch in went unreported (seen on a VM: the kernel's
 * run_delay grew by an arrival no sched_switch tracepoint showed, ours or
 * bpftrace's).  The stale state ends where the kernel dated the arrival
 * (ex_arrival), else now; counted in ex_missed_in.
 */
static __always_inline void ex_seen_running(struct xp_ex_thread *t, struct task_struct *p,
					    __u64 now)
{
	__u64 at;

	if (t->state == XP_EX_ST_RUNNING)
		return;
	at = ex_arrival(p, now);
	if (at < t->last_ts || at > now)
		at = now;
	if (t->state == XP_EX_ST_BLOCKED_S || t->state == XP_EX_ST_BLOCKED_D)
		ex_block_ends(t, at);
	else
		ex_advance(t, at);
	t->state = XP_EX_ST_RUNNING;
	__sync_fetch_and_add(&ex_missed_in, 1);
}

/* A pair opens at frame @d at @now (the start's own timestamp). */
static __always_inline void ex_start(__u32 d, __u64 now)
{
	struct xp_ex_thread *t;
	struct xp_ex_frame *f;
	int i;

	if (!ex_on)
		return;
	t = ex_slot(global_tid(), now);
	if (!t || d >= XP_EX_MAX_DEPTH) {
		if (t)
			t->depth = d + 1;
		return; /* its end counts it unexplained */
	}
	ex_seen_running(t, (struct task_struct *)bpf_get_current_task(), now);
	ex_advance(t, now);
	f = &t->f[d & (XP_EX_MAX_DEPTH - 1)];
	for (i = 0; i < XP_EX_NCOMP; i++)
		f->cum[i] = t->cum[i];
	f->nvcsw = t->nvcsw;
	f->nivcsw = t->nivcsw;
	f->nmigr = t->nmigr;
	for (i = 0; i < XP_EX_BY; i++)
		f->by_ns[i] = t->by_ns[i];
	f->longest.ns = 0;
	t->depth = d + 1;
}

/* bpf_loop's step over the kept pairs: the smallest and its slot (a
 * callback is verified once, where an unrolled search over 64 slots made
 * the verifier walk every order of its branches). */
struct ex_min_ctx {
	struct xp_ex_top *top;
	__u64 min;
	__u32 min_i;
};

static long ex_min_step(__u64 i, void *c)
{
	struct ex_min_ctx *m = c;
	__u32 j = (__u32)i & (XP_EX_TOP_MAX - 1);

	if (j >= m->top->n)
		return 1;
	if (m->top->s[j].latency_ns < m->min) {
		m->min = m->top->s[j].latency_ns;
		m->min_i = j;
	}
	return 0;
}

/* Keep @x among this CPU's slowest --explain-top pairs. */
static __always_inline void ex_keep_slowest(struct xp_ex_slow *x)
{
	struct ex_min_ctx m;
	struct xp_ex_top *top;
	__u32 zero = 0;

	if (!explain_top)
		return;
	top = bpf_map_lookup_elem(&xp_ex_top, &zero);
	if (!top)
		return;
	if (top->n < explain_top && top->n < XP_EX_TOP_MAX) {
		top->s[top->n & (XP_EX_TOP_MAX - 1)] = *x;
		top->n++;
		if (top->n < explain_top)
			return;
	} else {
		if (x->latency_ns <= top->min_ns)
			return; /* the common case once full */
		top->s[top->min_i & (XP_EX_TOP_MAX - 1)] = *x;
	}
	m.top = top;
	m.min = ~0ull;
	m.min_i = 0;
	bpf_loop(XP_EX_TOP_MAX, ex_min_step, &m, 0);
	top->min_ns = m.min;
	top->min_i = m.min_i;
}

/*
 * A pair of frame @d closes at @now after @lat ns: its parts into the
 * total (@t), its bucket, its group @g (may be NULL), the by-syscall
 * totals and the slowest pairs.
 */
static __always_inline void ex_end(struct xp_lh_total *tot, struct xp_lh_hist *g, __u32 d,
				   __u64 now, __u64 start, __u64 lat, __u64 key)
{
	struct xp_ex_buckets *eb;
	struct xp_ex_thread *t;
	struct xp_ex_frame *f;
	struct xp_ex_slow x = {};
	__u64 part, sum = 0, *v, k, zero64 = 0;
	__u32 gtid, zero = 0, b;
	int i;

	if (!ex_on)
		return; /* before any work: the pair's hot path without --explain */
	gtid = global_tid();
	b = xp_lh_bucket_of(lat);
	t = bpf_map_lookup_elem(&xp_ex_thread, &gtid);
	if (!t || d >= XP_EX_MAX_DEPTH) {
		if (t)
			t->depth = d;
		__sync_fetch_and_add(&tot->c.ex_unexplained, 1);
		return;
	}
	ex_seen_running(t, (struct task_struct *)bpf_get_current_task(), now);
	ex_advance(t, now);
	f = &t->f[d & (XP_EX_MAX_DEPTH - 1)];
	t->depth = d;
	for (i = XP_EX_RUNQ; i < XP_EX_NCOMP; i++) {
		part = t->cum[i] - f->cum[i];
		if (sum + part > lat) {
			part = lat - sum;
			__sync_fetch_and_add(&tot->c.ex_clamped, 1);
		}
		x.comp[i] = part;
		sum += part;
	}
	x.comp[XP_EX_ON_CPU] = lat - sum;
	x.nvcsw = t->nvcsw - f->nvcsw;
	x.nivcsw = t->nivcsw - f->nivcsw;
	x.nmigr = t->nmigr - f->nmigr;
	for (i = 0; i < XP_EX_NCOMP; i++) {
		__sync_fetch_and_add(&tot->h.ex.comp[i], x.comp[i]);
		if (g)
			__sync_fetch_and_add(&g->ex.comp[i], x.comp[i]);
	}
	__sync_fetch_and_add(&tot->h.ex.nvcsw, x.nvcsw);
	__sync_fetch_and_add(&tot->h.ex.nivcsw, x.nivcsw);
	__sync_fetch_and_add(&tot->h.ex.nmigr, x.nmigr);
	__sync_fetch_and_add(&tot->h.ex.pairs, 1);
	if (g) {
		__sync_fetch_and_add(&g->ex.nvcsw, x.nvcsw);
		__sync_fetch_and_add(&g->ex.nivcsw, x.nivcsw);
		__sync_fetch_and_add(&g->ex.nmigr, x.nmigr);
		__sync_fetch_and_add(&g->ex.pairs, 1);
	}
	eb = bpf_map_lookup_elem(&xp_ex_buckets, &zero);
	if (eb) {
		__u64 *row = eb->comp[b & (XP_EX_BUCKET_ROWS - 1)];

		__sync_fetch_and_add(&row[XP_EX_ON_CPU], x.comp[XP_EX_ON_CPU]);
		__sync_fetch_and_add(&row[XP_EX_RUNQ], x.comp[XP_EX_RUNQ]);
		__sync_fetch_and_add(&row[XP_EX_BLOCKED_S], x.comp[XP_EX_BLOCKED_S]);
		__sync_fetch_and_add(&row[XP_EX_BLOCKED_D], x.comp[XP_EX_BLOCKED_D]);
	}
	for (i = 0; i < XP_EX_BY; i++) {
		part = t->by_ns[i] - f->by_ns[i];
		if (!part || !t->by_state[i])
			continue;
		k = xp_ex_block_key(t->by_nr[i], t->by_state[i]);
		v = bpf_map_lookup_elem(&xp_ex_blocked, &k);
		if (!v) {
			bpf_map_update_elem(&xp_ex_blocked, &k, &zero64, BPF_NOEXIST);
			v = bpf_map_lookup_elem(&xp_ex_blocked, &k);
		}
		if (v)
			__sync_fetch_and_add(v, part);
		else
			__sync_fetch_and_add(&tot->c.ex_block_overflow, part);
	}
	/* the longest block of an inner pair is inside its outer pair too */
	if (d > 0 && f->longest.ns > t->f[(d - 1) & (XP_EX_MAX_DEPTH - 1)].longest.ns)
		t->f[(d - 1) & (XP_EX_MAX_DEPTH - 1)].longest = f->longest;
	x.start_ns = start;
	x.latency_ns = lat;
	x.key = key;
	x.tid = gtid;
	x.longest = f->longest;
	ex_keep_slowest(&x);
}

/* The by-syscall slot of (@nr, @state) on @t, or -1 when all are taken. */
static __always_inline int ex_by_slot(struct xp_ex_thread *t, __s32 nr, __u32 state)
{
	int i;

	for (i = 0; i < XP_EX_BY; i++) {
		if (!t->by_state[i]) {
			t->by_state[i] = state;
			t->by_nr[i] = nr;
			return i;
		}
		if (t->by_state[i] == state && t->by_nr[i] == nr)
			return i;
	}
	return -1;
}

/* A blocked period of @t ends at @now (woken, or switched in without a
 * wakeup seen); the caller has advanced nothing yet. */
static __always_inline void ex_block_ends(struct xp_ex_thread *t, __u64 now)
{
	__u64 ns = now > t->last_ts ? now - t->last_ts : 0;
	struct xp_ex_frame *f;
	int i;

	ex_advance(t, now);
	if (!t->depth || t->depth > XP_EX_MAX_DEPTH)
		return;
	i = ex_by_slot(t, t->cur.nr, t->state);
	if (i >= 0)
		t->by_ns[i & (XP_EX_BY - 1)] += ns;
	f = &t->f[(t->depth - 1) & (XP_EX_MAX_DEPTH - 1)];
	if (ns > f->longest.ns) {
		f->longest = t->cur;
		f->longest.ns = ns;
		f->longest.state = t->state;
	}
}

/* sched_switch(bool preempt, struct task_struct *prev, struct task_struct
 * *next, unsigned int prev_state); runs in prev's context. */
#ifndef XP_LH_LEAN
SEC("tp_btf/sched_switch")
int BPF_PROG(xp_ex_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct xp_ex_thread *t;
	__u32 gtid, ngtid;
	int out, in;
	__u64 now;

	if (!armed)
		return 0;
	/* every switch of the machine: two loads and two compares when
	 * neither task is the target's */
	out = xp_sched_task_of(prev, targ_tgid, &gtid);
	in = xp_sched_task_of(next, targ_tgid, &ngtid);
	if (!out && !in)
		return 0;
	now = bpf_ktime_get_ns();
	if (out && (t = bpf_map_lookup_elem(&xp_ex_thread, &gtid))) {
		ex_seen_running(t, prev, now);
		ex_advance(t, now);
		if (preempt || !(prev_state & 0xff)) {
			t->state = XP_EX_ST_RUNQ;
			t->nivcsw++;
		} else {
			t->state = (prev_state & 2) ? XP_EX_ST_BLOCKED_D : XP_EX_ST_BLOCKED_S;
			t->nvcsw++;
			if (t->depth && t->depth <= XP_EX_MAX_DEPTH) {
				t->cur.nr = xp_sched_syscall_of(prev);
				t->cur.ustack = bpf_get_stackid(ctx, &xp_ex_stacks, BPF_F_USER_STACK);
				t->cur.kstack = bpf_get_stackid(ctx, &xp_ex_stacks, 0);
				t->cur.waker_pid = 0;
				t->cur.waker_tid = 0;
				t->cur.waker_ustack = -1;
				t->cur.waker_kstack = -1;
				t->cur.waker_comm[0] = 0;
			}
		}
	}
	if (in && (t = bpf_map_lookup_elem(&xp_ex_thread, &ngtid))) {
		if (t->state == XP_EX_ST_BLOCKED_S || t->state == XP_EX_ST_BLOCKED_D)
			ex_block_ends(t, now); /* no wakeup seen: the time was blocked */
		else
			ex_advance(t, now);
		t->state = XP_EX_ST_RUNNING;
	}
	return 0;
}

/* A blocked thread becomes runnable; runs in the waker's context. */
static __always_inline int ex_woken(void *ctx, struct task_struct *p)
{
	struct xp_ex_thread *t;
	__u64 now, id;
	__u32 gtid;

	if (!armed || !xp_sched_task_of(p, targ_tgid, &gtid))
		return 0;
	t = bpf_map_lookup_elem(&xp_ex_thread, &gtid);
	if (!t || (t->state != XP_EX_ST_BLOCKED_S && t->state != XP_EX_ST_BLOCKED_D))
		return 0;
	now = bpf_ktime_get_ns();
	if (t->depth && t->depth <= XP_EX_MAX_DEPTH) {
		id = bpf_get_current_pid_tgid();
		t->cur.waker_pid = id >> 32;
		t->cur.waker_tid = (__u32)id;
		bpf_get_current_comm(t->cur.waker_comm, sizeof(t->cur.waker_comm));
		t->cur.waker_ustack = bpf_get_stackid(ctx, &xp_ex_stacks, BPF_F_USER_STACK);
		t->cur.waker_kstack = bpf_get_stackid(ctx, &xp_ex_stacks, 0);
	}
	ex_block_ends(t, now);
	t->state = XP_EX_ST_RUNQ;
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(xp_ex_wakeup, struct task_struct *p)
{
	return ex_woken(ctx, p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(xp_ex_wakeup_new, struct task_struct *p)
{
	return ex_woken(ctx, p);
}

/* sched_migrate_task(struct task_struct *p, int dest_cpu) */
SEC("tp_btf/sched_migrate_task")
int BPF_PROG(xp_ex_migrate, struct task_struct *p, int dest_cpu)
{
	struct xp_ex_thread *t;
	__u32 gtid;

	if (!armed || !xp_sched_task_of(p, targ_tgid, &gtid))
		return 0;
	t = bpf_map_lookup_elem(&xp_ex_thread, &gtid);
	if (t)
		t->nmigr++;
	return 0;
}
#else
/* the lean object: stubs of the same names, never loaded */
SEC("tp_btf/sched_switch")
int BPF_PROG(xp_ex_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(xp_ex_wakeup, struct task_struct *p)
{
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(xp_ex_wakeup_new, struct task_struct *p)
{
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(xp_ex_migrate, struct task_struct *p, int dest_cpu)
{
	return 0;
}
#endif

/* One pair: into the total and, with --by, into its group (returned,
 * NULL without one). */
static __always_inline struct xp_lh_hist *record(struct xp_lh_total *t, __u64 d, __u64 key,
						 int key_bad, __u32 tid)
{
	struct xp_lh_hist *g;
	struct xp_lh_zero *z;
	__u32 b = xp_lh_bucket_of(d);
	__u64 gk;

	hist_add(&t->h, d, b, &t->c.minmax_contended);
	if (group_by == XP_LH_BY_NONE)
		return NULL;
	if (group_by == XP_LH_BY_ARG0 && key_bad) {
		__sync_fetch_and_add(&t->c.key_unreadable, 1);
		return NULL;
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
			return NULL;
		}
	}
	hist_add(g, d, b, &t->c.minmax_contended);
	return g;
}

/* A pair closes: recorded, then explained (--explain, frame @fd). */
static __always_inline void close_pair(struct xp_lh_total *t, __u32 fd, __u64 now, __u64 start,
				       __u64 key, int key_bad, __u32 tid)
{
	__u64 lat = now - start;
	struct xp_lh_hist *g = record(t, lat, key, key_bad, tid);

	ex_end(t, g, fd, now, start, lat, group_by ? key : 0);
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
	__u64 now;
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
			now = bpf_ktime_get_ns();
			ex_start(0, now);
			o->ts = now;
			return;
		}
		n.key = key;
		n.key_bad = key_bad;
		n.busy = 1;
		n.ts = bpf_ktime_get_ns();
		if (bpf_map_update_elem(&xp_lh_open, &tid, &n, BPF_NOEXIST))
			COUNT(inflight_overflow);
		else
			ex_start(0, n.ts);
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
	now = bpf_ktime_get_ns();
	ex_start(d, now);
	s->f[d].ts = now;
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
		close_pair(t, 0, now, o->ts, o->key, o->key_bad, tid);
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
	close_pair(t, d, now, s->f[d].ts, s->f[d].key, (s->key_bad >> d) & 1, tid);
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

/*
 * The session path (latency_hist.h): one program at the entry and the
 * return of each call of a session link (BPF_TRACE_UPROBE_SESSION, Linux
 * 6.13+), loaded only for stack-nested pairs without --by arg0 or
 * --explain (the cookie holds 8 bytes: the time).  The kfuncs are weak:
 * on a kernel without them this program is never loaded, and the
 * up_start/up_end pair above runs instead.
 *
 * entry  not the target or not armed: return 1, so the kernel runs no
 *        return for this call (nothing to pair, nothing unpaired); else
 *        count the start and store the time in the call's cookie, last.
 * return the time first; not armed any more: the call is open at the end
 *        (session_starts - pairs); else pair with the cookie.  Only calls
 *        whose entry stored reach it, so the target filter is not run
 *        again (the thread id is read only with --by thread).
 */
#ifndef XP_LH_LEAN
extern bool bpf_session_is_return(void) __ksym __weak;
extern __u64 *bpf_session_cookie(void) __ksym __weak;

SEC("uprobe")
int xp_lh_up_session(struct pt_regs *ctx)
{
	struct xp_lh_total *t;
	__u32 pid, tid = 0;
	__u64 now, *c;

	if (bpf_session_is_return()) {
		now = bpf_ktime_get_ns();
		if (!armed)
			return 0;
		t = total();
		c = bpf_session_cookie();
		if (!t || !c)
			return 0;
		if (group_by == XP_LH_BY_THREAD)
			xp_target_ids(&pid, &tid);
		close_pair(t, 0, now, *c, 0, 0, tid);
		return 0;
	}
	if (!xp_target_ids(&pid, &tid) || !armed)
		return 1;
	t = total();
	c = bpf_session_cookie();
	if (!t || !c)
		return 1;
	__sync_fetch_and_add(&t->c.session_starts, 1);
	*c = bpf_ktime_get_ns();
	return 0;
}
#else
/* the lean object: a stub of the same name, never loaded */
SEC("uprobe")
int xp_lh_up_session(struct pt_regs *ctx)
{
	return 0;
}
#endif

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
	close_pair(t, 0, now, o->ts, o->key, o->key_bad, tid);
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
	if (explain) {
		__u32 gtid = global_tid();

		bpf_map_delete_elem(&xp_ex_thread, &gtid);
	}
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
