/* SPDX-License-Identifier: Apache-2.0 */
/*
 * export.c - writing a whole capture out: Event JSONL and Chrome Trace
 * Event Format (measure --events-out, docs/output.md).
 *
 * Both formats are streamed through the JSON writer straight into the
 * temporary of an atomic write (common/atomic_file.h): the writer flushes
 * every megabyte, so memory stays bounded whatever the capture's size,
 * and a reader of <path> sees either the previous file or the complete new
 * one, mode 0600, never a partial file.  Any failure (open, write, fsync,
 * rename) removes the temporary and is reported as TRACE_EXPORT_FAILED
 * "failed to write <path>: <reason>", not recoverable, details {"path"}.
 *
 * JSONL: one compact Event document per line (event_json.c renders it,
 * with the session id of the writing session), "\n" after every line,
 * the last included.  The file reads back through `measure --input`.
 *
 * Chrome: one pretty document {"displayTimeUnit": "ns", "traceEvents":
 * [...]} (keys alphabetical, as the reference writes it).  It starts with
 * one process_name metadata event ("ph": "M") per pid, so Perfetto and
 * chrome://tracing label the process track; then one thread-scoped instant
 * ("ph": "i", "s": "t") per event, in capture order:
 *   ts    timestamp_ns / 1000, integer microseconds rounded down;
 *   tid   cuda.stream_id when the event has one (a GPU stream is a track),
 *         else the thread id;
 *   cat   by source: host, cuda.api, cuda.activity, marker;
 *   name  host.symbol, else attributes.cuda_api_name (a string), else
 *         cuda.kernel_name, else nvtx.name, else event_type;
 *   args  attributes, clock_domain, context_id, correlation_id, event_id,
 *         event_type, nvtx, stream_id, timestamp_ns, timestamp_raw, keys
 *         alphabetical (nvtx's too), nulls written.
 * Perfetto's legacy JSON importer needs "ph", "pid", "tid" and "ts" on
 * instants and "name" plus args.name on process_name, and its tokenizer
 * rejects an array directly under an event (it scans the top-level keys
 * for ts): arrays only ever appear inside args.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/atomic_file.h"
#include "../../common/cancel.h"
#include "../../common/json.h"
#include "../../common/readfile.h"
#include "../model/event_json.h"
#include "capture_io.h"

static const char *const format_names[] = {
	[XP_EXPORT_JSONL] = "jsonl",
	[XP_EXPORT_CHROME] = "chrome",
};

const char *xp_export_format_name(enum xp_export_format f)
{
	if ((unsigned)f < sizeof(format_names) / sizeof(format_names[0]))
		return format_names[f];
	return "unknown";
}

int xp_export_format_parse(const char *s)
{
	size_t i;

	if (!s)
		return -1;
	for (i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (strcmp(s, format_names[i]) == 0)
			return (int)i;
	return -1;
}

static void write_jsonl(struct xpc_json *w, const struct xp_capture *c, const char *session_id)
{
	size_t i;

	for (i = 0; i < c->count && !w->err; i++) {
		if (!(i % XPC_CANCEL_EVERY) && xpc_cancel_signo()) {
			w->err = -ECANCELED; /* the caller aborts: no temporary left */
			break;
		}
		xp_event_render(w, c, &c->events[i], session_id);
		xpc_json_line_end(w);
	}
}

static const char *chrome_category(unsigned source)
{
	switch (source) {
	case XP_SRC_EBPF:
		return "host";
	case XP_SRC_CUPTI_CALLBACK:
		return "cuda.api";
	case XP_SRC_CUPTI_ACTIVITY:
		return "cuda.activity";
	case XP_SRC_MARKER:
		return "marker";
	}
	return "unknown";
}

/*
 * The instant's name, by the documented fallback chain.  Attribute values
 * are stored as compact JSON text, so a string-valued cuda_api_name is
 * written as it is stored (it is already a valid JSON string token).
 */
