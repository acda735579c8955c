/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_agent.c - the Agent's control-socket replies and record packets
 * into events (decode_agent.h lists every check).  The peer is another
 * process, possibly hostile or of another release: nothing in a reply is
 * used before it is checked, every count is bounded before it sizes a
 * loop, and records are copied into an aligned buffer before they are
 * read (a packet has no alignment promise in a fuzz input).
 *
 * Records map to events through record_events.c, the mapping .xtf files
 * use, in commit order: a process range's start registers it and its end
 * (possibly a snapshot later, on another thread) removes it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/cancel.h"
#include "../model/names.h"
#include "agent_sink.h"
#include "decode_agent.h"
#include "record_events.h"

#define HINT_SKEW "rebuild xprobe and libxprobe from the same release"

static const char *const op_names[] = {
	[XPROBE_AGENT_OP_HELLO] = "hello",	 [XPROBE_AGENT_OP_ARM] = "arm",
	[XPROBE_AGENT_OP_SNAPSHOT] = "snapshot", [XPROBE_AGENT_OP_STOP] = "stop",
	[XPROBE_AGENT_OP_CLOSE] = "close",
};

static const char *const state_names[] = {
	[XPROBE_AGENT_IDLE] = "idle",
	[XPROBE_AGENT_ACTIVE] = "active",
	[XPROBE_AGENT_LIMIT_REACHED] = "limit_reached",
	[XPROBE_AGENT_STOPPED] = "stopped",
	[XPROBE_AGENT_FAILED] = "failed",
};

static const char *const stop_names[] = {
	[XPROBE_AGENT_STOP_NONE] = "none",
	[XPROBE_AGENT_STOP_REQUESTED] = "requested",
	[XPROBE_AGENT_STOP_RECORD_LIMIT] = "record_limit",
	[XPROBE_AGENT_STOP_BACKEND_ERROR] = "backend_error",
};

const char *xp_capture_agent_op_name(uint32_t op)
{
	return XP_NAME_OF(op_names, op, "unknown");
}

const char *xp_capture_agent_state_name(uint32_t state)
{
	return XP_NAME_OF(state_names, state, "unknown");
}

const char *xp_capture_agent_stop_reason_name(uint32_t reason)
{
	return XP_NAME_OF(stop_names, reason, "unknown");
}

int xp_capture_agent_vfail(struct xp_error *err, const char *field, const char *hint,
			   const char *where, const char *fmt, va_list ap)
{
	char why[256];

	vsnprintf(why, sizeof(why), fmt, ap);
	xp_error_detail_str(err, "field", field);
	xp_error_hint(err, "%s", hint);
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "%s: %s", where, why);
}

/* A malformed reply header: TRACE_EXPORT_FAILED naming @field. */
static int __attribute__((format(printf, 4, 5)))
reply_bad(struct xp_error *err, uint32_t op, const char *field, const char *fmt, ...)
{
	char where[64];
	va_list ap;
	int rc;

	snprintf(where, sizeof(where), "the Agent sent a malformed %s reply",
		 xp_capture_agent_op_name(op));
	xp_error_detail_str(err, "op", xp_capture_agent_op_name(op));
	va_start(ap, fmt);
	rc = xp_capture_agent_vfail(err, field, HINT_SKEW, where, fmt, ap);
	va_end(ap);
	return rc;
}

static bool has_records(uint32_t op)
{
	return op == XPROBE_AGENT_OP_SNAPSHOT || op == XPROBE_AGENT_OP_STOP;
}

