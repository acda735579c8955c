// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_agent_aggregate.c - the Agent's aggregate captures as the CLI
 * decodes them (src/capture/decode_agent_agg.c): reply headers and packets
 * of struct xprobe_agent_group from another process, so every byte is
 * untrusted.  The input is what xp_capture_agg_dec_buf() takes: replies each
 * followed by their packets, each packet behind its length as a native
 * u32 (tests/fuzz/gen_agent_agg_seeds.py writes the seeds).
 *
 * Contract checked: a decode that succeeds has closed its last reply and
 * holds at most `retained` <= capacity groups, each with count >= 1,
 * min <= max, min x count <= total <= max x count, a kind of KERNEL,
 * MEMCPY or MEMSET, a name only on kernels (NUL-terminated at name_len,
 * no NUL before), a memcpy kind only on copies; their counts add up to
 * `grouped` <= observed; every group's selector hints fit
 * XP_AGG_HINT_MAX; sorted, the result renders as a JSON document.  A
 * failure always says why (err.code set).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "capture/decode_agent_agg.h"
#include "agent/agent_aggregate.h"
#include "report/report.h"

static void check_group(const struct xp_capture_agg_group *g)
{
	unsigned __int128 lo = (unsigned __int128)g->min_ns * g->count;
	unsigned __int128 hi = (unsigned __int128)g->max_ns * g->count;
	char hint[XP_AGG_HINT_MAX];

	if (!g->count || g->min_ns > g->max_ns || lo > g->total_ns || hi < g->total_ns)
		abort();
	if (g->kind != XPROBE_AGENT_KIND_KERNEL && g->kind != XPROBE_AGENT_KIND_MEMCPY &&
	    g->kind != XPROBE_AGENT_KIND_MEMSET)
		abort();
	if (g->name_len > XPROBE_NAME_MAX || g->name[g->name_len] || strlen(g->name) != g->name_len)
		abort();
	if (g->kind != XPROBE_AGENT_KIND_KERNEL && (g->name_len || g->name_complete))
		abort();
	if (g->memcpy_kind > XPROBE_AGENT_MEMCPY_PTOP ||
	    (g->kind != XPROBE_AGENT_KIND_MEMCPY && g->memcpy_kind))
		abort();
	if (!xp_agent_aggregate_hint(g, false, hint, sizeof(hint)) ||
	    !xp_agent_aggregate_hint(g, true, hint, sizeof(hint)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_agent_agg_result res;
	struct xp_warnings ws = { 0 };
	struct xp_error err;
	uint64_t sum = 0;
	int rc;

	memset(&err, 0, sizeof(err));
	memset(&res, 0, sizeof(res));
	xp_capture_agg_dec_init(&res.dec, 4242, 777);
	rc = xp_capture_agg_dec_buf(&res.dec, data, size, &err);
	if (rc && !err.code)
		abort();
	if (!rc) {
		const struct xp_capture_agg_dec *d = &res.dec;

		if (d->rx.in_reply || d->rx.n > d->rx.st.retained || d->rx.st.retained > d->rx.st.capacity)
			abort();
		for (size_t i = 0; i < d->rx.n; i++) {
			check_group(&d->groups[i]);
			sum += d->groups[i].count;
		}
		if (sum != d->grouped || sum > d->rx.st.observed)
			abort();
		xp_agent_aggregate_sort(&res);
		{
			struct xpc_buf b = XPC_BUF_INIT;
			struct xpc_json w;
			struct xp_aggregate_view v = {
				.session_id = "S",
				.status = "completed",
				.start_selector = "cuda:kernel_start",
				.end_selector = "cuda:kernel_end",
				.pid = 4242,
				.result = &res,
				.warnings = &ws,
			};

			xpc_json_init_buf(&w, &b, 0);
			xp_render_aggregate_json(&w, &v);
			if (xpc_json_finish(&w))
				abort();
			xpc_buf_free(&b);
		}
	}
	xp_capture_agg_dec_free(&res.dec);
	xp_error_clear(&err);
	return 0;
}
