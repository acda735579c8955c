/* SPDX-License-Identifier: Apache-2.0 */
/*
 * histogram.c - `measure --histogram` and `validate --histogram`:
 * orchestration only (histogram.h).
 *
 * measure: bounds (--max-inflight, --max-groups, --max-depth, the window)
 * -> parse both selectors -> identify the target -> validate the pair
 * (read-only; its first issue is the error, with recommended_policy and
 * compatible_policies, exactly as an exact measurement answers) ->
 * resolve both endpoints (the live plan) and the target's PID namespace
 * (the BPF filter) -> load, attach, arm, verify the target -> the window
 * (--duration-ms, SIGINT/SIGTERM/SIGHUP, the target's exit, --timeout-ms
 * when given) -> read the maps -> render.  Every ending of the window is a
 * result (exit 0) with its stop reason: a target that exits mid-window is
 * what a batch job does, and what was counted up to its exit is kept.
 *
 * Without --duration-ms the window lasts until Ctrl-C or the target's
 * exit; --timeout-ms is then the only other bound, and it applies only
 * when given (the 30 s default of the exact modes would cut a capture
 * that is meant to run for minutes; docs/histograms.md, "The window").
 *
 * cuda: endpoints (measure_cuda): the Agent pairs them inside the target
 * (src/agent/agent_histogram.h; include/xprobe/agent.h, MODE_HISTOGRAM):
 * bounds -> the selectors -> the target -> validate and the Agent's
 * activation (measure_live.c's xp_measure_agent_ready: online injection
 * when validate says so) -> ARM with --max-groups / --max-inflight / --by
 * -> the window, read by SNAPSHOT every interval -> STOP -> the same
 * result, renderers, intervals and metrics file as the kernel's path.
 *
 * validate: the same pair check, the endpoints resolved, and the real
 * object loaded (nothing attached): valid when it would run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/atomic_file.h"
#include "../../common/buf.h"
#include "../../common/cancel.h"
#include "../../common/json.h"
#include "../../common/monotonic.h"
#include "../agent/agent_client.h"
#include "../agent/agent_histogram.h"
#include "../checks/validate_checks.h"
#include "../inventory/latency_histogram.h"
#include "../live/link_release.h"
#include "../live/live.h"
#include "../live/probe_cost.h"
#include "../correlate/correlate.h"
#include "../process/children.h"
#include "../process/namespaces.h"
#include "../process/procfs.h"
#include "../report/render_histogram.h"
#include "../selector/selector.h"
#include "histogram.h"
#include "inventory.h"
#include "measure.h"
#include "report_out.h"

/* The pair of either command: its flags as given, then parsed. */
struct hist_req {
	const char *from_text, *to_text, *match_text, *by;
	bool unsafe_offset;
	struct xp_selector from, to;
	enum xp_policy policy;
	int group_by;
	struct xp_validation v;
	struct xp_live_plan plan;
};

static void req_free(struct hist_req *q)
{
	xp_selector_free(&q->from);
	xp_selector_free(&q->to);
	xp_validation_free(&q->v);
	xp_live_plan_free(&q->plan);
}

static int parse_by(const char *by)
{
	if (!by)
		return XP_LH_BY_NONE;
	return strcmp(by, "thread") == 0 ? XP_LH_BY_THREAD : XP_LH_BY_ARG0;
}

/* Selectors and policy (histogram_rules.c checked their shape). */
static int parse_pair(struct hist_req *q, struct xp_error *err)
{
	int rc;

	q->policy = (enum xp_policy)xp_policy_parse(q->match_text);
	q->group_by = parse_by(q->by);
	rc = xp_selector_parse(q->from_text, &q->from, err);
	if (!rc)
		rc = xp_selector_parse(q->to_text, &q->to, err);
	if (rc)
		xp_error_hint(err, "run xprobe validate with the exact selector text");
	return rc;
}

/* validate's pair check (read-only): policy, capabilities, resolution. */
static int check_pair(struct hist_req *q, const struct xp_target *t, struct xp_error *err)
{
	struct xp_validate_opts vo = { .correlator_mask = xp_policy_compatible,
				       .unsafe_offset = q->unsafe_offset,
				       .probe_cost = xp_live_probe_cost };

	return xp_validate_pair(t, &q->from, &q->to, q->policy, &vo, &q->v, err);
}

