/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_cpu_sample.c - the CpuSampleInventoryResult document (schemas/
 * cpu-sample-inventory-result.schema.json) and its human summary.
 *
 * Reads a collected, sorted and symbolized result (src/inventory/
 * cpu_sample.h) and prints it; every verdict it shows was derived there.
 * Key order follows the schema; optional values are null, never omitted.
 * Proportions are count / observed_samples (0.0 when nothing was observed).
 * The human table: self and total shares, self samples, the function and
 * its selector hint, in the profile's order (self, then total).
 */
#include <inttypes.h>

#include "../../common/json.h"
#include "../inventory/cpu_sample.h"
#include "report.h"

#define XP_HUMAN_HOTSPOTS 10

static double share(uint64_t n, uint64_t total)
{
	return total ? (double)n / (double)total : 0.0;
}

static void render_python(struct xpc_json *w, const struct xp_cpu_sample_view *v)
{
	const struct xp_inv_symbolizer *s = v->sym;
	const struct xp_inv_cpu_profile *p = v->profile;

	xpc_json_kobj_begin(w, "python");
	xpc_json_kstr(w, "status", v->python_status);
	xpc_json_kstr(w, "version", s->cpython ? s->python_version : NULL);
	xpc_json_kstr(w, "perf_map_path", s->perf_map_present ? s->perf_map_path : NULL);
	xpc_json_kopt_u64(w, "perf_map_entries", s->perf_map_present, s->perf_map.entries_seen);
	xpc_json_ku64(w, "python_frames", p->python_frames);
	xpc_json_ku64(w, "python_samples", p->python_samples);
	xpc_json_ku64(w, "interpreter_samples", p->interpreter_samples);
	xpc_json_kstr(w, "hint", v->python_hint[0] ? v->python_hint : NULL);
	xpc_json_obj_end(w);
}

static void render_symbolization(struct xpc_json *w, const struct xp_cpu_sample_view *v)
{
	const struct xp_inv_cpu_profile *p = v->profile;

	xpc_json_kobj_begin(w, "symbolization");
	xpc_json_ku64(w, "distinct_frames", p->nframes);
	xpc_json_ku64(w, "native_frames", p->native_frames);
	xpc_json_ku64(w, "jit_frames", p->jit_frames);
	xpc_json_ku64(w, "python_frames", p->python_frames);
	xpc_json_ku64(w, "unresolved_frames", p->unresolved_frames);
	xpc_json_ku64(w, "perf_map_frames", p->perf_map_frames);
	xpc_json_kbool(w, "perf_map_present", v->sym->perf_map_present);
	xpc_json_ku64(w, "selector_hints_validated", p->hints_validated);
	xpc_json_ku64(w, "selector_hints_rejected", p->hints_rejected);
	xpc_json_ku64(w, "unresolved_leaf_samples", p->unresolved_leaf_samples);
	xpc_json_obj_end(w);
}

static void render_hotspots(struct xpc_json *w, const struct xp_cpu_sample_view *v)
{
	const struct xp_inv_cpu_profile *p = v->profile;
	uint64_t total = v->result->counts.observed_samples;
	size_t i;

	xpc_json_karr_begin(w, "hotspots");
	for (i = 0; i < p->nfunctions; i++) {
		const struct xp_inv_cpu_function *f = &p->functions[i];

		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "rank", i + 1);
		xpc_json_kstr(w, "kind", xp_inv_frame_kind_name(f->kind));
		xpc_json_kstr(w, "function", f->name);
		xpc_json_kstr(w, "binary", f->binary);
		xpc_json_kstr(w, "symbol", f->symbol);
		xpc_json_kstr(w, "perf_map_symbol", f->perf_map_symbol);
		xpc_json_kstr(w, "mapping", f->mapping);
		xpc_json_kopt_u64(w, "address", f->kind == XP_FRAME_UNRESOLVED, f->address);
		xpc_json_ku64(w, "exclusive_count", f->exclusive);
		xpc_json_ku64(w, "inclusive_count", f->inclusive);
		xpc_json_kf64(w, "exclusive_proportion", share(f->exclusive, total));
		xpc_json_kf64(w, "inclusive_proportion", share(f->inclusive, total));
		xpc_json_kstr(w, "selector_hint", f->selector_hint);
		xpc_json_kstr(w, "selector_hint_status", xp_inv_hint_status_name(f->hint_status));
		xpc_json_kstr(w, "selector_hint_error", f->hint_error);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
}

