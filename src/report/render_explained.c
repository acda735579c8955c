/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_explained.c - `measure --explain` in the exact modes: the
 * ExplainedMeasurementResult (schemas/explained-measurement-result.schema.json),
 * a document type of xprobe's own.  The contract's MeasurementResult is
 * closed, so it goes unchanged under "result" and the explanation beside
 * it: each evidence pair's parts (in evidence order), the totals, the
 * blocked time per syscall, the slowest pairs with their longest block.
 * The terminal view is the measurement's own, then the explanation as
 * --histogram --explain prints it (render_explain.c).
 */
#include <inttypes.h>
#include <string.h>

#include "../../common/json.h"
#include "../inventory/explain_pairs.h"
#include "render_histogram.h"
#include "report.h"

static void pair_json(struct xpc_json *w, size_t i, const struct xp_ex_pair *p)
{
	struct xp_ex_sums s;
	int k;

	xpc_json_obj_begin(w);
	xpc_json_ku64(w, "pair", i);
	xpc_json_ku64(w, "tid", p->tid);
	xpc_json_kstr(w, "status", xp_ex_pair_status_name((enum xp_ex_pair_status)p->status));
	if (p->status != XP_EXP_EXPLAINED) {
		xpc_json_key(w, "parts");
		xpc_json_null(w);
	} else {
		memset(&s, 0, sizeof(s));
		for (k = 0; k < XP_EX_NCOMP; k++)
			s.comp[k] = p->comp[k];
		s.nvcsw = p->nvcsw;
		s.nivcsw = p->nivcsw;
		s.nmigr = p->nmigr;
		s.pairs = 1;
		xp_render_explain_parts_json(w, "parts", &s);
	}
	xpc_json_obj_end(w);
}

void xp_render_explained_json(struct xpc_json *w, const struct xp_explained_view *v)
{
	const struct xp_explained *x = v->x;
	int k;
	size_t i;

	xp_render_doc_begin(w);
	xpc_json_key(w, "result");
	xp_render_measurement_json(w, v->m);
	xpc_json_kobj_begin(w, "explain");
	xpc_json_kstr(w, "identity", "on_cpu_ns + runqueue_ns + blocked_ns = latency_ns, per pair");
	xpc_json_kobj_begin(w, "scheduler");
	xpc_json_ku64(w, "records", x->records);
	xpc_json_ku64(w, "lost", x->lost);
	xpc_json_ku64(w, "beyond_max_events", x->beyond);
	xpc_json_ku64(w, "unknown", x->unknown);
	xpc_json_kopt_u64(w, "first_gap_ns", x->first_gap_ns != 0, x->first_gap_ns);
	xpc_json_ku64(w, "missed_switch_ins", x->missed_in);
	xpc_json_obj_end(w);
	xp_render_explain_parts_json(w, "total", &x->total);
	xpc_json_kobj_begin(w, "unexplained_pairs");
	for (k = XP_EXP_OTHER_THREAD; k <= XP_EXP_GAP; k++)
		xpc_json_ku64(w, xp_ex_pair_status_name((enum xp_ex_pair_status)k),
			      x->unexplained[k]);
	xpc_json_obj_end(w);
	xp_render_explain_blocked_json(w, &x->ex);
	xp_render_explain_slowest_json(w, &x->ex, false);
	xpc_json_karr_begin(w, "pairs");
	for (i = 0; i < x->npairs; i++)
		pair_json(w, i, &x->pairs[i]);
	xpc_json_arr_end(w);
	xpc_json_obj_end(w);
	xpc_json_obj_end(w);
}

void xp_render_explained_human(FILE *out, const struct xp_explained_view *v)
{
	const struct xp_explained *x = v->x;
	uint64_t un = x->unexplained[XP_EXP_OTHER_THREAD] + x->unexplained[XP_EXP_OTHER_CLOCK] +
		      x->unexplained[XP_EXP_GAP];

	xp_render_measurement_human(out, v->m);
	fprintf(out, "\nwhere the time went (%" PRIu64 " pairs): ", (uint64_t)x->total.pairs);
	xp_render_explain_parts_line(out, &x->total, x->total.pairs);
	xp_render_explain_blocked_human(out, &x->ex);
	if (un)
		fprintf(out,
			"unexplained: %" PRIu64 " pairs (%" PRIu64 " across threads, %" PRIu64
			" on a GPU clock, %" PRIu64 " after scheduler records were lost)\n",
			un, x->unexplained[XP_EXP_OTHER_THREAD], x->unexplained[XP_EXP_OTHER_CLOCK],
			x->unexplained[XP_EXP_GAP]);
	fprintf(out, "scheduler: %" PRIu64 " records of the target's threads, %" PRIu64 " lost, %" PRIu64
		     " beyond --max-events",
		x->records, x->lost, x->beyond);
	if (x->missed_in)
		fprintf(out, ", %" PRIu64 " switch-ins no tracepoint reported (repaired)",
			x->missed_in);
	fprintf(out, "\n");
	xp_render_explain_slowest_human(out, &x->ex, v->t0);
}

XP_DOC_TYPE(xp_doc_explained, "explained-measurement-result", struct xp_explained_view,
	    xp_render_explained_json, xp_render_explained_human);
