/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_agent_agg.h - the Agent's AGGREGATE captures (include/xprobe/
 * agent.h, MODE_AGGREGATE): reply headers and the packets of struct
 * xprobe_agent_group behind them into a checked list of groups, for
 * `measure --aggregate`.  No event leaves the target in this mode, so
 * nothing here touches a struct xp_capture; the groups and the last
 * reply's counters are the whole result.
 *
 * Why its own decoder: an aggregate reply's packets hold fixed 184-byte
 * groups, not records, and a reply re-sends groups that have grown since
 * (agent.h: "a group sent before may have grown since"), so a read from
 * offset k replaces the groups from k on instead of appending events.
 *
 * Checks (the reply sequence and packet framing are decode_agent_table.c's,
 * shared with the other table capture; every one TRACE_EXPORT_FAILED, not recoverable, details
 * {"field", "pid"}, hint "rebuild xprobe and libxprobe from the same
 * release"):
 *   the header: xp_capture_agent_reply_check (decode_agent.h) first, then for
 *   SNAPSHOT/STOP: offset <= the groups already held, the groups sent are
 *   exactly [offset, retained) (nrecords == retained - offset), bytes ==
 *   nrecords x 184; across replies: one ARM first, capacity and arm_ns
 *   constant, observed / retained / dropped / unknown never decreasing,
 *   the target's pid and start time;
 *   each packet: whole groups, at most XPROBE_AGENT_CHUNK_MAX bytes, no
 *   more packets or groups than announced;
 *   each group: count >= 1, min_ns <= total_ns / count <= max_ns (exactly:
 *   min x count <= total <= max x count), kind KERNEL, MEMCPY or MEMSET,
 *   a memcpy kind (0..5) on copies only, NAME_COMPLETE on kernels only and
 *   no other flag, a name (<= 127 bytes, no NUL, zeros after it) on
 *   kernels only, bytes 0 on kernels; a group sent again has the key it
 *   had (kind, device, memcpy kind, flags, name) and has not shrunk
 *   (count, total, bytes never down, min never up, max never down);
 *   at the end of a reply: every announced packet and group arrived, no
 *   two groups share a key, and the groups' counts add up to at most
 *   `observed` (activities that passed the filters; the rest were dropped).
 */
#ifndef XP_CAPTURE_DECODE_AGENT_AGG_H
#define XP_CAPTURE_DECODE_AGENT_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xprobe/agent.h"

#include "../model/error_record.h"
#include "decode_agent.h"
#include "decode_agent_table.h"

/* One group as the CLI keeps it (a checked struct xprobe_agent_group). */
struct xp_capture_agg_group {
	uint64_t count;
	uint64_t total_ns, min_ns, max_ns;
	uint64_t bytes; /* memcpy, memset; 0 for kernels */
	uint32_t kind; /* XPROBE_AGENT_KIND_KERNEL / _MEMCPY / _MEMSET */
	uint32_t device; /* XPROBE_CUDA_UNKNOWN when CUPTI gave none */
	uint32_t memcpy_kind; /* enum xprobe_agent_memcpy_kind (0: another kind) */
	bool name_complete; /* kernels: the whole name fit */
	uint16_t name_len; /* kernels: 0..127 */
	char name[XPROBE_NAME_MAX + 1]; /* NUL-terminated */
};

struct xp_capture_agg_dec {
	struct xp_capture_table_rx rx; /* the replies; rx.n groups held */
	struct xp_capture_agg_group *groups; /* [0, rx.n): the table as last read */
	uint64_t grouped; /* sum of the groups' counts */
};

void xp_capture_agg_dec_init(struct xp_capture_agg_dec *d, uint32_t pid, uint64_t start_time);
void xp_capture_agg_dec_free(struct xp_capture_agg_dec *d);

/*
 * Accept a reply header (through xp_capture_agent_reply_check, status 0): ARM
 * (the baseline, nothing follows) or SNAPSHOT/STOP (opens a reply whose
 * group packets follow).  Return 0 or the error (header comment).
 */
int xp_capture_agg_dec_reply(struct xp_capture_agg_dec *d, const struct xprobe_agent_reply *rep,
			     struct xp_error *err);
/* One group packet of the open reply. */
int xp_capture_agg_dec_chunk(struct xp_capture_agg_dec *d, const void *buf, size_t len,
			     struct xp_error *err);
/* Close the open reply: everything arrived, no duplicate key, the sum. */
int xp_capture_agg_dec_end(struct xp_capture_agg_dec *d, struct xp_error *err);

/*
 * Everything at once (fuzz target, tests): replies each followed by their
 * packets, each packet behind its length as a native uint32_t, the
 * layout xp_capture_agent_dec_buf() takes; the first reply must be an ARM.
 */
int xp_capture_agg_dec_buf(struct xp_capture_agg_dec *d, const void *buf, size_t len,
			   struct xp_error *err);

#endif /* XP_CAPTURE_DECODE_AGENT_AGG_H */
