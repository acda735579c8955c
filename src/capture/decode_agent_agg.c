/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_agent_agg.c - an AGGREGATE capture's replies and group packets
 * into a checked group list (decode_agent_agg.h lists every check).  The
 * peer is another process, possibly hostile or of another release:
 * groups are copied into an aligned struct before a field is read, every
 * count is bounded before it sizes anything, and the list only grows to
 * the groups a reply announced (retained <= capacity <=
 * XPROBE_AGENT_CAPACITY_MAX, checked by xp_capture_agent_reply_check).
 *
 * Invariants after every accepted reply: groups [0, n) each passed the
 * group check, no two share a key, grouped = the sum of their counts <=
 * st.observed, n <= st.retained.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_sink.h"
#include "decode_agent_agg.h"
#include "decode_agent_table.h"

#define GROUP_SIZE sizeof(struct xprobe_agent_group)

static int __attribute__((format(printf, 4, 5)))
bad(struct xp_capture_agg_dec *d, struct xp_error *err, const char *field, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = xp_capture_table_rx_vbad(&d->rx, err, field, fmt, ap);
	va_end(ap);
	return rc;
}

void xp_capture_agg_dec_init(struct xp_capture_agg_dec *d, uint32_t pid, uint64_t start_time)
{
	memset(d, 0, sizeof(*d));
	xp_capture_table_rx_init(&d->rx, "aggregate", "group", GROUP_SIZE, pid, start_time);
}

void xp_capture_agg_dec_free(struct xp_capture_agg_dec *d)
{
	free(d->groups);
	d->groups = NULL;
	d->rx.n = d->rx.cap = 0;
}

int xp_capture_agg_dec_reply(struct xp_capture_agg_dec *d, const struct xprobe_agent_reply *rep,
			     struct xp_error *err)
{
	int rc = xp_capture_table_rx_header(&d->rx, rep, err);

	if (rc)
		return rc;
	if (rep->op == XPROBE_AGENT_OP_ARM && (rep->offset || rep->retained || rep->observed))
		return bad(d, err, "retained", "an ARM reply with groups");
	return xp_capture_table_rx_accept(&d->rx, rep, (void **)&d->groups, sizeof(*d->groups),
					  err);
}

static bool name_has_nul(const struct xprobe_agent_group *g)
{
	return memchr(g->name, 0, g->name_len) != NULL;
}

static bool nonzero(const char *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (p[i])
			return true;
	return false;
}

/* One group on its own; 0 or the error. */
static int group_check(struct xp_capture_agg_dec *d, const struct xprobe_agent_group *g,
		       uint64_t idx, struct xp_error *err)
{
	bool kernel = g->kind == XPROBE_AGENT_KIND_KERNEL;
	unsigned __int128 lo, hi;

	if (!kernel && g->kind != XPROBE_AGENT_KIND_MEMCPY && g->kind != XPROBE_AGENT_KIND_MEMSET)
		return bad(d, err, "kind", "group %" PRIu64 " has kind %" PRIu32, idx, g->kind);
	if (!g->count)
		return bad(d, err, "count", "group %" PRIu64 " is empty", idx);
	lo = (unsigned __int128)g->min_ns * g->count;
	hi = (unsigned __int128)g->max_ns * g->count;
	if (g->min_ns > g->max_ns || lo > g->total_ns || hi < g->total_ns)
		return bad(d, err, "total_ns",
			   "group %" PRIu64 ": %" PRIu64 " activities of %" PRIu64 " ns in total "
			   "cannot lie between %" PRIu64 " and %" PRIu64 " ns each",
			   idx, g->count, g->total_ns, g->min_ns, g->max_ns);
	if (g->memcpy_kind > XPROBE_AGENT_MEMCPY_PTOP ||
	    (g->kind != XPROBE_AGENT_KIND_MEMCPY && g->memcpy_kind))
		return bad(d, err, "memcpy_kind", "group %" PRIu64 " has memcpy kind %" PRIu32, idx,
			   g->memcpy_kind);
	if (g->flags & ~(kernel ? XPROBE_RECF_NAME_COMPLETE : 0u))
		return bad(d, err, "flags", "group %" PRIu64 " has flags 0x%x", idx, g->flags);
	if (g->name_len > XPROBE_NAME_MAX || (!kernel && g->name_len))
		return bad(d, err, "name_len", "group %" PRIu64 " has a %u-byte name", idx,
			   g->name_len);
	if (name_has_nul(g))
		return bad(d, err, "name", "NUL inside group %" PRIu64 "'s name", idx);
	if (nonzero(g->name, g->name_len, sizeof(g->name)))
		return bad(d, err, "name", "bytes after group %" PRIu64 "'s name", idx);
	if (kernel && g->bytes)
		return bad(d, err, "bytes", "kernel group %" PRIu64 " has %" PRIu64 " bytes", idx,
			   g->bytes);
	return 0;
}

