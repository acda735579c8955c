/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_source.c - the Agent as a live source (agent_source.h states what
 * each step does).  The socket, its checks and every reply's validation
 * are agent_client.c's; the records -> events mapping decode_agent.c's.
 * This file only sequences them for one measurement and keeps the
 * counters the loop reads.
 *
 * Invariant: the capture the decoder appends to is the measurement's one
 * capture (live_source.h), so the Agent's events and the eBPF source's
 * merge by timestamp after the loop, and c->count always includes every
 * Agent event decoded so far (nothing is staged here).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/monotonic.h"
#include "../capture/decode_agent.h"
#include "../capture/record_events.h"
#include "agent_client.h"
#include "agent_source.h"

struct agent_source {
	struct xp_live_source s; /* first: the generic part */
	struct xp_agent_source_opts o;
	struct xp_capture *c;
	struct xp_agent_conn conn;
	struct xprobe_agent_req arm;
	struct xp_capture_agent_dec dec;
	bool dec_ready;
	bool gone; /* the target exited under us */
	bool nvtx; /* an endpoint is an NVTX range */
	uint64_t kept; /* events the decoder added to the capture */
	uint64_t period_ns;
	uint64_t last_ns;
};

static struct agent_source *of(struct xp_live_source *s)
{
	return (struct agent_source *)s;
}

/* The target went away: the loop's pidfd says so, this is no error. */
static bool target_gone(struct agent_source *a)
{
	struct xp_error verr = { 0 };
	bool gone = xp_target_verify(a->o.target, &verr) != 0;

	xp_error_clear(&verr);
	if (gone)
		a->gone = true;
	return gone;
}

/* Counters from the decoder; end records among events [from, c->count). */
static void sync_stats(struct agent_source *a, size_t from)
{
	struct xp_live_source_stats *st = &a->s.st;
	const struct xp_capture_agent_stats *d = &a->dec.st;
	size_t i;

	if (a->o.end_sel >= 0) {
		uint8_t type = a->o.sels[a->o.end_sel]->event_type;

		for (i = from; i < a->c->count; i++)
			st->end_records += a->c->events[i].event_type == type;
	}
	st->capacity = d->capacity;
	st->observed = d->observed;
	st->dropped = d->dropped;
	st->first_drop_ts = 0; /* the Agent does not date its losses */
	st->unknown = d->unknown + d->unknown_types;
	if (d->state == XPROBE_AGENT_LIMIT_REACHED ||
	    d->stop_reason == XPROBE_AGENT_STOP_RECORD_LIMIT)
		st->full = true;
}

/*
 * The records of one SNAPSHOT or STOP (@op): 0 (events added), or
 * negative with @err.  The merged capture's bound makes the source full.
 */
static int take(struct agent_source *a, uint32_t op, struct xp_error *err)
{
	struct xprobe_agent_reply rep;
	struct xp_error lerr = { 0 };
	size_t before = a->c->count;
	int rc;

	rc = op == XPROBE_AGENT_OP_STOP ? xp_agent_stop(&a->conn, &a->dec, &rep, &lerr) :
					  xp_agent_snapshot(&a->conn, &a->dec, &rep, &lerr);
	a->kept += a->c->count - before;
	if (rc == -XPROBE_E_EVENT_RATE_TOO_HIGH) {
		/* the merged capture is full: the loop ends it as FULL */
		a->s.st.full = true;
		a->s.st.beyond = a->dec.map->observed - a->kept;
		rc = 0;
	} else if (rc && target_gone(a)) {
		rc = 0;
	} else if (rc) {
		xp_error_move(err, &lerr);
	}
	xp_error_clear(&lerr);
	sync_stats(a, before);
	return rc;
}

