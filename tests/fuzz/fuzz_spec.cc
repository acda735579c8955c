// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_spec.cc - libFuzzer target for the MeasurementSpec parser
 * (src/capture/spec.c and the xp_jdoc view in decode_json.cc).  On
 * success the required strings must be there and the policy in range; on
 * failure the error must be INVALID_EVENT_SELECTOR with nothing leaked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "capture/decode_json.h"
#include "capture/spec.h"
}

#include "fuzz_json_builtin.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_error err = {};
	struct xp_spec s;

	if (xp_spec_parse((const char *)data, size, "fuzz", &s, &err) == 0) {
		if (!s.start_selector || !s.end_selector || s.match_policy < 0 ||
		    s.match_policy > 4)
			abort();
		xp_spec_free(&s);
	} else {
		if (err.code != XPROBE_E_INVALID_EVENT_SELECTOR || s.start_selector || s.name)
			abort();
	}
	xp_error_clear(&err);
	return 0;
}
