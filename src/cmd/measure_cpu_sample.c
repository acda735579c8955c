/* SPDX-License-Identifier: Apache-2.0 */
/*
 * measure_cpu_sample.c - `xprobe measure --pid P --cpu-sample
 * --duration-ms D`: orchestration only (src/inventory/cpu_sample.h does the
 * work, src/report/render_cpu_sample.c renders).
 *
 * Order: check the bounds against the contract and the kernel's perf
 * limits -> identify the target -> its PID namespace (the perf map is
 * named by the PID the target sees itself as) -> sample for the window
 * (SIGINT/SIGTERM end it early: status "cancelled") -> verify the target
 * is still the same process -> symbolize once per distinct address and
 * check every native hint with the same resolver `validate` uses ->
 * verify again -> render.  Before all that, the mode's rules: the syntax
 * ones in cpu_sample_rules (src/cli/args.c reports them), then the flags
 * it refuses with a document (refused) and --pid and a positive
 * --duration-ms (xp_inventory_check).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "../inventory/cpu_sample.h"
#include "../resolve/resolve.h"
#include "inventory.h"
#include "measure.h"
#include "mode_rules.h"
#include "report_out.h"
#include "../process/namespaces.h"

#define PYTHON_HINT_MAX 512

/* --cpu-sample's rules (mode_rules.h); --input is a syntax error here */
static const unsigned long conflicts[] = { XP_OPT_SYSCALL_AGG, XP_OPT_INPUT, 0 };

const struct xp_mode_rules xp_cpu_sample_rules = {
	.flag = XP_OPT_CPU_SAMPLE,
	.conflicts = conflicts,
	.options = XP_OPT_MAX_GROUPS | XP_OPT_FREQUENCY | XP_OPT_MAX_SAMPLES | XP_OPT_STACK_DEPTH |
		   XP_OPT_MAX_THREADS,
};

static const struct xp_inventory_refusal refused[] = {
	{ XP_OPT_EVENTS_OUT, "--events-out" },
	{ XP_OPT_FORMAT, "--format" },
	{ XP_OPT_SAMPLES, "--samples" },
	{ XP_OPT_AGENT, "--agent" },
	{ XP_OPT_CUPTI_SOCKET, "--cupti-socket" },
	{ XP_OPT_FROM | XP_OPT_TO | XP_OPT_MATCH, "event-pair selectors (--from/--to/--match)" },
	{ 0, NULL },
};

struct hint_ctx {
	const struct xp_target *target;
};

/* The hint is ready only if `validate` would accept it: same parser, same
 * resolver. */
static int check_hint(void *ctx, const char *hint)
{
	struct hint_ctx *h = ctx;
	struct xp_selector sel;
	struct xp_resolved_probe probe;
	struct xp_error e = { 0 };
	int rc;

	memset(&sel, 0, sizeof(sel));
	memset(&probe, 0, sizeof(probe));
	rc = xp_selector_parse(hint, &sel, &e);
	if (!rc) {
		rc = xp_resolve_uprobe(h->target, &sel, &probe, &e);
		if (!rc)
			xp_resolved_probe_free(&probe);
	}
	xp_selector_free(&sel);
	xp_error_clear(&e);
	return rc;
}

/* The collector, as the window runs it. */
struct cpu_window {
	const struct xp_inv_cpu_sample_opts *o;
	struct xp_inv_cpu_sample_result *r;
};

static int cpu_collect(void *ctx, struct xp_error *err)
{
	struct cpu_window *w = ctx;

	return xp_inv_cpu_sample_collect(w->o, w->r, err);
}

