/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * syscall_agg.bpf.c - the BPF side of `measure --syscall-aggregate`:
 * in-kernel per-syscall counting of one process, no event stream.
 *
 *   xp_sa_enter  raw tracepoint sys_enter(struct pt_regs *, long id)
 *   xp_sa_exit   raw tracepoint sys_exit(struct pt_regs *, long ret)
 *
 * Each program does, in this order: (1) filter the target (global tgid,
 * then its own PID namespace when it has one), (2) check the armed flag,
 * (3) count into the syscall's group, creating it once when the bounded
 * map has room.  Entry stores the thread's start (time, number) in its
 * slot of the bounded in-flight map; exit takes it back, so a matched
 * duration never needs the number from pt_regs.  A thread keeps its slot
 * (written in place: no allocation, no bucket lock on the hot path) until
 * it calls exit(2); --max-inflight therefore bounds the threads whose
 * starts are kept.  Only an unmatched exit (the syscall was
 * entered before arming, or its start was dropped) reads regs->orig_ax to
 * learn its number.  Every map-full case is counted (layouts and the
 * accounting identity: syscall_agg.h).  No ring, no pointer values, no
 * user memory; programs return 0, never print, and have no loops.
 *
 * CO-RE: as bpf/xp_live.bpf.c, compiled with BPF_NO_PRESERVE_ACCESS_INDEX;
 * the only kernel layout read is x86-64 struct pt_regs.orig_ax (uapi
 * stable), so the object has no relocation and loads without parsing the
 * running kernel's BTF.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "syscall_agg.h"
#include "syscall_restart.bpf.h"
#include "target_filter.bpf.h"

#ifndef offsetof
#define offsetof(t, m) __builtin_offsetof(t, m)
#endif

/* --- filters (rodata, set before load) ---------------------------------- */

/* targ_tgid, use_pidns, ns_tgid, pidns_dev, pidns_ino: target_filter.bpf.h */

/* --- state ------------------------------------------------------------- */

/* 0 until both links are attached; the collector flips it once, and back
 * to 0 at the end of the window before reading the maps. */
__u32 armed = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256); /* --max-groups, set before load */
	__type(key, __u32);
	__type(value, struct xp_sa_group);
} xp_sa_groups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024); /* --max-inflight, set before load */
	__type(key, __u32);
	__type(value, struct xp_sa_start);
} xp_sa_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_sa_counters);
} xp_sa_counters SEC(".maps");

/* The thread of the target inside an execve: a successful one returns on
 * the leader's id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} xp_sa_exec SEC(".maps");


static __always_inline struct xp_sa_counters *counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xp_sa_counters, &zero);
}

/* The group of @nr, created (zeroed on every CPU) when the map has room. */
static __always_inline struct xp_sa_group *group_of(__u32 nr)
{
	struct xp_sa_group *g = bpf_map_lookup_elem(&xp_sa_groups, &nr);
	struct xp_sa_group zero = {};

	if (g)
		return g;
	/* -E2BIG when full; -EEXIST when another CPU just made it */
	bpf_map_update_elem(&xp_sa_groups, &nr, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&xp_sa_groups, &nr);
}

/* A start the thread never finished: count it where it began. */
static __always_inline void supersede(struct xp_sa_start *s, struct xp_sa_group *g, __u32 nr)
{
	struct xp_sa_group *og = s->nr == nr ? g : group_of(s->nr);

	if (og)
		og->superseded++;
}

/* A matched exit of @g after @dur ns. */
static __always_inline void add_matched(struct xp_sa_group *g, __u64 dur)
{
	g->matched_exits++;
	g->total_ns += dur;
	if (!g->has_min || dur < g->min_ns) {
		g->min_ns = dur;
		g->has_min = 1;
	}
	if (dur > g->max_ns)
		g->max_ns = dur;
}

/*
 * The entry of an interrupted call running again (syscall_restart.bpf.h):
 * the same call goes on, no new entry.  Returns 1 when it was one.
 */
static __always_inline int restart_entry(struct xp_sa_start *s, __u32 nr)
{
	if (!s || !s->restarting)
		return 0;
	if (s->restarting == XP_SA_RESTART_SAME ? nr != s->restart_nr :
						  nr != XP_NR_RESTART_SYSCALL)
		return 0;
	if (s->busy) {
		struct xp_sa_group *g = group_of(s->nr);

		if (g)
			supersede(s, g, s->nr);
	}
	s->start_ns = s->restart_ns;
	s->nr = s->restart_nr;
	s->busy = 1;
	s->restarting = XP_SA_RESTART_NONE;
	return 1;
}

