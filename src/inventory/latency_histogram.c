/* SPDX-License-Identifier: Apache-2.0 */
/*
 * latency_histogram.c - drives bpf/latency_hist.bpf.c for `measure
 * --histogram`: open the skeleton, write the filters and the pairing
 * configuration, size the bounded maps from --max-inflight / --max-groups,
 * load only the programs the two endpoints need, attach every link, arm,
 * wait out the window, disarm, read the maps once, detach, and free
 * everything on every path.
 *
 * Order matters for exactness, as in syscall_aggregate.c: every link is
 * attached before `armed` flips, so no lifecycle is half-seen at the start
 * except one the target was already inside (its end is an unpaired end);
 * at the end `armed` flips back and the programs still running are waited
 * out (programs_done; else the links are destroyed first, and the kernel
 * waits them out) before the maps are read, so no program adds into a
 * value being read.  The caller may keep the disarmed links until it has
 * written the result (xp_inv_lh_opts.keep): detaching waits a grace
 * period per link in the kernel, tens of milliseconds the result need
 * not wait for.
 *
 * The window ends on the first of: --duration-ms since arming; a stop
 * request (the caller's flag, set by SIGINT/SIGTERM, or common/cancel.h's
 * for SIGHUP); the target's exit (its pidfd becomes readable once its last
 * thread is gone, and every thread has passed the thread-exit program by
 * then, so what it left open is counted); the deadline (--timeout-ms).  A
 * target exit is a result: the maps hold everything up to it.
 *
 * Attachments: a uprobe/uretprobe pair on the resolved file offset, opened
 * for the target PID, one program each (the role is the program), or one
 * session link and one program for both (lh_ukind); the two
 * CPython GC USDT markers through libbpf, likewise; a syscall through the raw
 * tracepoints sys_enter/sys_exit with the number in rodata.  The
 * thread-exit raw tracepoint is attached for every plan.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../common/cancel.h"
#include "../../common/monotonic.h"
#include "../process/procfs.h"
#include "latency_hist.skel.h"
#include "latency_hist_lean.skel.h"
#include "latency_histogram.h"
#include "../live/libbpf_msg.h"
#include "../live/uprobe_link.h"
#include "window.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define XP_LH_POLL_MS 50
#define XP_LH_LINKS_MAX 7 /* task exit, two endpoints, four --explain programs */

static int bpf_fail(struct xp_error *err, int e, const struct xp_live_endpoint *ep,
		    const char *what)
{
	struct xp_live_libbpf_failure f = {
		.e = e,
		.what = what,
		.objects = "the latency histogram eBPF programs",
		.ep = ep,
		.maps = "the latency histogram maps",
	};
	int rc = xp_live_libbpf_fail(err, &f);

	if (rc)
		return rc;
	if (ep && (ep->kind == XP_LIVE_UPROBE || ep->kind == XP_LIVE_USDT)) {
		xp_error_hint(err, "run xprobe validate with the exact selector text");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "the kernel refused the probe for %s: %s", ep->selector, f.why);
	}
	return xp_live_libbpf_fail_internal(err, &f);
}

/*
 * Open the object and configure it for @start/@end (nothing loaded yet):
 * rodata, which programs load, map sizes.  Returns 0 or -errno (errno of
 * libbpf), *out set on success.
 */
/*
 * How the uprobe endpoints attach (uprobe_link.h).  A session link where
 * the kernel has one and the pair fits a per-call cookie: stack-nested,
 * the entry and the return of one function, no --by arg0 (the cookie
 * holds the start's time only) and no --explain (its per-thread frames
 * need the thread's depth): one program at both ends, no per-thread map
 * (latency_hist.bpf.c, xp_lh_up_session).  Else uprobe_multi links (the
 * two close at once), else perf-event links.
 */
static enum xp_uprobe_kind lh_ukind(const struct xp_live_filter *f,
				    const struct xp_live_endpoint *start,
				    const struct xp_live_endpoint *end, bool nested, int group_by,
				    bool explain)
{
	enum xp_uprobe_kind k = xp_uprobe_kind_for(f ? f->global_tgid : 0);
	bool one_call = start->kind == XP_LIVE_UPROBE && end->kind == XP_LIVE_UPROBE &&
			!start->retprobe && end->retprobe &&
			start->file_offset == end->file_offset && start->access_path &&
			end->access_path && !strcmp(start->access_path, end->access_path);

	if (k == XP_UPROBE_SESSION &&
	    !(one_call && nested && group_by != XP_LH_BY_ARG0 && !explain))
		k = XP_UPROBE_MULTI;
	return k;
}

