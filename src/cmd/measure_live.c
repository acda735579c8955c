/* SPDX-License-Identifier: Apache-2.0 */
/*
 * measure_live.c - the collection half of `measure --pid` / `--spec`:
 * from the request to a bounded capture of the live target, nothing else.
 * It never correlates for the result, writes the artifact, renders or
 * picks an exit code: measure.c does all of that with what this returns
 * (the path is one-way: measure.c -> here -> src/live, src/agent).
 *
 *   1. validate runs on the pair (read-only; src/checks resolves both
 *      selectors against the target) and its first issue becomes the
 *      error before anything is attached (recommended_policy,
 *      compatible_policies in details, as the reference does); the
 *      Agent's activation and library come from the same answer;
 *   2. the plan copies what validation resolved (nothing is resolved
 *      twice), and the target's PID namespace becomes the BPF filter;
 *      the Agent is loaded into the target when the pair needs it and it
 *      is not running (activate: online injection, with the checks that
 *      keep a process that cannot run the measurement untouched);
 *   3. the sources (the Agent over its socket, the eBPF collector of the
 *      host endpoints) and one bounded capture (xp_live_run: the
 *      stopping, cut and loss rules of src/live/live_source.h);
 *      --samples stops once the correlator pairs enough events of the
 *      merged capture, --duration-ms on time from arming, --timeout-ms
 *      bounds the whole wait.
 * While the capture runs, a terminal on stderr gets a progress line
 * (on_progress below; src/report/output.c decides whether and draws it),
 * erased as soon as xp_live_run returns, before anything is printed.
 * The startup slack of the contract: a target already inside an event
 * when probes arm leaves an end without a start (or a start without an
 * end); the policies count those as unmatched, never as pairs, and the
 * samples rule only counts pairs.  The one option rule of live pairs
 * alone, --unsafe-offset's, is here too (mode_rules.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/cancel.h"
#include "../../common/env_hooks.h"
#include "../../common/json.h"
#include "../../common/monotonic.h"
#include "../../common/parse.h"
#include "../agent/agent_client.h"
#include "../agent/agent_source.h"
#include "../agent/agent_inject.h"
#include "../live/link_release.h"
#include "../live/live.h"
#include "../live/live_sched.h"
#include "../live/probe_cost.h"
#include "../checks/agent_path.h"
#include "../checks/validate_checks.h"
#include "measure.h"
#include "mode_rules.h"
#include "../process/namespaces.h"

/* --unsafe-offset concerns live uprobe selectors only (mode_rules.h) */
static const unsigned long unsafe_offset_conflicts[] = {
	XP_OPT_INPUT, XP_OPT_AGGREGATE, XP_OPT_CPU_SAMPLE, XP_OPT_SYSCALL_AGG, 0,
};

const struct xp_mode_rules xp_unsafe_offset_rules = {
	.flag = XP_OPT_UNSAFE_OFFSET,
	.conflicts = unsafe_offset_conflicts,
};

/* --explain: --histogram's in the kernel (histogram_rules.c); otherwise
 * the exact modes' scheduler timeline, here: a live target, and pairs a
 * thread opens and closes (host endpoints, NVTX ranges) */
static const unsigned long explain_conflicts[] = {
	XP_OPT_INPUT, XP_OPT_SPEC, XP_OPT_AGGREGATE, XP_OPT_CPU_SAMPLE, XP_OPT_SYSCALL_AGG, 0,
};

static bool cuda_not_nvtx(const char *sel)
{
	return sel && !strncmp(sel, "cuda:", 5) && strncmp(sel, "cuda:nvtx", 9);
}

static int explain_usage(const struct xp_cli *cli, struct xp_usage *u)
{
	if (cli->given & XP_OPT_HISTOGRAM)
		return 0;
	if (!cli->has_pid)
		return xp_usage_text(
			u, "--explain follows a live process's threads through the scheduler: add --pid");
	if (cuda_not_nvtx(cli->from) || cuda_not_nvtx(cli->to))
		return xp_usage_text(
			u,
			"--explain splits the intervals a thread opens and closes (host endpoints, NVTX ranges); a GPU kernel, copy or memset is not one");
	return 0;
}

