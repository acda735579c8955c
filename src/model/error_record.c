/* SPDX-License-Identifier: Apache-2.0 */
/*
 * error_record.c - struct xp_error and struct xp_warnings; see error_record.h.
 * Details are kept unsorted with replace-on-same-key and sorted only when
 * rendered (serde_json renders maps as BTreeMap: alphabetical keys).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/cancel.h"
#include "../../common/json.h"
#include "error_record.h"

int xp_error_set(struct xp_error *e, int code, bool recoverable, const char *fmt, ...)
{
	va_list ap;

	if (code < 0)
		code = -code;
	if (!e)
		return -code;
	e->code = code;
	e->recoverable = recoverable;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return -code;
}

void xp_error_prefix(struct xp_error *e, const char *fmt, ...)
{
	char prefix[512], old[XP_ERR_MESSAGE_MAX];
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, e->message, sizeof(old));
	snprintf(e->message, sizeof(e->message), "%s: %s", prefix, old);
}

static void detail_put(struct xp_error *e, const char *key, char *json)
{
	size_t i;

	if (!e || !json) {
		free(json);
		return;
	}
	for (i = 0; i < e->ndetails; i++) {
		if (strcmp(e->details[i].key, key) == 0) {
			free(e->details[i].json);
			e->details[i].json = json;
			return;
		}
	}
	if (e->ndetails == XP_ERR_MAX_DETAILS) {
		free(json);
		return;
	}
	e->details[e->ndetails].key = strdup(key);
	if (!e->details[e->ndetails].key) {
		free(json);
		return;
	}
	e->details[e->ndetails++].json = json;
}

void xp_error_detail_str(struct xp_error *e, const char *key, const char *val)
{
	struct xpc_buf b = XPC_BUF_INIT;

	if (!val) {
		xp_error_detail_null(e, key);
		return;
	}
	xpc_buf_putc(&b, '"');
	xpc_json_escape(&b, val, strlen(val));
	xpc_buf_putc(&b, '"');
	detail_put(e, key, xpc_buf_steal(&b));
}

void xp_error_detail_u64(struct xp_error *e, const char *key, uint64_t val)
{
	struct xpc_buf b = XPC_BUF_INIT;

	xpc_buf_printf(&b, "%llu", (unsigned long long)val);
	detail_put(e, key, xpc_buf_steal(&b));
}

void xp_error_detail_i64(struct xp_error *e, const char *key, int64_t val)
{
	struct xpc_buf b = XPC_BUF_INIT;

	xpc_buf_printf(&b, "%lld", (long long)val);
	detail_put(e, key, xpc_buf_steal(&b));
}

void xp_error_detail_bool(struct xp_error *e, const char *key, bool val)
{
	detail_put(e, key, strdup(val ? "true" : "false"));
}

void xp_error_detail_null(struct xp_error *e, const char *key)
{
	detail_put(e, key, strdup("null"));
}

void xp_error_detail_raw(struct xp_error *e, const char *key, const char *json)
{
	detail_put(e, key, strdup(json ? json : "null"));
}

void xp_error_detail_strv(struct xp_error *e, const char *key, const char *const *v, size_t n)
{
	struct xpc_buf b = XPC_BUF_INIT;
	size_t i;

	xpc_buf_putc(&b, '[');
	for (i = 0; i < n; i++) {
		if (i)
			xpc_buf_putc(&b, ',');
		xpc_buf_putc(&b, '"');
		xpc_json_escape(&b, v[i], strlen(v[i]));
		xpc_buf_putc(&b, '"');
	}
	xpc_buf_putc(&b, ']');
	detail_put(e, key, xpc_buf_steal(&b));
}

const char *xp_error_detail_get(const struct xp_error *e, const char *key)
{
	size_t i;

	for (i = 0; e && i < e->ndetails; i++)
		if (strcmp(e->details[i].key, key) == 0)
			return e->details[i].json;
	return NULL;
}

void xp_error_hint(struct xp_error *e, const char *fmt, ...)
{
	struct xpc_buf b = XPC_BUF_INIT;
	va_list ap;
	char *h;
	size_t i;

	if (!e || e->nhints == XP_ERR_MAX_HINTS)
		return;
	va_start(ap, fmt);
	xpc_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	h = xpc_buf_steal(&b);
	if (!h)
		return;
	for (i = 0; i < e->nhints; i++) {
		if (strcmp(e->hints[i], h) == 0) { /* no duplicate hints */
			free(h);
			return;
		}
	}
	e->hints[e->nhints++] = h;
}

void xp_error_clear(struct xp_error *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->ndetails; i++) {
		free(e->details[i].key);
		free(e->details[i].json);
	}
	for (i = 0; i < e->nhints; i++)
		free(e->hints[i]);
	memset(e, 0, sizeof(*e));
}

void xp_error_move(struct xp_error *dst, struct xp_error *src)
{
	if (dst == src)
		return;
	xp_error_clear(dst);
	memcpy(dst, src, sizeof(*dst));
	memset(src, 0, sizeof(*src));
}

