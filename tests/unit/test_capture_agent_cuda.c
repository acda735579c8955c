/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_capture_agent_cuda.c - the CUDA records of an Agent capture
 * (src/capture/decode_agent.c, record_events.c): API entry/exit and
 * kernel / memcpy / memset activity become the contract's events with
 * every field the record carries, the activity clock follows the
 * capture's HOST_MONOTONIC flag (and stays cupti once it was lost), and
 * every malformed CUDA record is refused naming its field.  The seeds of
 * fuzz_agent_capture with CUDA records decode as their generator says.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent_wire.h"
#include "capture/decode_agent.h"
#include "capture/record_events.h"
#include "error_text.h"
#include "testlib.h"

#define PID 4242u
#define START 777u
#define F_CUDA (XPROBE_AGENT_F_HOST_MONOTONIC | XPROBE_AGENT_F_DEVICE_BACKEND)

static struct xpt_pkt pkt;

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

/* One SNAPSHOT of @p after an ARM, with @features on both replies. */
static int snapshot(struct xp_capture_agent_dec *d, const struct xpt_pkt *p, uint32_t features,
		    struct xp_error *err)
{
	struct xprobe_agent_reply r;
	int rc;

	xpt_reply(&r, XPROBE_AGENT_OP_ARM, PID, START, 100);
	r.features = features;
	rc = feed(d, &r, NULL, err);
	if (rc)
		return rc;
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 100);
	r.features = features;
	xpt_reply_records(&r, 0, p, 1);
	return feed(d, &r, p, err);
}

static const char *attr(const struct xp_capture *c, const struct xp_event *e, const char *key)
{
	xp_str_t k = xp_capture_intern((struct xp_capture *)c, key);
	xp_str_t v = xp_event_attr(c, e, k);

	return v ? xp_capture_str(c, v) : NULL;
}

