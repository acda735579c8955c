/* SPDX-License-Identifier: Apache-2.0 */
/*
 * output.c - the one place that writes a command's result or error, so
 * that "exactly one document on stdout" holds by construction.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "../../common/json.h"
#include "cli.h"

void xp_cli_session_id(const char *kind, char *buf, size_t size)
{
	snprintf(buf, size, "xp_%s_%d", kind, (int)getpid());
}

void xp_cli_warning(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xprobe: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

int xp_cli_fail(const struct xp_cli *cli, const struct xp_error *err)
{
	int code = err->code ? err->code : XPROBE_E_INTERNAL;
	size_t i;

	if (cli->json) {
		struct xpc_json w;
		int rc;

		fflush(stdout);
		xpc_json_init_fd(&w, STDOUT_FILENO, XPC_JSON_PRETTY);
		xpc_json_obj_begin(&w);
		xpc_json_kstr(&w, "schema_version", "2.0");
		xpc_json_kbool(&w, "ok", false);
		xpc_json_kobj_begin(&w, "error");
		if (err->code) {
			xp_error_render_fields(err, &w);
		} else {
			struct xp_error tmp = { 0 };

			xp_error_set(&tmp, XPROBE_E_INTERNAL, false, "failure without a message");
			xp_error_render_fields(&tmp, &w);
		}
		xpc_json_obj_end(&w);
		xpc_json_obj_end(&w);
		xpc_buf_putc(w.out, '\n');
		rc = xpc_json_finish(&w);
		if (rc)
			fprintf(stderr, "xprobe: failed to write the error document\n");
	} else {
		fprintf(stderr, "%s: %s\n", xprobe_errname(code),
			err->code ? err->message : "failure without a message");
		for (i = 0; i < err->nhints; i++)
			fprintf(stderr, "hint: %s\n", err->hints[i]);
	}
	return xp_exit_code(code);
}

int xp_cli_emit(const struct xp_cli *cli, void (*render_json)(struct xpc_json *w, void *ctx),
		void (*render_human)(FILE *out, void *ctx), void *ctx)
{
	if (cli->json) {
		struct xpc_json w;

		fflush(stdout);
		xpc_json_init_fd(&w, STDOUT_FILENO, XPC_JSON_PRETTY);
		render_json(&w, ctx);
		xpc_buf_putc(w.out, '\n');
		if (xpc_json_finish(&w)) {
			fprintf(stderr, "xprobe: failed to write the result document\n");
			return 1;
		}
		return 0;
	}
	render_human(stdout, ctx);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "xprobe: failed to write the result\n");
		return 1;
	}
	return 0;
}
