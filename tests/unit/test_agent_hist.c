/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_agent_hist.c - the CLI's decoder of a HISTOGRAM capture
 * (src/capture/decode_agent_hist.c) and the result it becomes
 * (src/agent/agent_histogram.c, xp_agent_hist_fill): a well-formed ARM
 * and two SNAPSHOTs decode, and each malformed histogram or header is a
 * TRACE_EXPORT_FAILED naming its field, one mutation at a time (the peer
 * is another process: nothing it sends is trusted); the fuzz target's
 * seeds (Python's packing of the same layouts) decode as they should.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_histogram.h"
#include "capture/decode_agent_hist.h"
#include "error_text.h"
#include "testlib.h"

#define PID 4242
#define START 777

static struct xprobe_agent_reply reply(uint32_t op, uint64_t groups)
{
	struct xprobe_agent_reply r;

	memset(&r, 0, sizeof(r));
	memcpy(r.magic, XPROBE_AGENT_REPLY_MAGIC, 8);
	r.version = XPROBE_AGENT_PROTO_VERSION;
	r.op = op;
	r.size = sizeof(r);
	r.pid = PID;
	r.start_time = START;
	r.mode = XPROBE_AGENT_MODE_HISTOGRAM;
	r.state = XPROBE_AGENT_ACTIVE;
	r.arm_ns = 1000;
	r.capacity = 1 + 4;
	r.retained = 1 + groups;
	if (op != XPROBE_AGENT_OP_ARM) {
		r.nrecords = r.retained;
		r.bytes = r.nrecords * sizeof(struct xprobe_agent_hist);
		r.nchunks = 1;
	}
	return r;
}

/* The total (3 pairs) and group "gemm" (the same 3). */
static void hists(struct xprobe_agent_hist h[2], uint64_t extra)
{
	uint32_t b = xprobe_lh_bucket_of(1000);

	memset(h, 0, 2 * sizeof(*h));
	h[0].flags = XPROBE_AGENT_HIST_F_TOTAL;
	h[1].kind = XPROBE_AGENT_KIND_KERNEL;
	h[1].flags = XPROBE_AGENT_HIST_F_NAME_COMPLETE;
	h[1].name_len = 4;
	memcpy(h[1].name, "gemm", 4);
	for (int i = 0; i < 2; i++) {
		h[i].count = 3 + extra;
		h[i].sum_ns = 3000 + extra * 1000;
		h[i].min_ns = h[i].max_ns = 1000;
		h[i].buckets[b] = 3 + extra;
	}
	h[0].counters[XPROBE_AGENT_HC_STACKS] = 1;
}

static int decode(struct xp_capture_hist_dec *d, struct xprobe_agent_hist *h, uint64_t extra,
		  struct xp_error *err)
{
	struct xprobe_agent_reply r = reply(XPROBE_AGENT_OP_SNAPSHOT, 1);
	int rc;

	r.observed = 3 + extra;
	rc = xp_capture_hist_dec_reply(d, &r, err);
	if (!rc)
		rc = xp_capture_hist_dec_chunk(d, h, 2 * sizeof(*h), err);
	if (!rc)
		rc = xp_capture_hist_dec_end(d, err);
	return rc;
}

static void test_good(void)
{
	struct xprobe_agent_reply arm = reply(XPROBE_AGENT_OP_ARM, 0);
	struct xprobe_agent_hist h[2];
	struct xp_capture_hist_dec d;
	struct xp_inv_lh_result r;
	struct xp_error err = { 0 };

	xp_capture_hist_dec_init(&d, PID, START);
	CHECK(xp_capture_hist_dec_reply(&d, &arm, &err) == 0);
	hists(h, 0);
	CHECK(decode(&d, h, 0, &err) == 0);
	hists(h, 2); /* grown: cumulative */
	CHECK(decode(&d, h, 2, &err) == 0);
	CHECK_EQ_U64(d.rx.n, 2);
	memset(&r, 0, sizeof(r));
	r.group_by = XP_LH_BY_NAME;
	CHECK(xp_agent_hist_fill(&r, d.h, d.rx.n) == 0);
	CHECK_EQ_U64(r.total.count, 5);
	CHECK_EQ_U64(r.pairs, 5);
	CHECK_EQ_U64(r.ngroups, 1);
	CHECK(r.groups[0].named && r.groups[0].name_complete);
	CHECK_STR(r.groups[0].name, "gemm");
	CHECK_EQ_U64(r.inflight_occupied, 1);
	xp_inv_lh_result_free(&r);
	/* an empty read (no histogram at all yet) is an empty result */
	memset(&r, 0, sizeof(r));
	CHECK(xp_agent_hist_fill(&r, NULL, 0) == 0);
	CHECK_EQ_U64(r.total.count, 0);
	xp_inv_lh_result_free(&r);
	xp_capture_hist_dec_free(&d);
	xp_error_clear(&err);
}

static void m_count(struct xprobe_agent_hist *h)
{
	h[1].count = 4;
}
static void m_total_flag(struct xprobe_agent_hist *h)
{
	h[0].flags = 0;
}
static void m_group_total(struct xprobe_agent_hist *h)
{
	h[1].flags |= XPROBE_AGENT_HIST_F_TOTAL;
}
static void m_kind(struct xprobe_agent_hist *h)
{
	h[1].kind = 9;
}
static void m_total_kind(struct xprobe_agent_hist *h)
{
	h[0].kind = XPROBE_AGENT_KIND_KERNEL;
}
static void m_counters(struct xprobe_agent_hist *h)
{
	h[1].counters[0] = 1;
}
static void m_name_nul(struct xprobe_agent_hist *h)
{
	h[1].name[1] = 0;
}
static void m_name_after(struct xprobe_agent_hist *h)
{
	h[1].name[9] = 'x';
}
static void m_name_len(struct xprobe_agent_hist *h)
{
	h[1].name_len = 200;
}
static void m_min(struct xprobe_agent_hist *h)
{
	h[1].min_ns = 5000;
}
static void m_max(struct xprobe_agent_hist *h)
{
	h[1].buckets[xprobe_lh_bucket_of(5000)] = 1; /* a pair above max */
	h[1].count++;
}
static void m_shrank(struct xprobe_agent_hist *h)
{
	uint32_t b = xprobe_lh_bucket_of(1000);

	h[1].buckets[b] = 2;
	h[1].count = 2;
}
static void m_key(struct xprobe_agent_hist *h)
{
	h[1].name[0] = 'G';
}

static const struct {
	const char *field;
	void (*mutate)(struct xprobe_agent_hist *h);
	bool second; /* in the second read (a change between reads) */
} bad[] = {
	{ "count", m_count, false },
	{ "flags", m_total_flag, false },
	{ "flags", m_group_total, false },
	{ "kind", m_kind, false },
	{ "kind", m_total_kind, false },
	{ "counters", m_counters, false },
	{ "name", m_name_nul, false },
	{ "name", m_name_after, false },
	{ "name", m_name_len, false },
	{ "min_ns", m_min, false },
	{ "max_ns", m_max, false },
	{ "buckets", m_shrank, true },
	{ "key", m_key, true },
};

static void test_bad(void)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct xprobe_agent_reply arm = reply(XPROBE_AGENT_OP_ARM, 0);
		struct xprobe_agent_hist h[2];
		struct xp_capture_hist_dec d;
		struct xp_error err = { 0 };
		char want[32];
		int rc;

		xp_capture_hist_dec_init(&d, PID, START);
		CHECK(xp_capture_hist_dec_reply(&d, &arm, &err) == 0);
		hists(h, 0);
		if (bad[i].second) {
			CHECK(decode(&d, h, 0, &err) == 0);
			hists(h, 0);
		}
		bad[i].mutate(h);
		rc = decode(&d, h, 0, &err);
		CHECK(rc == -XPROBE_E_TRACE_EXPORT_FAILED);
		snprintf(want, sizeof(want), "\"%s\"", bad[i].field);
		if (!xpt_detail_contains(&err, "field", want))
			fprintf(stderr, "case %zu: field %s, want %s (%s)\n", i,
				xp_error_detail_get(&err, "field"), want, err.message);
		CHECK(xpt_detail_contains(&err, "field", want));
		xp_capture_hist_dec_free(&d);
		xp_error_clear(&err);
	}
}

