/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_doctor.c - `xprobe doctor`: run the machine diagnosis (src/checks/
 * doctor_checks.c) and render it.  ok: true means the diagnosis completed.
 */
#include "../checks/doctor_checks.h"
#include "../report/report.h"
#include "cmd.h"

int cmd_doctor(const struct xp_cli *cli)
{
	struct xp_error err = { 0 };
	struct xp_doctor d;
	int code;

	if (xp_doctor_run(&d, &err)) {
		xp_error_prefix(&err, "environment inspection failed");
		code = xp_out_fail(&cli->out, &err);
		xp_error_clear(&err);
		return code;
	}
	code = xp_out_emit(&cli->out, &xp_doc_doctor, &d);
	xp_doctor_free(&d);
	return code;
}
