/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_capture_agent.c - the Agent capture decoder (src/capture/
 * decode_agent.c): NVTX records from the socket become the events the
 * .xtf mapping makes, in pieces (a range ending a snapshot after it
 * began, on another thread), with the counters the result reports; and
 * every malformed header, sequence, packet and record is refused with
 * TRACE_EXPORT_FAILED naming its field.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent_wire.h"
#include "capture/decode_agent.h"
#include "capture/record_events.h"
#include "capture_text.h"
#include "error_text.h"
#include "testlib.h"

#define PID 4242u
#define START 777u

static struct xpt_pkt pkt;

/* A decoder over a fresh capture of @max events. */
static void dec_open(struct xp_capture_agent_dec *d, struct xp_capture *c, size_t max)
{
	xp_capture_init(c, max);
	CHECK(xp_capture_agent_dec_init(d, c, PID, START) == 0);
}

static void dec_close(struct xp_capture_agent_dec *d, struct xp_capture *c)
{
	xp_capture_agent_dec_free(d);
	xp_capture_free(c);
}

/* Feed one reply and @p as one packet (or none). */
static int feed(struct xp_capture_agent_dec *d, const struct xprobe_agent_reply *r,
		const struct xpt_pkt *p, struct xp_error *err)
{
	int rc = xp_capture_agent_reply_check(r, sizeof(*r), r->op, err);

	if (!rc)
		rc = xp_capture_agent_dec_reply(d, r, err);
	if (!rc && p && p->len)
		rc = xp_capture_agent_dec_chunk(d, p->b, p->len, err);
	if (!rc)
		rc = xp_capture_agent_dec_end(d, err);
	return rc;
}

static void arm(struct xp_capture_agent_dec *d, uint64_t cap)
{
	struct xprobe_agent_reply r;
	struct xp_error err = { 0 };

	xpt_reply(&r, XPROBE_AGENT_OP_ARM, PID, START, cap);
	CHECK(feed(d, &r, NULL, &err) == 0);
	xp_error_clear(&err);
}

static const char *str(const struct xp_capture *c, xp_str_t id)
{
	return id ? xp_capture_str(c, id) : "(null)";
}

/* --- the good path --------------------------------------------------- */