static void test_api_and_activity(void)
{
	struct xprobe_cuda_activity k = xpt_activity(XPROBE_EV_CUDA_KERNEL, 5050, 9050, 42);
	struct xprobe_cuda_activity m = xpt_activity(XPROBE_EV_CUDA_MEMCPY, 9100, 9600, 43);
	struct xprobe_cuda_activity s = xpt_activity(XPROBE_EV_CUDA_MEMSET, 9700, 9800, 45);
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xp_error err = { 0 };
	const struct xp_event *e;

	k.hdr.flags = XPROBE_RECF_NAME_COMPLETE;
	k.hdr.aux = 3;
	k.grid_x = 4;
	k.grid_y = 2;
	k.grid_z = 1;
	k.block_x = 128;
	k.block_y = k.block_z = 1;
	m.bytes = 4096;
	m.runtime_correlation_id = 44;
	m.memcpy_kind = XPROBE_AGENT_MEMCPY_DTOH;
	m.raw_copy_kind = 4; /* CUPTI's AtoH: a device-to-host kind */
	m.hdr.aux = XPROBE_CUDA_UNKNOWN;
	m.stream_id = XPROBE_CUDA_UNKNOWN;
	s.bytes = 64;
	s.memset_value = 0xab;
	memset(&pkt, 0, sizeof(pkt));
	xpt_api(&pkt, XPROBE_EV_CUDA_API_ENTRY, 11, 5000, 42, XPROBE_CUDA_DOMAIN_RUNTIME, 211,
		"cudaLaunchKernel");
	xpt_api(&pkt, XPROBE_EV_CUDA_API_EXIT, 11, 5100, 42, XPROBE_CUDA_DOMAIN_RUNTIME, 211,
		"cudaLaunchKernel");
	xpt_act(&pkt, &k, "gemm");
	xpt_act(&pkt, &m, NULL);
	xpt_act(&pkt, &s, NULL);
	xpt_api(&pkt, XPROBE_EV_CUDA_API_ENTRY, 12, 9990, 47, XPROBE_CUDA_DOMAIN_DRIVER, 307,
		"cuLaunchKernel");
	dec_open(&d, &c, 100);
	CHECK(snapshot(&d, &pkt, F_CUDA, &err) == 0);
	CHECK_STR(err.message, "");
	CHECK_EQ_U64(c.count, 2 + 2 + 2 + 2 + 1);
	CHECK_EQ_U64(d.st.records, 6);
	if (c.count != 9)
		goto out;
	/* the API entry */
	e = &c.events[0];
	CHECK_EQ_U64(e->event_type, XP_EV_CUDA_API_ENTRY);
	CHECK_EQ_U64(e->source, XP_SRC_CUPTI_CALLBACK);
	CHECK_EQ_U64(e->clock_domain, XP_CLOCK_HOST_MONOTONIC);
	CHECK_EQ_U64(e->tid, 11);
	CHECK_EQ_U64(e->pid, PID);
	CHECK_EQ_U64(e->timestamp_ns, 5000);
	CHECK_EQ_U64(e->cuda.correlation_id, 42);
	CHECK_EQ_U64(e->cuda.runtime_correlation_id, 42);
	CHECK_EQ_U64(e->cuda.callback_domain, 2);
	CHECK_EQ_U64(e->cuda.callback_id, 211);
	CHECK(!(e->cuda.flags & (XP_CUDAF_CONTEXT_ID | XP_CUDAF_DEVICE_ID)));
	CHECK_STR(attr(&c, e, "cuda_api_name"), "\"cudaLaunchKernel\"");
	CHECK_STR(attr(&c, e, "cuda_api_domain"), "\"runtime_api\"");
	CHECK_EQ_U64(c.events[1].event_type, XP_EV_CUDA_API_EXIT);
	/* the kernel: start at ts, end at a0 */
	e = &c.events[2];
	CHECK_EQ_U64(e->event_type, XP_EV_GPU_KERNEL_START);
	CHECK_EQ_U64(e->source, XP_SRC_CUPTI_ACTIVITY);
	CHECK_EQ_U64(e->clock_domain, XP_CLOCK_CUPTI_NORMALIZED);
	CHECK_EQ_U64(e->tid, 0);
	CHECK_EQ_U64(e->timestamp_ns, 5050);
	CHECK_EQ_U64(e->cuda.start_ns, 5050);
	CHECK(!(e->cuda.flags & XP_CUDAF_END_NS));
	CHECK_EQ_U64(e->cuda.device_id, 3);
	CHECK_EQ_U64(e->cuda.context_id, 1);
	CHECK_EQ_U64(e->cuda.stream_id, 7);
	CHECK_EQ_U64(e->cuda.correlation_id, 42);
	CHECK(!(e->cuda.flags & XP_CUDAF_RUNTIME_CORRELATION_ID));
	CHECK_STR(xp_capture_str(&c, e->cuda.kernel_name), "gemm");
	CHECK(e->cuda.grid.x == 4 && e->cuda.grid.y == 2 && e->cuda.block.x == 128);
	CHECK((e->cuda.flags & (XP_CUDAF_GRID | XP_CUDAF_BLOCK)) ==
	      (XP_CUDAF_GRID | XP_CUDAF_BLOCK));
	CHECK(!(e->cuda.flags & (XP_CUDAF_BYTES | XP_CUDAF_MEMCPY_KIND)));
	CHECK_STR(attr(&c, e, "kernel_name_complete"), "true");
	e = &c.events[3];
	CHECK_EQ_U64(e->event_type, XP_EV_GPU_KERNEL_END);
	CHECK_EQ_U64(e->timestamp_ns, 9050);
	CHECK_EQ_U64(e->cuda.end_ns, 9050);
	CHECK(!(e->cuda.flags & XP_CUDAF_START_NS));
	/* the copy: no device, no stream, bytes and direction */
	e = &c.events[4];
	CHECK_EQ_U64(e->event_type, XP_EV_GPU_MEMCPY_START);
	CHECK(!(e->cuda.flags & (XP_CUDAF_DEVICE_ID | XP_CUDAF_STREAM_ID | XP_CUDAF_GRID)));
	CHECK_EQ_U64(e->cuda.bytes, 4096);
	CHECK_EQ_U64(e->cuda.memcpy_kind, XP_MEMCPY_DTOH);
	CHECK_EQ_U64(e->cuda.runtime_correlation_id, 44);
	CHECK(e->cuda.kernel_name == 0);
	CHECK_STR(attr(&c, e, "cupti_copy_kind"), "4");
	CHECK_EQ_U64(c.events[5].event_type, XP_EV_GPU_MEMCPY_END);
	/* the set */
	e = &c.events[6];
	CHECK_EQ_U64(e->event_type, XP_EV_GPU_MEMSET_START);
	CHECK_EQ_U64(e->cuda.bytes, 64);
	CHECK(!(e->cuda.flags & XP_CUDAF_MEMCPY_KIND));
	CHECK_STR(attr(&c, e, "memset_value"), "171");
	CHECK_EQ_U64(c.events[7].timestamp_ns, 9800);
	/* the driver call */
	e = &c.events[8];
	CHECK_STR(attr(&c, e, "cuda_api_domain"), "\"driver_api\"");
	CHECK(!(e->cuda.flags & XP_CUDAF_RUNTIME_CORRELATION_ID));
out:
	dec_close(&d, &c);
}

