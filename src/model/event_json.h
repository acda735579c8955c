/* SPDX-License-Identifier: Apache-2.0 */
/*
 * event_json.h - the one renderer of an event as a JSON "Event" document,
 * used by evidence pairs, JSONL export and the Chrome exporter's args.
 * Every optional field is written (null when absent), keys in the
 * reference order; event_id is "evt_<sequence>".
 */
#ifndef XP_MODEL_EVENT_JSON_H
#define XP_MODEL_EVENT_JSON_H

#include "event.h"

struct xpc_json;

void xp_event_render(struct xpc_json *w, const struct xp_capture *c, const struct xp_event *e,
		     const char *session_id);
/* Just the attributes object / the nvtx object (null when absent). */
void xp_event_render_attributes(struct xpc_json *w, const struct xp_capture *c,
				const struct xp_event *e);
void xp_event_render_nvtx(struct xpc_json *w, const struct xp_capture *c,
			  const struct xp_event *e, bool sorted_keys);

#endif /* XP_MODEL_EVENT_JSON_H */