/*
 * The skeleton over the whole object (@full: a session link or --explain)
 * or over the lean one (bpf/latency_hist.bpf.c, "CO-RE"): the same
 * programs, maps and data, so one skeleton type opens either, and only a
 * run that needs the session kfuncs or --explain's task reads pays
 * libbpf's parse of the kernel's BTF (~25 ms on 6.18).
 */
static struct latency_hist_bpf *open_skel(bool full)
{
	struct latency_hist_bpf *obj;
	int err;

	if (full)
		return latency_hist_bpf__open();
	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = latency_hist_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data =
			(void *)latency_hist_lean_bpf__elf_bytes(&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	}
	if (err) {
		latency_hist_bpf__destroy(obj);
		errno = err < 0 ? -err : err;
		return NULL;
	}
	return obj;
}

static int configure(struct latency_hist_bpf **out, const struct xp_live_filter *f,
		     const struct xp_live_endpoint *start, const struct xp_live_endpoint *end,
		     bool nested, int group_by, uint64_t max_groups, uint64_t max_inflight,
		     uint64_t max_depth, bool explain, uint32_t explain_top,
		     enum xp_uprobe_kind uk)
{
	struct latency_hist_bpf *skel;
	bool up = start->kind == XP_LIVE_UPROBE, usdt = start->kind == XP_LIVE_USDT;
	bool sys = start->kind == XP_LIVE_SYS_ENTER;
	int rc;

	*out = NULL;
	skel = open_skel((up && uk == XP_UPROBE_SESSION) || explain);
	if (!skel)
		return errno ? -errno : -EINVAL;
	if (f)
		XP_TARGET_FILTER_APPLY(skel->rodata, f);
	skel->rodata->nested = nested;
	skel->rodata->max_depth = (__u32)max_depth;
	skel->rodata->group_by = (__u32)group_by;
	if (sys) {
		skel->rodata->start_nr = start->syscall_nr;
		skel->rodata->end_nr = end->syscall_nr;
	}
	bpf_program__set_autoload(skel->progs.xp_lh_up_start, up && uk != XP_UPROBE_SESSION);
	bpf_program__set_autoload(skel->progs.xp_lh_up_end, up && uk != XP_UPROBE_SESSION);
	bpf_program__set_autoload(skel->progs.xp_lh_up_session, up && uk == XP_UPROBE_SESSION);
	if (up && uk == XP_UPROBE_SESSION) {
		bpf_program__set_expected_attach_type(
			skel->progs.xp_lh_up_session,
			(enum bpf_attach_type)xp_uprobe_attach_type(XP_UPROBE_SESSION));
	} else if (up && uk != XP_UPROBE_PERF) {
		int t = xp_uprobe_attach_type(XP_UPROBE_MULTI);

		bpf_program__set_expected_attach_type(skel->progs.xp_lh_up_start,
						      (enum bpf_attach_type)t);
		bpf_program__set_expected_attach_type(skel->progs.xp_lh_up_end,
						      (enum bpf_attach_type)t);
	}
	bpf_program__set_autoload(skel->progs.xp_lh_usdt_start, usdt);
	bpf_program__set_autoload(skel->progs.xp_lh_usdt_end, usdt);
	bpf_program__set_autoload(skel->progs.xp_lh_sys_enter, sys);
	bpf_program__set_autoload(skel->progs.xp_lh_sys_exit, sys);
	skel->rodata->explain = explain;
	skel->rodata->explain_top = explain_top;
	bpf_program__set_autoload(skel->progs.xp_ex_switch, explain);
	bpf_program__set_autoload(skel->progs.xp_ex_wakeup, explain);
	bpf_program__set_autoload(skel->progs.xp_ex_wakeup_new, explain);
	bpf_program__set_autoload(skel->progs.xp_ex_migrate, explain);
	/* the in-flight map of the other policy, and the group map without
	 * --by, hold one entry; libbpf's USDT tables at their minimum
	 * without a USDT endpoint (as live_bpf.c) */
	rc = bpf_map__set_max_entries(skel->maps.xp_lh_open, nested ? 1 : (__u32)max_inflight);
	if (!rc)
		rc = bpf_map__set_max_entries(skel->maps.xp_lh_stack,
					      nested ? (__u32)max_inflight : 1);
	if (!rc)
		rc = bpf_map__set_max_entries(skel->maps.xp_lh_groups,
					      group_by == XP_LH_BY_NONE ? 1 : (__u32)max_groups);
	if (!rc)
		rc = bpf_map__set_max_entries(skel->maps.xp_ex_thread,
					      explain ? (__u32)max_inflight : 1);
	if (!rc)
		rc = bpf_map__set_max_entries(skel->maps.xp_ex_stacks,
					      explain ? XP_EX_STACK_ENTRIES : 1);
	if (!rc)
		rc = bpf_map__set_max_entries(skel->maps.__bpf_usdt_ip_to_spec_id, 1);
	if (!rc && !usdt)
		rc = bpf_map__set_max_entries(skel->maps.__bpf_usdt_specs, 1);
	if (rc) {
		latency_hist_bpf__destroy(skel);
		return rc < 0 ? rc : -rc;
	}
	*out = skel;
	return 0;
}

