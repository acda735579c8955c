/* SPDX-License-Identifier: Apache-2.0 */
/*
 * measure_live.c - live measurement modes of `measure --pid` / `--spec`.
 *
 * xp_measure_live orchestrates one live exact measurement; the work is in
 * src/collect (plan, BPF, capture loop) and src/correlate:
 *   1. CUDA endpoints -> CUPTI_NOT_AVAILABLE (the Agent is not in this
 *      build); then validate runs on the pair and its first issue becomes
 *      the error before anything is attached (recommended_policy,
 *      compatible_policies in details, as the reference does);
 *   2. resolve both selectors against the target (src/resolve), and the
 *      target's PID namespace into the BPF filter;
 *   3. one bounded capture (xp_live_capture): --samples stops once the
 *      correlator pairs enough events (the samples rule below), then the
 *      capture is cut at the event that completed the N-th pair, so what a
 *      capture holds never depends on poll timing; --duration-ms stops on
 *      time from arming; --timeout-ms bounds the whole wait;
 *   4. turn how the capture ended into the contract's answer:
 *        samples / duration      -> result "completed"
 *        timeout, >= 1 pair      -> result "timed_out"
 *        timeout, no pair        -> NO_MATCHED_SAMPLES, details timed_out
 *        SIGINT/SIGTERM, pairs   -> result "cancelled"; none -> NO_MATCHED_SAMPLES
 *        max_events reached      -> EVENT_RATE_TOO_HIGH (duration capture,
 *                                   or samples not reached within the bound)
 *        target exited           -> TARGET_EXITED (exit 3)
 *        ring drops              -> EVENTS_DROPPED (the correlator's check)
 *      Every failure after collection writes --events-out and names it.
 *   A ring loss makes the capture EVENTS_DROPPED unless, for a samples
 *   capture, every lost record came after the stopping point (the BPF
 *   side records the earliest loss's timestamp): then no event of the
 *   capture was lost, and collection.host still counts the losses.
 *   The startup slack of the contract: a target already inside an event
 *   when probes arm leaves an end without a start (or a start without an
 *   end); the policies count those as unmatched, never as pairs, and the
 *   samples rule only counts pairs.
 *
 * --cpu-sample and --syscall-aggregate live in their own files; --aggregate
 * (CUDA activity inventory) needs the Agent: refused, not in this build
 * (below).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/env_hooks.h"
#include "../../common/parse.h"
#include "../collect/live.h"
#include "../resolve/resolve.h"
#include "../checks/validate_checks.h"
#include "measure.h"
#include "../process/namespaces.h"

/* Below this many events the samples rule correlates every round. */
#define LIVE_CHEAP_EVENTS 4096
/* Otherwise it waits for 1/8 more events or this long, whichever first. */
#define LIVE_RECHECK_NS 20000000ull

struct live_ctx {
	struct xp_measure_req *req;
	int to_ep;
	size_t last_count;
	uint64_t last_ns;
};

static struct xp_correlate_opts corr_opts(const struct xp_measure_req *req)
{
	struct xp_correlate_opts o = {
		.policy = req->policy,
		.samples = req->samples,
		.duration_ns = req->duration_ms * 1000000ull,
		.max_events = req->max_events,
	};
	return o;
}

/* Pairs the correlator forms in @c now (0 when none). */
static int count_pairs(struct xp_measure_req *req, struct xp_capture *c, uint64_t *matched,
		       struct xp_error *err)
{
	struct xp_correlate_opts opts = corr_opts(req);
	struct xp_correlation corr;
	struct xp_error lerr = { 0 };
	int rc;

	*matched = 0;
	rc = xp_correlate(c, &req->from, &req->to, &opts, &corr, &lerr);
	if (!rc)
		*matched = corr.matched;
	else if (rc == -XPROBE_E_NO_MATCHED_SAMPLES || rc == -ECANCELED)
		rc = 0; /* cancelled before the window: live_partial says so */
	else
		xp_error_move(err, &lerr);
	xp_correlation_free(&corr);
	xp_error_clear(&lerr);
	return rc;
}