static void test_pieces(void)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xprobe_agent_reply r;
	struct xp_error err = { 0 };
	const struct xp_event *e;

	dec_open(&d, &c, 100);
	arm(&d, 100);
	/* snapshot 1: a push on 11 and a process range started on 11 */
	memset(&pkt, 0, sizeof(pkt));
	xpt_push(&pkt, 11, 2000, 0, "step");
	xpt_start(&pkt, 11, 2100, 0x99, "proc");
	xpt_push(&pkt, 12, 2200, 3, "inner");
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 100);
	xpt_reply_records(&r, 0, &pkt, 1);
	r.dropped = 2;
	r.observed = 5;
	CHECK(feed(&d, &r, &pkt, &err) == 0);
	CHECK_EQ_U64(c.count, 3);
	CHECK_EQ_U64(d.st.records, 3);
	CHECK_EQ_U64(c.dropped, 2);
	/* snapshot 2: the ends, the process range's on thread 13 */
	memset(&pkt, 0, sizeof(pkt));
	xpt_pop(&pkt, 11, 3000, 0);
	xpt_end(&pkt, 13, 3100, 0x99);
	xpt_pop(&pkt, 12, 3200, 3);
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 100);
	r.retained = 3;
	xpt_reply_records(&r, 3, &pkt, 1);
	r.dropped = 3;
	r.unknown = 1;
	CHECK(feed(&d, &r, &pkt, &err) == 0);
	CHECK_STR(err.message, "");
	CHECK_EQ_U64(c.count, 6);
	CHECK_EQ_U64(c.dropped, 3);
	CHECK_EQ_U64(c.unknown_records, 1);
	/* STOP with nothing more */
	xpt_reply(&r, XPROBE_AGENT_OP_STOP, PID, START, 100);
	r.state = XPROBE_AGENT_STOPPED;
	r.stop_reason = XPROBE_AGENT_STOP_REQUESTED;
	r.retained = 6;
	r.observed = 7;
	r.dropped = 3;
	r.unknown = 1;
	xpt_reply_records(&r, 6, NULL, 0);
	CHECK(feed(&d, &r, NULL, &err) == 0);
	CHECK_EQ_U64(d.st.state, XPROBE_AGENT_STOPPED);
	CHECK_EQ_U64(d.st.stop_reason, XPROBE_AGENT_STOP_REQUESTED);
	CHECK_EQ_U64(d.st.observed, 7);
	CHECK_EQ_U64(d.st.retained, 6);
	CHECK(c.cupti.present);
	CHECK_EQ_U64(c.cupti.record_capacity, 100);
	CHECK_EQ_U64(c.cupti.observed_records, 7);
	CHECK_EQ_U64(c.cupti.dropped_records, 3);
	CHECK(!c.record_limit_reached);
	CHECK_STR(xp_capture_agent_state_name(d.st.state), "stopped");

	e = &c.events[0];
	CHECK_EQ_U64(e->event_type, XP_EV_NVTX_RANGE_START);
	CHECK_EQ_U64(e->source, XP_SRC_CUPTI_CALLBACK);
	CHECK_EQ_U64(e->pid, PID);
	CHECK_EQ_U64(e->tid, 11);
	CHECK_EQ_U64(e->timestamp_ns, 2000);
	CHECK(e->flags & XP_EVF_START_TIME);
	CHECK_EQ_U64(e->process_start_time, START);
	CHECK_STR(str(&c, e->nvtx.name), "step");
	CHECK(e->nvtx.name_complete);
	CHECK_EQ_U64(e->nvtx.range_kind, XP_NVTX_THREAD);
	CHECK_EQ_U64(e->nvtx.range_id, (11ull << 32) | 1);
	/* the pop carries its push's name and id */
	e = &c.events[3];
	CHECK_EQ_U64(e->event_type, XP_EV_NVTX_RANGE_END);
	CHECK_STR(str(&c, e->nvtx.name), "step");
	CHECK_EQ_U64(e->nvtx.range_id, (11ull << 32) | 1);
	/* the process range ended on 13 a snapshot later: name and start thread */
	e = &c.events[4];
	CHECK_EQ_U64(e->event_type, XP_EV_NVTX_RANGE_END);
	CHECK_EQ_U64(e->nvtx.range_kind, XP_NVTX_PROCESS);
	CHECK_EQ_U64(e->nvtx.range_id, 0x99);
	CHECK_EQ_U64(e->tid, 13);
	CHECK_EQ_U64(e->nvtx.start_tid, 11);
	CHECK_STR(str(&c, e->nvtx.name), "proc");
	CHECK_EQ_U64(d.map->npr, 0); /* ended ranges are forgotten */
	e = &c.events[5];
	CHECK_STR(str(&c, e->nvtx.name), "inner");
	{
		char *doc = xpt_render_event(&c, 5);

		CHECK(xpt_contains(doc, "\"nvtx_push_level\":3"));
		free(doc);
	}
	xp_error_clear(&err);
	dec_close(&d, &c);
}

/* An end whose start was never sent (or lost): an unmatched end. */
static void test_unmatched_end(void)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xprobe_agent_reply r;
	struct xp_error err = { 0 };

	dec_open(&d, &c, 10);
	memset(&pkt, 0, sizeof(pkt));
	xpt_end(&pkt, 5, 10, 1234);
	xpt_pop(&pkt, 5, 11, 2);
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 10);
	xpt_reply_records(&r, 0, &pkt, 1);
	CHECK(feed(&d, &r, &pkt, &err) == 0);
	CHECK_EQ_U64(c.count, 2);
	CHECK_STR(str(&c, c.events[0].nvtx.name), "");
	CHECK(!c.events[0].nvtx.name_complete);
	CHECK_EQ_U64(c.events[0].nvtx.start_tid, 5);
	CHECK_STR(str(&c, c.events[1].nvtx.name), "");
	dec_close(&d, &c);
}

/* Many open process ranges ended in a scrambled order, across snapshots:
 * the open table's deletion keeps every other range findable. */
