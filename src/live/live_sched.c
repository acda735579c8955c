/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live_sched.c - the scheduler timeline collector of `measure --explain`
 * (live_sched.h): bpf/xp_sched.bpf.c's object opened for one target,
 * its ring drained into a bounded timeline, its stacks read back for the
 * slowest pairs.
 *
 * Sequence (as live_bpf.c): open -> rodata tgid -> ring sized from the
 * capacity -> load -> attach the four tp_btf programs with armed == 0 ->
 * arm (the live loop arms it before any source, so a pair's first
 * instant already has its thread's history) -> poll with the sources ->
 * stop after them (disarm, drain, losses, sort).  Links and maps are this
 * process's descriptors, nothing pinned: if xprobe dies, the kernel
 * releases them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../common/json.h"
#include "../../common/monotonic.h"
#include "../selector/syscall_table.h"
#include "xp_sched.skel.h"
#include "libbpf_msg.h"
#include "live.h"
#include "live_sched.h"

#define XP_SCHED_LINKS 4
#define XP_SCHED_RING_MIN (256u << 10)
#define XP_SCHED_RING_MAX (16u << 20)

struct xp_live_sched {
	struct xp_sched_bpf *skel;
	struct bpf_link *links[XP_SCHED_LINKS];
	size_t nlinks;
	struct ring_buffer *rb;
	int ncpus;
	struct xp_sched_drops *percpu;
	struct xp_sched_timeline tl;
	bool stopped;
};

/* --- the timeline -------------------------------------------------------- */

uint64_t xp_sched_timeline_first_gap(const struct xp_sched_timeline *tl)
{
	uint64_t a = tl->first_lost_ts, b = tl->first_beyond_ts;

	if (tl->lost && !a)
		a = 1; /* lost but not dated: from the start */
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

int xp_sched_timeline_add(struct xp_sched_timeline *tl, const struct xp_sched_rec *r)
{
	if (r->kind < XP_SCHED_OUT || r->kind > XP_SCHED_MIGRATE) {
		tl->unknown++;
		return 0;
	}
	if (tl->n >= tl->cap) {
		if (!tl->beyond || r->ts_ns < tl->first_beyond_ts)
			tl->first_beyond_ts = r->ts_ns;
		tl->beyond++;
		return 0;
	}
	if (tl->n == tl->alloc) {
		size_t want = tl->alloc ? tl->alloc * 2 : 4096;
		struct xp_sched_rec *p;

		if (want > tl->cap)
			want = tl->cap;
		p = realloc(tl->rec, want * sizeof(*p));
		if (!p)
			return -ENOMEM;
		tl->rec = p;
		tl->alloc = want;
	}
	tl->rec[tl->n++] = *r;
	return 0;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct xp_sched_rec *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	/* the same instant on one switch: out before in */
	return (int)x->kind - (int)y->kind;
}

void xp_sched_timeline_sort(struct xp_sched_timeline *tl)
{
	if (tl->n > 1)
		qsort(tl->rec, tl->n, sizeof(*tl->rec), rec_cmp);
}

void xp_sched_timeline_free(struct xp_sched_timeline *tl)
{
	free(tl->rec);
	memset(tl, 0, sizeof(*tl));
}

static const char *kind_name(const struct xp_sched_rec *r)
{
	switch (r->kind) {
	case XP_SCHED_OUT:
		return "sched_switch_out";
	case XP_SCHED_IN:
		return "sched_switch_in";
	case XP_SCHED_WAKEUP:
		return r->flags & XP_SCHED_F_NEW ? "sched_wakeup_new" : "sched_wakeup";
	default:
		return "sched_migrate";
	}
}

static const char *state_name(const struct xp_sched_rec *r)
{
	if (r->kind != XP_SCHED_OUT)
		return NULL;
	switch (r->state) {
	case XP_SCHED_RUNNABLE:
		return "runnable";
	case XP_SCHED_BLOCKED_D:
		return "uninterruptible";
	default:
		return "interruptible";
	}
}

/* One SchedEvent object, every key present (keys alphabetical). */
static void sched_event(struct xpc_json *w, const struct xp_sched_rec *r, uint32_t pid)
{
	bool out_blocked = r->kind == XP_SCHED_OUT && r->state != XP_SCHED_RUNNABLE;
	char comm[sizeof(r->comm) + 1];

	xpc_json_obj_begin(w);
	xpc_json_kopt_u64(w, "arrival_age_ns", r->kind == XP_SCHED_OUT && r->arrival_age_ns,
			  r->arrival_age_ns);
	xpc_json_kstr(w, "clock_domain", "host_monotonic");
	xpc_json_ku64(w, "cpu", r->cpu);
	xpc_json_kopt_u64(w, "dest_cpu", r->kind == XP_SCHED_MIGRATE, r->dest_cpu);
	xpc_json_kstr(w, "event_type", kind_name(r));
	xpc_json_ku64(w, "pid", pid);
	xpc_json_kstr(w, "state", state_name(r));
	xpc_json_kstr(w, "syscall",
		      out_blocked && r->syscall >= 0 ? xp_syscall_name(r->syscall) : NULL);
	xpc_json_kopt_i64(w, "syscall_nr", out_blocked && r->syscall >= 0, r->syscall);
	xpc_json_ku64(w, "tid", r->tid);
	xpc_json_ku64(w, "timestamp_ns", r->ts_ns);
	xpc_json_key(w, "waker");
	if (r->kind != XP_SCHED_WAKEUP) {
		xpc_json_null(w);
	} else {
		memcpy(comm, r->comm, sizeof(r->comm));
		comm[sizeof(r->comm)] = '\0';
		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "comm", comm);
		xpc_json_ku64(w, "pid", r->waker_pid);
		xpc_json_ku64(w, "tid", r->waker_tid);
		xpc_json_obj_end(w);
	}
	xpc_json_kstr(w, "xprobe_extension", "sched_event");
	xpc_json_obj_end(w);
}

void xp_sched_timeline_write(struct xpc_json *w, const struct xp_sched_timeline *tl, uint32_t pid,
			     bool chrome)
{
	size_t i;

	for (i = 0; i < tl->n && !w->err; i++) {
		const struct xp_sched_rec *r = &tl->rec[i];

		if (!chrome) {
			sched_event(w, r, pid);
			xpc_json_line_end(w);
			continue;
		}
		xpc_json_obj_begin(w);
		xpc_json_key(w, "args");
		sched_event(w, r, pid);
		xpc_json_kstr(w, "cat", "sched");
		xpc_json_kstr(w, "name", kind_name(r));
		xpc_json_kstr(w, "ph", "i");
		xpc_json_ku64(w, "pid", pid);
		xpc_json_kstr(w, "s", "t");
		xpc_json_ku64(w, "tid", r->tid);
		xpc_json_ku64(w, "ts", r->ts_ns / 1000); /* as the capture's instants */
		xpc_json_obj_end(w);
	}
}

/* --- the BPF object ------------------------------------------------------ */

static int bpf_fail(struct xp_error *err, int e, const char *what)
{
	struct xp_live_libbpf_failure f = {
		.e = e,
		.what = what,
		.objects = "the scheduler timeline eBPF programs (--explain)",
		.maps = "the scheduler timeline ring",
		.perm_hint = "run xprobe doctor to see which probe capabilities are restricted",
	};
	int rc = xp_live_libbpf_fail(err, &f);

	return rc ? rc : xp_live_libbpf_fail_internal(err, &f);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct xp_live_sched *s = ctx;

	if (size < sizeof(struct xp_sched_rec)) {
		s->tl.unknown++;
		return 0;
	}
	/* out of memory: the record is counted as past the capacity */
	if (xp_sched_timeline_add(&s->tl, data)) {
		s->tl.cap = s->tl.n;
		return xp_sched_timeline_add(&s->tl, data);
	}
	return 0;
}

static uint32_t ring_bytes(uint64_t capacity)
{
	uint64_t want = capacity * (sizeof(struct xp_sched_rec) + 8);
	uint32_t b = XP_SCHED_RING_MIN;

	while (b < want && b < XP_SCHED_RING_MAX)
		b <<= 1;
	return b;
}

int xp_live_sched_open(uint32_t tgid, uint64_t capacity, struct xp_live_sched **out,
		       struct xp_error *err)
{
	struct bpf_program *p[XP_SCHED_LINKS];
	struct xp_live_sched *s;
	size_t i;
	int rc;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	s->tl.cap = capacity;
	xp_live_libbpf_capture();
	s->skel = xp_sched_bpf__open();
	if (!s->skel) {
		rc = bpf_fail(err, errno, "open");
		goto fail;
	}
	s->skel->rodata->targ_tgid = tgid;
	rc = bpf_map__set_max_entries(s->skel->maps.xp_sched_ring, ring_bytes(capacity));
	if (!rc)
		rc = xp_sched_bpf__load(s->skel);
	if (rc) {
		rc = bpf_fail(err, rc, "load");
		goto fail;
	}
	p[0] = s->skel->progs.xp_sched_switch;
	p[1] = s->skel->progs.xp_sched_wakeup;
	p[2] = s->skel->progs.xp_sched_wakeup_new;
	p[3] = s->skel->progs.xp_sched_migrate;
	for (i = 0; i < XP_SCHED_LINKS; i++) {
		s->links[i] = bpf_program__attach(p[i]);
		if (!s->links[i]) {
			rc = bpf_fail(err, errno, "attach");
			goto fail;
		}
		s->nlinks++;
	}
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		rc = bpf_fail(err, s->ncpus ? s->ncpus : EINVAL, "count the CPUs for");
		goto fail;
	}
	s->percpu = calloc((size_t)s->ncpus, sizeof(*s->percpu));
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.xp_sched_ring), on_record, s, NULL);
	if (!s->percpu || !s->rb) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto fail;
	}
	*out = s;
	return 0;