/* The samples rule (xp_live_opts.enough). */
static int live_enough(void *ctx, struct xp_capture *c, const uint64_t *per_endpoint,
		       struct xp_error *err)
{
	struct live_ctx *x = ctx;
	struct xp_measure_req *req = x->req;
	bool full = c->count >= req->max_events;
	uint64_t now = xp_live_now_ns(), matched;
	int rc;

	if (!req->samples)
		return 0;
	/* every pair uses its own end event */
	if (per_endpoint[x->to_ep] < req->samples)
		return 0;
	if (!full && c->count >= LIVE_CHEAP_EVENTS && c->count < x->last_count + x->last_count / 8 &&
	    now - x->last_ns < LIVE_RECHECK_NS)
		return 0;
	x->last_count = c->count;
	x->last_ns = now;
	rc = count_pairs(req, c, &matched, err);
	if (rc)
		return rc;
	return matched >= req->samples;
}

/* xp_live_trim's predicate: the prefix already holds --samples pairs. */
static int trim_ok(void *ctx, struct xp_capture *c)
{
	struct live_ctx *x = ctx;
	struct xp_error err = { 0 };
	uint64_t matched;
	int rc = count_pairs(x->req, c, &matched, &err);

	xp_error_clear(&err);
	if (rc)
		return rc;
	return matched >= x->req->samples;
}

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
 * Samples capture: cut it at its stopping point, then decide whether ring
 * losses touched it.  Returns 0, or negative from the trim's predicate.
 */
static int cut_at_stop(struct xp_capture *c, const struct xp_live_stats *st, struct live_ctx *x)
{
	size_t full = c->count;
	long n;

	c->dropped = 0;
	n = xp_live_trim(c, (size_t)x->req->samples, trim_ok, x);
	if (n < 0) {
		c->dropped = st->dropped;
		return (int)n;
	}
	if (st->dropped && (!c->count || st->first_drop_ts <= c->events[c->count - 1].timestamp_ns)) {
		/* a loss inside the window: keep everything for the artifact */
		c->count = full;
		c->dropped = st->dropped;
	}
	return 0;
}

static void host_block(const struct xp_live_stats *st, const struct xp_capture *c,
		       struct xp_host_collection *h)
{
	h->record_capacity = st->capacity;
	h->observed_records = st->observed;
	h->retained_records = c->count;
	h->dropped_records = st->dropped;
	h->buffer_utilization = st->capacity ? (double)c->count / (double)st->capacity : 0.0;
}

static void stats_details(struct xp_error *err, const struct xp_live_stats *st,
			  const struct xp_capture *c)
{
	xp_error_detail_u64(err, "host_events", c->count);
	xp_error_detail_u64(err, "cuda_events", 0);
	xp_error_detail_u64(err, "observed_records", st->observed);
	xp_error_detail_u64(err, "dropped_events", st->dropped);
	xp_error_detail_u64(err, "max_events", st->capacity);
}

