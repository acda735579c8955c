/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_json_builtin.h - the LLVMFuzzerInitialize of every target that reads
 * JSON (fuzz_event_*.cc, fuzz_host_capture.cc, fuzz_spec.cc): the decoder
 * linked into the target, so it is instrumented with it, instead of the
 * plugin the CLI loads (src/capture/json_api.c).  Include it once, from
 * the target's .cc file.
 */
#ifndef XP_FUZZ_JSON_BUILTIN_H
#define XP_FUZZ_JSON_BUILTIN_H

extern "C" {
#include "capture/decode_json.h"
}

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	xp_json_use(&xp_json_builtin);
	return 0;
}

#endif /* XP_FUZZ_JSON_BUILTIN_H */
