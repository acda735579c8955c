/* SPDX-License-Identifier: Apache-2.0 */
/*
 * measure_live.c - the collection half of `measure --pid` / `--spec`:
 * from the request to a bounded capture of the live target, nothing else.
 * It never correlates for the result, writes the artifact, renders or
 * picks an exit code: measure.c does all of that with what this returns
 * (the path is one-way: measure.c -> here -> src/collect).
 *
 *   1. CUDA endpoints -> CUPTI_NOT_AVAILABLE (the Agent is not in this
 *      build); then validate runs on the pair and its first issue becomes
 *      the error before anything is attached (recommended_policy,
 *      compatible_policies in details, as the reference does);
 *   2. resolve both selectors against the target (src/resolve), and the
 *      target's PID namespace into the BPF filter;
 *   3. the sources (the eBPF collectors of the host endpoints) and one
 *      bounded capture (xp_live_run: the stopping, cut and loss rules of
 *      src/collect/live_source.h); --samples stops once the correlator
 *      pairs enough events of the merged capture, --duration-ms on time
 *      from arming, --timeout-ms bounds the whole wait.
 * The startup slack of the contract: a target already inside an event
 * when probes arm leaves an end without a start (or a start without an
 * end); the policies count those as unmatched, never as pairs, and the
 * samples rule only counts pairs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/env_hooks.h"
#include "../../common/parse.h"
#include "../collect/live.h"
#include "../checks/validate_checks.h"
#include "measure.h"
#include "../process/namespaces.h"

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

/*
 * Step 1b: measure runs validate (read-only) and turns its first issue into
 * the error, as the contract says ("Callers must stop on valid: false"):
 * the issue's code and message, recoverable, with recommended_policy
 * (kebab-case) and compatible_policies (snake_case, the MatchPolicy enum)
 * in details (peer notes 0.7).  A missing eBPF capability is therefore
 * PERMISSION_DENIED (exit 4), a policy the strict validate-time rules
 * refuse INVALID_CORRELATION_POLICY, before anything touches the target.
 */
static int validate_first(struct xp_measure_req *req, struct xp_warnings *ws, struct xp_error *err)
{
	struct xp_validate_opts vo = { .correlator_mask = xp_policy_compatible,
				       .unsafe_offset = req->cli->unsafe_offset };
	enum xp_policy list[XP_POLICY__COUNT];
	const char *names[XP_POLICY__COUNT];
	struct xp_validation v;
	size_t n, i;
	int rc;

	memset(&v, 0, sizeof(v));
	rc = xp_validate_pair(&req->target, &req->from, &req->to, req->policy, &vo, &v, err);
	if (rc)
		goto out;
	/* --unsafe-offset's warnings reach the result; validate's others
	 * (HEURISTIC_CORRELATION ...) are the correlator's to give */
	for (i = 0; i < v.warnings.n; i++) {
		const struct xp_warning *w = &v.warnings.v[i];

		if (strcmp(w->code, XP_WARN_UNVERIFIED_BOUNDARY) == 0 &&
		    xp_warnings_add(ws, w->code, w->message, w->details)) {
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
			goto out;
		}
	}
	if (v.nissues == 0)
		goto out;
	n = xp_policy_list(v.compatible, list);
	for (i = 0; i < n; i++)
		names[i] = xp_policy_snake(list[i]);
	xp_error_detail_str(err, "start_selector", req->from_text);
	xp_error_detail_str(err, "end_selector", req->to_text);
	xp_error_detail_str(err, "match_policy", xp_policy_kebab(req->policy));
	xp_error_detail_str(err, "recommended_policy", xp_policy_kebab(v.recommended));
	xp_error_detail_strv(err, "compatible_policies", names, n);
	if (v.issues[0].hint[0])
		xp_error_hint(err, "%s", v.issues[0].hint);
	else
		xp_error_hint(err, "rerun validate with an explicitly compatible policy");
	rc = xp_error_set(err, v.issues[0].code, true, "%s", v.issues[0].message);
out:
	xp_validation_free(&v);
	return rc;
}

int xp_measure_live_collect(struct xp_measure_req *req, struct xp_capture *c,
			    struct xp_live_outcome *out, struct xp_warnings *ws,
			    struct xp_error *err)
{
	uint64_t t0 = xp_live_now_ns();
	struct xp_live_source *src[XP_LIVE_MAX_SOURCES] = { 0 };
	struct xp_live_samples_rule rule;
	struct xp_live_ebpf_opts eo;
	struct xp_live_run_opts ro;
	struct xp_live_plan plan;
	struct xp_target_ns ns;
	size_t nsrc = 0, i;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&plan, 0, sizeof(plan));
	memset(&eo, 0, sizeof(eo));
	memset(&ro, 0, sizeof(ro));
	memset(&rule, 0, sizeof(rule));

	/* 1. what this build can collect; the policy */
	if (!xp_selector_is_host(&req->from) || !xp_selector_is_host(&req->to)) {
		rc = xp_live_plan_build(&req->target, &req->from, &req->to, &plan, err);
		if (!rc)
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "CUDA endpoint planned");
		goto out;
	}
	rc = validate_first(req, ws, err);
	if (rc)
		goto out;

	/* 2. resolution and the target filter */
	rc = xp_live_plan_build(&req->target, &req->from, &req->to, &plan, err);
	if (rc)
		goto out;
	if (plan.ep[plan.from_ep].kind == XP_LIVE_UPROBE &&
	    xp_selector_set_match_binary(&req->from, plan.ep[plan.from_ep].binary_path)) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	if (plan.ep[plan.to_ep].kind == XP_LIVE_UPROBE &&
	    xp_selector_set_match_binary(&req->to, plan.ep[plan.to_ep].binary_path)) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	memset(&ns, 0, sizeof(ns));
	rc = xp_target_namespaces(&req->target, &ns, err);
	if (rc)
		goto out;
	eo.target = &req->target;
	rc = xp_live_filter_init(&eo.filter, &req->target, ns.same_pidns, ns.pidns_dev,
				 ns.pidns_ino, ns.ns_pid);
	if (rc) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
				  "cannot read xprobe's own PID namespace (%s)", strerror(-rc));
		goto out;
	}

	/* 3. the sources and the capture */
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
	rc = xp_live_run(&ro, src, nsrc, c, &out->res, err);
	for (i = 0; i < nsrc; i++) {
		if (src[i]->kind == XP_LIVE_SRC_EBPF) {
			out->has_host = true;
			out->host = src[i]->st;
		} else {
			out->has_agent = true;
			out->agent = src[i]->st;
		}
	}
out:
	for (i = 0; i < nsrc; i++)
		xp_live_source_destroy(src[i]);
	xp_live_plan_free(&plan);
	return rc;
}