const struct xp_mode_rules xp_explain_rules = {
	.flag = XP_OPT_EXPLAIN,
	.conflicts = explain_conflicts,
	.options = XP_OPT_EXPLAIN_TOP,
	.usage = explain_usage,
};

/*
 * Test hook (sqlite3FaultSim style, inert unless set, and compiled in only
 * with XPROBE_TEST_HOOKS, common/env_hooks.h): XPROBE_TEST_RING_BYTES
 * replaces the ring size (a power of two, 4 KiB to 64 MiB) so a test can
 * provoke ring losses deterministically.  Anything else is ignored.
 */
static uint64_t test_ring_bytes(void)
{
	const char *v = xpc_test_hook_env("XPROBE_TEST_RING_BYTES");
	uint64_t n;

	if (!v || xpc_parse_u64(v, XP_LIVE_RING_MIN, XP_LIVE_RING_MAX, &n) || (n & (n - 1)))
		return 0;
	return n;
}

/*
 * Test hook (inert unless set): XPROBE_TEST_FIRST_READ_DELAY_MS (1..10000)
 * makes the collector wait that long after arming before it reads the ring,
 * so that with a tiny XPROBE_TEST_RING_BYTES ring the losses do not depend
 * on how fast this machine's consumer is.  Anything else is ignored.
 */
static uint32_t test_first_read_delay_ms(void)
{
	const char *v = xpc_test_hook_env("XPROBE_TEST_FIRST_READ_DELAY_MS");
	uint64_t n;

	if (!v || xpc_parse_u64(v, 1, 10000, &n))
		return 0;
	return (uint32_t)n;
}

/* What the measurement needs of the Agent (validate's answer). */
struct agent_plan {
	bool needed; /* a cuda: endpoint */
	bool nvtx; /* an NVTX endpoint among them */
	enum xp_agent_activation activation;
	char library[PATH_MAX]; /* the Agent library, "" none found */
	struct xp_cuda_mapped cuda; /* what validate read of the target's CUDA */
	struct xp_cupti_install cupti; /* where its Agent will find CUPTI (activate) */
};

/*
 * Step 1b: measure runs validate (read-only) and turns its first issue into
 * the error, as the contract says ("Callers must stop on valid: false"):
 * the issue's code and message, recoverable, with recommended_policy
 * (kebab-case) and compatible_policies (snake_case, the MatchPolicy enum)
 * in details (docs/contract.md, "Validation issues").  A missing eBPF
 * capability is therefore PERMISSION_DENIED (exit 4), a policy the strict
 * validate-time rules refuse INVALID_CORRELATION_POLICY, before anything
 * touches the target.
 */
static int validate_first(struct xp_measure_req *req, struct agent_plan *ap, struct xp_warnings *ws,
			  struct xp_validation *v, struct xp_error *err)
{
	struct xp_validate_opts vo = { .correlator_mask = xp_policy_compatible,
				       .unsafe_offset = req->unsafe_offset,
				       .agent_path = req->agent,
				       .probe_cost = xp_live_probe_cost };
	enum xp_policy list[XP_POLICY__COUNT];
	const char *names[XP_POLICY__COUNT];
	size_t n, i;
	int rc;