/* The endpoints, from what check_pair resolved (resolved once). */
static int plan_pair(struct hist_req *q, struct xp_error *err)
{
	struct xp_live_resolved from, to;

	xp_measure_resolved(&q->v.start, &from);
	xp_measure_resolved(&q->v.end, &to);
	return xp_live_plan_build(&from, &to, &q->plan, err);
}

/* The first issue of the pair check as measure's error (measure_live.c's
 * rule: callers stop on valid: false). */
static int first_issue(struct hist_req *q, struct xp_error *err)
{
	enum xp_policy list[XP_POLICY__COUNT];
	const char *names[XP_POLICY__COUNT];
	size_t n, i;

	n = xp_policy_list(q->v.compatible, list);
	for (i = 0; i < n; i++)
		names[i] = xp_policy_snake(list[i]);
	xp_error_detail_str(err, "start_selector", q->from_text);
	xp_error_detail_str(err, "end_selector", q->to_text);
	xp_error_detail_str(err, "match_policy", xp_policy_kebab(q->policy));
	xp_error_detail_str(err, "recommended_policy", xp_policy_kebab(q->v.recommended));
	xp_error_detail_strv(err, "compatible_policies", names, n);
	if (q->v.issues[0].hint[0])
		xp_error_hint(err, "%s", q->v.issues[0].hint);
	else
		xp_error_hint(err, "rerun with --match %s", xp_policy_kebab(q->v.recommended));
	return xp_error_set(err, q->v.issues[0].code, true, "%s", q->v.issues[0].message);
}

static int bounds(const struct xp_measure_req *req, uint64_t *inflight, uint64_t *groups,
		  uint64_t *depth, struct xp_error *err)
{
	unsigned long g = req->given;
	bool no_duration = (g & XP_OPT_DURATION) && !req->duration_ms;
	int rc;

	*inflight = g & XP_OPT_MAX_INFLIGHT ? req->max_inflight : XP_LH_DEFAULT_MAX_INFLIGHT;
	*groups = g & XP_OPT_MAX_GROUPS ? req->max_groups : XP_LH_DEFAULT_MAX_GROUPS;
	*depth = g & XP_OPT_MAX_DEPTH ? req->max_depth : XP_LH_DEFAULT_MAX_DEPTH;
	if ((g & XP_OPT_EXPLAIN_TOP) &&
	    (rc = xp_inventory_bound(err, "explain-top", req->explain_top, 0, XP_EX_TOP_MAX,
				     "slowest pairs kept in the kernel with their stacks")))
		return rc;
	if ((rc = xp_inventory_bound(err, "max-inflight", *inflight, 1, XP_LH_MAX_INFLIGHT_LIMIT,
				     "threads with an open start at once")) ||
	    (rc = xp_inventory_bound(err, "max-groups", *groups, 1, XP_LH_MAX_GROUPS_LIMIT,
				     "distinct --by keys kept, 7.8 KiB each")) ||
	    (rc = xp_inventory_bound(err, "max-depth", *depth, 1, XP_LH_MAX_DEPTH,
				     "open starts kept per thread")))
		return rc;
	if (no_duration || ((g & XP_OPT_TIMEOUT) && !req->timeout_ms)) {
		xp_error_detail_str(err, "flag", no_duration ? "duration-ms" : "timeout-ms");
		xp_error_hint(
			err,
			"pass a positive --duration-ms, or none to run until Ctrl-C or the target exits");
		return xp_error_set(
			err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
			"--histogram needs a positive --duration-ms and --timeout-ms when they are given");
	}
	if ((g & XP_OPT_DURATION) && (g & XP_OPT_TIMEOUT))
		return xp_inventory_window_check(req->duration_ms, req->timeout_ms, err);
	return 0;
}

/* The window's progress line (output.h): what is armed and the time. */
struct hist_progress {
	struct xp_out_progress line;
	const struct hist_req *q;
	uint32_t pid;
	uint64_t duration_ns, timeout_ns; /* 0: none */
};

