/* SPDX-License-Identifier: Apache-2.0 */
/*
 * event_json.c - render struct xp_event as the reference Event document.
 * Attribute keys are rendered in alphabetical order (the reference renders
 * attribute maps as BTreeMap).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/json.h"
#include "event_json.h"

static void kstr_id(struct xpc_json *w, const char *k, const struct xp_capture *c, xp_str_t id)
{
	xpc_json_key(w, k);
	if (id)
		xpc_json_strn(w, xp_capture_str(c, id), xp_strtab_len(&c->strings, id));
	else
		xpc_json_null(w);
}

static void render_dim3(struct xpc_json *w, const char *k, bool has, const struct xp_dim3 *d)
{
	xpc_json_key(w, k);
	if (!has) {
		xpc_json_null(w);
		return;
	}
	xpc_json_obj_begin(w);
	xpc_json_ku64(w, "x", d->x);
	xpc_json_ku64(w, "y", d->y);
	xpc_json_ku64(w, "z", d->z);
	xpc_json_obj_end(w);
}

static void render_host(struct xpc_json *w, const struct xp_capture *c, const struct xp_event *e)
{
	const struct xp_host_part *h = &e->host;
	uint32_t i;

	xpc_json_key(w, "host");
	if (!(e->flags & XP_EVF_HOST)) {
		xpc_json_null(w);
		return;
	}
	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "probe_kind", xp_probe_kind_name(h->probe_kind));
	kstr_id(w, "binary_path", c, h->binary_path);
	kstr_id(w, "build_id", c, h->build_id);
	kstr_id(w, "symbol", c, h->symbol);
	kstr_id(w, "symbol_demangled", c, h->symbol_demangled);
	xpc_json_kopt_u64(w, "offset", h->flags & XP_HOSTF_OFFSET, h->offset);
	xpc_json_kopt_i64(w, "return_value", h->flags & XP_HOSTF_RETURN_VALUE, h->return_value);
	xpc_json_karr_begin(w, "arguments");
	for (i = 0; i < h->args_count; i++) {
		const struct xp_arg *a = &c->args[h->args_first + i];

		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "index", a->index);
		kstr_id(w, "abi_type", c, a->abi_type);
		xpc_json_kraw(w, "value", a->value ? xp_capture_str(c, a->value) : NULL);
		kstr_id(w, "read_error", c, a->read_error);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xpc_json_obj_end(w);
}

static void render_cuda(struct xpc_json *w, const struct xp_capture *c, const struct xp_event *e)
{
	const struct xp_cuda_part *d = &e->cuda;
	unsigned f = d->flags;

	xpc_json_key(w, "cuda");
	if (!(e->flags & XP_EVF_CUDA)) {
		xpc_json_null(w);
		return;
	}
	xpc_json_obj_begin(w);
	xpc_json_kopt_u64(w, "device_id", f & XP_CUDAF_DEVICE_ID, d->device_id);
	xpc_json_kopt_u64(w, "context_id", f & XP_CUDAF_CONTEXT_ID, d->context_id);
	xpc_json_kopt_u64(w, "stream_id", f & XP_CUDAF_STREAM_ID, d->stream_id);
	xpc_json_kopt_u64(w, "correlation_id", f & XP_CUDAF_CORRELATION_ID, d->correlation_id);
	xpc_json_kopt_u64(w, "runtime_correlation_id", f & XP_CUDAF_RUNTIME_CORRELATION_ID,
			  d->runtime_correlation_id);
	xpc_json_kopt_u64(w, "callback_domain", f & XP_CUDAF_CALLBACK_DOMAIN, d->callback_domain);
	xpc_json_kopt_u64(w, "callback_id", f & XP_CUDAF_CALLBACK_ID, d->callback_id);
	kstr_id(w, "kernel_name", c, d->kernel_name);
	kstr_id(w, "kernel_name_mangled", c, d->kernel_name_mangled);
	xpc_json_kopt_u64(w, "start_ns", f & XP_CUDAF_START_NS, d->start_ns);
	xpc_json_kopt_u64(w, "end_ns", f & XP_CUDAF_END_NS, d->end_ns);
	render_dim3(w, "grid", f & XP_CUDAF_GRID, &d->grid);
	render_dim3(w, "block", f & XP_CUDAF_BLOCK, &d->block);
	xpc_json_kopt_u64(w, "bytes", f & XP_CUDAF_BYTES, d->bytes);
	xpc_json_key(w, "memcpy_kind");
	if (f & XP_CUDAF_MEMCPY_KIND)
		xpc_json_str(w, xp_memcpy_kind_name(d->memcpy_kind));
	else
		xpc_json_null(w);
	xpc_json_obj_end(w);
}

void xp_event_render_nvtx(struct xpc_json *w, const struct xp_capture *c,
			  const struct xp_event *e, bool sorted_keys)
{
	const struct xp_nvtx_part *n = &e->nvtx;

	if (!(e->flags & XP_EVF_NVTX)) {
		xpc_json_null(w);
		return;
	}
	xpc_json_obj_begin(w);
	if (sorted_keys) { /* Chrome args: alphabetical */
		kstr_id(w, "name", c, n->name);
		xpc_json_kbool(w, "name_complete", n->name_complete);
		xpc_json_ku64(w, "range_id", n->range_id);
		xpc_json_kstr(w, "range_kind", xp_nvtx_range_kind_name(n->range_kind));
		xpc_json_ku64(w, "start_tid", n->start_tid);
	} else {
		kstr_id(w, "name", c, n->name);
		xpc_json_kbool(w, "name_complete", n->name_complete);
		xpc_json_kstr(w, "range_kind", xp_nvtx_range_kind_name(n->range_kind));
		xpc_json_ku64(w, "range_id", n->range_id);
		xpc_json_ku64(w, "start_tid", n->start_tid);
	}
	xpc_json_obj_end(w);
}