	rc = xp_validate_pair(&req->target, &req->from, &req->to, req->policy, &vo, v, err);
	if (rc)
		goto out;
	/* --unsafe-offset's warnings and the probe cost (UPROBE_SINGLE_STEP:
	 * the estimate next to the latency) reach the result; validate's
	 * others (HEURISTIC_CORRELATION ...) are the correlator's to give */
	for (i = 0; i < v->warnings.n; i++) {
		const struct xp_warning *w = &v->warnings.v[i];

		if ((strcmp(w->code, XP_WARN_UNVERIFIED_BOUNDARY) == 0 ||
		     strcmp(w->code, XP_WARN_UPROBE_SINGLE_STEP) == 0) &&
		    xp_warnings_add(ws, w->code, w->message, w->details)) {
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
			goto out;
		}
	}
	ap->activation = v->activation;
	memcpy(ap->library, v->agent_library, sizeof(ap->library));
	ap->cuda = v->cuda;
	if (v->nissues == 0)
		goto out;
	n = xp_policy_list(v->compatible, list);
	for (i = 0; i < n; i++)
		names[i] = xp_policy_snake(list[i]);
	xp_error_detail_str(err, "start_selector", req->from_text);
	xp_error_detail_str(err, "end_selector", req->to_text);
	xp_error_detail_str(err, "match_policy", xp_policy_kebab(req->policy));
	xp_error_detail_str(err, "recommended_policy", xp_policy_kebab(v->recommended));
	xp_error_detail_strv(err, "compatible_policies", names, n);
	if (v->issues[0].hint[0])
		xp_error_hint(err, "%s", v->issues[0].hint);
	else
		xp_error_hint(err, "rerun validate with an explicitly compatible policy");
	rc = xp_error_set(err, v->issues[0].code, true, "%s", v->issues[0].message);
out:
	return rc;
}

void xp_measure_resolved(const struct xp_endpoint_check *ep, struct xp_live_resolved *r)
{
	memset(r, 0, sizeof(*r));
	r->sel = ep->sel;
	r->probe = ep->has_probe ? &ep->probe : NULL;
	r->usdt = ep->has_usdt ? &ep->usdt : NULL;
	r->has_tracepoint_id = ep->has_tracepoint_id;
	r->tracepoint_id = ep->tracepoint_id;
}

/* A socket of @t's Agent exists (an Agent mapped but not serving: an
 * injected one whose socket CLOSE removed). */
static bool agent_socket_exists(const struct xp_target *t)
{
	char path[XP_AGENT_PATH_MAX];
	struct xp_error lerr = { 0 };
	struct stat st;
	bool yes;

	yes = xp_agent_socket_path(t, path, sizeof(path), &lerr) == 0 && lstat(path, &st) == 0 &&
	      S_ISSOCK(st.st_mode);
	xp_error_clear(&lerr);
	return yes;
}

/*
 * Step 2b: online injection, when validate said injection_required (or
 * the Agent is mapped but serves no socket) for CUDA API / activity
 * endpoints and no --cupti-socket names a socket: xp_agent_inject
 * (src/agent/agent_inject.h) loads and starts the Agent; once its checks
 * have passed, before the target is stopped, stderr says the target is
 * being modified.  The run that loaded it carries CUPTI_AGENT_INJECTED
 * (a warning of the result, or details.agent_injected of an error after
 * it).  NVTX endpoints never inject: NVTX's dispatch is fixed at its first
 * call (validate's startup_required).
 */
struct inject_warning {
	uint32_t pid;
	int cuda_major; /* 0: not known */
	const char *cupti_path; /* "" none found */
};

/* Said once inject's checks have passed, before the target is stopped:
 * the contract's line, which tools grep for. */
static void warn_injecting(void *ctx)
{
	const struct inject_warning *w = ctx;
	char major[32] = "", using[PATH_MAX + 8] = "";

	if (w->cuda_major)
		snprintf(major, sizeof(major), " with CUDA %d Agent", w->cuda_major);
	if (w->cupti_path[0])
		snprintf(using, sizeof(using), " using %s", w->cupti_path);
	xp_out_warning("activating the CUPTI agent modifies target PID %u%s%s", w->pid, major,
		       using);
}

/* CUPTI_AGENT_INJECTED: the contract's message and details (cuda_major
 * when known, agent_path of the fresh load, cupti_path found), and ours
 * (pid, stopped_ns). */
