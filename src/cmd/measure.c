/* SPDX-License-Identifier: Apache-2.0 */
/*
 * measure.c - `xprobe measure`: mode selection, early checks, completed
 * inputs, specs, and the tail every exact measurement shares (correlate,
 * write the --events-out artifact, render).  Live collection lives in
 * measure_live.c; the inventories in their own files.
 *
 * Early-error order follows the reference (peer-contract-notes.md 1.4):
 * spec -> missing from/to/match -> unknown policy -> mode conflicts
 * (--pid with --input is INVALID_EVENT_SELECTOR, exit 1, not a usage
 * error) -> limits; "--format without --events-out" is reported after the
 * run.  What this build does not have is refused, never ignored:
 * --aggregate first of all, --agent / --cupti-socket in live modes
 * (CUPTI_NOT_AVAILABLE: no CUDA Agent is driven by this build).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/cancel.h"
#include "../../common/json.h"
#include "../capture/capture_io.h"
#include "../capture/spec.h"
#include "measure.h"

struct result_ctx {
	const struct xp_measurement_view *view;
};

static void render_json(struct xpc_json *w, void *ctx)
{
	xp_render_measurement_json(w, ((struct result_ctx *)ctx)->view);
}

static void render_human(FILE *out, void *ctx)
{
	xp_render_measurement_human(out, ((struct result_ctx *)ctx)->view);
}

/* What every cancelled document's details say (as the live path's). */
static void cancel_details(struct xp_error *err, const char *phase)
{
	xp_error_detail_bool(err, "cancelled", true);
	xp_error_detail_str(err, "phase", phase);
	xp_error_detail_str(err, "signal", strsignal(xpc_cancel_signo()));
}

void xp_measure_artifact_on_error(struct xp_measure_req *req, const struct xp_capture *c,
				  struct xp_error *err)
{
	struct xp_error werr = { 0 };
	int rc;

	if (!req->events_out)
		return;
	rc = xp_export_write(req->events_out, req->format, c, req->session_id, &werr);
	if (rc) {
		char msg[XP_ERR_MESSAGE_MAX];

		snprintf(msg, sizeof(msg), "%s", werr.message);
		xp_error_detail_str(err, "original_error_code", xprobe_errname(err->code));
		xp_error_detail_str(err, "path", req->events_out);
		if (xp_error_detail_get(&werr, "file_type")) /* a refused non-regular file */
			xp_error_detail_raw(err, "file_type", xp_error_detail_get(&werr, "file_type"));
		if (xpc_cancel_signo())
			cancel_details(err, "export");
		xp_error_hint(err, "the measurement also failed; rerun after fixing artifact output");
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
	snprintf(msg, sizeof(msg),
		 "the host ring lost %llu records after the capture's stopping point; no event of the capture was lost",
		 (unsigned long long)h->dropped_records);
	/* keys sorted, as every details object */
	return xp_warnings_add_u64(out, "HOST_RECORDS_LOST_AFTER_STOP", msg, "dropped_records",
				   h->dropped_records, "observed_records", h->observed_records,
				   "record_capacity", h->record_capacity, "retained_records",
				   h->retained_records, (const char *)NULL);
}

int xp_measure_cancelled(struct xp_measure_req *req, const char *phase, size_t events,
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
	return xp_error_set(err, XPROBE_E_NO_MATCHED_SAMPLES, true,
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
	xp_error_hint(err, "the artifact was not written and no temporary file is left; run the measurement again");
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, true,
			    "failed to write %s: cancelled by signal %d (%s)", req->events_out, sig,
			    strsignal(sig));
}

int xp_measure_finish(struct xp_measure_req *req, struct xp_capture *c, const char *status,
		      const struct xp_host_collection *host, const struct xp_warnings *extra)
{
	struct xp_warnings all = { 0 };
	struct xp_correlate_opts opts = {
		.policy = req->policy,
		.samples = req->samples,
		.duration_ns = req->duration_ms * 1000000ull,
		.max_events = req->max_events,
	};
	struct xp_correlation corr;
	struct xp_error err = { 0 };
	int rc, code;

	memset(&corr, 0, sizeof(corr));
	rc = xp_correlate(c, &req->from, &req->to, &opts, &corr, &err);
	if (rc && xpc_cancel_signo()) {
		/* stopped: no artifact either, the caller asked to stop */
		rc = xp_measure_cancelled(req, "correlate", c->count, &err);
		goto fail;
	}
	if (rc) {
		xp_measure_artifact_on_error(req, c, &err);
		goto fail;
	}
	if (req->events_out) {
		rc = xp_export_write(req->events_out, req->format, c, req->session_id, &err);
		if (rc && xpc_cancel_signo())
			rc = export_cancelled(req, &err);
		if (rc)
			goto fail;
	}
	if (req->cli->format && !req->events_out) {
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
		};
		struct result_ctx ctx = { &view };

		code = xp_cli_emit(req->cli, render_json, render_human, &ctx);
	}
	xp_correlation_free(&corr);
	xp_warnings_free(&all);
	return code;
fail:
	if (req->cli->format && !req->events_out && err.code != XPROBE_E_TRACE_EXPORT_FAILED)
		xp_error_hint(&err, "--format also requires --events-out");
	code = xp_cli_fail(req->cli, &err);
	xp_error_clear(&err);
	xp_correlation_free(&corr);
	xp_warnings_free(&all);
	return code;
}

