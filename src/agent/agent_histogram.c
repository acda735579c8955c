/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_histogram.c - one HISTOGRAM capture of the Agent
 * (agent_histogram.h says what and why).  Sequencing and arithmetic only:
 * the socket is agent_client.c's, the histograms' checks
 * decode_agent_hist.c's, the summary (percentiles, identities, warnings)
 * latency_histogram_summary.c's.
 *
 * Invariants: every path that connected disconnects, and every path that
 * armed ends the capture (STOP, or CLOSE on an error path; a connection
 * that is gone is disarmed by the Agent within 100 ms).  An interval is
 * the difference of two cumulative reads of the same numbered histograms
 * (the Agent never renumbers them), so no pair is lost or counted twice
 * between intervals.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/cancel.h"
#include "../../common/monotonic.h"
#include "../capture/decode_agent_hist.h"
#include "agent_client.h"
#include "agent_histogram.h"

#define SLICE_NS 10000000ull

uint32_t xp_agent_hist_by(int group_by)
{
	switch (group_by) {
	case XP_LH_BY_THREAD:
		return XPROBE_AGENT_BY_THREAD;
	case XP_LH_BY_NAME:
		return XPROBE_AGENT_BY_NAME;
	case XP_LH_BY_STREAM:
		return XPROBE_AGENT_BY_STREAM;
	case XP_LH_BY_DEVICE:
		return XPROBE_AGENT_BY_DEVICE;
	default:
		return XPROBE_AGENT_BY_NONE;
	}
}

static void dist_of(struct xp_inv_lh_dist *d, const struct xprobe_agent_hist *x)
{
	memset(d, 0, sizeof(*d));
	if (!x)
		return;
	d->count = x->count;
	d->sum_ns = x->sum_ns;
	d->min_ns = x->min_ns;
	d->max_ns = x->max_ns;
	memcpy(d->buckets, x->buckets, sizeof(d->buckets));
}

static void group_key(struct xp_inv_lh_group *g, const struct xprobe_agent_hist *x, bool named)
{
	g->key = x->key;
	g->named = named;
	g->name_complete = named && (x->flags & XPROBE_AGENT_HIST_F_NAME_COMPLETE);
	memcpy(g->name, x->name, x->name_len); /* <= 127, checked */
	g->name[x->name_len] = '\0';
}

static void counters_of(struct xp_lh_counters *c, const struct xprobe_agent_hist *t)
{
	memset(c, 0, sizeof(*c));
	c->inflight_overflow = t->counters[XPROBE_AGENT_HC_INFLIGHT_OVERFLOW];
	c->depth_overflow = t->counters[XPROBE_AGENT_HC_DEPTH_OVERFLOW];
	c->group_overflow = t->counters[XPROBE_AGENT_HC_GROUP_OVERFLOW];
	c->superseded = t->counters[XPROBE_AGENT_HC_SUPERSEDED];
}

int xp_agent_hist_fill(struct xp_inv_lh_result *r, const struct xprobe_agent_hist *h, size_t n)
{
	static const struct xprobe_agent_hist none = { .flags = XPROBE_AGENT_HIST_F_TOTAL };
	const struct xprobe_agent_hist *t = n ? &h[0] : &none;

	free(r->groups);
	r->groups = NULL;
	r->ngroups = 0;
	dist_of(&r->total, t);
	counters_of(&r->c, t);
	r->open_at_end = t->counters[XPROBE_AGENT_HC_OPEN];
	r->inflight_occupied = t->counters[XPROBE_AGENT_HC_STACKS];
	if (n > 1) {
		r->groups = calloc(n - 1, sizeof(*r->groups));
		if (!r->groups)
			return -ENOMEM;
		for (size_t i = 1; i < n; i++) {
			group_key(&r->groups[i - 1], &h[i], r->group_by == XP_LH_BY_NAME);
			dist_of(&r->groups[i - 1].h, &h[i]);
		}
		r->ngroups = n - 1;
	}
	xp_inv_lh_result_finish(r);
	return 0;
}

