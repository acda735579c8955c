/* SPDX-License-Identifier: Apache-2.0 */
/*
 * measure_aggregate.c - `xprobe measure --pid P --from cuda:kernel_start
 * --to cuda:kernel_end --match exact --aggregate --duration-ms D`:
 * orchestration only.  The Agent groups the activities in a bounded table
 * inside the target (src/agent/agent_aggregate.h); report/
 * render_aggregate.c prints the contract's AggregateInventoryResult.
 *
 * Order (the contract's; docs/contract.md, "measure's order of checks"):
 *   --pid, then --duration-ms required; positive bounds, --max-groups
 *   1..XPROBE_AGENT_CAPACITY_MAX (default 4096); --match exact and no
 *   --samples (INVALID_CORRELATION_POLICY); the window within
 *   --timeout-ms -> the target -> validate (its first issue is the error)
 *   -> the selection: one kernel, memcpy or memset start -> end pair with
 *   the same filter, a kernel regex the Agent can apply (exact, prefix,
 *   suffix, contains) -> online injection when validate said so -> ARM,
 *   the window, STOP with every group -> the target verified again -> the
 *   answer:
 *     a full table (LIMIT_REACHED)   EVENT_RATE_TOO_HIGH
 *     activities dropped             EVENTS_DROPPED
 *     records the Agent did not read TRACE_EXPORT_FAILED
 *     otherwise                      the document, "completed" (or
 *                                    "cancelled" when SIGINT/SIGTERM ended
 *                                    the window early: caught for the
 *                                    window as the inventories do, so the
 *                                    STOP still reads the groups)
 * --input, --samples, --events-out and --format with --aggregate are
 * syntax errors (aggregate_rules below, reported by src/cli/args.c), as
 * in the reference.
 */
#include <errno.h>
#include <string.h>

#include "../agent/agent_aggregate.h"
#include "../agent/agent_client.h"
#include "../live/live_source.h"
#include "inventory.h"
#include "measure.h"
#include "mode_rules.h"
#include "report_out.h"

/* --aggregate's rules (mode_rules.h) */
static const unsigned long conflicts[] = {
	XP_OPT_INPUT, XP_OPT_SAMPLES, XP_OPT_EVENTS_OUT, XP_OPT_FORMAT, XP_OPT_CPU_SAMPLE,
	XP_OPT_SYSCALL_AGG, 0,
};

const struct xp_mode_rules xp_aggregate_rules = {
	.flag = XP_OPT_AGGREGATE,
	.conflicts = conflicts,
	.options = XP_OPT_MAX_GROUPS,
};

static void selector_details(const struct xp_measure_req *req, struct xp_error *err)
{
	xp_error_detail_str(err, "start_selector", req->from_text);
	xp_error_detail_str(err, "end_selector", req->to_text);
}

/* Bounds and the policy, before the target is touched. */
static int request_check(const struct xp_measure_req *req, struct xp_error *err)
{
	bool spec = req->given & XP_OPT_SPEC;

	if (!spec && !(req->given & XP_OPT_PID)) {
		xp_error_hint(err,
			      "pass --pid PID: an aggregate inventory is taken from a live target");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "--aggregate requires --pid");
	}
	if (!req->duration_ms && (spec || !(req->given & XP_OPT_DURATION))) {
		xp_error_hint(
			err,
			"pass a positive --duration-ms: the window the Agent groups activities in");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "--aggregate requires --duration-ms");
	}
	if (!req->duration_ms || !req->timeout_ms || !req->max_groups) {
		xp_error_hint(err, "set positive duration, timeout, and max-groups bounds");
		return xp_error_set(
			err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
			"live measurement requires positive samples or duration and max-events limits");
	}
	if (req->max_groups > XPROBE_AGENT_CAPACITY_MAX) {
		xp_error_detail_u64(err, "max_groups", req->max_groups);
		xp_error_detail_u64(err, "agent_capacity_max", XPROBE_AGENT_CAPACITY_MAX);
		xp_error_hint(err, "set --max-groups between 1 and %u", XPROBE_AGENT_CAPACITY_MAX);
		return xp_error_set(
			err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
			"--max-groups %llu is outside the Agent's table bound of 1 to %u",
			(unsigned long long)req->max_groups, XPROBE_AGENT_CAPACITY_MAX);
	}
	if (req->policy != XP_POLICY_EXACT || req->samples) {
		selector_details(req, err);
		xp_error_detail_str(err, "match_policy", xp_policy_kebab(req->policy));
		xp_error_hint(err, "use --match exact and --duration-ms without --samples");
		return xp_error_set(
			err, XPROBE_E_INVALID_CORRELATION_POLICY, true,
			"aggregate measurement requires duration, exact activity endpoints, and no samples limit");
	}
	if (req->duration_ms > req->timeout_ms) {
		xp_error_detail_u64(err, "duration_ms", req->duration_ms);
		xp_error_detail_u64(err, "timeout_ms", req->timeout_ms);
		xp_error_hint(err, "raise --timeout-ms or shorten --duration-ms");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "aggregate duration must not exceed timeout");
	}
	return 0;
}

