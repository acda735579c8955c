/* SPDX-License-Identifier: Apache-2.0 */
/*
 * syscall_aggregate.c - drives bpf/syscall_agg.bpf.c for `measure
 * --syscall-aggregate`: open the skeleton, write the filters, size the two
 * bounded maps from --max-groups / --max-inflight, load, attach both raw
 * tracepoints, arm, wait out the window, disarm, detach, read the maps
 * once, and free everything on every path.
 *
 * Order matters for exactness: both links are attached before `armed`
 * flips, so no syscall is half-counted at the start; at the end `armed`
 * flips back before the links are destroyed and the maps read, so no
 * program updates a value being read.  A syscall entered while armed and
 * not yet exited at disarm is "in flight at end" (its start is still in
 * the in-flight map).
 *
 * Cost to the target (docs/inventories.md, "Cost"): raw tracepoints
 * returning 0,
 * the tgid compare first, then two map lookups per entry (group, the
 * thread's in-flight slot, written in place) and two per exit; no insert
 * or delete after a thread's first call, no ring, no wakeup, no helper
 * call beyond the clock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../common/monotonic.h"
#include "../../bpf/syscall_agg.h"
#include "../live/libbpf_msg.h"
#include "window.h"
#include "syscall_aggregate.h"
#include "syscall_agg.skel.h"

#define XP_SA_POLL_MS 50

static int bpf_fail(struct xp_error *err, int e, const char *what)
{
	struct xp_live_libbpf_failure f = {
		.e = e,
		.what = what,
		.objects = "the syscall aggregate eBPF programs",
		.maps = "the syscall aggregate maps",
	};
	int rc = xp_live_libbpf_fail(err, &f);

	return rc ? rc : xp_live_libbpf_fail_internal(err, &f);
}

/* Read both maps and the counters into @r (links already gone). */
static int read_maps(struct syscall_agg_bpf *skel, struct xp_inv_sa_result *r, struct xp_error *err)
{
	int gfd = bpf_map__fd(skel->maps.xp_sa_groups);
	int ifd = bpf_map__fd(skel->maps.xp_sa_inflight);
	int cfd = bpf_map__fd(skel->maps.xp_sa_counters);
	struct xp_sa_group *vals = NULL;
	struct xp_sa_counters *cvals = NULL;
	struct xp_sa_start start;
	__u32 key, next, *prev = NULL, zero = 0;
	int ncpus = r->ncpus, i, rc = 0;

	vals = calloc((size_t)ncpus, sizeof(*vals));
	cvals = calloc((size_t)ncpus, sizeof(*cvals));
	if (!vals || !cvals) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	while (bpf_map_get_next_key(gfd, prev, &next) == 0) {
		struct xp_inv_sa_summary_group *g;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(gfd, &key, vals))
			continue; /* cannot vanish: nothing deletes groups */
		g = xp_inv_sa_result_group(r, (int32_t)key);
		if (!g) {
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
			goto out;
		}
		xp_inv_sa_fold_percpu(g, vals, ncpus);
	}
	prev = NULL;
	while (bpf_map_get_next_key(ifd, prev, &next) == 0) {
		struct xp_inv_sa_summary_group *g;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(ifd, &key, &start))
			continue;
		r->inflight_occupied++;
		/* an interrupted call that has not run again yet is in flight too */
		if (start.restarting) {
			g = xp_inv_sa_result_group(r, (int32_t)start.restart_nr);
			if (!g) {
				rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
				goto out;
			}
			g->inflight_at_end++;
		}
		if (!start.busy)
			continue;
		g = xp_inv_sa_result_group(r, (int32_t)start.nr);
		if (!g) {
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
			goto out;
		}
		g->inflight_at_end++;
	}
	if (bpf_map_lookup_elem(cfd, &zero, cvals) == 0) {
		for (i = 0; i < ncpus; i++) {
			r->group_drop_entries += cvals[i].group_drop_entries;
			r->group_drop_exits += cvals[i].group_drop_exits;
			r->inflight_drops += cvals[i].inflight_drops;
			r->regs_read_errors += cvals[i].regs_read_errors;
		}
	} else {
		rc = bpf_fail(err, errno, "read");
	}
out:
	free(vals);
	free(cvals);
	return rc;
}

