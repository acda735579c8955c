/* SPDX-License-Identifier: Apache-2.0 */
/*
 * explain_pairs.c - evidence pairs x scheduler timeline (explain_pairs.h).
 *
 * The timeline is indexed once by (thread, time); each pair then walks
 * only its own thread's records inside its window: O(records + pairs x
 * records per pair) after an O(records log records) sort.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "explain_pairs.h"

const char *xp_ex_pair_status_name(enum xp_ex_pair_status s)
{
	switch (s) {
	case XP_EXP_EXPLAINED:
		return "explained";
	case XP_EXP_OTHER_THREAD:
		return "threads_differ";
	case XP_EXP_OTHER_CLOCK:
		return "not_host_clock";
	case XP_EXP_GAP:
		return "scheduler_records_lost";
	}
	return "explained";
}

/* The timeline by (tid, time): record indices. */
struct tl_index {
	const struct xp_sched_timeline *tl;
	uint32_t *idx;
	size_t n;
};

static int by_tid_then_time(const void *a, const void *b, void *ctx)
{
	const struct xp_sched_timeline *tl = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint32_t ti = tl->rec[i].tid, tj = tl->rec[j].tid;

	if (ti != tj)
		return ti < tj ? -1 : 1;
	return i < j ? -1 : i > j; /* the timeline is in time order */
}

static int index_build(struct tl_index *ix, const struct xp_sched_timeline *tl)
{
	size_t i;

	ix->tl = tl;
	ix->n = tl->n;
	ix->idx = malloc((tl->n ? tl->n : 1) * sizeof(*ix->idx));
	if (!ix->idx)
		return -ENOMEM;
	for (i = 0; i < tl->n; i++)
		ix->idx[i] = (uint32_t)i;
	qsort_r(ix->idx, ix->n, sizeof(*ix->idx), by_tid_then_time, (void *)tl);
	return 0;
}

