/* SPDX-License-Identifier: Apache-2.0 */
/*
 * syscall_aggregate_summary.c - the bounded summary of `--syscall-aggregate`
 * from the raw map contents (see syscall_aggregate.h): per-CPU folding, group
 * lookup, names and hints from the generated x86_64 table, totals, and the
 * deterministic order.  No BPF here, so every rule is unit-tested.
 *
 * Invariant checked by the tests (and documented in bpf/syscall_agg.h):
 * per group, entries = matched + inflight_at_end + inflight_drops +
 * superseded + noreturn, whenever no start predates the window.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bpf/syscall_agg.h"
#include "../selector/syscall_table.h"
#include "syscall_aggregate.h"

const char *xp_inv_sa_stop_reason_name(enum xp_inv_sa_stop_reason r)
{
	switch (r) {
	case XP_SA_STOP_DURATION:
		return "duration";
	case XP_SA_STOP_CANCELLED:
		return "cancelled";
	}
	return "duration";
}

void xp_inv_sa_fold_percpu(struct xp_inv_sa_summary_group *g, const struct xp_sa_group *vals,
			   int ncpus)
{
	int i;

	for (i = 0; i < ncpus; i++) {
		const struct xp_sa_group *v = &vals[i];

		g->entries += v->entries;
		g->unmatched_exits += v->unmatched_exits;
		g->errors += v->errors;
		g->inflight_drops += v->inflight_drops;
		g->superseded += v->superseded;
		g->noreturn += v->noreturn;
		g->total_ns += v->total_ns;
		if (v->has_min && v->matched_exits) {
			if (!g->matched_exits || v->min_ns < g->min_ns)
				g->min_ns = v->min_ns;
			if (v->max_ns > g->max_ns)
				g->max_ns = v->max_ns;
		}
		g->matched_exits += v->matched_exits;
	}
}

struct xp_inv_sa_summary_group *xp_inv_sa_result_group(struct xp_inv_sa_result *r, int32_t nr)
{
	struct xp_inv_sa_summary_group *g, *ng;
	size_t i;

	for (i = 0; i < r->ngroups; i++)
		if (r->groups[i].nr == nr)
			return &r->groups[i];
	ng = realloc(r->groups, (r->ngroups + 1) * sizeof(*ng));
	if (!ng)
		return NULL;
	r->groups = ng;
	g = &r->groups[r->ngroups++];
	memset(g, 0, sizeof(*g));
	g->nr = nr;
	return g;
}

static int group_cmp(const void *a, const void *b)
{
	const struct xp_inv_sa_summary_group *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->entries != y->entries)
		return x->entries > y->entries ? -1 : 1;
	if (x->unmatched_exits != y->unmatched_exits)
		return x->unmatched_exits > y->unmatched_exits ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

void xp_inv_sa_result_finish(struct xp_inv_sa_result *r)
{
	size_t i;

	r->entries = r->matched_exits = r->unmatched_exits = r->inflight_at_end = r->errors = 0;
	r->superseded = r->noreturn = 0;
	for (i = 0; i < r->ngroups; i++) {
		struct xp_inv_sa_summary_group *g = &r->groups[i];

		g->name = g->nr >= 0 ? xp_syscall_name(g->nr) : NULL;
		r->entries += g->entries;
		r->matched_exits += g->matched_exits;
		r->unmatched_exits += g->unmatched_exits;
		r->inflight_at_end += g->inflight_at_end;
		r->errors += g->errors;
		r->superseded += g->superseded;
		r->noreturn += g->noreturn;
	}
	if (r->ngroups > 1)
		qsort(r->groups, r->ngroups, sizeof(*r->groups), group_cmp);
}

bool xp_inv_sa_selector_hint(int32_t nr, bool exit, char *buf, size_t size)
{
	const char *name = nr >= 0 ? xp_syscall_name(nr) : NULL;
	int n;

	if (!name)
		return false;
	n = snprintf(buf, size, "syscall:%s:%s", name, exit ? "exit" : "entry");
	return n > 0 && (size_t)n < size;
}

uint64_t xp_inv_sa_dropped(const struct xp_inv_sa_result *r)
{
	return r->group_drop_entries + r->group_drop_exits + r->inflight_drops +
	       r->regs_read_errors;
}

bool xp_inv_sa_complete(const struct xp_inv_sa_result *r)
{
	return !xp_inv_sa_dropped(r) && r->stop_reason != XP_SA_STOP_CANCELLED;
}

int xp_inv_sa_warnings(const struct xp_inv_sa_result *r, struct xp_warnings *ws)
{
	char msg[512];
	int rc;

	if (!r->entries && !r->unmatched_exits &&
	    (rc = xp_warnings_add_u64(ws, "NO_SYSCALLS",
				      "the target made no system call during the window",
				      "window_ns", (uint64_t)r->window_ns, NULL)))
		return rc;
	if (r->group_drop_entries || r->group_drop_exits) {
		snprintf(msg, sizeof(msg),
			 "the %" PRIu64 "-group table was full: %" PRIu64 " entries and %" PRIu64
			 " exits of other syscall numbers were counted as dropped, in no group; "
			 "raise --max-groups",
			 r->group_capacity, r->group_drop_entries, r->group_drop_exits);
		if ((rc = xp_warnings_add_u64(ws, "SYSCALL_GROUPS_FULL", msg, "group_capacity",
					      r->group_capacity, "group_drop_entries",
					      r->group_drop_entries, "group_drop_exits",
					      r->group_drop_exits, NULL)))
			return rc;
	}
	if (r->inflight_drops) {
		snprintf(
			msg, sizeof(msg),
			"the %" PRIu64 "-thread in-flight table was full: %" PRIu64
			" syscall starts were not kept, so their exits count as unmatched and have "
			"no duration; raise --max-inflight",
			r->inflight_capacity, r->inflight_drops);
		if ((rc = xp_warnings_add_u64(ws, "INFLIGHT_TABLE_FULL", msg, "inflight_capacity",
					      r->inflight_capacity, "inflight_drops",
					      r->inflight_drops, NULL)))
			return rc;
	}
	if (r->regs_read_errors &&
	    (rc = xp_warnings_add_u64(
		     ws, "SYSCALL_NUMBER_UNREADABLE",
		     "some unmatched exits could not read their syscall number and are in no group",
		     "regs_read_errors", r->regs_read_errors, NULL)))
		return rc;
	if (r->stop_reason == XP_SA_STOP_CANCELLED &&
	    (rc = xp_warnings_add_u64(
		     ws, "AGGREGATE_CANCELLED",
		     "a signal ended the window early; the result covers the time until then",
		     "window_ns", r->window_ns, NULL)))
		return rc;
	return 0;
}

void xp_inv_sa_result_free(struct xp_inv_sa_result *r)
{
	free(r->groups);
	memset(r, 0, sizeof(*r));
}
