/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_aggregate.h - one AGGREGATE capture of the Agent (`measure
 * --aggregate`): connect, ARM a bounded group table over one kernel,
 * memcpy or memset filter, wait out the window, STOP and read every group.
 * No per-activity record leaves the target; what comes back is the group
 * list (src/capture/decode_agent_agg.h) and the capture's counters.
 *
 * Why a path of its own rather than a live source: the exact path's loop
 * (live_source.h) merges per-event streams and correlates; an aggregate
 * capture has neither events nor a correlator, only a window and one
 * final read (the reference reads once, at STOP).
 *
 * The socket, its checks and every reply's validation are
 * agent_client.c's; the group checks decode_agent_agg.c's.  Activation
 * (validate, online injection) happened before: this only talks to the
 * Agent the target serves.
 */
#ifndef XP_COLLECT_AGENT_AGGREGATE_H
#define XP_COLLECT_AGENT_AGGREGATE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "xprobe/agent.h"

#include "../capture/decode_agent_agg.h"
#include "../model/error_record.h"
#include "../process/identity.h"

struct xp_agent_agg_opts {
	const struct xp_target *target;
	const char *socket_path; /* --cupti-socket, or NULL: the target's own */
	const struct xprobe_agent_req *arm; /* mode AGGREGATE (xp_agent_arm_build) */
	uint64_t duration_ms; /* the window, from the ARM reply */
	int timeout_ms; /* each socket wait; <= 0: XP_AGENT_TIMEOUT_MS */
	/* set (by the caller's SIGINT/SIGTERM handler) to end the window
	 * early; may be NULL */
	const volatile sig_atomic_t *stop;
	/* Called from the window's wait (every 10 ms) with the time since the
	 * ARM reply: the command's progress line; NULL: none.  No counts:
	 * the groups stay in the target until STOP. */
	void (*progress)(void *ctx, uint64_t elapsed_ns, uint64_t count);
	void *progress_ctx;
};

struct xp_agent_agg_result {
	struct xp_capture_agg_dec dec; /* the groups and the final counters */
	uint32_t features; /* HELLO's XPROBE_AGENT_F_* */
	uint32_t cuda_major, cupti_major; /* the ARM reply's */
	uint64_t armed_ns; /* CLOCK_MONOTONIC when the ARM reply came */
	uint64_t window_ns; /* ARM reply to STOP request */
	bool stopped; /* a stop request ended the window early */
};

/*
 * Run the capture: connect and HELLO, ARM, wait @duration_ms (in 10 ms
 * slices that test @o->stop and the target), STOP with every group, CLOSE
 * an injected Agent (it removes its socket), disconnect.  The caller
 * catches SIGINT/SIGTERM for the window into @o->stop (so the process's
 * stop request, common/cancel.h, stays clear and the STOP still runs);
 * a stop request already recorded there fails the socket waits with
 * -ECANCELED.
 * Returns 0 with @res filled (free with xp_agent_aggregate_free), or a
 * negative code with @err: the client's errors (agent_client.h), the
 * decoder's, TARGET_EXITED when the target went away during the window.
 * @o->stop ends the window early: res->stopped says so, and the groups
 * read at STOP are the answer.
 */
int xp_agent_aggregate_collect(const struct xp_agent_agg_opts *o, struct xp_agent_agg_result *res,
			       struct xp_error *err);
void xp_agent_aggregate_free(struct xp_agent_agg_result *res);

/*
 * The result's order (the reference's): kernels, then copies, then sets;
 * within a kind by name (bytes; no name first; a cut name after the whole
 * one it begins like), device, then copy direction (another kind, HtoD,
 * DtoH, DtoD, HtoH, PtoP).  Sorts @res->dec.groups in place.
 */
void xp_agent_aggregate_sort(struct xp_agent_agg_result *res);

/*
 * The selector that measures group @g exactly (@end: its end boundary),
 * into @buf: kernels "cuda:kernel_start:name~^<name>$" with the name's
 * regex metacharacters escaped, and without the "$" when the name was
 * cut at the record bound (the observed prefix: a prefix filter the Agent
 * applies in its hot path); a kernel without a name "cuda:kernel_start";
 * copies "cuda:memcpy_start:kind=HtoD" (no kind= for another kind);
 * sets "cuda:memset_start".  Returns @buf, or NULL when @size is too
 * small (XP_AGG_HINT_MAX always fits).
 */
#define XP_AGG_HINT_MAX (32 + 2 * XPROBE_NAME_MAX)
const char *xp_agent_aggregate_hint(const struct xp_capture_agg_group *g, bool end, char *buf,
				    size_t size);

/* "kernel", "memcpy", "memset" (the contract's AggregateActivity). */
const char *xp_agent_aggregate_activity(uint32_t kind);

#endif /* XP_COLLECT_AGENT_AGGREGATE_H */