fail:
	xp_live_sched_free(s);
	return rc;
}

void xp_live_sched_arm(struct xp_live_sched *s)
{
	s->tl.armed_ns = xpc_mono_ns();
	__atomic_store_n(&s->skel->bss->armed, 1, __ATOMIC_RELEASE);
}

int xp_live_sched_poll(struct xp_live_sched *s)
{
	int n = ring_buffer__consume(s->rb);

	return n < 0 ? 0 : n;
}

void xp_live_sched_stop(struct xp_live_sched *s)
{
	__u32 zero = 0;
	int i;

	if (s->stopped)
		return;
	s->stopped = true;
	__atomic_store_n(&s->skel->bss->armed, 0, __ATOMIC_RELEASE);
	s->tl.stopped_ns = xpc_mono_ns();
	ring_buffer__consume(s->rb);
	if (!bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.xp_sched_drops), &zero, s->percpu)) {
		for (i = 0; i < s->ncpus; i++) {
			if (!s->percpu[i].count)
				continue;
			s->tl.lost += s->percpu[i].count;
			if (!s->tl.first_lost_ts || s->percpu[i].first_ts < s->tl.first_lost_ts)
				s->tl.first_lost_ts = s->percpu[i].first_ts;
		}
	}
	xp_sched_timeline_sort(&s->tl);
}

const struct xp_sched_timeline *xp_live_sched_timeline(const struct xp_live_sched *s)
{
	return &s->tl;
}

int xp_live_sched_stack(const struct xp_live_sched *s, int32_t id, uint64_t *ip, uint32_t max,
			uint32_t *n)
{
	uint64_t frames[XP_SCHED_STACK_DEPTH];
	uint32_t i;

	*n = 0;
	if (id < 0 || !s || !s->skel)
		return -ENOENT;
	memset(frames, 0, sizeof(frames));
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.xp_sched_stacks), &id, frames))
		return -ENOENT;
	for (i = 0; i < XP_SCHED_STACK_DEPTH && i < max && frames[i]; i++)
		ip[i] = frames[i];
	*n = i;
	return 0;
}

void xp_live_sched_free(struct xp_live_sched *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	ring_buffer__free(s->rb);
	xp_sched_bpf__destroy(s->skel);
	free(s->percpu);
	xp_sched_timeline_free(&s->tl);
	free(s);
}