/* HOST_MONOTONIC lost after a snapshot: the activity events decoded so
 * far and later are in the cupti clock; claimed again: still cupti. */
static void test_activity_clock(void)
{
	struct xprobe_cuda_activity k = xpt_activity(XPROBE_EV_CUDA_KERNEL, 100, 200, 1);
	struct xprobe_agent_reply r;
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xp_error err = { 0 };

	memset(&pkt, 0, sizeof(pkt));
	xpt_act(&pkt, &k, "a");
	xpt_api(&pkt, XPROBE_EV_CUDA_API_ENTRY, 11, 150, 1, 2, 211, "cudaLaunchKernel");
	dec_open(&d, &c, 100);
	CHECK(snapshot(&d, &pkt, F_CUDA, &err) == 0);
	CHECK(c.count == 3 && c.events[0].clock_domain == XP_CLOCK_CUPTI_NORMALIZED);
	xpt_reply(&r, XPROBE_AGENT_OP_SNAPSHOT, PID, START, 100);
	r.features = XPROBE_AGENT_F_DEVICE_BACKEND;
	r.retained = 2;
	xpt_reply_records(&r, 2, &pkt, 1);
	CHECK(feed(&d, &r, &pkt, &err) == 0);
	CHECK_EQ_U64(c.count, 6);
	for (size_t i = 0; i < c.count; i++)
		CHECK_EQ_U64(c.events[i].clock_domain, c.events[i].source == XP_SRC_CUPTI_ACTIVITY ?
							       XP_CLOCK_CUPTI :
							       XP_CLOCK_HOST_MONOTONIC);
	xpt_reply(&r, XPROBE_AGENT_OP_STOP, PID, START, 100);
	r.features = F_CUDA;
	r.state = XPROBE_AGENT_STOPPED;
	r.stop_reason = XPROBE_AGENT_STOP_REQUESTED;
	r.retained = 4;
	xpt_reply_records(&r, 4, &pkt, 1);
	CHECK(feed(&d, &r, &pkt, &err) == 0);
	CHECK_EQ_U64(c.count, 9);
	CHECK_EQ_U64(c.events[6].clock_domain, XP_CLOCK_CUPTI);
	dec_close(&d, &c);
}

/* One malformed record in a packet of its own: refused naming @field. */
static void bad_record(const struct xpt_pkt *p, const char *field, int line)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xp_error err = { 0 };
	const char *f;

	dec_open(&d, &c, 100);
	if (snapshot(&d, p, F_CUDA, &err) != -XPROBE_E_TRACE_EXPORT_FAILED) {
		fprintf(stderr, "line %d: accepted a record with a bad %s\n", line, field);
		CHECK(!"refused");
	}
	f = xp_error_detail_get(&err, "field");
	if (!f || strcmp(f, field) != 0) {
		fprintf(stderr, "line %d: field %s, expected %s (%s)\n", line, f ? f : "-", field,
			err.message);
		CHECK(!"the field named");
	}
	xp_error_clear(&err);
	dec_close(&d, &c);
}

