/* SPDX-License-Identifier: Apache-2.0 */
/*
 * measure.c - `xprobe measure`: mode selection, early checks, completed
 * inputs, specs, and everything after collection: correlate, write the
 * --events-out artifact, render, pick the exit code.  Live collection
 * (measure_live.c -> src/collect) only returns a capture, its counters
 * and why it stopped, or an error; the inventories live in their own
 * files.  The option rules of the modes run here (--spec, --input, the
 * latency result's --hist) are at the end, with measure's syntax check
 * (mode_rules.h); each other mode's are in its own file.
 *
 * Early-error order follows the contract (docs/contract.md, "measure's
 * order of checks"):
 * spec -> missing from/to/match -> unknown policy -> mode conflicts
 * (--pid with --input is INVALID_EVENT_SELECTOR, exit 1, not a usage
 * error) -> limits; "--format without --events-out" is reported after the
 * run.  What this build does not have is refused, never ignored:
 * --agent / --cupti-socket are used by live measurements with a cuda:
 * endpoint and refused without one.  --aggregate (and an aggregate spec)
 * is measure_aggregate.c's once the endpoints are parsed.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/atomic_file.h"
#include "../../common/cancel.h"
#include "../../common/json.h"
#include "../../common/readfile.h"
#include "../capture/capture_io.h"
#include "../capture/spec.h"
#include "../inventory/explain_pairs.h"
#include "../live/live_sched.h"
#include "../live/uprobe_link.h"
#include "histogram.h"
#include "inventory.h"
#include "measure.h"
#include "mode_rules.h"
#include "report_out.h"

/* What every cancelled document's details say (as the live path's). */
static void cancel_details(struct xp_error *err, const char *phase)
{
	xp_error_detail_bool(err, "cancelled", true);
	xp_error_detail_str(err, "phase", phase);
	xp_error_detail_str(err, "signal", strsignal(xpc_cancel_signo()));
}

/* Write the artifact for a failed measurement and add its details to
 * @err (or turn @err into TRACE_EXPORT_FAILED when writing fails). */
static void artifact_on_error(struct xp_measure_req *req, const struct xp_capture *c,
			      struct xp_error *err)
{
	struct xp_error werr = { 0 };
	int rc;

	req->report_capture = c; /* --report too, with the final error */
	if (!req->events_out)
		return;
	rc = xp_export_write(req->events_out, req->format, c, req->session_id, &werr);
	if (rc) {
		char msg[XP_ERR_MESSAGE_MAX];

		req->artifact_failed = true;
		snprintf(msg, sizeof(msg), "%s", werr.message);
		xp_error_detail_str(err, "original_error_code", xprobe_errname(err->code));
		xp_error_detail_str(err, "path", req->events_out);
		if (xp_error_detail_get(&werr, "file_type")) /* a refused non-regular file */
			xp_error_detail_raw(err, "file_type",
					    xp_error_detail_get(&werr, "file_type"));
		if (xpc_cancel_signo())
			cancel_details(err, "export");
		xp_error_hint(err,
			      "the measurement also failed; rerun after fixing artifact output");
		xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "%s", msg);
		xp_error_clear(&werr);
		return;
	}
	xp_error_detail_str(err, "artifact_path", req->events_out);
	xp_error_detail_str(err, "artifact_format", xp_export_format_name(req->format));
	xp_error_detail_u64(err, "artifact_event_count", c->count);
}

/*
 * The live ring's counters are not a field of the contract's closed
 * collection object; losses after a samples capture's stopping point (no
 * event of the capture was lost, else the result would be EVENTS_DROPPED)
 * must still not pass silently: @out = @extra plus the warning
 * HOST_RECORDS_LOST_AFTER_STOP with the counters.  0 or -ENOMEM.
 */
static int host_loss_warning(const struct xp_host_collection *h, const struct xp_warnings *extra,
			     struct xp_warnings *out)
{
	char msg[160];
	size_t i;

	for (i = 0; extra && i < extra->n; i++)
		if (xp_warnings_add(out, extra->v[i].code, extra->v[i].message,
				    extra->v[i].details))
			return -ENOMEM;
	snprintf(
		msg, sizeof(msg),
		"the host ring lost %llu records after the capture's stopping point; no event of the capture was lost",
		(unsigned long long)h->dropped_records);
	/* keys sorted, as every details object */
	return xp_warnings_add_u64(out, "HOST_RECORDS_LOST_AFTER_STOP", msg, "dropped_records",
				   h->dropped_records, "observed_records", h->observed_records,
				   "record_capacity", h->record_capacity, "retained_records",
				   h->retained_records, (const char *)NULL);
}

/*
 * A signal (common/cancel.h) stopped @phase ("decode", "correlate",
 * "measure") before a result: @err becomes the document the live path
 * gives a cancelled capture without pairs -- NO_MATCHED_SAMPLES with
 * details.cancelled true, signal, phase and the events read so far.
 * Returns -code.
 */
static int cancelled(struct xp_measure_req *req, const char *phase, size_t events,
		     struct xp_error *err)
{
	int sig = xpc_cancel_signo();
	const char *what = strcmp(phase, "decode") == 0	   ? "decoding the inputs" :
			   strcmp(phase, "correlate") == 0 ? "correlating the capture" :
							     "preparing the measurement";

	xp_error_clear(err);
	if (req->from_text && req->to_text) {
		xp_error_detail_str(err, "start_selector", req->from_text);
		xp_error_detail_str(err, "end_selector", req->to_text);
		xp_error_detail_str(err, "match_policy", xp_policy_kebab(req->policy));
	}
	xp_error_detail_u64(err, "captured_events", events);
	cancel_details(err, phase);
	xp_error_hint(err, "the measurement was interrupted before it completed; run it again");
	if (req->events_out)
		xp_error_hint(err, "nothing was written to %s and no temporary file is left",
			      req->events_out);
	return xp_error_set(
		err, XPROBE_E_NO_MATCHED_SAMPLES, true,
		"measurement cancelled by signal %d while %s, before any event pair matched (%zu events read)",
		sig, what, events);
}

/* The artifact write stopped on the stop request: say so, not "check the
 * directory" (the export already removed its temporary). */
static int export_cancelled(struct xp_measure_req *req, struct xp_error *err)
{
	int sig = xpc_cancel_signo();

	xp_error_clear(err);
	xp_error_detail_str(err, "path", req->events_out);
	cancel_details(err, "export");
	xp_error_hint(
		err,
		"the artifact was not written and no temporary file is left; run the measurement again");
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, true,
			    "failed to write %s: cancelled by signal %d (%s)", req->events_out, sig,
			    strsignal(sig));
}

