/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_capture_agent_agg.c - the decoder of the Agent's aggregate captures
 * (src/capture/decode_agent_agg.c): groups of kernels, copies and sets
 * read whole, re-read as they grow, and every malformed reply, packet and
 * group refused with TRACE_EXPORT_FAILED naming its field (each case
 * breaks one field of a good capture); fuzz_agent_aggregate's seeds
 * decode as their generator says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_wire.h"
#include "capture/decode_agent_agg.h"
#include "testlib.h"

#define PID 4242u
#define START 777u
#define K XPROBE_AGENT_KIND_KERNEL
#define C XPROBE_AGENT_KIND_MEMCPY
#define S XPROBE_AGENT_KIND_MEMSET
#define NC XPROBE_RECF_NAME_COMPLETE

static struct xpt_pkt pkt;

static void agg_reply(struct xprobe_agent_reply *r, uint32_t op, uint64_t capacity,
		      const struct xpt_pkt *p, uint64_t offset, uint64_t observed)
{
	xpt_reply(r, op, PID, START, capacity);
	if (op == XPROBE_AGENT_OP_STOP) {
		r->state = XPROBE_AGENT_STOPPED;
		r->stop_reason = XPROBE_AGENT_STOP_REQUESTED;
	}
	if (op != XPROBE_AGENT_OP_ARM) {
		r->offset = offset;
		r->nrecords = p ? p->n : 0;
		r->retained = offset + r->nrecords;
		r->bytes = p ? p->len : 0;
		r->nchunks = p && p->n ? 1 : 0;
		r->observed = observed;
	}
}

static int feed(struct xp_capture_agg_dec *d, const struct xprobe_agent_reply *r,
		const struct xpt_pkt *p, struct xp_error *err)
{
	int rc = xp_capture_agent_reply_check(r, sizeof(*r), r->op, err);

	if (!rc)
		rc = xp_capture_agg_dec_reply(d, r, err);
	if (!rc && p && p->len)
		rc = xp_capture_agg_dec_chunk(d, p->b, p->len, err);
	if (!rc)
		rc = xp_capture_agg_dec_end(d, err);
	return rc;
}

static int arm(struct xp_capture_agg_dec *d, uint64_t capacity, struct xp_error *err)
{
	struct xprobe_agent_reply r;

	agg_reply(&r, XPROBE_AGENT_OP_ARM, capacity, NULL, 0, 0);
	return feed(d, &r, NULL, err);
}

/* The good table: a kernel, a copy, a set. */
static void good(struct xpt_pkt *p)
{
	memset(p, 0, sizeof(*p));
	xpt_group(p, K, 0, 0, "gemm", NC, 5, 100, 300, 1000, 0);
	xpt_group(p, C, 1, XPROBE_AGENT_MEMCPY_HTOD, NULL, 0, 2, 50, 70, 120, 8192);
	xpt_group(p, S, XPROBE_CUDA_UNKNOWN, 0, NULL, 0, 1, 9, 9, 9, 64);
}