static int interval_cmp(const void *x, const void *y)
{
	const struct xp_inv_lh_group *a = x, *b = y;

	if (a->h.count != b->h.count)
		return a->h.count > b->h.count ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* The state of the reads. */
struct reads {
	const struct xp_agent_hist_opts *o;
	struct xp_agent_conn *conn;
	struct xp_capture_hist_dec dec;
	struct xprobe_agent_hist *prev; /* the last interval's read */
	size_t nprev;
	uint64_t prev_ns, index;
	struct xp_inv_lh_result cur; /* the cumulative result of the last read */
};

/* What the interval from the last read to this one (@now) added. */
static int interval(struct reads *s, uint64_t now, struct xp_error *err)
{
	const struct xp_agent_hist_opts *o = s->o;
	const struct xprobe_agent_hist *h = s->dec.h;
	struct xp_inv_lh_interval iv;
	struct xp_inv_lh_dist a, b;
	struct xp_lh_counters cn, cb;
	size_t n = s->dec.rx.n;
	int rc;

	memset(&iv, 0, sizeof(iv));
	iv.index = s->index++;
	iv.start_ns = s->prev_ns;
	iv.end_ns = now;
	dist_of(&a, n ? &h[0] : NULL);
	dist_of(&b, s->nprev ? &s->prev[0] : NULL);
	xp_inv_lh_dist_delta(&iv.total, &a, &b);
	if (n)
		counters_of(&cn, &h[0]);
	else
		memset(&cn, 0, sizeof(cn));
	if (s->nprev)
		counters_of(&cb, &s->prev[0]);
	else
		memset(&cb, 0, sizeof(cb));
	iv.c.inflight_overflow = cn.inflight_overflow - cb.inflight_overflow;
	iv.c.depth_overflow = cn.depth_overflow - cb.depth_overflow;
	iv.c.group_overflow = cn.group_overflow - cb.group_overflow;
	iv.c.superseded = cn.superseded - cb.superseded;
	if (n > 1) {
		iv.groups = calloc(n - 1, sizeof(*iv.groups));
		if (!iv.groups)
			return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	}
	for (size_t i = 1; i < n; i++) {
		struct xp_inv_lh_group *g = &iv.groups[iv.ngroups];

		dist_of(&a, &h[i]);
		dist_of(&b, i < s->nprev ? &s->prev[i] : NULL);
		xp_inv_lh_dist_delta(&g->h, &a, &b);
		if (!g->h.count)
			continue;
		group_key(g, &h[i], o->group_by == XP_LH_BY_NAME);
		iv.ngroups++;
	}
	if (iv.ngroups > 1)
		qsort(iv.groups, iv.ngroups, sizeof(*iv.groups), interval_cmp);
	iv.cumulative = &s->cur;
	rc = o->on_interval(o->interval_ctx, &iv, err);
	free(iv.groups);
	return rc;
}

/* One SNAPSHOT; with intervals, the interval it ends. */
static int snapshot(struct reads *s, struct xp_error *err)
{
	uint64_t now;
	void *p;
	int rc;

	rc = xp_agent_read_hist(s->conn, XPROBE_AGENT_OP_SNAPSHOT, &s->dec, NULL, err);
	if (rc)
		return rc;
	now = xpc_mono_ns();
	if (!s->o->interval_ns || !s->o->on_interval)
		return 0;
	s->cur.window_ns = now - s->cur.armed_at_ns;
	if (xp_agent_hist_fill(&s->cur, s->dec.h, s->dec.rx.n))
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	rc = interval(s, now, err);
	if (rc)
		return rc;
	p = realloc(s->prev, (s->dec.rx.n ? s->dec.rx.n : 1) * sizeof(*s->prev));
	if (!p)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	s->prev = p;
	memcpy(s->prev, s->dec.h, s->dec.rx.n * sizeof(*s->prev));
	s->nprev = s->dec.rx.n;
	s->prev_ns = now;
	return 0;
}

static bool target_gone(const struct xp_target *t)
{
	struct xp_error verr = { 0 };
	bool gone = xp_target_verify(t, &verr) != 0;

	xp_error_clear(&verr);
	return gone;
}

/* The window: 0 with @r->stop set, or the error. */
static int window(struct reads *s, struct xp_inv_lh_result *r, struct xp_error *err)
{
	const struct xp_agent_hist_opts *o = s->o;
	uint64_t armed = r->armed_at_ns,
		 period = o->interval_ns ? o->interval_ns : XP_AGENT_HIST_READ_NS;
	uint64_t end = o->duration_ms ? armed + o->duration_ms * 1000000ull : 0;
	uint64_t next = armed + period;
	int rc;

	for (;;) {
		uint64_t now = xpc_mono_ns(), wake;
		struct timespec ts;

		if ((o->stop && *o->stop) || xpc_cancel_signo()) {
			r->stop = XP_LH_STOP_CANCELLED;
			return 0;
		}
		if (end && now >= end) {
			r->stop = XP_LH_STOP_DURATION;
			return 0;
		}
		if (o->deadline_ns && now >= o->deadline_ns) {
			r->stop = XP_LH_STOP_TIMEOUT;
			return 0;
		}
		if (target_gone(o->target)) {
			r->stop = XP_LH_STOP_TARGET_EXITED;
			return 0;
		}
		if (now >= next) {
			rc = snapshot(s, err);
			if (rc) {
				if (!target_gone(o->target))
					return rc;
				xp_error_clear(err);
				r->stop = XP_LH_STOP_TARGET_EXITED;
				return 0;
			}
			next += period;
			if (next <= now) /* a slow read: skip, never burst */
				next = now + period;
			continue;
		}
		if (o->progress)
			o->progress(o->progress_ctx, now - armed);
		wake = next;
		if (end && end < wake)
			wake = end;
		if (o->deadline_ns && o->deadline_ns < wake)
			wake = o->deadline_ns;
		wake = wake - now < SLICE_NS ? wake - now : SLICE_NS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)wake;
		nanosleep(&ts, NULL);
	}
}