static void test_many_ranges(void)
{
	enum { N = 3000 };
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xprobe_agent_reply r;
	struct xp_error err = { 0 };
	static uint64_t ids[N];
	uint64_t off = 0, ts = 100, x = 42;
	size_t bad = 0, i;
	char name[32];

	/* random ids: their slots collide, so ends leave holes mid-cluster */
	for (i = 0; i < N; i++) {
		uint64_t z = (x += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		ids[i] = z ^ (z >> 31);
	}

	dec_open(&d, &c, 2 * N);
	arm(&d, 2 * N);
	for (i = 0; i < N;) {
		memset(&pkt, 0, sizeof(pkt));
		for (size_t k = 0; k < 500 && i < N; k++, i++) {
			snprintf(name, sizeof(name), "r%zu", i);
			xpt_start(&pkt, 7, ts++, ids[i], name);
		}
		xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 2 * N);
		r.retained = off;
		xpt_reply_records(&r, off, &pkt, 1);
		CHECK(feed(&d, &r, &pkt, &err) == 0);
		off += pkt.n;
	}
	CHECK_EQ_U64(d.map->npr, N);
	for (i = 0; i < N;) {
		memset(&pkt, 0, sizeof(pkt));
		for (size_t k = 0; k < 700 && i < N; k++, i++)
			xpt_end(&pkt, 8, ts++, ids[(i * 1237) % N]);
		xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 2 * N);
		r.retained = off;
		xpt_reply_records(&r, off, &pkt, 1);
		CHECK(feed(&d, &r, &pkt, &err) == 0);
		off += pkt.n;
	}
	CHECK_STR(err.message, "");
	CHECK_EQ_U64(c.count, 2 * N);
	CHECK_EQ_U64(d.map->npr, 0);
	for (i = 0; i < N; i++) {
		const struct xp_event *e = &c.events[N + i];

		snprintf(name, sizeof(name), "r%zu", (i * 1237) % N);
		if (strcmp(str(&c, e->nvtx.name), name) || e->nvtx.start_tid != 7 ||
		    e->nvtx.range_id != ids[(i * 1237) % N])
			bad++;
	}
	CHECK_EQ_U64(bad, 0);
	dec_close(&d, &c);
}

/* A type of a later release is counted, never an error. */
static void test_unknown_type(void)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xprobe_agent_reply r;
	struct xp_error err = { 0 };

	dec_open(&d, &c, 10);
	memset(&pkt, 0, sizeof(pkt));
	xpt_push(&pkt, 5, 10, 0, "a");
	xpt_rec(&pkt, 200, 5, 11, 0, 0, "future", 0);
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 10);
	xpt_reply_records(&r, 0, &pkt, 1);
	CHECK(feed(&d, &r, &pkt, &err) == 0);
	CHECK_EQ_U64(c.count, 1);
	CHECK_EQ_U64(c.unknown_records, 1);
	CHECK_EQ_U64(d.st.unknown_types, 1);
	CHECK_EQ_U64(d.st.records, 2);
	dec_close(&d, &c);
}

/* Records in several packets of one reply; a full capture's state. */
static void test_chunks_and_limit(void)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xprobe_agent_reply r;
	struct xp_error err = { 0 };
	static struct xpt_pkt a, b;

	dec_open(&d, &c, 10);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	xpt_push(&a, 5, 10, 0, "a");
	xpt_pop(&b, 5, 11, 0);
	xpt_push(&b, 5, 12, 0, "b");
	xpt_reply(&r, XPROBE_AGENT_OP_STOP, PID, START, 3);
	r.state = XPROBE_AGENT_LIMIT_REACHED;
	r.stop_reason = XPROBE_AGENT_STOP_RECORD_LIMIT;
	r.offset = 0;
	r.nrecords = 3;
	r.retained = 3;
	r.observed = 9;
	r.bytes = a.len + b.len;
	r.nchunks = 2;
	CHECK(xp_capture_agent_reply_check(&r, sizeof(r), r.op, &err) == 0);
	CHECK(xp_capture_agent_dec_reply(&d, &r, &err) == 0);
	CHECK(xp_capture_agent_dec_chunk(&d, a.b, a.len, &err) == 0);
	CHECK(xp_capture_agent_dec_chunk(&d, b.b, b.len, &err) == 0);
	CHECK(xp_capture_agent_dec_end(&d, &err) == 0);
	CHECK_STR(err.message, "");
	CHECK_EQ_U64(c.count, 3);
	CHECK(c.record_limit_reached);
	CHECK_STR(str(&c, c.events[1].nvtx.name), "a");
	CHECK_STR(str(&c, c.events[2].nvtx.name), "b");
	CHECK_EQ_U64(c.events[2].nvtx.range_id, (5ull << 32) | 2);
	dec_close(&d, &c);
}

/* More events than the capture's bound: EVENT_RATE_TOO_HIGH at the end. */
static void test_bound(void)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xprobe_agent_reply r;
	struct xp_error err = { 0 };

	dec_open(&d, &c, 2);
	memset(&pkt, 0, sizeof(pkt));
	xpt_push(&pkt, 5, 10, 0, "a");
	xpt_pop(&pkt, 5, 11, 0);
	xpt_push(&pkt, 5, 12, 0, "a");
	xpt_pop(&pkt, 5, 13, 0);
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 10);
	xpt_reply_records(&r, 0, &pkt, 1);
	CHECK(feed(&d, &r, &pkt, &err) == -XPROBE_E_EVENT_RATE_TOO_HIGH);
	CHECK_EQ_U64(err.code, XPROBE_E_EVENT_RATE_TOO_HIGH);
	CHECK(xpt_detail_contains(&err, "observed_events", "4"));
	CHECK(xpt_detail_contains(&err, "max_events", "2"));
	CHECK_EQ_U64(c.count, 2);
	xp_error_clear(&err);
	dec_close(&d, &c);
}

