/* SPDX-License-Identifier: Apache-2.0 */
/*
 * discover.c - `xprobe discover` (issue #3 builds it; until then an explicit error).
 */
#include "../cli/cli.h"

int cmd_discover(const struct xp_cli *cli)
{
	struct xp_error err = { 0 };
	int code;

	xp_error_set(&err, XPROBE_E_INTERNAL, false, "discover is not built into this xprobe yet");
	code = xp_cli_fail(cli, &err);
	xp_error_clear(&err);
	return code;
}
