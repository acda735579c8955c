/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report_out.c - `measure --report`: which page a run writes, with what,
 * and how a write failure changes the answer (report_out.h).  The page
 * itself is src/report/render_html.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "report_out.h"

static void base(struct xp_html_report *r, const struct xp_measure_req *req,
		 enum xp_html_kind kind)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->generator = "xprobe " XP_VERSION;
	r->argc = req->argc;
	r->argv = req->argv;
	r->inputs = req->inputs;
	r->ninputs = req->ninputs;
}

static void measurement(struct xp_html_report *r, const struct xp_measure_req *req)
{
	r->start_selector = req->from_text;
	r->end_selector = req->to_text;
	r->match_policy = xp_policy_kebab(req->policy);
	if (req->has_target) {
		r->has_target = true;
		r->pid = req->target.pid;
		r->process_start_time = req->target.start_time;
	}
}

int xp_report_result(const struct xp_measure_req *req, const struct xp_measurement_view *v,
		     const struct xp_explained *x, struct xp_error *err)
{
	struct xp_html_report r;

	if (!req->report)
		return 0;
	base(&r, req, XP_HTML_MEASUREMENT);
	measurement(&r, req);
	r.result = v;
	r.explained = x;
	return xp_html_report_write(req->report, &r, err);
}

/* Remove details.@key (the page's own path, once the page failed). */
static void detail_drop(struct xp_error *err, const char *key)
{
	size_t i;

	for (i = 0; i < err->ndetails; i++) {
		if (strcmp(err->details[i].key, key) != 0)
			continue;
		free(err->details[i].key);
		free(err->details[i].json);
		memmove(&err->details[i], &err->details[i + 1],
			(err->ndetails - i - 1) * sizeof(err->details[0]));
		err->ndetails--;
		return;
	}
}

void xp_report_failure(struct xp_measure_req *req, struct xp_error *err)
{
	const struct xp_capture *c = req->report_capture;
	struct xp_error werr = { 0 };
	struct xp_html_report r;
	char msg[XP_ERR_MESSAGE_MAX];
	int code = err->code;

	req->report_capture = NULL;
	if (!req->report || !c || req->artifact_failed || !code)
		return;
	/* the page shows the error as it is emitted, its own path included */
	xp_error_detail_str(err, "report_path", req->report);
	base(&r, req, XP_HTML_MEASUREMENT_ERROR);
	measurement(&r, req);
	r.error = err;
	r.capture = c;
	if (xp_html_report_write(req->report, &r, &werr) == 0)
		return;
	detail_drop(err, "report_path");
	snprintf(msg, sizeof(msg), "%s", werr.message);
	xp_error_detail_str(err, "original_error_code", xprobe_errname(code));
	xp_error_detail_str(err, "path", req->report);
	if (xp_error_detail_get(&werr, "file_type"))
		xp_error_detail_raw(err, "file_type", xp_error_detail_get(&werr, "file_type"));
	xp_error_hint(err, "the measurement also failed; rerun after fixing the report's path");
	xp_error_set(err, werr.code, false, "%s", msg);
	xp_error_clear(&werr);
}

int xp_emit_reported(const struct xp_measure_req *req, enum xp_html_kind kind,
		     const struct xp_doc_type *type, const void *view)
{
	struct xp_error err = { 0 };
	struct xp_html_report r;
	int code;

	if (req->report) {
		base(&r, req, kind);
		r.doc_type = type;
		r.doc = view;
		if (xp_html_report_write(req->report, &r, &err)) {
			code = xp_out_fail(&req->out, &err);
			xp_error_clear(&err);
			return code;
		}
	}
	return xp_out_emit(&req->out, type, view);
}
