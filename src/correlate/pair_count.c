/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pair_count.c - the incremental pair counter (pair_count.h): each
 * policy's walk of pairing.c kept as a running state, fed the events a
 * capture gains, replayed in timeline order when one arrives out of it.
 * The keys are pairing.c's own (pairing.h), so both group alike.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pair_count.h"
#include "pairing.h"

enum walk {
	WALK_FIRST_AFTER = 0, /* one counter of open starts */
	WALK_NEAREST,         /* min(starts, ends) */
	WALK_STACK,           /* per (pid, tid): depth */
	WALK_LIFE_TID,        /* per lifecycle key: an open start */
	WALK_LIFE_NVTX,
	WALK_EXACT_KEY,       /* per key: starts, ends, zipped pairs */
	WALK_STREAM,          /* per stream: open starts */
};

enum { SIDE_START = 0, SIDE_END = 1 };

/*
 * One group's state.  open: open starts (stack depth, lifecycle's 0/1,
 * a stream's starts not yet paired).  The exact key keeps its counts and
 * the timestamps of the side that is ahead (q[qhead..qn)), to zip each
 * new k-th event with the other side's k-th.
 */
struct xp_pair_count_group {
	uint64_t open;
	uint32_t ns, ne, good;
	uint32_t qhead, qn, qcap;
	uint64_t *q;
};

int xp_pair_count_init(struct xp_pair_count *pc, struct xp_selector *start,
		       struct xp_selector *end, const struct xp_correlate_opts *opts)
{
	memset(pc, 0, sizeof(*pc));
	if ((unsigned)opts->policy >= XP_POLICY__COUNT ||
	    !(xp_policy_compatible(start, end) & (1u << opts->policy)))
		return -ENOTSUP;
	pc->start = start;
	pc->end = end;
	pc->opts = *opts;
	switch (opts->policy) {
	case XP_POLICY_EXACT:
		switch (xp_exact_kind(start, end)) {
		case XP_EXACT_SYSCALL:
		case XP_EXACT_PYTHON_GC:
			pc->rule = WALK_LIFE_TID;
			break;
		case XP_EXACT_NVTX:
			pc->rule = WALK_LIFE_NVTX;
			break;
		case XP_EXACT_CUPTI_KEY:
			pc->rule = WALK_EXACT_KEY;
			pc->activity_key = xp_selector_is_activity(start) &&
					   xp_selector_is_activity(end);
			break;
		}
		break;
	case XP_POLICY_FIRST_AFTER:
		pc->rule = WALK_FIRST_AFTER;
		break;
	case XP_POLICY_NEAREST:
		pc->rule = WALK_NEAREST;
		break;
	case XP_POLICY_STACK_NESTED:
		pc->rule = WALK_STACK;
		break;
	case XP_POLICY_STREAM_ORDER:
		pc->rule = WALK_STREAM;
		break;
	case XP_POLICY__COUNT:
		return -ENOTSUP;
	}
	return 0;
}

static void groups_reset(struct xp_pair_count *pc)
{
	size_t i;

	for (i = 0; i < pc->map.count; i++)
		free(pc->grp[i].q);
	xp_keymap_free(&pc->map);
}

void xp_pair_count_free(struct xp_pair_count *pc)
{
	groups_reset(pc);
	free(pc->grp);
	pc->grp = NULL;
	pc->grp_cap = 0;
}

/* Forget the walk (the selection starts over from the capture's first event). */
static void walk_reset(struct xp_pair_count *pc)
{
	groups_reset(pc);
	pc->fed = 0;
	pc->stale = false;
	pc->clock_seen = pc->clock_cupti = pc->clock_mixed = false;
	pc->have_t0 = false;
	pc->have_last = false;
	pc->starts = pc->ends = pc->open = pc->pairs = 0;
}