int xp_exit_code(int code)
{
	if (code < 0)
		code = -code;
	switch (code) {
	case 0:
		return 0;
	case XPROBE_E_TARGET_NOT_FOUND:
	case XPROBE_E_TARGET_EXITED:
	case XPROBE_E_TARGET_REUSED:
		return 3;
	case XPROBE_E_PERMISSION_DENIED:
		return 4;
	default:
		return 1;
	}
}

static int detail_cmp(const void *a, const void *b)
{
	const struct xp_error_detail *const *x = a, *const *y = b;

	return strcmp((*x)->key, (*y)->key);
}

void xp_error_render_fields(const struct xp_error *e, struct xpc_json *w)
{
	const struct xp_error_detail *sorted[XP_ERR_MAX_DETAILS];
	size_t i;

	xpc_json_kstr(w, "code", xprobe_errname(e->code));
	xpc_json_kstr(w, "message", e->message);
	xpc_json_kbool(w, "recoverable", e->recoverable);
	for (i = 0; i < e->ndetails; i++)
		sorted[i] = &e->details[i];
	qsort(sorted, e->ndetails, sizeof(sorted[0]), detail_cmp);
	xpc_json_kobj_begin(w, "details");
	for (i = 0; i < e->ndetails; i++)
		xpc_json_kraw(w, sorted[i]->key, sorted[i]->json);
	xpc_json_obj_end(w);
	xpc_json_karr_begin(w, "hints");
	for (i = 0; i < e->nhints; i++)
		xpc_json_str(w, e->hints[i]);
	xpc_json_arr_end(w);
}

int xp_error_cancelled(struct xp_error *e, const char *what)
{
	xp_error_set(e, XPROBE_E_INTERNAL, false, "%s: cancelled by signal %d", what ? what : "xprobe",
		     xpc_cancel_signo());
	return -ECANCELED;
}

int xp_error_event_limit(struct xp_error *err, const char *name, uint64_t observed,
			 uint64_t max_events)
{
	xp_error_detail_u64(err, "observed_events", observed);
	xp_error_detail_u64(err, "max_events", max_events);
	xp_error_detail_str(err, "path", name);
	/* the contract's hint first, then the figure that fits */
	xp_error_hint(err, "narrow the selectors or explicitly increase max-events");
	xp_error_hint(err, "raise the bound: --max-events %" PRIu64 " holds this capture", observed);
	return xp_error_set(err, XPROBE_E_EVENT_RATE_TOO_HIGH, true,
			    "capture contains %" PRIu64
			    " events, exceeding the maximum of %" PRIu64,
			    observed, max_events);
}

int xp_warnings_add(struct xp_warnings *ws, const char *code, const char *message,
		    const char *details_json)
{
	struct xp_warning *w;

	if (ws->n == ws->cap) {
		size_t cap = ws->cap ? ws->cap * 2 : 4;
		struct xp_warning *v = realloc(ws->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ws->v = v;
		ws->cap = cap;
	}
	w = &ws->v[ws->n];
	w->code = strdup(code);
	w->message = strdup(message);
	w->details = details_json ? strdup(details_json) : NULL;
	if (!w->code || !w->message || (details_json && !w->details)) {
		free(w->code);
		free(w->message);
		free(w->details);
		return -ENOMEM;
	}
	ws->n++;
	return 0;
}

int xp_warnings_add_u64(struct xp_warnings *ws, const char *code, const char *message, ...)
{
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;
	const char *key;
	va_list ap;
	int rc;

	xpc_json_init_buf(&w, &b, 0);
	xpc_json_obj_begin(&w);
	va_start(ap, message);
	while ((key = va_arg(ap, const char *)))
		xpc_json_ku64(&w, key, va_arg(ap, uint64_t));
	va_end(ap);
	xpc_json_obj_end(&w);
	rc = xpc_json_finish(&w);
	if (!rc)
		rc = xp_warnings_add(ws, code, message, xpc_buf_str(&b));
	xpc_buf_free(&b);
	return rc;
}

bool xp_warnings_has(const struct xp_warnings *ws, const char *code)
{
	size_t i;

	for (i = 0; i < ws->n; i++)
		if (strcmp(ws->v[i].code, code) == 0)
			return true;
	return false;
}

void xp_warnings_free(struct xp_warnings *ws)
{
	size_t i;

	for (i = 0; i < ws->n; i++) {
		free(ws->v[i].code);
		free(ws->v[i].message);
		free(ws->v[i].details);
	}
	free(ws->v);
	memset(ws, 0, sizeof(*ws));
}

void xp_warnings_render(const struct xp_warnings *ws, struct xpc_json *w)
{
	size_t i;

	xpc_json_arr_begin(w);
	for (i = 0; i < ws->n; i++) {
		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "code", ws->v[i].code);
		xpc_json_kstr(w, "message", ws->v[i].message);
		xpc_json_kraw(w, "details", ws->v[i].details ? ws->v[i].details : "{}");
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
}
