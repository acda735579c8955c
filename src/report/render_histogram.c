/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_histogram.c - the LatencyHistogramResult document
 * (schemas/latency-histogram-result.schema.json), its terminal view, and
 * the latency_histogram form of the InventoryValidationResult.
 *
 * JSON: buckets are the non-empty log-linear buckets with their [lower,
 * upper) bounds in ns; percentiles come with the interval they were read
 * from and their own relative error bound; every group has the same shape
 * as the total.  Optional values are null, never omitted.
 *
 * Terminal: bpftrace's hist() layout -- one line per power of two,
 * "[1.02us, 2.05us)   40 |@@@@@@@@    |" -- folded from the log-linear
 * buckets (each lies inside one power of two, so the fold is exact),
 * leading and trailing empty powers trimmed; then percentiles, stats, the
 * collection line and warnings; then the same per group for --by.
 */
#include <errno.h>
#include <inttypes.h>
#include <time.h>
#include <string.h>

#include "../../common/json.h"
#include "../correlate/correlate.h"
#include "render_bars.h"
#include "render_histogram.h"
#include "report.h"
#include "format.h"

#define XP_HUMAN_GROUPS 16

const char *xp_histogram_status(const struct xp_inv_lh_result *r)
{
	switch (r->stop) {
	case XP_LH_STOP_DURATION:
		return "completed";
	case XP_LH_STOP_CANCELLED:
		return "cancelled";
	case XP_LH_STOP_TARGET_EXITED:
		return "target_exited";
	case XP_LH_STOP_TIMEOUT:
		return "timed_out";
	}
	return "completed";
}

static double ratio(uint64_t n, uint64_t d)
{
	return d ? (double)n / (double)d : 0.0;
}

static const char *attachment_name(const struct xp_live_endpoint *ep)
{
	switch (ep->kind) {
	case XP_LIVE_UPROBE:
		return ep->retprobe ? "uretprobe" : "uprobe";
	case XP_LIVE_USDT:
		return "usdt";
	case XP_LIVE_SYS_ENTER:
		return "raw_tracepoint_sys_enter";
	case XP_LIVE_SYS_EXIT:
		return "raw_tracepoint_sys_exit";
	case XP_LIVE_TRACEPOINT:
		return "tracepoint";
	}
	return "unknown";
}

/* An endpoint the Agent serves inside the target (a cuda: selector): no
 * kernel attachment, the selector says the rest. */
static void render_agent_endpoint(struct xpc_json *w, const char *role, const char *selector)
{
	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "role", role);
	xpc_json_kstr(w, "selector", selector);
	xpc_json_kstr(w, "attachment", "agent");
	xpc_json_kstr(w, "binary_path", NULL);
	xpc_json_kstr(w, "symbol", NULL);
	xpc_json_kopt_u64(w, "file_offset", false, 0);
	xpc_json_kopt_i64(w, "syscall_nr", false, 0);
	xpc_json_obj_end(w);
}

static void render_endpoint(struct xpc_json *w, const char *role, const struct xp_live_endpoint *ep)
{
	bool sys = ep->kind == XP_LIVE_SYS_ENTER || ep->kind == XP_LIVE_SYS_EXIT;

	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "role", role);
	xpc_json_kstr(w, "selector", ep->selector);
	xpc_json_kstr(w, "attachment", attachment_name(ep));
	xpc_json_kstr(w, "binary_path", ep->binary_path);
	xpc_json_kstr(w, "symbol", ep->symbol);
	xpc_json_kopt_u64(w, "file_offset", ep->kind == XP_LIVE_UPROBE, ep->file_offset);
	xpc_json_kopt_i64(w, "syscall_nr", sys, ep->syscall_nr);
	xpc_json_obj_end(w);
}

/* What --by arg0 reads at the start endpoint. */
static const char *key_kind(int by, const struct xp_live_endpoint *start)
{
	if (by == XP_LH_BY_THREAD)
		return "thread_id";
	if (by == XP_LH_BY_NAME)
		return "name";
	if (by == XP_LH_BY_STREAM)
		return "stream_id";
	if (by == XP_LH_BY_DEVICE)
		return "device_id";
	if (by != XP_LH_BY_ARG0 || !start)
		return NULL;
	switch (start->kind) {
	case XP_LIVE_SYS_ENTER:
		return "syscall_arg0";
	case XP_LIVE_UPROBE:
		return "uprobe_arg0";
	case XP_LIVE_USDT:
		return "usdt_arg1";
	default:
		return NULL;
	}
}

