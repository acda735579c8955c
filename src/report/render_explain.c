/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_explain.c - what `measure --histogram --explain` adds to the
 * LatencyHistogramResult (its "explain" object, and each group's) and to
 * the terminal view: the bars split by component, where the time went,
 * the syscalls the pairs blocked in, and the slowest pairs with the stack
 * where each blocked longest and who woke it, folded as libbpf-tools'
 * offcputime -f prints a stack (comm;user frames;kernel frames, outermost
 * first).  docs/explain.md says what each part means.
 */
#include <inttypes.h>
#include <string.h>

#include "../../common/json.h"
#include "../selector/syscall_table.h"
#include "format.h"
#include "render_bars.h"
#include "render_histogram.h"

/* The terminal's glyph of each component (XP_EX_* order). */
static const char glyphs[XP_EX_NCOMP + 1] = "crSD";

static const char *const comp_key[XP_EX_NCOMP] = {
	"on_cpu_ns",
	"runqueue_ns",
	"blocked_interruptible_ns",
	"blocked_uninterruptible_ns",
};

static const char *state_name(uint32_t st)
{
	return st == XP_EX_ST_BLOCKED_D ? "uninterruptible" : "interruptible";
}

static const char *syscall_of(int32_t nr)
{
	const char *s = nr >= 0 ? xp_syscall_name(nr) : NULL;

	return s;
}

void xp_render_explain_parts_json(struct xpc_json *w, const char *key, const struct xp_ex_sums *s)
{
	int i;

	if (key)
		xpc_json_kobj_begin(w, key);
	else
		xpc_json_obj_begin(w);
	xpc_json_ku64(w, "pairs", s->pairs);
	for (i = 0; i < XP_EX_NCOMP; i++)
		xpc_json_ku64(w, comp_key[i], s->comp[i]);
	xpc_json_ku64(w, "blocked_ns", s->comp[XP_EX_BLOCKED_S] + s->comp[XP_EX_BLOCKED_D]);
	xpc_json_ku64(w, "voluntary_switches", s->nvcsw);
	xpc_json_ku64(w, "involuntary_switches", s->nivcsw);
	xpc_json_ku64(w, "migrations", s->nmigr);
	xpc_json_obj_end(w);
}

/* A stack's frames, innermost first, as a JSON array of names (null: the
 * stack was not captured). */
static void stack_json(struct xpc_json *w, const char *key, const struct xp_inv_ex_result *ex,
		       int32_t id)
{
	const struct xp_inv_ex_stack *st = xp_inv_ex_stack_find(ex, id);
	uint32_t i;

	xpc_json_key(w, key);
	if (!st) {
		xpc_json_null(w);
		return;
	}
	xpc_json_arr_begin(w);
	for (i = 0; i < st->n; i++)
		xpc_json_str(w, st->names[i] ? st->names[i] : "[unknown]");
	xpc_json_arr_end(w);
}

static void block_json(struct xpc_json *w, const struct xp_inv_ex_result *ex,
		       const struct xp_ex_block *b)
{
	char comm[sizeof(b->waker_comm) + 1];

	xpc_json_key(w, "longest_block");
	if (!b->ns) {
		xpc_json_null(w);
		return;
	}
	xpc_json_obj_begin(w);
	xpc_json_ku64(w, "ns", b->ns);
	xpc_json_kstr(w, "state", state_name(b->state));
	xpc_json_kstr(w, "syscall", syscall_of(b->nr));
	xpc_json_kopt_i64(w, "syscall_nr", b->nr >= 0, b->nr);
	stack_json(w, "user_stack", ex, b->ustack);
	stack_json(w, "kernel_stack", ex, b->kstack);
	xpc_json_key(w, "waker");
	if (!xp_ex_block_woken(b)) {
		xpc_json_null(w);
	} else {
		memcpy(comm, b->waker_comm, sizeof(b->waker_comm));
		comm[sizeof(b->waker_comm)] = '\0';
		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "pid", b->waker_pid);
		xpc_json_ku64(w, "tid", b->waker_tid);
		xpc_json_kstr(w, "comm", comm);
		stack_json(w, "user_stack", ex, b->waker_ustack);
		stack_json(w, "kernel_stack", ex, b->waker_kstack);
		xpc_json_obj_end(w);
	}
	xpc_json_obj_end(w);
}