int xp_inv_lh_load_check(const struct xp_live_endpoint *start, const struct xp_live_endpoint *end,
			 bool nested, int group_by, char *detail, size_t size)
{
	struct latency_hist_bpf *skel = NULL;
	int rc;

	xp_live_libbpf_capture();
	rc = configure(&skel, NULL, start, end, nested, group_by, XP_LH_DEFAULT_MAX_GROUPS,
		       XP_LH_DEFAULT_MAX_INFLIGHT, XP_LH_DEFAULT_MAX_DEPTH, false, 0,
		       lh_ukind(NULL, start, end, nested, group_by, false));
	if (rc)
		goto fail;
	rc = latency_hist_bpf__load(skel);
	latency_hist_bpf__destroy(skel);
	if (rc)
		goto fail;
	snprintf(
		detail, size,
		"loaded the latency histogram object (%s pairing, %u-thread in-flight map%s) and freed it",
		nested ? "stack-nested" : "exact", XP_LH_DEFAULT_MAX_INFLIGHT,
		group_by == XP_LH_BY_NONE ? "" : ", 256-group map");
	return 0;
fail:
	xp_live_libbpf_load_failed(detail, size, "latency histogram", rc);
	return rc < 0 ? rc : -rc;
}

static struct bpf_link *attach_endpoint(struct latency_hist_bpf *skel,
					const struct xp_live_endpoint *ep, uint32_t pid, bool end,
					int *e)
{
	struct bpf_link *l = NULL;

	errno = 0;
	switch (ep->kind) {
	case XP_LIVE_UPROBE: {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = ep->retprobe);

		l = bpf_program__attach_uprobe_opts(
			end ? skel->progs.xp_lh_up_end : skel->progs.xp_lh_up_start, (pid_t)pid,
			ep->access_path, (size_t)ep->file_offset, &o);
		break;
	}
	case XP_LIVE_USDT:
		l = bpf_program__attach_usdt(
			end ? skel->progs.xp_lh_usdt_end : skel->progs.xp_lh_usdt_start, (pid_t)pid,
			ep->access_path, ep->usdt_provider, ep->usdt_name, NULL);
		break;
	case XP_LIVE_SYS_ENTER:
		l = bpf_program__attach_raw_tracepoint(skel->progs.xp_lh_sys_enter, "sys_enter");
		break;
	case XP_LIVE_SYS_EXIT:
		l = bpf_program__attach_raw_tracepoint(skel->progs.xp_lh_sys_exit, "sys_exit");
		break;
	case XP_LIVE_TRACEPOINT:
		errno = EINVAL; /* the usage check refuses tracepoints first */
		break;
	}
	if (!l)
		*e = errno ? -errno : -EINVAL;
	return l;
}

/* Fold the per-CPU total and read every group into @r (cumulative). */
static int read_totals(struct latency_hist_bpf *skel, struct xp_inv_lh_result *r,
		       struct xp_error *err)
{
	size_t vsize = (sizeof(struct xp_lh_total) + 7) & ~(size_t)7;
	char *vals = NULL;
	struct xp_lh_hist g;
	__u64 gkey, gnext, *gprev = NULL;
	__u32 zero = 0;
	int fd, i, rc = 0;

	vals = calloc((size_t)r->ncpus, vsize);
	if (!vals)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xp_lh_total), &zero, vals)) {
		rc = bpf_fail(err, errno, NULL, "read");
		goto out;
	}
	for (i = 0; i < r->ncpus; i++) {
		const struct xp_lh_total *t = (const void *)(vals + (size_t)i * vsize);

		xp_inv_lh_hist_fold(&r->total, &t->h);
		r->c.superseded += t->c.superseded;
		r->c.unpaired_ends += t->c.unpaired_ends;
		r->c.inflight_overflow += t->c.inflight_overflow;
		r->c.depth_overflow += t->c.depth_overflow;
		r->c.group_overflow += t->c.group_overflow;
		r->c.key_unreadable += t->c.key_unreadable;
		r->c.thread_exit_open += t->c.thread_exit_open;
		r->c.minmax_contended += t->c.minmax_contended;
		r->c.ex_unexplained += t->c.ex_unexplained;
		r->c.ex_clamped += t->c.ex_clamped;
		r->c.ex_block_overflow += t->c.ex_block_overflow;
		r->c.session_starts += t->c.session_starts;
	}
	if (r->group_by != XP_LH_BY_NONE) {
		fd = bpf_map__fd(skel->maps.xp_lh_groups);
		while (bpf_map_get_next_key(fd, gprev, &gnext) == 0) {
			struct xp_inv_lh_group *ng;

			gkey = gnext;
			gprev = &gkey;
			if (bpf_map_lookup_elem(fd, &gkey, &g))
				continue; /* cannot vanish: nothing deletes groups */
			ng = realloc(r->groups, (r->ngroups + 1) * sizeof(*ng));
			if (!ng) {
				rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
				goto out;
			}
			r->groups = ng;
			memset(&r->groups[r->ngroups], 0, sizeof(*ng));
			r->groups[r->ngroups].key = gkey;
			xp_inv_lh_hist_fold(&r->groups[r->ngroups].h, &g);
			r->ngroups++;
		}
	}