static int injected_warning(const struct xp_measure_req *req, const struct agent_plan *ap,
			    const struct xp_agent_inject_result *res, struct xp_warnings *ws)
{
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;
	int rc;

	xpc_json_init_buf(&w, &b, 0);
	xpc_json_obj_begin(&w);
	xpc_json_kopt_u64(&w, "cuda_major", ap->cupti.major > 0, (uint64_t)ap->cupti.major);
	xpc_json_kstr(&w, "agent_path", res->agent_path);
	if (ap->cupti.path[0])
		xpc_json_kstr(&w, "cupti_path", ap->cupti.path);
	xpc_json_ku64(&w, "pid", req->target.pid);
	xpc_json_ku64(&w, "stopped_ns", res->stopped_ns);
	xpc_json_obj_end(&w);
	rc = xpc_json_finish(&w) ? -ENOMEM :
				   xp_warnings_add(ws, "CUPTI_AGENT_INJECTED",
						   "xprobe injected the CUPTI agent and left the "
						   "shared object mapped",
						   xpc_buf_str(&b));
	xpc_buf_free(&b);
	return rc;
}

/*
 * Never modify a process for a measurement that cannot run: before an
 * injection, the machine has the NVIDIA kernel driver loaded or the
 * target maps a CUDA driver library (a test double provides one), and the
 * target maps CUDA at all (the Agent's ARM refuses a process that does
 * not: CUDA_CONTEXT_NOT_FOUND), and the Agent will find a supported CUPTI
 * in it (xp_cupti_for_target); otherwise CUPTI_NOT_AVAILABLE, each with
 * details.reason, the target untouched.
 */
static int cuda_reachable(const struct xp_measure_req *req, struct agent_plan *ap,
			  struct xp_error *err)
{
	char why[PATH_MAX + 320];

	if (!xp_nvidia_driver_loaded() && !ap->cuda.libcuda) {
		xp_error_detail_str(err, "reason", "no_nvidia_driver");
		xp_error_detail_bool(err, "target_modified", false);
		xp_error_hint(err,
			      "xprobe doctor's nvidia_driver and cuda_driver checks say what this "
			      "machine has; measure CUDA where an NVIDIA GPU and its driver are");
		return xp_error_set(
			err, XPROBE_E_CUPTI_NOT_AVAILABLE, false,
			"the NVIDIA kernel driver is not loaded on this machine (no /proc/driver/nvidia) "
			"and target PID %u maps no CUDA driver library (libcuda.so.1): there is no "
			"GPU activity to observe; the target was not modified",
			req->target.pid);
	}
	if (!ap->cuda.libcudart && !ap->cuda.libcuda) {
		/* the Agent's ARM refuses a process without CUDA: say it first */
		xp_error_detail_str(err, "reason", "no_cuda_mapped");
		xp_error_detail_bool(err, "target_modified", false);
		xp_error_hint(err, "measure the process that runs the CUDA work, once it has "
				   "loaded CUDA (its libcudart.so.<N> or libcuda.so.1)");
		return xp_error_set(
			err, XPROBE_E_CUDA_CONTEXT_NOT_FOUND, true,
			"target PID %u maps no CUDA runtime (libcudart.so.<N>) or driver (libcuda.so.1): "
			"it has no CUDA to observe yet; the target was not modified",
			req->target.pid);
	}
	if (!xp_cupti_for_target(req->target.pid, &ap->cuda, &ap->cupti, why, sizeof(why))) {
		xp_error_detail_str(err, "reason", "no_cupti");
		xp_error_detail_bool(err, "target_modified", false);
		xp_error_hint(err,
			      "xprobe doctor's cupti check lists the CUPTI installed here; install "
			      "the CUPTI of the target's CUDA major, or start the target with its "
			      "directory in LD_LIBRARY_PATH");
		return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, false,
				    "%s; the target was not modified", why);
	}
	return 0;
}

static int activate(struct xp_measure_req *req, struct agent_plan *ap, struct xp_warnings *ws,
		    struct xp_live_outcome *out, struct xp_error *err)
{
	struct xp_agent_inject_opts io = { 0 };
	struct inject_warning w;
	struct xp_agent_inject_result res;
	enum xp_agent_origin origin;
	int rc;

