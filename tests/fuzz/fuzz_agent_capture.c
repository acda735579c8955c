// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_agent_capture.c - the Agent's control-socket captures as the CLI
 * decodes them (src/capture/decode_agent.c): the reply headers and the
 * record packets come from another process, so every byte is untrusted.
 * The input is what xp_capture_agent_dec_buf() takes: one or more replies, each a
 * struct xprobe_agent_reply followed by its packets, each packet behind
 * its length as a native u32 (tests/fuzz/gen_agent_seeds.py writes the
 * seeds).  The first header is also checked alone as the reply of every
 * op.
 *
 * Contract checked: a decode that succeeds kept at most max_events events,
 * every one an NVTX range boundary or CUDA API call with a nonzero
 * timestamp and a thread, or a GPU activity start/end without one in a
 * CUPTI clock (the cupti one for every activity event when the last reply
 * said the clock is not host-monotonic), as many activity starts as ends;
 * consumed every record it announced (records == the last offset +
 * records), never more than retained; the same input under a bound of 3
 * events either succeeds identically or fails, never crashes; every kept
 * event renders as JSON.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "capture/decode_agent.h"
#include "model/event_json.h"

static void render_all(const struct xp_capture *c)
{
	for (size_t i = 0; i < c->count; i++) {
		struct xpc_buf b = XPC_BUF_INIT;
		struct xpc_json w;

		xpc_json_init_buf(&w, &b, 0);
		xp_event_render(&w, c, &c->events[i], "S");
		if (xpc_json_finish(&w))
			abort();
		xpc_buf_free(&b);
	}
}

static bool is_start(uint8_t t)
{
	return t == XP_EV_GPU_KERNEL_START || t == XP_EV_GPU_MEMCPY_START ||
	       t == XP_EV_GPU_MEMSET_START;
}

/* One kept event as the decoder's contract says it may be. */
static bool event_ok(const struct xp_event *e, bool aligned)
{
	if (!e->timestamp_ns || e->pid != 4242)
		return false;
	switch (e->event_type) {
	case XP_EV_NVTX_RANGE_START:
	case XP_EV_NVTX_RANGE_END:
		return (e->flags & XP_EVF_NVTX) && e->tid;
	case XP_EV_CUDA_API_ENTRY:
	case XP_EV_CUDA_API_EXIT:
		return (e->flags & XP_EVF_CUDA) && e->tid && e->source == XP_SRC_CUPTI_CALLBACK &&
		       e->clock_domain == XP_CLOCK_HOST_MONOTONIC &&
		       (e->cuda.flags & XP_CUDAF_CORRELATION_ID);
	case XP_EV_GPU_KERNEL_START:
	case XP_EV_GPU_KERNEL_END:
	case XP_EV_GPU_MEMCPY_START:
	case XP_EV_GPU_MEMCPY_END:
	case XP_EV_GPU_MEMSET_START:
	case XP_EV_GPU_MEMSET_END:
		return (e->flags & XP_EVF_CUDA) && !e->tid && e->source == XP_SRC_CUPTI_ACTIVITY &&
		       (e->clock_domain == XP_CLOCK_CUPTI ||
			(aligned && e->clock_domain == XP_CLOCK_CUPTI_NORMALIZED));
	}
	return false;
}

static int run(const uint8_t *data, size_t size, size_t max, size_t *count, uint64_t *records)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xp_error err;
	int rc;

	memset(&err, 0, sizeof(err));
	xp_capture_init(&c, max);
	if (xp_capture_agent_dec_init(&d, &c, 4242, 777))
		abort();
	rc = xp_capture_agent_dec_buf(&d, data, size, &err);
	if (rc && !err.code)
		abort(); /* a failure always says why */
	if (!rc) {
		if (d.in_reply || c.count > max || d.st.records > d.st.retained)
			abort();
		bool aligned = d.st.features & XPROBE_AGENT_F_HOST_MONOTONIC;
		long balance = 0;

		for (size_t i = 0; i < c.count; i++) {
			const struct xp_event *e = &c.events[i];

			if (!event_ok(e, aligned))
				abort();
			if (e->source == XP_SRC_CUPTI_ACTIVITY)
				balance += is_start(e->event_type) ? 1 : -1;
		}
		if (c.count < max && balance)
			abort();
		render_all(&c);
	}
	*count = c.count;
	*records = d.st.records;
	xp_capture_agent_dec_free(&d);
	xp_capture_free(&c);
	xp_error_clear(&err);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n1 = 0, n2 = 0;
	uint64_t r1 = 0, r2 = 0;
	int rc1, rc2;

	if (size >= sizeof(struct xprobe_agent_reply)) {
		for (uint32_t op = 0; op <= XPROBE_AGENT_OP_CLOSE + 1; op++) {
			struct xp_error err;

			memset(&err, 0, sizeof(err));
			if (xp_capture_agent_reply_check(data, sizeof(struct xprobe_agent_reply),
							 op, &err) &&
			    !err.code)
				abort();
			xp_error_clear(&err);
		}
	}
	rc1 = run(data, size, 100000, &n1, &r1);
	rc2 = run(data, size, 3, &n2, &r2);
	/* a tighter bound can only fail where the loose one passed */
	if (rc1 == 0 && rc2 == 0 && (n1 != n2 || r1 != r2))
		abort();
	if (rc1 && !rc2)
		abort();
	return 0;
}