int xp_capture_agent_reply_check(const void *buf, size_t len, uint32_t op, struct xp_error *err)
{
	struct xprobe_agent_reply r;
	uint64_t min_chunks;
	bool hist;

	if (len != sizeof(r))
		return reply_bad(err, op, "size", "%zu bytes, expected %zu", len, sizeof(r));
	memcpy(&r, buf, sizeof(r));
	if (memcmp(r.magic, XPROBE_AGENT_REPLY_MAGIC, sizeof(r.magic)))
		return reply_bad(err, op, "magic", "bad magic");
	if (r.version != XPROBE_AGENT_PROTO_VERSION)
		return reply_bad(err, op, "version",
				 "control protocol version %" PRIu32 ", this xprobe speaks %u",
				 r.version, XPROBE_AGENT_PROTO_VERSION);
	if (r.size != sizeof(r))
		return reply_bad(err, op, "size", "size field %" PRIu32 ", expected %zu", r.size,
				 sizeof(r));
	if (r.op != op)
		return reply_bad(err, op, "op", "answers op %" PRIu32 " (%s)", r.op,
				 xp_capture_agent_op_name(r.op));
	if (r.status > 0 || r.status <= -XPROBE_E__LAST)
		return reply_bad(err, op, "status", "status %" PRId32 " is no error code",
				 r.status);
	if (r.features & ~XPROBE_AGENT_F__ALL)
		return reply_bad(err, op, "features", "unknown feature bits 0x%" PRIx32,
				 r.features & ~XPROBE_AGENT_F__ALL);
	if (r.state > XPROBE_AGENT_FAILED)
		return reply_bad(err, op, "state", "capture state %" PRIu32, r.state);
	if (r.stop_reason > XPROBE_AGENT_STOP_BACKEND_ERROR)
		return reply_bad(err, op, "stop_reason", "stop reason %" PRIu32, r.stop_reason);
	if (r.mode > XPROBE_AGENT_MODE_HISTOGRAM)
		return reply_bad(err, op, "mode", "mode %" PRIu32, r.mode);
	hist = r.mode == XPROBE_AGENT_MODE_HISTOGRAM;
	if (!memchr(r.message, '\0', sizeof(r.message)))
		return reply_bad(err, op, "message", "message is not NUL-terminated");
	if ((r.state == XPROBE_AGENT_ACTIVE || r.state == XPROBE_AGENT_LIMIT_REACHED) &&
	    (!r.arm_ns || !r.capacity))
		return reply_bad(err, op, "arm_ns", "an armed capture without %s",
				 r.arm_ns ? "capacity" : "ARM time");
	if (r.state == XPROBE_AGENT_ACTIVE && r.stop_reason != XPROBE_AGENT_STOP_NONE)
		return reply_bad(err, op, "stop_reason", "an active capture with stop reason %s",
				 xp_capture_agent_stop_reason_name(r.stop_reason));
	if (r.state == XPROBE_AGENT_LIMIT_REACHED &&
	    r.stop_reason != XPROBE_AGENT_STOP_RECORD_LIMIT)
		return reply_bad(err, op, "stop_reason", "a full capture with stop reason %s",
				 xp_capture_agent_stop_reason_name(r.stop_reason));
	if (r.capacity > XPROBE_AGENT_CAPACITY_MAX)
		return reply_bad(err, op, "capacity", "capacity %" PRIu64 " above %u", r.capacity,
				 XPROBE_AGENT_CAPACITY_MAX);
	if (r.retained > r.capacity)
		return reply_bad(err, op, "retained",
				 "%" PRIu64 " records retained in a capacity of %" PRIu64,
				 r.retained, r.capacity);
	/* a histogram capture holds its total from ARM on, observed counts pairs */
	if (!hist && r.retained > r.observed)
		return reply_bad(err, op, "observed",
				 "%" PRIu64 " records retained but %" PRIu64 " observed",
				 r.retained, r.observed);
	if (r.nrecords > r.retained || r.offset > r.retained - r.nrecords)
		return reply_bad(err, op, "offset",
				 "records %" PRIu64 "+%" PRIu64 " beyond the %" PRIu64 " retained",
				 r.offset, r.nrecords, r.retained);
	if ((!has_records(op) || r.status) && (r.nrecords || r.bytes || r.nchunks))
		return reply_bad(err, op, "nrecords", "%s carries records",
				 r.status ? "an error reply" : "a reply of this op");
	/* nrecords <= retained <= 2^24, so neither product wraps */
	if (hist ? r.bytes != r.nrecords * sizeof(struct xprobe_agent_hist) :
		   (r.bytes < r.nrecords * XPROBE_RECORD_HDR_SIZE ||
		    r.bytes > r.nrecords * XPROBE_RECORD_MAX_SIZE))
		return reply_bad(err, op, "bytes",
				 "%" PRIu64 " bytes cannot hold %" PRIu64 " records", r.bytes,
				 r.nrecords);
	min_chunks = (r.bytes + XPROBE_AGENT_CHUNK_MAX - 1) / XPROBE_AGENT_CHUNK_MAX;
	if ((r.nrecords == 0) != (r.nchunks == 0) || r.nchunks < min_chunks ||
	    r.nchunks > r.nrecords)
		return reply_bad(err, op, "nchunks",
				 "%" PRIu32 " packets for %" PRIu64 " records of %" PRIu64 " bytes",
				 r.nchunks, r.nrecords, r.bytes);
	return 0;
}

