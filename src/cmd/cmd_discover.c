/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_discover.c - `xprobe discover --pid ROOT [--limit N]`: CUDA compute
 * processes in ROOT's process tree, from NVML (src/checks/cuda_candidates.c).
 * Without NVML the answer is an error, never an empty list.
 */
#include "../checks/cuda_candidates.h"
#include "../report/report.h"
#include "cmd.h"

int cmd_discover(const struct xp_cli *cli)
{
	struct xp_error err = { 0 };
	struct xp_discovery d;
	int code;

	if (xp_discover(cli->pid, cli->has_limit ? cli->limit : XP_DEFAULT_DISCOVER_LIMIT, &d,
			&err)) {
		code = xp_out_fail(&cli->out, &err);
		xp_error_clear(&err);
		xp_discovery_free(&d);
		return code;
	}
	code = xp_out_emit(&cli->out, &xp_doc_discovery, &d);
	xp_discovery_free(&d);
	return code;
}