static const char *key_description(const char *kind)
{
	if (!kind)
		return NULL;
	if (!strcmp(kind, "thread_id"))
		return "the thread id of the pair (as the target's PID namespace numbers it)";
	if (!strcmp(kind, "name"))
		return "the NVTX range's or the kernel's name, kept by the Agent (at most 127 bytes: a longer one is cut and name_complete is false)";
	if (!strcmp(kind, "stream_id"))
		return "the CUDA stream id of the activity (CUPTI's)";
	if (!strcmp(kind, "device_id"))
		return "the CUDA device id of the activity (CUPTI's)";
	if (!strcmp(kind, "syscall_arg0"))
		return "the syscall's first argument register (rdi) at entry";
	if (!strcmp(kind, "uprobe_arg0"))
		return "the function's first integer argument register (rdi) at entry";
	return "USDT argument 1 of the start marker (python:gc__start: the generation)";
}

/* A group's label: "tid 4242", "generation 2", "arg0 1", "stream 7",
 * "device 0", or the group's name. */
static void key_label(char *buf, size_t size, const char *kind, const struct xp_inv_lh_group *g)
{
	uint64_t key = g->key;

	if (g->named)
		snprintf(buf, size, "%s%s", g->name, g->name_complete ? "" : "...");
	else if (kind && !strcmp(kind, "stream_id"))
		snprintf(buf, size, "stream %" PRIu64, key);
	else if (kind && !strcmp(kind, "device_id"))
		snprintf(buf, size, "device %" PRIu64, key);
	else if (kind && !strcmp(kind, "thread_id"))
		snprintf(buf, size, "tid %" PRIu64, key);
	else if (kind && !strcmp(kind, "usdt_arg1"))
		snprintf(buf, size, "generation %" PRId64, (int64_t)key);
	else
		snprintf(buf, size, "arg0 %" PRId64, (int64_t)key);
}

void xp_render_histogram_group_label(char *buf, size_t size, int by,
				     const struct xp_live_endpoint *start,
				     const struct xp_inv_lh_group *g)
{
	key_label(buf, size, key_kind(by, start), g);
}

/* A named group's name (the Agent's --by name). */
static void render_group_name(struct xpc_json *w, const struct xp_inv_lh_group *g)
{
	if (!g->named)
		return;
	xpc_json_kstr(w, "name", g->name);
	xpc_json_kbool(w, "name_complete", g->name_complete);
}

static void render_stats(struct xpc_json *w, const struct xp_inv_lh_dist *h)
{
	bool any = h->count > 0;

	xpc_json_kobj_begin(w, "stats");
	xpc_json_ku64(w, "count", h->count);
	xpc_json_ku64(w, "sum_ns", h->sum_ns);
	xpc_json_kopt_u64(w, "min_ns", any, h->min_ns);
	xpc_json_kopt_u64(w, "max_ns", any, h->max_ns);
	xpc_json_key(w, "mean_ns");
	if (any)
		xpc_json_f64(w, (double)h->sum_ns / (double)h->count);
	else
		xpc_json_null(w);
	xpc_json_obj_end(w);
}

static void render_buckets(struct xpc_json *w, const struct xp_inv_lh_dist *h)
{
	uint64_t lo, hi;
	uint32_t b;

	xpc_json_karr_begin(w, "buckets");
	for (b = 0; b < XP_LH_BUCKETS; b++) {
		if (!h->buckets[b])
			continue;
		xp_inv_lh_bucket_bounds(b, &lo, &hi);
		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "lower_ns", lo);
		xpc_json_ku64(w, "upper_ns", hi);
		xpc_json_ku64(w, "count", h->buckets[b]);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
}

