/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_endpoint_list.c - the endpoint-list document of validate --list
 * (schemas/endpoint-list.schema.json) and its human view: one selector a
 * line, so that it pipes like `bpftrace -l`.
 */
#include <inttypes.h>

#include "../../common/json.h"
#include "../resolve/endpoint_list.h"
#include "report.h"

/* What the user appends to a listed selector to validate it. */
static const char *const *boundaries(enum xp_endpoint_kind k)
{
	static const char *const uprobe[] = { "entry", "return", NULL };
	static const char *const syscall[] = { "entry", "exit", NULL };
	static const char *const none[] = { NULL };

	return k == XP_EP_UPROBE ? uprobe : k == XP_EP_SYSCALL ? syscall : none;
}

void xp_render_endpoint_list_json(struct xpc_json *w, const struct xp_endpoint_list *l)
{
	xp_render_doc_begin(w);
	xpc_json_kstr(w, "mode", "endpoint_list");
	xp_render_identity(w, "target", l->target.pid, l->target.start_time);
	xpc_json_kstr(w, "pattern", l->pattern);
	xpc_json_ku64(w, "limit", l->limit);
	xpc_json_ku64(w, "total", l->total);
	xpc_json_kbool(w, "truncated", l->truncated);
	xpc_json_ku64(w, "objects_read", l->objects);
	xpc_json_karr_begin(w, "endpoints");
	for (size_t i = 0; i < l->n; i++) {
		const struct xp_endpoint *e = &l->v[i];

		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "selector", e->selector);
		xpc_json_kstr(w, "kind", xp_endpoint_kind_name(e->kind));
		xpc_json_karr_begin(w, "boundaries");
		for (const char *const *b = boundaries(e->kind); *b; b++)
			xpc_json_str(w, *b);
		xpc_json_arr_end(w);
		xpc_json_kstr(w, "binary_path", e->binary_path);
		xpc_json_kstr(w, "symbol", e->symbol);
		xpc_json_kstr(w, "signature", e->signature);
		xpc_json_kstr(w, "symbol_selector", e->symbol_selector);
		xpc_json_kbool(w, "by_offset", e->by_offset);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xpc_json_key(w, "warnings");
	xp_warnings_render(&l->warnings, w);
	xpc_json_obj_end(w);
}

void xp_render_endpoint_list_human(FILE *out, const struct xp_endpoint_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct xp_endpoint *e = &l->v[i];

		fputs(e->selector, out);
		if (e->signature)
			fprintf(out, "\t%s", e->symbol_selector ? e->symbol_selector : e->signature);
		else if (e->by_offset)
			fprintf(out, "\t%s", e->symbol);
		fputc('\n', out);
	}
	for (size_t i = 0; i < l->warnings.n; i++)
		fprintf(stderr, "xprobe: warning: %s\n", l->warnings.v[i].message);
	if (!l->total)
		fprintf(stderr, "xprobe: no endpoint of pid %u matches '%s' (the pattern is a glob "
				"over the whole selector, e.g. 'uprobe:*redis-server:*Command*', "
				"'syscall:*mmap*')\n",
			l->target.pid, l->pattern);
	else if (l->truncated)
		fprintf(stderr, "xprobe: %zu of %" PRIu64 " endpoints shown (the first by name); "
				"raise --limit or narrow the pattern\n",
			l->n, l->total);
}

/* The document type the commands emit (output.h). */
XP_DOC_TYPE(xp_doc_endpoint_list, "endpoint-list", struct xp_endpoint_list,
	    xp_render_endpoint_list_json, xp_render_endpoint_list_human);