struct attr_ref {
	const char *key;
	const char *value;
};

static int attr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct attr_ref *)a)->key, ((const struct attr_ref *)b)->key);
}

void xp_event_render_attributes(struct xpc_json *w, const struct xp_capture *c,
				const struct xp_event *e)
{
	struct attr_ref small[8], *refs = small;
	uint32_t i, n = e->attrs_count;

	xpc_json_obj_begin(w);
	if (n > 8) {
		refs = malloc(n * sizeof(*refs));
		if (!refs) { /* render unsorted rather than lose data */
			for (i = 0; i < n; i++) {
				const struct xp_attr *a = &c->attrs[e->attrs_first + i];

				xpc_json_kraw(w, xp_capture_str(c, a->key), xp_capture_str(c, a->value));
			}
			xpc_json_obj_end(w);
			return;
		}
	}
	for (i = 0; i < n; i++) {
		const struct xp_attr *a = &c->attrs[e->attrs_first + i];

		refs[i].key = xp_capture_str(c, a->key);
		refs[i].value = xp_capture_str(c, a->value);
	}
	if (n > 1)
		qsort(refs, n, sizeof(*refs), attr_cmp);
	for (i = 0; i < n; i++)
		xpc_json_kraw(w, refs[i].key, refs[i].value);
	xpc_json_obj_end(w);
	if (refs != small)
		free(refs);
}

void xp_event_render(struct xpc_json *w, const struct xp_capture *c, const struct xp_event *e,
		     const char *session_id)
{
	char event_id[32], *p = event_id + sizeof(event_id) - 1;
	uint64_t v = e->sequence;

	/* "evt_<sequence>", built from the end (no printf: a document holds
	 * every evidence event) */
	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	p -= 4;
	memcpy(p, "evt_", 4);
	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "schema_version", XP_SCHEMA_VERSION);
	xpc_json_kstr(w, "session_id", session_id);
	xpc_json_kstr(w, "event_id", p);
	xpc_json_ku64(w, "sequence", e->sequence);
	xpc_json_kstr(w, "source", xp_source_name(e->source));
	xpc_json_kstr(w, "event_type", xp_event_type_name(e->event_type));
	xpc_json_ku64(w, "pid", e->pid);
	xpc_json_ku64(w, "tid", e->tid);
	xpc_json_kopt_u64(w, "cpu", e->flags & XP_EVF_CPU, e->cpu);
	xpc_json_ku64(w, "timestamp_raw", e->timestamp_raw);
	xpc_json_ku64(w, "timestamp_ns", e->timestamp_ns);
	xpc_json_kstr(w, "clock_domain", xp_clock_domain_name(e->clock_domain));
	xpc_json_kopt_u64(w, "timestamp_error_ns", e->flags & XP_EVF_TS_ERROR,
			  e->timestamp_error_ns);
	xpc_json_kopt_u64(w, "process_start_time", e->flags & XP_EVF_START_TIME,
			  e->process_start_time);
	render_host(w, c, e);
	render_cuda(w, c, e);
	xpc_json_key(w, "nvtx");
	xp_event_render_nvtx(w, c, e, false);
	xpc_json_key(w, "attributes");
	xp_event_render_attributes(w, c, e);
	xpc_json_obj_end(w);
}
