/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_discover.c - the DiscoveryResult document (schemas/discover.schema.json)
 * and its human summary.
 */
#include <inttypes.h>

#include "../../common/json.h"
#include "../checks/cuda_candidates.h"
#include "report.h"

void xp_render_discovery_json(struct xpc_json *w, const struct xp_discovery *d)
{
	size_t i, j;

	xp_render_doc_begin(w);
	xp_render_identity(w, "root", d->root.pid, d->root.start_time);
	xpc_json_ku64(w, "limit", d->limit);
	xpc_json_ku64(w, "total_candidates", d->total_candidates);
	xpc_json_kbool(w, "truncated", d->truncated);
	xpc_json_karr_begin(w, "candidates");
	for (i = 0; i < d->n; i++) {
		const struct xp_candidate *c = &d->v[i];

		xpc_json_obj_begin(w);
		xp_render_identity(w, "target", c->target.pid, c->target.start_time);
		xpc_json_ku64(w, "parent_pid", c->parent_pid);
		xpc_json_kstr(w, "executable", c->executable);
		xpc_json_karr_begin(w, "command_line");
		for (j = 0; j < c->argv.n; j++)
			xpc_json_str(w, c->argv.v[j]);
		xpc_json_arr_end(w);
		xpc_json_karr_begin(w, "gpu_uuids");
		for (j = 0; j < c->ngpu_uuids; j++)
			xpc_json_str(w, c->gpu_uuids[j]);
		xpc_json_arr_end(w);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xpc_json_key(w, "warnings");
	xp_warnings_render(&d->warnings, w);
	xpc_json_obj_end(w);
}

void xp_render_discovery_human(FILE *out, const struct xp_discovery *d)
{
	size_t i, j;

	fprintf(out, "%" PRIu64 " CUDA process%s under pid %u%s\n", d->total_candidates,
		d->total_candidates == 1 ? "" : "es", d->root.pid,
		d->truncated ? " (truncated to --limit)" : "");
	for (i = 0; i < d->n; i++) {
		const struct xp_candidate *c = &d->v[i];

		fprintf(out, "  pid %u (parent %u) %s", c->target.pid, c->parent_pid,
			c->executable);
		for (j = 0; j < c->ngpu_uuids; j++)
			fprintf(out, "%s%s", j ? ", " : " on ", c->gpu_uuids[j]);
		fprintf(out, "\n");
	}
	xp_render_warnings_human(out, &d->warnings);
}

/* The document type the commands emit (output.h). */
XP_DOC_TYPE(xp_doc_discovery, "discover", struct xp_discovery, xp_render_discovery_json,
	    xp_render_discovery_human);
