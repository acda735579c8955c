/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_aggregate.c - one AGGREGATE capture of the Agent (agent_aggregate.h
 * says what and why).  Sequencing only: the socket is agent_client.c's,
 * the groups decode_agent_agg.c's.
 *
 * Invariant: every path that connected disconnects, and every path that
 * armed ends the capture (STOP, or CLOSE on an error path; a connection
 * that is gone is disarmed by the Agent within 100 ms).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/cancel.h"
#include "../../common/monotonic.h"
#include "agent_aggregate.h"
#include "agent_client.h"
#include "../live/live_source.h"
#include "../model/event.h"
#include "../capture/record_events.h"
#include "../selector/selector.h"

#define SLICE_NS 10000000ull

/* The target went away (not an error of the socket's). */
static bool target_gone(const struct xp_target *t)
{
	struct xp_error verr = { 0 };
	bool gone = xp_target_verify(t, &verr) != 0;

	xp_error_clear(&verr);
	return gone;
}

static int target_exited(const struct xp_target *t, struct xp_error *err)
{
	xp_error_clear(err);
	xp_target_detail(err, t);
	xp_error_hint(err, "the target exited before the aggregate window ended; measure a "
			   "running process");
	return xp_error_set(err, XPROBE_E_TARGET_EXITED, true,
			    "target process %u exited during the aggregate window", t->pid);
}

/* Sleep out the window; 0 (*stopped: @o->stop ended it) or the error. */
static int wait_window(const struct xp_agent_agg_opts *o, uint64_t armed_ns, uint64_t end_ns,
		       bool *stopped, struct xp_error *err)
{
	for (;;) {
		uint64_t now = xpc_mono_ns(), left;
		struct timespec ts;

		if ((o->stop && *o->stop) || xpc_cancel_signo()) {
			*stopped = true;
			return 0;
		}
		if (now >= end_ns)
			return 0;
		if (target_gone(o->target))
			return target_exited(o->target, err);
		if (o->progress)
			o->progress(o->progress_ctx, now - armed_ns, 0);
		left = end_ns - now < SLICE_NS ? end_ns - now : SLICE_NS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left;
		nanosleep(&ts, NULL);
	}
}

int xp_agent_aggregate_collect(const struct xp_agent_agg_opts *o, struct xp_agent_agg_result *res,
			       struct xp_error *err)
{
	struct xp_agent_conn conn = { .fd = -1 };
	struct xprobe_agent_reply rep;
	struct xp_error lerr = { 0 };
	uint64_t stop_ns;
	int rc;

	memset(res, 0, sizeof(*res));
	if (o->arm->op != XPROBE_AGENT_OP_ARM || o->arm->mode != XPROBE_AGENT_MODE_AGGREGATE)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "an aggregate capture needs an AGGREGATE ARM request");
	rc = o->socket_path ?
		     xp_agent_connect_path(o->target, o->socket_path, o->timeout_ms, &conn, err) :
		     xp_agent_connect(o->target, o->timeout_ms, &conn, err);
	if (rc)
		return rc;
	res->features = conn.hello.features;
	xp_capture_agg_dec_init(&res->dec, conn.ns_pid, o->target->start_time);
	rc = xp_agent_arm(&conn, o->arm, &rep, err);
	if (rc)
		goto out;
	res->armed_ns = xpc_mono_ns();
	res->cuda_major = rep.cuda_major;
	res->cupti_major = rep.cupti_major;
	rc = xp_capture_agg_dec_reply(&res->dec, &rep, err);
	if (rc)
		goto out;
	rc = wait_window(o, res->armed_ns, res->armed_ns + o->duration_ms * 1000000ull,
			 &res->stopped, err);
	if (rc)
		goto out;
	stop_ns = xpc_mono_ns();
	res->window_ns = stop_ns - res->armed_ns;
	rc = xp_agent_stop_groups(&conn, &res->dec, NULL, err);
	if (rc && target_gone(o->target))
		rc = target_exited(o->target, err);
out:
	/* an injected Agent removes its socket at CLOSE; a capture an error
	 * left armed is ended now rather than when the Agent sees the close */
	if (conn.fd >= 0 && !target_gone(o->target) &&
	    ((res->features & XPROBE_AGENT_F_INJECTED) || conn.armed) &&
	    xp_agent_close(&conn, NULL, &lerr) && !rc) {
		xp_error_move(err, &lerr);
		rc = -err->code;
	}
	xp_error_clear(&lerr);
	xp_agent_disconnect(&conn);
	if (rc)
		xp_agent_aggregate_free(res);
	return rc;
}

void xp_agent_aggregate_free(struct xp_agent_agg_result *res)
{
	xp_capture_agg_dec_free(&res->dec);
}

const char *xp_agent_aggregate_activity(uint32_t kind)
{
	return kind == XPROBE_AGENT_KIND_KERNEL ? "kernel" :
	       kind == XPROBE_AGENT_KIND_MEMCPY ? "memcpy" :
						  "memset";
}

/* The reference's copy order: another kind ("unknown") before HtoD ... */
static int group_cmp(const void *pa, const void *pb)
{
	const struct xp_capture_agg_group *a = pa, *b = pb;
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	c = memcmp(a->name, b->name, n);
	if (c)
		return c;
	if (a->name_len != b->name_len)
		return a->name_len < b->name_len ? -1 : 1;
	if (a->name_complete != b->name_complete)
		return a->name_complete ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->memcpy_kind != b->memcpy_kind)
		return a->memcpy_kind < b->memcpy_kind ? -1 : 1;
	return 0;
}

void xp_agent_aggregate_sort(struct xp_agent_agg_result *res)
{
	if (res->dec.rx.n > 1)
		qsort(res->dec.groups, res->dec.rx.n, sizeof(*res->dec.groups), group_cmp);
}

const char *xp_agent_aggregate_hint(const struct xp_capture_agg_group *g, bool end, char *buf,
				    size_t size)
{
	const char *b = end ? "end" : "start";
	char *esc = NULL;
	int n;

	switch (g->kind) {
	case XPROBE_AGENT_KIND_KERNEL:
		if (!g->name_len) {
			n = snprintf(buf, size, "cuda:kernel_%s", b);
			break;
		}
		esc = xp_regex_escape(g->name);
		if (!esc)
			return NULL;
		n = snprintf(buf, size, "cuda:kernel_%s:name~^%s%s", b, esc,
			     g->name_complete ? "$" : "");
		free(esc);
		break;
	case XPROBE_AGENT_KIND_MEMCPY:
		if (g->memcpy_kind == XPROBE_AGENT_MEMCPY_ANY)
			n = snprintf(buf, size, "cuda:memcpy_%s", b);
		else
			n = snprintf(buf, size, "cuda:memcpy_%s:kind=%s", b,
				     xp_memcpy_kind_name(xp_rec_memcpy_kind(g->memcpy_kind)));
		break;
	default:
		n = snprintf(buf, size, "cuda:memset_%s", b);
		break;
	}
	return n < 0 || (size_t)n >= size ? NULL : buf;
}
