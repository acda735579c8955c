/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.c - the five correlation policies as names, what each requires of
 * a selector pair (the correlator's compatibility, docs/contract.md,
 * "Correlation", plus CPython GC exact), which exact pairing a pair gets,
 * and the method string and confidence a result reports.
 *
 * The correlator's compatibility is deliberately lenient (it is what the
 * reference correlator accepts, e.g. CUDA API -> memcpy under exact, which
 * then simply finds no shared key).  `validate` owns the stricter
 * endpoint-aware rules and recommendation; it can reuse xp_policy_list()
 * and xp_policy_recommend() for the ordering.
 */
#include <string.h>

#include "../../common/suggest.h"
#include "correlate.h"
#include "../model/names.h"

static const char *const snake[XP_POLICY__COUNT] = {
	"exact", "first_after", "nearest", "stack_nested", "stream_order",
};
static const char *const kebab[XP_POLICY__COUNT] = {
	"exact", "first-after", "nearest", "stack-nested", "stream-order",
};

int xp_policy_parse(const char *s)
{
	int i;

	if (!s)
		return -1;
	for (i = 0; i < XP_POLICY__COUNT; i++)
		if (strcmp(s, snake[i]) == 0 || strcmp(s, kebab[i]) == 0)
			return i;
	return -1;
}

const char *xp_policy_closest(const char *s)
{
	return s ? xpc_closest(s, kebab, XP_POLICY__COUNT) : NULL;
}

const char *xp_policy_snake(enum xp_policy p)
{
	return (unsigned)p < XP_POLICY__COUNT ? snake[p] : "unknown";
}

const char *xp_policy_kebab(enum xp_policy p)
{
	return (unsigned)p < XP_POLICY__COUNT ? kebab[p] : "unknown";
}

const char *xp_confidence_name(enum xp_confidence c)
{
	static const char *const names[] = {
		[XP_CONF_EXACT] = "exact",
		[XP_CONF_HIGH] = "high",
		[XP_CONF_HEURISTIC] = "heuristic",
		[XP_CONF_AMBIGUOUS] = "ambiguous",
	};

	return XP_NAME_OF(names, c, "unknown");
}

const char *xp_alignment_name(enum xp_alignment a)
{
	static const char *const names[] = {
		[XP_ALIGN_HOST_MONOTONIC] = "host_monotonic",
		[XP_ALIGN_CUPTI_SAME_DOMAIN] = "cupti_same_domain",
		[XP_ALIGN_CUPTI_NORMALIZED] = "cupti_normalized_to_host_monotonic",
	};

	return XP_NAME_OF(names, a, "unknown");
}

static bool is_syscall_lifecycle(const struct xp_selector *s, const struct xp_selector *e)
{
	return s->kind == XP_SEL_SYSCALL && e->kind == XP_SEL_SYSCALL && !s->is_end && e->is_end &&
	       xp_str_same(s->name, e->name);
}

static bool is_gc_lifecycle(const struct xp_selector *s, const struct xp_selector *e)
{
	return s->kind == XP_SEL_PYTHON_GC && e->kind == XP_SEL_PYTHON_GC && !s->is_end &&
	       e->is_end;
}

static bool is_nvtx_lifecycle(const struct xp_selector *s, const struct xp_selector *e)
{
	return s->kind == XP_SEL_NVTX && e->kind == XP_SEL_NVTX && !s->is_end && e->is_end &&
	       xp_str_same(s->regex, e->regex);
}

/* Endpoints that carry no CUPTI correlation key of their own. */
static bool keyless(const struct xp_selector *s)
{
	return s->kind == XP_SEL_UPROBE || s->kind == XP_SEL_TRACEPOINT || s->kind == XP_SEL_NVTX ||
	       s->kind == XP_SEL_PYTHON_GC;
}

static bool same_function(const struct xp_selector *s, const struct xp_selector *e)
{
	if (s->kind != XP_SEL_UPROBE || e->kind != XP_SEL_UPROBE || s->is_end || !e->is_end)
		return false;
	if (!xp_str_same(s->binary, e->binary) || s->uprobe_target != e->uprobe_target)
		return false;
	if (s->uprobe_target == XP_UPROBE_OFFSET)
		return s->offset == e->offset;
	return xp_str_same(s->symbol, e->symbol);
}