/* --- malformed headers ----------------------------------------------- */

struct hdr_case {
	const char *field;
	void (*mutate)(struct xprobe_agent_reply *r);
};

#define M(name, body)                                  \
	static void name(struct xprobe_agent_reply *r) \
	{                                              \
		body;                                  \
	}
M(m_magic, r->magic[2] ^= 1)
M(m_magic_nul, r->magic[7] = 'X')
M(m_version, r->version = 2)
M(m_size, r->size = 391)
M(m_op, r->op = XPROBE_AGENT_OP_STOP)
M(m_status_pos, r->status = 1)
M(m_status_low, r->status = -XPROBE_E__LAST)
M(m_features, r->features |= 0x10)
M(m_state, r->state = 5)
M(m_stop, r->stop_reason = 4)
M(m_reserved, r->mode = 3)
M(m_message, memset(r->message, 'x', sizeof(r->message)))
M(m_active_no_arm, r->arm_ns = 0)
M(m_active_no_cap, {
	r->capacity = 0;
	r->retained = r->observed = 0;
	r->nrecords = 0;
	r->bytes = 0;
	r->nchunks = 0;
})
M(m_active_stop, r->stop_reason = XPROBE_AGENT_STOP_REQUESTED)
M(m_limit_reason, r->state = XPROBE_AGENT_LIMIT_REACHED)
M(m_capacity_max, r->capacity = XPROBE_AGENT_CAPACITY_MAX + 1ull)
M(m_retained_cap, r->retained = r->capacity + 1)
M(m_retained_obs, r->observed = r->retained - 1)
M(m_offset, r->offset = 1)
M(m_nrecords_big, { r->nrecords = r->retained + 1; })
M(m_offset_wrap, { r->offset = UINT64_MAX; })
M(m_bytes_small, r->bytes = r->nrecords * XPROBE_RECORD_HDR_SIZE - 8)
M(m_bytes_big, r->bytes = r->nrecords * XPROBE_RECORD_MAX_SIZE + 8)
M(m_nchunks_zero, r->nchunks = 0)
M(m_nchunks_many, r->nchunks = (uint32_t)r->nrecords + 1)
M(m_nrecords_zero, { r->nrecords = 0; })
M(m_error_records, r->status = -XPROBE_E_NOT_ACTIVE)
#undef M

static const struct hdr_case hdr_cases[] = {
	{ "magic", m_magic },
	{ "magic", m_magic_nul },
	{ "version", m_version },
	{ "size", m_size },
	{ "op", m_op },
	{ "status", m_status_pos },
	{ "status", m_status_low },
	{ "features", m_features },
	{ "state", m_state },
	{ "stop_reason", m_stop },
	{ "mode", m_reserved },
	{ "message", m_message },
	{ "arm_ns", m_active_no_arm },
	{ "arm_ns", m_active_no_cap },
	{ "stop_reason", m_active_stop },
	{ "stop_reason", m_limit_reason },
	{ "capacity", m_capacity_max },
	{ "retained", m_retained_cap },
	{ "observed", m_retained_obs },
	{ "offset", m_offset },
	{ "offset", m_nrecords_big },
	{ "offset", m_offset_wrap },
	{ "bytes", m_bytes_small },
	{ "bytes", m_bytes_big },
	{ "nchunks", m_nchunks_zero },
	{ "nchunks", m_nchunks_many },
	{ "bytes", m_nrecords_zero },
	{ "nrecords", m_error_records },
};