static void render_frames(struct xpc_json *w, const struct xp_cpu_sample_view *v)
{
	const struct xp_inv_cpu_profile *p = v->profile;
	size_t i;

	xpc_json_karr_begin(w, "frames");
	for (i = 0; i < p->nframes; i++) {
		const struct xp_inv_cpu_frame *f = &p->frames[i];
		bool native = f->sym.kind == XP_FRAME_NATIVE;

		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "address", f->sym.address);
		xpc_json_kstr(w, "kind", xp_inv_frame_kind_name(f->sym.kind));
		xpc_json_ku64(w, "hotspot", f->function);
		xpc_json_kstr(w, "binary", f->sym.binary);
		xpc_json_kstr(w, "symbol", f->sym.symbol);
		xpc_json_kopt_u64(w, "symbol_offset", native, f->sym.symbol_offset);
		xpc_json_kstr(w, "perf_map_symbol", f->sym.perf_map_symbol);
		xpc_json_kstr(w, "mapping", f->sym.mapping);
		xpc_json_ku64(w, "leaf_samples", f->leaf_samples);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
}

static void render_stacks(struct xpc_json *w, const struct xp_cpu_sample_view *v)
{
	const struct xp_inv_stack_table *t = &v->result->stacks;
	uint64_t total = v->result->counts.observed_samples;
	size_t i, j;

	xpc_json_karr_begin(w, "stacks");
	for (i = 0; i < t->n; i++) {
		const struct xp_inv_stack_group *g = &t->groups[i];

		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "count", g->count);
		xpc_json_kf64(w, "proportion", share(g->count, total));
		xpc_json_kbool(w, "truncated", g->truncated);
		xpc_json_karr_begin(w, "frames");
		for (j = 0; j < g->nframes; j++)
			xpc_json_u64(w, v->profile->group_frames[i][j]);
		xpc_json_arr_end(w);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
}

static void render_collection(struct xpc_json *w, const struct xp_cpu_sample_view *v)
{
	const struct xp_inv_cpu_sample_result *r = v->result;
	const struct xp_inv_cpu_sample_counts *c = &r->counts;

	xp_render_collection_begin(w, v->complete, xp_inv_cpu_stop_reason_name(r->stop_reason),
				   r->window_ns);
	xpc_json_kbool(w, "kernel_time_included", r->kernel_time_included);
	xpc_json_ku64(w, "observed_samples", c->observed_samples);
	xpc_json_ku64(w, "sample_capacity", r->max_samples);
	xpc_json_ku64(w, "samples_beyond_limit", c->samples_beyond_limit);
	xpc_json_ku64(w, "lost_samples", c->lost_samples);
	xpc_json_ku64(w, "lost_records", c->lost_records);
	xpc_json_ku64(w, "throttle_events", c->throttle_events);
	xpc_json_ku64(w, "grouped_samples", r->stacks.grouped_samples);
	xpc_json_ku64(w, "ungrouped_samples", r->stacks.ungrouped_samples);
	xpc_json_ku64(w, "samples_without_user_stack", c->samples_without_user_stack);
	xpc_json_ku64(w, "kernel_mode_samples", c->kernel_mode_samples);
	xpc_json_ku64(w, "truncated_stacks", c->truncated_stacks);
	xpc_json_ku64(w, "malformed_records", c->malformed_records);
	xpc_json_ku64(w, "group_capacity", r->stacks.cap);
	xpc_json_ku64(w, "groups", r->stacks.n);
	xpc_json_kf64(w, "table_utilization", share(r->stacks.n, r->stacks.cap));
	xpc_json_ku64(w, "thread_capacity", r->max_threads);
	xpc_json_ku64(w, "threads_seen", c->threads_seen);
	xpc_json_ku64(w, "threads_sampled", c->threads_sampled);
	xpc_json_ku64(w, "threads_over_bound", c->threads_over_bound);
	xpc_json_ku64(w, "threads_open_failed", c->threads_open_failed);
	xpc_json_ku64(w, "threads_exited", c->threads_exited);
	xpc_json_ku64(w, "threads_started", c->threads_started);
	xpc_json_ku64(w, "threads_with_samples", c->threads_with_samples);
	xpc_json_ku64(w, "ring_bytes_per_thread", r->ring_bytes);
	xpc_json_obj_end(w);
}