static int agent_prepare(struct xp_live_source *s, struct xp_capture *c, struct xp_error *err)
{
	struct agent_source *a = of(s);
	const struct xp_target *t = a->o.target;
	int rc;

	a->c = c;
	rc = a->o.socket_path ?
		     xp_agent_connect_path(t, a->o.socket_path, a->o.timeout_ms, &a->conn, err) :
		     xp_agent_connect(t, a->o.timeout_ms, &a->conn, err);
	if (rc)
		return rc;
	if (a->nvtx) {
		rc = xp_agent_require_nvtx(&a->conn, a->o.agent_path, err);
		if (rc)
			return rc;
	}
	rc = xp_agent_arm_build(a->o.sels, a->o.nsels, XPROBE_AGENT_MODE_EXACT, a->o.max_events,
				&a->arm, err);
	if (rc)
		return rc;
	rc = xp_capture_agent_dec_init(&a->dec, c, a->conn.ns_pid, t->start_time);
	if (rc)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	a->dec_ready = true;
	return 0;
}

static int agent_arm(struct xp_live_source *s, struct xp_error *err)
{
	struct agent_source *a = of(s);
	struct xprobe_agent_reply rep;
	int rc;

	rc = xp_agent_arm(&a->conn, &a->arm, &rep, err);
	if (rc)
		return rc;
	rc = xp_capture_agent_dec_reply(&a->dec, &rep, err);
	if (rc)
		return rc;
	a->last_ns = xpc_mono_ns();
	sync_stats(a, a->c->count);
	return 0;
}

static int agent_poll(struct xp_live_source *s, uint64_t now, struct xp_error *err)
{
	struct agent_source *a = of(s);
	size_t before = a->c->count;
	int rc;

	if (a->gone || a->s.st.full || now - a->last_ns < a->period_ns)
		return 0;
	a->last_ns = now;
	rc = take(a, XPROBE_AGENT_OP_SNAPSHOT, err);
	if (rc)
		return rc;
	return a->c->count > before ? (int)(a->c->count - before) : 0;
}

static int agent_flush(struct xp_live_source *s, struct xp_error *err)
{
	(void)s;
	(void)err;
	return 0; /* nothing is staged */
}

static int agent_stop(struct xp_live_source *s, bool collected, struct xp_error *err)
{
	struct agent_source *a = of(s);
	struct xp_error lerr = { 0 };
	bool injected = a->conn.hello.features & XPROBE_AGENT_F_INJECTED;
	int rc = 0;

	if (a->conn.fd < 0 || a->gone)
		goto out;
	if (collected && a->conn.armed && a->dec_ready)
		rc = take(a, XPROBE_AGENT_OP_STOP, err);
	/* an injected Agent removes its socket at CLOSE; an unwanted capture
	 * is disarmed now rather than when the Agent sees the socket close */
	if (!a->gone && (injected || a->conn.armed) && xp_agent_close(&a->conn, NULL, &lerr) &&
	    !rc && !target_gone(a)) {
		xp_error_move(err, &lerr);
		rc = -err->code;
	}
out:
	xp_error_clear(&lerr);
	xp_agent_disconnect(&a->conn);
	return rc;
}

static void agent_destroy(struct xp_live_source *s)
{
	struct agent_source *a = of(s);

	xp_agent_disconnect(&a->conn);
	if (a->dec_ready)
		xp_capture_agent_dec_free(&a->dec);
	free(a);
}

static const struct xp_live_source_ops agent_ops = {
	.prepare = agent_prepare,
	.arm = agent_arm,
	.poll = agent_poll,
	.flush = agent_flush,
	.stop = agent_stop,
	.destroy = agent_destroy,
};

int xp_agent_source_new(const struct xp_agent_source_opts *o, struct xp_live_source **out,
			struct xp_error *err)
{
	struct agent_source *a;
	size_t i;

	*out = NULL;
	if (!o->nsels || o->nsels > 2 || o->end_sel >= (int)o->nsels)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "Agent source: %zu endpoints",
				    o->nsels);
	a = calloc(1, sizeof(*a));
	if (!a)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	a->s.ops = &agent_ops;
	a->s.kind = XP_LIVE_SRC_AGENT;
	a->s.name = "agent";
	a->o = *o;
	a->conn.fd = -1;
	a->period_ns =
		(uint64_t)(o->snapshot_ms ? o->snapshot_ms : XP_AGENT_SNAPSHOT_MS) * 1000000ull;
	for (i = 0; i < o->nsels; i++)
		a->nvtx |= o->sels[i]->kind == XP_SEL_NVTX;
	a->s.st.capacity = o->max_events;
	*out = &a->s;
	return 0;
}
