/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html_report.h - `measure --report PATH.html`: one self-contained HTML
 * file (docs/output.md, "The HTML report") that opens offline in any
 * browser.  It owns what the page embeds and how the file is written; the
 * page's renderer (src/report/html/report.{html,css,js}) is compiled into
 * the binary (cmake/embed.cmake), so nothing is fetched at view time.
 *
 * What a page embeds, as two <script type="application/json"> blocks:
 *   "xprobe-document"  the JSON document --json prints for the same run,
 *                      by the same renderer (compact layout); for a
 *                      measurement its "evidence" holds the first
 *                      XP_HTML_EVIDENCE_MAX pairs, everything else is
 *                      unchanged (the schema still holds);
 *   "xprobe-report"    what the CLI computed for the page from the whole
 *                      capture: the command line, target, the log2
 *                      latency histogram of every pair (exact counts),
 *                      one lane per thread, and the timeline table of up
 *                      to XP_HTML_TIMELINE_MAX pairs (a failure: events)
 *                      with the sampling rule when there are more; the
 *                      threads and event kinds listed are the drawn
 *                      items' (with counts over everything), so the page
 *                      is bounded whatever the capture holds; with
 *                      --explain, "explain" (the explanation's totals,
 *                      blocked time per syscall and slowest pairs, as
 *                      the explained-measurement-result has them) and
 *                      each drawn pair's parts in the timeline table.
 * Both are escaped so that no "<" appears in them (\u003c): a string of
 * the target's ("</script>", "<!--") cannot end the block.
 *
 * Written like --events-out (common/atomic_file.h): a temporary, fsync,
 * rename; mode 0600; a destination that exists and is not a regular file
 * is refused.  A failure is TRACE_EXPORT_FAILED "failed to write PATH:
 * ..." with details.path (and details.file_type for a refused type); the
 * caller keeps an earlier failure's code (details.original_error_code).
 */
#ifndef XP_REPORT_HTML_REPORT_H
#define XP_REPORT_HTML_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "report.h"

/* Pairs (or, for a failure, events) the timeline draws; above this it
 * draws exactly this many, pair j = floor(j * total / XP_HTML_TIMELINE_MAX). */
#define XP_HTML_TIMELINE_MAX 10000u
/* Evidence pairs the embedded document keeps with both full events. */
#define XP_HTML_EVIDENCE_MAX 256u

enum xp_html_kind {
	XP_HTML_MEASUREMENT, /* MeasurementResult */
	XP_HTML_MEASUREMENT_ERROR, /* ErrorResponse of a measurement with a capture */
	XP_HTML_CPU_SAMPLE,
	XP_HTML_SYSCALL_AGGREGATE,
	XP_HTML_AGGREGATE,
	XP_HTML_HISTOGRAM,
};

struct xp_html_report {
	enum xp_html_kind kind;
	const char *generator; /* "xprobe <version>" */
	int argc; /* the command line shown (argv[0] is the command name) */
	char *const *argv;
	/* XP_HTML_MEASUREMENT: the result as it is emitted, and with --explain
	 * its explanation (NULL: none) */
	const struct xp_measurement_view *result;
	const struct xp_explained *explained;
	/* XP_HTML_MEASUREMENT_ERROR: the error as it is emitted, and what was
	 * captured before it */
	const struct xp_error *error;
	const struct xp_capture *capture;
	/* both measurement kinds */
	const char *start_selector, *end_selector, *match_policy;
	/* inventories: their document, through their own type's renderer */
	const struct xp_doc_type *doc_type;
	const void *doc;
	/* the target of a live run, or (pid 0) the capture's own pid */
	bool has_target;
	uint32_t pid;
	uint64_t process_start_time;
	const char *const *inputs; /* measure --input files */
	size_t ninputs;
};

/* Write the page for @r to @path.  0, or a negative code with @err set
 * (TRACE_EXPORT_FAILED; see above). */
int xp_html_report_write(const char *path, const struct xp_html_report *r, struct xp_error *err);

/* The log2 bucket of a latency: 0 holds 0 ns, k >= 1 holds [2^(k-1), 2^k). */
static inline unsigned xp_html_log2_bucket(uint64_t ns)
{
	return ns ? 64u - (unsigned)__builtin_clzll(ns) : 0u;
}

#endif /* XP_REPORT_HTML_REPORT_H */