static void test_good(void)
{
	struct xprobe_agent_reply r;
	struct xp_capture_agg_dec d;
	struct xp_error err = { 0 };

	xp_capture_agg_dec_init(&d, PID, START);
	CHECK(arm(&d, 16, &err) == 0);
	good(&pkt);
	agg_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, 16, &pkt, 0, 8);
	CHECK(feed(&d, &r, &pkt, &err) == 0);
	CHECK_STR(err.message, "");
	CHECK_EQ_U64(d.rx.n, 3);
	CHECK_EQ_U64(d.grouped, 8);
	if (d.rx.n == 3) {
		CHECK_STR(d.groups[0].name, "gemm");
		CHECK(d.groups[0].name_complete && d.groups[0].kind == K);
		CHECK(d.groups[1].memcpy_kind == XPROBE_AGENT_MEMCPY_HTOD &&
		      d.groups[1].bytes == 8192 && d.groups[1].device == 1);
		CHECK(d.groups[2].device == XPROBE_CUDA_UNKNOWN && d.groups[2].name[0] == '\0');
	}
	/* STOP from 0 again: the kernel group grew, a fourth group came; the
	 * totals replace the old ones */
	memset(&pkt, 0, sizeof(pkt));
	xpt_group(&pkt, K, 0, 0, "gemm", NC, 7, 90, 300, 1500, 0);
	xpt_group(&pkt, C, 1, XPROBE_AGENT_MEMCPY_HTOD, NULL, 0, 2, 50, 70, 120, 8192);
	xpt_group(&pkt, S, XPROBE_CUDA_UNKNOWN, 0, NULL, 0, 1, 9, 9, 9, 64);
	xpt_group(&pkt, K, 0, 0, "gemm", 0, 1, 5, 5, 5, 0); /* a cut name: its own key */
	agg_reply(&r, XPROBE_AGENT_OP_STOP, 16, &pkt, 0, 12);
	r.dropped = 1;
	CHECK(feed(&d, &r, &pkt, &err) == 0);
	CHECK_STR(err.message, "");
	CHECK_EQ_U64(d.rx.n, 4);
	CHECK_EQ_U64(d.grouped, 11);
	CHECK_EQ_U64(d.groups[0].count, 7);
	CHECK_EQ_U64(d.rx.st.dropped, 1);
	CHECK_EQ_U64(d.rx.st.state, XPROBE_AGENT_STOPPED);
	xp_capture_agg_dec_free(&d);

	/* a read from an offset keeps the groups before it */
	xp_capture_agg_dec_init(&d, PID, START);
	CHECK(arm(&d, 16, &err) == 0);
	good(&pkt);
	agg_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, 16, &pkt, 0, 8);
	CHECK(feed(&d, &r, &pkt, &err) == 0);
	memset(&pkt, 0, sizeof(pkt));
	xpt_group(&pkt, S, XPROBE_CUDA_UNKNOWN, 0, NULL, 0, 3, 9, 10, 28, 192);
	agg_reply(&r, XPROBE_AGENT_OP_STOP, 16, &pkt, 2, 10);
	CHECK(feed(&d, &r, &pkt, &err) == 0);
	CHECK_EQ_U64(d.rx.n, 3);
	CHECK_EQ_U64(d.grouped, 10);
	CHECK_STR(d.groups[0].name, "gemm");
	xp_capture_agg_dec_free(&d);
	xp_error_clear(&err);
}

/*
 * A good ARM, then a STOP built by good() and changed by @poke (offset of
 * a group byte, or -1 for the header) before it is fed: refused, field
 * @field.
 */
static void bad(void (*poke)(struct xprobe_agent_reply *r, struct xpt_pkt *p), const char *field,
		int line)
{
	struct xprobe_agent_reply r;
	struct xp_capture_agg_dec d;
	struct xp_error err = { 0 };
	const char *f;
	char want[64];
	int rc;

	snprintf(want, sizeof(want), "\"%s\"", field); /* details hold JSON text */
	xp_capture_agg_dec_init(&d, PID, START);
	CHECK(arm(&d, 16, &err) == 0);
	good(&pkt);
	agg_reply(&r, XPROBE_AGENT_OP_STOP, 16, &pkt, 0, 8);
	poke(&r, &pkt);
	rc = feed(&d, &r, &pkt, &err);
	f = xp_error_detail_get(&err, "field");
	if (rc != -XPROBE_E_TRACE_EXPORT_FAILED || !f || strcmp(f, want)) {
		fprintf(stderr, "line %d: rc %d field %s, expected %s (%s)\n", line, rc,
			f ? f : "-", field, err.message);
		CHECK(!"refused naming the field");
	}
	xp_error_clear(&err);
	xp_capture_agg_dec_free(&d);
}

