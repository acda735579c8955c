/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.h - renderers of result documents (JSON and human), one pair per
 * document type, and the document types themselves (xp_doc_*: the pair
 * the output contract, output.h, writes a document with).  Renderers only
 * read; they never compute.
 */
#ifndef XP_REPORT_H
#define XP_REPORT_H

#include <stdio.h>

#include "../correlate/correlate.h"
#include "../model/event.h"
#include "output.h"

struct xpc_json;

/*
 * Shared pieces (render_common.c).  Each *_begin opens the document
 * object; the caller closes it.
 */
/* { "schema_version": "2.0", "ok": true */
void xp_render_doc_begin(struct xpc_json *w);
/* ... then "session_id", "status" (measure's results) */
void xp_render_result_begin(struct xpc_json *w, const char *session_id, const char *status);
/* "<key>": { "pid", "process_start_time" } (the contract's TargetIdentity) */
void xp_render_identity(struct xpc_json *w, const char *key, uint32_t pid, uint64_t start_time);
/* a result head, then "inventory": { "name", "target" (left open) */
void xp_render_inventory_begin(struct xpc_json *w, const char *session_id, const char *status,
			       const char *name, uint32_t pid, uint64_t start_time);
/* "collection": { "completeness" (complete | partial), "stop_reason",
 * "window_ns" (left open): the head of an inventory's collection block */
void xp_render_collection_begin(struct xpc_json *w, bool complete, const char *stop_reason,
				uint64_t window_ns);
/* one "warning CODE: message" line each (@ws may be NULL) */
void xp_render_warnings_human(FILE *out, const struct xp_warnings *ws);

/* Live host collection counters: the human summary's "host ring" line
 * (not a JSON field: the contract's collection object is closed). */
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
	/* live host collection counters (NULL for completed inputs) */
	const struct xp_host_collection *host;
	/* the terminal view only (never JSON): the histogram under the
	 * summary (enum xp_hist_view), SGR colors, and the signal that
	 * cancelled a live capture (0: none) */
	int hist;
	bool color;
	int signo;
	/* the files this run writes, for the terminal view's last lines (NULL: none) */
	const char *artifact_path;
	const char *artifact_format;
	const char *report_path;
};

/* The histogram of a human measurement view (--hist). */
enum xp_hist_view {
	XP_HIST_LOG2 = 0, /* power-of-two buckets (the default) */
	XP_HIST_LINEAR,   /* linear buckets, automatic step */
	XP_HIST_NONE,
};


void xp_render_measurement_json(struct xpc_json *w, const struct xp_measurement_view *v);
void xp_render_measurement_human(FILE *out, const struct xp_measurement_view *v);
extern const struct xp_doc_type xp_doc_measurement;

/*
 * `measure --explain` in the exact modes (render_explained.c): the
 * measurement under "result", unchanged, and each pair's parts beside it.
 */
struct xp_explained;
struct xp_explained_view {
	const struct xp_measurement_view *m;
	const struct xp_explained *x;
	uint64_t t0; /* CLOCK_MONOTONIC the terminal's "+s" counts from */
};
void xp_render_explained_json(struct xpc_json *w, const struct xp_explained_view *v);
void xp_render_explained_human(FILE *out, const struct xp_explained_view *v);
extern const struct xp_doc_type xp_doc_explained;

/*
 * Inventories (issue #6): `measure --cpu-sample` and `--syscall-aggregate`.
 * The data structures live in src/inventory/cpu_sample.h and
 * src/inventory/syscall_aggregate.h; their verdicts (completeness, Python status,
 * warnings) are derived there, so these renderers only print.
 */
struct xp_inv_cpu_sample_result;
struct xp_inv_cpu_profile;
struct xp_inv_symbolizer;
struct xp_inv_sa_result;

struct xp_cpu_sample_view {
	const char *session_id;
	const char *status;                /* "completed" | "cancelled" */
	const char *name;                  /* --name or NULL */
	uint32_t pid;
	uint64_t process_start_time;
	const struct xp_inv_cpu_sample_result *result; /* stacks sorted */
	const struct xp_inv_cpu_profile *profile;
	const struct xp_inv_symbolizer *sym;
	const char *python_status;
	const char *python_hint;           /* "" = none */
	bool complete;
	const struct xp_warnings *warnings;
};