/* --- the decoder ------------------------------------------------------- */

int xp_capture_agent_dec_vbad(struct xp_capture_agent_dec *d, struct xp_error *err,
			      const char *field, const char *fmt, va_list ap)
{
	char where[64];

	snprintf(where, sizeof(where), "failed to decode the Agent capture of PID %" PRIu32,
		 d->pid);
	xp_error_detail_u64(err, "pid", d->pid);
	xp_error_detail_u64(err, "record_offset", d->st.records);
	return xp_capture_agent_vfail(err, field, HINT_SKEW, where, fmt, ap);
}

/* A broken stream or sequence: TRACE_EXPORT_FAILED naming @field. */
static int __attribute__((format(printf, 4, 5)))
dec_bad(struct xp_capture_agent_dec *d, struct xp_error *err, const char *field, const char *fmt,
	...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = xp_capture_agent_dec_vbad(d, err, field, fmt, ap);
	va_end(ap);
	return rc;
}

/* record_events.c's failures (out of memory, push level) */
struct fail_ctx {
	struct xp_capture_agent_dec *d;
	struct xp_error *err;
};

static int map_fail(void *ctx, const char *what)
{
	struct fail_ctx *f = ctx;

	return dec_bad(f->d, f->err, "records", "%s", what);
}

int xp_capture_agent_dec_init(struct xp_capture_agent_dec *d, struct xp_capture *c, uint32_t pid,
			      uint64_t start_time)
{
	memset(d, 0, sizeof(*d));
	d->c = c;
	d->pid = pid;
	d->start_time = start_time;
	d->map = malloc(sizeof(*d->map));
	if (!d->map)
		return -ENOMEM;
	xp_rec_map_init(d->map, c, pid, start_time, map_fail, NULL);
	return 0;
}

void xp_capture_agent_dec_free(struct xp_capture_agent_dec *d)
{
	if (d->map) {
		xp_rec_map_free(d->map);
		free(d->map);
	}
	d->map = NULL;
}

void xp_capture_agent_stats_take(struct xp_capture_agent_stats *st,
				 const struct xprobe_agent_reply *rep)
{
	st->valid = true;
	st->features = rep->features;
	st->state = rep->state;
	st->stop_reason = rep->stop_reason;
	st->arm_ns = rep->arm_ns;
	st->capacity = rep->capacity;
	st->observed = rep->observed;
	st->retained = rep->retained;
	st->dropped = rep->dropped;
	st->unknown = rep->unknown;
}

int xp_capture_agent_dec_reply(struct xp_capture_agent_dec *d, const struct xprobe_agent_reply *rep,
			       struct xp_error *err)
{
	const struct xp_capture_agent_stats *p = &d->st;
	struct xp_capture *c = d->c;