static void on_progress(void *ctx, uint64_t elapsed_ns)
{
	struct hist_progress *x = ctx;
	char text[512], when[96];

	if (x->duration_ns)
		snprintf(when, sizeof(when), "%.1fs left of %.1fs",
			 (double)(x->duration_ns > elapsed_ns ? x->duration_ns - elapsed_ns : 0) /
				 1e9,
			 (double)x->duration_ns / 1e9);
	else if (x->timeout_ns)
		snprintf(when, sizeof(when), "%.1fs, timeout in %.1fs", (double)elapsed_ns / 1e9,
			 (double)(x->timeout_ns > elapsed_ns ? x->timeout_ns - elapsed_ns : 0) /
				 1e9);
	else
		snprintf(when, sizeof(when), "%.1fs, until Ctrl-C or the target exits",
			 (double)elapsed_ns / 1e9);
	snprintf(text, sizeof(text), "histogram armed on pid %u | %s | %s -> %s", x->pid, when,
		 x->q->from_text, x->q->to_text);
	xp_out_progress_draw(&x->line, text);
}

/*
 * A window without a single start or end, from a target whose children
 * map the probed binary (every child, for syscall endpoints): the work
 * may happen there, as an nginx master's workers do it.  The exact mode
 * says so in its error's hint; the histogram, a result, in a warning
 * NO_EVENTS_IN_TARGET with details.child_pids.  Returns -ENOMEM or 0.
 */
static int children_warning(const struct xp_target *t, const struct hist_req *q,
			    const struct xp_inv_lh_result *r, struct xp_warnings *ws)
{
	const char *file = q->plan.ep[0].kind == XP_LIVE_UPROBE || q->plan.ep[0].kind == XP_LIVE_USDT ?
				   q->plan.ep[0].binary_path :
				   NULL;
	char msg[400], json[XP_CHILDREN_MAX * 12 + 64], list[XP_CHILDREN_MAX * 12];
	struct xp_children ch;
	size_t i, off = 0, loff = 0;

	if (r->starts || r->ends || xp_proc_children(t->pid, file, &ch) || !ch.n)
		return 0;
	off += (size_t)snprintf(json, sizeof(json), "{\"child_pids\":[");
	for (i = 0; i < ch.n; i++) {
		off += (size_t)snprintf(json + off, sizeof(json) - off, "%s%u", i ? "," : "",
					ch.pid[i]);
		loff += (size_t)snprintf(list + loff, sizeof(list) - loff, "%s%u", i ? ", " : "",
					 ch.pid[i]);
	}
	snprintf(json + off, sizeof(json) - off, "]}");
	snprintf(msg, sizeof(msg),
		 "PID %u recorded no start and no end, but its child process%s %s %s: the work may happen there; measure one with --pid %u",
		 t->pid, ch.n > 1 ? "es" : "", list,
		 file ? (ch.n > 1 ? "map the probed binary" : "maps the probed binary") :
			(ch.n > 1 ? "run" : "runs"),
		 ch.pid[0]);
	return xp_warnings_add(ws, "NO_EVENTS_IN_TARGET", msg, json) ? -ENOMEM : 0;
}

/*
 * --interval-ms and --metrics-out: what the window hands out while it
 * runs.  Each interval is printed at once (a line of JSON Lines, or a block
 * under a time header), and the metrics file rewritten from the cumulative
 * read (atomically, mode 0644: node_exporter's textfile collector reads it
 * as another user).  A metrics write that fails mid-capture is said once on
 * stderr and tried again at the next interval; the final one decides
 * (TRACE_EXPORT_FAILED, the result kept in details.result).
 */
struct continuous {
	struct xp_measure_req *req;
	struct xp_histogram_view view;   /* identity; result set at the end */
	struct xp_prom_view prom;
	struct hist_progress *prog;
	uint64_t armed_at_ns;
	bool explain, nested;
	int group_by;
	bool warned;
};

static int write_metrics(struct continuous *k, const struct xp_inv_lh_result *r,
			 uint64_t window_ns, struct xp_error *err)
{
	struct xpc_buf b = XPC_BUF_INIT;
	int rc;

	k->prom.result = r;
	k->prom.window_ns = window_ns;
	xp_render_prometheus(&b, &k->prom);
	rc = b.failed ? -ENOMEM : xpc_atomic_write_mode(k->req->metrics_out, b.data, b.len, 0644);
	xpc_buf_free(&b);
	if (!rc)
		return 0;
	xp_error_detail_str(err, "path", k->req->metrics_out);
	xp_error_hint(err, "check that the directory exists and is writable (--metrics-out)");
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "failed to write %s: %s",
			    k->req->metrics_out, strerror(-rc));
}

