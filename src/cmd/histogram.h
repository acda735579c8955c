/* SPDX-License-Identifier: Apache-2.0 */
/*
 * histogram.h - the two commands of `--histogram` (docs/histograms.md):
 * `measure --histogram` and `validate --histogram` (histogram.c).
 * Orchestration only: the pairing and counting are
 * src/inventory/latency_histogram.h's, the documents
 * src/report/render_histogram.h's.  What the in-kernel pairing cannot do
 * was refused as a syntax error before (histogram_rules.c).
 */
#ifndef XP_CMD_HISTOGRAM_H
#define XP_CMD_HISTOGRAM_H

#include "cmd.h"
#include "../model/error_record.h"
#include "../process/identity.h"

/*
 * A negative return is an error recorded in @err that the caller still
 * has to emit; a return >= 0 is the exit code of a path that already
 * emitted its document.
 */
struct xp_measure_req;
int xp_measure_histogram(struct xp_measure_req *req, struct xp_error *err);
int xp_validate_histogram(const struct xp_cli *cli, const struct xp_target *t,
			  struct xp_error *err);

#endif /* XP_CMD_HISTOGRAM_H */
