/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request.c - the Agent's control-request decoder (request.h).
 *
 * A request arrives from another process: nothing in it is trusted until
 * every field has been checked here.  The rules are agent.h's, applied in
 * field order so a refusal names the first field that is wrong:
 *
 *   length   exactly sizeof(struct xprobe_agent_req) (352)
 *   magic    "XPAGREQ\0", version XPROBE_AGENT_PROTO_VERSION, size 352
 *   op       HELLO .. CLOSE
 *   ARM      mode EXACT, AGGREGATE or HISTOGRAM; capacity
 *            1..XPROBE_AGENT_CAPACITY_MAX (HISTOGRAM: groups,
 *            1..XPROBE_AGENT_HIST_GROUPS_MAX); offset 0 (HISTOGRAM: the
 *            in-flight slots, 1..XPROBE_AGENT_INFLIGHT_MAX); by 0
 *            (HISTOGRAM: NONE..DEVICE, STREAM and DEVICE only over
 *            activity kinds); nfilters 1..2; aggregate only over device
 *            activity kinds (KERNEL, MEMCPY, MEMSET); a histogram's
 *            filters all of one kind (its pairs are one lifecycle)
 *   others   mode, capacity, nfilters, by 0; offset 0 unless SNAPSHOT/STOP
 *   reserved 0 in every filter
 *   filters  used slots: kind NVTX_RANGE .. MEMSET; api_domain only for
 *            CUDA_API, memcpy_kind only for MEMCPY (else 0), both in range;
 *            name_match in range, ANY only with name_len 0 and any other
 *            with 1..127 bytes; MEMCPY/MEMSET take no name rule; the name's
 *            bytes hold no NUL and every byte after them is 0.
 *            unused slots (index >= nfilters): all bytes 0.
 *
 * The "zeros after" rules make every request have exactly one encoding, so
 * a client that leaves garbage in a field it thinks unused is told, not
 * silently half-understood.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "request.h"

static int refuse(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -XPROBE_E_INVALID_ARGUMENT;
}

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static const char *op_name(uint32_t op)
{
	switch (op) {
	case XPROBE_AGENT_OP_HELLO:
		return "HELLO";
	case XPROBE_AGENT_OP_ARM:
		return "ARM";
	case XPROBE_AGENT_OP_SNAPSHOT:
		return "SNAPSHOT";
	case XPROBE_AGENT_OP_STOP:
		return "STOP";
	case XPROBE_AGENT_OP_CLOSE:
		return "CLOSE";
	}
	return "?";
}