int xp_agent_hist_collect(const struct xp_agent_hist_opts *o, struct xp_inv_lh_result *r,
			  uint32_t *features, struct xp_error *err)
{
	struct xp_agent_conn conn = { .fd = -1 };
	struct xprobe_agent_reply rep;
	struct xp_error lerr = { 0 };
	struct reads s;
	uint64_t t0 = xpc_mono_ns(), stop_ns;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	*features = 0;
	if (o->arm->op != XPROBE_AGENT_OP_ARM || o->arm->mode != XPROBE_AGENT_MODE_HISTOGRAM)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "an in-target histogram needs a HISTOGRAM ARM request");
	s.o = o;
	s.conn = &conn;
	r->group_by = o->group_by;
	r->agent_pairing = o->pairing;
	r->inflight_capacity = o->arm->offset;
	r->group_capacity = o->group_by == XP_LH_BY_NONE ? 0 : o->arm->capacity;
	r->ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	rc = o->socket_path ?
		     xp_agent_connect_path(o->target, o->socket_path, o->timeout_ms, &conn, err) :
		     xp_agent_connect(o->target, o->timeout_ms, &conn, err);
	if (rc)
		return rc;
	*features = conn.hello.features;
	xp_capture_hist_dec_init(&s.dec, conn.ns_pid, o->target->start_time);
	rc = xp_agent_arm(&conn, o->arm, &rep, err);
	if (rc)
		goto out;
	r->armed_at_ns = xpc_mono_ns();
	r->setup_ns = r->armed_at_ns - t0;
	s.cur = *r;
	s.cur.groups = NULL;
	s.prev_ns = r->armed_at_ns;
	rc = xp_capture_hist_dec_reply(&s.dec, &rep, err);
	if (rc)
		goto out;
	rc = window(&s, r, err);
	if (rc)
		goto out;
	stop_ns = xpc_mono_ns();
	r->window_ns = stop_ns - r->armed_at_ns;
	if (r->stop != XP_LH_STOP_TARGET_EXITED) {
		rc = xp_agent_read_hist(&conn, XPROBE_AGENT_OP_STOP, &s.dec, NULL, err);
		if (rc && target_gone(o->target)) {
			xp_error_clear(err);
			r->stop = XP_LH_STOP_TARGET_EXITED;
			rc = 0;
		}
		if (rc)
			goto out;
	}
	if (xp_agent_hist_fill(r, s.dec.h, s.dec.rx.n))
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	r->agent_dropped = s.dec.rx.st.dropped;
out:
	/* an injected Agent removes its socket at CLOSE; a capture an error
	 * left armed is ended now rather than when the Agent sees the close */
	if (conn.fd >= 0 && !target_gone(o->target) &&
	    ((*features & XPROBE_AGENT_F_INJECTED) || conn.armed) &&
	    xp_agent_close(&conn, NULL, &lerr) && !rc) {
		xp_error_move(err, &lerr);
		rc = -err->code;
	}
	xp_error_clear(&lerr);
	xp_agent_disconnect(&conn);
	xp_capture_hist_dec_free(&s.dec);
	free(s.prev);
	free(s.cur.groups);
	if (rc)
		xp_inv_lh_result_free(r);
	return rc;
}