static void render_percentiles(struct xpc_json *w, const struct xp_inv_lh_dist *h)
{
	struct xp_inv_lh_percentile p;
	size_t i;

	xpc_json_karr_begin(w, "percentiles");
	for (i = 0; i < XP_LH_NPCT; i++) {
		if (xp_inv_lh_percentile(h, xp_inv_lh_pct_permille[i], &p))
			break;
		xpc_json_obj_begin(w);
		xpc_json_kf64(w, "percentile", (double)p.permille / 10.0);
		xpc_json_ku64(w, "rank", p.rank);
		xpc_json_ku64(w, "value_ns", p.value_ns);
		xpc_json_ku64(w, "bucket_lower_ns", p.bucket_lower_ns);
		xpc_json_ku64(w, "bucket_upper_ns", p.bucket_upper_ns);
		xpc_json_kf64(w, "relative_error_bound", p.rel_error);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
}

void xp_render_histogram_json(struct xpc_json *w, const struct xp_histogram_view *v)
{
	const struct xp_inv_lh_result *r = v->result;
	const char *kind = key_kind(r->group_by, v->start);
	char label[160];
	size_t i;

	xp_render_result_begin(w, v->session_id, xp_histogram_status(r));
	xpc_json_kobj_begin(w, "histogram");
	xpc_json_kstr(w, "name", v->name);
	xp_render_identity(w, "target", v->pid, v->process_start_time);
	xpc_json_kstr(w, "start_selector", v->start_selector);
	xpc_json_kstr(w, "end_selector", v->end_selector);
	xpc_json_kstr(w, "match_policy",
		      xp_policy_snake(r->nested ? XP_POLICY_STACK_NESTED : XP_POLICY_EXACT));
	xpc_json_kstr(w, "pairing",
		      r->agent_pairing ? r->agent_pairing :
		      r->nested	       ? "per_thread_stack" :
					 "per_thread_lifecycle");
	xpc_json_karr_begin(w, "endpoints");
	if (v->start && v->end) {
		render_endpoint(w, "start", v->start);
		render_endpoint(w, "end", v->end);
	} else {
		render_agent_endpoint(w, "start", v->start_selector);
		render_agent_endpoint(w, "end", v->end_selector);
	}
	xpc_json_arr_end(w);
	xpc_json_kstr(w, "group_by", xp_inv_lh_by_name(r->group_by));
	xpc_json_key(w, "group_key");
	if (kind) {
		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "kind", kind);
		xpc_json_kstr(w, "description", key_description(kind));
		xpc_json_obj_end(w);
	} else {
		xpc_json_null(w);
	}
	xpc_json_kstr(w, "unit", "ns");
	xpc_json_kobj_begin(w, "bucket_scheme");
	xpc_json_kstr(w, "kind", "log_linear");
	xpc_json_ku64(w, "sub_buckets_per_power_of_two", XP_LH_SUB);
	xpc_json_ku64(w, "exact_below_ns", XP_LH_EXACT_BELOW_NS);
	xpc_json_kf64(w, "bucket_width_bound", XP_LH_BUCKET_WIDTH_BOUND);
	xpc_json_kf64(w, "percentile_error_bound", XP_LH_PCT_ERROR_BOUND);
	xpc_json_kstr(w, "percentile_method", "nearest_rank");
	xpc_json_obj_end(w);
	render_stats(w, &r->total);
	render_buckets(w, &r->total);
	render_percentiles(w, &r->total);
	xpc_json_karr_begin(w, "groups");
	for (i = 0; i < r->ngroups; i++) {
		const struct xp_inv_lh_group *g = &r->groups[i];

		key_label(label, sizeof(label), kind, g);
		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "key", g->key);
		xpc_json_ki64(w, "key_signed", (int64_t)g->key);
		xpc_json_kstr(w, "label", label);
		render_group_name(w, g);
		render_stats(w, &g->h);
		render_buckets(w, &g->h);
		render_percentiles(w, &g->h);
		xpc_json_key(w, "explain");
		if (r->explain)
			xp_render_explain_parts_json(w, NULL, &g->h.ex);
		else
			xpc_json_null(w);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xp_render_explain_json(w, r);
	xpc_json_obj_end(w);

	xp_render_collection_begin(w, xp_inv_lh_complete(r), xp_inv_lh_stop_name(r->stop),
				   r->window_ns);
	xpc_json_kopt_u64(w, "duration_ms", v->duration_ms != 0, v->duration_ms);
	xpc_json_kopt_u64(w, "timeout_ms", v->timeout_ms != 0, v->timeout_ms);
	xpc_json_ku64(w, "setup_ns", r->setup_ns);
	xpc_json_ku64(w, "armed_at_ns", r->armed_at_ns);
	xpc_json_kbool(w, "pid_namespace_filter", v->pid_namespace_filter);
	xpc_json_kstr(w, "uprobe_link", r->uprobe_link); /* NULL: null */
	xpc_json_ku64(w, "starts", r->starts);
	xpc_json_ku64(w, "ends", r->ends);
	xpc_json_ku64(w, "pairs", r->pairs);
	xpc_json_ku64(w, "unpaired_starts", r->unpaired_starts);
	xpc_json_ku64(w, "superseded", r->c.superseded);
	xpc_json_ku64(w, "open_at_end", r->open_at_end);
	xpc_json_ku64(w, "thread_exit_open", r->c.thread_exit_open);
	xpc_json_ku64(w, "unpaired_ends", r->c.unpaired_ends);
	xpc_json_ku64(w, "inflight_overflow", r->c.inflight_overflow);
	xpc_json_ku64(w, "depth_overflow", r->c.depth_overflow);
	xpc_json_ku64(w, "group_overflow", r->c.group_overflow);
	xpc_json_ku64(w, "key_unreadable", r->c.key_unreadable);
	xpc_json_ku64(w, "minmax_contended", r->c.minmax_contended);
	xpc_json_ku64(w, "inflight_capacity", r->inflight_capacity);
	xpc_json_ku64(w, "inflight_occupied", r->inflight_occupied);
	xpc_json_kf64(w, "inflight_table_utilization",
		      ratio(r->inflight_occupied, r->inflight_capacity));
	xpc_json_kopt_u64(w, "max_depth", r->nested, r->max_depth);
	xpc_json_kopt_u64(w, "group_capacity", r->group_by != XP_LH_BY_NONE, r->group_capacity);
	xpc_json_ku64(w, "groups", r->ngroups);
	xpc_json_key(w, "group_table_utilization");
	if (r->group_by != XP_LH_BY_NONE)
		xpc_json_f64(w, ratio(r->ngroups, r->group_capacity));
	else
		xpc_json_null(w);
	xpc_json_ku64(w, "ncpus", (uint64_t)r->ncpus);
	xpc_json_obj_end(w);
	xpc_json_key(w, "warnings");
	xp_warnings_render(v->warnings, w);
	xpc_json_obj_end(w);
}