/*
 * A live capture that ended without a single event, from a target whose
 * children map the probed binary (measure_live.c found them): the work
 * may happen there (an nginx master's workers).  details.child_pids.
 */
static void children_hint(const struct xp_measure_req *req, const struct xp_capture *c,
			  struct xp_error *err)
{
	const struct xp_live_outcome *lo = req->live;
	char list[XP_CHILDREN_MAX * 12], json[XP_CHILDREN_MAX * 12];
	size_t i, off = 0, joff = 0;

	if (!lo || c->count || !lo->has_children || !lo->children.n)
		return;
	joff += (size_t)snprintf(json, sizeof(json), "[");
	for (i = 0; i < lo->children.n; i++) {
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%u", i ? ", " : "",
					lo->children.pid[i]);
		joff += (size_t)snprintf(json + joff, sizeof(json) - joff, "%s%u", i ? "," : "",
					 lo->children.pid[i]);
	}
	snprintf(json + joff, sizeof(json) - joff, "]");
	xp_error_detail_raw(err, "child_pids", json);
	if (lo->children_file[0])
		xp_error_hint(
			err,
			"PID %u captured no events, but its child process%s %s map%s %s: the work may happen there; measure one with --pid %u",
			req->target.pid, lo->children.n > 1 ? "es" : "", list,
			lo->children.n > 1 ? "" : "s", lo->children_file, lo->children.pid[0]);
	else
		xp_error_hint(
			err,
			"PID %u captured no events, but it has child process%s %s: the work may happen there; measure one with --pid %u",
			req->target.pid, lo->children.n > 1 ? "es" : "", list, lo->children.pid[0]);
}

/* --explain: the scheduler timeline after the capture's events. */
static void sched_extension(struct xpc_json *w, bool chrome, void *ctx)
{
	const struct xp_measure_req *req = ctx;

	xp_sched_timeline_write(w, xp_live_sched_timeline(req->live->sched), req->target.pid,
				chrome);
}

/* The artifact of a result: the whole capture, and in a Chrome trace the
 * pairs of @corr as complete events (docs/output.md); with --explain the
 * scheduler events too. */
static int export_result(struct xp_measure_req *req, const struct xp_capture *c,
			 const struct xp_correlation *corr, struct xp_error *err)
{
	struct xp_export_pairs p = {
		.name = req->name,
		.start_selector = req->from_text,
		.end_selector = req->to_text,
		.match_policy = xp_policy_kebab(req->policy),
	};
	struct xp_export_span *v = NULL;

	if (req->live && req->live->sched) {
		p.extension = sched_extension;
		p.extension_ctx = req;
	}
	size_t i;
	int rc;

	if (req->format == XP_EXPORT_CHROME && corr->npairs) {
		v = calloc(corr->npairs, sizeof(*v));
		if (!v)
			return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		for (i = 0; i < corr->npairs; i++) {
			v[i].start = corr->pairs[i].start;
			v[i].end = corr->pairs[i].end;
			v[i].latency_ns = corr->pairs[i].latency_ns;
		}
		p.v = v;
		p.n = corr->npairs;
	}
	rc = xp_export_write_pairs(req->events_out, req->format, c, req->session_id, &p, err);
	free(v);
	return rc;
}

/*
 * The artifact could not be written at the end of a measurement that has
 * its result: the contract's answer is TRACE_EXPORT_FAILED, and the
 * result is not lost with it.  --json: the whole measurement-result
 * document goes into the error's details.result; the terminal view: the
 * result is printed first, the error after it.
 */
static void unsaved_result(struct xp_measure_req *req, const struct xp_measurement_view *view,
			   struct xp_error *err)
{
	struct xpc_buf b = { 0 };
	struct xpc_json w;

	xp_error_hint(err, "the measurement itself succeeded: its result is %s",
		      req->out.json ? "in details.result" : "printed above");
	if (!req->out.json) {
		xp_doc_measurement.human(stdout, view);
		fflush(stdout);
		return;
	}
	xpc_json_init_buf(&w, &b, 0);
	xp_doc_measurement.json(&w, view);
	if (xpc_json_finish(&w) == 0 && b.data)
		xp_error_detail_raw(err, "result", b.data);
	xpc_buf_free(&b);
}

/* Replace hint @i of @err with @text. */
static void replace_hint(struct xp_error *err, size_t i, const char *text)
{
	char *dup = strdup(text);

	if (!dup)
		return;
	free(err->hints[i]);
	err->hints[i] = dup;
}

/*
 * Hints that fit how the measurement ran.  The correlator and the selector
 * parser speak for every mode; here they are made true for this one: a
 * completed capture (--input, --spec) has no live target to validate
 * against, and a capture written nowhere has no events-out artifact to
 * inspect.
 */
static void fit_hints(const struct xp_measure_req *req, struct xp_error *err)
{
	bool live = req->pid != 0;
	size_t i;

	for (i = 0; i < err->nhints; i++) {
		const char *h = err->hints[i];

		if (!req->events_out && strstr(h, "inspect the events-out artifact"))
			replace_hint(
				err, i,
				"rerun with --events-out PATH to keep the captured events, inspect them, then adjust the selectors or choose an explicitly compatible policy");
		else if (!live && strstr(h, "run xprobe validate with the exact selector text"))
			replace_hint(
				err, i,
				"check the selector's grammar (xprobe(1), SELECTORS); validate needs a live --pid, a completed capture only the text");
		else if (!live && strstr(h, "compatible_policies from xprobe validate"))
			replace_hint(
				err, i,
				"exact pairs need an identifier both events carry (a thread, a correlation id, a range id); first-after, nearest or stack-nested pair by time or nesting");
	}
}

/* --format without --events-out, said under another failure. */
static void format_hint(const struct xp_measure_req *req, struct xp_error *err)
{
	if ((req->given & XP_OPT_FORMAT) && !req->events_out &&
	    err->code != XPROBE_E_TRACE_EXPORT_FAILED)
		xp_error_hint(err, "--format also requires --events-out");
}

/* The measurement's one correlation of @c (the correlator's own errors). */
static int correlate(struct xp_measure_req *req, const struct xp_capture *c,
		     struct xp_correlation *corr, struct xp_error *err)
{
	struct xp_correlate_opts opts = {
		.policy = req->policy,
		.samples = req->samples,
		.duration_ns = req->duration_ms * 1000000ull,
		.max_events = req->max_events,
	};

