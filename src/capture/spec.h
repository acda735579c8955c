/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec.h - the versioned MeasurementSpec document read by `measure --spec`.
 *
 * Shape (schemas/measurement-spec.schema.json): schema_version "2.0",
 * name, target {pid, process_start_time}, start_selector, end_selector,
 * match_policy (snake_case), samples, duration_ms, timeout_ms (required),
 * max_events, measurement_mode ("exact"|"aggregate"), max_groups.
 * Unknown fields, duplicate keys and other versions are rejected.
 */
#ifndef XP_CAPTURE_SPEC_H
#define XP_CAPTURE_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/error_record.h"

struct xp_spec {
	char *name;                /* NULL = null */
	uint32_t pid;
	uint64_t process_start_time;
	char *start_selector;
	char *end_selector;
	int match_policy;          /* enum xp_policy */
	bool has_samples;
	uint64_t samples;
	bool has_duration_ms;
	uint64_t duration_ms;
	uint64_t timeout_ms;
	bool has_max_events;
	uint64_t max_events;
	bool aggregate;            /* measurement_mode */
	bool has_max_groups;
	uint64_t max_groups;
};

/* Parse a spec document.  Errors: INVALID_EVENT_SELECTOR
 * "invalid MeasurementSpec <name>: <reason>" (as the reference). */
int xp_spec_parse(const char *data, size_t len, const char *name, struct xp_spec *out,
		  struct xp_error *err);
/* Read and parse a file; read failure is TRACE_EXPORT_FAILED. */
int xp_spec_load(const char *path, struct xp_spec *out, struct xp_error *err);
void xp_spec_free(struct xp_spec *s);

#endif /* XP_CAPTURE_SPEC_H */
