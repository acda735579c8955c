/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_histogram.h - one HISTOGRAM capture of the Agent (`measure
 * --histogram` with cuda: endpoints): connect, ARM the in-target pairing
 * (include/xprobe/agent.h, MODE_HISTOGRAM), read the cumulative
 * histograms with SNAPSHOT every interval, STOP, and hand back the same
 * struct xp_inv_lh_result the kernel's path produces
 * (src/inventory/latency_histogram.h), so one set of renderers, the
 * intervals, the Prometheus file and the schema serve both.
 *
 * What it owns: the window (duration, stop request, the target's exit, a
 * deadline), the reads (SNAPSHOT every --interval-ms, and at least every
 * XP_AGENT_HIST_READ_NS so a target that exits leaves a recent read), the
 * intervals as differences of two cumulative reads (histogram by histogram:
 * the Agent numbers its groups in the order they appeared and never
 * reorders them), and the result.  The socket is agent_client.c's, the
 * checks of every histogram decode_agent_hist.c's.
 *
 * A target that exits during the window is a result (stop
 * XP_LH_STOP_TARGET_EXITED) holding the last read: pairs completed after it
 * are lost with the process (at most XP_AGENT_HIST_READ_NS, or an interval).
 */
#ifndef XP_COLLECT_AGENT_HISTOGRAM_H
#define XP_COLLECT_AGENT_HISTOGRAM_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "xprobe/agent.h"

#include "../inventory/latency_histogram.h"
#include "../model/error_record.h"
#include "../process/identity.h"

/* Without --interval-ms the histograms are still read this often. */
#define XP_AGENT_HIST_READ_NS 1000000000ull

struct xp_agent_hist_opts {
	const struct xp_target *target;
	const char *socket_path; /* --cupti-socket, or NULL: the target's own */
	const struct xprobe_agent_req *arm; /* mode HISTOGRAM */
	int group_by; /* XP_LH_BY_* the ARM's `by` stands for */
	const char *pairing; /* result.agent_pairing */
	uint64_t duration_ms; /* 0: until a stop request, the target's exit or deadline */
	uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0: none */
	const volatile sig_atomic_t *stop; /* non-zero ends the window */
	int timeout_ms; /* each socket wait; <= 0: XP_AGENT_TIMEOUT_MS */
	void (*progress)(void *ctx, uint64_t elapsed_ns);
	void *progress_ctx;
	/* every interval_ns (0: none): what the interval added, as the kernel's
	 * path hands it (latency_histogram.h, on_interval) */
	uint64_t interval_ns;
	int (*on_interval)(void *ctx, const struct xp_inv_lh_interval *iv, struct xp_error *err);
	void *interval_ctx;
};

/*
 * Run the capture (see the header comment).  Returns 0 with @r filled
 * (xp_inv_lh_result_free), *@features the HELLO's XPROBE_AGENT_F_*; or a
 * negative code with @err: the client's errors (agent_client.h), the
 * decoder's, or what on_interval returned.
 */
int xp_agent_hist_collect(const struct xp_agent_hist_opts *o, struct xp_inv_lh_result *r,
			  uint32_t *features, struct xp_error *err);

/* XPROBE_AGENT_BY_* of an XP_LH_BY_* (the ARM's `by`). */
uint32_t xp_agent_hist_by(int group_by);

/* The result of one read: histograms @h[0, @n) (the total first), as
 * decode_agent_hist.c checked them, into @r's distributions, counters and
 * groups (sorted).  0 or -ENOMEM.  Pure; unit-tested. */
int xp_agent_hist_fill(struct xp_inv_lh_result *r, const struct xprobe_agent_hist *h, size_t n);

#endif /* XP_COLLECT_AGENT_HISTOGRAM_H */
