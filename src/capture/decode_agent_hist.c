/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_agent_hist.c - a HISTOGRAM capture's replies and histogram
 * packets into a checked list (decode_agent_hist.h lists every check).
 * The peer is another process, possibly hostile or of another release:
 * histograms are copied into an aligned struct before a field is read,
 * and the list only grows to what a reply announced (1 + retained, with
 * retained <= capacity <= XPROBE_AGENT_CAPACITY_MAX, checked by
 * xp_capture_agent_reply_check).
 *
 * Invariant after every accepted reply: histograms [0, n) each passed the
 * check, number 0 is the total.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_sink.h"
#include "decode_agent_hist.h"
#include "decode_agent_table.h"

#define HIST_SIZE sizeof(struct xprobe_agent_hist)

static int __attribute__((format(printf, 4, 5)))
bad(struct xp_capture_hist_dec *d, struct xp_error *err, const char *field, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = xp_capture_table_rx_vbad(&d->rx, err, field, fmt, ap);
	va_end(ap);
	return rc;
}

void xp_capture_hist_dec_init(struct xp_capture_hist_dec *d, uint32_t pid, uint64_t start_time)
{
	memset(d, 0, sizeof(*d));
	xp_capture_table_rx_init(&d->rx, "histogram", "histogram", HIST_SIZE, pid, start_time);
}

void xp_capture_hist_dec_free(struct xp_capture_hist_dec *d)
{
	free(d->h);
	d->h = NULL;
	d->rx.n = d->rx.cap = 0;
}

int xp_capture_hist_dec_reply(struct xp_capture_hist_dec *d, const struct xprobe_agent_reply *rep,
			      struct xp_error *err)
{
	int rc = xp_capture_table_rx_header(&d->rx, rep, err);

	if (rc)
		return rc;
	/* retained counts the total: 1 + groups */
	if (rep->capacity < 2 || rep->capacity > XPROBE_AGENT_HIST_GROUPS_MAX + 1ull ||
	    (rep->op != XPROBE_AGENT_OP_ARM && !rep->retained))
		return bad(d, err, "capacity",
			   "%" PRIu64 " histograms in use of %" PRIu64
			   " (the total and 1..%u groups)",
			   rep->retained, rep->capacity, XPROBE_AGENT_HIST_GROUPS_MAX);
	return xp_capture_table_rx_accept(&d->rx, rep, (void **)&d->h, sizeof(*d->h), err);
}

static bool nonzero(const void *p, size_t from, size_t to)
{
	const uint8_t *b = p;

	for (size_t i = from; i < to; i++)
		if (b[i])
			return true;
	return false;
}

/* [lo, hi) of bucket @b (latency_buckets.h; the last saturates). */
static void bounds(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	uint32_t k, sub;

	if (b < XPROBE_LH_SUB) {
		*lo = b;
		*hi = b + 1ull;
		return;
	}
	k = b / XPROBE_LH_SUB + XPROBE_LH_SUB_BITS - 1;
	sub = b % XPROBE_LH_SUB;
	*lo = (1ull << k) + ((uint64_t)sub << (k - XPROBE_LH_SUB_BITS));
	*hi = b == XPROBE_LH_BUCKETS - 1 ? UINT64_MAX : *lo + (1ull << (k - XPROBE_LH_SUB_BITS));
}