SEC("raw_tp/sys_enter")
int xp_sa_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct xp_sa_start start = {}, *s;
	struct xp_sa_counters *c;
	struct xp_sa_group *g;
	__u32 pid, tid, nr;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	nr = (__u32)ctx->args[1];
	s = bpf_map_lookup_elem(&xp_sa_inflight, &tid);
	if (restart_entry(s, nr))
		return 0;
	g = group_of(nr);
	if (!g) {
		c = counters();
		if (c)
			c->group_drop_entries++;
		return 0;
	}
	g->entries++;
	if (nr == XP_SA_NR_EXIT || nr == XP_SA_NR_EXIT_GROUP) {
		/* never returns: no start; the thread's slot is released */
		g->noreturn++;
		if (s) {
			if (s->busy)
				supersede(s, g, nr);
			bpf_map_delete_elem(&xp_sa_inflight, &tid);
		}
		return 0;
	}
	if (nr == XP_NR_EXECVE || nr == XP_NR_EXECVEAT)
		bpf_map_update_elem(&xp_sa_exec, &pid, &tid, BPF_ANY);
	if (s) {
		/* the thread's own slot, written in place: no allocation */
		if (s->busy)
			supersede(s, g, nr);
		s->start_ns = bpf_ktime_get_ns();
		s->nr = nr;
		s->busy = 1;
		return 0;
	}
	start.start_ns = bpf_ktime_get_ns();
	start.nr = nr;
	start.busy = 1;
	if (!bpf_map_update_elem(&xp_sa_inflight, &tid, &start, BPF_NOEXIST))
		return 0;
	g->inflight_drops++;
	c = counters();
	if (c)
		c->inflight_drops++;
	return 0;
}

/*
 * An rt_sigreturn returning -EINTR after a handler ends the thread's
 * interrupted call with EINTR (syscall_restart.bpf.h).
 */
static __always_inline void eintr_end(struct xp_sa_start *s, __u64 now)
{
	struct xp_sa_group *g;

	if (!s->restarting)
		return;
	s->restarting = XP_SA_RESTART_NONE;
	g = group_of(s->restart_nr);
	if (!g)
		return;
	add_matched(g, now - s->restart_ns);
	g->errors++;
}

SEC("raw_tp/sys_exit")
int xp_sa_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct xp_sa_counters *c;
	struct xp_sa_start *s;
	struct xp_sa_group *g;
	__u64 dur = 0, nr64, now;
	__u32 pid, tid, nr, *etid;
	long ret;
	int matched = 0;

	if (!xp_target_ids(&pid, &tid) || !armed)
		return 0;
	ret = (long)ctx->args[1];
	now = bpf_ktime_get_ns();
	s = bpf_map_lookup_elem(&xp_sa_inflight, &tid);
	if (s && s->busy && xp_sys_restarting(ret)) {
		/* interrupted: kept open until it runs again or ends in EINTR */
		s->restart_ns = s->start_ns;
		s->restart_nr = s->nr;
		s->restarting = ret == -XP_ERESTART_RESTARTBLOCK ? XP_SA_RESTART_BLOCK :
								   XP_SA_RESTART_SAME;
		s->busy = 0;
		return 0;
	}
	if (s && s->busy) {
		dur = now - s->start_ns;
		nr = s->nr;
		s->busy = 0;
		matched = 1;
		if (nr == XP_SA_NR_RT_SIGRETURN && ret == -XP_EINTR)
			eintr_end(s, now);
		if (nr == XP_NR_EXECVE || nr == XP_NR_EXECVEAT)
			bpf_map_delete_elem(&xp_sa_exec, &pid); /* failed, or single-threaded */
	} else {
		if (bpf_probe_read_kernel(
			    &nr64, sizeof(nr64),
			    (void *)(ctx->args[0] + offsetof(struct pt_regs, orig_ax)))) {
			c = counters();
			if (c)
				c->regs_read_errors++;
			return 0;
		}
		nr = (__u32)nr64;
		etid = (nr == XP_NR_EXECVE || nr == XP_NR_EXECVEAT) ?
			       bpf_map_lookup_elem(&xp_sa_exec, &pid) :
			       NULL;
		if (etid) {
			/* a successful execve, back on the leader's id: the
			 * caller's slot holds its start, and the caller's id is gone */
			__u32 old = *etid;

			bpf_map_delete_elem(&xp_sa_exec, &pid);
			s = bpf_map_lookup_elem(&xp_sa_inflight, &old);
			if (s && s->busy && s->nr == nr) {
				dur = now - s->start_ns;
				matched = 1;
			}
			if (old != tid)
				bpf_map_delete_elem(&xp_sa_inflight, &old);
			else if (s)
				s->busy = 0;
		}
	}
	g = group_of(nr);
	if (!g) {
		c = counters();
		if (c)
			c->group_drop_exits++;
		return 0;
	}
	if (matched)
		add_matched(g, dur);
	else
		g->unmatched_exits++;
	if (ret < 0 && ret >= -XP_SA_MAX_ERRNO)
		g->errors++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