static void test_bad_headers(void)
{
	struct xprobe_agent_reply good, r;
	struct xp_error err = { 0 };
	char want[64];

	memset(&pkt, 0, sizeof(pkt));
	xpt_push(&pkt, 5, 10, 0, "abc");
	xpt_pop(&pkt, 5, 11, 0);
	xpt_reply(&good, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 10);
	xpt_reply_records(&good, 0, &pkt, 1);
	CHECK(xp_capture_agent_reply_check(&good, sizeof(good), good.op, &err) == 0);
	for (size_t i = 0; i < sizeof(hdr_cases) / sizeof(hdr_cases[0]); i++) {
		r = good;
		hdr_cases[i].mutate(&r);
		CHECK(xp_capture_agent_reply_check(&r, sizeof(r), XPROBE_AGENT_OP_SNAPSHOT, &err) ==
		      -XPROBE_E_TRACE_EXPORT_FAILED);
		snprintf(want, sizeof(want), "\"%s\"", hdr_cases[i].field);
		if (!xpt_detail_contains(&err, "field", want))
			fprintf(stderr, "case %zu: field %s, expected %s (%s)\n", i,
				xp_error_detail_get(&err, "field"), want, err.message);
		CHECK(xpt_detail_contains(&err, "field", want));
		CHECK(!err.recoverable);
		CHECK(xpt_hint_contains(&err, "same release"));
		xp_error_clear(&err);
	}
	/* wrong lengths */
	CHECK(xp_capture_agent_reply_check(&good, sizeof(good) - 1, good.op, &err) ==
	      -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_detail_contains(&err, "field", "\"size\""));
	xp_error_clear(&err);
	/* records behind a HELLO, an ARM or a CLOSE */
	for (uint32_t op = XPROBE_AGENT_OP_HELLO; op <= XPROBE_AGENT_OP_CLOSE; op++) {
		r = good;
		r.op = op;
		CHECK(xp_capture_agent_reply_check(&r, sizeof(r), op, &err) ==
		      (op == XPROBE_AGENT_OP_SNAPSHOT || op == XPROBE_AGENT_OP_STOP ?
			       0 :
			       -XPROBE_E_TRACE_EXPORT_FAILED));
		xp_error_clear(&err);
	}
	/* an error reply without records is well-formed */
	xpt_reply(&r, XPROBE_AGENT_OP_ARM, PID, START, 10);
	r.status = -XPROBE_E_ALREADY_ACTIVE;
	snprintf(r.message, sizeof(r.message), "busy");
	CHECK(xp_capture_agent_reply_check(&r, sizeof(r), r.op, &err) == 0);
	xp_error_clear(&err);
}

/* --- broken sequences ------------------------------------------------ */

static int seq_after_arm(void (*mutate)(struct xprobe_agent_reply *r), const char *field)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xprobe_agent_reply r;
	struct xp_error err = { 0 };
	char want[64];
	int rc;

	dec_open(&d, &c, 100);
	arm(&d, 50);
	memset(&pkt, 0, sizeof(pkt));
	xpt_push(&pkt, 5, 10, 0, "a");
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 50);
	xpt_reply_records(&r, 0, &pkt, 1);
	r.dropped = 4;
	r.unknown = 4;
	CHECK(feed(&d, &r, &pkt, &err) == 0);
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 50);
	r.retained = 1;
	r.dropped = 4;
	r.unknown = 4;
	xpt_reply_records(&r, 1, NULL, 0);
	mutate(&r);
	rc = feed(&d, &r, NULL, &err);
	snprintf(want, sizeof(want), "\"%s\"", field);
	CHECK(rc == -XPROBE_E_TRACE_EXPORT_FAILED);
	if (!xpt_detail_contains(&err, "field", want))
		fprintf(stderr, "sequence: field %s, expected %s (%s)\n",
			xp_error_detail_get(&err, "field"), want, err.message);
	CHECK(xpt_detail_contains(&err, "field", want));
	CHECK(xpt_detail_contains(&err, "pid", "4242"));
	xp_error_clear(&err);
	dec_close(&d, &c);
	return rc;
}

#define M(name, body)                                  \
	static void name(struct xprobe_agent_reply *r) \
	{                                              \
		body;                                  \
	}
M(s_offset_back, { r->offset = 0; })
M(s_offset_gap, {
	r->offset = 2;
	r->retained = r->observed = 2;
})
M(s_capacity, r->capacity = 51)
M(s_rearmed, r->arm_ns = 5)
M(s_observed_down, {
	r->observed = 0;
	r->retained = 0;
	r->offset = 0;
})
M(s_dropped_down, r->dropped = 3)
M(s_unknown_down, r->unknown = 3)
M(s_pid, r->pid = 1)
M(s_start, r->start_time = 1)
M(s_arm_again, {
	r->op = XPROBE_AGENT_OP_ARM;
	r->offset = 0;
})
#undef M