/* One histogram on its own; 0 or the error. */
static int hist_check(struct xp_capture_hist_dec *d, const struct xprobe_agent_hist *x,
		      uint64_t idx, struct xp_error *err)
{
	bool total = idx == 0;
	uint64_t n = 0, lo, hi, b0 = UINT64_MAX, b1 = 0;

	if (total != !!(x->flags & XPROBE_AGENT_HIST_F_TOTAL))
		return bad(d, err, "flags", "histogram %" PRIu64 " has flags 0x%x", idx, x->flags);
	if (x->flags & ~(XPROBE_AGENT_HIST_F_TOTAL | XPROBE_AGENT_HIST_F_NAME_COMPLETE))
		return bad(d, err, "flags", "histogram %" PRIu64 " has flags 0x%x", idx, x->flags);
	if (total ? (x->kind || x->key || x->name_len || x->flags != XPROBE_AGENT_HIST_F_TOTAL) :
		    (x->kind < XPROBE_AGENT_KIND_NVTX_RANGE || x->kind > XPROBE_AGENT_KIND_MEMSET))
		return bad(d, err, "kind", "histogram %" PRIu64 " has kind %" PRIu32, idx, x->kind);
	if (!total && nonzero(x->counters, 0, sizeof(x->counters)))
		return bad(d, err, "counters", "group %" PRIu64 " carries counters", idx);
	if (x->name_len > XPROBE_NAME_MAX || memchr(x->name, 0, x->name_len) ||
	    nonzero(x->name, x->name_len, sizeof(x->name)))
		return bad(d, err, "name", "histogram %" PRIu64 "'s name is malformed", idx);
	for (uint32_t b = 0; b < XPROBE_LH_BUCKETS; b++) {
		if (!x->buckets[b])
			continue;
		if (n + x->buckets[b] < n)
			return bad(d, err, "buckets", "histogram %" PRIu64 " overflows", idx);
		n += x->buckets[b];
		if (b0 == UINT64_MAX)
			b0 = b;
		b1 = b;
	}
	if (n != x->count)
		return bad(d, err, "count",
			   "histogram %" PRIu64 ": count %" PRIu64 ", its buckets hold %" PRIu64,
			   idx, x->count, n);
	if (!n)
		return x->min_ns || x->max_ns ?
			       bad(d, err, "min_ns", "empty histogram %" PRIu64 " has extremes",
				   idx) :
			       0;
	bounds((uint32_t)b0, &lo, &hi);
	if (x->min_ns > x->max_ns || x->min_ns >= hi)
		return bad(d, err, "min_ns",
			   "histogram %" PRIu64 ": min %" PRIu64 " past its lowest bucket", idx,
			   x->min_ns);
	bounds((uint32_t)b1, &lo, &hi);
	if (x->max_ns < lo)
		return bad(d, err, "max_ns",
			   "histogram %" PRIu64 ": max %" PRIu64 " below its highest bucket", idx,
			   x->max_ns);
	return 0;
}

/* Histogram @idx sent again: the same key, and no bucket went down. */
static int regrown_check(struct xp_capture_hist_dec *d, const struct xprobe_agent_hist *old,
			 const struct xprobe_agent_hist *x, uint64_t idx, struct xp_error *err)
{
	if (old->kind != x->kind || old->key != x->key || old->flags != x->flags ||
	    old->name_len != x->name_len || memcmp(old->name, x->name, x->name_len))
		return bad(d, err, "key", "histogram %" PRIu64 " changed its key between replies",
			   idx);
	for (uint32_t b = 0; b < XPROBE_LH_BUCKETS; b++)
		if (x->buckets[b] < old->buckets[b])
			return bad(d, err, "buckets",
				   "histogram %" PRIu64 " shrank between replies", idx);
	return 0;
}

int xp_capture_hist_dec_chunk(struct xp_capture_hist_dec *d, const void *buf, size_t len,
			      struct xp_error *err)
{
	int64_t count = xp_capture_table_rx_chunk(&d->rx, len, err);
	const uint8_t *p = buf;

	if (count < 0)
		return (int)count;
	for (int64_t i = 0; i < count; i++) {
		uint64_t idx = d->rx.next;
		struct xprobe_agent_hist *x;
		int rc;

		/* next < retained <= cap: announced, so room was made */
		x = &d->h[idx];
		if (idx < d->rx.n) {
			struct xprobe_agent_hist now;

			memcpy(&now, p + i * HIST_SIZE, sizeof(now));
			rc = hist_check(d, &now, idx, err);
			if (!rc)
				rc = regrown_check(d, x, &now, idx, err);
			if (rc)
				return rc;
			*x = now;
		} else {
			memcpy(x, p + i * HIST_SIZE, sizeof(*x));
			rc = hist_check(d, x, idx, err);
			if (rc)
				return rc;
		}
		xp_capture_table_rx_took(&d->rx);
	}
	xp_capture_table_rx_chunk_done(&d->rx, len);
	return 0;
}

int xp_capture_hist_dec_end(struct xp_capture_hist_dec *d, struct xp_error *err)
{
	int rc = xp_capture_table_rx_end(&d->rx, err);

	return rc < 0 ? rc : 0;
}

int xp_capture_hist_dec_buf(struct xp_capture_hist_dec *d, const void *buf, size_t len,
			    struct xp_error *err)
{
	struct xp_capture_agent_sink s = { .hist = d };

	return xp_capture_agent_sink_buf(&s, buf, len, err);
}
