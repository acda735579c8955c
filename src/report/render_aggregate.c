/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_aggregate.c - the AggregateInventoryResult document of `measure
 * --aggregate` (schemas/aggregate-inventory-result.schema.json, the
 * contract's shape) and its human summary.
 *
 * Reads a finished, checked and sorted group table (src/agent/
 * agent_aggregate.h) and prints it.  Per group: activity, name and
 * name_complete (kernels; null otherwise), device_id (null when CUPTI gave
 * none), memcpy_kind (copies), the selector hints, count, duration_ns
 * {min, mean, max, total}, total_bytes (copies and sets; null for
 * kernels).  collection: a result is always complete (drops and a full
 * table are errors), observed / grouped / dropped activities, the table's
 * capacity, groups in use (occupied_slots: the Agent's table holds one
 * slot per group) and its utilization.  The human table is sorted apart
 * from the document, as perf report sorts (share of the time, then
 * count): the document keeps the reference's order.
 */
#include <inttypes.h>

#include "../../common/json.h"
#include "../capture/record_events.h"
#include "../agent/agent_aggregate.h"
#include "report.h"
#include "format.h"

#define XP_HUMAN_GROUPS 15

static void render_group(struct xpc_json *w, const struct xp_capture_agg_group *g)
{
	bool kernel = g->kind == XPROBE_AGENT_KIND_KERNEL;
	bool copy = g->kind == XPROBE_AGENT_KIND_MEMCPY;
	char hint[XP_AGG_HINT_MAX];

	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "activity", xp_agent_aggregate_activity(g->kind));
	xpc_json_kstr(w, "name", kernel && g->name_len ? g->name : NULL);
	xpc_json_key(w, "name_complete");
	if (kernel)
		xpc_json_bool(w, g->name_complete);
	else
		xpc_json_null(w);
	xpc_json_kopt_u64(w, "device_id", g->device != XPROBE_CUDA_UNKNOWN, g->device);
	xpc_json_kstr(w, "memcpy_kind",
		      copy ? xp_memcpy_kind_name(xp_rec_memcpy_kind(g->memcpy_kind)) : NULL);
	xpc_json_kstr(w, "start_selector_hint",
		      xp_agent_aggregate_hint(g, false, hint, sizeof(hint)));
	xpc_json_kstr(w, "end_selector_hint", xp_agent_aggregate_hint(g, true, hint, sizeof(hint)));
	xpc_json_ku64(w, "count", g->count);
	xpc_json_kobj_begin(w, "duration_ns");
	xpc_json_ku64(w, "min", g->min_ns);
	xpc_json_kf64(w, "mean", (double)g->total_ns / (double)g->count);
	xpc_json_ku64(w, "max", g->max_ns);
	xpc_json_ku64(w, "total", g->total_ns);
	xpc_json_obj_end(w);
	xpc_json_kopt_u64(w, "total_bytes", !kernel, g->bytes);
	xpc_json_obj_end(w);
}

void xp_render_aggregate_json(struct xpc_json *w, const struct xp_aggregate_view *v)
{
	const struct xp_capture_agg_dec *d = &v->result->dec;
	size_t i;

	xp_render_result_begin(w, v->session_id, v->status);
	xpc_json_kobj_begin(w, "inventory");
	xpc_json_kstr(w, "name", v->name);
	xpc_json_kstr(w, "start_selector", v->start_selector);
	xpc_json_kstr(w, "end_selector", v->end_selector);
	xpc_json_karr_begin(w, "groups");
	for (i = 0; i < d->rx.n; i++)
		render_group(w, &d->groups[i]);
	xpc_json_arr_end(w);
	xpc_json_obj_end(w);

	xpc_json_kobj_begin(w, "collection");
	xpc_json_kstr(w, "completeness", "complete");
	xpc_json_ku64(w, "observed_activities", d->rx.st.observed);
	xpc_json_ku64(w, "grouped_activities", d->grouped);
	xpc_json_ku64(w, "dropped_activities", d->rx.st.dropped);
	xpc_json_ku64(w, "group_capacity", d->rx.st.capacity);
	xpc_json_ku64(w, "groups", d->rx.n);
	xpc_json_ku64(w, "occupied_slots", d->rx.st.retained);
	xpc_json_kf64(w, "table_utilization",
		      d->rx.st.capacity ? (double)d->rx.st.retained / (double)d->rx.st.capacity : 0.0);
	xpc_json_obj_end(w);
	xpc_json_key(w, "warnings");
	xp_warnings_render(v->warnings, w);
	xpc_json_obj_end(w);
}

/* The terminal's order, as perf report's: more of the time first, then
 * more activities, then the document's order. */
static bool human_before(const struct xp_capture_agg_group *a, size_t ia,
			 const struct xp_capture_agg_group *b, size_t ib)
{
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns;
	if (a->count != b->count)
		return a->count > b->count;
	return ia < ib;
}

/* The first XP_HUMAN_GROUPS groups in that order, into @top (no
 * allocation: insertion into a short list); returns how many. */
static size_t human_top(const struct xp_capture_agg_dec *d, size_t top[XP_HUMAN_GROUPS])
{
	size_t i, j, n = 0;

	for (i = 0; i < d->rx.n; i++) {
		for (j = n;
		     j > 0 && human_before(&d->groups[i], i, &d->groups[top[j - 1]], top[j - 1]);
		     j--)
			if (j < XP_HUMAN_GROUPS)
				top[j] = top[j - 1];
		if (j < XP_HUMAN_GROUPS)
			top[j] = i;
		if (n < XP_HUMAN_GROUPS)
			n++;
	}
	return n;
}

void xp_render_aggregate_human(FILE *out, const struct xp_aggregate_view *v)
{
	const struct xp_capture_agg_dec *d = &v->result->dec;
	size_t i, n, top[XP_HUMAN_GROUPS];
	uint64_t all_ns = 0;

	fprintf(out,
		"GPU activity inventory of pid %u (%s -> %s): %" PRIu64 " activities in %zu "
		"groups of %" PRIu64 ", %.3f s\n",
		v->pid, v->start_selector, v->end_selector, d->grouped, d->rx.n, d->rx.st.capacity,
		(double)v->result->window_ns / 1e9);
	for (i = 0; i < d->rx.n; i++)
		all_ns += d->groups[i].total_ns;
	n = human_top(d, top);
	if (n)
		fprintf(out, "\n%7s %10s %10s %10s  %s\n", "% time", "total", "mean", "count",
			"group");
	for (i = 0; i < n; i++) {
		const struct xp_capture_agg_group *g = &d->groups[top[i]];
		char hint[XP_AGG_HINT_MAX], total[32], mean[32];
		const char *h = xp_agent_aggregate_hint(g, false, hint, sizeof(hint));

		xp_report_fmt_ns(total, sizeof(total), (double)g->total_ns);
		xp_report_fmt_ns(mean, sizeof(mean), (double)g->total_ns / (double)g->count);
		fprintf(out, "%7.2f %10s %10s %10" PRIu64 "  %s\n",
			all_ns ? 100.0 * (double)g->total_ns / (double)all_ns : 0.0, total, mean,
			g->count, h ? h : "?");
	}
	if (d->rx.n > n)
		fprintf(out, "... %zu more in --json\n", d->rx.n - n);
	xp_render_warnings_human(out, v->warnings);
}

/* The document type the commands emit (output.h). */
XP_DOC_TYPE(xp_doc_aggregate, "aggregate-inventory-result", struct xp_aggregate_view,
	    xp_render_aggregate_json, xp_render_aggregate_human);