out:
	free(vals);
	return rc;
}

/* The totals, then the in-flight slots (what is open at the end). */
static int read_maps(struct latency_hist_bpf *skel, struct xp_inv_lh_result *r,
		     struct xp_error *err)
{
	__u32 key, next, *prev = NULL;
	int fd, rc = read_totals(skel, r, err);

	if (rc)
		return rc;
	if (r->session) {
		/* no in-flight map: a start is open when it did not pair (its
		 * return not run yet, or never: its thread exited inside) */
		if (r->c.session_starts > r->total.count)
			r->open_at_end = r->c.session_starts - r->total.count;
		return 0;
	}
	fd = bpf_map__fd(r->nested ? skel->maps.xp_lh_stack : skel->maps.xp_lh_open);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (r->nested) {
			struct xp_lh_stack s;

			if (bpf_map_lookup_elem(fd, &key, &s))
				continue;
			r->inflight_occupied++;
			r->open_at_end += (uint64_t)s.depth + s.lost;
		} else {
			struct xp_lh_open o;

			if (bpf_map_lookup_elem(fd, &key, &o))
				continue;
			r->inflight_occupied++;
			r->open_at_end += o.busy != 0;
		}
	}
	return 0;
}

/* --- --interval-ms ------------------------------------------------------- */

/* Two cumulative reads; each tick reads into @cur, reports @cur - @prev,
 * then swaps them.  Memory: two group tables of at most --max-groups. */
struct intervals {
	struct xp_inv_lh_result a, b, *prev, *cur;
	struct xp_inv_lh_group *delta; /* the interval's groups */
	uint64_t index, last_ns, next_ns;
};

static int by_key(const void *x, const void *y)
{
	const struct xp_inv_lh_group *a = x, *b = y;

	return a->key < b->key ? -1 : a->key > b->key;
}

