/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live_plan.c - from two parsed selectors and a live target to the
 * endpoints a live capture attaches, and the BPF target filter.
 *
 * Resolution happened once, in validation (src/checks, which runs
 * src/resolve: uprobe selectors as a file offset in a file xprobe can
 * open, CPython GC selectors as the gc__start / gc__done notes of the
 * mapped interpreter, named tracepoints as a tracefs id); syscalls keep
 * their x86_64 number from the selector table and need nothing else (raw
 * tracepoints, no tracefs).  This file only copies what validation
 * resolved (struct xp_live_resolved) into endpoints and decides what each
 * endpoint's events say (docs/contract.md, "Events"): the attach path is
 * access_path, the reported path binary_path.
 *
 * cuda: endpoints are collected by the in-process Agent (agent_source.h):
 * the plan holds the host endpoints only and says -1 for the others.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/parse.h"
#include "../process/procfs.h"
#include "../resolve/resolve.h"
#include "live.h"

static const char *own(struct xp_live_plan *p, const char *s)
{
	char *d;

	if (!s)
		return NULL;
	if (p->nowned >= sizeof(p->owned) / sizeof(p->owned[0]))
		return NULL;
	d = strdup(s);
	if (d)
		p->owned[p->nowned++] = d;
	return d;
}

void xp_live_plan_free(struct xp_live_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->nowned; i++)
		free(plan->owned[i]);
	memset(plan, 0, sizeof(*plan));
}

/* A host selector handed over without its resolution: the caller's defect. */
static int unresolved(const struct xp_selector *sel, struct xp_error *err)
{
	xp_error_detail_str(err, "selector", sel->text);
	return xp_error_set(err, XPROBE_E_INTERNAL, false,
			    "%s reached the plan without its resolution", sel->text);
}

static int plan_uprobe(const struct xp_live_resolved *r, struct xp_live_plan *p,
		       struct xp_live_endpoint *ep, struct xp_error *err)
{
	const struct xp_resolved_probe *rp = r->probe;

	if (!rp)
		return unresolved(r->sel, err);
	ep->kind = XP_LIVE_UPROBE;
	ep->retprobe = rp->is_return;
	ep->file_offset = rp->file_offset;
	ep->access_path = own(p, rp->access_path);
	ep->binary_path = own(p, rp->binary_path);
	ep->symbol = own(p, rp->symbol);
	ep->symbol_demangled = own(p, rp->symbol_demangled);
	ep->event_type = rp->is_return ? XP_EV_HOST_FUNCTION_EXIT : XP_EV_HOST_FUNCTION_ENTRY;
	ep->probe_kind = rp->is_return ? XP_PROBE_URETPROBE : XP_PROBE_UPROBE;
	if (r->sel->uprobe_target == XP_UPROBE_OFFSET) {
		ep->has_offset = true;
		ep->offset = rp->file_offset;
	}
	if (!ep->access_path || !ep->binary_path || (rp->symbol && !ep->symbol) ||
	    (rp->symbol_demangled && !ep->symbol_demangled))
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	return 0;
}

static int plan_python(const struct xp_live_resolved *r, struct xp_live_plan *p,
		       struct xp_live_endpoint *ep, struct xp_error *err)
{
	const struct xp_usdt_marker *use = r->usdt;

	if (!use)
		return unresolved(r->sel, err);
	ep->kind = XP_LIVE_USDT;
	ep->access_path = own(p, use->access_path);
	ep->binary_path = own(p, use->binary_path);
	ep->usdt_provider = own(p, use->provider);
	ep->usdt_name = own(p, use->name);
	ep->symbol = ep->usdt_name;
	ep->event_type = XP_EV_MARKER;
	ep->probe_kind = XP_PROBE_USDT;
	ep->attr_key = "usdt_provider";
	ep->attr_value = ep->usdt_provider;
	if (!ep->access_path || !ep->binary_path || !ep->usdt_provider || !ep->usdt_name)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	return 0;
}

static int plan_one(const struct xp_live_resolved *r, struct xp_live_plan *p,
		    struct xp_error *err)
{
	const struct xp_selector *sel = r->sel;
	struct xp_live_endpoint *ep = &p->ep[p->n];
	struct xp_error lerr = { 0 };
	int rc = 0;

