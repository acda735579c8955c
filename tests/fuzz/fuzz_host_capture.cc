// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_host_capture.cc - libFuzzer target for the HostCaptureResult
 * decoder (src/capture/json/decode_json.cc).  Decodes each input bounded at 16
 * events; on success the counters must be consistent and every event
 * must render.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "../../common/buf.h"
#include "../../common/json.h"
#include "capture/capture_io.h"
#include "capture/decode_json.h"
#include "model/event_json.h"
}

#include "fuzz_json_builtin.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_capture c;
	struct xp_error err = {};
	int rc;

	xp_capture_init(&c, 16);
	rc = xp_decode_host_capture((const char *)data, size, "fuzz", &c, &err);
	if (rc == 0) {
		struct xpc_buf b = XPC_BUF_INIT;
		struct xpc_json w;

		if (!c.has_pid)
			abort();
		for (size_t i = 0; i < c.count; i++) {
			if (c.events[i].pid != c.pid)
				abort();
			xpc_json_init_buf(&w, &b, 0);
			xp_event_render(&w, &c, &c.events[i], "S");
			if (xpc_json_finish(&w))
				abort();
		}
		xpc_buf_free(&b);
	} else if (err.code == 0 || err.message[0] == '\0') {
		abort(); /* every failure explains itself */
	}
	xp_error_clear(&err);
	xp_capture_free(&c);
	return 0;
}