void xp_render_cpu_sample_json(struct xpc_json *w, const struct xp_cpu_sample_view *v);
void xp_render_cpu_sample_human(FILE *out, const struct xp_cpu_sample_view *v);
extern const struct xp_doc_type xp_doc_cpu_sample;

struct xp_syscall_agg_view {
	const char *session_id;
	const char *status;                /* "completed" | "cancelled" */
	const char *name;                  /* --name or NULL */
	uint32_t pid;
	uint64_t process_start_time;
	bool pid_namespace_filter;
	const struct xp_inv_sa_result *result; /* finished (sorted, named) */
	bool complete;
	uint64_t dropped;
	const struct xp_warnings *warnings;
};

void xp_render_syscall_agg_json(struct xpc_json *w, const struct xp_syscall_agg_view *v);
void xp_render_syscall_agg_human(FILE *out, const struct xp_syscall_agg_view *v);
extern const struct xp_doc_type xp_doc_syscall_agg;

/*
 * measure --aggregate: the contract's AggregateInventoryResult (schemas/
 * aggregate-inventory-result.schema.json) from an Agent's group table
 * (src/agent/agent_aggregate.h), groups already sorted.
 */
struct xp_agent_agg_result;
struct xp_aggregate_view {
	const char *session_id;
	const char *status; /* "completed" | "cancelled" */
	const char *name; /* --name or NULL */
	const char *start_selector, *end_selector;
	uint32_t pid;
	const struct xp_agent_agg_result *result;
	const struct xp_warnings *warnings;
};

void xp_render_aggregate_json(struct xpc_json *w, const struct xp_aggregate_view *v);
void xp_render_aggregate_human(FILE *out, const struct xp_aggregate_view *v);
extern const struct xp_doc_type xp_doc_aggregate;

/*
 * Target documents (issue #3): validate (pair and inventory checks),
 * doctor, discover.  The data structures live in src/checks/validate_checks.h,
 * doctor.h and discover.h; these renderers only print.
 */
struct xp_target;
struct xp_resolved_probe;
struct xp_validation;
struct xp_cpu_sample_check;
struct xp_syscall_agg_check;
struct xp_doctor;
struct xp_discovery;

void xp_render_resolved_probe_json(struct xpc_json *w, const struct xp_target *t,
				   const struct xp_resolved_probe *p);
void xp_render_validation_json(struct xpc_json *w, const struct xp_validation *v);
void xp_render_validation_human(FILE *out, const struct xp_validation *v);
extern const struct xp_doc_type xp_doc_validation;
void xp_render_cpu_sample_check_json(struct xpc_json *w, const struct xp_cpu_sample_check *c);
void xp_render_cpu_sample_check_human(FILE *out, const struct xp_cpu_sample_check *c);
extern const struct xp_doc_type xp_doc_cpu_sample_check;
void xp_render_syscall_agg_check_json(struct xpc_json *w, const struct xp_syscall_agg_check *c);
void xp_render_syscall_agg_check_human(FILE *out, const struct xp_syscall_agg_check *c);
extern const struct xp_doc_type xp_doc_syscall_agg_check;
void xp_render_doctor_json(struct xpc_json *w, const struct xp_doctor *d);
void xp_render_doctor_human(FILE *out, const struct xp_doctor *d);
extern const struct xp_doc_type xp_doc_doctor;
void xp_render_discovery_json(struct xpc_json *w, const struct xp_discovery *d);
/* validate --list (src/resolve/endpoint_list.h): the endpoint-list
 * document; the human view is one selector a line on stdout (a C++
 * symbol's signature after a tab), what was cut and the warnings on
 * stderr. */
struct xp_endpoint_list;
void xp_render_endpoint_list_json(struct xpc_json *w, const struct xp_endpoint_list *l);
void xp_render_endpoint_list_human(FILE *out, const struct xp_endpoint_list *l);
extern const struct xp_doc_type xp_doc_endpoint_list;
void xp_render_discovery_human(FILE *out, const struct xp_discovery *d);
extern const struct xp_doc_type xp_doc_discovery;

#endif /* XP_REPORT_H */