static bool same_filter(const struct xp_selector *a, const struct xp_selector *b)
{
	switch (a->kind) {
	case XP_SEL_KERNEL:
		return (!a->regex && !b->regex) ||
		       (a->regex && b->regex && strcmp(a->regex, b->regex) == 0);
	case XP_SEL_MEMCPY:
		return a->has_memcpy_kind == b->has_memcpy_kind &&
		       (!a->has_memcpy_kind || a->memcpy_kind == b->memcpy_kind);
	default:
		return true;
	}
}

/*
 * After validate, before anything touches the target: one activity start
 * -> end pair with one filter, and the ARM request into @ctx (a kernel
 * regex that does not reduce to a filter the Agent applies is refused
 * there).
 */
static int selection_check(void *ctx, struct xp_measure_req *req, struct xp_error *err)
{
	const struct xp_selector *a = &req->from, *b = &req->to;
	const struct xp_selector *sels[2] = { a, b };
	int rc;

	if (!xp_selector_is_activity(a) || !xp_selector_is_activity(b)) {
		selector_details(req, err);
		xp_error_hint(
			err,
			"aggregate inventories group kernels, copies or sets: use cuda:kernel_start -> cuda:kernel_end, cuda:memcpy_start -> cuda:memcpy_end or cuda:memset_start -> cuda:memset_end");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "aggregate measurement supports CUPTI activity endpoints only");
	}
	if (a->kind != b->kind || a->is_end || !b->is_end || !same_filter(a, b)) {
		selector_details(req, err);
		xp_error_hint(
			err,
			"give the start and end selectors of one activity kind the same filter, start first");
		return xp_error_set(
			err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
			"aggregate measurement requires matching kernel, memcpy, or memset start/end selectors");
	}
	rc = xp_agent_arm_build(sels, 2, XPROBE_AGENT_MODE_AGGREGATE, req->max_groups, ctx, err);
	if (rc == -XPROBE_E_INVALID_EVENT_SELECTOR)
		selector_details(req, err);
	return rc;
}

/* The capture ended without a result: the contract's error. */
static int verdict(const struct xp_measure_req *req, const struct xp_capture_agg_dec *d,
		   struct xp_error *err)
{
	const struct xp_capture_agent_stats *st = &d->rx.st;