static void write_chrome_name(struct xpc_json *w, const struct xp_capture *c,
			      const struct xp_event *e, xp_str_t api_name_key)
{
	const char *s;
	xp_str_t id;

	xpc_json_key(w, "name");
	if ((e->flags & XP_EVF_HOST) && e->host.symbol) {
		id = e->host.symbol;
		xpc_json_strn(w, xp_capture_str(c, id), xp_strtab_len(&c->strings, id));
		return;
	}
	if (api_name_key && (id = xp_event_attr(c, e, api_name_key)) != 0) {
		s = xp_capture_str(c, id);
		if (s && s[0] == '"') {
			xpc_json_raw(w, s);
			return;
		}
	}
	if ((e->flags & XP_EVF_CUDA) && e->cuda.kernel_name) {
		id = e->cuda.kernel_name;
		xpc_json_strn(w, xp_capture_str(c, id), xp_strtab_len(&c->strings, id));
		return;
	}
	if ((e->flags & XP_EVF_NVTX) && e->nvtx.name) {
		id = e->nvtx.name;
		xpc_json_strn(w, xp_capture_str(c, id), xp_strtab_len(&c->strings, id));
		return;
	}
	xpc_json_str(w, xp_event_type_name(e->event_type));
}

static void write_chrome_event(struct xpc_json *w, const struct xp_capture *c,
			       const struct xp_event *e, xp_str_t api_name_key)
{
	const struct xp_cuda_part *d = &e->cuda;
	bool cuda = e->flags & XP_EVF_CUDA;
	bool has_stream = cuda && (d->flags & XP_CUDAF_STREAM_ID);
	char event_id[32];

	snprintf(event_id, sizeof(event_id), "evt_%llu", (unsigned long long)e->sequence);
	xpc_json_obj_begin(w);
	xpc_json_kobj_begin(w, "args");
	xpc_json_key(w, "attributes");
	xp_event_render_attributes(w, c, e);
	xpc_json_kstr(w, "clock_domain", xp_clock_domain_name(e->clock_domain));
	xpc_json_kopt_u64(w, "context_id", cuda && (d->flags & XP_CUDAF_CONTEXT_ID),
			  d->context_id);
	xpc_json_kopt_u64(w, "correlation_id", cuda && (d->flags & XP_CUDAF_CORRELATION_ID),
			  d->correlation_id);
	xpc_json_kstr(w, "event_id", event_id);
	xpc_json_kstr(w, "event_type", xp_event_type_name(e->event_type));
	xpc_json_key(w, "nvtx");
	xp_event_render_nvtx(w, c, e, true);
	xpc_json_kopt_u64(w, "stream_id", has_stream, d->stream_id);
	xpc_json_ku64(w, "timestamp_ns", e->timestamp_ns);
	xpc_json_ku64(w, "timestamp_raw", e->timestamp_raw);
	xpc_json_obj_end(w);
	xpc_json_kstr(w, "cat", chrome_category(e->source));
	write_chrome_name(w, c, e, api_name_key);
	xpc_json_kstr(w, "ph", "i");
	xpc_json_ku64(w, "pid", e->pid);
	xpc_json_kstr(w, "s", "t");
	xpc_json_ku64(w, "tid", has_stream ? d->stream_id : e->tid);
	xpc_json_ku64(w, "ts", e->timestamp_ns / 1000);
	xpc_json_obj_end(w);
}