void xp_render_cpu_sample_json(struct xpc_json *w, const struct xp_cpu_sample_view *v)
{
	const struct xp_inv_cpu_sample_result *r = v->result;

	xp_render_inventory_begin(w, v->session_id, v->status, v->name, v->pid,
				  v->process_start_time);
	xpc_json_kstr(w, "event", "cpu-clock");
	xpc_json_ku64(w, "frequency_hz", r->frequency_hz);
	xpc_json_ku64(w, "sample_period_ns", r->sample_period_ns);
	xpc_json_ku64(w, "stack_depth", r->stack_depth);
	render_python(w, v);
	render_symbolization(w, v);
	render_hotspots(w, v);
	render_frames(w, v);
	render_stacks(w, v);
	xpc_json_obj_end(w);

	render_collection(w, v);
	xpc_json_key(w, "warnings");
	xp_warnings_render(v->warnings, w);
	xpc_json_obj_end(w);
}

void xp_render_cpu_sample_human(FILE *out, const struct xp_cpu_sample_view *v)
{
	const struct xp_inv_cpu_sample_result *r = v->result;
	const struct xp_inv_cpu_sample_counts *c = &r->counts;
	const struct xp_inv_cpu_profile *p = v->profile;
	size_t i, n = p->nfunctions < XP_HUMAN_HOTSPOTS ? p->nfunctions : XP_HUMAN_HOTSPOTS;

	fprintf(out,
		"cpu-sample inventory of pid %u: %" PRIu64 " samples in %.3f s at %" PRIu64
		" Hz, %s (%s)\n",
		v->pid, c->observed_samples, (double)r->window_ns / 1e9, r->frequency_hz,
		v->complete ? "complete" : "partial", xp_inv_cpu_stop_reason_name(r->stop_reason));
	fprintf(out,
		"threads: %" PRIu64 " seen, %" PRIu64 " sampled, %" PRIu64
		" over --max-threads, %" PRIu64 " exited, %" PRIu64 " started unsampled\n",
		c->threads_seen, c->threads_sampled, c->threads_over_bound, c->threads_exited,
		c->threads_started);
	fprintf(out,
		"stacks: %zu groups of %zu, %" PRIu64 " ungrouped, %" PRIu64 " truncated, %" PRIu64
		" lost\n",
		r->stacks.n, r->stacks.cap, r->stacks.ungrouped_samples, c->truncated_stacks,
		c->lost_samples);
	fprintf(out, "python: %s%s%s\n", v->python_status, v->python_hint[0] ? " -- " : "",
		v->python_hint);
	/* perf report's table, in the profile's order: the self share first,
	 * then the total (children included) share */
	if (n)
		fprintf(out, "\n%7s %7s %8s  %s\n", "self %", "total %", "samples", "function");
	for (i = 0; i < n; i++) {
		const struct xp_inv_cpu_function *f = &p->functions[i];
		uint64_t total = c->observed_samples;

		fprintf(out, "%7.2f %7.2f %8" PRIu64 "  ", 100.0 * share(f->exclusive, total),
			100.0 * share(f->inclusive, total), f->exclusive);
		if (f->name)
			fprintf(out, "%s [%s]", f->name, xp_inv_frame_kind_name(f->kind));
		else if (f->naddresses > 1)
			fprintf(out, "[unresolved in %s: %u addresses from 0x%" PRIx64 "]",
				f->mapping ? f->mapping : "?", f->naddresses, f->address);
		else
			fprintf(out, "0x%" PRIx64 " [unresolved%s%s]", f->address,
				f->mapping ? " in " : "", f->mapping ? f->mapping : "");
		if (f->selector_hint)
			fprintf(out, "  %s", f->selector_hint);
		fputc('\n', out);
	}
	xp_render_warnings_human(out, v->warnings);
}

/* The document type the commands emit (output.h). */
XP_DOC_TYPE(xp_doc_cpu_sample, "cpu-sample-inventory-result", struct xp_cpu_sample_view,
	    xp_render_cpu_sample_json, xp_render_cpu_sample_human);