/* The first position of @tid's records after @ts (or where they end). */
static size_t index_after(const struct tl_index *ix, uint32_t tid, uint64_t ts)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct xp_sched_rec *r = &ix->tl->rec[ix->idx[mid]];

		if (r->tid < tid || (r->tid == tid && r->ts_ns <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Blocked time per (syscall, state), grown as met. */
struct by_syscall {
	struct xp_inv_ex_blocked *v;
	size_t n, cap;
};

static int by_add(struct by_syscall *b, int32_t nr, uint32_t state, uint64_t ns)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		if (b->v[i].nr == nr && b->v[i].state == state) {
			b->v[i].ns += ns;
			return 0;
		}
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		struct xp_inv_ex_blocked *v = realloc(b->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n].nr = nr;
	b->v[b->n].state = state;
	b->v[b->n].ns = ns;
	b->n++;
	return 0;
}

/* One pair's walk: its thread's records strictly inside (start, end). */
struct walk {
	struct xp_ex_pair *p;
	struct xp_ex_block longest; /* ns 0: none */
	struct by_syscall *by;      /* NULL: do not add */
	uint64_t missed_in;         /* switch-ins no record showed, repaired */
	int rc;
};

static void block_end(struct walk *w, const struct xp_ex_block *cur, uint64_t from, uint64_t to)
{
	struct xp_ex_block b = *cur;

	b.ns = to > from ? to - from : 0;
	if (b.ns > w->longest.ns)
		w->longest = b;
	if (w->by && b.ns && by_add(w->by, b.nr, b.state, b.ns))
		w->rc = -ENOMEM;
}

/* The part a waiting or blocked @state adds to. */
static int part_of(uint32_t state)
{
	switch (state) {
	case XP_EX_ST_RUNQ:
		return XP_EX_RUNQ;
	case XP_EX_ST_BLOCKED_D:
		return XP_EX_BLOCKED_D;
	case XP_EX_ST_BLOCKED_S:
		return XP_EX_BLOCKED_S;
	default:
		return XP_EX_ON_CPU;
	}
}

/* A thread's state inside one pair's window, as the walk moves it. */
struct cursor {
	uint32_t state;
	uint64_t t;          /* the last change */
	uint64_t block_from; /* when the current block began */
	struct xp_ex_block cur;
};

/* The state ends at @at (>= c->t): its time into its part, a block closed. */
static void leave(struct walk *w, struct cursor *c, uint64_t at)
{
	w->p->comp[part_of(c->state)] += at - c->t;
	if (c->state == XP_EX_ST_BLOCKED_S || c->state == XP_EX_ST_BLOCKED_D)
		block_end(w, &c->cur, c->block_from, at);
	c->t = at;
}

/*
 * The thread is seen running at @ts (it leaves its CPU then) while the
 * walk has it waiting or blocked: its switch in left no record.  The
 * kernel's own arrival time (@age before @ts) ends the stale state; unknown
 * or out of the window, @ts does.
 */
static void repair(struct walk *w, struct cursor *c, uint64_t ts, uint64_t age)
{
	uint64_t at = age && age <= ts - c->t ? ts - age : ts;

	leave(w, c, at);
	c->state = XP_EX_ST_RUNNING;
	w->missed_in++;
}

static void walk_pair(const struct tl_index *ix, uint32_t tid, uint64_t start, uint64_t end,
		      struct walk *w)
{
	struct cursor c = { .state = XP_EX_ST_RUNNING, .t = start };
	size_t k;

	for (k = index_after(ix, tid, start); k < ix->n; k++) {
		const struct xp_sched_rec *r = &ix->tl->rec[ix->idx[k]];
		bool blocked = c.state == XP_EX_ST_BLOCKED_S || c.state == XP_EX_ST_BLOCKED_D;

		if (r->tid != tid || r->ts_ns >= end)
			break;
		switch (r->kind) {
		case XP_SCHED_OUT:
			if (c.state != XP_EX_ST_RUNNING)
				repair(w, &c, r->ts_ns, r->arrival_age_ns);
			leave(w, &c, r->ts_ns);
			if (r->state == XP_SCHED_RUNNABLE) {
				c.state = XP_EX_ST_RUNQ;
				w->p->nivcsw++;
				continue;
			}
			c.state = r->state == XP_SCHED_BLOCKED_D ? XP_EX_ST_BLOCKED_D :
								   XP_EX_ST_BLOCKED_S;
			w->p->nvcsw++;
			memset(&c.cur, 0, sizeof(c.cur));
			c.cur.nr = r->syscall;
			c.cur.state = c.state;
			c.cur.ustack = r->ustack;
			c.cur.kstack = r->kstack;
			c.cur.waker_ustack = -1;
			c.cur.waker_kstack = -1;
			c.block_from = r->ts_ns;
			continue;
		case XP_SCHED_WAKEUP:
			if (!blocked)
				continue; /* woken while running or runnable: no change */
			c.cur.waker_pid = r->waker_pid;
			c.cur.waker_tid = r->waker_tid;
			memcpy(c.cur.waker_comm, r->comm, sizeof(c.cur.waker_comm));
			c.cur.waker_ustack = r->ustack;
			c.cur.waker_kstack = r->kstack;
			leave(w, &c, r->ts_ns);
			c.state = XP_EX_ST_RUNQ;
			continue;
		case XP_SCHED_IN:
			if (c.state == XP_EX_ST_RUNNING)
				continue;
			leave(w, &c, r->ts_ns); /* blocked, no wakeup seen: the time was blocked */
			c.state = XP_EX_ST_RUNNING;
			continue;
		case XP_SCHED_MIGRATE:
			w->p->nmigr++;
			continue;
		}
	}
	/* the thread hit the end probe, so it runs there: a state other than
	 * running means its switch in left no record; the thread's next
	 * switch out after the window dates it, when it has one */
	if (c.state != XP_EX_ST_RUNNING) {
		for (; k < ix->n; k++) {
			const struct xp_sched_rec *r = &ix->tl->rec[ix->idx[k]];

			if (r->tid != tid)
				break;
			if (r->kind != XP_SCHED_OUT)
				continue;
			if (r->arrival_age_ns && r->arrival_age_ns <= r->ts_ns - c.t &&
			    r->ts_ns - r->arrival_age_ns < end) {
				leave(w, &c, r->ts_ns - r->arrival_age_ns);
				c.state = XP_EX_ST_RUNNING;
				w->missed_in++;
			}
			break;
		}
	}
	leave(w, &c, end);
}

static bool host_clock(const struct xp_event *e)
{
	return e->clock_domain == XP_CLOCK_HOST_MONOTONIC;
}

static int by_latency_desc(const void *a, const void *b, void *ctx)
{
	const struct xp_correlation *corr = ctx;
	uint64_t x = corr->pairs[*(const uint32_t *)a].latency_ns;
	uint64_t y = corr->pairs[*(const uint32_t *)b].latency_ns;

	if (x != y)
		return x > y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int blocked_desc(const void *a, const void *b)
{
	const struct xp_inv_ex_blocked *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

/* The @top slowest explained pairs, walked again for their longest block. */
static int keep_slowest(struct xp_explained *x, const struct xp_capture *c,
			const struct xp_correlation *corr, const struct tl_index *ix, uint32_t top)
{
	uint32_t *order;
	size_t i, n = 0;

	order = malloc((corr->npairs ? corr->npairs : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < corr->npairs; i++)
		if (x->pairs[i].status == XP_EXP_EXPLAINED)
			order[n++] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), by_latency_desc, (void *)corr);
	if (n > top)
		n = top;
	x->ex.slow = calloc(n ? n : 1, sizeof(*x->ex.slow));
	if (!x->ex.slow) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const struct xp_pair *pr = &corr->pairs[order[i]];
		struct xp_ex_pair again = { 0 };
		struct xp_ex_slow *s = &x->ex.slow[i];
		struct walk w = { .p = &again };
		int k;

		walk_pair(ix, x->pairs[order[i]].tid, c->events[pr->start].timestamp_ns,
			  c->events[pr->end].timestamp_ns, &w);
		s->start_ns = c->events[pr->start].timestamp_ns;
		s->latency_ns = pr->latency_ns;
		for (k = 0; k < XP_EX_NCOMP; k++)
			s->comp[k] = again.comp[k];
		s->nvcsw = again.nvcsw;
		s->nivcsw = again.nivcsw;
		s->nmigr = again.nmigr;
		s->tid = x->pairs[order[i]].tid;
		s->longest = w.longest;
	}
	x->ex.nslow = n;
	free(order);
	return 0;
}

int xp_inv_explain_pairs(const struct xp_capture *c, const struct xp_correlation *corr,
			 const struct xp_sched_timeline *tl, uint32_t top, struct xp_explained *out)
{
	struct by_syscall by = { 0 };
	struct tl_index ix = { 0 };
	size_t i;
	int rc, k;

	memset(out, 0, sizeof(*out));
	out->records = tl->n;
	out->lost = tl->lost;
	out->beyond = tl->beyond;
	out->unknown = tl->unknown;
	out->first_gap_ns = xp_sched_timeline_first_gap(tl);
	out->ex.top = top;
	out->pairs = calloc(corr->npairs ? corr->npairs : 1, sizeof(*out->pairs));
	rc = out->pairs ? index_build(&ix, tl) : -ENOMEM;
	if (rc)
		goto out;
	out->npairs = corr->npairs;
	for (i = 0; i < corr->npairs && !rc; i++) {
		const struct xp_event *s = &c->events[corr->pairs[i].start];
		const struct xp_event *e = &c->events[corr->pairs[i].end];
		struct xp_ex_pair *p = &out->pairs[i];
		struct walk w = { .p = p, .by = &by };

		p->tid = s->tid;
		if (s->tid != e->tid)
			p->status = XP_EXP_OTHER_THREAD;
		else if (!host_clock(s) || !host_clock(e))
			p->status = XP_EXP_OTHER_CLOCK;
		else if (out->first_gap_ns && e->timestamp_ns >= out->first_gap_ns)
			p->status = XP_EXP_GAP;
		if (p->status != XP_EXP_EXPLAINED) {
			out->unexplained[p->status]++;
			continue;
		}
		walk_pair(&ix, s->tid, s->timestamp_ns, e->timestamp_ns, &w);
		rc = w.rc;
		out->missed_in += w.missed_in;
		for (k = 0; k < XP_EX_NCOMP; k++)
			out->total.comp[k] += p->comp[k];
		out->total.nvcsw += p->nvcsw;
		out->total.nivcsw += p->nivcsw;
		out->total.nmigr += p->nmigr;
		out->total.pairs++;
	}
	if (rc)
		goto out;
	if (by.n > 1)
		qsort(by.v, by.n, sizeof(*by.v), blocked_desc);
	out->ex.blocked = by.v;
	out->ex.nblocked = by.n;
	by.v = NULL;
	rc = keep_slowest(out, c, corr, &ix, top);
out:
	free(by.v);
	free(ix.idx);
	if (rc)
		xp_explained_free(out);
	return rc;
}

int xp_inv_explain_pairs_stacks(struct xp_explained *x,
				int (*read)(void *ctx, int32_t id, uint64_t *ip, uint32_t max,
					    uint32_t *n),
				void *ctx, uint32_t pid, uint32_t ns_pid)
{
	uint64_t ip[XP_EX_STACK_DEPTH];
	size_t i;
	int rc = 0;

	for (i = 0; i < x->ex.nslow && !rc; i++) {
		const struct xp_ex_block *b = &x->ex.slow[i].longest;
		struct {
			int32_t id;
			bool kernel;
			uint32_t pid;
		} want[4] = {
			{ b->ustack, false, pid },
			{ b->kstack, true, pid },
			{ b->waker_ustack, false, b->waker_pid },
			{ b->waker_kstack, true, b->waker_pid },
		};
		int k;

		if (!b->ns)
			continue;
		for (k = 0; k < 4 && !rc; k++) {
			uint32_t n = 0;

			if (k >= 2 && !xp_ex_block_woken(b))
				break;
			if (want[k].id < 0 || xp_inv_ex_stack_find(&x->ex, want[k].id) ||
			    read(ctx, want[k].id, ip, XP_EX_STACK_DEPTH, &n))
				continue;
			rc = xp_inv_ex_add_stack(&x->ex, want[k].id, want[k].kernel, want[k].pid, ip,
						 n);
		}
	}
	if (!rc)
		rc = xp_inv_ex_symbolize(&x->ex, pid, ns_pid);
	return rc;
}

void xp_explained_free(struct xp_explained *x)
{
	free(x->pairs);
	xp_inv_ex_result_free(&x->ex);
	memset(x, 0, sizeof(*x));
}