static bool same_key(const struct xp_capture_agg_group *a, const struct xprobe_agent_group *g)
{
	return a->kind == g->kind && a->device == g->device && a->memcpy_kind == g->memcpy_kind &&
	       a->name_complete == !!(g->flags & XPROBE_RECF_NAME_COMPLETE) &&
	       a->name_len == g->name_len && !memcmp(a->name, g->name, g->name_len);
}

/* Group @idx sent again: the same key, and it only grew. */
static int regrown_check(struct xp_capture_agg_dec *d, const struct xp_capture_agg_group *old,
			 const struct xprobe_agent_group *g, uint64_t idx, struct xp_error *err)
{
	if (!same_key(old, g))
		return bad(d, err, "key", "group %" PRIu64 " changed its key between replies", idx);
	if (g->count < old->count || g->total_ns < old->total_ns || g->bytes < old->bytes ||
	    g->min_ns > old->min_ns || g->max_ns < old->max_ns)
		return bad(d, err, "count", "group %" PRIu64 " shrank between replies", idx);
	return 0;
}

int xp_capture_agg_dec_chunk(struct xp_capture_agg_dec *d, const void *buf, size_t len,
			     struct xp_error *err)
{
	int64_t count = xp_capture_table_rx_chunk(&d->rx, len, err);
	const uint8_t *p = buf;

	if (count < 0)
		return (int)count;
	for (int64_t i = 0; i < count; i++) {
		struct xprobe_agent_group g;
		struct xp_capture_agg_group *x;
		uint64_t idx = d->rx.next;
		int rc;

		memcpy(&g, p + i * GROUP_SIZE, sizeof(g));
		rc = group_check(d, &g, idx, err);
		if (rc)
			return rc;
		/* next < retained <= cap: announced, so room was made */
		x = &d->groups[idx];
		if (idx < d->rx.n) {
			rc = regrown_check(d, x, &g, idx, err);
			if (rc)
				return rc;
		}
		x->count = g.count;
		x->total_ns = g.total_ns;
		x->min_ns = g.min_ns;
		x->max_ns = g.max_ns;
		x->bytes = g.bytes;
		x->kind = g.kind;
		x->device = g.device;
		x->memcpy_kind = g.memcpy_kind;
		x->name_complete = g.flags & XPROBE_RECF_NAME_COMPLETE;
		x->name_len = g.name_len;
		memcpy(x->name, g.name, g.name_len);
		x->name[g.name_len] = '\0';
		xp_capture_table_rx_took(&d->rx);
	}
	xp_capture_table_rx_chunk_done(&d->rx, len);
	return 0;
}

static int key_cmp(const void *pa, const void *pb)
{
	const struct xp_capture_agg_group *a = *(const struct xp_capture_agg_group *const *)pa;
	const struct xp_capture_agg_group *b = *(const struct xp_capture_agg_group *const *)pb;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->memcpy_kind != b->memcpy_kind)
		return a->memcpy_kind < b->memcpy_kind ? -1 : 1;
	if (a->name_complete != b->name_complete)
		return a->name_complete ? 1 : -1;
	if (a->name_len != b->name_len)
		return a->name_len < b->name_len ? -1 : 1;
	return memcmp(a->name, b->name, a->name_len);
}

int xp_capture_agg_dec_end(struct xp_capture_agg_dec *d, struct xp_error *err)
{
	const struct xp_capture_agg_group **v;
	uint64_t sum = 0;
	int rc = 0;

	rc = xp_capture_table_rx_end(&d->rx, err);
	if (rc <= 0)
		return rc;
	rc = 0;
	for (size_t i = 0; i < d->rx.n; i++) {
		if (sum + d->groups[i].count < sum)
			return bad(d, err, "count", "the groups' counts overflow");
		sum += d->groups[i].count;
	}
	if (sum > d->rx.st.observed)
		return bad(d, err, "observed",
			   "aggregate activity counters are inconsistent: grouped=%" PRIu64
			   ", observed=%" PRIu64,
			   sum, d->rx.st.observed);
	d->grouped = sum;
	if (d->rx.n < 2)
		return 0;
	v = malloc(d->rx.n * sizeof(*v));
	if (!v)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	for (size_t i = 0; i < d->rx.n; i++)
		v[i] = &d->groups[i];
	qsort(v, d->rx.n, sizeof(*v), key_cmp);
	for (size_t i = 1; i < d->rx.n && !rc; i++)
		if (!key_cmp(&v[i - 1], &v[i]))
			rc = bad(d, err, "key", "groups %td and %td share a key",
				 v[i - 1] - d->groups, v[i] - d->groups);
	free(v);
	return rc;
}

int xp_capture_agg_dec_buf(struct xp_capture_agg_dec *d, const void *buf, size_t len,
			   struct xp_error *err)
{
	struct xp_capture_agent_sink s = { .agg = d };

	return xp_capture_agent_sink_buf(&s, buf, len, err);
}