	if (st->state == XPROBE_AGENT_LIMIT_REACHED ||
	    st->stop_reason == XPROBE_AGENT_STOP_RECORD_LIMIT) {
		selector_details(req, err);
		xp_error_detail_u64(err, "group_capacity", st->capacity);
		xp_error_detail_u64(err, "groups", d->rx.n);
		xp_error_detail_u64(err, "observed_activities", st->observed);
		xp_error_detail_u64(err, "dropped_activities", st->dropped);
		xp_error_hint(err, "narrow the selector or explicitly increase max-groups");
		return xp_error_set(
			err, XPROBE_E_EVENT_RATE_TOO_HIGH, true,
			"aggregate group table reached its configured capacity of %llu groups",
			(unsigned long long)st->capacity);
	}
	if (st->dropped) {
		selector_details(req, err);
		xp_error_detail_u64(err, "dropped_activities", st->dropped);
		xp_error_detail_u64(err, "observed_activities", st->observed);
		xp_error_hint(err,
			      "reduce the event rate or explicitly increase the capture capacity");
		return xp_error_set(err, XPROBE_E_EVENTS_DROPPED, true,
				    "aggregate capture dropped %llu activities",
				    (unsigned long long)st->dropped);
	}
	if (st->unknown) {
		xp_error_detail_u64(err, "unknown_records", st->unknown);
		xp_error_hint(err, "rebuild xprobe and libxprobe from the same release");
		return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
				    "the Agent met %llu CUDA activity records it could not read",
				    (unsigned long long)st->unknown);
	}
	return 0;
}

/* The collector, as the window runs it: a target gone during it is
 * TARGET_EXITED, decided before the handlers come back. */
struct agg_window {
	struct xp_measure_req *req;
	const struct xp_agent_agg_opts *o;
	struct xp_agent_agg_result *res;
};

static int agg_collect(void *ctx, struct xp_error *err)
{
	struct agg_window *w = ctx;
	int rc = xp_agent_aggregate_collect(w->o, w->res, err);

	return xp_measure_target_gone(w->req, rc, err);
}

int xp_measure_aggregate(struct xp_measure_req *req, struct xp_error *err)
{
	struct xp_warnings ws = { 0 };
	struct xp_agent_agg_result res;
	struct xprobe_agent_req arm;
	struct xp_agent_agg_opts o;
	bool injected = false, have_res = false;
	int rc;

	memset(&res, 0, sizeof(res));
	rc = request_check(req, err);
	if (rc)
		return rc;
	if (!req->has_target) {
		rc = xp_target_identify(req->pid, &req->target, err);
		if (rc)
			return rc;
		req->has_target = true;
	}
	rc = xp_measure_agent_ready(req, selection_check, &arm, &ws, &injected, err);
	if (rc)
		goto out;
	memset(&o, 0, sizeof(o));
	o.target = &req->target;
	o.socket_path = req->cupti_socket;
	o.arm = &arm;
	o.duration_ms = req->duration_ms;
	o.stop = &xp_inventory_stop;
	{
		struct agg_window win = { req, &o, &res };
		struct xp_inventory_progress prog;
		char what[96];

		snprintf(what, sizeof(what), "aggregate armed in the Agent of pid %u",
			 req->target.pid);
		if (xp_inventory_progress_init(&prog, &req->out, what, NULL, req->duration_ms)) {
			o.progress = xp_inventory_progress_cb;
			o.progress_ctx = &prog;
		}
		rc = xp_inventory_window(agg_collect, &win, &prog.line, err);
	}
	if (rc)
		goto fail;
	have_res = true;
	rc = xp_target_verify(&req->target, err);
	if (rc) {
		xp_error_prefix(err, "during the aggregate window");
		goto fail;
	}
	rc = verdict(req, &res.dec, err);
	if (rc)
		goto fail;
	xp_agent_aggregate_sort(&res);
	{
		struct xp_aggregate_view view = {
			.session_id = req->session_id,
			.status = res.stopped ? "cancelled" : "completed",
			.name = req->name,
			.start_selector = req->from_text,
			.end_selector = req->to_text,
			.pid = req->target.pid,
			.result = &res,
			.warnings = &ws,
		};

		rc = xp_emit_reported(req, XP_HTML_AGGREGATE, &xp_doc_aggregate, &view);
	}
	goto out;
fail:
	if (injected)
		xp_error_detail_bool(err, "agent_injected", true);
out:
	if (have_res)
		xp_agent_aggregate_free(&res);
	xp_warnings_free(&ws);
	return rc;
}
