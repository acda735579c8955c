/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report_out.h - when `measure --report PATH` writes its page
 * (src/report/html_report.h) and what a failure to write it does to the
 * command's answer.  The rule is --events-out's (docs/output.md): a
 * result is replaced by TRACE_EXPORT_FAILED when its report cannot be
 * written; a failed measurement with a capture still writes one, and a
 * report that cannot be written turns the failure into
 * TRACE_EXPORT_FAILED with details.original_error_code.
 */
#ifndef XP_CMD_REPORT_OUT_H
#define XP_CMD_REPORT_OUT_H

#include "../report/html_report.h"
#include "measure.h"

/* The page of a measurement result (@x: its --explain explanation, or
 * NULL), before it is emitted: 0, or the negative code with @err set.  A
 * no-op without --report. */
int xp_report_result(const struct xp_measure_req *req, const struct xp_measurement_view *v,
		     const struct xp_explained *x, struct xp_error *err);

/*
 * The page of a failure, with @err as it is about to be emitted, when a
 * capture exists (req->report_capture, set where the artifacts of a
 * failure are due); it names the page in details.report_path.  When the
 * page cannot be written @err becomes TRACE_EXPORT_FAILED, the failure's
 * code kept in details.original_error_code.  Nothing is written when
 * --events-out failed already (err is that failure).  Clears
 * req->report_capture.
 */
void xp_report_failure(struct xp_measure_req *req, struct xp_error *err);

/*
 * Emit an inventory's (or --histogram's) document @view, of @type, as
 * xp_out_emit() does, after writing its page with --report; a page that
 * cannot be written is emitted as TRACE_EXPORT_FAILED instead.  Returns
 * the exit code.
 */
int xp_emit_reported(const struct xp_measure_req *req, enum xp_html_kind kind,
		     const struct xp_doc_type *type, const void *view);

#endif /* XP_CMD_REPORT_OUT_H */
