/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_agent_table.c - the reply sequence of the Agent's table
 * captures (decode_agent_table.h lists every check).  The peer is another
 * process, possibly hostile or of another release: every count is
 * bounded before it sizes anything (retained <= capacity <=
 * XPROBE_AGENT_CAPACITY_MAX, checked by xp_capture_agent_reply_check).
 *
 * Invariant after every accepted reply: n <= st.retained <= cap.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_agent_table.h"

#define HINT_SKEW "rebuild xprobe and libxprobe from the same release"

void xp_capture_table_rx_init(struct xp_capture_table_rx *rx, const char *mode, const char *item,
			      size_t item_size, uint32_t pid, uint64_t start_time)
{
	memset(rx, 0, sizeof(*rx));
	rx->mode = mode;
	rx->item = item;
	rx->item_size = item_size;
	rx->pid = pid;
	rx->start_time = start_time;
}

int xp_capture_table_rx_vbad(const struct xp_capture_table_rx *rx, struct xp_error *err,
			     const char *field, const char *fmt, va_list ap)
{
	char where[80];

	snprintf(where, sizeof(where), "failed to decode the Agent's %s capture of PID %" PRIu32,
		 rx->mode, rx->pid);
	xp_error_detail_u64(err, "pid", rx->pid);
	return xp_capture_agent_vfail(err, field, HINT_SKEW, where, fmt, ap);
}

int xp_capture_table_rx_bad(const struct xp_capture_table_rx *rx, struct xp_error *err,
			    const char *field, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = xp_capture_table_rx_vbad(rx, err, field, fmt, ap);
	va_end(ap);
	return rc;
}

bool xp_capture_table_rx_has_items(uint32_t op)
{
	return op == XPROBE_AGENT_OP_SNAPSHOT || op == XPROBE_AGENT_OP_STOP;
}

int xp_capture_table_rx_header(const struct xp_capture_table_rx *rx,
			       const struct xprobe_agent_reply *rep, struct xp_error *err)
{
	if (rx->in_reply)
		return xp_capture_table_rx_bad(rx, err, "op",
					       "a %s reply before the last one's %ss ended",
					       xp_capture_agent_op_name(rep->op), rx->item);
	if (rep->status)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "%s decoder given an error reply (status %" PRId32 ")",
				    rx->mode, rep->status);
	if (rep->op != XPROBE_AGENT_OP_ARM && !xp_capture_table_rx_has_items(rep->op))
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "%s decoder given a %s reply",
				    rx->mode, xp_capture_agent_op_name(rep->op));
	if ((rep->op == XPROBE_AGENT_OP_ARM) == rx->st.valid)
		return rx->st.valid ? xp_capture_table_rx_bad(rx, err, "op",
							      "a second ARM reply in one capture") :
				      xp_capture_table_rx_bad(rx, err, "op",
							      "%ss before the ARM reply", rx->item);
	if (rep->pid != rx->pid)
		return xp_capture_table_rx_bad(rx, err, "pid", "the reply comes from PID %" PRIu32,
					       rep->pid);
	if (rx->start_time && rep->start_time != rx->start_time)
		return xp_capture_table_rx_bad(rx, err, "start_time",
					       "the reply comes from a process started at %" PRIu64
					       ", not %" PRIu64,
					       rep->start_time, rx->start_time);
	return 0;
}

static int sequence_check(const struct xp_capture_table_rx *rx,
			  const struct xprobe_agent_reply *rep, struct xp_error *err)
{
	const struct xp_capture_agent_stats *p = &rx->st;

	if (!p->valid)
		return 0;
	if (rep->capacity != p->capacity)
		return xp_capture_table_rx_bad(rx, err, "capacity",
					       "capacity changed from %" PRIu64 " to %" PRIu64,
					       p->capacity, rep->capacity);
	if (rep->arm_ns != p->arm_ns)
		return xp_capture_table_rx_bad(rx, err, "arm_ns", "the capture was armed again");
	if (rep->observed < p->observed || rep->retained < p->retained ||
	    rep->dropped < p->dropped || rep->unknown < p->unknown)
		return xp_capture_table_rx_bad(
			rx, err, "counters",
			"a counter went down (observed %" PRIu64 " -> %" PRIu64 ", %ss %" PRIu64
			" -> %" PRIu64 ", dropped %" PRIu64 " -> %" PRIu64 ", unknown %" PRIu64
			" -> %" PRIu64 ")",
			p->observed, rep->observed, rx->item, p->retained, rep->retained,
			p->dropped, rep->dropped, p->unknown, rep->unknown);
	return 0;
}