static int by_count_desc(const void *x, const void *y)
{
	const struct xp_inv_lh_group *a = x, *b = y;

	if (a->h.count != b->h.count)
		return a->h.count > b->h.count ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

static void counters_delta(struct xp_lh_counters *d, const struct xp_lh_counters *now,
			   const struct xp_lh_counters *before)
{
	const __u64 *n = (const __u64 *)now, *b = (const __u64 *)before;
	__u64 *o = (__u64 *)d;
	size_t i;

	_Static_assert(sizeof(*d) % sizeof(__u64) == 0, "xp_lh_counters: u64 fields only");
	for (i = 0; i < sizeof(*d) / sizeof(__u64); i++)
		o[i] = n[i] - b[i];
}

static void reset_read(struct xp_inv_lh_result *r, const struct xp_inv_lh_result *like)
{
	struct xp_inv_lh_group *g = r->groups;

	memset(&r->total, 0, sizeof(r->total));
	memset(&r->c, 0, sizeof(r->c));
	r->groups = g;
	r->ngroups = 0;
	r->ncpus = like->ncpus;
	r->nested = like->nested;
	r->group_by = like->group_by;
}

static int interval_tick(struct latency_hist_bpf *skel, const struct xp_inv_lh_opts *o,
			 struct intervals *iv, uint64_t now, struct xp_error *err)
{
	struct xp_inv_lh_interval x;
	struct xp_inv_lh_result *t;
	size_t i, n = 0;
	int rc;

	reset_read(iv->cur, iv->prev);
	rc = read_totals(skel, iv->cur, err);
	if (rc)
		return rc;
	memset(&x, 0, sizeof(x));
	x.index = iv->index++;
	x.start_ns = iv->last_ns;
	x.end_ns = now;
	xp_inv_lh_dist_delta(&x.total, &iv->cur->total, &iv->prev->total);
	counters_delta(&x.c, &iv->cur->c, &iv->prev->c);
	if (iv->cur->ngroups) {
		struct xp_inv_lh_group *d = realloc(iv->delta, iv->cur->ngroups * sizeof(*d));

		if (!d)
			return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		iv->delta = d;
	}
	for (i = 0; i < iv->cur->ngroups; i++) {
		const struct xp_inv_lh_group *g = &iv->cur->groups[i], *p;
		static const struct xp_inv_lh_dist none;

		p = iv->prev->ngroups ? bsearch(g, iv->prev->groups, iv->prev->ngroups, sizeof(*g),
						by_key) :
					NULL;
		iv->delta[n].key = g->key;
		xp_inv_lh_dist_delta(&iv->delta[n].h, &g->h, p ? &p->h : &none);
		if (iv->delta[n].h.count)
			n++;
	}
	if (n > 1)
		qsort(iv->delta, n, sizeof(*iv->delta), by_count_desc);
	x.groups = iv->delta;
	x.ngroups = n;
	/* the cumulative read, its groups by key for the next tick's search */
	if (iv->cur->ngroups > 1)
		qsort(iv->cur->groups, iv->cur->ngroups, sizeof(*iv->cur->groups), by_key);
	x.cumulative = iv->cur;
	rc = o->on_interval(o->interval_ctx, &x, err);
	t = iv->prev;
	iv->prev = iv->cur;
	iv->cur = t;
	iv->last_ns = now;
	return rc;
}

static void intervals_free(struct intervals *iv)
{
	free(iv->a.groups);
	free(iv->b.groups);
	free(iv->delta);
}

/* The four scheduler programs of --explain (tp_btf: typed arguments). */
static int attach_explain(struct latency_hist_bpf *skel, struct bpf_link **links, size_t *n,
			  struct xp_error *err)
{
	struct bpf_program *p[] = { skel->progs.xp_ex_switch, skel->progs.xp_ex_wakeup,
				    skel->progs.xp_ex_wakeup_new, skel->progs.xp_ex_migrate };
	size_t i;

	for (i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
		links[*n] = bpf_program__attach(p[i]);
		if (!links[*n])
			return bpf_fail(err, errno, NULL, "attach");
		(*n)++;
	}
	return 0;
}

static int blocked_cmp(const void *a, const void *b)
{
	const struct xp_inv_ex_blocked *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return x->nr != y->nr ? (x->nr < y->nr ? -1 : 1) : (int)x->state - (int)y->state;
}

static int slow_cmp(const void *a, const void *b)
{
	const struct xp_ex_slow *x = a, *y = b;

	if (x->latency_ns != y->latency_ns)
		return x->latency_ns < y->latency_ns ? 1 : -1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Copy stack @id out of the map once (nothing when negative or gone). */
static int keep_stack(struct latency_hist_bpf *skel, struct xp_inv_ex_result *ex, int32_t id,
		      bool kernel, uint32_t pid)
{
	__u64 ip[XP_EX_STACK_DEPTH];
	uint64_t frames[XP_EX_STACK_DEPTH];
	__u32 key = (__u32)id;
	uint32_t n;

	if (id < 0 || xp_inv_ex_stack_find(ex, id))
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xp_ex_stacks), &key, ip))
		return 0;
	for (n = 0; n < XP_EX_STACK_DEPTH && ip[n]; n++)
		frames[n] = ip[n];
	return xp_inv_ex_add_stack(ex, id, kernel, pid, frames, n);
}

/* --explain's maps: the buckets' parts (folded over CPUs), the blocked
 * time per (syscall, state), the slowest pairs and their stacks. */
static int read_explain(struct latency_hist_bpf *skel, struct xp_inv_lh_result *r,
			struct xp_error *err)
{
	size_t vsize = sizeof(struct xp_ex_buckets), i, b;
	struct xp_inv_ex_result *ex = &r->ex;
	__u64 k, next, *prev = NULL, ns;
	char *vals = NULL;
	__u32 zero = 0;
	int cpu, fd, c, rc = 0;

	r->ex_missed_in = skel->bss->ex_missed_in;