	memset(corr, 0, sizeof(*corr));
	return xp_correlate(c, &req->from, &req->to, &opts, corr, err);
}

static int read_sched_stack(void *ctx, int32_t id, uint64_t *ip, uint32_t max, uint32_t *n)
{
	return xp_live_sched_stack(ctx, id, ip, max, n);
}

/*
 * --explain in the exact modes: every evidence pair of @v intersected with
 * the scheduler timeline collected beside the capture, its slowest pairs'
 * stacks named.  0, or negative with @err filled (@x then holds nothing).
 */
static int explain_pairs(struct xp_measure_req *req, const struct xp_measurement_view *v,
			 struct xp_explained *x, struct xp_error *err)
{
	struct xp_live_sched *s = req->live->sched;
	uint32_t top = req->given & XP_OPT_EXPLAIN_TOP ? (uint32_t)req->explain_top :
							  XP_EX_TOP_DEFAULT;
	int rc;

	rc = xp_inv_explain_pairs(v->capture, v->corr, xp_live_sched_timeline(s), top, x);
	if (!rc)
		rc = xp_inv_explain_pairs_stacks(x, read_sched_stack, s, req->target.pid,
						 req->target.pid);
	if (rc) {
		xp_explained_free(x);
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	}
	return 0;
}

/*
 * Correlate @c (unless @done holds its correlation already: taken over),
 * write the artifact, render the result or the error.  @status:
 * "completed", "timed_out" or "cancelled"; @host: live counters or NULL;
 * @extra: warnings to append (NULL ok).  Returns the exit code.
 */
static int finish(struct xp_measure_req *req, struct xp_capture *c, const char *status,
		  const struct xp_host_collection *host, const struct xp_warnings *extra,
		  struct xp_correlation *done)
{
	struct xp_warnings all = { 0 };
	struct xp_explained x = { 0 }, *explained = NULL;
	struct xp_correlation corr;
	struct xp_error err = { 0 };
	int rc = 0, code = 1;

	if (done) {
		corr = *done;
		memset(done, 0, sizeof(*done));
	} else {
		rc = correlate(req, c, &corr, &err);
	}
	if (rc && xpc_cancel_signo()) {
		/* stopped: no artifact either, the caller asked to stop */
		rc = cancelled(req, "correlate", c->count, &err);
		goto fail;
	}
	if (rc) {
		if (err.code == XPROBE_E_NO_MATCHED_SAMPLES)
			children_hint(req, c, &err);
		artifact_on_error(req, c, &err);
		goto fail;
	}
	if ((req->given & XP_OPT_FORMAT) && !req->events_out) {
		rc = xp_error_set(&err, XPROBE_E_TRACE_EXPORT_FAILED, true,
				  "--format requires --events-out");
		xp_error_hint(&err, "add --events-out PATH or drop --format");
		goto fail;
	}
	if (host && host->dropped_records) {
		if (host_loss_warning(host, extra, &all)) {
			rc = xp_error_set(&err, XPROBE_E_INTERNAL, false, "out of memory");
			goto fail;
		}
		extra = &all;
	}
	{
		struct xp_measurement_view view = {
			.session_id = req->session_id,
			.status = status,
			.name = req->name,
			.start_selector = req->from_text,
			.end_selector = req->to_text,
			.capture = c,
			.corr = &corr,
			.extra_warnings = extra,
			.host = host,
			.hist = req->hist,
			.color = xp_out_color(&req->out, STDOUT_FILENO),
			.signo = req->live && req->live->res.stop == XP_LIVE_STOP_SIGNAL ?
					 req->live->res.signo :
					 0,
			.artifact_path = req->events_out,
			.artifact_format = req->events_out ? xp_export_format_name(req->format) : NULL,
			.report_path = req->report,
		};
		if (req->events_out) {
			rc = export_result(req, c, &corr, &err);
			if (rc && xpc_cancel_signo())
				rc = export_cancelled(req, &err);
			else if (rc)
				unsaved_result(req, &view, &err);
			if (rc)
				goto fail;
		}
		if (req->live && req->live->sched) {
			rc = explain_pairs(req, &view, &x, &err);
			if (rc)
				goto fail;
			explained = &x;
		}
		rc = xp_report_result(req, &view, explained, &err);
		if (rc)
			goto fail;
		if (explained) {
			struct xp_explained_view ev = { .m = &view, .x = explained,
							.t0 = req->live->res.t_armed_ns };

			code = xp_out_emit(&req->out, &xp_doc_explained, &ev);
		} else {
			code = xp_out_emit(&req->out, &xp_doc_measurement, &view);
		}
	}
	xp_explained_free(&x);
	xp_correlation_free(&corr);
	xp_warnings_free(&all);
	return code;
fail:
	format_hint(req, &err);
	fit_hints(req, &err);
	xp_report_failure(req, &err);
	code = xp_out_fail(&req->out, &err);
	xp_error_clear(&err);
	xp_explained_free(&x);
	xp_correlation_free(&corr);
	xp_warnings_free(&all);
	return code;
}

/* --- live measurements: the answer to how a capture ended ------------ */

static void host_block(const struct xp_live_source_stats *st, struct xp_host_collection *h)
{
	h->record_capacity = st->capacity;
	h->observed_records = st->observed;
	h->retained_records = st->retained;
	h->dropped_records = st->dropped;
	h->buffer_utilization = st->capacity ? (double)st->retained / (double)st->capacity : 0.0;
}

/* Events of the capture that are host (eBPF) events, and the others. */
static void count_events(const struct xp_capture *c, uint64_t *host, uint64_t *cuda)
{
	size_t i;

	*host = 0;
	for (i = 0; i < c->count; i++)
		*host += xp_event_is_host(&c->events[i]);
	*cuda = c->count - *host;
}

static void stats_details(struct xp_error *err, const struct xp_live_outcome *lo,
			  const struct xp_capture *c)
{
	uint64_t host, cuda, observed = 0, dropped = 0, capacity = 0;

	count_events(c, &host, &cuda);
	if (lo->has_host) {
		observed += lo->host.observed;
		dropped += lo->host.dropped;
		capacity = lo->host.capacity;
	}
	if (lo->has_agent) {
		observed += lo->agent.observed;
		dropped += lo->agent.dropped;
		capacity = lo->agent.capacity;
	}
	xp_error_detail_u64(err, "host_events", host);
	xp_error_detail_u64(err, "cuda_events", cuda);
	xp_error_detail_u64(err, "observed_records", observed);
	xp_error_detail_u64(err, "dropped_events", dropped);
	xp_error_detail_u64(err, "max_events", capacity);
}

