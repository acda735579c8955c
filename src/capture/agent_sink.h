/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_sink.h - one of the Agent's two decoders behind one handle: the
 * records of an exact capture (decode_agent.h), the groups of an
 * aggregate one (decode_agent_agg.h) or the histograms of a histogram one
 * (decode_agent_hist.h).  Their replies arrive the same way,
 * a SNAPSHOT/STOP header followed by its packets, so what reads them is
 * written once against this: the CLI's socket client
 * (src/agent/agent_client.c) and the all-at-once buffer readers
 * xp_capture_agent_dec_buf() and xp_capture_agg_dec_buf() (fuzz targets, tests).
 *
 * Invariant: exactly one of rec, agg and hist is set; every function
 * dispatches on which.
 */
#ifndef XP_CAPTURE_AGENT_SINK_H
#define XP_CAPTURE_AGENT_SINK_H

#include <stdbool.h>
#include <stddef.h>

#include "xprobe/agent.h"

#include "../model/error_record.h"
#include "decode_agent.h"
#include "decode_agent_agg.h"
#include "decode_agent_hist.h"

struct xp_capture_agent_sink {
	struct xp_capture_agent_dec *rec;
	struct xp_capture_agg_dec *agg;
	struct xp_capture_hist_dec *hist; /* a HISTOGRAM capture's histograms */
};

/* The decoder's xp_capture_agent_dec_reply / xp_capture_agg_dec_reply, _chunk, _end. */
int xp_capture_agent_sink_reply(const struct xp_capture_agent_sink *s,
				const struct xprobe_agent_reply *rep, struct xp_error *err);
int xp_capture_agent_sink_chunk(const struct xp_capture_agent_sink *s, const void *buf, size_t len,
				struct xp_error *err);
int xp_capture_agent_sink_end(const struct xp_capture_agent_sink *s, struct xp_error *err);

/* The decoder's "a reply is open" flag (cleared by whoever loses it). */
bool *xp_capture_agent_sink_in_reply(const struct xp_capture_agent_sink *s);

/*
 * Everything at once: replies each followed by their packets, each packet
 * behind its length as a native uint32_t (decode_agent.h,
 * xp_capture_agent_dec_buf).  Each header goes through xp_capture_agent_reply_check with
 * the op it names (ARM, SNAPSHOT or STOP), then the decoder's reply, chunk
 * and end; a reply with a nonzero status, a cut header or packet is an
 * error of the decoder (its TRACE_EXPORT_FAILED wording and details).
 */
int xp_capture_agent_sink_buf(const struct xp_capture_agent_sink *s, const void *buf, size_t len,
			      struct xp_error *err);

#endif