	vals = calloc((size_t)r->ncpus, vsize);
	ex->buckets = calloc(XP_LH_BUCKETS, sizeof(*ex->buckets));
	if (!vals || !ex->buckets)
		goto nomem;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xp_ex_buckets), &zero, vals)) {
		rc = bpf_fail(err, errno, NULL, "read");
		goto out;
	}
	for (cpu = 0; cpu < r->ncpus; cpu++) {
		const struct xp_ex_buckets *eb = (const void *)(vals + (size_t)cpu * vsize);

		for (b = 0; b < XP_LH_BUCKETS; b++)
			for (c = 0; c < XP_EX_NCOMP; c++)
				ex->buckets[b][c] += eb->comp[b][c];
	}
	fd = bpf_map__fd(skel->maps.xp_ex_blocked);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct xp_inv_ex_blocked *nb;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &ns))
			continue;
		nb = realloc(ex->blocked, (ex->nblocked + 1) * sizeof(*nb));
		if (!nb)
			goto nomem;
		ex->blocked = nb;
		nb[ex->nblocked].nr = (int32_t)(uint32_t)(k >> 8) - 1;
		nb[ex->nblocked].state = (uint32_t)(k & 0xff);
		nb[ex->nblocked].ns = ns;
		ex->nblocked++;
	}
	qsort(ex->blocked, ex->nblocked, sizeof(*ex->blocked), blocked_cmp);
	free(vals);
	vals = calloc((size_t)r->ncpus, sizeof(struct xp_ex_top));
	ex->slow = calloc((size_t)r->ncpus * XP_EX_TOP_MAX, sizeof(*ex->slow));
	if (!vals || !ex->slow)
		goto nomem;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xp_ex_top), &zero, vals)) {
		rc = bpf_fail(err, errno, NULL, "read");
		goto out;
	}
	/* every CPU's slowest, then the slowest --explain-top of them all */
	for (cpu = 0; cpu < r->ncpus; cpu++) {
		const struct xp_ex_top *t = (const void *)(vals + (size_t)cpu * sizeof(*t));
		uint32_t n = t->n < XP_EX_TOP_MAX ? t->n : XP_EX_TOP_MAX;

		memcpy(&ex->slow[ex->nslow], t->s, n * sizeof(*ex->slow));
		ex->nslow += n;
	}
	qsort(ex->slow, ex->nslow, sizeof(*ex->slow), slow_cmp);
	if (ex->nslow > ex->top)
		ex->nslow = ex->top;
	for (i = 0; i < ex->nslow; i++) {
		const struct xp_ex_block *lb = &ex->slow[i].longest;

		if (!lb->ns)
			continue;
		if (keep_stack(skel, ex, lb->ustack, false, r->target_pid) ||
		    keep_stack(skel, ex, lb->kstack, true, 0) ||
		    keep_stack(skel, ex, lb->waker_ustack, false, lb->waker_pid) ||
		    keep_stack(skel, ex, lb->waker_kstack, true, 0))
			goto nomem;
	}
	goto out;
nomem:
	rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
out:
	free(vals);
	return rc;
}

/* Wait for the window's end, reading every interval on the way; returns
 * why it ended (negative: an interval's error, in @err). */
static int wait_window(const struct xp_inv_lh_opts *o, uint64_t armed_at, int pidfd,
		       struct latency_hist_bpf *skel, struct intervals *iv, struct xp_error *err)
{
	uint64_t end = o->duration_ms ? armed_at + o->duration_ms * 1000000ull : 0;
	uint64_t last_verify = armed_at, last_progress = 0;
	int rc;

	for (;;) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		uint64_t now = xpc_mono_ns(), wake = now + XP_LH_POLL_MS * 1000000ull;
		struct timespec ts;
		int got;

		if ((o->stop && *o->stop) || xpc_cancel_signo())
			return XP_LH_STOP_CANCELLED;
		if (end && now >= end)
			return XP_LH_STOP_DURATION;
		if (o->deadline_ns && now >= o->deadline_ns)
			return XP_LH_STOP_TIMEOUT;
		if (iv && now >= iv->next_ns) {
			rc = interval_tick(skel, o, iv, now, err);
			if (rc)
				return rc;
			/* the next tick on the grid from arming: no drift */
			while (iv->next_ns <= now)
				iv->next_ns += o->interval_ns;
		}
		if (o->progress && (!last_progress || now - last_progress >= XP_LIVE_PROGRESS_NS)) {
			last_progress = now;
			o->progress(o->progress_ctx, now - armed_at);
		}
		if (pidfd < 0 && now - last_verify >= XP_LH_POLL_MS * 1000000ull) {
			struct xp_error verr = { 0 };
			int gone = xp_target_verify(o->target, &verr) != 0;

			xp_error_clear(&verr);
			last_verify = now;
			if (gone)
				return XP_LH_STOP_TARGET_EXITED;
		}
		if (end && end < wake)
			wake = end;
		if (o->deadline_ns && o->deadline_ns < wake)
			wake = o->deadline_ns;
		if (iv && iv->next_ns < wake)
			wake = iv->next_ns;
		ts.tv_sec = (time_t)((wake - now) / 1000000000ull);
		ts.tv_nsec = (long)((wake - now) % 1000000000ull);
		/* a signal handler (no SA_RESTART) ends the wait with EINTR */
		got = ppoll(pidfd >= 0 ? &pfd : NULL, pidfd >= 0 ? 1 : 0, &ts, NULL);
		if (got > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			return XP_LH_STOP_TARGET_EXITED;
	}
}