static void test_bad_sequences(void)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xprobe_agent_reply r;
	struct xp_error err = { 0 };

	/* the unmutated sequence passes: the cases below fail for their field */
	{
		dec_open(&d, &c, 10);
		arm(&d, 50);
		xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 50);
		CHECK(feed(&d, &r, NULL, &err) == 0);
		dec_close(&d, &c);
	}
	seq_after_arm(s_offset_back, "offset");
	seq_after_arm(s_offset_gap, "offset");
	seq_after_arm(s_capacity, "capacity");
	seq_after_arm(s_rearmed, "arm_ns");
	seq_after_arm(s_observed_down, "offset");
	seq_after_arm(s_dropped_down, "counters");
	seq_after_arm(s_unknown_down, "counters");
	seq_after_arm(s_pid, "pid");
	seq_after_arm(s_start, "start_time");
	seq_after_arm(s_arm_again, "op");
	/* a counter going down with the offset right */
	dec_open(&d, &c, 10);
	arm(&d, 50);
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 50);
	r.observed = 5;
	CHECK(feed(&d, &r, NULL, &err) == 0);
	r.observed = 4;
	CHECK(feed(&d, &r, NULL, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_detail_contains(&err, "field", "\"counters\""));
	xp_error_clear(&err);
	dec_close(&d, &c);
	/* a reply while the last one's packets are still due */
	dec_open(&d, &c, 10);
	memset(&pkt, 0, sizeof(pkt));
	xpt_push(&pkt, 5, 10, 0, "a");
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 50);
	xpt_reply_records(&r, 0, &pkt, 1);
	CHECK(xp_capture_agent_dec_reply(&d, &r, &err) == 0);
	CHECK(xp_capture_agent_dec_reply(&d, &r, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_detail_contains(&err, "field", "\"op\""));
	xp_error_clear(&err);
	/* ... and the end before they arrived */
	CHECK(xp_capture_agent_dec_end(&d, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_detail_contains(&err, "field", "\"nchunks\""));
	xp_error_clear(&err);
	dec_close(&d, &c);
}

/* --- malformed packets and records ----------------------------------- */

/* One reply announcing @p as given (@n records, @bytes, @chunks), then
 * @p's bytes as one packet of @len (0 = p->len). */
static int bad_packet(const struct xpt_pkt *p, uint64_t n, uint64_t bytes, uint32_t chunks,
		      size_t len, const char *field)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xprobe_agent_reply r;
	struct xp_error err = { 0 };
	char want[64];
	int rc;

	dec_open(&d, &c, 100);
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 100000);
	xpt_reply_records(&r, 0, p, chunks);
	r.nrecords = n;
	r.bytes = bytes;
	r.retained = r.observed = n;
	rc = xp_capture_agent_reply_check(&r, sizeof(r), r.op, &err);
	CHECK(rc == 0);
	if (!rc)
		rc = xp_capture_agent_dec_reply(&d, &r, &err);
	CHECK(rc == 0);
	if (!rc)
		rc = xp_capture_agent_dec_chunk(&d, p->b, len ? len : p->len, &err);
	if (!rc)
		rc = xp_capture_agent_dec_end(&d, &err);
	snprintf(want, sizeof(want), "\"%s\"", field);
	CHECK(rc == -XPROBE_E_TRACE_EXPORT_FAILED);
	if (!xpt_detail_contains(&err, "field", want))
		fprintf(stderr, "packet: field %s, expected %s (%s)\n",
			xp_error_detail_get(&err, "field"), want, err.message);
	CHECK(xpt_detail_contains(&err, "field", want));
	xp_error_clear(&err);
	dec_close(&d, &c);
	return rc;
}

/* The good packet of two records, then one field of its first record set. */
static void rec_case(size_t at, const void *v, size_t n, const char *field)
{
	static struct xpt_pkt p;

	memset(&p, 0, sizeof(p));
	xpt_push(&p, 5, 10, 0, "abc");
	xpt_pop(&p, 5, 11, 0);
	memcpy(p.b + at, v, n);
	bad_packet(&p, p.n, p.len, 1, 0, field);
}

