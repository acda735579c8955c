/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_source.h - the in-process Agent (libxprobe in the target) as a
 * live source (live_source.h): the NVTX (later CUDA) endpoints of a
 * measurement, collected by the Agent's bounded capture and taken over its
 * control socket (agent_client.h), decoded into the measurement's capture
 * (src/capture/decode_agent.h).
 *
 *   prepare  connect (the target's own socket, or --cupti-socket), HELLO;
 *            an NVTX endpoint needs XPROBE_AGENT_F_NVTX_ROUTED, else
 *            CUPTI_AGENT_NOT_LOADED with the NVTX_INJECTION64_PATH hint;
 *            the ARM request from the endpoints' filters
 *   arm      ARM (capacity --max-events); a CUDA kind without a device
 *            backend is refused by the Agent: CUPTI_NOT_AVAILABLE
 *   poll     SNAPSHOT from the records already held, at most every
 *            XP_AGENT_SNAPSHOT_MS (each costs the target a wakeup of its
 *            server thread)
 *   stop     STOP with the final records; CLOSE when the Agent was
 *            injected (it removes its socket), or when the records are
 *            not wanted; disconnect
 *
 * Counters: capacity, observed, dropped and unknown are the Agent's (the
 * last reply's); the Agent counts its losses but not when they happened,
 * so a loss is never known to lie after a samples capture's cut
 * (first_drop_ts 0).  Events beyond the merged capture's bound make the
 * source full (the loop then ends the capture as FULL), not an error.
 * A connection that fails because the target exited is not an error
 * either: the loop sees the exit through the pidfd.
 */
#ifndef XP_COLLECT_AGENT_SOURCE_H
#define XP_COLLECT_AGENT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../live/live_source.h"

/* SNAPSHOT period while armed. */
#define XP_AGENT_SNAPSHOT_MS 10u

struct xp_agent_source_opts {
	const struct xp_target *target;
	const char *socket_path;     /* --cupti-socket, or NULL: the target's own */
	const char *agent_path;      /* the Agent library (hints), or NULL */
	const struct xp_selector *sels[2]; /* the measurement's endpoints */
	size_t nsels;
	int end_sel;                 /* index of the end selector in sels, -1 none */
	uint64_t max_events;         /* ARM capacity */
	uint32_t snapshot_ms;        /* 0 = XP_AGENT_SNAPSHOT_MS */
	int timeout_ms;              /* each request; 0 = the client's default */
};

/*
 * A live source of the Agent endpoints among @o->sels (host ones are
 * skipped).  Nothing is connected before prepare.  Returns 0 or INTERNAL.
 */
int xp_agent_source_new(const struct xp_agent_source_opts *o, struct xp_live_source **out,
			struct xp_error *err);

#endif /* XP_COLLECT_AGENT_SOURCE_H */