/* --- the terminal view --------------------------------------------------- */

/* Power-of-two bin of a log-linear bucket: 0 for [0, 1), k + 1 for
 * [2^k, 2^(k+1)). */
unsigned xp_render_lh_pow2_bin(uint32_t b)
{
	unsigned k = 0;

	if (b >= XP_LH_SUB) /* octave k = b / 16 + 3 (latency_hist.h) */
		return b / XP_LH_SUB + (XP_LH_SUB_BITS - 1) + 1;
	if (!b)
		return 0;
	while (b >> (k + 1))
		k++;
	return k + 1;
}

static void human_bars(FILE *out, const struct xp_inv_lh_dist *h, bool color)
{
	uint64_t bins[XP_POW2_BINS] = { 0 };
	uint32_t b;

	for (b = 0; b < XP_LH_BUCKETS; b++)
		bins[xp_render_lh_pow2_bin(b)] += h->buckets[b];
	xp_render_pow2_bars(out, bins, color);
}

static void human_summary(FILE *out, const struct xp_inv_lh_dist *h, const char *indent, bool color,
			  const struct xp_inv_lh_result *explained)
{
	struct xp_inv_lh_percentile p;
	char a[32], b[32], c[32], d[32];
	double worst = 0.0;
	size_t i;

	if (!h->count) {
		fprintf(out, "%sno pairs\n", indent);
		return;
	}
	if (explained)
		xp_render_explain_bars(out, explained, color);
	else
		human_bars(out, h, color);
	fprintf(out, "%s", indent);
	for (i = 0; i < XP_LH_NPCT; i++) {
		if (xp_inv_lh_percentile(h, xp_inv_lh_pct_permille[i], &p))
			break;
		xp_report_fmt_ns(a, sizeof(a), (double)p.value_ns);
		if (p.permille % 10)
			fprintf(out, "%sp%u.%u %s", i ? "  " : "", p.permille / 10, p.permille % 10,
				a);
		else
			fprintf(out, "%sp%u %s", i ? "  " : "", p.permille / 10, a);
		if (p.rel_error > worst)
			worst = p.rel_error;
	}
	fprintf(out, "  (each within %.1f%%)\n", worst * 100.0);
	xp_report_fmt_ns(a, sizeof(a), (double)h->min_ns);
	xp_report_fmt_ns(b, sizeof(b), (double)h->sum_ns / (double)(uint64_t)h->count);
	xp_report_fmt_ns(c, sizeof(c), (double)h->max_ns);
	xp_report_fmt_ns(d, sizeof(d), (double)h->sum_ns);
	fprintf(out, "%scount %" PRIu64 "  min %s  mean %s  max %s  sum %s\n", indent,
		(uint64_t)h->count, a, b, c, d);
}