static struct xprobe_agent_group *grp(struct xpt_pkt *p, size_t i)
{
	return (struct xprobe_agent_group *)(p->b + i * sizeof(struct xprobe_agent_group));
}

#define POKE(name, body)                                                  \
	static void name(struct xprobe_agent_reply *r, struct xpt_pkt *p) \
	{                                                                 \
		(void)r;                                                  \
		(void)p;                                                  \
		body;                                                     \
	}

POKE(p_kind, grp(p, 1)->kind = XPROBE_AGENT_KIND_CUDA_API)
POKE(p_count, grp(p, 0)->count = 0)
POKE(p_minmax, grp(p, 0)->min_ns = 400)
POKE(p_total_lo, grp(p, 0)->total_ns = 499)
POKE(p_total_hi, grp(p, 0)->total_ns = 1501)
/* 4 x 2^62 wraps to 0 in 64 bits: a total of 0 would pass unchecked */
POKE(p_total_wrap, {
	grp(p, 0)->min_ns = grp(p, 0)->max_ns = 1ull << 62;
	grp(p, 0)->count = 4;
	grp(p, 0)->total_ns = 0;
})
POKE(p_mk_kernel, grp(p, 0)->memcpy_kind = 1)
POKE(p_mk_range, grp(p, 1)->memcpy_kind = 6)
POKE(p_flags_copy, grp(p, 1)->flags = NC)
POKE(p_flags_unsupported, grp(p, 0)->flags = XPROBE_RECF_NAME_UNSUPPORTED)
POKE(p_name_set, {
	grp(p, 2)->name_len = 1;
	grp(p, 2)->name[0] = 'x';
})
POKE(p_name_long, grp(p, 0)->name_len = 128)
POKE(p_name_nul, grp(p, 0)->name[1] = '\0')
POKE(p_name_tail, grp(p, 0)->name[100] = 'x')
POKE(p_kernel_bytes, grp(p, 0)->bytes = 1)
POKE(p_dup, {
	*grp(p, 2) = *grp(p, 1);
	grp(p, 2)->count = 1;
	grp(p, 2)->total_ns = 60;
})
POKE(p_observed, r->observed = 7)
POKE(p_offset, {
	r->offset = 1;
	r->retained = 4;
})
POKE(p_nrecords, r->retained = 5)
POKE(p_bytes, {
	r->bytes = 3 * 184 - 8;
	p->len -= 8;
})
POKE(p_pid, r->pid = 1)
POKE(p_capacity, r->capacity = 17)
POKE(p_arm_ns, r->arm_ns = 5)
POKE(p_chunks, { r->nchunks = 2; })

static void test_bad(void)
{
	bad(p_kind, "kind", __LINE__);
	bad(p_count, "count", __LINE__);
	bad(p_minmax, "total_ns", __LINE__);
	bad(p_total_lo, "total_ns", __LINE__);
	bad(p_total_hi, "total_ns", __LINE__);
	bad(p_total_wrap, "total_ns", __LINE__);
	bad(p_mk_kernel, "memcpy_kind", __LINE__);
	bad(p_mk_range, "memcpy_kind", __LINE__);
	bad(p_flags_copy, "flags", __LINE__);
	bad(p_flags_unsupported, "flags", __LINE__);
	bad(p_name_set, "name_len", __LINE__);
	bad(p_name_long, "name_len", __LINE__);
	bad(p_name_nul, "name", __LINE__);
	bad(p_name_tail, "name", __LINE__);
	bad(p_kernel_bytes, "bytes", __LINE__);
	bad(p_dup, "key", __LINE__);
	bad(p_observed, "observed", __LINE__);
	bad(p_offset, "offset", __LINE__);
	bad(p_nrecords, "nrecords", __LINE__);
	bad(p_bytes, "bytes", __LINE__);
	bad(p_pid, "pid", __LINE__);
	bad(p_capacity, "capacity", __LINE__);
	bad(p_arm_ns, "arm_ns", __LINE__);
	bad(p_chunks, "nchunks", __LINE__);
}