#define BAD_ACT(a, name, field)                    \
	do {                                       \
		memset(&pkt, 0, sizeof(pkt));      \
		xpt_act(&pkt, &(a), name);         \
		bad_record(&pkt, field, __LINE__); \
	} while (0)

static void test_malformed(void)
{
	struct xprobe_cuda_activity a;
	uint16_t u16;

	a = xpt_activity(XPROBE_EV_CUDA_MEMSET, 10, 20, 1);
	a.hdr.tid = 5;
	BAD_ACT(a, NULL, "\"tid\"");
	a = xpt_activity(XPROBE_EV_CUDA_MEMSET, 30, 20, 1);
	BAD_ACT(a, NULL, "\"a0\"");
	a = xpt_activity(XPROBE_EV_CUDA_KERNEL, 10, 20, 1);
	a.hdr.a1 = 7; /* a session's execution id */
	BAD_ACT(a, "k", "\"a1\"");
	a = xpt_activity(XPROBE_EV_CUDA_MEMCPY, 10, 20, 1);
	BAD_ACT(a, "named", "\"size\"");
	a = xpt_activity(XPROBE_EV_CUDA_MEMSET, 10, 20, 1);
	a.hdr.flags = XPROBE_RECF_NAME_COMPLETE;
	BAD_ACT(a, NULL, "\"flags\"");
	a = xpt_activity(XPROBE_EV_CUDA_KERNEL, 10, 20, 1);
	a.hdr.flags = XPROBE_RECF_NAME_UNSUPPORTED;
	BAD_ACT(a, "k", "\"flags\"");
	a = xpt_activity(XPROBE_EV_CUDA_KERNEL, 10, 20, 1);
	a.bytes = 8;
	BAD_ACT(a, "k", "\"fields\"");
	a = xpt_activity(XPROBE_EV_CUDA_KERNEL, 10, 20, 1);
	a.memset_value = 1;
	BAD_ACT(a, "k", "\"fields\"");
	a = xpt_activity(XPROBE_EV_CUDA_MEMSET, 10, 20, 1);
	a.memcpy_kind = 1;
	BAD_ACT(a, NULL, "\"fields\"");
	a = xpt_activity(XPROBE_EV_CUDA_MEMCPY, 10, 20, 1);
	a.grid_x = 1;
	BAD_ACT(a, NULL, "\"fields\"");
	a = xpt_activity(XPROBE_EV_CUDA_MEMCPY, 10, 20, 1);
	a.memcpy_kind = 6;
	BAD_ACT(a, NULL, "\"memcpy_kind\"");
	a = xpt_activity(XPROBE_EV_CUDA_MEMCPY, 10, 20, 1);
	a.reserved = 1;
	BAD_ACT(a, NULL, "\"reserved\"");
	/* a NUL inside the kernel name, bytes after it */
	a = xpt_activity(XPROBE_EV_CUDA_KERNEL, 10, 20, 1);
	memset(&pkt, 0, sizeof(pkt));
	xpt_act(&pkt, &a, "abc");
	pkt.b[XPROBE_CUDA_ACTIVITY_SIZE + 1] = 0;
	bad_record(&pkt, "\"name\"", __LINE__);
	memset(&pkt, 0, sizeof(pkt));
	xpt_act(&pkt, &a, "abc");
	pkt.b[XPROBE_CUDA_ACTIVITY_SIZE + 5] = 'x';
	bad_record(&pkt, "\"name\"", __LINE__);
	/* a kernel record cut to 96 bytes, one claiming a longer name */
	memset(&pkt, 0, sizeof(pkt));
	xpt_act(&pkt, &a, "abc");
	u16 = 96;
	memcpy(pkt.b, &u16, 2);
	pkt.len = 96;
	bad_record(&pkt, "\"size\"", __LINE__);
	memset(&pkt, 0, sizeof(pkt));
	xpt_act(&pkt, &a, "abc");
	u16 = 9;
	memcpy(pkt.b + 22, &u16, 2);
	bad_record(&pkt, "\"size\"", __LINE__);
	/* API records: no domain, no correlation id, no name, no thread */
	memset(&pkt, 0, sizeof(pkt));
	xpt_api(&pkt, XPROBE_EV_CUDA_API_ENTRY, 11, 10, 1, 3, 1, "f");
	bad_record(&pkt, "\"a1\"", __LINE__);
	memset(&pkt, 0, sizeof(pkt));
	xpt_api(&pkt, XPROBE_EV_CUDA_API_EXIT, 11, 10, 0, 2, 1, "f");
	bad_record(&pkt, "\"a0\"", __LINE__);
	memset(&pkt, 0, sizeof(pkt));
	xpt_api(&pkt, XPROBE_EV_CUDA_API_EXIT, 11, 10, 1ull << 32, 2, 1, "f");
	bad_record(&pkt, "\"a0\"", __LINE__);
	memset(&pkt, 0, sizeof(pkt));
	xpt_rec(&pkt, XPROBE_EV_CUDA_API_ENTRY, 11, 10, 1, 1, NULL, 0);
	memcpy(pkt.b + 32, &(uint64_t){ 2 }, 8);
	bad_record(&pkt, "\"name_len\"", __LINE__);
	memset(&pkt, 0, sizeof(pkt));
	xpt_api(&pkt, XPROBE_EV_CUDA_API_ENTRY, 0, 10, 1, 2, 1, "f");
	bad_record(&pkt, "\"tid\"", __LINE__);
	/* device activity of the sim backend is never an Agent record */
	memset(&pkt, 0, sizeof(pkt));
	xpt_rec(&pkt, XPROBE_EV_DEVICE_ACTIVITY, 0, 10, 0, 20, "gemm", 1);
	bad_record(&pkt, "\"type\"", __LINE__);
}