void xp_render_histogram_human(FILE *out, const struct xp_histogram_view *v)
{
	const struct xp_inv_lh_result *r = v->result;
	const char *kind = key_kind(r->group_by, v->start);
	size_t i, n = r->ngroups < XP_HUMAN_GROUPS ? r->ngroups : XP_HUMAN_GROUPS;
	char label[160];

	fprintf(out, "latency histogram of pid %u: %s -> %s (%s)\n", v->pid, v->start_selector,
		v->end_selector, r->nested ? "stack-nested" : "exact");
	fprintf(out, "%" PRIu64 " pairs in %.3f s, stopped by %s, %s\n\n", r->pairs,
		(double)r->window_ns / 1e9, xp_inv_lh_stop_name(r->stop),
		xp_inv_lh_complete(r) ? "complete" : "partial");
	human_summary(out, &r->total, "", v->color, r->explain ? r : NULL);
	xp_render_explain_human(out, r);
	fprintf(out,
		"unpaired: %" PRIu64 " starts (%" PRIu64 " superseded, %" PRIu64
		" open at the end, %" PRIu64 " left by exiting threads), %" PRIu64 " ends\n",
		r->unpaired_starts, (uint64_t)r->c.superseded, r->open_at_end,
		(uint64_t)r->c.thread_exit_open, (uint64_t)r->c.unpaired_ends);
	fprintf(out,
		"bounds: %" PRIu64 " in-flight overflow (%" PRIu64 " of %" PRIu64
		" thread slots used)",
		(uint64_t)r->c.inflight_overflow, r->inflight_occupied, r->inflight_capacity);
	if (r->nested)
		fprintf(out, ", %" PRIu64 " beyond depth %" PRIu64, (uint64_t)r->c.depth_overflow,
			r->max_depth);
	if (r->group_by != XP_LH_BY_NONE)
		fprintf(out, ", %" PRIu64 " without a group (%zu of %" PRIu64 " groups)",
			(uint64_t)(r->c.group_overflow + r->c.key_unreadable), r->ngroups,
			r->group_capacity);
	fprintf(out, "\n");
	for (i = 0; i < n; i++) {
		key_label(label, sizeof(label), kind, &r->groups[i]);
		fprintf(out, "\n%s:\n", label);
		human_summary(out, &r->groups[i].h, "", v->color, NULL);
		if (r->explain) {
			fprintf(out, "where the time went: ");
			xp_render_explain_parts_line(out, &r->groups[i].h.ex,
						     r->groups[i].h.ex.pairs);
		}
	}
	if (r->ngroups > n)
		fprintf(out, "\n... %zu more groups in --json\n", r->ngroups - n);
	xp_render_warnings_human(out, v->warnings);
}

/* --- validate --histogram ------------------------------------------------ */

static const char *errno_status(int e)
{
	if (e == 0)
		return "available";
	return e == EPERM || e == EACCES ? "restricted" : "unavailable";
}