/*
 * The ways to keep what a capture that ended in TARGET_EXITED or
 * EVENT_RATE_TOO_HIGH held (the contract allows no partial result): the
 * artifact and `measure --input`, or --histogram's in-kernel aggregation.
 */
static void keep_capture_hints(const struct xp_measure_req *req, const struct xp_capture *c,
			       struct xp_error *err)
{
	const char *pol = xp_policy_kebab(req->policy);

	if (req->events_out && c->count && req->format == XP_EXPORT_CHROME)
		xp_error_hint(
			err,
			"the %zu captured events are in the Chrome trace %s; write them with --format jsonl to measure them again with xprobe measure --input",
			c->count, req->events_out);
	else if (req->events_out && c->count)
		xp_error_hint(
			err,
			"the %zu captured events are in %s: measure them with xprobe measure --input %s --from '%s' --to '%s' --match %s",
			c->count, req->events_out, req->events_out, req->from_text, req->to_text,
			pol);
	else if (c->count)
		xp_error_hint(
			err,
			"the %zu captured events were not kept: add --events-out PATH to write them, then measure them with xprobe measure --input PATH",
			c->count);
	xp_error_hint(
		err,
		"measure --histogram aggregates latencies in the kernel, with no per-event stream, until the duration ends or the target exits");
}

/* The capture ended without the bound being met: the contract's error. */
static int live_failure(struct xp_measure_req *req, struct xp_capture *c,
			const struct xp_live_outcome *lo, struct xp_error *err)
{
	uint64_t observed = lo->host.observed + lo->agent.observed;
	uint64_t capacity = lo->has_host ? lo->host.capacity : lo->agent.capacity;
	int rc;

	switch (lo->res.stop) {
	case XP_LIVE_STOP_TARGET_EXITED:
		xp_target_detail(err, &req->target);
		stats_details(err, lo, c);
		xp_error_hint(
			err,
			"the target exited before the measurement's bound was met; measure a running process");
		rc = xp_error_set(
			err, XPROBE_E_TARGET_EXITED, true,
			"target process %u exited during the live capture (%zu events captured)",
			req->target.pid, c->count);
		break;
	case XP_LIVE_STOP_FULL:
		stats_details(err, lo, c);
		xp_error_detail_u64(err, "observed_events", observed);
		xp_error_detail_u64(err, "record_capacity", capacity);
		xp_error_hint(err, "narrow the selectors or explicitly increase max-events");
		if (req->samples) {
			xp_error_detail_u64(err, "samples", req->samples);
			rc = xp_error_set(
				err, XPROBE_E_EVENT_RATE_TOO_HIGH, true,
				"capture reached its configured limit of %llu records before %llu samples matched",
				(unsigned long long)capacity, (unsigned long long)req->samples);
		} else {
			rc = xp_error_set(
				err, XPROBE_E_EVENT_RATE_TOO_HIGH, true,
				"capture reached its configured limit of %llu records within --duration-ms",
				(unsigned long long)capacity);
		}
		break;
	default:
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
				  "live capture ended unexpectedly (%s)",
				  xp_live_stop_name(lo->res.stop));
		break;
	}
	artifact_on_error(req, c, err);
	/* (a failed artifact write is TRACE_EXPORT_FAILED: nothing was kept) */
	if (err->code == XPROBE_E_TARGET_EXITED || err->code == XPROBE_E_EVENT_RATE_TOO_HIGH)
		keep_capture_hints(req, c, err);
	format_hint(req, err);
	return rc;
}

/*
 * The correlation of a capture that stopped early: 1 with @corr when it
 * pairs (the result reuses it), 0 when it forms no pair (or the correlator
 * was cancelled: the stop reason says why), negative with @err filled.
 */
static int pairs_so_far(struct xp_measure_req *req, const struct xp_capture *c,
			struct xp_correlation *corr, struct xp_error *err)
{
	struct xp_error lerr = { 0 };
	int rc = correlate(req, c, corr, &lerr);

	if (!rc && corr->matched) {
		xp_error_clear(&lerr);
		return 1;
	}
	xp_correlation_free(corr);
	if (rc == -XPROBE_E_NO_MATCHED_SAMPLES || rc == -ECANCELED || !rc)
		rc = 0;
	else
		xp_error_move(err, &lerr);
	xp_error_clear(&lerr);
	return rc;
}

/* Timeout or signal with the capture so far: a result when it pairs. */
static int live_partial(struct xp_measure_req *req, struct xp_capture *c,
			const struct xp_live_outcome *lo, const struct xp_host_collection *host,
			const struct xp_warnings *ws, struct xp_error *err)
{
	bool timeout = lo->res.stop == XP_LIVE_STOP_TIMEOUT;
	struct xp_correlation corr;
	uint64_t nhost, ncuda;
	int rc;

	/* a lossy capture: the correlator's EVENTS_DROPPED, through finish */
	if (c->dropped)
		return finish(req, c, timeout ? "timed_out" : "cancelled", host, ws, NULL);
	rc = pairs_so_far(req, c, &corr, err);
	if (rc > 0)
		return finish(req, c, timeout ? "timed_out" : "cancelled", host, ws, &corr);
	if (rc < 0) {
		artifact_on_error(req, c, err);
		format_hint(req, err);
		return rc;
	}

	count_events(c, &nhost, &ncuda);
	xp_error_detail_str(err, "start_selector", req->from_text);
	xp_error_detail_str(err, "end_selector", req->to_text);
	xp_error_detail_str(err, "match_policy", xp_policy_kebab(req->policy));
	xp_error_detail_u64(err, "captured_events", c->count);
	xp_error_detail_u64(err, "host_events", nhost);
	xp_error_detail_u64(err, "cuda_events", ncuda);
	if (timeout) {
		xp_error_detail_bool(err, "timed_out", true);
		xp_error_detail_u64(err, "timeout_ms", req->timeout_ms);
		xp_error_hint(
			err,
			"make the target execute the selected events while measuring, or raise --timeout-ms");
		rc = xp_error_set(
			err, XPROBE_E_NO_MATCHED_SAMPLES, true,
			"no event pairs matched before the live measurement timeout (host events: %llu, CUDA events: %llu)",
			(unsigned long long)nhost, (unsigned long long)ncuda);
	} else {
		xp_error_detail_bool(err, "cancelled", true);
		xp_error_detail_str(err, "signal", strsignal(lo->res.signo));
		xp_error_hint(
			err,
			"the measurement was interrupted before any pair matched; run it again");
		rc = xp_error_set(
			err, XPROBE_E_NO_MATCHED_SAMPLES, true,
			"measurement cancelled by signal %d before any event pair matched (host events: %llu, CUDA events: %llu)",
			lo->res.signo, (unsigned long long)nhost, (unsigned long long)ncuda);
	}
	xp_error_hint(
		err,
		"inspect the events-out artifact, then adjust selectors or choose an explicitly compatible policy");
	children_hint(req, c, err);
	artifact_on_error(req, c, err);
	format_hint(req, err);
	return rc;
}

