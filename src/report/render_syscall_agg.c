/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_syscall_agg.c - the SyscallAggregateResult document (schemas/
 * syscall-aggregate-result.schema.json) and its human summary.
 *
 * Reads a finished summary (src/inventory/syscall_aggregate.h: groups named and
 * sorted, totals and drops summed) and prints it.  Known x86_64 numbers
 * get their name and exact syscall:NAME:entry|exit hints; unknown numbers
 * stay numeric with null hints.  Durations without a matched pair are
 * null, never 0.  The human table: share of the time, total and mean in
 * readable units, entries, errors, in flight, name; sorted as the JSON.
 */
#include <inttypes.h>

#include "../../common/json.h"
#include "../inventory/syscall_aggregate.h"
#include "report.h"
#include "format.h"

#define XP_HUMAN_SYSCALLS 15

static double ratio(uint64_t n, uint64_t d)
{
	return d ? (double)n / (double)d : 0.0;
}

static void render_group(struct xpc_json *w, const struct xp_inv_sa_summary_group *g)
{
	char hint[96];
	bool m = g->matched_exits > 0;

	xpc_json_obj_begin(w);
	xpc_json_ki64(w, "syscall_nr", g->nr);
	xpc_json_kstr(w, "name", g->name);
	xpc_json_kbool(w, "known", g->name != NULL);
	xpc_json_kstr(w, "entry_selector_hint",
		      xp_inv_sa_selector_hint(g->nr, false, hint, sizeof(hint)) ? hint : NULL);
	xpc_json_kstr(w, "exit_selector_hint",
		      xp_inv_sa_selector_hint(g->nr, true, hint, sizeof(hint)) ? hint : NULL);
	xpc_json_ku64(w, "entries", g->entries);
	xpc_json_ku64(w, "matched_exits", g->matched_exits);
	xpc_json_ku64(w, "unmatched_exits", g->unmatched_exits);
	xpc_json_ku64(w, "inflight_at_end", g->inflight_at_end);
	xpc_json_ku64(w, "inflight_drops", g->inflight_drops);
	xpc_json_ku64(w, "superseded", g->superseded);
	xpc_json_ku64(w, "noreturn", g->noreturn);
	xpc_json_ku64(w, "errors", g->errors);
	xpc_json_kobj_begin(w, "duration_ns");
	xpc_json_kopt_u64(w, "min", m, g->min_ns);
	xpc_json_key(w, "mean");
	if (m)
		xpc_json_f64(w, (double)g->total_ns / (double)g->matched_exits);
	else
		xpc_json_null(w);
	xpc_json_kopt_u64(w, "max", m, g->max_ns);
	xpc_json_ku64(w, "total", g->total_ns);
	xpc_json_obj_end(w);
	xpc_json_obj_end(w);
}