struct xp_inv_lh_attached {
	struct bpf_link *links[XP_LH_LINKS_MAX];
	int mlinks[2];
	size_t nlinks, nmlinks;
	struct latency_hist_bpf *skel;
};

int xp_inv_lh_detach(struct xp_inv_lh_attached *a)
{
	int rc, e;

	if (!a)
		return 0;
	rc = xp_uprobe_links_close(a->mlinks, a->nmlinks);
	while (a->nlinks) {
		e = bpf_link__destroy(a->links[--a->nlinks]);
		if (e && !rc)
			rc = e < 0 ? e : -e;
	}
	latency_hist_bpf__destroy(a->skel);
	free(a);
	return rc;
}

/*
 * After `armed` is cleared, wait until no program of ours still runs
 * (one that read `armed` set may be adding): membarrier's global command
 * is synchronize_rcu(), and every program of this object runs inside an
 * RCU read-side section -- uprobe (perf-event, multi and session) and
 * raw-tracepoint programs alike.  False when the kernel refuses it
 * (nohz_full CPUs): the caller then detaches first.
 */
static bool programs_done(void)
{
	/* with one CPU online the kernel returns at once: a program
	 * preempted on it would not be waited for */
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return false;
	return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0;
}

int xp_inv_lh_collect(const struct xp_inv_lh_opts *o, struct xp_inv_lh_result *r,
		      struct xp_error *err)
{
	struct latency_hist_bpf *skel = NULL;
	struct bpf_link *links[XP_LH_LINKS_MAX] = { 0 };
	const struct xp_live_endpoint *eps[2] = { o->start, o->end };
	struct intervals iv = { 0 };
	uint64_t t0 = xpc_mono_ns();
	int mlinks[2]; /* the uprobe endpoints' uprobe_multi links */
	size_t nlinks = 0, nmlinks = 0, i;
	int pidfd = -1, rc, e = 0;
	enum xp_uprobe_kind uk;
	bool own_pidfd = false;