/*
 * One live exact measurement: collect (measure_live.c), then turn how the
 * capture ended into the contract's answer:
 *   samples / duration      -> result "completed"
 *   timeout, >= 1 pair      -> result "timed_out"
 *   timeout, no pair        -> NO_MATCHED_SAMPLES, details timed_out
 *   SIGINT/SIGTERM, pairs   -> result "cancelled"; none -> NO_MATCHED_SAMPLES
 *   max_events reached      -> EVENT_RATE_TOO_HIGH (duration capture,
 *                              or samples not reached within the bound)
 *   target exited           -> TARGET_EXITED (exit 3)
 *   losses in the window    -> EVENTS_DROPPED (the correlator's check)
 * Every failure after collection writes --events-out and names it.
 * Returns the exit code of an emitted document, or negative: an error in
 * @err for cmd_measure to emit.
 */
static int measure_live(struct xp_measure_req *req, struct xp_error *err)
{
	struct xp_host_collection host, *hostp = NULL;
	struct xp_warnings ws = { 0 };
	struct xp_live_outcome lo;
	struct xp_capture c;
	int rc;

	xp_capture_init(&c, req->max_events);
	if (req->from.kind == XP_SEL_UPROBE || req->to.kind == XP_SEL_UPROBE)
		xp_uprobe_warm_start(); /* beside validation and the load */
	rc = xp_measure_live_collect(req, &c, &lo, &ws, err);
	if (rc) {
		if (c.count) {
			stats_details(err, &lo, &c);
			artifact_on_error(req, &c, err);
		}
		format_hint(req, err);
		goto out;
	}
	if (c.unknown_records) {
		bool agent = lo.has_agent && lo.agent.unknown;

		stats_details(err, &lo, &c);
		xp_error_detail_u64(err, "unknown_records", c.unknown_records);
		if (agent)
			xp_error_hint(err, "rebuild xprobe and libxprobe from the same release");
		else
			xp_error_hint(
				err,
				"rebuild xprobe: its BPF programs and collector disagree on the record layout");
		/* the Agent's: a release skew, as the reference answers unknown
		 * capture records; the BPF programs': our own defect */
		rc = xp_error_set(err, agent ? XPROBE_E_TRACE_EXPORT_FAILED : XPROBE_E_INTERNAL,
				  false, "%s %llu records this collector cannot decode",
				  agent ? "the Agent sent" : "the BPF programs wrote",
				  (unsigned long long)c.unknown_records);
		artifact_on_error(req, &c, err);
		goto out;
	}
	if (lo.has_host) {
		host_block(&lo.host, &host);
		hostp = &host;
	}
	req->live = &lo;
	switch (lo.res.stop) {
	case XP_LIVE_STOP_ENOUGH:
	case XP_LIVE_STOP_DURATION:
		rc = finish(req, &c, "completed", hostp, &ws, NULL);
		break;
	case XP_LIVE_STOP_TIMEOUT:
	case XP_LIVE_STOP_SIGNAL:
		rc = live_partial(req, &c, &lo, hostp, &ws, err);
		break;
	case XP_LIVE_STOP_FULL:
	case XP_LIVE_STOP_TARGET_EXITED:
		rc = live_failure(req, &c, &lo, err);
		break;
	}
out:
	/* before the capture goes; a stop request's error is rewritten by
	 * cmd_measure (cancelled()), so no page shows the one before it */
	if (rc < 0 && rc != -ECANCELED) {
		fit_hints(req, err);
		xp_report_failure(req, err);
	}
	req->report_capture = NULL;
	req->live = NULL; /* lo is ours */
	/* the result (or the failure page) is out: the probes go now */
	xp_measure_live_teardown(&lo);
	xp_live_sched_free(lo.sched);
	xp_capture_free(&c);
	xp_warnings_free(&ws);
	return rc;
}

static int check_limits(const struct xp_measure_req *req, struct xp_error *err)
{
	bool has_samples = req->given & XP_OPT_SAMPLES;
	bool has_duration = req->given & XP_OPT_DURATION;

	if ((has_samples && req->samples == 0) || (has_duration && req->duration_ms == 0) ||
	    req->max_events == 0 || (!has_samples && !has_duration)) {
		/* say which bound is missing or zero, and its flag */
		if (!has_samples && !has_duration) {
			xp_error_detail_str(err, "missing", "--samples or --duration-ms");
			xp_error_hint(
				err,
				"add --samples N (stop after N pairs) or --duration-ms MS (a window)");
		}
		if (has_samples && req->samples == 0)
			xp_error_detail_u64(err, "samples", 0);
		if (has_duration && req->duration_ms == 0)
			xp_error_detail_u64(err, "duration_ms", 0);
		if (req->max_events == 0)
			xp_error_detail_u64(err, "max_events", 0);
		xp_error_hint(err,
			      "set positive samples or duration, timeout, and max-events bounds");
		return xp_error_set(
			err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
			"measurement requires a positive --samples or --duration-ms bound and a positive --max-events");
	}
	if (req->explain && (req->given & XP_OPT_EXPLAIN_TOP) && req->explain_top > XP_EX_TOP_MAX)
		return xp_inventory_bound(err, "explain-top", req->explain_top, 0, XP_EX_TOP_MAX,
					  "slowest pairs kept with their stacks");
	if (req->timeout_ms == 0) {
		xp_error_detail_u64(err, "timeout_ms", 0);
		xp_error_hint(err,
			      "set positive samples or duration, timeout, and max-events bounds");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "--timeout-ms must be positive");
	}
	return 0;
}

static int parse_endpoints(struct xp_measure_req *req, const char *policy_text,
			   struct xp_error *err)
{
	int p, rc;

