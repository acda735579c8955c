/* SPDX-License-Identifier: Apache-2.0 */
/*
 * measure_syscall_agg.c - `xprobe measure --pid P --syscall-aggregate
 * --duration-ms D`: orchestration only (src/inventory/syscall_aggregate.h counts
 * in the kernel, src/report/render_syscall_agg.c renders).
 *
 * Order: check --max-groups / --max-inflight / the timeout -> identify the
 * target and its PID namespace (the BPF filter: the global tgid, plus the
 * target's own namespace when it has one, exactly as the live exact
 * collectors do) -> load, attach, arm -> verify the target right after
 * arming (a PID reused during setup is TARGET_REUSED, not a wrong
 * inventory) -> the window (SIGINT/SIGTERM end it early: "cancelled") ->
 * disarm, read, free -> verify again -> render.  Before all that, the
 * mode's rules: the syntax ones in syscall_agg_rules (src/cli/args.c
 * reports them), then the flags it refuses with a document (refused) and
 * --pid and a positive --duration-ms (xp_inventory_check).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "../live/live.h"
#include "../inventory/syscall_aggregate.h"
#include "../resolve/resolve.h"
#include "inventory.h"
#include "measure.h"
#include "mode_rules.h"
#include "report_out.h"
#include "../process/namespaces.h"

/* --syscall-aggregate's rules (mode_rules.h): its conflicts are the other
 * modes'; every flag it refuses is refused with a document */
const struct xp_mode_rules xp_syscall_agg_rules = {
	.flag = XP_OPT_SYSCALL_AGG,
	.options = XP_OPT_MAX_GROUPS | XP_OPT_MAX_INFLIGHT,
};

static const struct xp_inventory_refusal refused[] = {
	{ XP_OPT_INPUT, "--input" },
	{ XP_OPT_EVENTS_OUT, "--events-out" },
	{ XP_OPT_FORMAT, "--format" },
	{ XP_OPT_SAMPLES, "--samples" },
	{ XP_OPT_AGENT, "--agent" },
	{ XP_OPT_CUPTI_SOCKET, "--cupti-socket" },
	{ XP_OPT_FROM | XP_OPT_TO | XP_OPT_MATCH, "event-pair selectors (--from/--to/--match)" },
	{ 0, NULL },
};

/* The collector, as the window runs it. */
struct sa_window {
	const struct xp_inv_sa_opts *o;
	struct xp_inv_sa_result *r;
};

static int sa_collect(void *ctx, struct xp_error *err)
{
	struct sa_window *w = ctx;

	return xp_inv_sa_collect(w->o, w->r, err);
}

int xp_measure_syscall_aggregate(struct xp_measure_req *req, struct xp_error *err)
{
	unsigned long g = req->given;
	struct xp_inv_sa_opts o = {
		.pid = req->pid,
		.max_groups = g & XP_OPT_MAX_GROUPS ? req->max_groups : XP_DEFAULT_INV_MAX_GROUPS,
		.max_inflight =
			g & XP_OPT_MAX_INFLIGHT ? req->max_inflight : XP_DEFAULT_MAX_INFLIGHT,
		.duration_ms = req->duration_ms,
		.stop = &xp_inventory_stop,
		.on_armed = xp_inventory_verify_armed,
	};
	struct xp_inv_sa_result r;
	struct xp_warnings ws = { 0 };
	struct xp_target t;
	struct xp_target_ns ns;
	struct sa_window win = { &o, &r };
	struct xp_inventory_progress prog;
	char what[96];
	bool have_r = false;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = xp_inventory_check("--syscall-aggregate", refused, g, req->duration_ms, err);
	if (rc)
		return rc;
	if ((rc = xp_inventory_bound(err, "max-groups", o.max_groups, 1, XP_SA_MAX_GROUPS_LIMIT,
				     "distinct syscall numbers kept")) ||
	    (rc = xp_inventory_bound(err, "max-inflight", o.max_inflight, 1,
				     XP_SA_MAX_INFLIGHT_LIMIT, "threads inside a syscall at once")))
		return rc;
	rc = xp_inventory_target(req->duration_ms, req->timeout_ms, req->pid, &t, &ns, err);
	if (rc)
		return rc;
	rc = xp_live_filter_for(&o.filter, &t, &ns, err);
	if (rc)
		goto out;
	o.on_armed_ctx = &t;
	snprintf(what, sizeof(what), "syscall aggregate armed on pid %u", t.pid);
	if (xp_inventory_progress_init(&prog, &req->out, what, NULL, o.duration_ms)) {
		o.progress = xp_inventory_progress_cb;
		o.progress_ctx = &prog;
	}

	rc = xp_inventory_window(sa_collect, &win, &prog.line, err);
	rc = xp_inventory_window_end(rc, &t, "syscall-aggregate", &have_r, err);
	if (rc)
		goto out;
	rc = xp_inv_sa_warnings(&r, &ws);
	if (rc) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	{
		struct xp_syscall_agg_view view = {
			.session_id = req->session_id,
			.status = r.stop_reason == XP_SA_STOP_CANCELLED ? "cancelled" : "completed",
			.name = req->name,
			.pid = t.pid,
			.process_start_time = t.start_time,
			.pid_namespace_filter = o.filter.use_pidns,
			.result = &r,
			.complete = xp_inv_sa_complete(&r),
			.dropped = xp_inv_sa_dropped(&r),
			.warnings = &ws,
		};

		rc = xp_emit_reported(req, XP_HTML_SYSCALL_AGGREGATE, &xp_doc_syscall_agg, &view);
	}
out:
	if (have_r)
		xp_inv_sa_result_free(&r);
	xp_warnings_free(&ws);
	xp_target_release(&t);
	return rc;
}
