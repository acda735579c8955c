/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_doctor.c - `xprobe doctor`: run the machine diagnosis (src/checks/
 * doctor_checks.c) and render it.  ok: true means the diagnosis completed.
 */
#include "../cli/cli.h"
#include "../report/report.h"
#include "../checks/doctor_checks.h"

static void render_json(struct xpc_json *w, void *ctx)
{
	xp_render_doctor_json(w, ctx);
}

static void render_human(FILE *out, void *ctx)
{
	xp_render_doctor_human(out, ctx);
}

int cmd_doctor(const struct xp_cli *cli)
{
	struct xp_error err = { 0 };
	struct xp_doctor d;
	int code;

	if (xp_doctor_run(&d, &err)) {
		xp_error_prefix(&err, "environment inspection failed");
		code = xp_cli_fail(cli, &err);
		xp_error_clear(&err);
		return code;
	}
	code = xp_cli_emit(cli, render_json, render_human, &d);
	xp_doctor_free(&d);
	return code;
}