int xp_inv_sa_load_check(uint64_t max_groups, uint64_t max_inflight, char *detail, size_t size)
{
	struct syscall_agg_bpf *skel;
	int rc;

	xp_live_libbpf_capture();
	skel = syscall_agg_bpf__open();
	if (!skel) {
		rc = errno ? -errno : -EINVAL;
		goto fail;
	}
	if (bpf_map__set_max_entries(skel->maps.xp_sa_groups, (__u32)max_groups) ||
	    bpf_map__set_max_entries(skel->maps.xp_sa_inflight, (__u32)max_inflight)) {
		rc = errno ? -errno : -EINVAL;
		syscall_agg_bpf__destroy(skel);
		goto fail;
	}
	rc = syscall_agg_bpf__load(skel);
	syscall_agg_bpf__destroy(skel);
	if (rc)
		goto fail;
	snprintf(detail, size,
		 "loaded the syscall aggregate object (2 programs, %llu-group and %llu-thread maps) and freed it",
		 (unsigned long long)max_groups, (unsigned long long)max_inflight);
	return 0;
fail:
	xp_live_libbpf_load_failed(detail, size, "syscall aggregate", rc);
	return rc < 0 ? rc : -rc;
}

int xp_inv_sa_collect(const struct xp_inv_sa_opts *o, struct xp_inv_sa_result *r,
		      struct xp_error *err)
{
	struct syscall_agg_bpf *skel = NULL;
	struct bpf_link *l_enter = NULL, *l_exit = NULL;
	uint64_t t0 = xpc_mono_ns(), deadline;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!o->max_groups || o->max_groups > XP_SA_MAX_GROUPS_LIMIT || !o->max_inflight ||
	    o->max_inflight > XP_SA_MAX_INFLIGHT_LIMIT || !o->duration_ms)
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "syscall aggregate bounds out of range");
	r->group_capacity = o->max_groups;
	r->inflight_capacity = o->max_inflight;
	r->ncpus = libbpf_num_possible_cpus();
	if (r->ncpus <= 0)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "cannot count the possible CPUs: %s", strerror(-r->ncpus));

	xp_live_libbpf_capture();
	skel = syscall_agg_bpf__open();
	if (!skel) {
		rc = bpf_fail(err, errno, "open");
		goto out;
	}
	XP_TARGET_FILTER_APPLY(skel->rodata, &o->filter);
	if (bpf_map__set_max_entries(skel->maps.xp_sa_groups, (__u32)o->max_groups) ||
	    bpf_map__set_max_entries(skel->maps.xp_sa_inflight, (__u32)o->max_inflight)) {
		rc = bpf_fail(err, errno, "size");
		goto out;
	}
	rc = syscall_agg_bpf__load(skel);
	if (rc) {
		rc = bpf_fail(err, rc, "load");
		goto out;
	}
	l_enter = bpf_program__attach_raw_tracepoint(skel->progs.xp_sa_enter, "sys_enter");
	if (!l_enter) {
		rc = bpf_fail(err, errno, "attach");
		goto out;
	}
	l_exit = bpf_program__attach_raw_tracepoint(skel->progs.xp_sa_exit, "sys_exit");
	if (!l_exit) {
		rc = bpf_fail(err, errno, "attach");
		goto out;
	}
	rc = xp_inv_window_open(&skel->bss->armed, t0, &r->armed_at_ns, &r->setup_ns, o->on_armed,
				o->on_armed_ctx, err);
	if (rc)
		goto out;
	deadline = r->armed_at_ns + o->duration_ms * 1000000ull;
	r->stop_reason = XP_SA_STOP_DURATION;
	for (;;) {
		uint64_t now = xpc_mono_ns(), wake;

		if (o->stop && *o->stop) {
			r->stop_reason = XP_SA_STOP_CANCELLED;
			break;
		}
		if (now >= deadline)
			break;
		if (o->progress)
			o->progress(o->progress_ctx, now - r->armed_at_ns, 0);
		wake = now + XP_SA_POLL_MS * 1000000ull;
		if (wake > deadline)
			wake = deadline;
		xpc_sleep_until_ns(wake); /* EINTR: loop */
	}
	__atomic_store_n(&skel->bss->armed, 0u, __ATOMIC_SEQ_CST);
	r->window_ns = xpc_mono_ns() - r->armed_at_ns;
	bpf_link__destroy(l_enter);
	bpf_link__destroy(l_exit);
	l_enter = l_exit = NULL;
	rc = read_maps(skel, r, err);
	if (rc)
		goto out;
	xp_inv_sa_result_finish(r);
out:
	bpf_link__destroy(l_enter); /* NULL-safe */
	bpf_link__destroy(l_exit);
	syscall_agg_bpf__destroy(skel);
	if (rc)
		xp_inv_sa_result_free(r);
	return rc;
}