	p = xp_policy_parse(policy_text);
	if (p < 0) {
		xp_error_detail_str(err, "match_policy", policy_text);
		if (xp_policy_closest(policy_text))
			xp_error_hint(err, "did you mean '%s'?", xp_policy_closest(policy_text));
		xp_error_hint(err, "use exact, first-after, nearest, stack-nested or stream-order");
		return xp_error_set(err, XPROBE_E_INVALID_CORRELATION_POLICY, true,
				    "unsupported measurement correlation policy \"%s\"",
				    policy_text);
	}
	req->policy = (enum xp_policy)p;
	rc = xp_selector_parse(req->from_text, &req->from, err);
	if (rc) {
		xp_error_hint(err, "run xprobe validate with the exact selector text");
		return rc;
	}
	rc = xp_selector_parse(req->to_text, &req->to, err);
	if (rc)
		xp_error_hint(err, "run xprobe validate with the exact selector text");
	return rc;
}

/*
 * --agent (the Agent library to inject) and --cupti-socket (the socket of
 * an Agent already serving in the target) are used by live measurements
 * with a cuda: endpoint; with host endpoints only there is nothing to use
 * them for, and they are refused rather than silently unused.  (With
 * --input the reference's "requires --pid" error stands:
 * measure_completed.)
 */
static int check_agent_flags(const struct xp_measure_req *req, struct xp_error *err)
{
	const char *flag = req->agent ? "--agent" : req->cupti_socket ? "--cupti-socket" : NULL;

	if (!flag || !xp_selector_is_host(&req->from) || !xp_selector_is_host(&req->to))
		return 0;
	xp_error_detail_str(err, "flag", flag);
	xp_error_detail_str(err, "path", req->agent ? req->agent : req->cupti_socket);
	xp_error_hint(
		err,
		"drop %s: host endpoints (uprobe:, syscall:, tracepoint:, python:) need no Agent",
		flag);
	return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
			    "%s applies to measurements with a cuda: endpoint", flag);
}

static int measure_completed(struct xp_measure_req *req, struct xp_error *err)
{
	struct xp_warnings dups = { 0 };
	struct xp_capture c;
	int rc, code;

	if (req->cupti_socket) {
		xp_error_hint(err, "--cupti-socket applies to live measurements only");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "--cupti-socket requires --pid");
	}
	if (req->agent) {
		xp_error_hint(err, "--agent applies to live measurements only");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "--agent requires --pid");
	}
	if ((rc = check_limits(req, err)))
		return rc;
	xp_capture_init(&c, req->max_events);
	rc = xp_inputs_load(req->inputs, req->ninputs, &c, err);
	if (rc && xpc_cancel_signo())
		rc = cancelled(req, "decode", c.count, err);
	if (rc) {
		xp_capture_free(&c);
		return rc;
	}
	if (c.record_limit_reached) {
		/* an Agent capture file says its own bound and counts, as a live
		 * Agent capture's error does; a host capture only its events */
		uint64_t capacity = c.cupti.present ? c.cupti.record_capacity : c.count;

		xp_error_detail_u64(err, "record_capacity", capacity);
		if (c.cupti.present) {
			uint64_t retained = xp_capture_cuda_events(&c);

			xp_error_detail_u64(err, "observed_records",
					    retained + c.cupti.dropped_records);
			xp_error_detail_u64(err, "retained_records", retained);
			xp_error_detail_u64(err, "dropped_records", c.cupti.dropped_records);
		}
		xp_error_hint(err, "narrow the selectors or explicitly increase max-events");
		rc = xp_error_set(err, XPROBE_E_EVENT_RATE_TOO_HIGH, true,
				  "capture reached its configured limit of %llu records",
				  (unsigned long long)capacity);
		artifact_on_error(req, &c, err);
		fit_hints(req, err);
		xp_report_failure(req, err);
		xp_capture_free(&c);
		return rc;
	}
	if (c.duplicates_dropped) {
		char msg[200];

		snprintf(
			msg, sizeof(msg),
			"%llu events identical in every field to events of another input were kept once",
			(unsigned long long)c.duplicates_dropped);
		if (xp_warnings_add_u64(&dups, "DUPLICATE_EVENTS", msg, "dropped_events",
					c.duplicates_dropped, "inputs", (uint64_t)req->ninputs,
					(const char *)NULL)) {
			xp_capture_free(&c);
			return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		}
	}
	code = finish(req, &c, "completed", NULL, &dups, NULL);
	xp_warnings_free(&dups);
	xp_capture_free(&c);
	return code;
}

/*
 * An output that names an input or the other output would replace it:
 * `--events-out in.jsonl` loses the capture being measured, `--report`
 * and `--events-out` on one path keep only the last one written.
 */
static int output_clash(struct xp_error *err, const char *flag, const char *path, const char *other)
{
	xp_error_detail_str(err, "path", path);
	xp_error_hint(err, "give %s a path of its own", flag);
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, true,
			    "%s %s names the same file as %s: writing it would replace it", flag,
			    path, other);
}

/*
 * An output that cannot be written is refused before anything attaches
 * or is read (the write checks again), with the words the write itself
 * would have failed with: a missing or read-only directory, a
 * destination that is a directory, FIFO, device, socket or link.
 */
static int output_unwritable(struct xp_error *err, const char *flag, const char *path, int rc,
			     unsigned mode)
{
	char tmp[PATH_MAX], dir[PATH_MAX], reason[256];

	snprintf(tmp, sizeof(tmp), "%s", path);
	snprintf(dir, sizeof(dir), "%s", dirname(tmp));
	xp_error_detail_str(err, "path", path);
	xp_error_detail_str(err, "checked", "before measuring");
	xp_error_hint(err, "nothing was measured: %s was checked before the measurement started",
		      flag);
	if (mode && (rc == -XPC_EFTYPE || rc == -ELOOP || rc == -EISDIR)) {
		const char *type = xpc_file_type_name((mode_t)mode);

		xp_error_detail_str(err, "file_type", type);
		xp_error_hint(
			err,
			"%s writes a new or regular file only and never replaces a %s; pass another path",
			flag, type);
		return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
				    "failed to write %s: it exists and is a %s, not a regular file",
				    path, type);
	}
	xp_error_detail_str(err, "directory", dir);
	if (rc == -ENOENT || rc == -ENOTDIR)
		xp_error_hint(err, "create %s first, or give %s a path in an existing directory",
			      dir, flag);
	else if (rc == -EACCES || rc == -EPERM || rc == -EROFS)
		xp_error_hint(err, "give %s a path in a directory this user can write", flag);
	xprobe_strerror(rc, reason, sizeof(reason));
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "failed to write %s: %s",
			    path, reason);
}

