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
 * Then, when the measurement formed pairs, one complete event ("ph": "X")
 * per pair, in pair order: from the start event to the end event (the
 * earlier of the two for `nearest`, whose latency is an absolute
 * difference), on the start event's track, named by the measurement;
 * "ts" and "dur" are microseconds written as exact decimals with three
 * fractional digits (ns precision: no double rounds them), args name the
 * pair (start_event_id, end_event_id, latency_ns, selectors, policy).
 * Then CUDA correlation ids become flow arrows: the events sharing one
 * correlation id (an API call and the kernel or copy it launched), in
 * timestamp order, get "s", "t"... "f" flow events (id = the correlation
 * id, bound to the enclosing slice) at their exact timestamps.
 * Last, with `measure --explain`, the records of our own event extension
 * (the scheduler events of the target's threads: the owner writes them,
 * src/live/live_sched.c) in both formats.
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

/* @ns as microseconds with three exact fractional digits ("12.345"). */
static void write_us(struct xpc_json *w, const char *key, uint64_t ns)
{
	char num[32];

	snprintf(num, sizeof(num), "%llu.%03llu", (unsigned long long)(ns / 1000),
		 (unsigned long long)(ns % 1000));
	xpc_json_kraw(w, key, num);
}

static void event_id_of(const struct xp_event *e, char *buf, size_t size)
{
	snprintf(buf, size, "evt_%llu", (unsigned long long)e->sequence);
}

/* The track an event is drawn on: its CUDA stream, else its thread. */
static uint64_t chrome_tid(const struct xp_event *e)
{
	if ((e->flags & XP_EVF_CUDA) && (e->cuda.flags & XP_CUDAF_STREAM_ID))
		return e->cuda.stream_id;
	return e->tid;
}

static void write_span(struct xpc_json *w, const struct xp_capture *c,
		       const struct xp_export_pairs *p, size_t k)
{
	const struct xp_export_span *s = &p->v[k];
	const struct xp_event *a = &c->events[s->start], *b = &c->events[s->end];
	uint64_t ts = a->timestamp_ns < b->timestamp_ns ? a->timestamp_ns : b->timestamp_ns;
	char ida[32], idb[32], name[512];

	event_id_of(a, ida, sizeof(ida));
	event_id_of(b, idb, sizeof(idb));
	if (p->name)
		snprintf(name, sizeof(name), "%s", p->name);
	else
		snprintf(name, sizeof(name), "%s -> %s", p->start_selector ? p->start_selector : "",
			 p->end_selector ? p->end_selector : "");
	xpc_json_obj_begin(w);
	xpc_json_kobj_begin(w, "args");
	xpc_json_kstr(w, "end_event_id", idb);
	xpc_json_kstr(w, "end_selector", p->end_selector);
	xpc_json_ku64(w, "latency_ns", s->latency_ns);
	xpc_json_kstr(w, "match_policy", p->match_policy);
	xpc_json_ku64(w, "pair", k);
	xpc_json_kstr(w, "start_event_id", ida);
	xpc_json_kstr(w, "start_selector", p->start_selector);
	xpc_json_obj_end(w);
	xpc_json_kstr(w, "cat", "xprobe.pair");
	write_us(w, "dur", s->latency_ns);
	xpc_json_kstr(w, "name", name);
	xpc_json_kstr(w, "ph", "X");
	xpc_json_ku64(w, "pid", a->pid);
	xpc_json_ku64(w, "tid", chrome_tid(a));
	write_us(w, "ts", ts);
	xpc_json_obj_end(w);
}

static bool has_corr(const struct xp_event *e)
{
	return (e->flags & XP_EVF_CUDA) && (e->cuda.flags & XP_CUDAF_CORRELATION_ID);
}

static const struct xp_capture *sort_capture; /* qsort has no context argument */

/* By correlation id, then timestamp, then capture order. */
static int corr_cmp(const void *x, const void *y)
{
	const struct xp_event *a = &sort_capture->events[*(const uint32_t *)x];
	const struct xp_event *b = &sort_capture->events[*(const uint32_t *)y];

	if (a->cuda.correlation_id != b->cuda.correlation_id)
		return a->cuda.correlation_id < b->cuda.correlation_id ? -1 : 1;
	if (a->timestamp_ns != b->timestamp_ns)
		return a->timestamp_ns < b->timestamp_ns ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static void write_flow(struct xpc_json *w, const struct xp_event *e, const char *ph)
{
	char id[32];

	event_id_of(e, id, sizeof(id));
	xpc_json_obj_begin(w);
	xpc_json_kobj_begin(w, "args");
	xpc_json_ku64(w, "correlation_id", e->cuda.correlation_id);
	xpc_json_kstr(w, "event_id", id);
	xpc_json_obj_end(w);
	if (ph[0] != 's')
		xpc_json_kstr(w, "bp", "e");
	xpc_json_kstr(w, "cat", "cuda.correlation");
	xpc_json_ku64(w, "id", e->cuda.correlation_id);
	xpc_json_kstr(w, "name", "cuda correlation");
	xpc_json_kstr(w, "ph", ph);
	xpc_json_ku64(w, "pid", e->pid);
	xpc_json_ku64(w, "tid", chrome_tid(e));
	write_us(w, "ts", e->timestamp_ns);
	xpc_json_obj_end(w);
}

/* Flow arrows between the events of each CUDA correlation id. */
static int write_flows(struct xpc_json *w, const struct xp_capture *c)
{
	uint32_t *idx;
	size_t n = 0, i, j, k;

	for (i = 0; i < c->count; i++)
		n += has_corr(&c->events[i]);
	if (n < 2)
		return 0;
	idx = malloc(n * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (i = 0, j = 0; i < c->count; i++)
		if (has_corr(&c->events[i]))
			idx[j++] = (uint32_t)i;
	sort_capture = c;
	qsort(idx, n, sizeof(*idx), corr_cmp);
	sort_capture = NULL;
	for (i = 0; i < n && !w->err; i = j) {
		uint64_t id = c->events[idx[i]].cuda.correlation_id;

		for (j = i + 1; j < n && c->events[idx[j]].cuda.correlation_id == id; j++)
			;
		if (j - i < 2)
			continue; /* an id seen once links nothing */
		for (k = i; k < j; k++)
			write_flow(w, &c->events[idx[k]], k == i ? "s" : k + 1 == j ? "f" : "t");
	}
	free(idx);
	return 0;
}

static int write_chrome(struct xpc_json *w, const struct xp_capture *c, const char *session_id,
			const struct xp_export_pairs *pairs)
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
	for (i = 0; pairs && i < pairs->n && !w->err; i++) {
		if (pairs->v[i].start >= c->count || pairs->v[i].end >= c->count) {
			rc = -EINVAL; /* the caller's pairs are not this capture's */
			break;
		}
		write_span(w, c, pairs, i);
	}
	if (!rc)
		rc = write_flows(w, c);
	if (!rc && pairs && pairs->extension && !w->err)
		pairs->extension(w, true, pairs->extension_ctx);
	xpc_json_arr_end(w);
	xpc_json_obj_end(w);
	xpc_json_line_end(w);
	free(pids);
	return rc;
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
	return xp_export_write_pairs(path, fmt, c, session_id, NULL, err);
}

int xp_export_write_pairs(const char *path, enum xp_export_format fmt,
			  const struct xp_capture *c, const char *session_id,
			  const struct xp_export_pairs *pairs, struct xp_error *err)
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
		if (pairs && pairs->extension && !w.err)
			pairs->extension(&w, false, pairs->extension_ctx);
	} else {
		rc = write_chrome(&w, c, session_id, pairs);
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