	if (!ap->needed || req->cupti_socket)
		return 0;
	if (ap->nvtx) {
		/* an Agent mapped but serving nothing (injected online by an earlier
		 * CUDA measurement, whose CLOSE removed the socket): NVTX's dispatch
		 * cannot be routed to it, so starting it again would not help */
		if (ap->activation != XP_AGENT_ALREADY_LOADED || agent_socket_exists(&req->target))
			return 0;
		xp_error_detail_u64(err, "pid", req->target.pid);
		xp_error_detail_str(err, "agent_activation", "startup_required");
		xp_error_hint(err,
			      "restart the target with NVTX_INJECTION64_PATH=%s before its first "
			      "NVTX call; online injection cannot retrofit an initialized NVTX "
			      "dispatch table",
			      ap->library[0] ? ap->library : "<path of libxprobe.so>");
		return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
				    "the Agent mapped in PID %u was loaded after the target's NVTX "
				    "dispatch was fixed (an online injection): NVTX calls do not "
				    "reach it",
				    req->target.pid);
	}
	if (ap->activation != XP_AGENT_INJECTION_REQUIRED &&
	    (ap->activation != XP_AGENT_ALREADY_LOADED || agent_socket_exists(&req->target)))
		return 0;
	rc = cuda_reachable(req, ap, err);
	if (rc)
		return rc;
	if (!ap->library[0]) {
		rc = xp_checks_agent_library(req->agent, ap->library, sizeof(ap->library), &origin,
					     err);
		if (rc)
			return rc;
	}
	memset(&res, 0, sizeof(res));
	io.before_stop = warn_injecting;
	io.ctx = &w;
	w.pid = req->target.pid;
	w.cuda_major = ap->cupti.major;
	w.cupti_path = ap->cupti.path;
	rc = xp_agent_inject(&req->target, ap->library, &io, &res, err);
	if (rc) {
		xp_error_detail_str(err, "agent_path", ap->library);
		return rc;
	}
	out->agent_injected = res.injected;
	if (res.injected && injected_warning(req, ap, &res, ws))
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	return 0;
}

/*
 * A capture without a single event: the target's children that map the
 * first probed binary (every child for syscall and tracepoint endpoints)
 * may be the processes doing the work (an nginx master's workers);
 * measure.c names them in its hint.
 */
static void find_children(const struct xp_measure_req *req, const struct xp_live_plan *plan,
			  struct xp_live_outcome *out)
{
	const char *file = NULL;
	size_t i;

	for (i = 0; i < plan->n && !file; i++)
		if (plan->ep[i].kind == XP_LIVE_UPROBE || plan->ep[i].kind == XP_LIVE_USDT)
			file = plan->ep[i].binary_path;
	if (xp_proc_children(req->target.pid, file, &out->children))
		return;
	out->has_children = true;
	snprintf(out->children_file, sizeof(out->children_file), "%s", file ? file : "");
}

/* What the progress line says besides the loop's counters. */
struct progress_ctx {
	struct xp_out_progress line;
	const struct xp_measure_req *req;
	size_t probes; /* eBPF endpoints attached */
	bool agent; /* the Agent collects too */
};

/*
 * "armed 2 probes on pid 4242 | <=37/100 pairs | 1.2s, timeout in 28.8s |
 * 302 events, 0 dropped | FROM -> TO" (the selectors last: the line is
 * cut to the terminal's width).  Pairs are known once the
 * samples rule counted them; before, each pair needs its own end record,
 * so the end records seen bound them.  No allocation: the loop calls this.
 */