static void test_bad_records(void)
{
	static struct xpt_pkt p;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	uint8_t u8;

	/* the good packet passes */
	{
		struct xp_capture_agent_dec d;
		struct xp_capture c;
		struct xprobe_agent_reply r;
		struct xp_error err = { 0 };

		memset(&p, 0, sizeof(p));
		xpt_push(&p, 5, 10, 0, "abc");
		xpt_pop(&p, 5, 11, 0);
		dec_open(&d, &c, 10);
		xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 100);
		xpt_reply_records(&r, 0, &p, 1);
		CHECK(feed(&d, &r, &p, &err) == 0);
		dec_close(&d, &c);
	}
	u16 = 0; /* size 0 */
	rec_case(0, &u16, 2, "size");
	u16 = 44; /* not a multiple of 8 */
	rec_case(0, &u16, 2, "size");
	u16 = 32; /* below the header */
	rec_case(0, &u16, 2, "size");
	u16 = 176; /* above the largest record */
	rec_case(0, &u16, 2, "size");
	u16 = XPROBE_EV_PAD;
	rec_case(2, &u16, 2, "type");
	u16 = XPROBE_EV_NVTX_MARK;
	rec_case(2, &u16, 2, "type");
	u16 = XPROBE_EV_CPU_SAMPLE;
	rec_case(2, &u16, 2, "type");
	u32 = 0; /* no thread */
	rec_case(4, &u32, 4, "tid");
	u64 = 0; /* no timestamp */
	rec_case(8, &u64, 8, "ts");
	u16 = 0x4; /* unknown flag */
	rec_case(20, &u16, 2, "flags");
	u16 = 3 | XPROBE_RECF_NAME_UNSUPPORTED; /* a name with the unsupported flag */
	rec_case(20, &u16, 2, "flags");
	u16 = 9; /* name longer than the record holds */
	rec_case(22, &u16, 2, "name_len");
	u16 = 2; /* a shorter name: padding not zero */
	rec_case(22, &u16, 2, "name");
	u8 = 0; /* NUL inside the name */
	rec_case(41, &u8, 1, "name");
	u16 = 1; /* a pop with a name */
	rec_case(48 + 22, &u16, 2, "size");
	u16 = 48; /* a pop claiming 48 bytes */
	memset(&p, 0, sizeof(p));
	xpt_push(&p, 5, 10, 0, "abc");
	xpt_pop(&p, 5, 11, 0);
	memcpy(p.b + 48, &u16, 2);
	p.len += 8;
	bad_packet(&p, 2, p.len, 1, 0, "size");
	/* more records than announced, fewer, a cut record, the bytes */
	memset(&p, 0, sizeof(p));
	xpt_push(&p, 5, 10, 0, "abc");
	xpt_pop(&p, 5, 11, 0);
	bad_packet(&p, 1, p.len, 1, 0, "nrecords");
	bad_packet(&p, 2, p.len + 40, 1, 0, "nchunks");
	bad_packet(&p, 2, p.len, 1, p.len - 8, "size");
	/* a packet over the bound, over the bytes announced, empty */
	memset(&p, 0, sizeof(p));
	while (p.len <= XPROBE_AGENT_CHUNK_MAX)
		xpt_pop(&p, 5, 11, 0);
	bad_packet(&p, p.n, p.len, 2, 0, "bytes");
	memset(&p, 0, sizeof(p));
	xpt_pop(&p, 5, 11, 0);
	xpt_pop(&p, 5, 11, 0);
	bad_packet(&p, 2, 80, 1, 120, "bytes");
}