	if (!d->map)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "agent decoder not initialized");
	if (d->in_reply)
		return dec_bad(d, err, "op", "a %s reply before the last one's records ended",
			       xp_capture_agent_op_name(rep->op));
	if (rep->status)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "agent decoder given an error reply (status %" PRId32 ")",
				    rep->status);
	if (rep->op != XPROBE_AGENT_OP_ARM && !has_records(rep->op))
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "agent decoder given a %s reply",
				    xp_capture_agent_op_name(rep->op));
	if (rep->op == XPROBE_AGENT_OP_ARM && p->valid)
		return dec_bad(d, err, "op", "a second ARM reply in one capture");
	if (d->pid && rep->pid != d->pid)
		return dec_bad(d, err, "pid", "the reply comes from PID %" PRIu32, rep->pid);
	if (d->start_time && rep->start_time != d->start_time)
		return dec_bad(d, err, "start_time",
			       "the reply comes from a process started at %" PRIu64
			       ", not %" PRIu64,
			       rep->start_time, d->start_time);
	if (rep->offset != p->records)
		return dec_bad(d, err, "offset",
			       "records from %" PRIu64 " follow, %" PRIu64 " were received",
			       rep->offset, p->records);
	if (p->valid) {
		if (rep->capacity != p->capacity)
			return dec_bad(d, err, "capacity",
				       "capacity changed from %" PRIu64 " to %" PRIu64, p->capacity,
				       rep->capacity);
		if (p->arm_ns && rep->arm_ns != p->arm_ns)
			return dec_bad(d, err, "arm_ns", "the capture was armed again");
		if (rep->observed < p->observed || rep->retained < p->retained ||
		    rep->dropped < p->dropped || rep->unknown < p->unknown)
			return dec_bad(d, err, "counters",
				       "a counter went down (observed %" PRIu64 " -> %" PRIu64
				       ", retained %" PRIu64 " -> %" PRIu64 ", dropped %" PRIu64
				       " -> %" PRIu64 ", unknown %" PRIu64 " -> %" PRIu64 ")",
				       p->observed, rep->observed, p->retained, rep->retained,
				       p->dropped, rep->dropped, p->unknown, rep->unknown);
	}
	/* HOST_MONOTONIC cleared is cleared for the whole capture (agent.h):
	 * from the first reply without it on, the activity events decoded so
	 * far and later are in the cupti clock, never compared with host
	 * times (a later reply that claims it again changes nothing) */
	if (!(rep->features & XPROBE_AGENT_F_HOST_MONOTONIC) &&
	    d->map->activity_clock != XP_CLOCK_CUPTI) {
		d->map->activity_clock = XP_CLOCK_CUPTI;
		for (size_t i = 0; i < c->count; i++)
			if (c->events[i].source == XP_SRC_CUPTI_ACTIVITY)
				c->events[i].clock_domain = XP_CLOCK_CUPTI;
	}
	c->dropped += rep->dropped - p->dropped;
	c->unknown_records += rep->unknown - p->unknown;
	if (rep->state == XPROBE_AGENT_LIMIT_REACHED ||
	    rep->stop_reason == XPROBE_AGENT_STOP_RECORD_LIMIT)
		c->record_limit_reached = true;
	c->cupti.present = true;
	c->cupti.record_capacity = rep->capacity;
	c->cupti.observed_records = rep->observed;
	c->cupti.dropped_records = rep->dropped;
	xp_capture_agent_stats_take(&d->st, rep);
	if (rep->op == XPROBE_AGENT_OP_ARM)
		return 0;
	d->in_reply = true;
	d->op = rep->op;
	d->rec_left = rep->nrecords;
	d->bytes_left = rep->bytes;
	d->chunks_left = rep->nchunks;
	d->events_before = c->count;
	d->obs_before = d->map->observed;
	return 0;
}

static bool type_named(uint32_t type)
{
	return type == XPROBE_EV_NVTX_PUSH || type == XPROBE_EV_NVTX_START ||
	       type == XPROBE_EV_NVTX_MARK || type == XPROBE_EV_EXEC_BEGIN ||
	       type == XPROBE_EV_EXEC_END || type == XPROBE_EV_DEVICE_ACTIVITY ||
	       type == XPROBE_EV_CUDA_API_ENTRY || type == XPROBE_EV_CUDA_API_EXIT;
}

static bool type_activity(uint32_t type)
{
	return type == XPROBE_EV_CUDA_KERNEL || type == XPROBE_EV_CUDA_MEMCPY ||
	       type == XPROBE_EV_CUDA_MEMSET;
}

/* What an Agent capture holds: NVTX ranges, CUDA API calls and activity. */
static bool type_capture(uint32_t type)
{
	return (type >= XPROBE_EV_NVTX_PUSH && type <= XPROBE_EV_NVTX_END) ||
	       type == XPROBE_EV_CUDA_API_ENTRY || type == XPROBE_EV_CUDA_API_EXIT ||
	       type_activity(type);
}

/* A byte of @p[from, to) that is not zero. */
static bool nonzero(const uint8_t *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (p[i])
			return true;
	return false;
}

/*
 * A CUDA activity record (struct xprobe_cuda_activity): what the .xtf
 * reader checks of one (docs/xtf-format.md, "What the reader checks"),
 * for an Agent capture: no thread, 104 bytes plus a kernel's name, an
 * end not before the start, no execution id (a session's), every field
 * record.h leaves zero for the type zero, a memcpy kind of 0..5, no flag
 * but a kernel's NAME_COMPLETE.
 */