/* Across replies: a group re-sent with another key or smaller totals,
 * groups before the ARM, a second ARM, an ARM with groups. */
static void test_sequence(void)
{
	struct xprobe_agent_reply r;
	struct xp_capture_agg_dec d;
	struct xp_error err = { 0 };
	const char *f;

	for (int k = 0; k < 2; k++) {
		xp_capture_agg_dec_init(&d, PID, START);
		CHECK(arm(&d, 16, &err) == 0);
		good(&pkt);
		agg_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, 16, &pkt, 0, 8);
		CHECK(feed(&d, &r, &pkt, &err) == 0);
		good(&pkt);
		if (k == 0)
			grp(&pkt, 0)->device = 1; /* another key at index 0 */
		else
			grp(&pkt, 1)->bytes = 4096; /* a copy group lost bytes */
		agg_reply(&r, XPROBE_AGENT_OP_STOP, 16, &pkt, 0, 8);
		CHECK(feed(&d, &r, &pkt, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		f = xp_error_detail_get(&err, "field");
		CHECK_STR(f ? f : "-", k == 0 ? "\"key\"" : "\"count\"");
		xp_error_clear(&err);
		xp_capture_agg_dec_free(&d);
	}
	xp_capture_agg_dec_init(&d, PID, START);
	good(&pkt);
	agg_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, 16, &pkt, 0, 8);
	CHECK(feed(&d, &r, &pkt, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	xp_error_clear(&err);
	CHECK(arm(&d, 16, &err) == 0);
	CHECK(arm(&d, 16, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	xp_error_clear(&err);
	xp_capture_agg_dec_free(&d);
	xp_capture_agg_dec_init(&d, PID, START);
	agg_reply(&r, XPROBE_AGENT_OP_ARM, 16, NULL, 0, 0);
	r.retained = 1;
	r.observed = 1;
	CHECK(feed(&d, &r, NULL, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	xp_error_clear(&err);
	xp_capture_agg_dec_free(&d);
}

/* fuzz_agent_aggregate's seeds (tests/fuzz/gen_agent_agg_seeds.py). */
static void test_seeds(void)
{
	static const struct {
		const char *name;
		int ok;
		size_t groups;
		uint64_t grouped;
	} seeds[] = {
		{ "table", 1, 4, 11 },	{ "grown", 1, 3, 9 },	{ "empty", 1, 0, 0 },
		{ "full", 1, 2, 4 },	{ "bad_dup", 0, 0, 0 }, { "bad_shrunk", 0, 0, 0 },
		{ "bad_cut", 0, 0, 0 },
	};
	static uint8_t buf[64 * 1024];

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct xp_capture_agg_dec d;
		struct xp_error err = { 0 };
		char path[256];
		size_t len;
		FILE *fp;
		int rc;

		snprintf(path, sizeof(path), "fuzz/corpus/fuzz_agent_aggregate/%s", seeds[i].name);
		fp = fopen(path, "rb");
		CHECK(fp != NULL);
		if (!fp)
			continue;
		len = fread(buf, 1, sizeof(buf), fp);
		fclose(fp);
		xp_capture_agg_dec_init(&d, PID, START);
		rc = xp_capture_agg_dec_buf(&d, buf, len, &err);
		if ((rc == 0) != seeds[i].ok)
			fprintf(stderr, "seed %s: rc %d %s\n", seeds[i].name, rc, err.message);
		CHECK((rc == 0) == seeds[i].ok);
		if (seeds[i].ok) {
			CHECK_EQ_U64(d.rx.n, seeds[i].groups);
			CHECK_EQ_U64(d.grouped, seeds[i].grouped);
		}
		xp_error_clear(&err);
		xp_capture_agg_dec_free(&d);
	}
}

int main(void)
{
	test_good();
	test_bad();
	test_sequence();
	test_seeds();
	TEST_MAIN_END();
}