static int on_interval(void *ctx, const struct xp_inv_lh_interval *iv, struct xp_error *err)
{
	struct continuous *k = ctx;
	struct xp_histogram_interval_view v = {
		.capture = &k->view,
		.iv = iv,
		.armed_at_ns = k->armed_at_ns ? k->armed_at_ns : iv->start_ns,
		.explain = k->explain,
		.group_by = k->group_by,
		.nested = k->nested,
	};
	struct xp_error merr = { 0 };

	(void)err;
	if (!k->armed_at_ns)
		k->armed_at_ns = iv->start_ns; /* the first interval starts at arming */
	v.armed_at_ns = k->armed_at_ns;
	if (k->req->interval_ms) {
		xp_out_progress_end(&k->prog->line);
		if (xp_out_emit(&k->req->out, &xp_doc_histogram_interval, &v))
			return xp_error_set(err, XPROBE_E_INTERNAL, false,
					    "stdout could not be written");
	}
	if (k->req->metrics_out &&
	    write_metrics(k, iv->cumulative, iv->end_ns - k->armed_at_ns, &merr) && !k->warned) {
		k->warned = true;
		xp_out_warning("%s (tried again every interval)", merr.message);
	}
	xp_error_clear(&merr);
	return 0;
}

/* The result could not be saved as metrics: keep it with the error. */
static void unsaved_histogram(struct xp_measure_req *req, const struct xp_histogram_view *view,
			      struct xp_error *err)
{
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;

	xp_error_hint(err, "the measurement itself succeeded: its result is %s",
		      req->out.json ? "in details.result" : "printed above");
	if (!req->out.json) {
		xp_doc_histogram.human(stdout, view);
		fflush(stdout);
		return;
	}
	xpc_json_init_buf(&w, &b, 0);
	xp_doc_histogram.json(&w, view);
	if (xpc_json_finish(&w) == 0 && b.data)
		xp_error_detail_raw(err, "result", b.data);
	xpc_buf_free(&b);
}

/* The target's comm and executable, for the metrics' labels. */
static void target_names(uint32_t pid, char *comm, size_t size, char **exe)
{
	struct xp_proc_stat st;

	comm[0] = '\0';
	if (!xp_proc_stat_read(pid, 0, &st))
		snprintf(comm, size, "%s", st.comm);
	if (xp_proc_exe(pid, exe))
		*exe = NULL;
}

/*
 * The identity the intervals and the metrics file carry (@start, @end:
 * the resolved host endpoints, NULL for the Agent's); the interval the
 * window reads at, 0 when neither --interval-ms nor --metrics-out asks
 * (without --interval-ms, the metrics file every 10 s and at the end).
 */
static uint64_t continuous_init(struct continuous *k, struct xp_measure_req *req,
				struct hist_progress *prog, const struct xp_target *t,
				const struct xp_live_endpoint *start,
				const struct xp_live_endpoint *end, bool pidns, char *comm,
				size_t size, char **exe)
{
	target_names(t->pid, comm, size, exe);
	k->req = req;
	k->prog = prog;
	k->view = (struct xp_histogram_view){
		.session_id = req->session_id,
		.name = req->name,
		.pid = t->pid,
		.process_start_time = t->start_time,
		.start_selector = req->from_text,
		.end_selector = req->to_text,
		.start = start,
		.end = end,
		.pid_namespace_filter = pidns,
		.color = xp_out_color(&req->out, STDOUT_FILENO),
	};
	k->prom = (struct xp_prom_view){
		.name = req->name,
		.pid = t->pid,
		.process_start_time = t->start_time,
		.comm = comm,
		.exe = *exe ? *exe : "",
		.start_selector = req->from_text,
		.end_selector = req->to_text,
		.start = start,
	};
	if (!req->interval_ms && !req->metrics_out)
		return 0;
	return (req->interval_ms ? req->interval_ms : 10000) * 1000000ull;
}