static int activity_check(struct xp_capture_agent_dec *d, const struct xprobe_record *r,
			  struct xp_error *err)
{
	const struct xprobe_cuda_activity *a = (const struct xprobe_cuda_activity *)r;
	const uint8_t *p = (const uint8_t *)r;
	bool kernel = r->type == XPROBE_EV_CUDA_KERNEL;
	bool copy = r->type == XPROBE_EV_CUDA_MEMCPY;

	if (r->tid)
		return dec_bad(d, err, "tid", "a CUDA activity record with thread %u", r->tid);
	if (r->size < XPROBE_CUDA_ACTIVITY_SIZE ||
	    r->size != ((XPROBE_CUDA_ACTIVITY_SIZE + r->name_len + 7u) & ~7u) ||
	    r->name_len > XPROBE_NAME_MAX || (!kernel && r->name_len))
		return dec_bad(d, err, "size",
			       "a %u-byte CUDA activity record (type %u) with a %u-byte name",
			       r->size, r->type, r->name_len);
	if (r->flags & ~(kernel ? XPROBE_RECF_NAME_COMPLETE : 0u))
		return dec_bad(d, err, "flags", "CUDA activity record flags 0x%x", r->flags);
	if (r->a0 < r->ts)
		return dec_bad(d, err, "a0", "a CUDA activity that ends before it starts");
	if (r->a1)
		return dec_bad(d, err, "a1", "an execution id in an Agent capture");
	if (memchr(p + XPROBE_CUDA_ACTIVITY_SIZE, 0, r->name_len))
		return dec_bad(d, err, "name", "NUL inside the kernel name");
	if (nonzero(p, XPROBE_CUDA_ACTIVITY_SIZE + r->name_len, r->size))
		return dec_bad(d, err, "name", "non-zero padding after the kernel name");
	if (a->reserved)
		return dec_bad(d, err, "reserved", "reserved field is %u", a->reserved);
	if ((kernel && a->bytes) ||
	    (!copy && (a->runtime_correlation_id || a->memcpy_kind || a->raw_copy_kind)) ||
	    (r->type != XPROBE_EV_CUDA_MEMSET && a->memset_value) ||
	    (!kernel && nonzero(p, offsetof(struct xprobe_cuda_activity, grid_x),
				offsetof(struct xprobe_cuda_activity, reserved))))
		return dec_bad(d, err, "fields",
			       "a CUDA activity record (type %u) with fields of another type",
			       r->type);
	if (a->memcpy_kind > XPROBE_AGENT_MEMCPY_PTOP)
		return dec_bad(d, err, "memcpy_kind", "memcpy kind %u", a->memcpy_kind);
	return 0;
}

/* A CUDA API record: a thread, a domain, a correlation id, a name. */
static int api_check(struct xp_capture_agent_dec *d, const struct xprobe_record *r,
		     struct xp_error *err)
{
	uint32_t domain = (uint32_t)r->a1;

	if (domain != XPROBE_CUDA_DOMAIN_DRIVER && domain != XPROBE_CUDA_DOMAIN_RUNTIME)
		return dec_bad(d, err, "a1", "CUDA API domain %u", domain);
	if (!(r->flags & XPROBE_RECF_CONTEXT) != !(r->a1 >> 32))
		return dec_bad(d, err, "a1", "a context id 0x%" PRIx64 " %s the CONTEXT flag",
			       r->a1 >> 32, r->flags & XPROBE_RECF_CONTEXT ? "zero with" : "without");
	if (!r->a0 || r->a0 > UINT32_MAX)
		return dec_bad(d, err, "a0", "CUDA correlation id %" PRIu64, r->a0);
	if (!r->name_len)
		return dec_bad(d, err, "name_len", "a CUDA API record without a name");
	if (r->flags & XPROBE_RECF_NAME_UNSUPPORTED)
		return dec_bad(d, err, "flags", "a CUDA API record flagged NAME_UNSUPPORTED");
	return 0;
}

/* Check one record of @size bytes (copied to @r); 0 or the error. */
static int record_check(struct xp_capture_agent_dec *d, const struct xprobe_record *r,
			struct xp_error *err)
{
	const uint8_t *p = (const uint8_t *)r;
	int rc;