static int items_check(const struct xp_capture_table_rx *rx, const struct xprobe_agent_reply *rep,
		       struct xp_error *err)
{
	if (rep->offset > rx->n)
		return xp_capture_table_rx_bad(rx, err, "offset",
					       "%ss from %" PRIu64 " follow, %zu were received",
					       rx->item, rep->offset, rx->n);
	if (rep->nrecords != rep->retained - rep->offset)
		return xp_capture_table_rx_bad(rx, err, "nrecords",
					       "%" PRIu64 " %ss from %" PRIu64 " of the %" PRIu64
					       " in use follow",
					       rep->nrecords, rx->item, rep->offset, rep->retained);
	if (rep->bytes != rep->nrecords * rx->item_size)
		return xp_capture_table_rx_bad(rx, err, "bytes",
					       "%" PRIu64 " bytes for %" PRIu64 " %ss", rep->bytes,
					       rep->nrecords, rx->item);
	return 0;
}

int xp_capture_table_rx_accept(struct xp_capture_table_rx *rx, const struct xprobe_agent_reply *rep,
			       void **items, size_t elem, struct xp_error *err)
{
	bool has = xp_capture_table_rx_has_items(rep->op);
	int rc;

	rc = sequence_check(rx, rep, err);
	if (!rc && has)
		rc = items_check(rx, rep, err);
	if (rc)
		return rc;
	/* retained <= capacity <= XPROBE_AGENT_CAPACITY_MAX: bounded */
	if (has && rep->retained > rx->cap) {
		void *q = realloc(*items, rep->retained * elem);

		if (!q)
			return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		*items = q;
		rx->cap = rep->retained;
	}
	xp_capture_agent_stats_take(&rx->st, rep);
	if (!has)
		return 0;
	rx->in_reply = true;
	rx->op = rep->op;
	rx->next = rep->offset;
	rx->rec_left = rep->nrecords;
	rx->bytes_left = rep->bytes;
	rx->chunks_left = rep->nchunks;
	return 0;
}

int64_t xp_capture_table_rx_chunk(struct xp_capture_table_rx *rx, size_t len, struct xp_error *err)
{
	if (!rx->in_reply || !rx->chunks_left)
		return xp_capture_table_rx_bad(rx, err, "nchunks",
					       "a %s packet beyond those announced", rx->item);
	if (!len || len > XPROBE_AGENT_CHUNK_MAX || len > rx->bytes_left || len % rx->item_size)
		return xp_capture_table_rx_bad(rx, err, "bytes",
					       "a %zu-byte %s packet (whole %zu-byte %ss, at most "
					       "%u bytes, %" PRIu64 " left)",
					       len, rx->item, rx->item_size, rx->item,
					       XPROBE_AGENT_CHUNK_MAX, rx->bytes_left);
	/* bytes_left = rec_left x item_size: the items fit what was announced */
	return (int64_t)(len / rx->item_size);
}

void xp_capture_table_rx_took(struct xp_capture_table_rx *rx)
{
	rx->next++;
	rx->rec_left--;
}

void xp_capture_table_rx_chunk_done(struct xp_capture_table_rx *rx, size_t len)
{
	rx->bytes_left -= len;
	rx->chunks_left--;
}

int xp_capture_table_rx_end(struct xp_capture_table_rx *rx, struct xp_error *err)
{
	if (!rx->in_reply)
		return 0;
	if (rx->rec_left || rx->bytes_left || rx->chunks_left)
		return xp_capture_table_rx_bad(rx, err, "nchunks",
					       "%" PRIu64 " %ss, %" PRIu64 " bytes in %" PRIu32
					       " packets announced did not arrive",
					       rx->rec_left, rx->item, rx->bytes_left,
					       rx->chunks_left);
	rx->in_reply = false;
	if (rx->next > rx->n)
		rx->n = rx->next;
	return 1;
}