static void on_progress(void *vctx, const struct xp_live_progress *p)
{
	struct progress_ctx *x = vctx;
	char text[512], pairs[64], when[96], armed[48];
	uint64_t bound = p->samples;

	if (p->pairs_counted)
		snprintf(pairs, sizeof(pairs), "%llu/%llu pairs", (unsigned long long)p->pairs,
			 (unsigned long long)bound);
	else if (bound)
		snprintf(pairs, sizeof(pairs), "<=%llu/%llu pairs",
			 (unsigned long long)p->end_records, (unsigned long long)bound);
	else
		snprintf(pairs, sizeof(pairs), "<=%llu pairs", (unsigned long long)p->end_records);
	if (p->duration_ns) {
		uint64_t left = p->duration_ns > p->elapsed_ns ? p->duration_ns - p->elapsed_ns : 0;

		snprintf(when, sizeof(when), "%.1fs left of %.1fs", (double)left / 1e9,
			 (double)p->duration_ns / 1e9);
	} else {
		snprintf(when, sizeof(when), "%.1fs, timeout in %.1fs", (double)p->elapsed_ns / 1e9,
			 (double)p->timeout_left_ns / 1e9);
	}
	if (x->probes && x->agent)
		snprintf(armed, sizeof(armed), "%zu probe%s + Agent", x->probes,
			 x->probes > 1 ? "s" : "");
	else if (x->probes)
		snprintf(armed, sizeof(armed), "%zu probe%s", x->probes, x->probes > 1 ? "s" : "");
	else
		snprintf(armed, sizeof(armed), "the Agent");
	snprintf(text, sizeof(text),
		 "armed %s on pid %u | %s | %s | %llu events, %llu dropped | %s -> %s", armed,
		 x->req->target.pid, pairs, when, (unsigned long long)p->events,
		 (unsigned long long)p->dropped, x->req->from_text, x->req->to_text);
	xp_out_progress_draw(&x->line, text);
}

/*
 * --explain: the scheduler timeline of the target's threads, bounded like
 * the capture by --max-events.  Its programs see global ids, so a target
 * in another PID namespace (ids that differ) is refused, as --histogram
 * --explain refuses it.
 */
static int open_explain(const struct xp_measure_req *req, const struct xp_live_filter *f,
			struct xp_live_outcome *out, struct xp_error *err)
{
	if (!f->global_tgid || f->use_pidns) {
		xp_target_detail(err, &req->target);
		xp_error_hint(err, "run xprobe in the target's PID namespace's parent (the host)");
		return xp_error_set(
			err, XPROBE_E_PERMISSION_DENIED, true,
			"--explain follows the target's threads by their global ids, which differ from the ids its events carry in its own PID namespace");
	}
	return xp_live_sched_open(f->global_tgid, req->max_events, &out->sched, err);
}

#define GONE_LOOKS 20
#define GONE_WAIT_NS 5000000ull /* 20 x 5 ms */

int xp_measure_target_gone(struct xp_measure_req *req, int rc, struct xp_error *err)
{
	struct xp_error verr = { 0 };
	char msg[XP_ERR_MESSAGE_MAX];
	int vrc, i;

	if (!rc || err->code == XPROBE_E_TARGET_EXITED || err->code == XPROBE_E_TARGET_REUSED ||
	    err->code == XPROBE_E_TARGET_NOT_FOUND)
		return rc;
	/* a dying target closes its descriptors (our socket) before its exit
	 * is visible: look again for a little while */
	for (i = 0;; i++) {
		vrc = xp_target_verify(&req->target, &verr);
		if (vrc || i >= GONE_LOOKS)
			break;
		xp_error_clear(&verr);
		xpc_sleep_until_ns(xpc_mono_ns() + GONE_WAIT_NS);
	}
	if (!vrc || (verr.code != XPROBE_E_TARGET_EXITED && verr.code != XPROBE_E_TARGET_REUSED)) {
		xp_error_clear(&verr);
		return rc;
	}
	/* the failure was the target's end: say that, keep what failed */
	snprintf(msg, sizeof(msg), "%s", err->message);
	xp_error_detail_str(err, "original_error_code", xprobe_errname(err->code));
	xp_error_detail_str(err, "original_message", msg);
	xp_target_detail(err, &req->target);
	rc = xp_error_set(err, verr.code, true, "%s (%s)", verr.message, msg);
	xp_error_clear(&verr);
	return rc;
}