	if (r->type == XPROBE_EV_PAD)
		return dec_bad(d, err, "type", "a pad record in a capture");
	if (r->type >= XPROBE_EV__COUNT)
		return 0; /* a later release's type: counted, not read */
	if (!type_capture(r->type))
		return dec_bad(d, err, "type", "record type %u is no capture record", r->type);
	if (!r->ts)
		return dec_bad(d, err, "ts", "zero timestamp");
	if (type_activity(r->type))
		return activity_check(d, r, err);
	if (!r->tid)
		return dec_bad(d, err, "tid", "%s record without a thread",
			       r->type <= XPROBE_EV_NVTX_END ? "NVTX" : "CUDA API");
	if (r->flags & ~XPROBE_RECF__ALL)
		return dec_bad(d, err, "flags", "unknown record flags 0x%x", r->flags);
	if ((r->flags & XPROBE_RECF_CONTEXT) && r->type != XPROBE_EV_CUDA_API_ENTRY &&
	    r->type != XPROBE_EV_CUDA_API_EXIT)
		return dec_bad(d, err, "flags", "a context flag on record type %u", r->type);
	if (r->type == XPROBE_EV_CUDA_API_ENTRY || r->type == XPROBE_EV_CUDA_API_EXIT) {
		rc = api_check(d, r, err);
		if (rc)
			return rc;
	}
	if (!type_named(r->type)) {
		if (r->name_len || r->flags || r->size != XPROBE_RECORD_HDR_SIZE)
			return dec_bad(d, err, "size",
				       "record type %u is %u bytes with a %u-byte name", r->type,
				       r->size, r->name_len);
		return 0;
	}
	if (r->name_len > XPROBE_NAME_MAX ||
	    r->size != ((XPROBE_RECORD_HDR_SIZE + r->name_len + 7u) & ~7u))
		return dec_bad(d, err, "name_len", "a %u-byte record with a %u-byte name", r->size,
			       r->name_len);
	if (memchr(p + XPROBE_RECORD_HDR_SIZE, 0, r->name_len))
		return dec_bad(d, err, "name", "NUL inside the name");
	for (size_t i = XPROBE_RECORD_HDR_SIZE + r->name_len; i < r->size; i++)
		if (p[i])
			return dec_bad(d, err, "name", "non-zero padding after the name");
	if ((r->flags & XPROBE_RECF_NAME_UNSUPPORTED) &&
	    (r->name_len || (r->flags & XPROBE_RECF_NAME_COMPLETE)))
		return dec_bad(d, err, "flags", "an unsupported-name record carries a name");
	return 0;
}

int xp_capture_agent_dec_chunk(struct xp_capture_agent_dec *d, const void *buf, size_t len,
			       struct xp_error *err)
{
	const uint8_t *p = buf;
	struct fail_ctx fc = { d, err };
	size_t off = 0;
	int rc = 0;

	if (!d->in_reply || !d->chunks_left)
		return dec_bad(d, err, "nchunks", "a record packet beyond those announced");
	if (!len || len > XPROBE_AGENT_CHUNK_MAX || len > d->bytes_left)
		return dec_bad(d, err, "bytes",
			       "a %zu-byte record packet (at most %u, %" PRIu64 " bytes left)", len,
			       XPROBE_AGENT_CHUNK_MAX, d->bytes_left);
	d->map->fail_ctx = &fc;
	while (off < len) {
		union {
			struct xprobe_record r;
			uint8_t b[XPROBE_RECORD_MAX_SIZE];
		} u;
		uint16_t size;

		if (len - off < XPROBE_RECORD_HDR_SIZE) {
			rc = dec_bad(d, err, "size", "a record cut at the packet's end");
			goto out;
		}
		memcpy(&size, p + off, sizeof(size));
		if (size < XPROBE_RECORD_HDR_SIZE || size % 8 || size > XPROBE_RECORD_MAX_SIZE ||
		    size > len - off) {
			rc = dec_bad(d, err, "size", "record of %u bytes (%zu left in the packet)",
				     size, len - off);
			goto out;
		}
		if (!d->rec_left) {
			rc = dec_bad(d, err, "nrecords", "more records than announced");
			goto out;
		}
		memcpy(u.b, p + off, size);
		rc = record_check(d, &u.r, err);
		if (rc)
			goto out;
		if (u.r.type >= XPROBE_EV__COUNT) {
			d->st.unknown_types++;
			d->c->unknown_records++;
		} else {
			rc = xp_rec_map_host(d->map, &u.r);
			if (rc)
				goto out;
		}
		off += size;
		d->rec_left--;
		d->st.records++;
	}
	d->bytes_left -= len;
	d->chunks_left--;
out:
	d->map->fail_ctx = NULL;
	return rc;
}

