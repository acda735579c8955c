/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_agent_table.h - what the decoders of the Agent's two table
 * captures share (AGGREGATE groups, decode_agent_agg.h; HISTOGRAM
 * histograms, decode_agent_hist.h): a reply sequence whose SNAPSHOT and
 * STOP replies carry fixed-size items [offset, retained) of a table that
 * only grows, each read cumulative since ARM, so a read from offset k
 * replaces the items from k on.
 *
 * Checks here (every one TRACE_EXPORT_FAILED, not recoverable, details
 * {"field", "pid"}, hint "rebuild xprobe and libxprobe from the same
 * release"), after xp_capture_agent_reply_check (decode_agent.h):
 *   header: no reply inside another's packets, status 0 (else INTERNAL),
 *   ARM or SNAPSHOT/STOP (else INTERNAL), one ARM first and only one,
 *   the target's pid and start time;
 *   accept: across replies capacity and arm_ns constant, observed /
 *   retained / dropped / unknown never decreasing; SNAPSHOT/STOP: offset
 *   <= the items held, exactly [offset, retained) follow (nrecords),
 *   bytes = nrecords x the item's size;
 *   each packet: whole items, at most XPROBE_AGENT_CHUNK_MAX bytes, no
 *   more packets or bytes than announced;
 *   end: every announced packet and item arrived.
 * The item checks are each decoder's.
 */
#ifndef XP_CAPTURE_DECODE_AGENT_TABLE_H
#define XP_CAPTURE_DECODE_AGENT_TABLE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xprobe/agent.h"

#include "../model/error_record.h"
#include "decode_agent.h"

struct xp_capture_table_rx {
	const char *mode; /* "aggregate", "histogram": the capture, in messages */
	const char *item; /* "group", "histogram": one item, in messages */
	size_t item_size; /* its bytes on the wire */
	uint32_t pid; /* the target as it sees itself (reply.pid) */
	uint64_t start_time; /* its start time (0: unchecked) */
	struct xp_capture_agent_stats st; /* the last reply's counters */
	size_t n, cap; /* items held; room in the decoder's array */
	/* the reply being received */
	bool in_reply;
	uint32_t op;
	uint64_t next; /* index of the next item expected */
	uint64_t rec_left, bytes_left;
	uint32_t chunks_left;
};

void xp_capture_table_rx_init(struct xp_capture_table_rx *rx, const char *mode, const char *item,
			      size_t item_size, uint32_t pid, uint64_t start_time);

int xp_capture_table_rx_vbad(const struct xp_capture_table_rx *rx, struct xp_error *err,
			     const char *field, const char *fmt, va_list ap);
int xp_capture_table_rx_bad(const struct xp_capture_table_rx *rx, struct xp_error *err,
			    const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* SNAPSHOT and STOP carry items; ARM does not. */
bool xp_capture_table_rx_has_items(uint32_t op);

/* The header checks, before the decoder's own; 0 or the error. */
int xp_capture_table_rx_header(const struct xp_capture_table_rx *rx,
			       const struct xprobe_agent_reply *rep, struct xp_error *err);
/* The sequence checks; the decoder's array *@items (@elem bytes an
 * element) grown to hold `retained`; the counters taken and, for
 * SNAPSHOT/STOP, the reply opened.  0 or the error. */
int xp_capture_table_rx_accept(struct xp_capture_table_rx *rx,
			       const struct xprobe_agent_reply *rep, void **items, size_t elem,
			       struct xp_error *err);
/* A packet of @len bytes of the open reply: the number of items it holds
 * (the decoder then checks each at index rx->next and calls
 * xp_capture_table_rx_took), or -1 with the error. */
int64_t xp_capture_table_rx_chunk(struct xp_capture_table_rx *rx, size_t len,
				  struct xp_error *err);
/* One item taken; after a packet's last, the packet (@len bytes). */
void xp_capture_table_rx_took(struct xp_capture_table_rx *rx);
void xp_capture_table_rx_chunk_done(struct xp_capture_table_rx *rx, size_t len);
/* The reply's end: 1 when one was open and arrived whole (n is now the
 * items it ended at), 0 when none was open, or the error. */
int xp_capture_table_rx_end(struct xp_capture_table_rx *rx, struct xp_error *err);

#endif /* XP_CAPTURE_DECODE_AGENT_TABLE_H */