int xp_measure_live_collect(struct xp_measure_req *req, struct xp_capture *c,
			    struct xp_live_outcome *out, struct xp_warnings *ws,
			    struct xp_error *err)
{
	uint64_t t0 = xpc_mono_ns();
	struct xp_live_source *src[XP_LIVE_MAX_SOURCES] = { 0 };
	struct xp_live_samples_rule rule;
	struct progress_ctx prog;
	struct xp_agent_source_opts ao;
	struct xp_live_ebpf_opts eo;
	struct xp_live_run_opts ro;
	struct xp_live_resolved from, to;
	struct xp_validation v;
	struct xp_live_plan plan;
	struct agent_plan ap;
	struct xp_target_ns ns;
	size_t nsrc = 0, i;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&v, 0, sizeof(v));
	memset(&plan, 0, sizeof(plan));
	memset(&ao, 0, sizeof(ao));
	memset(&eo, 0, sizeof(eo));
	memset(&ro, 0, sizeof(ro));
	memset(&rule, 0, sizeof(rule));
	memset(&ap, 0, sizeof(ap));
	ap.needed = !xp_selector_is_host(&req->from) || !xp_selector_is_host(&req->to);
	ap.nvtx = req->from.kind == XP_SEL_NVTX || req->to.kind == XP_SEL_NVTX;

	/* 0. a stop request already: nothing is loaded, attached or touched
	 * (validate's capability probe attaches a BPF link too); the capture
	 * ends empty, as a signal during the window would end it */
	if (xpc_cancel_signo()) {
		out->res.stop = XP_LIVE_STOP_SIGNAL;
		out->res.signo = xpc_cancel_signo();
		out->res.collected = true;
		return 0;
	}

	/* 1. validate: the policy, the capabilities, the Agent's activation */
	rc = validate_first(req, &ap, ws, &v, err);
	if (rc)
		goto out;

	/* 2. the host endpoints, from what validation resolved, and the
	 * target filter */
	xp_measure_resolved(&v.start, &from);
	xp_measure_resolved(&v.end, &to);
	rc = xp_live_plan_build(&from, &to, &plan, err);
	if (rc)
		goto out;
	if (plan.from_ep >= 0 && plan.ep[plan.from_ep].kind == XP_LIVE_UPROBE &&
	    xp_selector_set_match_binary(&req->from, plan.ep[plan.from_ep].binary_path)) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	if (plan.to_ep >= 0 && plan.ep[plan.to_ep].kind == XP_LIVE_UPROBE &&
	    xp_selector_set_match_binary(&req->to, plan.ep[plan.to_ep].binary_path)) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	memset(&ns, 0, sizeof(ns));
	rc = xp_target_namespaces(&req->target, &ns, err);
	if (rc)
		goto out;
	eo.target = &req->target;
	rc = xp_live_filter_for(&eo.filter, &req->target, &ns, err);
	if (rc)
		goto out;
	if (req->explain) {
		rc = open_explain(req, &eo.filter, out, err);
		if (rc)
			goto out;
	}

	/* 2b. the Agent, loaded into the target when it must be */
	rc = activate(req, &ap, ws, out, err);
	if (rc)
		goto out;

	/* 3. the sources (the Agent first: its connection fails fast, before
	 * any BPF program loads), then the capture */
	if (ap.needed) {
		ao.target = &req->target;
		ao.socket_path = req->cupti_socket;
		ao.agent_path = ap.library[0] ? ap.library : NULL;
		ao.sels[0] = &req->from;
		ao.sels[1] = &req->to;
		ao.nsels = 2;
		ao.end_sel = xp_selector_is_host(&req->to) ? -1 : 1;
		ao.max_events = req->max_events;
		rc = xp_agent_source_new(&ao, &src[nsrc], err);
		if (rc)
			goto out;
		nsrc++;
	}
	if (plan.n) {
		eo.endpoints = plan.ep;
		eo.nendpoints = plan.n;
		eo.end_ep = plan.to_ep;
		eo.max_events = req->max_events;
		eo.samples = req->samples;
		eo.ring_bytes = test_ring_bytes();
		rc = xp_live_ebpf_source_new(&eo, &src[nsrc], err);
		if (rc)
			goto out;
		nsrc++;
	}

	rule.from = &req->from;
	rule.to = &req->to;
	rule.opts.policy = req->policy;
	rule.opts.samples = req->samples;
	rule.opts.duration_ns = req->duration_ms * 1000000ull;
	rule.opts.max_events = req->max_events;
	ro.target = &req->target;
	ro.event_pid = eo.filter.event_pid;
	ro.max_events = req->max_events;
	ro.duration_ns = req->duration_ms * 1000000ull;
	ro.deadline_ns = t0 + req->timeout_ms * 1000000ull;
	ro.first_read_delay_ms = test_first_read_delay_ms();
	ro.samples = req->samples ? &rule : NULL;
	ro.sched = out->sched;
	xp_out_progress_init(&prog.line, &req->out);
	prog.req = req;
	prog.probes = plan.n;
	prog.agent = ap.needed;
	if (prog.line.on) {
		ro.progress = on_progress;
		ro.progress_ctx = &prog;
	}
	rc = xp_live_run(&ro, src, nsrc, c, &out->res, err);
	xp_out_progress_end(&prog.line);
	if (!rc && c->count == 0)
		find_children(req, &plan, out);
	for (i = 0; i < nsrc; i++) {
		if (src[i]->kind == XP_LIVE_SRC_EBPF) {
			out->has_host = true;
			out->host = src[i]->st;
			out->bpf = xp_live_ebpf_take_obj(src[i]);
		} else {
			out->has_agent = true;
			out->agent = src[i]->st;
		}
	}