/* A slow pair's parts as a one-pair sum. */
static void slow_sums(const struct xp_ex_slow *x, struct xp_ex_sums *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < XP_EX_NCOMP; i++)
		s->comp[i] = x->comp[i];
	s->nvcsw = x->nvcsw;
	s->nivcsw = x->nivcsw;
	s->nmigr = x->nmigr;
	s->pairs = 1;
}

static void slow_json(struct xpc_json *w, const struct xp_inv_ex_result *ex, bool grouped,
		      const struct xp_ex_slow *x)
{
	struct xp_ex_sums s;

	slow_sums(x, &s);
	xpc_json_obj_begin(w);
	xpc_json_ku64(w, "tid", x->tid);
	xpc_json_ku64(w, "start_ns", x->start_ns);
	xpc_json_ku64(w, "latency_ns", x->latency_ns);
	xpc_json_kopt_u64(w, "group_key", grouped, x->key);
	xp_render_explain_parts_json(w, "parts", &s);
	block_json(w, ex, &x->longest);
	xpc_json_obj_end(w);
}

void xp_render_explain_blocked_json(struct xpc_json *w, const struct xp_inv_ex_result *ex)
{
	size_t i;

	xpc_json_karr_begin(w, "blocked_by_syscall");
	for (i = 0; i < ex->nblocked; i++) {
		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "syscall", syscall_of(ex->blocked[i].nr));
		xpc_json_kopt_i64(w, "syscall_nr", ex->blocked[i].nr >= 0, ex->blocked[i].nr);
		xpc_json_kstr(w, "state", state_name(ex->blocked[i].state));
		xpc_json_ku64(w, "ns", ex->blocked[i].ns);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
}

void xp_render_explain_slowest_json(struct xpc_json *w, const struct xp_inv_ex_result *ex,
				    bool grouped)
{
	size_t i;

	xpc_json_ku64(w, "top", ex->top);
	xpc_json_karr_begin(w, "slowest");
	for (i = 0; i < ex->nslow; i++)
		slow_json(w, ex, grouped, &ex->slow[i]);
	xpc_json_arr_end(w);
}

void xp_render_explain_json(struct xpc_json *w, const struct xp_inv_lh_result *r)
{
	const struct xp_inv_ex_result *ex = &r->ex;
	uint64_t lo, hi;
	uint32_t b;
	int c;

	xpc_json_key(w, "explain");
	if (!r->explain) {
		xpc_json_null(w);
		return;
	}
	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "identity", "on_cpu_ns + runqueue_ns + blocked_ns = latency, per pair");
	xp_render_explain_parts_json(w, "total", &r->total.ex);
	xpc_json_karr_begin(w, "buckets");
	for (b = 0; b < XP_LH_BUCKETS; b++) {
		if (!r->total.buckets[b])
			continue;
		xp_inv_lh_bucket_bounds(b, &lo, &hi);
		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "lower_ns", lo);
		xpc_json_ku64(w, "upper_ns", hi);
		xpc_json_ku64(w, "count", r->total.buckets[b]);
		for (c = 0; c < XP_EX_NCOMP; c++)
			xpc_json_ku64(w, comp_key[c], ex->buckets ? ex->buckets[b][c] : 0);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xp_render_explain_blocked_json(w, ex);
	xp_render_explain_slowest_json(w, ex, r->group_by != XP_LH_BY_NONE);
	xpc_json_ku64(w, "unexplained_pairs", r->c.ex_unexplained);
	xpc_json_ku64(w, "clamped_pairs", r->c.ex_clamped);
	xpc_json_ku64(w, "blocked_ns_without_syscall_slot", r->c.ex_block_overflow);
	xpc_json_ku64(w, "missed_switch_ins", r->ex_missed_in);
	xpc_json_obj_end(w);
}