void xp_render_histogram_check_json(struct xpc_json *w, const struct xp_histogram_check *c)
{
	const struct xp_validation *v = c->v;
	const char *kind = key_kind(c->group_by, c->start);
	size_t i;

	xp_render_doc_begin(w);
	xpc_json_kbool(w, "valid", c->nissues == 0);
	xpc_json_kstr(w, "mode", "latency_histogram");
	xp_render_identity(w, "target", v->target.pid, v->target.start_time);
	xpc_json_kobj_begin(w, "inventory");
	xpc_json_kstr(w, "start_selector", v->start.sel->text);
	xpc_json_kstr(w, "end_selector", v->end.sel->text);
	xpc_json_kstr(w, "match_policy", xp_policy_snake(v->policy));
	xpc_json_kstr(w, "recommended_policy", xp_policy_snake(v->recommended));
	xpc_json_karr_begin(w, "endpoints");
	if (c->agent) {
		render_agent_endpoint(w, "start", v->start.sel->text);
		render_agent_endpoint(w, "end", v->end.sel->text);
	} else if (c->start && c->end) {
		render_endpoint(w, "start", c->start);
		render_endpoint(w, "end", c->end);
	}
	xpc_json_arr_end(w);
	xpc_json_kstr(w, "group_by", xp_inv_lh_by_name(c->group_by));
	xpc_json_kstr(w, "group_key_kind", kind);
	xpc_json_kobj_begin(w, "bpf");
	xpc_json_kobj_begin(w, "histogram_object_load");
	xpc_json_kstr(w, "status",
		      c->object_load.tried ? errno_status(c->object_load.err) : "unknown");
	xpc_json_kstr(w, "detail",
		      c->object_load.tried ? c->object_load.detail :
		      c->agent ? "not needed: the Agent pairs cuda: endpoints in the target" :
				 "not tried: an earlier step failed");
	xpc_json_obj_end(w);
	xpc_json_obj_end(w);
	xpc_json_ku64(w, "inflight_map_entries", XP_LH_DEFAULT_MAX_INFLIGHT);
	xpc_json_ku64(w, "max_depth", XP_LH_DEFAULT_MAX_DEPTH);
	xpc_json_obj_end(w);
	xpc_json_kobj_begin(w, "requirements");
	xpc_json_kbool(w, "needs_ebpf", !c->agent);
	xpc_json_kbool(w, "needs_perf_events", false);
	xpc_json_kbool(w, "target_mutation", false);
	xpc_json_obj_end(w);
	xpc_json_karr_begin(w, "issues");
	for (i = 0; i < c->nissues; i++) {
		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "code", xprobe_errname(c->issues[i].code));
		xpc_json_kstr(w, "message", c->issues[i].message);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xpc_json_key(w, "warnings");
	xp_warnings_render(c->warnings, w);
	xpc_json_obj_end(w);
}

void xp_render_histogram_check_human(FILE *out, const struct xp_histogram_check *c)
{
	const struct xp_validation *v = c->v;
	size_t i;

	fprintf(out, "%s: --histogram %s -> %s (%s) on pid %u (start time %" PRIu64 ")\n",
		c->nissues ? "NOT VALID" : "valid", v->start.sel->text, v->end.sel->text,
		xp_policy_kebab(v->policy), v->target.pid, v->target.start_time);
	fprintf(out, "bpf: %s\n",
		c->object_load.tried ? c->object_load.detail : "not tried: an earlier step failed");
	for (i = 0; i < c->nissues; i++)
		fprintf(out, "issue %s: %s\n", xprobe_errname(c->issues[i].code),
			c->issues[i].message);
	xp_render_warnings_human(out, c->warnings);
}

/* The document types the commands emit (output.h). */
/* --- --interval-ms ------------------------------------------------------- */

/* An interval's stats: exact count and sum; its extremes are known only to
 * their buckets. */
static void interval_stats(struct xpc_json *w, const struct xp_inv_lh_dist *h)
{
	bool any = h->count > 0;

	xpc_json_kobj_begin(w, "stats");
	xpc_json_ku64(w, "count", h->count);
	xpc_json_ku64(w, "sum_ns", h->sum_ns);
	xpc_json_key(w, "mean_ns");
	if (any)
		xpc_json_f64(w, (double)h->sum_ns / (double)h->count);
	else
		xpc_json_null(w);
	xpc_json_kopt_u64(w, "min_bucket_lower_ns", any, h->min_ns);
	xpc_json_kopt_u64(w, "max_bucket_upper_ns", any, h->max_ns + 1);
	xpc_json_obj_end(w);
}