static int check_filter(const struct xprobe_agent_filter *f, unsigned i, char *why, size_t whylen)
{
	if (f->kind == XPROBE_AGENT_KIND_NONE || f->kind >= XPROBE_AGENT_KIND__COUNT)
		return refuse(why, whylen, "filter %u: kind %u is not one of 1..%u", i, f->kind,
			      XPROBE_AGENT_KIND__COUNT - 1);
	if (f->api_domain > XPROBE_AGENT_API_RUNTIME)
		return refuse(why, whylen, "filter %u: api_domain %u is not one of 0..2", i,
			      f->api_domain);
	if (f->api_domain && f->kind != XPROBE_AGENT_KIND_CUDA_API)
		return refuse(why, whylen,
			      "filter %u: api_domain %u given for a kind %u filter "
			      "(only CUDA_API filters have one)",
			      i, f->api_domain, f->kind);
	if (f->memcpy_kind > XPROBE_AGENT_MEMCPY_PTOP)
		return refuse(why, whylen, "filter %u: memcpy_kind %u is not one of 0..5", i,
			      f->memcpy_kind);
	if (f->memcpy_kind && f->kind != XPROBE_AGENT_KIND_MEMCPY)
		return refuse(why, whylen,
			      "filter %u: memcpy_kind %u given for a kind %u filter "
			      "(only MEMCPY filters have one)",
			      i, f->memcpy_kind, f->kind);
	if (f->name_match > XPROBE_AGENT_NAME_CONTAINS)
		return refuse(why, whylen, "filter %u: name_match %u is not one of 0..4", i,
			      f->name_match);
	if (f->name_len > XPROBE_NAME_MAX)
		return refuse(why, whylen, "filter %u: name_len %u is over %u bytes", i,
			      f->name_len, XPROBE_NAME_MAX);
	if (f->name_match == XPROBE_AGENT_NAME_ANY && f->name_len)
		return refuse(why, whylen, "filter %u: name_match ANY with a %u-byte name", i,
			      f->name_len);
	if (f->name_match != XPROBE_AGENT_NAME_ANY && !f->name_len)
		return refuse(why, whylen, "filter %u: name_match %u with an empty name", i,
			      f->name_match);
	if (f->name_match != XPROBE_AGENT_NAME_ANY &&
	    (f->kind == XPROBE_AGENT_KIND_MEMCPY || f->kind == XPROBE_AGENT_KIND_MEMSET))
		return refuse(why, whylen, "filter %u: kind %u records have no name to match", i,
			      f->kind);
	if (memchr(f->name, '\0', f->name_len))
		return refuse(why, whylen,
			      "filter %u: the name holds a NUL byte within its %u bytes", i,
			      f->name_len);
	if (!all_zero(f->name + f->name_len, sizeof(f->name) - f->name_len))
		return refuse(why, whylen, "filter %u: bytes after the %u-byte name are not zero",
			      i, f->name_len);
	if (f->reserved)
		return refuse(why, whylen, "filter %u: reserved is %u, not 0", i, f->reserved);
	return 0;
}

static bool device_kind(uint32_t kind)
{
	return kind == XPROBE_AGENT_KIND_KERNEL || kind == XPROBE_AGENT_KIND_MEMCPY ||
	       kind == XPROBE_AGENT_KIND_MEMSET;
}