/* fuzz_agent_capture's CUDA seeds (tests/fuzz/gen_agent_seeds.py). */
static void test_seeds(void)
{
	static const struct {
		const char *name;
		int rc;
		size_t events;
		uint8_t clock;
	} seeds[] = {
		{ "cuda", 0, 11, XP_CLOCK_CUPTI_NORMALIZED },
		{ "cuda_unaligned", 0, 11, XP_CLOCK_CUPTI },
		{ "bad_cuda_tid", -XPROBE_E_TRACE_EXPORT_FAILED, 0, 0 },
		{ "bad_cuda_end", -XPROBE_E_TRACE_EXPORT_FAILED, 0, 0 },
	};
	static uint8_t buf[64 * 1024];

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct xp_capture_agent_dec d;
		struct xp_capture c;
		struct xp_error err = { 0 };
		char path[256];
		size_t len;
		FILE *f;
		int rc;

		snprintf(path, sizeof(path), "fuzz/corpus/fuzz_agent_capture/%s", seeds[i].name);
		f = fopen(path, "rb");
		CHECK(f != NULL);
		if (!f)
			continue;
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		dec_open(&d, &c, 100);
		rc = xp_capture_agent_dec_buf(&d, buf, len, &err);
		if (rc != seeds[i].rc)
			fprintf(stderr, "seed %s: rc %d %s\n", seeds[i].name, rc, err.message);
		CHECK(rc == seeds[i].rc);
		CHECK_EQ_U64(c.count, seeds[i].events);
		for (size_t k = 0; k < c.count; k++)
			if (c.events[k].source == XP_SRC_CUPTI_ACTIVITY)
				CHECK_EQ_U64(c.events[k].clock_domain, seeds[i].clock);
		xp_error_clear(&err);
		dec_close(&d, &c);
	}
}

int main(void)
{
	test_api_and_activity();
	test_activity_clock();
	test_malformed();
	test_seeds();
	TEST_MAIN_END();
}
