// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_agent_file.c - saved Agent captures (include/xprobe/agent.h, struct
 * xprobe_agent_capfile: what libxprobe writes for XPROBE_AGENT_OUTPUT) as
 * `measure --input` decodes them: xp_capture_agent_file_check, then
 * xp_capture_agent_dec_file, the control socket's decoder replaying the file's
 * STOP reply and its records.  A file anyone may have written: every byte
 * untrusted.  Seeds: real captures written by live_nvtx under
 * NVTX_INJECTION64_PATH (thread, process and Ex ranges, a full capture, one
 * written on SIGTERM) and broken variants of them
 * (tests/fuzz/gen_agent_file_seeds.py).
 *
 * Contract checked: a failure always says why (err.code); a decode that
 * succeeds passed the header check, kept at most max_events events, each
 * with the file's pid, a nonzero timestamp and a known event type, decoded
 * exactly the records the header announced and left no reply open; every
 * kept event renders as JSON.  The same input under a bound of 3 events
 * fails where the loose decode did (never the other way), and with the
 * bound deferred it succeeds exactly when the loose decode did, keeping 3
 * events at most and counting the same total.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "capture/decode_agent.h"
#include "capture/record_events.h"
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

struct outcome {
	int rc;
	size_t count;
	uint64_t observed, records;
};

static struct outcome run(const uint8_t *data, size_t size, size_t max, bool defer)
{
	struct xprobe_agent_capfile h;
	struct outcome o = { 0 };
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xp_error err;

	memset(&err, 0, sizeof(err));
	xp_capture_init(&c, max);
	if (xp_capture_agent_dec_init(&d, &c, 0, 0))
		abort();
	o.rc = xp_capture_agent_dec_file(&d, data, size, defer, &err);
	if (o.rc && !err.code)
		abort(); /* a failure always says why */
	if (!o.rc) {
		struct xp_error e2;

		memset(&e2, 0, sizeof(e2));
		if (xp_capture_agent_file_check(data, size, &h, &e2))
			abort();
		xp_error_clear(&e2);
		if (d.in_reply || c.count > max || d.st.records != h.reply.nrecords ||
		    d.pid != h.reply.pid || c.count > d.map->observed)
			abort();
		for (size_t i = 0; i < c.count; i++) {
			const struct xp_event *e = &c.events[i];

			if (!e->timestamp_ns || e->pid != h.reply.pid ||
			    e->event_type >= XP_EV__COUNT)
				abort();
		}
		render_all(&c);
	}
	o.count = c.count;
	o.observed = d.map->observed;
	o.records = d.st.records;
	xp_capture_agent_dec_free(&d);
	xp_capture_free(&c);
	xp_error_clear(&err);
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome loose = run(data, size, 100000, false);
	struct outcome tight = run(data, size, 3, false);
	struct outcome deferred = run(data, size, 3, true);

	/* a tighter bound can only fail where the loose one passed */
	if (loose.rc && !tight.rc)
		abort();
	if (!loose.rc && !tight.rc &&
	    (loose.count != tight.count || loose.records != tight.records))
		abort();
	/* deferred: the same verdict (but for the loose bound itself), at
	 * most 3 kept, the same total */
	if (loose.rc != -XPROBE_E_EVENT_RATE_TOO_HIGH && (loose.rc == 0) != (deferred.rc == 0))
		abort();
	if (!loose.rc && (deferred.count > 3 || deferred.observed != loose.observed ||
			  deferred.records != loose.records))
		abort();
	return 0;
}