int xp_measure_cpu_sample(struct xp_measure_req *req, struct xp_error *err)
{
	unsigned long g = req->given;
	struct xp_inv_cpu_sample_opts o = {
		.pid = req->pid,
		.frequency_hz = g & XP_OPT_FREQUENCY ? req->frequency_hz : XP_DEFAULT_FREQUENCY_HZ,
		.max_samples = g & XP_OPT_MAX_SAMPLES ? req->max_samples : XP_DEFAULT_MAX_SAMPLES,
		.max_groups = g & XP_OPT_MAX_GROUPS ? req->max_groups : XP_DEFAULT_INV_MAX_GROUPS,
		.max_threads = g & XP_OPT_MAX_THREADS ? req->max_threads : XP_DEFAULT_MAX_THREADS,
		.duration_ms = req->duration_ms,
		.stop = &xp_inventory_stop,
	};
	uint64_t depth = g & XP_OPT_STACK_DEPTH ? req->stack_depth : XP_DEFAULT_STACK_DEPTH;
	struct xp_inv_cpu_sample_result r;
	struct xp_inv_cpu_profile p;
	struct xp_inv_symbolizer sym;
	struct xp_warnings ws = { 0 };
	struct xp_target t;
	struct xp_target_ns ns;
	struct cpu_window win = { &o, &r };
	struct xp_inventory_progress prog;
	char what[96];
	struct hint_ctx hc;
	char python_hint[PYTHON_HINT_MAX];
	const char *python_status;
	bool have_r = false, have_p = false, have_sym = false;
	uint64_t max_rate;
	uint32_t max_stack;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(&p, 0, sizeof(p));
	memset(&sym, 0, sizeof(sym));
	rc = xp_inventory_check("--cpu-sample", refused, g, req->duration_ms, err);
	if (rc)
		return rc;
	rc = xp_inv_cpu_sample_limits(&max_rate, &max_stack);
	if (rc)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "cannot read the kernel's perf limits: %s", strerror(-rc));
	if ((rc = xp_inventory_bound(err, "frequency-hz", o.frequency_hz, 1, max_rate,
				     "kernel.perf_event_max_sample_rate is the maximum")) ||
	    (rc = xp_inventory_bound(err, "max-samples", o.max_samples, 1, XP_CPU_MAX_SAMPLES_LIMIT,
				     "observed samples")) ||
	    (rc = xp_inventory_bound(err, "max-groups", o.max_groups, 1, XP_CPU_MAX_GROUPS_LIMIT,
				     "retained stack groups")) ||
	    (rc = xp_inventory_bound(err, "stack-depth", depth, 1, max_stack,
				     "kernel.perf_event_max_stack is the maximum")) ||
	    (rc = xp_inventory_bound(err, "max-threads", o.max_threads, 1, XP_CPU_MAX_THREADS_LIMIT,
				     "threads sampled")))
		return rc;
	o.stack_depth = (uint32_t)depth;
	rc = xp_inventory_target(req->duration_ms, req->timeout_ms, req->pid, &t, &ns, err);
	if (rc)
		return rc;
	snprintf(what, sizeof(what), "sampling pid %u at %llu Hz", t.pid,
		 (unsigned long long)o.frequency_hz);
	if (xp_inventory_progress_init(&prog, &req->out, what, "samples", o.duration_ms)) {
		o.progress = xp_inventory_progress_cb;
		o.progress_ctx = &prog;
	}
	rc = xp_inventory_window(cpu_collect, &win, &prog.line, err);
	rc = xp_inventory_window_end(rc, &t, "cpu-sample", &have_r, err);
	if (rc)
		goto out;

	xp_inv_stack_table_sort(&r.stacks);
	rc = xp_inv_symbolizer_open(t.pid, ns.ns_pid, &sym, err);
	if (rc)
		goto out;
	have_sym = true;
	hc.target = &t;
	rc = xp_inv_cpu_profile_build(&r, &sym, check_hint, &hc, &p);
	if (rc) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
				  "out of memory building the profile");
		goto out;
	}
	have_p = true;
	rc = xp_target_verify(&t, err);
	if (rc) {
		xp_error_prefix(err, "during symbolization");
		goto out;
	}

	python_status = xp_inv_cpu_python_status(&sym, &p, python_hint, sizeof(python_hint));
	rc = xp_inv_cpu_sample_warnings(&r, &p, &sym, python_status, python_hint, &ws);
	if (rc) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	{
		struct xp_cpu_sample_view view = {
			.session_id = req->session_id,
			.status =
				r.stop_reason == XP_CPU_STOP_CANCELLED ? "cancelled" : "completed",
			.name = req->name,
			.pid = t.pid,
			.process_start_time = t.start_time,
			.result = &r,
			.profile = &p,
			.sym = &sym,
			.python_status = python_status,
			.python_hint = python_hint,
			.complete = xp_inv_cpu_sample_complete(&r),
			.warnings = &ws,
		};

		rc = xp_emit_reported(req, XP_HTML_CPU_SAMPLE, &xp_doc_cpu_sample, &view);
	}
out:
	if (have_p)
		xp_inv_cpu_profile_free(&p, r.stacks.n);
	if (have_sym)
		xp_inv_symbolizer_close(&sym);
	if (have_r)
		xp_inv_cpu_sample_result_free(&r);
	xp_warnings_free(&ws);
	xp_target_release(&t);
	return rc;
}
