// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_agent_histogram.c - the Agent's HISTOGRAM captures as the CLI
 * decodes them (src/capture/decode_agent_hist.c): reply headers and
 * packets of struct xprobe_agent_hist from another process, so every byte
 * is untrusted.  The input is what xp_capture_hist_dec_buf() takes:
 * replies each followed by their packets, each packet behind its length as
 * a native u32 (tests/fuzz/gen_agent_hist_seeds.py writes the seeds).
 *
 * Contract checked: a decode that succeeds has closed its last reply and
 * holds at most `retained` <= capacity histograms, number 0 the total
 * (flag TOTAL), each count the sum of its buckets, min <= max covering the
 * non-empty buckets, a group's kind NVTX_RANGE..MEMSET and its name
 * NUL-free; the result it becomes (xp_agent_hist_fill, --by name) renders
 * as a LatencyHistogramResult JSON document.  A failure always says why
 * (err.code set).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "agent/agent_histogram.h"
#include "capture/decode_agent_hist.h"
#include "report/render_histogram.h"

static void check_hist(const struct xprobe_agent_hist *x, size_t i)
{
	uint64_t n = 0;

	for (uint32_t b = 0; b < XPROBE_LH_BUCKETS; b++)
		n += x->buckets[b];
	if (n != x->count || (n && x->min_ns > x->max_ns) || (!n && (x->min_ns || x->max_ns)))
		abort();
	if ((i == 0) != !!(x->flags & XPROBE_AGENT_HIST_F_TOTAL))
		abort();
	if (i && (x->kind < XPROBE_AGENT_KIND_NVTX_RANGE || x->kind > XPROBE_AGENT_KIND_MEMSET))
		abort();
	if (x->name_len > XPROBE_NAME_MAX || memchr(x->name, 0, x->name_len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_capture_hist_dec d;
	struct xp_warnings ws = { 0 };
	struct xp_inv_lh_result r;
	struct xp_error err;
	int rc;

	memset(&err, 0, sizeof(err));
	xp_capture_hist_dec_init(&d, 4242, 777);
	rc = xp_capture_hist_dec_buf(&d, data, size, &err);
	if (rc && !err.code)
		abort();
	if (!rc) {
		if (d.rx.in_reply || d.rx.n > d.rx.st.retained || d.rx.st.retained > d.rx.st.capacity)
			abort();
		for (size_t i = 0; i < d.rx.n; i++)
			check_hist(&d.h[i], i);
		memset(&r, 0, sizeof(r));
		r.group_by = XP_LH_BY_NAME;
		r.agent_pairing = "cuda_activity_record";
		if (xp_agent_hist_fill(&r, d.h, d.rx.n) == 0 && xp_inv_lh_warnings(&r, &ws) == 0) {
			struct xpc_buf b = XPC_BUF_INIT;
			struct xpc_json w;
			struct xp_histogram_view v = {
				.session_id = "S",
				.pid = 4242,
				.process_start_time = 777,
				.start_selector = "cuda:kernel_start",
				.end_selector = "cuda:kernel_end",
				.result = &r,
				.warnings = &ws,
			};

			xpc_json_init_buf(&w, &b, 0);
			xp_render_histogram_json(&w, &v);
			if (xpc_json_finish(&w))
				abort();
			xpc_buf_free(&b);
		}
		xp_inv_lh_result_free(&r);
		xp_warnings_free(&ws);
	}
	xp_capture_hist_dec_free(&d);
	xp_error_clear(&err);
	return 0;
}