/* Everything the open reply announced arrived: close it (no bound check). */
static int reply_close(struct xp_capture_agent_dec *d, struct xp_error *err)
{
	if (d->rec_left || d->bytes_left || d->chunks_left)
		return dec_bad(d, err, "nchunks",
			       "%" PRIu64 " records, %" PRIu64 " bytes in %" PRIu32
			       " packets announced did not arrive",
			       d->rec_left, d->bytes_left, d->chunks_left);
	d->in_reply = false;
	return 0;
}

int xp_capture_agent_dec_end(struct xp_capture_agent_dec *d, struct xp_error *err)
{
	int rc;

	if (!d->in_reply)
		return 0;
	rc = reply_close(d, err);
	if (rc)
		return rc;
	if (d->map->full) {
		char name[64];

		snprintf(name, sizeof(name), "the Agent capture of PID %" PRIu32, d->pid);
		return xp_error_event_limit(err, name,
					    d->events_before + (d->map->observed - d->obs_before),
					    d->c->max_events);
	}
	return 0;
}

int xp_capture_agent_dec_buf(struct xp_capture_agent_dec *d, const void *buf, size_t len,
			     struct xp_error *err)
{
	struct xp_capture_agent_sink s = { .rec = d };

	return xp_capture_agent_sink_buf(&s, buf, len, err);
}

/* --- a saved capture file (agent.h's struct xprobe_agent_capfile) ---------- */

#define HINT_FILE                                                                        \
	"an Agent capture file is what libxprobe writes for XPROBE_AGENT_OUTPUT, whole " \
	"(docs/agent.md, \"Saved captures\")"

/* A malformed file header: TRACE_EXPORT_FAILED naming @field. */
static int __attribute__((format(printf, 3, 4)))
file_bad(struct xp_error *err, const char *field, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = xp_capture_agent_vfail(err, field, HINT_FILE, "malformed Agent capture file", fmt, ap);
	va_end(ap);
	return rc;
}

int xp_capture_agent_file_check(const void *buf, size_t len, struct xprobe_agent_capfile *out,
				struct xp_error *err)
{
	struct xprobe_agent_capfile h;
	const struct xprobe_agent_reply *r = &h.reply;
	int rc;