/* --- the terminal view --------------------------------------------------- */

void xp_render_explain_bars(FILE *out, const struct xp_inv_lh_result *r, bool color)
{
	uint64_t bins[XP_POW2_BINS] = { 0 };
	uint64_t parts[XP_POW2_BINS][XP_BAR_PARTS];
	uint32_t b;
	int c;

	memset(parts, 0, sizeof(parts));
	for (b = 0; b < XP_LH_BUCKETS; b++) {
		unsigned bin = xp_render_lh_pow2_bin(b);

		bins[bin] += r->total.buckets[b];
		for (c = 0; c < XP_EX_NCOMP && r->ex.buckets; c++)
			parts[bin][c] += r->ex.buckets[b][c];
	}
	xp_render_pow2_bars_parts(out, bins, (const uint64_t(*)[XP_BAR_PARTS])parts, glyphs, color);
	fprintf(out,
		"(c on CPU, r run queue, S blocked interruptible, D blocked uninterruptible)\n");
}

static void pct(char *buf, size_t size, uint64_t part, uint64_t whole)
{
	snprintf(buf, size, "%.0f%%", whole ? 100.0 * (double)part / (double)whole : 0.0);
}

/* "on CPU 2.00ms (14%)  run queue ... blocked ... (S ..., D ...)" */
void xp_render_explain_parts_line(FILE *out, const struct xp_ex_sums *s, uint64_t pairs)
{
	uint64_t blocked = s->comp[XP_EX_BLOCKED_S] + s->comp[XP_EX_BLOCKED_D];
	uint64_t whole = s->comp[XP_EX_ON_CPU] + s->comp[XP_EX_RUNQ] + blocked;
	char a[32], b[32], c[32], d[32], e[32], pa[8], pb[8], pc[8];

	xp_report_fmt_ns(a, sizeof(a), (double)s->comp[XP_EX_ON_CPU]);
	xp_report_fmt_ns(b, sizeof(b), (double)s->comp[XP_EX_RUNQ]);
	xp_report_fmt_ns(c, sizeof(c), (double)blocked);
	xp_report_fmt_ns(d, sizeof(d), (double)s->comp[XP_EX_BLOCKED_S]);
	xp_report_fmt_ns(e, sizeof(e), (double)s->comp[XP_EX_BLOCKED_D]);
	pct(pa, sizeof(pa), s->comp[XP_EX_ON_CPU], whole);
	pct(pb, sizeof(pb), s->comp[XP_EX_RUNQ], whole);
	pct(pc, sizeof(pc), blocked, whole);
	fprintf(out, "on CPU %s (%s)  run queue %s (%s)  blocked %s (%s: S %s, D %s)", a, pa, b, pb,
		c, pc, d, e);
	if (pairs)
		fprintf(out,
			"  switches %" PRIu64 " voluntary, %" PRIu64 " involuntary, %" PRIu64
			" migrations",
			(uint64_t)s->nvcsw, (uint64_t)s->nivcsw, (uint64_t)s->nmigr);
	fprintf(out, "\n");
}

/* A stack folded: outermost first, ';' between frames. */
static void folded(FILE *out, const struct xp_inv_ex_result *ex, int32_t id)
{
	const struct xp_inv_ex_stack *st = xp_inv_ex_stack_find(ex, id);
	uint32_t i;

	if (!st) {
		fprintf(out, ";[not captured]");
		return;
	}
	for (i = st->n; i-- > 0;)
		fprintf(out, ";%s", st->names[i] ? st->names[i] : "[unknown]");
}