static int check_outputs(const struct xp_measure_req *req, struct xp_error *err)
{
	const char *outs[2] = { req->events_out, req->report };
	const char *flags[2] = { "--events-out", "--report" };
	size_t i, j;

	for (i = 0; i < 2; i++) {
		for (j = 0; outs[i] && j < req->ninputs; j++)
			if (xpc_same_file(outs[i], req->inputs[j]))
				return output_clash(err, flags[i], outs[i], "--input");
	}
	if (outs[0] && outs[1] && xpc_same_file(outs[0], outs[1]))
		return output_clash(err, flags[1], outs[1], "--events-out");
	for (i = 0; i < 2; i++) {
		unsigned mode = 0;
		int rc = outs[i] ? xpc_atomic_check(outs[i], &mode) : 0;

		if (rc)
			return output_unwritable(err, flags[i], outs[i], rc, mode);
	}
	return 0;
}

static int measure_spec(struct xp_measure_req *req, struct xp_spec *spec, struct xp_error *err)
{
	int rc;

	rc = xp_spec_load(req->spec, spec, err);
	if (rc)
		return rc;
	if (!spec->has_max_events && !spec->aggregate) {
		xp_error_hint(err, "add max_events to the spec");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "exact MeasurementSpec requires max_events");
	}
	if (!spec->aggregate && spec->has_max_groups) {
		xp_error_hint(err, "drop max_groups, or set measurement_mode \"aggregate\"");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "exact MeasurementSpec does not accept max_groups");
	}
	if (spec->aggregate && !spec->has_max_groups) {
		xp_error_hint(err, "add max_groups to the spec");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "aggregate MeasurementSpec requires max_groups");
	}
	if (spec->aggregate && (req->events_out || (req->given & XP_OPT_FORMAT))) {
		xp_error_hint(
			err,
			"drop --events-out and --format: an aggregate inventory has no event timeline");
		return xp_error_set(
			err, XPROBE_E_TRACE_EXPORT_FAILED, true,
			"aggregate measurement does not produce event evidence artifacts");
	}
	req->name = spec->name;
	req->from_text = spec->start_selector;
	req->to_text = spec->end_selector;
	req->policy = (enum xp_policy)spec->match_policy;
	req->samples = spec->has_samples ? spec->samples : 0;
	req->duration_ms = spec->has_duration_ms ? spec->duration_ms : 0;
	req->timeout_ms = spec->timeout_ms;
	req->max_events = spec->max_events;
	if ((spec->has_samples && spec->samples == 0) ||
	    (spec->has_duration_ms && spec->duration_ms == 0) ||
	    (!spec->aggregate && spec->max_events == 0) ||
	    (!spec->has_samples && !spec->has_duration_ms) || spec->timeout_ms == 0) {
		xp_error_hint(err,
			      "set positive samples or duration, timeout, and max-events bounds");
		return xp_error_set(
			err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
			"live measurement requires positive samples or duration and max-events limits");
	}
	rc = parse_endpoints(req, xp_policy_kebab(req->policy), err);
	if (rc)
		return rc;
	if ((rc = check_agent_flags(req, err)))
		return rc;
	rc = xp_target_identify(spec->pid, &req->target, err);
	if (rc)
		return rc;
	if (req->target.start_time != spec->process_start_time) {
		xp_target_detail(err, &req->target);
		xp_error_detail_u64(err, "spec_process_start_time", spec->process_start_time);
		xp_error_hint(err, "write a new spec for the running process");
		return xp_error_set(
			err, XPROBE_E_TARGET_REUSED, true,
			"trace specification target identity no longer matches the process");
	}
	req->has_target = true;
	if (spec->aggregate) {
		req->max_groups = spec->max_groups;
		return xp_measure_aggregate(req, err);
	}
	return measure_live(req, err);
}

/*
 * The request of @cli: the flags measure reads, copied (the command line
 * is not kept), with the exact modes' defaults; the session id.
 */
static void req_init(struct xp_measure_req *req, const struct xp_cli *cli)
{
	memset(req, 0, sizeof(*req));
	req->given = cli->given;
	req->out = cli->out;
	req->argc = cli->argc;
	req->argv = cli->argv;
	req->pid = cli->pid;
	req->inputs = cli->inputs;
	req->ninputs = cli->ninputs;
	req->spec = cli->spec;
	req->match_text = cli->match;
	req->unsafe_offset = cli->unsafe_offset;
	req->agent = cli->agent;
	req->cupti_socket = cli->cupti_socket;
	req->report = cli->report;
	req->hist = cli->hist;
	req->frequency_hz = cli->frequency_hz;
	req->max_samples = cli->max_samples;
	req->stack_depth = cli->stack_depth;
	req->max_threads = cli->max_threads;
	req->max_inflight = cli->max_inflight;
	req->max_depth = cli->max_depth;
	req->by = cli->by;
	req->explain = cli->explain;
	req->interval_ms = cli->has_interval_ms ? cli->interval_ms : 0;
	req->metrics_out = cli->metrics_out;
	req->explain_top = cli->explain_top;
	req->name = cli->name;
	req->from_text = cli->from;
	req->to_text = cli->to;
	req->samples = cli->has_samples ? cli->samples : 0;
	req->duration_ms = cli->has_duration_ms ? cli->duration_ms : 0;
	req->timeout_ms = cli->has_timeout_ms ? cli->timeout_ms : XP_DEFAULT_TIMEOUT_MS;
	req->max_events = cli->has_max_events ? cli->max_events : XP_DEFAULT_MAX_EVENTS;
	req->max_groups = cli->max_groups;
	req->events_out = cli->events_out;
	req->format = cli->format ? xp_export_format_parse(cli->format) : XP_EXPORT_JSONL;
	xp_out_session_id("measure", req->session_id, sizeof(req->session_id));
}

/*
 * The pair modes (live --pid, --aggregate, completed --input): the pair
 * and its policy, then the mode.  Returns an exit code, or negative with
 * @err.
 */
