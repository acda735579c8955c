/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_sink.c - the Agent's record or group decoder behind one handle
 * (agent_sink.h), and the all-at-once buffer reader both decoders' _buf
 * entry points are.  The buffer is untrusted (a fuzz input): every length
 * is checked against what is left before it is read.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "agent_sink.h"

int xp_capture_agent_sink_reply(const struct xp_capture_agent_sink *s,
				const struct xprobe_agent_reply *rep, struct xp_error *err)
{
	if (s->hist)
		return xp_capture_hist_dec_reply(s->hist, rep, err);
	return s->rec ? xp_capture_agent_dec_reply(s->rec, rep, err) :
			xp_capture_agg_dec_reply(s->agg, rep, err);
}

int xp_capture_agent_sink_chunk(const struct xp_capture_agent_sink *s, const void *buf, size_t len,
				struct xp_error *err)
{
	if (s->hist)
		return xp_capture_hist_dec_chunk(s->hist, buf, len, err);
	return s->rec ? xp_capture_agent_dec_chunk(s->rec, buf, len, err) :
			xp_capture_agg_dec_chunk(s->agg, buf, len, err);
}

int xp_capture_agent_sink_end(const struct xp_capture_agent_sink *s, struct xp_error *err)
{
	if (s->hist)
		return xp_capture_hist_dec_end(s->hist, err);
	return s->rec ? xp_capture_agent_dec_end(s->rec, err) : xp_capture_agg_dec_end(s->agg, err);
}

bool *xp_capture_agent_sink_in_reply(const struct xp_capture_agent_sink *s)
{
	if (s->hist)
		return &s->hist->rx.in_reply;
	return s->rec ? &s->rec->in_reply : &s->agg->rx.in_reply;
}

/* A broken buffer: the decoder's own TRACE_EXPORT_FAILED. */
static int __attribute__((format(printf, 4, 5)))
bad(const struct xp_capture_agent_sink *s, struct xp_error *err, const char *field, const char *fmt,
    ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	if (s->rec)
		rc = xp_capture_agent_dec_vbad(s->rec, err, field, fmt, ap);
	else
		rc = xp_capture_table_rx_vbad(s->hist ? &s->hist->rx : &s->agg->rx, err, field,
					      fmt, ap);
	va_end(ap);
	return rc;
}

static bool has_packets(uint32_t op)
{
	return op == XPROBE_AGENT_OP_SNAPSHOT || op == XPROBE_AGENT_OP_STOP;
}

int xp_capture_agent_sink_buf(const struct xp_capture_agent_sink *s, const void *buf, size_t len,
			      struct xp_error *err)
{
	const uint8_t *p = buf;
	size_t off = 0;
	int rc;

	if (len == 0)
		return bad(s, err, "size", "no reply");
	while (off < len) {
		struct xprobe_agent_reply rep;

		if (len - off < sizeof(rep))
			return bad(s, err, "size", "%zu bytes, expected a %zu-byte reply",
				   len - off, sizeof(rep));
		memcpy(&rep, p + off, sizeof(rep));
		if (rep.op != XPROBE_AGENT_OP_ARM && !has_packets(rep.op))
			return bad(s, err, "op", "op %" PRIu32 " in a capture", rep.op);
		rc = xp_capture_agent_reply_check(&rep, sizeof(rep), rep.op, err);
		if (rc)
			return rc;
		if (rep.status)
			return bad(s, err, "status", "the %s reply failed with status %" PRId32,
				   xp_capture_agent_op_name(rep.op), rep.status);
		rc = xp_capture_agent_sink_reply(s, &rep, err);
		if (rc)
			return rc;
		off += sizeof(rep);
		for (uint32_t i = 0; i < rep.nchunks; i++) {
			uint32_t n;

			if (len - off < sizeof(n))
				return bad(s, err, "nchunks", "the capture ends before packet %u",
					   i);
			memcpy(&n, p + off, sizeof(n));
			off += sizeof(n);
			if (n > len - off)
				return bad(s, err, "bytes",
					   "packet %u of %" PRIu32 " bytes is cut at %zu", i, n,
					   len - off);
			rc = xp_capture_agent_sink_chunk(s, p + off, n, err);
			if (rc)
				return rc;
			off += n;
		}
		rc = xp_capture_agent_sink_end(s, err);
		if (rc)
			return rc;
	}
	return 0;
}
