/* SPDX-License-Identifier: Apache-2.0 */
/*
 * measure_live.c - live measurement modes of `measure --pid` / `--spec`.
 *
 * Until the eBPF collectors land (issue #4) and the inventories (issue #6),
 * each live mode answers with an explicit error naming what is missing,
 * never a fabricated result.  CUDA endpoints need the in-process Agent
 * (DESIGN.md section 9), which no issue has built yet: CUPTI_NOT_AVAILABLE.
 */
#include "measure.h"

int xp_measure_live(struct xp_measure_req *req, struct xp_error *err)
{
	xp_target_detail(err, &req->target);
	xp_error_hint(err, "measure a completed capture with --input until live collection is built");
	return xp_error_set(err, XPROBE_E_INTERNAL, false,
			    "live host measurement is not built into this xprobe yet");
}

int xp_measure_cpu_sample(const struct xp_cli *cli, struct xp_error *err)
{
	(void)cli;
	return xp_error_set(err, XPROBE_E_INTERNAL, false,
			    "--cpu-sample is not built into this xprobe yet");
}

int xp_measure_syscall_aggregate(const struct xp_cli *cli, struct xp_error *err)
{
	(void)cli;
	return xp_error_set(err, XPROBE_E_INTERNAL, false,
			    "--syscall-aggregate is not built into this xprobe yet");
}

int xp_measure_cuda_aggregate(const struct xp_cli *cli, struct xp_error *err)
{
	(void)cli;
	xp_error_hint(err, "CUDA activity inventories need the xprobe CUDA Agent, which this build does not drive yet");
	return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
			    "--aggregate needs live CUPTI collection, which is not available in this build");
}
