/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.h - renderers of result documents (JSON and human), one pair per
 * document type.  Renderers only read; they never compute.
 */
#ifndef XP_REPORT_H
#define XP_REPORT_H

#include <stdio.h>

#include "../correlate/correlate.h"
#include "../model/event.h"

struct xpc_json;

/* Live host collection counters (collection.host). */
struct xp_host_collection {
	uint64_t record_capacity;   /* ring/capture bound in records */
	uint64_t observed_records;  /* records the BPF programs emitted */
	uint64_t retained_records;  /* records in the capture */
	uint64_t dropped_records;   /* ring reservation failures */
	double buffer_utilization;  /* retained / capacity */
};

/* What a measurement result document shows. */
struct xp_measurement_view {
	const char *session_id;
	const char *status;           /* "completed" | "timed_out" */
	const char *name;             /* NULL = null */
	const char *start_selector;
	const char *end_selector;
	const struct xp_capture *capture;
	const struct xp_correlation *corr;
	const struct xp_warnings *extra_warnings; /* appended after the correlator's */
	/* live host collection block (NULL for completed inputs) */
	const struct xp_host_collection *host;
};


void xp_render_measurement_json(struct xpc_json *w, const struct xp_measurement_view *v);
void xp_render_measurement_human(FILE *out, const struct xp_measurement_view *v);

#endif /* XP_REPORT_H */
