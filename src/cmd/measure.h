/* SPDX-License-Identifier: Apache-2.0 */
/*
 * measure.h - what the measure command's source modes share: the parsed
 * request and the common tail (correlate -> artifact -> render).
 */
#ifndef XP_CMD_MEASURE_H
#define XP_CMD_MEASURE_H

#include "../cli/cli.h"
#include "../correlate/correlate.h"
#include "../report/report.h"
#include "../selector/selector.h"
#include "../process/identity.h"

struct xp_measure_req {
	const struct xp_cli *cli;
	const char *name;          /* measurement name or NULL */
	const char *from_text;
	const char *to_text;
	struct xp_selector from;
	struct xp_selector to;
	enum xp_policy policy;
	uint64_t samples;          /* 0 = none */
	uint64_t duration_ms;      /* 0 = none */
	uint64_t timeout_ms;
	uint64_t max_events;
	const char *events_out;    /* NULL = no artifact */
	int format;                /* enum xp_export_format */
	char session_id[64];
	bool has_target;           /* live: target identity below */
	struct xp_target target;
};

/*
 * Correlate @c, write the artifact, render the result or the error.
 * @status: "completed" or "timed_out"; @host: live counters or NULL;
 * @extra: warnings to append (NULL ok).  Returns the exit code.
 */
int xp_measure_finish(struct xp_measure_req *req, struct xp_capture *c, const char *status,
		      const struct xp_host_collection *host, const struct xp_warnings *extra);

/*
 * A signal (common/cancel.h) stopped @phase ("decode", "correlate",
 * "measure") before a result: @err becomes the document the live path
 * gives a cancelled capture without pairs -- NO_MATCHED_SAMPLES with
 * details.cancelled true, signal, phase and the events read so far.
 * A cancelled artifact write is TRACE_EXPORT_FAILED with the same details
 * (phase "export").  Returns -code.
 */
int xp_measure_cancelled(struct xp_measure_req *req, const char *phase, size_t events,
			 struct xp_error *err);

/* Write the artifact for a failed measurement and add its details to
 * @err (or turn @err into TRACE_EXPORT_FAILED when writing fails). */
void xp_measure_artifact_on_error(struct xp_measure_req *req, const struct xp_capture *c,
				  struct xp_error *err);

/*
 * Convention of the sub-paths below: a negative return is an error recorded
 * in @err that the caller still has to emit; a return >= 0 is the exit code
 * of a path that already emitted its document (success or error).
 */
/* Live modes (measure_live.c and the inventories). */
int xp_measure_live(struct xp_measure_req *req, struct xp_error *err);
int xp_measure_cpu_sample(const struct xp_cli *cli, struct xp_error *err);
int xp_measure_syscall_aggregate(const struct xp_cli *cli, struct xp_error *err);
int xp_measure_cuda_aggregate(const struct xp_cli *cli, struct xp_error *err);

#endif /* XP_CMD_MEASURE_H */