static void format_hint(const struct xp_measure_req *req, struct xp_error *err)
{
	if (req->cli->format && !req->events_out && err->code != XPROBE_E_TRACE_EXPORT_FAILED)
		xp_error_hint(err, "--format also requires --events-out");
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
static int validate_first(struct xp_measure_req *req, struct xp_warnings *ws,
			  struct xp_error *err)
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

/* The capture ended without the bound being met: the contract's error. */
static int live_failure(struct xp_measure_req *req, struct xp_capture *c,
			const struct xp_live_stats *st, struct xp_error *err)
{
	int rc;

	switch (st->stop) {
	case XP_LIVE_STOP_TARGET_EXITED:
		xp_target_detail(err, &req->target);
		stats_details(err, st, c);
		xp_error_hint(err, "the target exited before the measurement's bound was met; measure a running process");
		if (c->count)
			xp_error_hint(err, "the events captured before it exited are in the events-out artifact when --events-out is given");
		rc = xp_error_set(err, XPROBE_E_TARGET_EXITED, true,
				  "target process %u exited during the live capture (%zu events captured)",
				  req->target.pid, c->count);
		break;
	case XP_LIVE_STOP_FULL:
		stats_details(err, st, c);
		xp_error_detail_u64(err, "observed_events", st->observed);
		xp_error_detail_u64(err, "record_capacity", st->capacity);
		xp_error_hint(err, "narrow the selectors or explicitly increase max-events");
		if (req->samples) {
			xp_error_detail_u64(err, "samples", req->samples);
			rc = xp_error_set(err, XPROBE_E_EVENT_RATE_TOO_HIGH, true,
					  "capture reached its configured limit of %llu records before %llu samples matched",
					  (unsigned long long)st->capacity,
					  (unsigned long long)req->samples);
		} else {
			rc = xp_error_set(err, XPROBE_E_EVENT_RATE_TOO_HIGH, true,
					  "capture reached its configured limit of %llu records within --duration-ms",
					  (unsigned long long)st->capacity);
		}
		break;
	default:
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "live capture ended unexpectedly (%s)",
				  xp_live_stop_name(st->stop));
		break;
	}
	xp_measure_artifact_on_error(req, c, err);
	format_hint(req, err);
	return rc;
}

/* Timeout or signal with the capture so far: a result when it pairs. */
static int live_partial(struct xp_measure_req *req, struct xp_capture *c,
			const struct xp_live_stats *st, const struct xp_host_collection *host,
			const struct xp_warnings *ws, struct xp_error *err)
{
	bool timeout = st->stop == XP_LIVE_STOP_TIMEOUT;
	uint64_t matched = 0;
	int rc;

	if (!c->dropped) {
		rc = count_pairs(req, c, &matched, err);
		if (rc) {
			xp_measure_artifact_on_error(req, c, err);
			format_hint(req, err);
			return rc;
		}
	}
	if (matched || c->dropped)
		return xp_measure_finish(req, c, timeout ? "timed_out" : "cancelled", host, ws);

	xp_error_detail_str(err, "start_selector", req->from_text);
	xp_error_detail_str(err, "end_selector", req->to_text);
	xp_error_detail_str(err, "match_policy", xp_policy_kebab(req->policy));
	xp_error_detail_u64(err, "captured_events", c->count);
	xp_error_detail_u64(err, "host_events", c->count);
	xp_error_detail_u64(err, "cuda_events", 0);
	if (timeout) {
		xp_error_detail_bool(err, "timed_out", true);
		xp_error_detail_u64(err, "timeout_ms", req->timeout_ms);
		xp_error_hint(err, "make the target execute the selected events while measuring, or raise --timeout-ms");
		rc = xp_error_set(err, XPROBE_E_NO_MATCHED_SAMPLES, true,
				  "no event pairs matched before the live measurement timeout (host events: %zu, CUDA events: 0)",
				  c->count);
	} else {
		xp_error_detail_bool(err, "cancelled", true);
		xp_error_detail_str(err, "signal", strsignal(st->signo));
		xp_error_hint(err, "the measurement was interrupted before any pair matched; run it again");
		rc = xp_error_set(err, XPROBE_E_NO_MATCHED_SAMPLES, true,
				  "measurement cancelled by signal %d before any event pair matched (host events: %zu, CUDA events: 0)",
				  st->signo, c->count);
	}
	xp_error_hint(err, "inspect the events-out artifact, then adjust selectors or choose an explicitly compatible policy");
	xp_measure_artifact_on_error(req, c, err);
	format_hint(req, err);
	return rc;
}

