/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_warnings.c - the UPROBE_SINGLE_STEP warning of validate (and so of
 * every measurement that validates first): a uprobe endpoint whose probed
 * instruction the kernel single-steps out of line (resolve/probe_site.h)
 * costs several microseconds per hit, and when that happens after the
 * start event's timestamp it is inside every latency measured.  The
 * contract's results are closed, so the figure travels in the warning's
 * details: what such a probe pair reads here and adds per call, measured
 * (opts->probe_cost, src/live/probe_cost.h), with the method; and the
 * nearest instruction after it that the kernel emulates, as a selector.
 *
 * An instruction the kernel refuses to probe at all (a lock or segment
 * prefix, an opcode outside its tables: probe_site.h) is an issue, not a
 * warning: the attach would fail with ENOTSUPP, so validate answers
 * valid: false and measure refuses before touching the target.
 *
 * Which site: an entry probe's own offset; a return probe's is its
 * function's first instruction (a uretprobe is an entry uprobe there plus
 * the return trampoline).  Inside the interval: the start endpoint's
 * single-step always; an end entry probe's never (its timestamp comes
 * first); an end return probe's unless the start endpoint probes the same
 * function further in (the return probe's breakpoint at the function's
 * start is then hit before the start event).  One warning per site: an
 * entry/return pair of one function shares its breakpoint.
 */
#include <stdio.h>
#include <string.h>

#include "../../common/json.h"
#include "validate_checks.h"

struct site {
	const struct xp_endpoint_check *ep;
	struct xp_probe_site s;
	bool want;
};

static void cost_json(struct xpc_json *w, const struct xp_probe_cost *c)
{
	xpc_json_kobj_begin(w, "probe_cost");
	xpc_json_kbool(w, "available", c->available);
	xpc_json_kstr(w, "cache", c->cache[0] ? c->cache : NULL);
	xpc_json_kopt_u64(w, "calibrated_at", c->available, c->calibrated_at);
	xpc_json_kopt_u64(w, "calls", c->available, c->calls);
	xpc_json_kopt_u64(w, "emulated_added_ns", c->available, c->emulated_added_ns);
	xpc_json_kopt_u64(w, "emulated_pair_ns", c->available, c->emulated_pair_ns);
	xpc_json_kstr(w, "method", c->method);
	xpc_json_kstr(w, "reason", c->available ? NULL : c->reason);
	xpc_json_kopt_u64(w, "single_step_added_ns", c->available, c->single_step_added_ns);
	/* what the single-step adds to each measured latency */
	xpc_json_kopt_u64(w, "single_step_extra_ns", c->available,
			  c->single_step_pair_ns > c->emulated_pair_ns ?
				  c->single_step_pair_ns - c->emulated_pair_ns :
				  0);
	xpc_json_kopt_u64(w, "single_step_pair_ns", c->available, c->single_step_pair_ns);
	xpc_json_kstr(w, "source", c->source[0] ? c->source : NULL);
	xpc_json_obj_end(w);
}

static void bytes_hex(const struct xp_uprobe_insn *x, char *buf, size_t n)
{
	size_t off = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < x->len && off + 4 < n; i++)
		off += (size_t)snprintf(buf + off, n - off, "%s%02x", i ? " " : "", x->bytes[i]);
}

static void warn(struct xp_validation *v, struct site *a, bool start, bool end, bool inside,
		 const struct xp_probe_cost *c)
{
	const struct xp_probe_site *s = &a->s;
	const struct xp_resolved_probe *p = &a->ep->probe;
	struct xpc_buf b = XPC_BUF_INIT;
	char msg[768], hex[64], sel[4352], sug[160] = "", cost[200] = "";
	struct xpc_json w;
	size_t off;

	bytes_hex(&s->insn, hex, sizeof(hex));
	if (s->has_suggestion) {
		snprintf(sel, sizeof(sel), "uprobe:%s:+0x%llx:entry", a->ep->sel->binary,
			 (unsigned long long)s->suggested_offset);
		snprintf(
			sug, sizeof(sug), "; the instruction at +0x%llx (%s) is emulated: %s",
			(unsigned long long)s->suggested_offset, s->suggested.text,
			inside ?
				"an entry probe there keeps the single-step out of the measured interval" :
				"an entry probe there is not single-stepped");
	}
	if (c && c->available)
		snprintf(
			cost, sizeof(cost),
			"; a probe pair on such an instruction reads %.1f us here (%.1f us when emulated), %s",
			(double)c->single_step_pair_ns / 1000.0,
			(double)c->emulated_pair_ns / 1000.0,
			inside ? "inside every measured latency" : "outside the measured latency");
	off = (size_t)snprintf(
		msg, sizeof(msg),
		"the %s probed instruction (%s at %s+0x%llx) is single-stepped out of line by the kernel, not emulated",
		start && end ? "start and end selectors'" :
		start	     ? "start selector's" :
			       "end selector's",
		s->insn.text, s->function ? s->function : "?",
		(unsigned long long)(s->file_offset - s->function_offset));
	snprintf(msg + off, sizeof(msg) - off, "%s%s", cost, sug);

	xpc_json_init_buf(&w, &b, 0);
	xpc_json_obj_begin(&w);
	xpc_json_kstr(&w, "binary_path", p->binary_path);
	xpc_json_karr_begin(&w, "endpoints");
	if (start)
		xpc_json_str(&w, "start");
	if (end)
		xpc_json_str(&w, "end");
	xpc_json_arr_end(&w);
	xpc_json_ku64(&w, "file_offset", s->file_offset);
	xpc_json_kstr(&w, "function", s->function);
	xpc_json_kopt_u64(&w, "function_offset", s->function != NULL, s->function_offset);
	xpc_json_kstr(&w, "handling", xp_uprobe_handling_name(s->insn.handling));
	xpc_json_kbool(&w, "inside_interval", inside);
	xpc_json_kstr(&w, "instruction", s->insn.text);
	xpc_json_kstr(&w, "instruction_bytes", hex);
	if (c)
		cost_json(&w, c);
	else
		xpc_json_knull(&w, "probe_cost");
	xpc_json_kstr(&w, "rule", s->insn.rule);
	xpc_json_kstr(&w, "suggested_instruction", s->has_suggestion ? s->suggested.text : NULL);
	xpc_json_kopt_u64(&w, "suggested_offset", s->has_suggestion, s->suggested_offset);
	xpc_json_kstr(&w, "suggested_selector", s->has_suggestion ? sel : NULL);
	xpc_json_obj_end(&w);
	xp_warnings_add(&v->warnings, XP_WARN_UPROBE_SINGLE_STEP, msg,
			xpc_json_finish(&w) ? NULL : xpc_buf_str(&b));
	xpc_buf_free(&b);
}