int xpl_agent_req_decode(const void *buf, size_t len, struct xprobe_agent_req *req, char *why,
			 size_t whylen)
{
	struct xprobe_agent_req r;
	bool hist;
	int rc;

	if (why && whylen)
		why[0] = '\0';
	if (!buf || len != sizeof(r))
		return refuse(why, whylen, "a request is %zu bytes; this one is %zu", sizeof(r),
			      len);
	memcpy(&r, buf, sizeof(r));
	if (memcmp(r.magic, XPROBE_AGENT_REQ_MAGIC, sizeof(r.magic)) != 0)
		return refuse(why, whylen, "bad magic: not an xprobe Agent request");
	if (r.version != XPROBE_AGENT_PROTO_VERSION)
		return refuse(why, whylen, "protocol version %u; this Agent speaks %u", r.version,
			      XPROBE_AGENT_PROTO_VERSION);
	if (r.size != sizeof(r))
		return refuse(why, whylen, "size field %u; a request is %zu bytes", r.size,
			      sizeof(r));
	if (r.op < XPROBE_AGENT_OP_HELLO || r.op > XPROBE_AGENT_OP_CLOSE)
		return refuse(why, whylen, "op %u is not one of 1..5", r.op);
	if (r.by && (r.op != XPROBE_AGENT_OP_ARM || r.mode != XPROBE_AGENT_MODE_HISTOGRAM))
		return refuse(why, whylen, "by is %u, not 0 (only a HISTOGRAM ARM groups)", r.by);
	if (r.op != XPROBE_AGENT_OP_ARM) {
		if (r.mode || r.capacity || r.nfilters)
			return refuse(why, whylen,
				      "%s takes no mode, capacity or filters (mode %u, capacity "
				      "%llu, nfilters %u)",
				      op_name(r.op), r.mode, (unsigned long long)r.capacity,
				      r.nfilters);
		if (r.offset && r.op != XPROBE_AGENT_OP_SNAPSHOT && r.op != XPROBE_AGENT_OP_STOP)
			return refuse(why, whylen, "%s takes no offset (offset %llu)",
				      op_name(r.op), (unsigned long long)r.offset);
		if (!all_zero(r.filters, sizeof(r.filters)))
			return refuse(why, whylen,
				      "%s takes no filters: the filter bytes are not "
				      "zero",
				      op_name(r.op));
		goto ok;
	}
	if (r.mode > XPROBE_AGENT_MODE_HISTOGRAM)
		return refuse(why, whylen,
			      "ARM: mode %u is not EXACT (0), AGGREGATE (1) or HISTOGRAM (2)",
			      r.mode);
	hist = r.mode == XPROBE_AGENT_MODE_HISTOGRAM;
	if (r.capacity < 1 ||
	    r.capacity > (hist ? XPROBE_AGENT_HIST_GROUPS_MAX : XPROBE_AGENT_CAPACITY_MAX))
		return refuse(why, whylen, "ARM: capacity %llu is not in 1..%u",
			      (unsigned long long)r.capacity,
			      hist ? XPROBE_AGENT_HIST_GROUPS_MAX : XPROBE_AGENT_CAPACITY_MAX);
	if (!hist && r.offset)
		return refuse(why, whylen, "ARM: offset %llu, not 0", (unsigned long long)r.offset);
	if (hist && (r.offset < 1 || r.offset > XPROBE_AGENT_INFLIGHT_MAX))
		return refuse(why, whylen, "ARM: in-flight slots (offset) %llu are not in 1..%u",
			      (unsigned long long)r.offset, XPROBE_AGENT_INFLIGHT_MAX);
	if (hist && r.by >= XPROBE_AGENT_BY__COUNT)
		return refuse(why, whylen, "ARM: by %u is not one of 0..%u", r.by,
			      XPROBE_AGENT_BY__COUNT - 1);
	if (r.nfilters < 1 || r.nfilters > XPROBE_AGENT_MAX_FILTERS)
		return refuse(why, whylen, "ARM: nfilters %u is not in 1..%u", r.nfilters,
			      XPROBE_AGENT_MAX_FILTERS);
	for (unsigned i = 0; i < XPROBE_AGENT_MAX_FILTERS; i++) {
		if (i >= r.nfilters) {
			if (!all_zero(&r.filters[i], sizeof(r.filters[i])))
				return refuse(why, whylen,
					      "filter %u is past nfilters %u but not all zero", i,
					      r.nfilters);
			continue;
		}
		rc = check_filter(&r.filters[i], i, why, whylen);
		if (rc)
			return rc;
		if (r.mode == XPROBE_AGENT_MODE_AGGREGATE && !device_kind(r.filters[i].kind))
			return refuse(why, whylen,
				      "ARM: aggregate mode groups device activity "
				      "(KERNEL, MEMCPY, MEMSET); filter %u is kind %u",
				      i, r.filters[i].kind);
		if (hist && r.filters[i].kind != r.filters[0].kind)
			return refuse(why, whylen,
				      "ARM: a histogram pairs one lifecycle; filter %u is kind %u, "
				      "filter 0 kind %u",
				      i, r.filters[i].kind, r.filters[0].kind);
		if (hist && (r.by == XPROBE_AGENT_BY_STREAM || r.by == XPROBE_AGENT_BY_DEVICE) &&
		    !device_kind(r.filters[i].kind))
			return refuse(why, whylen,
				      "ARM: by %u (stream, device) groups device activity; filter "
				      "%u is kind %u",
				      r.by, i, r.filters[i].kind);
	}
ok:
	if (req)
		*req = r;
	return 0;
}

uint32_t xpl_agent_req_op(const void *buf, size_t len)
{
	uint32_t op;

	if (!buf || len < offsetof(struct xprobe_agent_req, op) + sizeof(op))
		return 0;
	memcpy(&op, (const char *)buf + offsetof(struct xprobe_agent_req, op), sizeof(op));
	return op >= XPROBE_AGENT_OP_HELLO && op <= XPROBE_AGENT_OP_CLOSE ? op : 0;
}