/* The collector, as the window runs it. */
struct lh_window {
	const struct xp_inv_lh_opts *o;
	struct xp_inv_lh_result *r;
};

/* The result is out: detach now; a failure is only a warning. */
static void lh_detach(struct xp_inv_lh_attached *a)
{
	int e;

	/* the kernel's detach waits go to a child; our closes return at once */
	xp_link_release_to_child();
	e = xp_inv_lh_detach(a);

	if (e)
		xp_out_warning("failed to detach the histogram's probes: %s", strerror(-e));
}

/* --metrics-out is checked before anything attaches (as --events-out). */
static int check_metrics_out(const char *path, struct xp_error *err)
{
	unsigned mode = 0;
	int rc = xpc_atomic_check(path, &mode);

	if (!rc)
		return 0;
	xp_error_detail_str(err, "path", path);
	xp_error_detail_str(err, "checked", "before measuring");
	xp_error_hint(err, "pass --metrics-out a file in a writable directory (PATH.prom)");
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "failed to write %s: %s",
			    path, rc == -ELOOP ? "it is a symbolic link" : strerror(-rc));
}

static int lh_collect(void *ctx, struct xp_error *err)
{
	struct lh_window *w = ctx;

	return xp_inv_lh_collect(w->o, w->r, err);
}

/* --- cuda: endpoints, paired by the Agent -------------------------------- */

struct cuda_hist {
	struct xprobe_agent_req arm;
	uint64_t groups, inflight;
	int group_by;
};

static int cuda_group_by(const char *by)
{
	if (!by)
		return XP_LH_BY_NONE;
	if (!strcmp(by, "name"))
		return XP_LH_BY_NAME;
	if (!strcmp(by, "thread"))
		return XP_LH_BY_THREAD;
	return !strcmp(by, "stream") ? XP_LH_BY_STREAM : XP_LH_BY_DEVICE;
}

/* After validate, before the target is touched: the ARM request. */
static int cuda_selection(void *ctx, struct xp_measure_req *req, struct xp_error *err)
{
	struct cuda_hist *ch = ctx;
	const struct xp_selector *sels[2] = { &req->from, &req->to };
	int rc =
		xp_agent_arm_build(sels, 2, XPROBE_AGENT_MODE_HISTOGRAM, ch->groups, &ch->arm, err);

	if (rc) {
		if (rc == -XPROBE_E_INVALID_EVENT_SELECTOR) {
			xp_error_detail_str(err, "start_selector", req->from_text);
			xp_error_detail_str(err, "end_selector", req->to_text);
		}
		return rc;
	}
	ch->arm.offset = ch->inflight;
	ch->arm.by = xp_agent_hist_by(ch->group_by);
	return 0;
}

struct cuda_window {
	const struct xp_agent_hist_opts *o;
	struct xp_inv_lh_result *r;
	uint32_t features;
	struct xp_measure_req *req;
};

static int cuda_collect(void *ctx, struct xp_error *err)
{
	struct cuda_window *w = ctx;
	int rc = xp_agent_hist_collect(w->o, w->r, &w->features, err);

	return xp_measure_target_gone(w->req, rc, err);
}