void xp_render_syscall_agg_json(struct xpc_json *w, const struct xp_syscall_agg_view *v)
{
	const struct xp_inv_sa_result *r = v->result;
	size_t i;

	xp_render_inventory_begin(w, v->session_id, v->status, v->name, v->pid,
				  v->process_start_time);
	xpc_json_kstr(w, "arch", "x86_64");
	xpc_json_karr_begin(w, "groups");
	for (i = 0; i < r->ngroups; i++)
		render_group(w, &r->groups[i]);
	xpc_json_arr_end(w);
	xpc_json_obj_end(w);

	xp_render_collection_begin(w, v->complete, xp_inv_sa_stop_reason_name(r->stop_reason),
				   r->window_ns);
	xpc_json_ku64(w, "setup_ns", r->setup_ns);
	xpc_json_ku64(w, "armed_at_ns", r->armed_at_ns);
	xpc_json_kbool(w, "pid_namespace_filter", v->pid_namespace_filter);
	xpc_json_ku64(w, "entries", r->entries);
	xpc_json_ku64(w, "matched_exits", r->matched_exits);
	xpc_json_ku64(w, "unmatched_exits", r->unmatched_exits);
	xpc_json_ku64(w, "inflight_at_end", r->inflight_at_end);
	xpc_json_ku64(w, "errors", r->errors);
	xpc_json_ku64(w, "dropped", v->dropped);
	xpc_json_ku64(w, "group_drop_entries", r->group_drop_entries);
	xpc_json_ku64(w, "group_drop_exits", r->group_drop_exits);
	xpc_json_ku64(w, "inflight_drops", r->inflight_drops);
	xpc_json_ku64(w, "superseded", r->superseded);
	xpc_json_ku64(w, "noreturn", r->noreturn);
	xpc_json_ku64(w, "regs_read_errors", r->regs_read_errors);
	xpc_json_ku64(w, "group_capacity", r->group_capacity);
	xpc_json_ku64(w, "groups", r->ngroups);
	xpc_json_kf64(w, "group_table_utilization", ratio(r->ngroups, r->group_capacity));
	xpc_json_ku64(w, "inflight_capacity", r->inflight_capacity);
	xpc_json_ku64(w, "inflight_occupied", r->inflight_occupied);
	xpc_json_kf64(w, "inflight_table_utilization",
		      ratio(r->inflight_occupied, r->inflight_capacity));
	xpc_json_obj_end(w);
	xpc_json_key(w, "warnings");
	xp_warnings_render(v->warnings, w);
	xpc_json_obj_end(w);
}

void xp_render_syscall_agg_human(FILE *out, const struct xp_syscall_agg_view *v)
{
	const struct xp_inv_sa_result *r = v->result;
	size_t i, n = r->ngroups < XP_HUMAN_SYSCALLS ? r->ngroups : XP_HUMAN_SYSCALLS;
	uint64_t all_ns = 0;

	fprintf(out,
		"syscall inventory of pid %u: %" PRIu64 " entries, %" PRIu64
		" errors in %.3f s, %zu syscalls, %s (%" PRIu64 " dropped)\n",
		v->pid, r->entries, r->errors, (double)r->window_ns / 1e9, r->ngroups,
		v->complete ? "complete" : "partial", v->dropped);
	for (i = 0; i < r->ngroups; i++)
		all_ns += r->groups[i].total_ns;
	/* syscount's / strace -c's table, in the summary's order: the share
	 * of the time first, then the count (xp_inv_sa_result_finish) */
	if (n)
		fprintf(out, "\n%7s %10s %10s %10s %8s %8s  %s\n", "% time", "total", "mean",
			"entries", "errors", "inflight", "syscall");
	for (i = 0; i < n; i++) {
		const struct xp_inv_sa_summary_group *g = &r->groups[i];
		char name[32], total[32], mean[32];

		if (g->name)
			snprintf(name, sizeof(name), "%s", g->name);
		else
			snprintf(name, sizeof(name), "#%d", (int)g->nr);
		xp_report_fmt_ns(total, sizeof(total), (double)g->total_ns);
		if (g->matched_exits)
			xp_report_fmt_ns(mean, sizeof(mean),
				     (double)g->total_ns / (double)g->matched_exits);
		else
			snprintf(mean, sizeof(mean), "-");
		fprintf(out, "%7.2f %10s %10s %10" PRIu64 " %8" PRIu64 " %8" PRIu64 "  %s\n",
			100.0 * ratio(g->total_ns, all_ns), total, mean, g->entries, g->errors,
			g->inflight_at_end, name);
	}
	if (r->ngroups > n)
		fprintf(out, "... %zu more in --json\n", r->ngroups - n);
	xp_render_warnings_human(out, v->warnings);
}

/* The document type the commands emit (output.h). */
XP_DOC_TYPE(xp_doc_syscall_agg, "syscall-aggregate-result", struct xp_syscall_agg_view,
	    xp_render_syscall_agg_json, xp_render_syscall_agg_human);