static int check_limits(const struct xp_measure_req *req, struct xp_error *err)
{
	const struct xp_cli *cli = req->cli;

	if ((cli->has_samples && cli->samples == 0) ||
	    (cli->has_duration_ms && cli->duration_ms == 0) || req->max_events == 0 ||
	    (!cli->has_samples && !cli->has_duration_ms)) {
		xp_error_hint(err, "set positive samples or duration, timeout, and max-events bounds");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "measurement requires a positive --samples or --duration-ms bound and a positive --max-events");
	}
	if (req->timeout_ms == 0) {
		xp_error_hint(err, "set positive samples or duration, timeout, and max-events bounds");
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
		xp_error_hint(err, "use exact, first-after, nearest, stack-nested or stream-order");
		return xp_error_set(err, XPROBE_E_INVALID_CORRELATION_POLICY, true,
				    "unsupported measurement correlation policy \"%s\"", policy_text);
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
 * --agent and --cupti-socket name a CUDA Agent for CUDA endpoints; this
 * build collects none, so in a live mode they are refused rather than
 * silently unused.  (With --input the reference's "requires --pid" error
 * stands: measure_completed.)
 */
static int refuse_agent_flags(const struct xp_cli *cli, struct xp_error *err)
{
	const char *flag = cli->agent ? "--agent" : cli->cupti_socket ? "--cupti-socket" : NULL;

	if (!flag)
		return 0;
	xp_error_detail_str(err, "flag", flag);
	xp_error_detail_str(err, "path", cli->agent ? cli->agent : cli->cupti_socket);
	xp_error_hint(err, "drop %s: this build measures host endpoints, which need no CUDA Agent",
		      flag);
	return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
			    "%s is not supported by this build: it drives no CUDA Agent", flag);
}

static int measure_completed(struct xp_measure_req *req, struct xp_error *err)
{
	const struct xp_cli *cli = req->cli;
	struct xp_capture c;
	int rc, code;

	if (cli->cupti_socket) {
		xp_error_hint(err, "--cupti-socket applies to live measurements only");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "--cupti-socket requires --pid");
	}
	if (cli->agent) {
		xp_error_hint(err, "--agent applies to live measurements only");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "--agent requires --pid");
	}
	if ((rc = check_limits(req, err)))
		return rc;
	xp_capture_init(&c, req->max_events);
	rc = xp_inputs_load(cli->inputs, cli->ninputs, &c, err);
	if (rc && xpc_cancel_signo())
		rc = xp_measure_cancelled(req, "decode", c.count, err);
	if (rc) {
		xp_capture_free(&c);
		return rc;
	}
	if (c.record_limit_reached) {
		xp_error_detail_u64(err, "record_capacity", c.count);
		xp_error_hint(err, "narrow the selectors or explicitly increase max-events");
		rc = xp_error_set(err, XPROBE_E_EVENT_RATE_TOO_HIGH, true,
				  "capture reached its configured limit of %zu records", c.count);
		xp_measure_artifact_on_error(req, &c, err);
		xp_capture_free(&c);
		return rc;
	}
	code = xp_measure_finish(req, &c, "completed", NULL, NULL);
	xp_capture_free(&c);
	return code;
}

static int measure_spec(const struct xp_cli *cli, struct xp_measure_req *req,
			struct xp_spec *spec, struct xp_error *err)
{
	int rc;

	rc = xp_spec_load(cli->spec, spec, err);
	if (rc)
		return rc;
	if ((rc = refuse_agent_flags(cli, err)))
		return rc;
	if (!spec->has_max_events && !spec->aggregate) {
		xp_error_hint(err, "add max_events to the spec");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "exact MeasurementSpec requires max_events");
	}
	if (spec->aggregate || spec->has_max_groups) {
		xp_error_hint(err, "aggregate measurements need the CUDA Agent, which this build cannot drive yet");
		return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
				    "aggregate MeasurementSpec is not supported by this build");
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
	    (spec->has_duration_ms && spec->duration_ms == 0) || spec->max_events == 0 ||
	    (!spec->has_samples && !spec->has_duration_ms) || spec->timeout_ms == 0) {
		xp_error_hint(err, "set positive samples or duration, timeout, and max-events bounds");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "live measurement requires positive samples or duration and max-events limits");
	}
	rc = parse_endpoints(req, xp_policy_kebab(req->policy), err);
	if (rc)
		return rc;
	rc = xp_target_identify(spec->pid, &req->target, err);
	if (rc)
		return rc;
	if (req->target.start_time != spec->process_start_time) {
		xp_target_detail(err, &req->target);
		xp_error_detail_u64(err, "spec_process_start_time", spec->process_start_time);
		xp_error_hint(err, "write a new spec for the running process");
		return xp_error_set(err, XPROBE_E_TARGET_REUSED, true,
				    "trace specification target identity no longer matches the process");
	}
	req->has_target = true;
	return xp_measure_live(req, err);
}