static int measure_cuda(struct xp_measure_req *req, struct xp_error *err)
{
	uint64_t t0 = xpc_mono_ns(), depth, timeout_ms;
	struct xp_agent_hist_opts o = { .stop = &xp_inventory_stop };
	struct xp_warnings ws = { 0 };
	struct xp_inv_lh_result r;
	struct cuda_window win = { &o, &r, 0, req };
	struct hist_progress prog;
	struct continuous k;
	struct cuda_hist ch;
	struct hist_req q;
	char comm[64], *exe = NULL;
	bool injected = false, have_r = false;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(&k, 0, sizeof(k));
	memset(&ch, 0, sizeof(ch));
	memset(&q, 0, sizeof(q));
	q.from_text = req->from_text;
	q.to_text = req->to_text;
	timeout_ms = req->given & XP_OPT_TIMEOUT ? req->timeout_ms : 0;
	req->out.json_lines = req->interval_ms != 0;
	if (req->metrics_out) {
		rc = check_metrics_out(req->metrics_out, err);
		if (rc)
			return rc;
	}
	rc = bounds(req, &ch.inflight, &ch.groups, &depth, err);
	if (rc)
		return rc;
	ch.group_by = cuda_group_by(req->by);
	req->policy = XP_POLICY_EXACT; /* histogram_rules.c allowed no other */
	rc = xp_selector_parse(req->from_text, &req->from, err);
	if (!rc)
		rc = xp_selector_parse(req->to_text, &req->to, err);
	if (rc) {
		xp_error_hint(err, "run xprobe validate with the exact selector text");
		return rc;
	}
	if (!req->has_target) {
		rc = xp_target_identify(req->pid, &req->target, err);
		if (rc)
			return rc;
		req->has_target = true;
	}
	rc = xp_measure_agent_ready(req, cuda_selection, &ch, &ws, &injected, err);
	if (rc)
		goto out;
	o.target = &req->target;
	o.socket_path = req->cupti_socket;
	o.arm = &ch.arm;
	o.group_by = ch.group_by;
	o.pairing = req->from.kind == XP_SEL_NVTX     ? "nvtx_range" :
		    req->from.kind == XP_SEL_CUDA_API ? "cuda_api_call" :
							"cuda_activity_record";
	o.duration_ms = req->duration_ms;
	o.deadline_ns = timeout_ms ? t0 + timeout_ms * 1000000ull : 0;
	xp_out_progress_init(&prog.line, &req->out);
	prog.q = &q;
	prog.pid = req->target.pid;
	prog.duration_ns = o.duration_ms * 1000000ull;
	prog.timeout_ns = timeout_ms * 1000000ull;
	if (prog.line.on) {
		o.progress = on_progress;
		o.progress_ctx = &prog;
	}
	k.group_by = ch.group_by;
	o.interval_ns = continuous_init(&k, req, &prog, &req->target, NULL, NULL, false, comm,
					sizeof(comm), &exe);
	if (o.interval_ns) {
		o.on_interval = on_interval;
		o.interval_ctx = &k;
	}
	rc = xp_inventory_window(cuda_collect, &win, &prog.line, err);
	if (rc)
		goto out;
	have_r = true;
	if (!req->target.has_pidfd && r.stop != XP_LH_STOP_TARGET_EXITED) {
		struct xp_error verr = { 0 };

		if (xp_target_verify(&req->target, &verr) == -XPROBE_E_TARGET_REUSED) {
			xp_error_move(err, &verr);
			xp_error_prefix(err, "during the histogram window");
			rc = -XPROBE_E_TARGET_REUSED;
			goto out;
		}
		xp_error_clear(&verr);
	}
	if (xp_inv_lh_warnings(&r, &ws)) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	{
		struct xp_histogram_view view = k.view;

		view.duration_ms = o.duration_ms;
		view.timeout_ms = timeout_ms;
		view.result = &r;
		view.warnings = &ws;
		if (req->metrics_out && write_metrics(&k, &r, r.window_ns, err)) {
			unsaved_histogram(req, &view, err);
			rc = -err->code;
			goto out;
		}
		rc = xp_emit_reported(req, XP_HTML_HISTOGRAM, &xp_doc_histogram, &view);
	}
out:
	if (rc < 0 && injected)
		xp_error_detail_bool(err, "agent_injected", true);
	free(exe);
	if (have_r)
		xp_inv_lh_result_free(&r);
	xp_warnings_free(&ws);
	return rc;
}

