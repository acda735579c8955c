/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_discover.c - `xprobe discover --pid ROOT [--limit N]`: CUDA compute
 * processes in ROOT's process tree, from NVML (src/checks/cuda_candidates.c).
 * Without NVML the answer is an error, never an empty list.
 */
#include "../checks/cuda_candidates.h"
#include "../report/report.h"
#include "cmd.h"
#include "mode_rules.h"

int xp_discover_usage(const struct xp_cli *cli, unsigned long accepted, struct xp_usage *u)
{
	int rc = xp_mode_conflicts(cli, accepted, u);

	if (rc)
		return rc;
	return cli->given & XP_OPT_PID ? 0 : xp_usage_missing(u, "--pid <PID>");
}

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