int xp_measure_live(struct xp_measure_req *req, struct xp_error *err)
{
	uint64_t t0 = xp_live_now_ns();
	struct xp_host_collection host;
	struct xp_live_stats st;
	struct xp_warnings ws = { 0 };
	struct xp_live_plan plan;
	struct xp_live_opts o;
	struct xp_target_ns ns;
	struct xp_capture c;
	struct live_ctx x;
	int rc;

	memset(&plan, 0, sizeof(plan));
	memset(&o, 0, sizeof(o));
	memset(&x, 0, sizeof(x));
	xp_capture_init(&c, req->max_events);

	/* 1. what this build can collect; the policy */
	if (!xp_selector_is_host(&req->from) || !xp_selector_is_host(&req->to)) {
		rc = xp_live_plan_build(&req->target, &req->from, &req->to, &plan, err);
		if (!rc)
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "CUDA endpoint planned");
		goto out;
	}
	rc = validate_first(req, &ws, err);
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
	o.target = &req->target;
	rc = xp_live_filter_init(&o.filter, &req->target, ns.same_pidns, ns.pidns_dev,
				 ns.pidns_ino, ns.ns_pid);
	if (rc) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
				  "cannot read xprobe's own PID namespace (%s)", strerror(-rc));
		goto out;
	}

	/* 3. the capture */
	x.req = req;
	x.to_ep = plan.to_ep;
	o.endpoints = plan.ep;
	o.nendpoints = plan.n;
	o.max_events = req->max_events;
	o.samples = req->samples;
	o.ring_bytes = test_ring_bytes();
	o.first_read_delay_ms = test_first_read_delay_ms();
	o.duration_ns = req->duration_ms * 1000000ull;
	o.deadline_ns = t0 + req->timeout_ms * 1000000ull;
	o.enough = live_enough;
	o.enough_ctx = &x;
	o.enough_endpoint = plan.to_ep;
	rc = xp_live_capture(&o, &c, &st, err);
	if (rc) {
		if (c.count) {
			stats_details(err, &st, &c);
			xp_measure_artifact_on_error(req, &c, err);
		}
		format_hint(req, err);
		goto out;
	}
	if (st.unknown) {
		stats_details(err, &st, &c);
		xp_error_detail_u64(err, "unknown_records", st.unknown);
		xp_error_hint(err, "rebuild xprobe: its BPF programs and collector disagree on the record layout");
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
				  "the BPF programs wrote %llu records this collector cannot decode",
				  (unsigned long long)st.unknown);
		xp_measure_artifact_on_error(req, &c, err);
		goto out;
	}

	/* 4. the answer */
	switch (st.stop) {
	case XP_LIVE_STOP_ENOUGH:
		rc = cut_at_stop(&c, &st, &x);
		if (rc) {
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
					  "cutting the capture at its stopping point failed (%d)", rc);
			goto out;
		}
		/* fall through */
	case XP_LIVE_STOP_DURATION:
		host_block(&st, &c, &host);
		rc = xp_measure_finish(req, &c, "completed", &host, &ws);
		break;
	case XP_LIVE_STOP_TIMEOUT:
	case XP_LIVE_STOP_SIGNAL:
		host_block(&st, &c, &host);
		rc = live_partial(req, &c, &st, &host, &ws, err);
		break;
	case XP_LIVE_STOP_FULL:
	case XP_LIVE_STOP_TARGET_EXITED:
		rc = live_failure(req, &c, &st, err);
		break;
	}
out:
	xp_live_plan_free(&plan);
	xp_capture_free(&c);
	xp_warnings_free(&ws);
	return rc;
}

/*
 * --aggregate (the contract's CUDA activity inventory, AggregateInventory-
 * Result) needs the in-process CUDA Agent: not in this build.  cmd_measure
 * refuses it before any other check, so no command line with --aggregate
 * ever measures something else or produces a document.
 */
int xp_measure_cuda_aggregate(const struct xp_cli *cli, struct xp_error *err)
{
	(void)cli;
	xp_error_detail_str(err, "flag", "--aggregate");
	xp_error_hint(err, "CUDA activity inventories need the xprobe CUDA Agent, which this build does not drive");
	xp_error_hint(err, "for host inventories use --cpu-sample or --syscall-aggregate");
	return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
			    "--aggregate (CUDA activity inventory) is not in this build");
}