void xp_render_histogram_interval_json(struct xpc_json *w,
				       const struct xp_histogram_interval_view *v)
{
	const struct xp_histogram_view *c = v->capture;
	const struct xp_inv_lh_interval *iv = v->iv;
	const char *kind = key_kind(v->group_by, c->start);
	char label[160];
	size_t i;

	xp_render_result_begin(w, c->session_id, "interval");
	xpc_json_kobj_begin(w, "interval");
	xpc_json_ku64(w, "index", iv->index);
	xpc_json_ku64(w, "start_ns", iv->start_ns);
	xpc_json_ku64(w, "end_ns", iv->end_ns);
	xpc_json_ku64(w, "start_offset_ns", iv->start_ns - v->armed_at_ns);
	xpc_json_ku64(w, "duration_ns", iv->end_ns - iv->start_ns);
	xpc_json_obj_end(w);
	xpc_json_kobj_begin(w, "histogram");
	xpc_json_kstr(w, "name", c->name);
	xp_render_identity(w, "target", c->pid, c->process_start_time);
	xpc_json_kstr(w, "start_selector", c->start_selector);
	xpc_json_kstr(w, "end_selector", c->end_selector);
	xpc_json_kstr(w, "group_by", xp_inv_lh_by_name(v->group_by));
	interval_stats(w, &iv->total);
	render_buckets(w, &iv->total);
	render_percentiles(w, &iv->total);
	xpc_json_karr_begin(w, "groups");
	for (i = 0; i < iv->ngroups; i++) {
		key_label(label, sizeof(label), kind, &iv->groups[i]);
		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "key", iv->groups[i].key);
		xpc_json_ki64(w, "key_signed", (int64_t)iv->groups[i].key);
		xpc_json_kstr(w, "label", label);
		render_group_name(w, &iv->groups[i]);
		interval_stats(w, &iv->groups[i].h);
		render_percentiles(w, &iv->groups[i].h);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xpc_json_key(w, "explain");
	if (v->explain)
		xp_render_explain_parts_json(w, NULL, &iv->total.ex);
	else
		xpc_json_null(w);
	xpc_json_obj_end(w);
	xpc_json_kobj_begin(w, "counters");
	xpc_json_ku64(w, "superseded", iv->c.superseded);
	xpc_json_ku64(w, "unpaired_ends", iv->c.unpaired_ends);
	xpc_json_ku64(w, "thread_exit_open", iv->c.thread_exit_open);
	xpc_json_ku64(w, "inflight_overflow", iv->c.inflight_overflow);
	xpc_json_ku64(w, "depth_overflow", iv->c.depth_overflow);
	xpc_json_ku64(w, "group_overflow", iv->c.group_overflow);
	xpc_json_ku64(w, "key_unreadable", iv->c.key_unreadable);
	xpc_json_obj_end(w);
	xpc_json_obj_end(w);
}

void xp_render_histogram_interval_human(FILE *out, const struct xp_histogram_interval_view *v)
{
	const struct xp_inv_lh_interval *iv = v->iv;
	struct xp_inv_lh_percentile p;
	char when[16], a[32], b[32], c[32];
	time_t now = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&now, &tm));
	fprintf(out, "%s  interval %" PRIu64 " (+%.3f s .. +%.3f s): %" PRIu64 " pairs\n", when,
		iv->index, (double)(iv->start_ns - v->armed_at_ns) / 1e9,
		(double)(iv->end_ns - v->armed_at_ns) / 1e9, (uint64_t)iv->total.count);
	if (!iv->total.count) {
		fprintf(out, "\n");
		return;
	}
	human_bars(out, &iv->total, v->capture->color);
	xp_inv_lh_percentile(&iv->total, 500, &p);
	xp_report_fmt_ns(a, sizeof(a), (double)p.value_ns);
	xp_inv_lh_percentile(&iv->total, 990, &p);
	xp_report_fmt_ns(b, sizeof(b), (double)p.value_ns);
	xp_report_fmt_ns(c, sizeof(c), (double)iv->total.sum_ns / (double)iv->total.count);
	fprintf(out, "p50 %s  p99 %s  mean %s\n\n", a, b, c);
}

XP_DOC_TYPE(xp_doc_histogram_interval, "latency-histogram-interval",
	    struct xp_histogram_interval_view, xp_render_histogram_interval_json,
	    xp_render_histogram_interval_human);

XP_DOC_TYPE(xp_doc_histogram, "latency-histogram-result", struct xp_histogram_view,
	    xp_render_histogram_json, xp_render_histogram_human);
XP_DOC_TYPE(xp_doc_histogram_check, "inventory-validation", struct xp_histogram_check,
	    xp_render_histogram_check_json, xp_render_histogram_check_human);