int xp_measure_histogram(struct xp_measure_req *req, struct xp_error *err)
{
	uint64_t t0 = xpc_mono_ns();
	struct xp_inv_lh_attached *kept = NULL;
	struct xp_inv_lh_opts o = { .stop = &xp_inventory_stop,
				    .on_armed = xp_inventory_verify_armed,
				    .keep = &kept };
	struct xp_warnings ws = { 0 };
	struct hist_progress prog;
	struct xp_inv_lh_result r;
	struct lh_window win = { &o, &r };
	struct xp_target_ns ns;
	struct xp_target t;
	struct hist_req q;
	struct continuous k;
	char comm[64], *exe = NULL;
	uint64_t timeout_ms; /* 0: none given */
	bool have_r = false;
	int rc;

	if (!strncmp(req->from_text, "cuda:", 5) || !strncmp(req->to_text, "cuda:", 5))
		return measure_cuda(req, err);
	memset(&q, 0, sizeof(q));
	memset(&r, 0, sizeof(r));
	memset(&t, 0, sizeof(t));
	memset(&k, 0, sizeof(k));
	q.from_text = req->from_text;
	q.to_text = req->to_text;
	q.match_text = req->match_text;
	q.by = req->by;
	q.unsafe_offset = req->unsafe_offset;
	timeout_ms = req->given & XP_OPT_TIMEOUT ? req->timeout_ms : 0;
	/* JSON Lines: every interval, then the result, one line each */
	req->out.json_lines = req->interval_ms != 0;
	if (req->metrics_out) {
		rc = check_metrics_out(req->metrics_out, err);
		if (rc)
			return rc;
	}
	rc = bounds(req, &o.max_inflight, &o.max_groups, &o.max_depth, err);
	if (rc)
		return rc;
	rc = parse_pair(&q, err);
	if (rc)
		goto out;
	rc = xp_target_identify(req->pid, &t, err);
	if (rc)
		goto out;
	rc = check_pair(&q, &t, err);
	if (rc)
		goto out;
	if (q.v.nissues) {
		rc = first_issue(&q, err);
		goto out;
	}
	rc = plan_pair(&q, err);
	if (rc)
		goto out;
	if (q.plan.n != 2 || q.plan.from_ep != 0 || q.plan.to_ep != 1) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
				  "the histogram plan has %zu endpoints, not a start and an end",
				  q.plan.n);
		goto out;
	}
	memset(&ns, 0, sizeof(ns));
	rc = xp_target_namespaces(&t, &ns, err);
	if (rc)
		goto out;
	rc = xp_live_filter_for(&o.filter, &t, &ns, err);
	if (rc)
		goto out;
	o.target = &t;
	o.start = &q.plan.ep[0];
	o.end = &q.plan.ep[1];
	o.nested = q.policy == XP_POLICY_STACK_NESTED;
	o.group_by = q.group_by;
	o.duration_ms = req->duration_ms;
	o.explain = req->explain;
	o.explain_top =
		req->given & XP_OPT_EXPLAIN_TOP ? (uint32_t)req->explain_top : XP_EX_TOP_DEFAULT;
	if (o.explain && !o.filter.global_tgid) {
		xp_error_hint(err, "run xprobe in the initial PID namespace (the host's)");
		rc = xp_error_set(
			err, XPROBE_E_PERMISSION_DENIED, true,
			"--explain follows the target's threads by their global ids, which xprobe cannot see from inside a PID namespace");
		goto out;
	}
	o.deadline_ns = timeout_ms ? t0 + timeout_ms * 1000000ull : 0;
	o.on_armed_ctx = &t;
	xp_out_progress_init(&prog.line, &req->out);
	prog.q = &q;
	prog.pid = t.pid;
	prog.duration_ns = o.duration_ms * 1000000ull;
	/* the deadline counts from the start, the window from arming: near
	 * enough for a progress line */
	prog.timeout_ns = timeout_ms * 1000000ull;
	if (prog.line.on) {
		o.progress = on_progress;
		o.progress_ctx = &prog;
	}
	k.explain = o.explain;
	k.nested = o.nested;
	k.group_by = o.group_by;
	o.interval_ns = continuous_init(&k, req, &prog, &t, o.start, o.end, o.filter.use_pidns,
					comm, sizeof(comm), &exe);
	if (o.interval_ns) {
		o.on_interval = on_interval;
		o.interval_ctx = &k;
	}

	rc = xp_inventory_window(lh_collect, &win, &prog.line, err);
	if (rc)
		goto out;
	have_r = true;
	if (r.explain && xp_inv_ex_symbolize(&r.ex, t.pid, ns.ns_pid)) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	/*
	 * After the window: with a pidfd the process was the target all along
	 * (a reused PID is another pidfd); without one, a start time that
	 * changed is a reused PID.  A target that has exited since is fine:
	 * the result covers the window.
	 */
	if (!t.has_pidfd && r.stop != XP_LH_STOP_TARGET_EXITED) {
		struct xp_error verr = { 0 };

		if (xp_target_verify(&t, &verr) == -XPROBE_E_TARGET_REUSED) {
			xp_error_move(err, &verr);
			xp_error_prefix(err, "during the histogram window");
			rc = -XPROBE_E_TARGET_REUSED;
			goto out;
		}
		xp_error_clear(&verr);
	}
	if (xp_inv_lh_warnings(&r, &ws) || children_warning(&t, &q, &r, &ws)) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	/* the probe-cost estimate next to the distribution (UPROBE_SINGLE_STEP:
	 * an endpoint the kernel single-steps, with what that costs here) */
	for (size_t i = 0; i < q.v.warnings.n; i++) {
		const struct xp_warning *w = &q.v.warnings.v[i];

		if (strcmp(w->code, XP_WARN_UPROBE_SINGLE_STEP) == 0 &&
		    xp_warnings_add(&ws, w->code, w->message, w->details)) {
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
			goto out;
		}
	}
	{
		struct xp_histogram_view view = {
			.session_id = req->session_id,
			.name = req->name,
			.pid = t.pid,
			.process_start_time = t.start_time,
			.start_selector = req->from_text,
			.end_selector = req->to_text,
			.start = o.start,
			.end = o.end,
			.pid_namespace_filter = o.filter.use_pidns,
			.duration_ms = o.duration_ms,
			.timeout_ms = timeout_ms,
			.result = &r,
			.warnings = &ws,
			.color = xp_out_color(&req->out, STDOUT_FILENO),
		};

		if (req->metrics_out && write_metrics(&k, &r, r.window_ns, err)) {
			unsaved_histogram(req, &view, err);
			rc = -err->code;
			goto out;
		}
		rc = xp_emit_reported(req, XP_HTML_HISTOGRAM, &xp_doc_histogram, &view);
	}
