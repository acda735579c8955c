/* SPDX-License-Identifier: Apache-2.0 */
/*
 * match.c - does an event satisfy a selector?  The contract's matchers
 * (docs/selectors.md, "What a selector matches") plus our CPython GC USDT
 * events, made cheap enough for million-event captures.
 *
 * Binding.  A capture interns every string once (strtab.h), so equality of
 * strings is equality of ids within that capture.  bind() looks each string
 * the selector compares against (binary path, symbol, syscall/tracepoint
 * name, attribute keys and their JSON-quoted values) up in the capture's
 * table once; a string the table does not hold can never match, which sets
 * `never`.  Regex selectors memoize their answer per name id (0 unknown,
 * 1 no, 2 yes), so PCRE2 runs once per distinct kernel or NVTX name.
 *
 * The binding is valid while the capture and its table size are unchanged;
 * matching rebinds when either changed (a live capture keeps growing between
 * correlation passes).  The memo survives a rebind to the same capture
 * because ids are stable and strings immutable.
 *
 * Cost per event: one event_type compare rejects almost everything; a
 * candidate costs two or three id compares plus at most two short
 * attribute scans.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "selector.h"

static xp_str_t find_str(const struct xp_capture *c, const char *s)
{
	return s ? xp_strtab_find(&c->strings, s, strlen(s)) : 0;
}

/* Id of the canonical JSON text of string @s (what attributes store). */
static xp_str_t find_json_str(const struct xp_capture *c, const char *s)
{
	struct xpc_buf b = XPC_BUF_INIT;
	xp_str_t id = 0;

	xpc_buf_putc(&b, '"');
	xpc_json_escape(&b, s, strlen(s));
	xpc_buf_putc(&b, '"');
	if (xpc_buf_ok(&b))
		id = xp_strtab_find(&c->strings, b.data, b.len);
	xpc_buf_free(&b);
	return id;
}

/* Grow the memo to cover every id of @c's table; keeps known answers. */
static int memo_cover(struct xp_selector *sel, const struct xp_capture *c)
{
	uint32_t n = c->strings.count;
	uint8_t *m;

	if (!sel->regex_code || n <= sel->regex_memo_n)
		return 0;
	m = realloc(sel->regex_memo, n);
	if (!m)
		return -ENOMEM;
	memset(m + sel->regex_memo_n, 0, n - sel->regex_memo_n);
	sel->regex_memo = m;
	sel->regex_memo_n = n;
	return 0;
}

static int bind_ids(struct xp_selector *sel, const struct xp_capture *c)
{
	sel->never = false;
	sel->id_binary = sel->id_symbol = sel->id_name = 0;
	sel->id_attr_key = sel->id_attr_value = sel->id_attr2_key = sel->id_attr2_value = 0;

	switch (sel->kind) {
	case XP_SEL_UPROBE:
		sel->id_binary = find_str(c, sel->match_binary ? sel->match_binary : sel->binary);
		sel->never = !sel->id_binary;
		if (sel->uprobe_target != XP_UPROBE_OFFSET) {
			sel->id_symbol = find_str(c, sel->symbol);
			sel->never |= !sel->id_symbol;
		}
		break;
	case XP_SEL_SYSCALL:
		sel->id_name = find_str(c, sel->name);
		sel->never = !sel->id_name;
		break;
	case XP_SEL_TRACEPOINT:
		sel->id_name = find_str(c, sel->name);
		sel->id_attr_key = find_str(c, "tracepoint_category");
		sel->id_attr_value = find_json_str(c, sel->category);
		sel->never = !sel->id_name || !sel->id_attr_key || !sel->id_attr_value;
		break;
	case XP_SEL_PYTHON_GC:
		sel->id_name = find_str(c, sel->name);
		sel->id_attr_key = find_str(c, "usdt_provider");
		sel->id_attr_value = find_json_str(c, sel->category);
		sel->never = !sel->id_name || !sel->id_attr_key || !sel->id_attr_value;
		break;
	case XP_SEL_CUDA_API:
		sel->id_attr_key = find_str(c, "cuda_api_name");
		sel->id_attr_value = find_json_str(c, sel->name);
		sel->id_attr2_key = find_str(c, "cuda_api_domain");
		sel->id_attr2_value = find_json_str(c, sel->category);
		sel->never = !sel->id_attr_key || !sel->id_attr_value || !sel->id_attr2_key ||
			     !sel->id_attr2_value;
		break;
	case XP_SEL_KERNEL:
	case XP_SEL_MEMCPY:
	case XP_SEL_MEMSET:
	case XP_SEL_NVTX:
		break;
	}
	sel->bound = c;
	sel->bound_count = c->strings.count;
	return memo_cover(sel, c);
}