int cmd_measure(const struct xp_cli *cli)
{
	struct xp_measure_req req;
	struct xp_error err = { 0 };
	struct xp_spec spec;
	int rc, code;

	memset(&req, 0, sizeof(req));
	memset(&spec, 0, sizeof(spec));
	req.cli = cli;
	req.name = cli->name;
	req.timeout_ms = cli->has_timeout_ms ? cli->timeout_ms : XP_DEFAULT_TIMEOUT_MS;
	req.max_events = cli->has_max_events ? cli->max_events : XP_DEFAULT_MAX_EVENTS;
	req.samples = cli->has_samples ? cli->samples : 0;
	req.duration_ms = cli->has_duration_ms ? cli->duration_ms : 0;
	req.events_out = cli->events_out;
	req.format = cli->format ? xp_export_format_parse(cli->format) : XP_EXPORT_JSONL;
	xp_cli_session_id("measure", req.session_id, sizeof(req.session_id));

	if (cli->spec) {
		rc = measure_spec(cli, &req, &spec, &err);
		goto out;
	}
	if (cli->aggregate) {
		/* not in this build, whatever else the command line says */
		rc = xp_measure_cuda_aggregate(cli, &err);
		goto out;
	}
	if (cli->cpu_sample || cli->syscall_aggregate) {
		const char *mode = cli->cpu_sample ? "--cpu-sample" : "--syscall-aggregate";

		if (cli->ninputs || cli->events_out || cli->format || cli->from || cli->to ||
		    cli->match || cli->has_samples || cli->agent || cli->cupti_socket) {
			const char *what = cli->ninputs ? "--input" :
					   cli->events_out ? "--events-out" :
					   cli->format ? "--format" :
					   cli->has_samples ? "--samples" :
					   cli->agent ? "--agent" :
					   cli->cupti_socket ? "--cupti-socket" :
							       "event-pair selectors (--from/--to/--match)";

			xp_error_detail_str(&err, "mode", mode + 2);
			xp_error_hint(&err, "inventories are live-only summaries: pass --pid and --duration-ms only");
			rc = xp_error_set(&err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
					  "%s does not accept %s", mode, what);
			goto out;
		}
		if (!cli->has_pid) {
			xp_error_hint(&err, "pass --pid PID");
			rc = xp_error_set(&err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
					  "%s requires --pid", mode);
			goto out;
		}
		if (!cli->has_duration_ms || cli->duration_ms == 0) {
			xp_error_hint(&err, "pass a positive --duration-ms");
			rc = xp_error_set(&err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
					  "%s requires a positive --duration-ms", mode);
			goto out;
		}
		rc = cli->cpu_sample ? xp_measure_cpu_sample(cli, &err) :
				       xp_measure_syscall_aggregate(cli, &err);
		goto out;
	}
	if (!cli->from || !cli->to) {
		xp_error_hint(&err, "pass --from and --to selectors, or use --spec");
		rc = xp_error_set(&err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				  "measure requires --%s unless --spec is used",
				  !cli->from ? "from" : "to");
		goto out;
	}
	if (!cli->match) {
		xp_error_hint(&err, "use policy_recommendation.compatible_policies from xprobe validate");
		rc = xp_error_set(&err, XPROBE_E_INVALID_CORRELATION_POLICY, true,
				  "measure requires --match unless --spec is used");
		goto out;
	}
	req.from_text = cli->from;
	req.to_text = cli->to;
	if (cli->has_pid && cli->ninputs && xp_policy_parse(cli->match) >= 0) {
		/* after an unknown policy, as the reference orders it */
		xp_error_hint(&err, "pass --pid PID for a live target or --input FILE for completed captures, not both");
		rc = xp_error_set(&err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				  "--pid and --input select different collection modes");
		goto out;
	}
	rc = parse_endpoints(&req, cli->match, &err);
	if (rc)
		goto out;
	if (cli->has_pid) {
		if ((rc = refuse_agent_flags(cli, &err)))
			goto out;
		if ((rc = check_limits(&req, &err)))
			goto out;
		rc = xp_target_identify(cli->pid, &req.target, &err);
		if (rc)
			goto out;
		req.has_target = true;
		rc = xp_measure_live(&req, &err);
		goto out;
	}
	if (!cli->ninputs) {
		xp_error_hint(&err, "pass --pid PID for a live target or --input FILE for a completed capture");
		rc = xp_error_set(&err, XPROBE_E_TRACE_EXPORT_FAILED, true,
				  "measure requires --input or --pid");
		goto out;
	}
	rc = measure_completed(&req, &err);
out:
	/* a phase without its own cancelled document stopped on a signal */
	if (rc == -ECANCELED)
		rc = xp_measure_cancelled(&req, "measure", 0, &err);
	/* Sub-paths that emitted their own document return a positive exit code. */
	if (rc < 0)
		code = xp_cli_fail(cli, &err);
	else
		code = rc;
	xp_error_clear(&err);
	xp_selector_free(&req.from);
	xp_selector_free(&req.to);
	xp_spec_free(&spec);
	xp_target_release(&req.target);
	return code;
}