/* The group of @k, created empty when new; NULL on -ENOMEM. */
static struct xp_pair_count_group *group(struct xp_pair_count *pc, const struct xp_key *k)
{
	uint32_t before, g;

	if (!pc->map.slots && xp_keymap_init(&pc->map, 64))
		return NULL;
	if (pc->map.count == pc->map.max && xp_keymap_get(&pc->map, k) == XP_KEYMAP_NONE &&
	    xp_keymap_grow(&pc->map))
		return NULL;
	before = pc->map.count;
	g = xp_keymap_put(&pc->map, k);
	if (g == XP_KEYMAP_NONE)
		return NULL;
	if (g >= pc->grp_cap) {
		size_t cap = pc->grp_cap ? pc->grp_cap * 2 : 64;
		struct xp_pair_count_group *n;

		while (cap <= g)
			cap *= 2;
		n = realloc(pc->grp, cap * sizeof(*n));
		if (!n)
			return NULL;
		pc->grp = n;
		pc->grp_cap = cap;
	}
	if (g == before)
		memset(&pc->grp[g], 0, sizeof(pc->grp[g]));
	return &pc->grp[g];
}

static int q_push(struct xp_pair_count_group *g, uint64_t ts)
{
	if (g->qhead && g->qhead == g->qn)
		g->qhead = g->qn = 0;
	if (g->qn == g->qcap) {
		uint32_t cap = g->qcap ? g->qcap * 2 : 2;
		uint64_t *n;

		if (g->qhead) { /* slide the live part down first */
			memmove(g->q, g->q + g->qhead, (g->qn - g->qhead) * sizeof(*g->q));
			g->qn -= g->qhead;
			g->qhead = 0;
		}
		if (g->qn == g->qcap) {
			n = realloc(g->q, (size_t)cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			g->q = n;
			g->qcap = cap;
		}
	}
	g->q[g->qn++] = ts;
	return 0;
}

/*
 * The exact key: one more start (or end) of a group.  Its k-th event
 * zips with the other side's k-th (in the queue when that side is ahead);
 * the group's pairs count only while both sides have as many.
 */
static int step_exact(struct xp_pair_count *pc, struct xp_pair_count_group *g, int side,
		      uint64_t ts)
{
	uint32_t mine = side == SIDE_START ? g->ns : g->ne;
	uint32_t other = side == SIDE_START ? g->ne : g->ns;

	if (g->ns == g->ne)
		pc->pairs -= g->good;
	if (other > mine) {
		uint64_t o = g->q[g->qhead++];

		if (side == SIDE_START ? o >= ts : ts >= o)
			g->good++;
	} else if (q_push(g, ts)) {
		if (g->ns == g->ne)
			pc->pairs += g->good;
		return -ENOMEM;
	}
	if (side == SIDE_START)
		g->ns++;
	else
		g->ne++;
	if (g->ns == g->ne)
		pc->pairs += g->good;
	return 0;
}

/* One step of the walk: @e is the next selected event of @side. */
static int step(struct xp_pair_count *pc, const struct xp_event *e, int side)
{
	struct xp_pair_count_group *g;
	struct xp_key k = { 0, 0, 0 };
	bool keyed;

	if (side == SIDE_START)
		pc->starts++;
	else
		pc->ends++;
	switch ((enum walk)pc->rule) {
	case WALK_FIRST_AFTER:
		if (side == SIDE_START) {
			pc->open++;
		} else if (pc->open) {
			pc->open--;
			pc->pairs++;
		}
		return 0;
	case WALK_NEAREST:
		pc->pairs = pc->starts < pc->ends ? pc->starts : pc->ends;
		return 0;
	case WALK_STACK:
		k.a = ((uint64_t)e->pid << 32) | e->tid;
		keyed = true;
		break;
	case WALK_LIFE_TID:
		keyed = xp_pair_key_life(e, XP_LIFE_TID, &k);
		break;
	case WALK_LIFE_NVTX:
		keyed = xp_pair_key_life(e, XP_LIFE_NVTX, &k);
		break;
	case WALK_EXACT_KEY:
		keyed = pc->activity_key ? xp_pair_key_activity(e, &k)
					 : xp_pair_key_cupti(e, &k, !pc->no_context);
		break;
	case WALK_STREAM:
		keyed = xp_pair_key_stream(e, &k);
		break;
	default:
		return -EINVAL;
	}
	if (!keyed)
		return 0; /* unmatched on its side */
	if (side == SIDE_END && pc->rule != WALK_EXACT_KEY) {
		/* an end never opens a group: look it up only */
		uint32_t gi = pc->map.slots ? xp_keymap_get(&pc->map, &k) : XP_KEYMAP_NONE;

		if (gi == XP_KEYMAP_NONE || !pc->grp[gi].open)
			return 0;
		pc->grp[gi].open--;
		pc->pairs++;
		return 0;
	}
	g = group(pc, &k);
	if (!g)
		return -ENOMEM;
	if (pc->rule == WALK_EXACT_KEY)
		return step_exact(pc, g, side, e->timestamp_ns);
	if (pc->rule == WALK_LIFE_TID || pc->rule == WALK_LIFE_NVTX)
		g->open = 1; /* a pending start it replaces is ambiguous */
	else
		g->open++;
	return 0;
}

/* The selected side(s) of @e: bit 0 start, bit 1 end. */
static unsigned selected(struct xp_pair_count *pc, const struct xp_capture *c,
			 const struct xp_event *e)
{
	unsigned m = 0;

	if (e->event_type == pc->start->event_type && xp_selector_matches(pc->start, c, e))
		m |= 1u << SIDE_START;
	if (e->event_type == pc->end->event_type && xp_selector_matches(pc->end, c, e))
		m |= 1u << SIDE_END;
	return m;
}

/* The correlator's clock check, one selected event at a time. */
static void clock_of(struct xp_pair_count *pc, const struct xp_event *e)
{
	bool cupti = e->clock_domain == XP_CLOCK_CUPTI;

	if (!pc->clock_seen) {
		pc->clock_seen = true;
		pc->clock_cupti = cupti;
	} else if (cupti != pc->clock_cupti) {
		pc->clock_mixed = true;
	}
}

/*
 * Feed @e (selected as @side) to the walk, or mark the walk stale when it
 * comes before the walk's last step.  Events past the duration window are
 * left out, as the correlator cuts its sides there.
 */
static int feed_one(struct xp_pair_count *pc, const struct xp_event *e, int side)
{
	uint64_t ts = e->timestamp_ns;

	if (pc->stale)
		return 0;
	if (pc->have_last &&
	    (ts < pc->last_ts || (ts == pc->last_ts && side < pc->last_side))) {
		pc->stale = true;
		return 0;
	}
	pc->have_last = true;
	pc->last_ts = ts;
	pc->last_side = side;
	if (!pc->have_t0) {
		uint64_t d = pc->opts.duration_ns;

		pc->have_t0 = true;
		pc->limit = !d ? UINT64_MAX : ts > UINT64_MAX - d ? UINT64_MAX : ts + d;
	}
	if (ts > pc->limit)
		return 0;
	if (pc->rule == WALK_EXACT_KEY && !pc->activity_key && !pc->no_context &&
	    xp_pair_without_context(e)) {
		/* the key drops the context for every event: walk again */
		pc->no_context = true;
		pc->stale = true;
		return 0;
	}
	return step(pc, e, side);
}

/* Take events [pc->fed, upto) of @c in capture order. */
static int feed(struct xp_pair_count *pc, const struct xp_capture *c, size_t upto)
{
	for (; pc->fed < upto; pc->fed++) {
		const struct xp_event *e = &c->events[pc->fed];
		unsigned m = selected(pc, c, e);
		int rc;

		if (!m)
			continue;
		clock_of(pc, e);
		if ((m & 1u) && (rc = feed_one(pc, e, SIDE_START)))
			return rc;
		if ((m & 2u) && (rc = feed_one(pc, e, SIDE_END)))
			return rc;
	}
	return 0;
}

struct tl {
	uint64_t ts;
	uint32_t idx;
	uint32_t side;
};

static int cmp_tl(const void *a, const void *b)
{
	const struct tl *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->side != y->side)
		return x->side < y->side ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Walk all of @c again, in timeline order. */
static int replay(struct xp_pair_count *pc, const struct xp_capture *c)
{
	struct tl *t = NULL;
	size_t n = 0, cap = 0, i;
	int rc = 0;

	walk_reset(pc);
	for (i = 0; i < c->count; i++) {
		const struct xp_event *e = &c->events[i];
		unsigned m = selected(pc, c, e), s;

		if (!m)
			continue;
		clock_of(pc, e);
		for (s = 0; s < 2; s++) {
			if (!(m & (1u << s)))
				continue;
			if (n == cap) {
				struct tl *nt;

				cap = cap ? cap * 2 : 1024;
				nt = realloc(t, cap * sizeof(*t));
				if (!nt) {
					free(t);
					return -ENOMEM;
				}
				t = nt;
			}
			t[n].ts = e->timestamp_ns;
			t[n].idx = (uint32_t)i;
			t[n].side = s;
			n++;
		}
	}
	qsort(t, n, sizeof(*t), cmp_tl);
	if (pc->rule == WALK_EXACT_KEY && !pc->activity_key) {
		/* the correlator decides the key over the window's events */
		uint64_t limit = UINT64_MAX, d = pc->opts.duration_ns;

		if (n && d)
			limit = t[0].ts > UINT64_MAX - d ? UINT64_MAX : t[0].ts + d;
		pc->no_context = false;
		for (i = 0; i < n && t[i].ts <= limit && !pc->no_context; i++)
			pc->no_context = xp_pair_without_context(&c->events[t[i].idx]);
	}
	for (i = 0; i < n && !rc; i++)
		rc = feed_one(pc, &c->events[t[i].idx], (int)t[i].side);
	free(t);
	pc->fed = c->count;
	return rc;
}

int xp_pair_count_update(struct xp_pair_count *pc, const struct xp_capture *c, bool replay_ok)
{
	int rc;

	if (xp_selector_bind(pc->start, c) || xp_selector_bind(pc->end, c))
		return -ENOMEM;
	if (c->count < pc->fed)
		pc->stale = true; /* the capture shrank */
	else if ((rc = feed(pc, c, c->count)))
		return rc;
	if (pc->stale) {
		if (!replay_ok)
			return 0;
		rc = replay(pc, c);
		if (rc)
			return rc;
		if (pc->stale)
			return -EINVAL; /* a timeline out of its own order: a bug */
	}
	return pc->clock_mixed ? -ENOTSUP : 1;
}

uint64_t xp_pair_count_matched(const struct xp_pair_count *pc)
{
	uint64_t s = pc->opts.samples;

	return s && pc->pairs > s ? s : pc->pairs;
}

long xp_pair_count_first_prefix(struct xp_pair_count *pc, const struct xp_capture *c,
				uint64_t want)
{
	size_t i;
	int rc;

	if (pc->rule == WALK_EXACT_KEY)
		return -ENOTSUP;
	walk_reset(pc);
	if (xp_selector_bind(pc->start, c) || xp_selector_bind(pc->end, c))
		return -ENOMEM;
	for (i = 0; i < c->count; i++) {
		rc = feed(pc, c, i + 1);
		if (rc)
			return rc;
		if (pc->stale)
			return -EAGAIN;
		if (pc->clock_mixed)
			return -ENOTSUP;
		if (xp_pair_count_matched(pc) >= want)
			return (long)(i + 1);
	}
	return 0;
}