static void slow_human(FILE *out, const struct xp_inv_ex_result *ex, uint64_t t0,
		       const struct xp_ex_slow *x)
{
	const struct xp_ex_block *b = &x->longest;
	struct xp_ex_sums s;
	char lat[32], ns[32], comm[sizeof(b->waker_comm) + 1];
	const char *sc = syscall_of(b->nr);

	slow_sums(x, &s);
	xp_report_fmt_ns(lat, sizeof(lat), (double)x->latency_ns);
	fprintf(out, "  %s  tid %u at +%.3fs: ", lat, x->tid,
		x->start_ns > t0 ? (double)(x->start_ns - t0) / 1e9 : 0.0);
	xp_render_explain_parts_line(out, &s, 1);
	if (!b->ns)
		return;
	xp_report_fmt_ns(ns, sizeof(ns), (double)b->ns);
	fprintf(out, "    longest block %s in %s (%s)", ns, sc ? sc : "no syscall",
		b->state == XP_EX_ST_BLOCKED_D ? "D" : "S");
	if (xp_ex_block_woken(b)) {
		memcpy(comm, b->waker_comm, sizeof(b->waker_comm));
		comm[sizeof(b->waker_comm)] = '\0';
		fprintf(out, ", woken by %s (pid %u, tid %u)\n", comm, b->waker_pid, b->waker_tid);
	} else {
		fprintf(out, ", no wakeup seen\n");
	}
	fprintf(out, "      blocked: tid %u", x->tid);
	folded(out, ex, b->ustack);
	folded(out, ex, b->kstack);
	fprintf(out, "\n");
	if (xp_ex_block_woken(b)) {
		fprintf(out, "      waker:   %s", comm);
		folded(out, ex, b->waker_ustack);
		folded(out, ex, b->waker_kstack);
		fprintf(out, "\n");
	}
}

void xp_render_explain_blocked_human(FILE *out, const struct xp_inv_ex_result *ex)
{
	char ns[32];
	size_t i;

	if (!ex->nblocked)
		return;
	fprintf(out, "blocked in:");
	for (i = 0; i < ex->nblocked && i < 8; i++) {
		const char *sc = syscall_of(ex->blocked[i].nr);

		xp_report_fmt_ns(ns, sizeof(ns), (double)ex->blocked[i].ns);
		fprintf(out, "%s %s %s (%s)", i ? "," : "", sc ? sc : "no syscall", ns,
			ex->blocked[i].state == XP_EX_ST_BLOCKED_D ? "D" : "S");
	}
	fprintf(out, "\n");
}

void xp_render_explain_slowest_human(FILE *out, const struct xp_inv_ex_result *ex, uint64_t t0)
{
	size_t i;

	if (!ex->nslow)
		return;
	fprintf(out, "slowest pairs (%zu of at most %u):\n", ex->nslow, ex->top);
	for (i = 0; i < ex->nslow; i++)
		slow_human(out, ex, t0, &ex->slow[i]);
}

void xp_render_explain_human(FILE *out, const struct xp_inv_lh_result *r)
{
	if (!r->explain)
		return;
	fprintf(out, "where the time went (%" PRIu64 " pairs): ", (uint64_t)r->total.ex.pairs);
	xp_render_explain_parts_line(out, &r->total.ex, r->total.ex.pairs);
	xp_render_explain_blocked_human(out, &r->ex);
	if (r->c.ex_unexplained)
		fprintf(out, "unexplained: %" PRIu64 " pairs (no thread slot, or deeper than %u)\n",
			(uint64_t)r->c.ex_unexplained, XP_EX_MAX_DEPTH);
	if (r->ex_missed_in)
		fprintf(out,
			"repaired: %" PRIu64 " switch-ins no tracepoint reported (dated by the kernel's own arrival time)\n",
			r->ex_missed_in);
	xp_render_explain_slowest_human(out, &r->ex, r->armed_at_ns);
}