static void write_process_name(struct xpc_json *w, uint32_t pid, const char *session_id)
{
	char name[128];

	snprintf(name, sizeof(name), "pid %u (%s)", pid, session_id ? session_id : "xprobe");
	xpc_json_obj_begin(w);
	xpc_json_kobj_begin(w, "args");
	xpc_json_kstr(w, "name", name);
	xpc_json_obj_end(w);
	xpc_json_kstr(w, "name", "process_name");
	xpc_json_kstr(w, "ph", "M");
	xpc_json_ku64(w, "pid", pid);
	xpc_json_ku64(w, "tid", 0);
	xpc_json_obj_end(w);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Distinct pids of @c, ascending, into a malloc'ed array.  A capture
 * normally holds one target (merge enforces it), so the scan keeps the
 * last pid seen and compares against the short list only on a change.
 */
static int distinct_pids(const struct xp_capture *c, uint32_t **out, size_t *n)
{
	uint32_t *v = NULL, last = 0;
	size_t cnt = 0, cap = 0, i, j;
	bool have_last = false;

	for (i = 0; i < c->count; i++) {
		uint32_t pid = c->events[i].pid;

		if (have_last && pid == last)
			continue;
		last = pid;
		have_last = true;
		for (j = 0; j < cnt; j++)
			if (v[j] == pid)
				break;
		if (j < cnt)
			continue;
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 4;
			uint32_t *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = ncap;
		}
		v[cnt++] = pid;
	}
	if (cnt > 1)
		qsort(v, cnt, sizeof(*v), u32_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

static int write_chrome(struct xpc_json *w, const struct xp_capture *c, const char *session_id)
{
	xp_str_t api_name_key;
	uint32_t *pids = NULL;
	size_t npids = 0, i;
	int rc;

	rc = distinct_pids(c, &pids, &npids);
	if (rc)
		return rc;
	/* Looked up once: 0 when no event of this capture has the key. */
	api_name_key = xp_strtab_find(&c->strings, "cuda_api_name", strlen("cuda_api_name"));
	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "displayTimeUnit", "ns");
	xpc_json_karr_begin(w, "traceEvents");
	for (i = 0; i < npids; i++)
		write_process_name(w, pids[i], session_id);
	for (i = 0; i < c->count && !w->err; i++) {
		if (!(i % XPC_CANCEL_EVERY) && xpc_cancel_signo()) {
			w->err = -ECANCELED;
			break;
		}
		write_chrome_event(w, c, &c->events[i], api_name_key);
	}
	xpc_json_arr_end(w);
	xpc_json_obj_end(w);
	xpc_json_line_end(w);
	free(pids);
	return 0;
}

/*
 * @dest_mode: st_mode of an existing destination the atomic writer refused
 * (not a regular file), else 0.
 */
static int export_failed(struct xp_error *err, const char *path, int rc, unsigned dest_mode)
{
	char reason[256];

	xp_error_detail_str(err, "path", path);
	if (dest_mode && (rc == -XPC_EFTYPE || rc == -ELOOP || rc == -EISDIR)) {
		const char *type = xpc_file_type_name((mode_t)dest_mode);

		xp_error_detail_str(err, "file_type", type);
		xp_error_hint(err, "--events-out writes a new or regular file only and never "
				   "replaces a %s; pass another path",
			      type);
		return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
				    "failed to write %s: it exists and is a %s, not a regular file",
				    path, type);
	}
	xprobe_strerror(rc, reason, sizeof(reason));
	xp_error_hint(err, "check that the output directory exists and is writable");
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "failed to write %s: %s",
			    path, reason);
}

int xp_export_write(const char *path, enum xp_export_format fmt, const struct xp_capture *c,
		    const char *session_id, struct xp_error *err)
{
	struct xpc_atomic_file f = { .fd = -1 };
	struct xpc_json w;
	int rc;

	if (fmt != XP_EXPORT_JSONL && fmt != XP_EXPORT_CHROME)
		return export_failed(err, path ? path : "", -EINVAL, 0);
	rc = xpc_atomic_open(&f, path);
	if (rc)
		return export_failed(err, path ? path : "", rc, f.dest_mode);
	xpc_json_init_fd(&w, f.fd, fmt == XP_EXPORT_CHROME ? XPC_JSON_PRETTY : 0);
	if (fmt == XP_EXPORT_JSONL) {
		write_jsonl(&w, c, session_id);
	} else {
		rc = write_chrome(&w, c, session_id);
		if (rc && !w.err)
			w.err = rc;
	}
	rc = xpc_json_finish(&w);
	if (rc) {
		xpc_atomic_abort(&f);
		return export_failed(err, path, rc, 0);
	}
	rc = xpc_atomic_commit(&f);
	if (rc)
		return export_failed(err, path, rc, f.dest_mode);
	return 0;
}