int xp_selector_bind(struct xp_selector *sel, const struct xp_capture *c)
{
	free(sel->regex_memo);
	sel->regex_memo = NULL;
	sel->regex_memo_n = 0;
	return bind_ids(sel, c);
}

static bool regex_run(struct xp_selector *sel, const char *s, size_t n)
{
	return pcre2_match(sel->regex_code, (PCRE2_SPTR)s, n, 0, 0, sel->regex_md, NULL) >= 0;
}

/* Does name @id satisfy the regex?  No regex: any name, even null. */
static bool regex_ok(struct xp_selector *sel, const struct xp_capture *c, xp_str_t id)
{
	bool yes;

	if (!sel->regex_code)
		return true;
	if (!id || id >= c->strings.count)
		return false;
	if (id < sel->regex_memo_n && sel->regex_memo[id])
		return sel->regex_memo[id] == 2;
	yes = regex_run(sel, xp_strtab_get(&c->strings, id), xp_strtab_len(&c->strings, id));
	if (id < sel->regex_memo_n)
		sel->regex_memo[id] = yes ? 2 : 1;
	return yes;
}

static bool has_attr(const struct xp_capture *c, const struct xp_event *e, xp_str_t key,
		     xp_str_t value)
{
	const struct xp_attr *a = c->attrs + e->attrs_first;
	uint32_t i;

	for (i = 0; i < e->attrs_count; i++)
		if (a[i].key == key)
			return a[i].value == value;
	return false;
}

bool xp_selector_matches(struct xp_selector *sel, const struct xp_capture *c,
			 const struct xp_event *e)
{
	if (e->event_type != sel->event_type)
		return false;
	if (sel->bound != c || sel->bound_count != c->strings.count) {
		if (sel->bound != c) {
			free(sel->regex_memo);
			sel->regex_memo = NULL;
			sel->regex_memo_n = 0;
		}
		/* a memo that cannot grow only costs speed: regex_ok
		 * runs PCRE2 for ids beyond it */
		bind_ids(sel, c);
	}
	if (sel->never)
		return false;

	switch (sel->kind) {
	case XP_SEL_UPROBE:
		if (!(e->flags & XP_EVF_HOST) ||
		    e->host.probe_kind != (sel->is_end ? XP_PROBE_URETPROBE : XP_PROBE_UPROBE) ||
		    e->host.binary_path != sel->id_binary)
			return false;
		if (sel->uprobe_target == XP_UPROBE_OFFSET)
			return (e->host.flags & XP_HOSTF_OFFSET) && e->host.offset == sel->offset;
		return e->host.symbol == sel->id_symbol ||
		       e->host.symbol_demangled == sel->id_symbol;
	case XP_SEL_SYSCALL:
		return (e->flags & XP_EVF_HOST) && e->host.probe_kind == XP_PROBE_SYSCALL &&
		       e->host.symbol == sel->id_name;
	case XP_SEL_TRACEPOINT:
		return (e->flags & XP_EVF_HOST) && e->host.probe_kind == XP_PROBE_TRACEPOINT &&
		       e->host.symbol == sel->id_name &&
		       has_attr(c, e, sel->id_attr_key, sel->id_attr_value);
	case XP_SEL_PYTHON_GC:
		return (e->flags & XP_EVF_HOST) && e->host.probe_kind == XP_PROBE_USDT &&
		       e->host.symbol == sel->id_name &&
		       has_attr(c, e, sel->id_attr_key, sel->id_attr_value);
	case XP_SEL_CUDA_API:
		return has_attr(c, e, sel->id_attr_key, sel->id_attr_value) &&
		       has_attr(c, e, sel->id_attr2_key, sel->id_attr2_value);
	case XP_SEL_KERNEL:
		if (!sel->regex_code)
			return true;
		return (e->flags & XP_EVF_CUDA) && regex_ok(sel, c, e->cuda.kernel_name);
	case XP_SEL_MEMCPY:
		if (!sel->has_memcpy_kind)
			return true;
		return (e->flags & XP_EVF_CUDA) && (e->cuda.flags & XP_CUDAF_MEMCPY_KIND) &&
		       e->cuda.memcpy_kind == sel->memcpy_kind;
	case XP_SEL_MEMSET:
		return true;
	case XP_SEL_NVTX:
		return (e->flags & XP_EVF_NVTX) && regex_ok(sel, c, e->nvtx.name);
	}
	return false;
}