out:
	if (rc && ap.needed)
		rc = xp_measure_target_gone(req, rc, err);
	if (rc && out->agent_injected)
		xp_error_detail_bool(err, "agent_injected", true);
	for (i = 0; i < nsrc; i++)
		xp_live_source_destroy(src[i]);
	xp_live_plan_free(&plan);
	xp_validation_free(&v);
	return rc;
}

void xp_measure_live_teardown(struct xp_live_outcome *out)
{
	int rc;

	/* the kernel's detach waits go to a child; our closes return at once */
	xp_link_release_to_child();
	rc = xp_live_bpf_destroy(out->bpf);

	out->bpf = NULL;
	if (rc)
		xp_out_warning("detaching the probes failed: %s (the result stands)",
			       strerror(-rc));
}

int xp_measure_agent_ready(struct xp_measure_req *req,
			   int (*check)(void *ctx, struct xp_measure_req *req, struct xp_error *err),
			   void *ctx, struct xp_warnings *ws, bool *injected, struct xp_error *err)
{
	struct xp_live_outcome out;
	struct xp_validation v;
	struct agent_plan ap;
	int rc;

	memset(&out, 0, sizeof(out));
	memset(&ap, 0, sizeof(ap));
	*injected = false;
	ap.needed = !xp_selector_is_host(&req->from) || !xp_selector_is_host(&req->to);
	ap.nvtx = req->from.kind == XP_SEL_NVTX || req->to.kind == XP_SEL_NVTX;
	memset(&v, 0, sizeof(v));
	rc = validate_first(req, &ap, ws, &v, err);
	xp_validation_free(&v);
	if (!rc && check)
		rc = check(ctx, req, err);
	if (!rc)
		rc = activate(req, &ap, ws, &out, err);
	rc = xp_measure_target_gone(req, rc, err);
	*injected = out.agent_injected;
	if (rc && out.agent_injected)
		xp_error_detail_bool(err, "agent_injected", true);
	return rc;
}
