/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_agent_hist.h - the Agent's HISTOGRAM captures (include/xprobe/
 * agent.h, MODE_HISTOGRAM): reply headers and the packets of struct
 * xprobe_agent_hist behind them into a checked list of cumulative
 * histograms (the total first, then the groups), for `measure --histogram`
 * with cuda: endpoints.  No event leaves the target in this mode.
 *
 * Why its own decoder: the packets hold fixed 8048-byte histograms, and
 * every read is cumulative since ARM, so a read from offset k replaces the
 * histograms from k on (as the aggregate decoder does with its groups).
 *
 * Checks (the reply sequence and packet framing are decode_agent_table.c's,
 * shared with the other table capture; every one TRACE_EXPORT_FAILED, not recoverable, details
 * {"field", "pid"}, hint "rebuild xprobe and libxprobe from the same
 * release"):
 *   the header: xp_capture_agent_reply_check (decode_agent.h) first; then
 *   one ARM first, pid and start time the target's, capacity and arm_ns
 *   constant, observed/retained never decreasing; SNAPSHOT/STOP: offset
 *   <= the histograms held, exactly [offset, retained) follow (retained counts
 *   the total: 1 + groups, capacity 1 + the groups asked for)
 *   (nrecords), bytes = nrecords x 8048;
 *   each packet: whole histograms, no more than announced;
 *   each histogram: number 0 has flag TOTAL, kind 0, key 0, no name; the
 *   others no TOTAL flag, a kind NVTX_RANGE..MEMSET, counters all 0;
 *   flags within TOTAL | NAME_COMPLETE; a name (<= 127 bytes, no NUL,
 *   zeros after it); count = the sum of its buckets; min <= max and both
 *   0 when count is 0, else min and max inside the lowest and highest
 *   non-empty buckets' bounds; a histogram sent again has its key and has
 *   not shrunk (no bucket down);
 *   at the end: every announced packet and histogram arrived.
 */
#ifndef XP_CAPTURE_DECODE_AGENT_HIST_H
#define XP_CAPTURE_DECODE_AGENT_HIST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xprobe/agent.h"

#include "../model/error_record.h"
#include "decode_agent.h"
#include "decode_agent_table.h"

struct xp_capture_hist_dec {
	struct xp_capture_table_rx rx; /* the replies; rx.n histograms held */
	struct xprobe_agent_hist *h; /* [0, rx.n): the total, then the groups, as last read */
};

void xp_capture_hist_dec_init(struct xp_capture_hist_dec *d, uint32_t pid, uint64_t start_time);
void xp_capture_hist_dec_free(struct xp_capture_hist_dec *d);

/* Accept a reply header (through xp_capture_agent_reply_check, status 0):
 * ARM (the baseline) or SNAPSHOT/STOP (opens a reply whose packets follow). */
int xp_capture_hist_dec_reply(struct xp_capture_hist_dec *d, const struct xprobe_agent_reply *rep,
			      struct xp_error *err);
/* One packet of the open reply. */
int xp_capture_hist_dec_chunk(struct xp_capture_hist_dec *d, const void *buf, size_t len,
			      struct xp_error *err);
/* Close the open reply: everything arrived. */
int xp_capture_hist_dec_end(struct xp_capture_hist_dec *d, struct xp_error *err);

/* Everything at once (tests): the layout xp_capture_agent_dec_buf() takes. */
int xp_capture_hist_dec_buf(struct xp_capture_hist_dec *d, const void *buf, size_t len,
			    struct xp_error *err);

#endif /* XP_CAPTURE_DECODE_AGENT_HIST_H */