/* Packets beyond those announced, and xp_capture_agent_dec_buf's framing. */
static void test_buf(void)
{
	static uint8_t buf[4 * 1024];
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xprobe_agent_reply r;
	struct xp_error err = { 0 };
	size_t len = 0, one, b1, b2;
	uint32_t n;
	char *a, *b;

	/* ARM, a snapshot of two packets, a STOP of one */
	xpt_reply(&r, XPROBE_AGENT_OP_ARM, PID, START, 10);
	memcpy(buf + len, &r, sizeof(r));
	len += sizeof(r);
	b1 = len;
	memset(&pkt, 0, sizeof(pkt));
	xpt_push(&pkt, 5, 10, 0, "x");
	xpt_start(&pkt, 5, 11, 3, "p");
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 10);
	xpt_reply_records(&r, 0, &pkt, 2);
	memcpy(buf + len, &r, sizeof(r));
	len += sizeof(r);
	n = 48;
	memcpy(buf + len, &n, 4);
	memcpy(buf + len + 4, pkt.b, 48);
	len += 52;
	n = (uint32_t)pkt.len - 48;
	memcpy(buf + len, &n, 4);
	memcpy(buf + len + 4, pkt.b + 48, n);
	len += 4 + n;
	b2 = len;
	memset(&pkt, 0, sizeof(pkt));
	xpt_pop(&pkt, 5, 12, 0);
	xpt_end(&pkt, 6, 13, 3);
	xpt_reply(&r, XPROBE_AGENT_OP_STOP, PID, START, 10);
	r.state = XPROBE_AGENT_STOPPED;
	r.stop_reason = XPROBE_AGENT_STOP_REQUESTED;
	r.retained = 2;
	xpt_reply_records(&r, 2, &pkt, 1);
	memcpy(buf + len, &r, sizeof(r));
	len += sizeof(r);
	n = (uint32_t)pkt.len;
	memcpy(buf + len, &n, 4);
	memcpy(buf + len + 4, pkt.b, n);
	len += 4 + n;
	one = len;

	dec_open(&d, &c, 10);
	CHECK(xp_capture_agent_dec_buf(&d, buf, len, &err) == 0);
	CHECK_STR(err.message, "");
	CHECK_EQ_U64(c.count, 4);
	CHECK_EQ_U64(d.st.state, XPROBE_AGENT_STOPPED);
	a = xpt_render_all(&c);
	CHECK(xpt_contains(a, "\"name\":\"p\""));
	dec_close(&d, &c);
	/* unaligned: the same bytes one byte further */
	memmove(buf + 1, buf, len);
	dec_open(&d, &c, 10);
	CHECK(xp_capture_agent_dec_buf(&d, buf + 1, len, &err) == 0);
	b = xpt_render_all(&c);
	CHECK(a && b && !strcmp(a, b));
	free(a);
	free(b);
	dec_close(&d, &c);
	memmove(buf, buf + 1, len);
	/* truncated anywhere but between replies: an error, never a crash */
	for (size_t cut = 1; cut < one; cut++) {
		dec_open(&d, &c, 10);
		CHECK(xp_capture_agent_dec_buf(&d, buf, cut, &err) ==
		      (cut == b1 || cut == b2 ? 0 : -XPROBE_E_TRACE_EXPORT_FAILED));
		xp_error_clear(&err);
		dec_close(&d, &c);
	}
	/* bytes after the last announced packet */
	buf[len++] = 0;
	dec_open(&d, &c, 10);
	CHECK(xp_capture_agent_dec_buf(&d, buf, len, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_detail_contains(&err, "field", "\"size\""));
	xp_error_clear(&err);
	dec_close(&d, &c);
	/* a packet no header announced */
	dec_open(&d, &c, 10);
	CHECK(xp_capture_agent_dec_chunk(&d, buf, 40, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_detail_contains(&err, "field", "\"nchunks\""));
	xp_error_clear(&err);
	dec_close(&d, &c);
	/* a failed reply in a capture */
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 10);
	r.status = -XPROBE_E_NOT_ACTIVE;
	dec_open(&d, &c, 10);
	CHECK(xp_capture_agent_dec_buf(&d, &r, sizeof(r), &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_detail_contains(&err, "field", "\"status\""));
	xp_error_clear(&err);
	dec_close(&d, &c);
}

/* The fuzz seeds (tests/fuzz/gen_agent_seeds.py): the good ones decode,
 * the bad_ ones fail, so the corpus starts on both sides of every check. */
static void test_seeds(void)
{
	static const char *const good[] = { "conversation",  "packets", "limit",
					    "limit_reached", "odd",	"empty" };
	static const char *const bad[] = { "bad_cut", "bad_pad", "bad_mark", "bad_trailing",
					   "bad_status" };
	static const size_t events[] = { 6, 6, 3, 3, 2, 0 };
	static uint8_t buf[64 * 1024];

	for (size_t k = 0; k < 2; k++) {
		size_t n = k ? sizeof(bad) / sizeof(bad[0]) : sizeof(good) / sizeof(good[0]);

		for (size_t i = 0; i < n; i++) {
			const char *name = k ? bad[i] : good[i];
			struct xp_capture_agent_dec d;
			struct xp_capture c;
			struct xp_error err = { 0 };
			char path[256];
			size_t len = 0;
			FILE *f;
			int rc;

			snprintf(path, sizeof(path), "fuzz/corpus/fuzz_agent_capture/%s", name);
			f = fopen(path, "rb");
			CHECK(f != NULL);
			if (!f)
				continue;
			len = fread(buf, 1, sizeof(buf), f);
			fclose(f);
			dec_open(&d, &c, 100);
			rc = xp_capture_agent_dec_buf(&d, buf, len, &err);
			if ((rc == 0) == (k == 1))
				fprintf(stderr, "seed %s: rc %d %s\n", name, rc, err.message);
			CHECK((rc == 0) == (k == 0));
			if (!k)
				CHECK_EQ_U64(c.count, events[i]);
			xp_error_clear(&err);
			dec_close(&d, &c);
		}
	}
}

int main(void)
{
	test_pieces();
	test_unmatched_end();
	test_many_ranges();
	test_unknown_type();
	test_chunks_and_limit();
	test_bound();
	test_bad_headers();
	test_bad_sequences();
	test_bad_records();
	test_buf();
	test_seeds();
	TEST_MAIN_END();
}
