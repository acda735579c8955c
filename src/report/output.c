/* SPDX-License-Identifier: Apache-2.0 */
/*
 * output.c - the one place that writes a command's result or error, so
 * that "exactly one document on stdout" holds by construction; and what a
 * terminal gets besides: colors and the live progress line (output.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "../../common/env_hooks.h"
#include "../../common/json.h"
#include "../../common/monotonic.h"
#include "output.h"

bool xp_out_color(const struct xp_output *o, int fd)
{
	const char *term = xpc_env("TERM");

	/* xpc_env: NULL when unset or empty, so NO_COLOR= keeps colors */
	if (o->no_color || xpc_env("NO_COLOR") || (term && !strcmp(term, "dumb")))
		return false;
	return isatty(fd) == 1;
}

/* All of @n bytes to stderr; a terminal that stops taking them just
 * loses the progress line. */
static void put_stderr(const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

void xp_out_progress_init(struct xp_out_progress *p, const struct xp_output *o)
{
	memset(p, 0, sizeof(*p));
	p->on = !o->non_interactive && isatty(STDERR_FILENO) == 1;
	p->color = p->on && xp_out_color(o, STDERR_FILENO);
}

#define PREFIX "xprobe: "
#define PROGRESS_MAX 400 /* columns of text at most */

/*
 * "\r", the prefix, @text cut to the terminal's width less one column (a
 * full row wraps on some terminals, and "\r" only returns to the start of
 * the last row), then blanks over what the previous line had beyond this
 * one: no escape sequence but the prefix's color, so a terminal without
 * colors (--no-color, NO_COLOR, TERM=dumb) gets none.
 */
void xp_out_progress_draw(struct xp_out_progress *p, const char *text)
{
	char line[1 + 32 + 2 * (sizeof(PREFIX) + PROGRESS_MAX)];
	size_t cols = 80, room, len = strlen(text), vis, off;
	struct winsize ws;
	uint64_t now;

	if (!p->on)
		return;
	now = xpc_mono_ns();
	if (p->drawn && now - p->last_ns < XP_OUT_PROGRESS_NS)
		return;
	p->last_ns = now;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		cols = ws.ws_col;
	room = cols > sizeof(PREFIX) ? cols - sizeof(PREFIX) : 0; /* sizeof: + the column */
	if (room > PROGRESS_MAX)
		room = PROGRESS_MAX;
	if (len > room) {
		len = room;
		while (len && ((unsigned char)text[len] & 0xc0) == 0x80)
			len--; /* not inside a UTF-8 sequence */
	}
	vis = sizeof(PREFIX) - 1 + len; /* bytes >= columns: blanks never overflow */
	off = (size_t)snprintf(line, sizeof(line), "\r%s%.*s",
			       p->color ? "\033[1;36mxprobe:\033[0m " : PREFIX, (int)len, text);
	/* invariant: p->width <= sizeof(PREFIX) - 1 + PROGRESS_MAX, so it fits */
	if (p->width > vis) {
		memset(line + off, ' ', p->width - vis);
		off += p->width - vis;
	}
	put_stderr(line, off);
	p->width = vis;
	p->drawn = true;
}

void xp_out_progress_end(struct xp_out_progress *p)
{
	char line[2 + sizeof(PREFIX) + PROGRESS_MAX];

	if (!p->on || !p->drawn)
		return;
	line[0] = '\r';
	memset(line + 1, ' ', p->width);
	line[1 + p->width] = '\r';
	put_stderr(line, p->width + 2);
	p->drawn = false;
	p->width = 0;
}

void xp_out_session_id(const char *kind, char *buf, size_t size)
{
	snprintf(buf, size, "xp_%s_%d", kind, (int)getpid());
}

void xp_out_warning(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xprobe: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/*
 * One detail of an error for a person: "  key: value", a string without
 * its quotes and escapes, a number or boolean as it is, an array or object
 * as compact JSON cut at DETAIL_MAX characters.  details.result (the
 * whole result a failed artifact could not save) is printed above the
 * error instead (measure.c).
 */
#define DETAIL_MAX 160

static void print_detail(FILE *out, const struct xp_error_detail *d)
{
	const char *v = d->json;
	size_t n = strlen(v);

	if (!strcmp(d->key, "result"))
		return;
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		fprintf(out, "  %s: ", d->key);
		for (size_t i = 1; i + 1 < n; i++) {
			if (v[i] == '\\' && i + 2 < n) {
				i++;
				fputc(v[i] == 'n' ? ' ' : v[i] == 't' ? ' ' : v[i], out);
				continue;
			}
			fputc(v[i], out);
		}
		fputc('\n', out);
		return;
	}
	if (n > DETAIL_MAX)
		fprintf(out, "  %s: %.*s...\n", d->key, DETAIL_MAX, v);
	else
		fprintf(out, "  %s: %s\n", d->key, v);
}

int xp_out_fail(const struct xp_output *o, const struct xp_error *err)
{
	int code = err->code ? err->code : XPROBE_E_INTERNAL;
	size_t i;

	if (o->json) {
		struct xpc_json w;
		int rc;

		fflush(stdout);
		xpc_json_init_fd(&w, STDOUT_FILENO, o->json_lines ? 0 : XPC_JSON_PRETTY);
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
		for (i = 0; i < err->ndetails; i++)
			print_detail(stderr, &err->details[i]);
		for (i = 0; i < err->nhints; i++)
			fprintf(stderr, "hint: %s\n", err->hints[i]);
	}
	return xp_exit_code(code);
}

int xp_out_emit(const struct xp_output *o, const struct xp_doc_type *type, const void *doc)
{
	if (o->json) {
		struct xpc_json w;

		fflush(stdout);
		xpc_json_init_fd(&w, STDOUT_FILENO, o->json_lines ? 0 : XPC_JSON_PRETTY);
		type->json(&w, doc);
		xpc_buf_putc(w.out, '\n');
		if (xpc_json_finish(&w)) {
			fprintf(stderr, "xprobe: failed to write the result document\n");
			return 1;
		}
		return 0;
	}
	type->human(stdout, doc);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "xprobe: failed to write the result\n");
		return 1;
	}
	return 0;
}