static void test_bad_headers(void)
{
	struct xprobe_agent_reply arm = reply(XPROBE_AGENT_OP_ARM, 0), r;
	struct xp_capture_hist_dec d;
	struct xp_error err = { 0 };

	xp_capture_hist_dec_init(&d, PID, START);
	/* histograms before the ARM */
	r = reply(XPROBE_AGENT_OP_SNAPSHOT, 1);
	CHECK(xp_capture_hist_dec_reply(&d, &r, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	xp_error_clear(&err);
	CHECK(xp_capture_hist_dec_reply(&d, &arm, &err) == 0);
	r = reply(XPROBE_AGENT_OP_SNAPSHOT, 1);
	r.nrecords = 1; /* the group not announced */
	r.bytes = sizeof(struct xprobe_agent_hist);
	CHECK(xp_capture_hist_dec_reply(&d, &r, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_detail_contains(&err, "field", "\"nrecords\""));
	xp_error_clear(&err);
	r = reply(XPROBE_AGENT_OP_SNAPSHOT, 1);
	r.capacity = 9; /* changed */
	CHECK(xp_capture_hist_dec_reply(&d, &r, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_detail_contains(&err, "field", "\"capacity\""));
	xp_error_clear(&err);
	r = reply(XPROBE_AGENT_OP_SNAPSHOT, 1);
	r.pid = 1;
	CHECK(xp_capture_hist_dec_reply(&d, &r, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_detail_contains(&err, "field", "\"pid\""));
	xp_error_clear(&err);
	/* a packet that is not whole histograms */
	r = reply(XPROBE_AGENT_OP_SNAPSHOT, 1);
	CHECK(xp_capture_hist_dec_reply(&d, &r, &err) == 0);
	{
		static struct xprobe_agent_hist h[2];

		CHECK(xp_capture_hist_dec_chunk(&d, h, sizeof(h) - 8, &err) ==
		      -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK(xpt_detail_contains(&err, "field", "\"bytes\""));
		xp_error_clear(&err);
	}
	xp_capture_hist_dec_free(&d);
}

/* The fuzz seeds (tests/fuzz/gen_agent_hist_seeds.py, Python's packing of
 * agent.h's layouts): the good ones decode, the bad ones do not. */
static void test_seeds(void)
{
	static const struct {
		const char *name;
		bool ok;
		size_t n;
	} seeds[] = {
		{ "table", true, 3 },	   { "grown", true, 3 },      { "empty", true, 1 },
		{ "bad_count", false, 0 }, { "bad_shrunk", false, 0 }, { "bad_cut", false, 0 },
	};

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char path[256];
		struct xp_capture_hist_dec d;
		struct xp_error err = { 0 };
		static uint8_t buf[1 << 17];
		size_t len;
		FILE *f;
		int rc;

		snprintf(path, sizeof(path), "fuzz/corpus/fuzz_agent_histogram/%s", seeds[i].name);
		f = fopen(path, "rb");
		CHECK(f != NULL);
		if (!f)
			continue;
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		xp_capture_hist_dec_init(&d, PID, START);
		rc = xp_capture_hist_dec_buf(&d, buf, len, &err);
		if ((rc == 0) != seeds[i].ok)
			fprintf(stderr, "seed %s: rc %d (%s)\n", seeds[i].name, rc, err.message);
		CHECK((rc == 0) == seeds[i].ok);
		if (seeds[i].ok)
			CHECK_EQ_U64(d.rx.n, seeds[i].n);
		if (!seeds[i].ok)
			CHECK(err.code == XPROBE_E_TRACE_EXPORT_FAILED);
		xp_capture_hist_dec_free(&d);
		xp_error_clear(&err);
	}
}

int main(void)
{
	test_seeds();
	test_good();
	test_bad();
	test_bad_headers();
	TEST_MAIN_END();
}
