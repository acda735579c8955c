/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_common.c - the pieces every result document shares, written once:
 * the document head (schema_version, ok, and for measure's results
 * session_id and status), a TargetIdentity object, the head of an
 * inventory, and the human lines of warnings.  The renderers of each
 * document type (render_*.c) build on these, so a change to a shared
 * shape (the contract's TargetIdentity, say) is made in one place.
 */
#include "../../common/json.h"
#include "../model/event.h"
#include "report.h"

void xp_render_doc_begin(struct xpc_json *w)
{
	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "schema_version", XP_SCHEMA_VERSION);
	xpc_json_kbool(w, "ok", true);
}

void xp_render_result_begin(struct xpc_json *w, const char *session_id, const char *status)
{
	xp_render_doc_begin(w);
	xpc_json_kstr(w, "session_id", session_id);
	xpc_json_kstr(w, "status", status);
}

void xp_render_identity(struct xpc_json *w, const char *key, uint32_t pid, uint64_t start_time)
{
	xpc_json_kobj_begin(w, key);
	xpc_json_ku64(w, "pid", pid);
	xpc_json_ku64(w, "process_start_time", start_time);
	xpc_json_obj_end(w);
}

void xp_render_inventory_begin(struct xpc_json *w, const char *session_id, const char *status,
			       const char *name, uint32_t pid, uint64_t start_time)
{
	xp_render_result_begin(w, session_id, status);
	xpc_json_kobj_begin(w, "inventory");
	xpc_json_kstr(w, "name", name);
	xp_render_identity(w, "target", pid, start_time);
}

void xp_render_collection_begin(struct xpc_json *w, bool complete, const char *stop_reason,
				uint64_t window_ns)
{
	xpc_json_kobj_begin(w, "collection");
	xpc_json_kstr(w, "completeness", complete ? "complete" : "partial");
	xpc_json_kstr(w, "stop_reason", stop_reason);
	xpc_json_ku64(w, "window_ns", window_ns);
}

void xp_render_warnings_human(FILE *out, const struct xp_warnings *ws)
{
	size_t i;

	for (i = 0; ws && i < ws->n; i++)
		fprintf(out, "warning %s: %s\n", ws->v[i].code, ws->v[i].message);
}