	memset(ep, 0, sizeof(*ep));
	ep->selector = own(p, sel->text);
	switch (sel->kind) {
	case XP_SEL_UPROBE:
		rc = plan_uprobe(r, p, ep, &lerr);
		break;
	case XP_SEL_PYTHON_GC:
		rc = plan_python(r, p, ep, &lerr);
		break;
	case XP_SEL_SYSCALL:
		if (sel->syscall_nr < 0) {
			xp_error_detail_str(&lerr, "selector", sel->text);
			xp_error_hint(&lerr, "run xprobe validate with the exact selector text");
			rc = xp_error_set(&lerr, XPROBE_E_INVALID_EVENT_SELECTOR, true,
					  "unsupported syscall in %s", sel->text);
			break;
		}
		ep->kind = sel->is_end ? XP_LIVE_SYS_EXIT : XP_LIVE_SYS_ENTER;
		ep->syscall_nr = sel->syscall_nr;
		ep->event_type = sel->is_end ? XP_EV_SYSCALL_EXIT : XP_EV_SYSCALL_ENTRY;
		ep->probe_kind = XP_PROBE_SYSCALL;
		ep->symbol = own(p, sel->name);
		ep->attr_key = "tracepoint_category";
		ep->attr_value = "syscalls";
		break;
	case XP_SEL_TRACEPOINT:
		if (!r->has_tracepoint_id) {
			rc = unresolved(sel, &lerr);
			break;
		}
		ep->kind = XP_LIVE_TRACEPOINT;
		ep->tracepoint_id = r->tracepoint_id;
		ep->tp_category = own(p, sel->category);
		ep->tp_name = own(p, sel->name);
		ep->event_type = XP_EV_TRACEPOINT;
		ep->probe_kind = XP_PROBE_TRACEPOINT;
		ep->symbol = ep->tp_name;
		ep->attr_key = "tracepoint_category";
		ep->attr_value = ep->tp_category;
		break;
	case XP_SEL_CUDA_API:
	case XP_SEL_KERNEL:
	case XP_SEL_MEMCPY:
	case XP_SEL_MEMSET:
	case XP_SEL_NVTX:
		/* the Agent's (xp_live_plan_build never plans them) */
		xp_error_detail_str(&lerr, "selector", sel->text);
		rc = xp_error_set(&lerr, XPROBE_E_INTERNAL, false,
				  "cuda: endpoint %s is collected by the Agent, not planned for eBPF",
				  sel->text);
		break;
	}
	if (!rc && !ep->selector)
		rc = xp_error_set(&lerr, XPROBE_E_INTERNAL, false, "out of memory");
	if (rc) {
		xp_error_move(err, &lerr);
		return rc;
	}
	xp_error_clear(&lerr);
	p->n++;
	return 0;
}

int xp_live_plan_build(const struct xp_live_resolved *from, const struct xp_live_resolved *to,
		       struct xp_live_plan *plan, struct xp_error *err)
{
	int rc;

	memset(plan, 0, sizeof(*plan));
	plan->from_ep = -1;
	plan->to_ep = -1;
	/* cuda: endpoints are the Agent's (agent_source.h), not planned here */
	if (xp_selector_is_host(from->sel)) {
		rc = plan_one(from, plan, err);
		if (rc)
			goto fail;
		plan->from_ep = 0;
	}
	if (!xp_selector_is_host(to->sel))
		return 0;
	if (plan->from_ep == 0 && !strcmp(from->sel->text, to->sel->text)) {
		plan->to_ep = 0;
		return 0;
	}
	rc = plan_one(to, plan, err);
	if (rc)
		goto fail;
	plan->to_ep = (int)plan->n - 1;
	return 0;
fail:
	xp_live_plan_free(plan);
	return rc;
}

/* 1 when /proc/self/status lists one NSpid: xprobe is in the initial
 * PID namespace and sees the kernel's global ids (no NSpid line: a kernel
 * without namespaces, one namespace). */
static int self_in_initial_pidns(void)
{
	struct xp_proc_status st;
	int rc = xp_proc_status_read(0, &st);

	if (rc)
		return rc;
	return st.n_nspid <= 1;
}

int xp_live_filter_init(struct xp_live_filter *f, const struct xp_target *t, bool same_pidns,
			uint64_t pidns_dev, uint64_t pidns_ino, uint32_t ns_pid)
{
	int initial = self_in_initial_pidns();

	memset(f, 0, sizeof(*f));
	if (initial < 0)
		return initial;
	if (initial)
		f->global_tgid = t->pid;
	f->use_pidns = !initial || !same_pidns;
	f->pidns_dev = pidns_dev;
	f->pidns_ino = pidns_ino;
	f->ns_tgid = ns_pid;
	f->event_pid = f->use_pidns ? ns_pid : t->pid;
	return 0;
}

int xp_live_filter_for(struct xp_live_filter *f, const struct xp_target *t,
		       const struct xp_target_ns *ns, struct xp_error *err)
{
	int rc = xp_live_filter_init(f, t, ns->same_pidns, ns->pidns_dev, ns->pidns_ino,
				     ns->ns_pid);

	if (rc)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "cannot read xprobe's own PID namespace: %s", strerror(-rc));
	return 0;
}