static int measure_pair(struct xp_measure_req *req, struct xp_error *err)
{
	int rc;

	if (!req->from_text || !req->to_text) {
		xp_error_hint(err, "pass --from and --to selectors, or use --spec");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "measure requires --%s unless --spec is used",
				    !req->from_text ? "from" : "to");
	}
	if (!req->match_text) {
		xp_error_hint(err,
			      "use policy_recommendation.compatible_policies from xprobe validate");
		return xp_error_set(err, XPROBE_E_INVALID_CORRELATION_POLICY, true,
				    "measure requires --match unless --spec is used");
	}
	if ((req->given & XP_OPT_PID) && req->ninputs && xp_policy_parse(req->match_text) >= 0) {
		/* after an unknown policy, as the reference orders it */
		xp_error_hint(
			err,
			"pass --pid PID for a live target or --input FILE for completed captures, not both");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "--pid and --input select different collection modes");
	}
	rc = parse_endpoints(req, req->match_text, err);
	if (rc)
		return rc;
	if (req->given & XP_OPT_AGGREGATE) {
		if ((rc = check_agent_flags(req, err)))
			return rc;
		if (!(req->given & XP_OPT_MAX_GROUPS))
			req->max_groups = XP_DEFAULT_AGG_MAX_GROUPS;
		return xp_measure_aggregate(req, err);
	}
	if (req->given & XP_OPT_PID) {
		if ((rc = check_agent_flags(req, err)) || (rc = check_limits(req, err)))
			return rc;
		rc = xp_target_identify(req->pid, &req->target, err);
		if (rc)
			return rc;
		req->has_target = true;
		return measure_live(req, err);
	}
	if (!req->ninputs) {
		xp_error_hint(
			err,
			"pass --pid PID for a live target or --input FILE for a completed capture");
		return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, true,
				    "measure requires --input or --pid");
	}
	return measure_completed(req, err);
}

int cmd_measure(const struct xp_cli *cli)
{
	struct xp_measure_req req;
	struct xp_error err = { 0 };
	struct xp_spec spec;
	int rc, code;

	req_init(&req, cli);
	memset(&spec, 0, sizeof(spec));
	rc = check_outputs(&req, &err);
	if (rc)
		goto out;
	/* one mode; the syntax rules (mode_rules.h) left no other given */
	if (req.given & XP_OPT_SPEC)
		rc = measure_spec(&req, &spec, &err);
	else if (req.given & XP_OPT_HISTOGRAM)
		rc = xp_measure_histogram(&req, &err);
	else if (req.given & XP_OPT_CPU_SAMPLE)
		rc = xp_measure_cpu_sample(&req, &err);
	else if (req.given & XP_OPT_SYSCALL_AGG)
		rc = xp_measure_syscall_aggregate(&req, &err);
	else
		rc = measure_pair(&req, &err);
out:
	/* a phase without its own cancelled document stopped on a signal */
	if (rc == -ECANCELED)
		rc = cancelled(&req, "measure", 0, &err);
	/* Sub-paths that emitted their own document return a positive exit code. */
	if (rc < 0) {
		fit_hints(&req, &err);
		code = xp_out_fail(&req.out, &err);
	} else
		code = rc;
	xp_error_clear(&err);
	xp_selector_free(&req.from);
	xp_selector_free(&req.to);
	xp_spec_free(&spec);
	xp_target_release(&req.target);
	return code;
}

/* --- the option rules of --spec, --input and --hist (mode_rules.h) ---- */

/* a spec says the target, the pair and the bounds itself */
static const unsigned long spec_conflicts[] = {
	XP_OPT_INPUT, XP_OPT_PID, XP_OPT_FROM, XP_OPT_TO, XP_OPT_MATCH, XP_OPT_SAMPLES,
	XP_OPT_DURATION, XP_OPT_TIMEOUT, XP_OPT_MAX_EVENTS, XP_OPT_AGGREGATE, XP_OPT_MAX_GROUPS,
	XP_OPT_NAME, XP_OPT_CPU_SAMPLE, XP_OPT_SYSCALL_AGG, 0,
};

const struct xp_mode_rules xp_spec_rules = {
	.flag = XP_OPT_SPEC,
	.conflicts = spec_conflicts,
};

/* --hist: the terminal histogram of a latency result (finish), not an
 * inventory's */
static const unsigned long hist_conflicts[] = {
	XP_OPT_HISTOGRAM, XP_OPT_CPU_SAMPLE, XP_OPT_SYSCALL_AGG, XP_OPT_AGGREGATE, 0,
};

const struct xp_mode_rules xp_hist_rules = {
	.flag = XP_OPT_HIST,
	.conflicts = hist_conflicts,
};

/* Whether files @a and @b (both regular, the same size) hold the same bytes. */
static bool same_bytes(const char *a, const char *b)
{
	char x[65536], y[65536];
	bool same = true;
	FILE *fa = fopen(a, "re"), *fb = fopen(b, "re");

	if (!fa || !fb)
		same = false;
	while (same) {
		size_t na = fread(x, 1, sizeof(x), fa), nb = fread(y, 1, sizeof(y), fb);

		if (na != nb || memcmp(x, y, na) != 0)
			same = false;
		if (na < sizeof(x))
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/*
 * The same capture given twice to --input (one file by two names, or two
 * files with the same bytes) would pair every event with its copy: a
 * usage mistake, refused naming both arguments.
 */
static int input_usage(const struct xp_cli *cli, struct xp_usage *u)
{
	struct stat st[XP_MAX_INPUTS];
	bool ok[XP_MAX_INPUTS];
	size_t i, j;

	for (i = 0; i < cli->ninputs; i++)
		ok[i] = stat(cli->inputs[i], &st[i]) == 0 && S_ISREG(st[i].st_mode);
	for (i = 0; i < cli->ninputs; i++) {
		for (j = i + 1; j < cli->ninputs; j++) {
			if (!ok[i] || !ok[j])
				continue;
			if (st[i].st_dev == st[j].st_dev && st[i].st_ino == st[j].st_ino)
				return xp_usage_text(
					u,
					"--input '%s' (input %zu) and --input '%s' (input %zu) name the same file",
					cli->inputs[i], i + 1, cli->inputs[j], j + 1);
			if (st[i].st_size == st[j].st_size && st[i].st_size > 0 &&
			    same_bytes(cli->inputs[i], cli->inputs[j]))
				return xp_usage_text(
					u,
					"--input '%s' (input %zu) and --input '%s' (input %zu) hold the same capture, byte for byte",
					cli->inputs[i], i + 1, cli->inputs[j], j + 1);
		}
	}
	return 0;
}

const struct xp_mode_rules xp_input_rules = {
	.flag = XP_OPT_INPUT,
	.usage = input_usage,
};

int xp_measure_usage(const struct xp_cli *cli, unsigned long accepted, struct xp_usage *u)
{
	int rc = xp_mode_conflicts(cli, accepted, u);

	return rc ? rc : xp_mode_usage(cli, u);
}
