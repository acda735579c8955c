/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec.c - the MeasurementSpec document of `measure --spec` (spec.h).
 *
 * Shape (schemas/measurement-spec.schema.json; the reference decodes it
 * with serde and deny_unknown_fields):
 *   schema_version   "2.0"                           required
 *   name             string | null                   optional
 *   target           {pid u32, process_start_time u64}, closed, required
 *   start_selector   string                          required
 *   end_selector     string                          required
 *   match_policy     exact | first_after | nearest | stack_nested |
 *                    stream_order (snake_case only)  required
 *   samples          u64 | null                      optional
 *   duration_ms      u64 | null, <= XPC_MS_MAX       optional
 *   timeout_ms       u64, <= XPC_MS_MAX              required
 *   max_events       u64 | null                      optional
 *   measurement_mode "exact" | "aggregate"           default "exact"
 *   max_groups       u64 | null                      optional
 * Unknown and duplicate keys, other versions, wrong types, negative or
 * fractional numbers are INVALID_EVENT_SELECTOR "invalid MeasurementSpec
 * <path>: <reason>" (recoverable false: the document must be fixed),
 * details path and field.  Whether the limits make sense together
 * (max_events present for exact specs ...) is the measure command's
 * business, not the parser's.
 *
 * Specs are a few hundred bytes; a file over XP_SPEC_MAX_BYTES (1 MiB) is
 * refused before parsing -- by fstat's st_size before a byte is read, or
 * while reading when it grows.  The file is opened through
 * common/readfile.h: a FIFO, socket or device is TRACE_EXPORT_FAILED at
 * once (a FIFO without a writer would otherwise block for ever).  Parsing goes through the xp_jdoc view of
 * decode_json.cc (simdjson's DOM), so the grammar is checked by the same
 * parser as captures.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/parse.h"
#include "../../common/readfile.h"
#include "decode_json.h"
#include "spec.h"

#define XP_SPEC_MAX_BYTES (1u << 20)

/* duration_ms and timeout_ms are bounded like the flags (XPC_MS_MAX). */
#define MS_WHAT "milliseconds whose nanoseconds fit in a signed 64-bit integer"

enum spec_field {
	SF_SCHEMA_VERSION = 0,
	SF_NAME,
	SF_TARGET,
	SF_START_SELECTOR,
	SF_END_SELECTOR,
	SF_MATCH_POLICY,
	SF_SAMPLES,
	SF_DURATION_MS,
	SF_TIMEOUT_MS,
	SF_MAX_EVENTS,
	SF_MEASUREMENT_MODE,
	SF_MAX_GROUPS,
	SF__COUNT
};

static const char *const spec_fields[SF__COUNT] = {
	"schema_version", "name",	  "target",	      "start_selector",
	"end_selector",	  "match_policy", "samples",	      "duration_ms",
	"timeout_ms",	  "max_events",	  "measurement_mode", "max_groups",
};

#define SF_REQUIRED                                                                  \
	((1u << SF_SCHEMA_VERSION) | (1u << SF_TARGET) | (1u << SF_START_SELECTOR) | \
	 (1u << SF_END_SELECTOR) | (1u << SF_MATCH_POLICY) | (1u << SF_TIMEOUT_MS))

/* In enum xp_policy order (src/correlate/correlate.h). */
static const char *const policy_names[] = {
	"exact", "first_after", "nearest", "stack_nested", "stream_order",
};

struct spec_ctx {
	const char *name;
	struct xp_error *err;
	char field[96]; /* "target.pid" */
};

static int lookup(const char *const *names, int n, const char *k, size_t klen)
{
	int i;

	for (i = 0; i < n; i++)
		if (strlen(names[i]) == klen && memcmp(names[i], k, klen) == 0)
			return i;
	return -1;
}

static int spec_fail(struct spec_ctx *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int spec_fail(struct spec_ctx *x, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	xp_error_detail_str(x->err, "path", x->name);
	if (x->field[0])
		xp_error_detail_str(x->err, "field", x->field);
	xp_error_hint(x->err, "check the spec against schemas/measurement-spec.schema.json");
	if (x->field[0])
		return xp_error_set(x->err, XPROBE_E_INVALID_EVENT_SELECTOR, false,
				    "invalid MeasurementSpec %s: %s: %s", x->name, x->field, why);
	return xp_error_set(x->err, XPROBE_E_INVALID_EVENT_SELECTOR, false,
			    "invalid MeasurementSpec %s: %s", x->name, why);
}

static void set_field(struct spec_ctx *x, const char *parent, const char *k, size_t klen)
{
	if (klen > 64)
		klen = 64;
	if (parent)
		snprintf(x->field, sizeof(x->field), "%s.%.*s", parent, (int)klen, k);
	else
		snprintf(x->field, sizeof(x->field), "%.*s", (int)klen, k);
}

static int key_fail(struct spec_ctx *x, const char *parent, const char *k, size_t klen,
		    const char *what)
{
	set_field(x, parent, k, klen);
	return spec_fail(x, "%s field", what);
}

static int get_uint(struct spec_ctx *x, struct xp_jval v, uint64_t max, const char *what,
		    uint64_t *out)
{
	enum xp_jtype t = xp_jval_type(v);

	if (t == XP_J_INT) {
		int64_t i = xp_jval_i64(v);

		if (i < 0)
			return spec_fail(x, "expected %s, found negative number %lld", what,
					 (long long)i);
		*out = (uint64_t)i;
	} else if (t == XP_J_UINT) {
		*out = xp_jval_u64(v);
	} else if (t == XP_J_DOUBLE) {
		return spec_fail(x, "expected %s, found floating-point number %.17g", what,
				 xp_jval_f64(v));
	} else {
		return spec_fail(x, "expected %s, found %s", what, xp_jtype_name(t));
	}
	if (*out > max)
		return spec_fail(x, "%llu is out of range for %s", (unsigned long long)*out, what);
	return 0;
}

static int get_opt_uint(struct spec_ctx *x, struct xp_jval v, uint64_t max, const char *what,
			bool *has, uint64_t *out)
{
	if (xp_jval_type(v) == XP_J_NULL) {
		*has = false;
		*out = 0;
		return 0;
	}
	*has = true;
	return get_uint(x, v, max, what, out);
}

static int get_opt_u64(struct spec_ctx *x, struct xp_jval v, bool *has, uint64_t *out)
{
	return get_opt_uint(x, v, UINT64_MAX, "an unsigned 64-bit integer", has, out);
}

/* A string without NUL bytes; @out receives a malloc'ed copy when non-NULL. */
static int get_str(struct spec_ctx *x, struct xp_jval v, const char **s, size_t *len, char **out)
{
	enum xp_jtype t = xp_jval_type(v);

	if (t != XP_J_STRING)
		return spec_fail(x, "expected a string, found %s", xp_jtype_name(t));
	*s = xp_jval_str(v, len);
	if (memchr(*s, '\0', *len))
		return spec_fail(x, "the string contains a NUL character");
	if (out) {
		*out = strndup(*s, *len);
		if (!*out)
			return spec_fail(x, "out of memory");
	}
	return 0;
}

static int parse_target(struct spec_ctx *x, struct xp_jval v, struct xp_spec *out)
{
	static const char *const names[] = { "pid", "process_start_time" };
	struct xp_jiter it;
	struct xp_jval m;
	const char *k;
	size_t klen;
	unsigned seen = 0;
	uint64_t u;
	int f;

	if (xp_jval_type(v) != XP_J_OBJECT)
		return spec_fail(x, "expected a TargetIdentity object, found %s",
				 xp_jtype_name(xp_jval_type(v)));
	xp_jobj_iter(v, &it);
	while (xp_jobj_next(&it, &k, &klen, &m)) {
		f = lookup(names, 2, k, klen);
		if (f < 0)
			return key_fail(x, "target", k, klen, "unknown");
		if (seen & (1u << f))
			return key_fail(x, "target", k, klen, "duplicate");
		seen |= 1u << f;
		set_field(x, "target", k, klen);
		if (f == 0) {
			if (get_uint(x, m, UINT32_MAX, "an unsigned 32-bit integer", &u))
				return -XPROBE_E_INVALID_EVENT_SELECTOR;
			out->pid = (uint32_t)u;
		} else if (get_uint(x, m, UINT64_MAX, "an unsigned 64-bit integer",
				    &out->process_start_time)) {
			return -XPROBE_E_INVALID_EVENT_SELECTOR;
		}
	}
	for (f = 0; f < 2; f++)
		if (!(seen & (1u << f)))
			return key_fail(x, "target", names[f], strlen(names[f]), "missing");
	return 0;
}

static int parse_field(struct spec_ctx *x, int f, struct xp_jval v, struct xp_spec *out)
{
	const char *s;
	size_t n;
	int p;

	switch (f) {
	case SF_SCHEMA_VERSION:
		if (get_str(x, v, &s, &n, NULL))
			return -1;
		if (n != strlen(XP_SCHEMA_VERSION) || memcmp(s, XP_SCHEMA_VERSION, n) != 0)
			return spec_fail(x, "unsupported schema version \"%.*s\", expected \"%s\"",
					 (int)(n > 40 ? 40 : n), s, XP_SCHEMA_VERSION);
		return 0;
	case SF_NAME:
		if (xp_jval_type(v) == XP_J_NULL)
			return 0;
		return get_str(x, v, &s, &n, &out->name);
	case SF_TARGET:
		return parse_target(x, v, out);
	case SF_START_SELECTOR:
		return get_str(x, v, &s, &n, &out->start_selector);
	case SF_END_SELECTOR:
		return get_str(x, v, &s, &n, &out->end_selector);
	case SF_MATCH_POLICY:
		if (xp_jval_type(v) != XP_J_STRING)
			return spec_fail(x,
					 "expected one of exact, first_after, nearest, "
					 "stack_nested, stream_order, found %s",
					 xp_jtype_name(xp_jval_type(v)));
		s = xp_jval_str(v, &n);
		p = lookup(policy_names, 5, s, n);
		if (p < 0)
			return spec_fail(x,
					 "unknown value \"%.*s\", expected one of exact, "
					 "first_after, nearest, stack_nested, stream_order",
					 (int)(n > 40 ? 40 : n), s);
		out->match_policy = p;
		return 0;
	case SF_SAMPLES:
		return get_opt_u64(x, v, &out->has_samples, &out->samples);
	case SF_DURATION_MS:
		return get_opt_uint(x, v, XPC_MS_MAX, MS_WHAT, &out->has_duration_ms,
				    &out->duration_ms);
	case SF_TIMEOUT_MS:
		return get_uint(x, v, XPC_MS_MAX, MS_WHAT, &out->timeout_ms);
	case SF_MAX_EVENTS:
		return get_opt_u64(x, v, &out->has_max_events, &out->max_events);
	case SF_MEASUREMENT_MODE:
		if (xp_jval_type(v) != XP_J_STRING)
			return spec_fail(x, "expected one of exact, aggregate, found %s",
					 xp_jtype_name(xp_jval_type(v)));
		s = xp_jval_str(v, &n);
		if (n == 5 && memcmp(s, "exact", 5) == 0)
			out->aggregate = false;
		else if (n == 9 && memcmp(s, "aggregate", 9) == 0)
			out->aggregate = true;
		else
			return spec_fail(x,
					 "unknown value \"%.*s\", expected one of exact, aggregate",
					 (int)(n > 40 ? 40 : n), s);
		return 0;
	case SF_MAX_GROUPS:
		return get_opt_u64(x, v, &out->has_max_groups, &out->max_groups);
	}
	return spec_fail(x, "unsupported field");
}

int xp_spec_parse(const char *data, size_t len, const char *name, struct xp_spec *out,
		  struct xp_error *err)
{
	struct spec_ctx x = { .name = name ? name : "spec", .err = err };
	struct xp_jdoc *doc = NULL;
	struct xp_jiter it;
	struct xp_jval root, v;
	char why[256];
	const char *k;
	size_t klen;
	unsigned seen = 0;
	int f, rc = 0;

	memset(out, 0, sizeof(*out));
	if (len > XP_SPEC_MAX_BYTES) {
		rc = spec_fail(&x, "the document is larger than %u bytes", XP_SPEC_MAX_BYTES);
		goto out;
	}
	rc = xp_json_ready(err);
	if (rc)
		goto out;
	doc = xp_jdoc_parse(data, len, why, sizeof(why));
	if (!doc) {
		rc = spec_fail(&x, "%s", why);
		goto out;
	}
	root = xp_jdoc_root(doc);
	if (xp_jval_type(root) != XP_J_OBJECT) {
		rc = spec_fail(&x, "expected a MeasurementSpec object, found %s",
			       xp_jtype_name(xp_jval_type(root)));
		goto out;
	}
	xp_jobj_iter(root, &it);
	while (xp_jobj_next(&it, &k, &klen, &v)) {
		f = lookup(spec_fields, SF__COUNT, k, klen);
		if (f < 0) {
			rc = key_fail(&x, NULL, k, klen, "unknown");
			goto out;
		}
		if (seen & (1u << f)) {
			rc = key_fail(&x, NULL, k, klen, "duplicate");
			goto out;
		}
		seen |= 1u << f;
		set_field(&x, NULL, k, klen);
		if (parse_field(&x, f, v, out)) {
			rc = -XPROBE_E_INVALID_EVENT_SELECTOR;
			goto out;
		}
		x.field[0] = '\0';
	}
	for (f = 0; f < SF__COUNT; f++)
		if ((SF_REQUIRED & (1u << f)) && !(seen & (1u << f))) {
			rc = key_fail(&x, NULL, spec_fields[f], strlen(spec_fields[f]), "missing");
			goto out;
		}
out:
	xp_jdoc_free(doc);
	if (rc)
		xp_spec_free(out);
	return rc;
}

int xp_spec_load(const char *path, struct xp_spec *out, struct xp_error *err)
{
	struct stat sb;
	char *buf = NULL, why[128];
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&sb, 0, sizeof(sb));
	rc = xpc_read_file(path, 0, XP_SPEC_MAX_BYTES, &buf, &len, &sb);
	if (rc == -EFBIG) {
		struct spec_ctx x = { .name = path, .err = err };

		return spec_fail(&x, "the document is larger than %u bytes", XP_SPEC_MAX_BYTES);
	}
	if (rc) {
		xp_error_detail_str(err, "path", path);
		if (rc == -XPC_EFTYPE) {
			xp_error_detail_str(err, "file_type", xpc_file_type_name(sb.st_mode));
			xp_error_hint(err, "a MeasurementSpec is a regular JSON file; write it to a "
					   "file first");
		}
		return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
				    "failed to read %s: %s", path,
				    xpc_file_strerror(rc, sb.st_mode, why, sizeof(why)));
	}
	rc = xp_spec_parse(buf, len, path, out, err);
	free(buf);
	return rc;
}

void xp_spec_free(struct xp_spec *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->start_selector);
	free(s->end_selector);
	memset(s, 0, sizeof(*s));
}