unsigned xp_policy_compatible(const struct xp_selector *start, const struct xp_selector *end)
{
	unsigned mask = (1u << XP_POLICY_FIRST_AFTER) | (1u << XP_POLICY_NEAREST);

	if (is_syscall_lifecycle(start, end) || is_gc_lifecycle(start, end) ||
	    is_nvtx_lifecycle(start, end) || (!keyless(start) && !keyless(end)))
		mask |= 1u << XP_POLICY_EXACT;
	if (same_function(start, end))
		mask |= 1u << XP_POLICY_STACK_NESTED;
	if (xp_selector_is_activity(start) && xp_selector_is_activity(end))
		mask |= 1u << XP_POLICY_STREAM_ORDER;
	return mask;
}

size_t xp_policy_list(unsigned mask, enum xp_policy out[XP_POLICY__COUNT])
{
	static const enum xp_policy order[XP_POLICY__COUNT] = {
		XP_POLICY_STACK_NESTED, XP_POLICY_EXACT,   XP_POLICY_STREAM_ORDER,
		XP_POLICY_FIRST_AFTER,	XP_POLICY_NEAREST,
	};
	size_t i, n = 0;

	for (i = 0; i < XP_POLICY__COUNT; i++)
		if (mask & (1u << order[i]))
			out[n++] = order[i];
	return n;
}

enum xp_policy xp_policy_recommend(unsigned mask)
{
	if (mask & (1u << XP_POLICY_STACK_NESTED))
		return XP_POLICY_STACK_NESTED;
	if (mask & (1u << XP_POLICY_EXACT))
		return XP_POLICY_EXACT;
	if (mask & (1u << XP_POLICY_STREAM_ORDER))
		return XP_POLICY_STREAM_ORDER;
	return XP_POLICY_FIRST_AFTER;
}

const char *xp_policy_requirement(enum xp_policy p)
{
	switch (p) {
	case XP_POLICY_EXACT:
		return "exact matching requires endpoints that share a deterministic correlation key";
	case XP_POLICY_STACK_NESTED:
		return "stack-nested matching requires entry and return probes for the same host function";
	case XP_POLICY_STREAM_ORDER:
		return "stream-order matching requires two GPU activity endpoints";
	default:
		return NULL;
	}
}

enum xp_exact_kind xp_exact_kind(const struct xp_selector *start, const struct xp_selector *end)
{
	if (is_syscall_lifecycle(start, end))
		return XP_EXACT_SYSCALL;
	if (is_gc_lifecycle(start, end))
		return XP_EXACT_PYTHON_GC;
	if (is_nvtx_lifecycle(start, end))
		return XP_EXACT_NVTX;
	return XP_EXACT_CUPTI_KEY;
}

const char *xp_correlation_method(enum xp_policy p, const struct xp_selector *start,
				  const struct xp_selector *end)
{
	switch (p) {
	case XP_POLICY_EXACT:
		switch (xp_exact_kind(start, end)) {
		case XP_EXACT_SYSCALL:
			return "exact_syscall_tid_lifecycle";
		case XP_EXACT_PYTHON_GC:
			return "exact_python_gc_tid_lifecycle";
		case XP_EXACT_NVTX:
			return "exact_nvtx_range_id";
		case XP_EXACT_CUPTI_KEY:
			return "exact_cupti_correlation_id";
		}
		break;
	case XP_POLICY_FIRST_AFTER:
		return "first_after";
	case XP_POLICY_NEAREST:
		return "nearest";
	case XP_POLICY_STACK_NESTED:
		return "stack_nested_tid_lifo";
	case XP_POLICY_STREAM_ORDER:
		return "cuda_stream_order";
	case XP_POLICY__COUNT:
		break;
	}
	return "unknown";
}

enum xp_confidence xp_policy_confidence(enum xp_policy p)
{
	switch (p) {
	case XP_POLICY_EXACT:
		return XP_CONF_EXACT;
	case XP_POLICY_STACK_NESTED:
	case XP_POLICY_STREAM_ORDER:
		return XP_CONF_HIGH;
	default:
		return XP_CONF_HEURISTIC;
	}
}