	memset(r, 0, sizeof(*r));
	if (o->keep)
		*o->keep = NULL;
	if (!o->max_inflight || o->max_inflight > XP_LH_MAX_INFLIGHT_LIMIT ||
	    (o->group_by != XP_LH_BY_NONE &&
	     (!o->max_groups || o->max_groups > XP_LH_MAX_GROUPS_LIMIT)) ||
	    !o->max_depth || o->max_depth > XP_LH_MAX_DEPTH)
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "latency histogram bounds out of range");
	if (o->explain && (!o->filter.global_tgid || o->explain_top > XP_EX_TOP_MAX))
		return xp_error_set(
			err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
			"--explain needs the target's global pid and --explain-top <= %u",
			XP_EX_TOP_MAX);
	r->nested = o->nested;
	r->group_by = o->group_by;
	r->explain = o->explain;
	r->ex.top = o->explain_top;
	r->target_pid = o->filter.global_tgid;
	r->inflight_capacity = o->max_inflight;
	r->group_capacity = o->group_by == XP_LH_BY_NONE ? 0 : o->max_groups;
	r->max_depth = o->nested ? o->max_depth : 1;
	r->ncpus = libbpf_num_possible_cpus();
	if (r->ncpus <= 0)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "cannot count the possible CPUs: %s", strerror(-r->ncpus));

	xp_live_libbpf_capture();
	uk = lh_ukind(&o->filter, o->start, o->end, o->nested, o->group_by, o->explain);
	r->session = o->start->kind == XP_LIVE_UPROBE && uk == XP_UPROBE_SESSION;
	if (o->start->kind == XP_LIVE_UPROBE)
		r->uprobe_link = xp_uprobe_kind_name(uk);
	rc = configure(&skel, &o->filter, o->start, o->end, o->nested, o->group_by, o->max_groups,
		       o->max_inflight, o->max_depth, o->explain, o->explain_top, uk);
	if (rc) {
		rc = bpf_fail(err, -rc, NULL, "open");
		goto out;
	}
	rc = latency_hist_bpf__load(skel);
	if (rc) {
		rc = bpf_fail(err, rc, NULL, "load");
		goto out;
	}
	/* the thread-exit program first: a slot never outlives its thread */
	links[nlinks] = bpf_program__attach_raw_tracepoint(skel->progs.xp_lh_task_exit,
							   "sched_process_exit");
	if (!links[nlinks]) {
		rc = bpf_fail(err, errno, NULL, "attach");
		goto out;
	}
	nlinks++;
	/* the scheduler's programs before the endpoints: a thread is followed
	 * from its first start on */
	if (o->explain) {
		rc = attach_explain(skel, links, &nlinks, err);
		if (rc)
			goto out;
	}
	/* a session link is both endpoints: one link, made at i == 0 */
	for (i = 0; i < (r->session ? 1u : 2u); i++) {
		if (eps[i]->kind == XP_LIVE_UPROBE && uk != XP_UPROBE_PERF) {
			uint64_t off = eps[i]->file_offset;
			struct xp_uprobe_multi m = {
				.path = eps[i]->access_path,
				.offsets = &off,
				.cnt = 1,
				.retprobe = eps[i]->retprobe,
				.session = r->session,
				.pid = xp_proc_attach_pid(o->target->pid),
			};
			struct bpf_program *p = r->session ? skel->progs.xp_lh_up_session :
					       i == 1	   ? skel->progs.xp_lh_up_end :
							     skel->progs.xp_lh_up_start;

			e = xp_uprobe_multi_attach(bpf_program__fd(p), &m);
			if (e >= 0) {
				mlinks[nmlinks++] = e;
				continue;
			}
		} else {
			links[nlinks] = attach_endpoint(
				skel, eps[i], xp_proc_attach_pid(o->target->pid), i == 1, &e);
		}
		if (e < 0 || !links[nlinks]) {
			struct xp_error verr = { 0 };

			rc = bpf_fail(err, e, eps[i], "attach");
			/* a target that went away explains the failure better */
			if (xp_target_verify(o->target, &verr)) {
				xp_error_clear(err);
				xp_error_move(err, &verr);
				rc = -err->code;
			}
			xp_error_clear(&verr);
			goto out;
		}
		nlinks++;
	}
	if (o->target->has_pidfd) {
		pidfd = o->target->pidfd;
	} else {
		pidfd = (int)syscall(SYS_pidfd_open, (pid_t)o->target->pid, 0);
		own_pidfd = pidfd >= 0;
	}

	rc = xp_inv_window_open(&skel->bss->armed, t0, &r->armed_at_ns, &r->setup_ns, o->on_armed,
				o->on_armed_ctx, err);
	if (rc)
		goto out;
	if (o->interval_ns && o->on_interval) {
		iv.prev = &iv.a;
		iv.cur = &iv.b;
		iv.a.ncpus = r->ncpus;
		iv.a.nested = r->nested;
		iv.a.group_by = r->group_by;
		iv.last_ns = r->armed_at_ns;
		iv.next_ns = r->armed_at_ns + o->interval_ns;
	}
	rc = wait_window(o, r->armed_at_ns, pidfd, skel, iv.prev ? &iv : NULL, err);
	if (rc < 0)
		goto out;
	r->stop = (enum xp_inv_lh_stop)rc;
	__atomic_store_n(&skel->bss->armed, 0u, __ATOMIC_SEQ_CST);
	r->window_ns = xpc_mono_ns() - r->armed_at_ns;
	/* no program may add while the maps are read: wait out those that
	 * saw `armed` set, or (no RCU wait here) detach first */
	if (!o->keep || !programs_done()) {
		xp_uprobe_links_close(mlinks, nmlinks);
		nmlinks = 0;
		while (nlinks)
			bpf_link__destroy(links[--nlinks]);
	}
	rc = read_maps(skel, r, err);
	if (!rc && o->explain)
		rc = read_explain(skel, r, err);
	/* the last interval: from the last tick to the end of the window */
	if (!rc && iv.prev && r->window_ns + r->armed_at_ns > iv.last_ns)
		rc = interval_tick(skel, o, &iv, r->armed_at_ns + r->window_ns, err);
	if (rc)
		goto out;
	xp_inv_lh_result_finish(r);
	if (o->keep && (*o->keep = calloc(1, sizeof(**o->keep)))) {
		struct xp_inv_lh_attached *a = *o->keep;

		memcpy(a->links, links, sizeof(links));
		memcpy(a->mlinks, mlinks, sizeof(mlinks));
		a->nlinks = nlinks;
		a->nmlinks = nmlinks;
		a->skel = skel;
		nlinks = nmlinks = 0;
		skel = NULL;
	}
out:
	intervals_free(&iv);
	xp_uprobe_links_close(mlinks, nmlinks);
	while (nlinks)
		bpf_link__destroy(links[--nlinks]);
	if (own_pidfd)
		close(pidfd);
	latency_hist_bpf__destroy(skel);
	if (rc)
		xp_inv_lh_result_free(r);
	return rc;
}