/* INVALID_EVENT_SELECTOR for a site the kernel will not probe. */
static void refused_issue(struct xp_validation *v, const struct site *a, const char *which)
{
	const struct xp_probe_site *s = &a->s;
	const struct xp_selector *sel = a->ep->sel;
	struct xp_issue *is = &v->issues[v->nissues];
	size_t before = v->nissues;
	char where[160];

	if (s->function)
		snprintf(where, sizeof(where), "%s+0x%llx", s->function,
			 (unsigned long long)(s->file_offset - s->function_offset));
	else
		snprintf(where, sizeof(where), "file offset 0x%llx",
			 (unsigned long long)s->file_offset);
	xp_issue_add(v->issues, &v->nissues, XPROBE_E_INVALID_EVENT_SELECTOR,
		     "%s selector %s probes an instruction the kernel refuses to probe (%s at %s: %s); attaching it would fail",
		     which, sel->text, s->insn.text, where, s->insn.rule);
	if (v->nissues == before)
		return;
	if (a->ep->probe.is_return)
		snprintf(is->hint, sizeof(is->hint),
			 "a return probe's breakpoint is its function's first instruction; measure the call from its callers instead");
	else
		snprintf(is->hint, sizeof(is->hint),
			 "probe the next instruction instead: uprobe:%s:+0x%llx:entry", sel->binary,
			 (unsigned long long)(s->file_offset + s->insn.len));
}

/* validate's boundary check already refuses this +0x offset (an issue of
 * its own): what decodes there is not the instruction the user meant. */
static bool boundary_refused(const struct xp_endpoint_check *ep,
			     const struct xp_validate_opts *opts)
{
	const struct xp_offset_info *in = &ep->probe.insn;

	if (ep->sel->uprobe_target != XP_UPROBE_OFFSET)
		return false;
	return xp_offset_refused(in) ||
	       (in->check == XP_OFFSET_UNVERIFIED && !(opts && opts->unsafe_offset));
}

void xp_probe_warnings(struct xp_validation *v, const struct xp_validate_opts *opts)
{
	struct site st[2] = { { .ep = &v->start }, { .ep = &v->end } };
	struct xp_probe_cost cost, *c = NULL;
	bool same, any = false;
	int i;

	for (i = 0; i < 2; i++) {
		const struct xp_endpoint_check *ep = st[i].ep;

		if (ep->sel->kind != XP_SEL_UPROBE || !ep->has_probe)
			continue;
		/* an entry probe may move; a return probe's site is fixed */
		if (xp_probe_site_check(ep->probe.access_path, ep->probe.file_offset,
					!ep->probe.is_return, &st[i].s) == 0)
			st[i].want =
				st[i].s.checked && st[i].s.insn.handling == XP_UPROBE_SINGLE_STEP;
		if (st[i].s.checked && st[i].s.insn.handling == XP_UPROBE_REFUSED &&
		    !boundary_refused(ep, opts))
			refused_issue(v, &st[i], i == 0 ? "start" : "end");
		any |= st[i].want;
	}
	if (any && opts && opts->probe_cost && opts->probe_cost(&cost) == 0)
		c = &cost;
	same = st[0].want && st[1].want &&
	       strcmp(v->start.probe.access_path, v->end.probe.access_path) == 0 &&
	       st[0].s.file_offset == st[1].s.file_offset;
	if (st[0].want)
		warn(v, &st[0], true, same, true, c);
	if (st[1].want && !same) {
		/* the end's breakpoint precedes the start event when the start
		 * probes the same function further in */
		bool before = st[1].ep->probe.is_return && v->start.sel->kind == XP_SEL_UPROBE &&
			      v->start.has_probe && st[0].s.function && st[1].s.function &&
			      strcmp(v->start.probe.access_path, v->end.probe.access_path) == 0 &&
			      st[0].s.function_offset == st[1].s.function_offset &&
			      st[0].s.file_offset != st[1].s.file_offset;
		bool inside = st[1].ep->probe.is_return && !before;

		warn(v, &st[1], false, true, inside, c);
	}
	xp_probe_site_free(&st[0].s);
	xp_probe_site_free(&st[1].s);
}
