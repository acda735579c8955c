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

#define HINT_SKEW "rebuild xprobe and libxprobe from the same release"
#define HIST_SIZE sizeof(struct xprobe_agent_hist)

int xp_capture_hist_dec_vbad(struct xp_capture_hist_dec *d, struct xp_error *err, const char *field,
			     const char *fmt, va_list ap)
{
	char where[80];

	snprintf(where, sizeof(where),
		 "failed to decode the Agent's histogram capture of PID %" PRIu32, d->pid);
	xp_error_detail_u64(err, "pid", d->pid);
	return xp_capture_agent_vfail(err, field, HINT_SKEW, where, fmt, ap);
}

static int __attribute__((format(printf, 4, 5)))
bad(struct xp_capture_hist_dec *d, struct xp_error *err, const char *field, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = xp_capture_hist_dec_vbad(d, err, field, fmt, ap);
	va_end(ap);
	return rc;
}

void xp_capture_hist_dec_init(struct xp_capture_hist_dec *d, uint32_t pid, uint64_t start_time)
{
	memset(d, 0, sizeof(*d));
	d->pid = pid;
	d->start_time = start_time;
}

void xp_capture_hist_dec_free(struct xp_capture_hist_dec *d)
{
	free(d->h);
	d->h = NULL;
	d->n = d->cap = 0;
}

static bool has_packets(uint32_t op)
{
	return op == XPROBE_AGENT_OP_SNAPSHOT || op == XPROBE_AGENT_OP_STOP;
}

int xp_capture_hist_dec_reply(struct xp_capture_hist_dec *d, const struct xprobe_agent_reply *rep,
			      struct xp_error *err)
{
	const struct xp_capture_agent_stats *p = &d->st;
	uint64_t all;

	if (d->in_reply)
		return bad(d, err, "op", "a %s reply before the last one's histograms ended",
			   xp_capture_agent_op_name(rep->op));
	if (rep->status)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "histogram decoder given an error reply (status %" PRId32 ")",
				    rep->status);
	if (rep->op != XPROBE_AGENT_OP_ARM && !has_packets(rep->op))
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "histogram decoder given a %s reply",
				    xp_capture_agent_op_name(rep->op));
	if ((rep->op == XPROBE_AGENT_OP_ARM) == p->valid)
		return bad(d, err, "op",
			   p->valid ? "a second ARM reply in one capture" :
				      "histograms before the ARM reply");
	if (rep->pid != d->pid)
		return bad(d, err, "pid", "the reply comes from PID %" PRIu32, rep->pid);
	if (d->start_time && rep->start_time != d->start_time)
		return bad(d, err, "start_time",
			   "the reply comes from a process started at %" PRIu64 ", not %" PRIu64,
			   rep->start_time, d->start_time);
	if (rep->capacity < 2 || rep->capacity > XPROBE_AGENT_HIST_GROUPS_MAX + 1ull ||
	    (rep->op != XPROBE_AGENT_OP_ARM && !rep->retained))
		return bad(d, err, "capacity",
			   "%" PRIu64 " histograms in use of %" PRIu64
			   " (the total and 1..%u groups)",
			   rep->retained, rep->capacity, XPROBE_AGENT_HIST_GROUPS_MAX);
	if (p->valid) {
		if (rep->capacity != p->capacity)
			return bad(d, err, "capacity",
				   "capacity changed from %" PRIu64 " to %" PRIu64, p->capacity,
				   rep->capacity);
		if (rep->arm_ns != p->arm_ns)
			return bad(d, err, "arm_ns", "the capture was armed again");
		if (rep->observed < p->observed || rep->retained < p->retained ||
		    rep->dropped < p->dropped || rep->unknown < p->unknown)
			return bad(d, err, "counters", "a counter went down");
	}
	if (has_packets(rep->op)) {
		all = rep->retained; /* the total and the groups */
		if (rep->offset > d->n)
			return bad(d, err, "offset",
				   "histograms from %" PRIu64 " follow, %zu were received",
				   rep->offset, d->n);
		if (rep->nrecords != all - rep->offset)
			return bad(d, err, "nrecords",
				   "%" PRIu64 " histograms from %" PRIu64 " of the %" PRIu64
				   " in use follow",
				   rep->nrecords, rep->offset, all);
		if (rep->bytes != rep->nrecords * HIST_SIZE)
			return bad(d, err, "bytes", "%" PRIu64 " bytes for %" PRIu64 " histograms",
				   rep->bytes, rep->nrecords);
		if (all > d->cap) {
			void *q = realloc(d->h, all * sizeof(*d->h));

			if (!q)
				return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
			d->h = q;
			d->cap = all;
		}
	}
	xp_capture_agent_stats_take(&d->st, rep);
	if (!has_packets(rep->op))
		return 0;
	d->in_reply = true;
	d->op = rep->op;
	d->next = rep->offset;
	d->rec_left = rep->nrecords;
	d->bytes_left = rep->bytes;
	d->chunks_left = rep->nchunks;
	return 0;
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
	const uint8_t *p = buf;

	if (!d->in_reply || !d->chunks_left)
		return bad(d, err, "nchunks", "a histogram packet beyond those announced");
	if (!len || len > XPROBE_AGENT_CHUNK_MAX || len > d->bytes_left || len % HIST_SIZE)
		return bad(d, err, "bytes",
			   "a %zu-byte histogram packet (whole %zu-byte histograms, at most %u "
			   "bytes, %" PRIu64 " left)",
			   len, HIST_SIZE, XPROBE_AGENT_CHUNK_MAX, d->bytes_left);
	for (size_t off = 0; off < len; off += HIST_SIZE) {
		uint64_t idx = d->next;
		struct xprobe_agent_hist *x;
		int rc;

		/* next < 1 + retained <= cap: announced, so room was made */
		x = &d->h[idx];
		if (idx < d->n) {
			struct xprobe_agent_hist now;

			memcpy(&now, p + off, sizeof(now));
			rc = hist_check(d, &now, idx, err);
			if (!rc)
				rc = regrown_check(d, x, &now, idx, err);
			if (rc)
				return rc;
			*x = now;
		} else {
			memcpy(x, p + off, sizeof(*x));
			rc = hist_check(d, x, idx, err);
			if (rc)
				return rc;
		}
		d->next++;
		d->rec_left--;
	}
	d->bytes_left -= len;
	d->chunks_left--;
	return 0;
}

int xp_capture_hist_dec_end(struct xp_capture_hist_dec *d, struct xp_error *err)
{
	if (!d->in_reply)
		return 0;
	if (d->rec_left || d->bytes_left || d->chunks_left)
		return bad(d, err, "nchunks",
			   "%" PRIu64 " histograms, %" PRIu64 " bytes in %" PRIu32
			   " packets announced did not arrive",
			   d->rec_left, d->bytes_left, d->chunks_left);
	d->in_reply = false;
	if (d->next > d->n)
		d->n = d->next;
	return 0;
}

int xp_capture_hist_dec_buf(struct xp_capture_hist_dec *d, const void *buf, size_t len,
			    struct xp_error *err)
{
	struct xp_capture_agent_sink s = { .hist = d };

	return xp_capture_agent_sink_buf(&s, buf, len, err);
}