	if (len < sizeof(h))
		return file_bad(err, "size", "%zu bytes, shorter than its %zu-byte header", len,
				sizeof(h));
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, XPROBE_AGENT_CAPFILE_MAGIC, sizeof(h.magic)))
		return file_bad(err, "magic", "bad magic");
	if (h.version != XPROBE_AGENT_CAPFILE_VERSION) {
		xp_error_hint(err, HINT_SKEW);
		return file_bad(err, "version",
				"capture file version %" PRIu32 ", this xprobe reads version %u",
				h.version, XPROBE_AGENT_CAPFILE_VERSION);
	}
	if (h.header_size != sizeof(h))
		return file_bad(err, "header_size", "header size %" PRIu32 ", expected %zu",
				h.header_size, sizeof(h));
	if (h.file_size != len)
		return file_bad(err, "file_size",
				"the header says %" PRIu64 " bytes, the file has %zu (cut short or "
				"grown)",
				h.file_size, len);
	if (h.flags & ~XPROBE_AGENT_CAPFILE_F__ALL)
		return file_bad(err, "flags", "unknown flags 0x%" PRIx32,
				h.flags & ~XPROBE_AGENT_CAPFILE_F__ALL);
	if ((h.flags & XPROBE_AGENT_CAPFILE_F_SIGNAL) ? (h.signal < 1 || h.signal > 64) :
							h.signal != 0)
		return file_bad(err, "signal", "signal %" PRIu32 " with flags 0x%" PRIx32, h.signal,
				h.flags);
	rc = xp_capture_agent_reply_check(r, sizeof(*r), XPROBE_AGENT_OP_STOP, err);
	if (rc)
		return rc;
	if (r->status)
		return file_bad(err, "status", "the capture's STOP failed with status %" PRId32,
				r->status);
	if (r->state != XPROBE_AGENT_STOPPED)
		return file_bad(err, "state", "a capture in state %s (a saved one is stopped)",
				xp_capture_agent_state_name(r->state));
	if (r->stop_reason != XPROBE_AGENT_STOP_REQUESTED &&
	    r->stop_reason != XPROBE_AGENT_STOP_RECORD_LIMIT)
		return file_bad(err, "stop_reason", "a capture stopped for %s",
				xp_capture_agent_stop_reason_name(r->stop_reason));
	if (!r->pid)
		return file_bad(err, "pid", "no process");
	if (r->offset || r->nrecords != r->retained)
		return file_bad(err, "nrecords",
				"records %" PRIu64 "+%" PRIu64 " of the %" PRIu64
				" retained (a saved capture holds them all)",
				r->offset, r->nrecords, r->retained);
	if (r->dropped > r->observed || r->observed - r->dropped != r->retained)
		return file_bad(err, "observed",
				"%" PRIu64 " records observed, %" PRIu64 " retained and %" PRIu64
				" dropped",
				r->observed, r->retained, r->dropped);
	if (r->bytes != len - sizeof(h))
		return file_bad(err, "bytes",
				"the reply announces %" PRIu64
				" bytes of records, the file holds %zu",
				r->bytes, len - sizeof(h));
	if (out)
		*out = h;
	return 0;
}

/*
 * The end of the record packet that starts at @start of the @n-byte record
 * stream @p: packets are cut before each record that would not fit in
 * XPROBE_AGENT_CHUNK_MAX, as the Agent cuts its replies.  A record whose
 * size is impossible, or that the stream's end cuts, ends the packet where
 * the bound would: xp_capture_agent_dec_chunk then says what is wrong with it.
 */
static size_t packet_end(const uint8_t *p, size_t n, size_t start)
{
	size_t lim = n - start < XPROBE_AGENT_CHUNK_MAX ? n : start + XPROBE_AGENT_CHUNK_MAX;
	size_t off = start;

	while (off < lim) {
		uint16_t size;

		if (n - off < XPROBE_RECORD_HDR_SIZE)
			return lim;
		memcpy(&size, p + off, sizeof(size));
		if (size < XPROBE_RECORD_HDR_SIZE || size % 8 || size > XPROBE_RECORD_MAX_SIZE)
			return lim;
		if (size > lim - off)
			return off > start ? off : lim;
		off += size;
	}
	return off;
}

int xp_capture_agent_dec_file(struct xp_capture_agent_dec *d, const void *buf, size_t len,
			      bool defer_limit, struct xp_error *err)
{
	struct xprobe_agent_capfile h;
	const uint8_t *p = (const uint8_t *)buf + sizeof(h);
	size_t n, off = 0;
	int rc;

	if (!d->map)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "agent decoder not initialized");
	rc = xp_capture_agent_file_check(buf, len, &h, err);
	if (rc)
		return rc;
	if (!d->pid) { /* the file says whose capture it is */
		d->pid = h.reply.pid;
		d->start_time = h.reply.start_time;
		d->map->pid = d->pid;
		d->map->start_time = d->start_time;
	}
	rc = xp_capture_agent_dec_reply(d, &h.reply, err);
	if (rc)
		return rc;
	/* the stream, replayed as the STOP reply's packets */
	n = len - sizeof(h);
	while (off < n) {
		size_t end = packet_end(p, n, off);

		if (xpc_cancel_signo())
			return xp_error_cancelled(err, "the Agent capture file");
		rc = xp_capture_agent_dec_chunk(d, p + off, end - off, err);
		if (rc)
			return rc;
		off = end;
	}
	rc = reply_close(d, err);
	if (rc)
		return rc;
	if (d->map->full && !defer_limit) {
		char name[64];

		snprintf(name, sizeof(name), "the Agent capture of PID %" PRIu32, d->pid);
		return xp_error_event_limit(err, name, d->map->observed, d->c->max_events);
	}
	return 0;
}
