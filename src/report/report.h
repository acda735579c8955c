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

/*
 * Inventories (issue #6): `measure --cpu-sample` and `--syscall-aggregate`.
 * The data structures live in src/collect/cpu_sample.h and
 * src/collect/syscall_aggregate.h; their verdicts (completeness, Python status,
 * warnings) are derived there, so these renderers only print.
 */
struct xp_cpu_sample_result;
struct xp_cpu_profile;
struct xp_symbolizer;
struct xp_sa_result;

struct xp_cpu_sample_view {
	const char *session_id;
	const char *status;                /* "completed" | "cancelled" */
	const char *name;                  /* --name or NULL */
	uint32_t pid;
	uint64_t process_start_time;
	const struct xp_cpu_sample_result *result; /* stacks sorted */
	const struct xp_cpu_profile *profile;
	const struct xp_symbolizer *sym;
	const char *python_status;
	const char *python_hint;           /* "" = none */
	bool complete;
	const struct xp_warnings *warnings;
};

void xp_render_cpu_sample_json(struct xpc_json *w, const struct xp_cpu_sample_view *v);
void xp_render_cpu_sample_human(FILE *out, const struct xp_cpu_sample_view *v);

struct xp_syscall_agg_view {
	const char *session_id;
	const char *status;                /* "completed" | "cancelled" */
	const char *name;                  /* --name or NULL */
	uint32_t pid;
	uint64_t process_start_time;
	bool pid_namespace_filter;
	const struct xp_sa_result *result; /* finished (sorted, named) */
	bool complete;
	uint64_t dropped;
	const struct xp_warnings *warnings;
};

void xp_render_syscall_agg_json(struct xpc_json *w, const struct xp_syscall_agg_view *v);
void xp_render_syscall_agg_human(FILE *out, const struct xp_syscall_agg_view *v);

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
void xp_render_cpu_sample_check_json(struct xpc_json *w, const struct xp_cpu_sample_check *c);
void xp_render_cpu_sample_check_human(FILE *out, const struct xp_cpu_sample_check *c);
void xp_render_syscall_agg_check_json(struct xpc_json *w, const struct xp_syscall_agg_check *c);
void xp_render_syscall_agg_check_human(FILE *out, const struct xp_syscall_agg_check *c);
void xp_render_doctor_json(struct xpc_json *w, const struct xp_doctor *d);
void xp_render_doctor_human(FILE *out, const struct xp_doctor *d);
void xp_render_discovery_json(struct xpc_json *w, const struct xp_discovery *d);
void xp_render_discovery_human(FILE *out, const struct xp_discovery *d);

#endif /* XP_REPORT_H */
