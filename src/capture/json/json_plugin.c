/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_plugin.c - the entry point of lib/xprobe/xprobe-json.so, the JSON
 * decoder as a plugin (decode_json.h says why).  The plugin is
 * decode_json.cc and decode_fast.c with their own copy of the model and
 * common code, linked with -Bsymbolic and a version script
 * (json_plugin.map) that exports this one function; json_api.c loads it.
 */
#include "../decode_json.h"

const struct xp_json_api *xp_json_plugin_v1(void);

const struct xp_json_api *xp_json_plugin_v1(void)
{
	return &xp_json_builtin;
}
