/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_wire.h - building the Agent's wire messages in tests: a valid
 * reply header (include/xprobe/agent.h) and NVTX records
 * (include/xprobe/record.h) appended to a packet, so the decoder's tests
 * (test_capture_agent.c) and the client's fake servers
 * (test_agent_client.c) start from a well-formed message and break one
 * field at a time.  Header-only.
 */
#ifndef XP_TESTS_AGENT_WIRE_H
#define XP_TESTS_AGENT_WIRE_H

#include <stdint.h>
#include <string.h>

#include "xprobe/agent.h"
#include "xprobe/record.h"

/* A packet of records under construction. */
struct xpt_pkt {
	uint8_t b[XPROBE_AGENT_CHUNK_MAX + 256];
	size_t len;
	uint64_t n; /* records */
};

/* A good reply to @op: state ACTIVE, armed at 1000 ns, @capacity. */
static inline void xpt_reply(struct xprobe_agent_reply *r, uint32_t op, uint32_t pid,
			     uint64_t start_time, uint64_t capacity)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->magic, XPROBE_AGENT_REPLY_MAGIC, sizeof(r->magic));
	r->version = XPROBE_AGENT_PROTO_VERSION;
	r->op = op;
	r->size = sizeof(*r);
	r->features = XPROBE_AGENT_F_NVTX_ROUTED | XPROBE_AGENT_F_HOST_MONOTONIC;
	r->state = op == XPROBE_AGENT_OP_HELLO ? XPROBE_AGENT_IDLE : XPROBE_AGENT_ACTIVE;
	r->pid = pid;
	r->start_time = start_time;
	if (op != XPROBE_AGENT_OP_HELLO) {
		r->arm_ns = 1000;
		r->capacity = capacity;
	}
}

/* Announce @p's records at @offset in @r (retained/observed grow to fit). */
static inline void xpt_reply_records(struct xprobe_agent_reply *r, uint64_t offset,
				     const struct xpt_pkt *p, uint32_t nchunks)
{
	r->offset = offset;
	r->nrecords = p ? p->n : 0;
	r->bytes = p ? p->len : 0;
	r->nchunks = nchunks;
	if (r->retained < offset + r->nrecords)
		r->retained = offset + r->nrecords;
	if (r->observed < r->retained)
		r->observed = r->retained;
}

static inline void xpt_rec(struct xpt_pkt *p, uint16_t type, uint32_t tid, uint64_t ts,
			   uint32_t aux, uint64_t a0, const char *name, uint16_t flags)
{
	struct xprobe_record r;
	size_t nl = name ? strlen(name) : 0;
	size_t size = (XPROBE_RECORD_HDR_SIZE + nl + 7) & ~(size_t)7;

	memset(&r, 0, sizeof(r));
	r.size = (uint16_t)size;
	r.type = type;
	r.tid = tid;
	r.ts = ts;
	r.aux = aux;
	r.flags = flags;
	r.name_len = (uint16_t)nl;
	r.a0 = a0;
	memset(p->b + p->len, 0, size);
	memcpy(p->b + p->len, &r, sizeof(r));
	if (nl)
		memcpy(p->b + p->len + XPROBE_RECORD_HDR_SIZE, name, nl);
	p->len += size;
	p->n++;
}

static inline void xpt_push(struct xpt_pkt *p, uint32_t tid, uint64_t ts, uint32_t level,
			    const char *name)
{
	xpt_rec(p, XPROBE_EV_NVTX_PUSH, tid, ts, level, 0, name, XPROBE_RECF_NAME_COMPLETE);
}

static inline void xpt_pop(struct xpt_pkt *p, uint32_t tid, uint64_t ts, uint32_t level)
{
	xpt_rec(p, XPROBE_EV_NVTX_POP, tid, ts, level, 0, NULL, 0);
}

static inline void xpt_start(struct xpt_pkt *p, uint32_t tid, uint64_t ts, uint64_t id,
			     const char *name)
{
	xpt_rec(p, XPROBE_EV_NVTX_START, tid, ts, 0, id, name, XPROBE_RECF_NAME_COMPLETE);
}

static inline void xpt_end(struct xpt_pkt *p, uint32_t tid, uint64_t ts, uint64_t id)
{
	xpt_rec(p, XPROBE_EV_NVTX_END, tid, ts, 0, id, NULL, 0);
}

/* A CUDA API entry/exit record (record.h XPROBE_EV_CUDA_API_*). */
static inline void xpt_api(struct xpt_pkt *p, uint16_t type, uint32_t tid, uint64_t ts,
			   uint64_t corr, uint64_t domain, uint32_t cbid, const char *name)
{
	size_t start = p->len;

	xpt_rec(p, type, tid, ts, cbid, corr, name, XPROBE_RECF_NAME_COMPLETE);
	memcpy(p->b + start + 32, &domain, sizeof(domain)); /* a1 */
}

/* A CUDA activity record (struct xprobe_cuda_activity) from @a, with the
 * kernel name @name (NULL for copies and sets). */
static inline void xpt_act(struct xpt_pkt *p, const struct xprobe_cuda_activity *a,
			   const char *name)
{
	size_t nl = name ? strlen(name) : 0;
	size_t size = (XPROBE_CUDA_ACTIVITY_SIZE + nl + 7) & ~(size_t)7;
	struct xprobe_cuda_activity r = *a;

	r.hdr.size = (uint16_t)size;
	r.hdr.name_len = (uint16_t)nl;
	memset(p->b + p->len, 0, size);
	memcpy(p->b + p->len, &r, sizeof(r));
	if (nl)
		memcpy(p->b + p->len + XPROBE_CUDA_ACTIVITY_SIZE, name, nl);
	p->len += size;
	p->n++;
}

/* A zeroed activity of @type from @ts to @end with correlation @corr on
 * device 0, context 1, stream 7. */
static inline struct xprobe_cuda_activity xpt_activity(uint16_t type, uint64_t ts, uint64_t end,
						       uint32_t corr)
{
	struct xprobe_cuda_activity a;

	memset(&a, 0, sizeof(a));
	a.hdr.type = type;
	a.hdr.ts = ts;
	a.hdr.a0 = end;
	a.context_id = 1;
	a.stream_id = 7;
	a.correlation_id = corr;
	return a;
}

/* An aggregate group (struct xprobe_agent_group) appended to @p. */
static inline void xpt_group(struct xpt_pkt *p, uint32_t kind, uint32_t device,
			     uint32_t memcpy_kind, const char *name, uint16_t flags, uint64_t count,
			     uint64_t min_ns, uint64_t max_ns, uint64_t total_ns, uint64_t bytes)
{
	struct xprobe_agent_group g;

	memset(&g, 0, sizeof(g));
	g.count = count;
	g.min_ns = min_ns;
	g.max_ns = max_ns;
	g.total_ns = total_ns;
	g.bytes = bytes;
	g.kind = kind;
	g.device = device;
	g.memcpy_kind = memcpy_kind;
	g.flags = flags;
	if (name) {
		g.name_len = (uint16_t)strlen(name);
		memcpy(g.name, name, g.name_len);
	}
	memcpy(p->b + p->len, &g, sizeof(g));
	p->len += sizeof(g);
	p->n++;
}

#endif /* XP_TESTS_AGENT_WIRE_H */