out:
	/* after the result is written (an error is written by the caller
	 * after this): the disarmed probes hold nothing the document needs,
	 * and detaching them waits a grace period per link */
	lh_detach(kept);
	free(exe);
	if (have_r)
		xp_inv_lh_result_free(&r);
	xp_warnings_free(&ws);
	req_free(&q);
	xp_target_release(&t);
	return rc;
}

int xp_validate_histogram(const struct xp_cli *cli, const struct xp_target *t, struct xp_error *err)
{
	struct xp_histogram_check c;
	struct hist_req q;
	size_t i;
	int rc;

	memset(&q, 0, sizeof(q));
	memset(&c, 0, sizeof(c));
	q.from_text = cli->from;
	q.to_text = cli->to;
	q.match_text = cli->match;
	q.by = cli->by;
	q.unsafe_offset = cli->unsafe_offset;
	c.agent = !strncmp(cli->from, "cuda:", 5) || !strncmp(cli->to, "cuda:", 5);
	rc = parse_pair(&q, err);
	if (c.agent)
		q.group_by = cuda_group_by(q.by);
	if (rc)
		goto out;
	rc = check_pair(&q, t, err);
	if (rc)
		goto out;
	c.v = &q.v;
	c.group_by = q.group_by;
	c.warnings = &q.v.warnings;
	for (i = 0; i < q.v.nissues; i++)
		c.issues[c.nissues++] = q.v.issues[i];
	if (c.agent) {
		/* the Agent pairs them: validate's pair check (the Agent, NVTX
		 * routing, CUDA) is the whole answer, no BPF object */
		rc = xp_out_emit(&cli->out, &xp_doc_histogram_check, &c);
		goto out;
	}
	rc = plan_pair(&q, err);
	if (rc)
		goto out;
	c.start = &q.plan.ep[0];
	c.end = &q.plan.ep[1];
	c.object_load.tried = true;
	c.object_load.err = -xp_inv_lh_load_check(
		c.start, c.end, q.policy == XP_POLICY_STACK_NESTED, q.group_by,
		c.object_load.detail, sizeof(c.object_load.detail));
	if (c.object_load.err)
		xp_issue_add(c.issues, &c.nissues, xp_bpf_step_code(&c.object_load), "%s",
			     c.object_load.detail);
	rc = xp_out_emit(&cli->out, &xp_doc_histogram_check, &c);
out:
	req_free(&q);
	return rc;
}
