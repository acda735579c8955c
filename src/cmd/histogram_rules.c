/* SPDX-License-Identifier: Apache-2.0 */
/*
 * histogram_rules.c - the option rules of `--histogram` (measure and
 * validate; mode_rules.h): the flags it cannot be used with, the options
 * it takes, and what the in-kernel pairing of bpf/latency_hist.bpf.c can
 * do.  A command line it cannot serve is a syntax error (exit 2, usage on
 * stderr), never a JSON document: the combination is wrong whatever the
 * target.  The pairs are the ones bpf/latency_hist.bpf.c pairs per thread
 * in the kernel:
 *
 *   syscall:NAME:entry          -> syscall:NAME:exit          (exact)
 *   uprobe:BIN:FUNC:entry       -> uprobe:BIN:FUNC:return     (stack-nested)
 *   python:gc_start             -> python:gc_end              (exact)
 *
 * and the ones the Agent pairs inside the target (cuda: endpoints, --match
 * exact; include/xprobe/agent.h, MODE_HISTOGRAM), the two selectors naming
 * one lifecycle with the same filter:
 *
 *   cuda:nvtx_range_start[:name~R] -> cuda:nvtx_range_end[:name~R]
 *        push/pop by thread and level, start/end by range id
 *   cuda:kernel_start[:name~R]     -> cuda:kernel_end[:name~R]
 *   cuda:memcpy_start[:kind=K]     -> cuda:memcpy_end[:kind=K]
 *   cuda:memset_start              -> cuda:memset_end
 *        one activity record each (end - start)
 *   cuda:runtime_api:NAME:entry    -> cuda:runtime_api:NAME:exit (driver_api alike)
 *        one call's entry and exit on its thread
 *
 * --by takes thread or arg0 for host pairs; name or thread for NVTX
 * ranges and API calls; name, stream or device for activities.
 *
 * The policy each pair takes is validate's to check (the command runs it
 * and answers INVALID_CORRELATION_POLICY with the recommended one, as
 * every measurement does); what is refused here is what no target could
 * change: another policy family, a cuda: endpoint, endpoints of two
 * different lifecycles, flags of the other pairing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../correlate/correlate.h"
#include "../selector/selector.h"
#include "mode_rules.h"

/* The two selectors name one lifecycle the kernel side can pair. */
static bool one_lifecycle(const struct xp_selector *s, const struct xp_selector *e)
{
	if (s->is_end || !e->is_end || s->kind != e->kind)
		return false;
	switch (s->kind) {
	case XP_SEL_SYSCALL:
		return s->syscall_nr >= 0 && s->syscall_nr == e->syscall_nr;
	case XP_SEL_PYTHON_GC:
		return true;
	case XP_SEL_UPROBE:
		if (!xp_str_same(s->binary, e->binary) || s->uprobe_target != e->uprobe_target)
			return false;
		if (s->uprobe_target == XP_UPROBE_OFFSET)
			return s->offset == e->offset;
		return xp_str_same(s->symbol, e->symbol);
	default:
		return false;
	}
}

static bool same_cuda_filter(const struct xp_selector *a, const struct xp_selector *b)
{
	switch (a->kind) {
	case XP_SEL_NVTX:
	case XP_SEL_KERNEL:
		return (!a->regex && !b->regex) || xp_str_same(a->regex, b->regex);
	case XP_SEL_MEMCPY:
		return a->has_memcpy_kind == b->has_memcpy_kind &&
		       (!a->has_memcpy_kind || a->memcpy_kind == b->memcpy_kind);
	case XP_SEL_MEMSET:
		return true;
	case XP_SEL_CUDA_API:
		return xp_str_same(a->name, b->name) &&
		       ((!a->category && !b->category) || xp_str_same(a->category, b->category));
	default:
		return false;
	}
}

/* The cuda: pair's rules (the Agent pairs it in the target). */
static int cuda_reasons(const struct xp_cli *cli, struct xp_usage *u, int policy)
{
	struct xp_selector s, e;
	struct xp_error err = { 0 };
	bool activity;
	int rc = 0;

	if (strncmp(cli->from, "cuda:", 5) || strncmp(cli->to, "cuda:", 5))
		return xp_usage_text(
			u,
			"--histogram pairs two host endpoints in the kernel or two cuda: endpoints in the target; '%s' -> '%s' mixes them",
			cli->from, cli->to);
	if (cli->has_max_groups && !cli->by)
		return xp_usage_text(
			u,
			"--max-groups bounds the groups of --by; add --by name, thread, stream or device");
	if (policy != XP_POLICY_EXACT)
		return xp_usage_text(
			u,
			"--histogram pairs cuda: endpoints exactly in the target: use --match exact, not '%s'",
			cli->match);
	if (cli->has_interval_ms && cli->interval_ms < 100)
		return xp_usage_text(
			u, "invalid value '%llu' for '--interval-ms': at least 100 milliseconds",
			(unsigned long long)cli->interval_ms);
	if (cli->metrics_out && !*cli->metrics_out)
		return xp_usage_text(u, "--metrics-out needs a path (PATH.prom)");
	if (cli->has_max_depth)
		return xp_usage_text(
			u,
			"--max-depth bounds the kernel's stack-nested pairing; the Agent pairs NVTX push/pop by level (64 levels) itself");
	if (cli->explain)
		return xp_usage_text(
			u,
			"--explain follows host threads through the scheduler; it takes host endpoints, not cuda:");
	memset(&s, 0, sizeof(s));
	memset(&e, 0, sizeof(e));
	/* a selector that does not parse is the command's INVALID_EVENT_SELECTOR */
	if (xp_selector_parse(cli->from, &s, &err) || xp_selector_parse(cli->to, &e, &err))
		goto out;
	activity = s.kind == XP_SEL_KERNEL || s.kind == XP_SEL_MEMCPY || s.kind == XP_SEL_MEMSET;
	if (s.is_end || !e.is_end || s.kind != e.kind || !same_cuda_filter(&s, &e) ||
	    (!activity && s.kind != XP_SEL_NVTX && s.kind != XP_SEL_CUDA_API)) {
		rc = xp_usage_text(
			u,
			"--histogram pairs one cuda: lifecycle in the target with the same filter on both sides: cuda:nvtx_range_start -> cuda:nvtx_range_end, cuda:kernel_start -> cuda:kernel_end, cuda:memcpy_start -> cuda:memcpy_end, cuda:memset_start -> cuda:memset_end or cuda:runtime_api:NAME:entry -> cuda:runtime_api:NAME:exit (driver_api alike); '%s' -> '%s' is not one",
			cli->from, cli->to);
		goto out;
	}
	if (cli->by && strcmp(cli->by, "name") && strcmp(cli->by, "thread") &&
	    strcmp(cli->by, "stream") && strcmp(cli->by, "device")) {
		rc = xp_usage_text(
			u, "invalid value '%s' for '--by': expected name, thread, stream or device",
			cli->by);
		goto out;
	}
	if (cli->by && activity && !strcmp(cli->by, "thread"))
		rc = xp_usage_text(
			u,
			"--by thread groups NVTX ranges; a kernel, copy or set runs on a device: use --by name, stream or device");
	else if (cli->by && !activity && (!strcmp(cli->by, "stream") || !strcmp(cli->by, "device")))
		rc = xp_usage_text(
			u, "--by %s groups device activity; NVTX ranges take --by name or thread",
			cli->by);
	else if (cli->by && !strcmp(cli->by, "name") && s.kind != XP_SEL_NVTX &&
		 s.kind != XP_SEL_KERNEL && s.kind != XP_SEL_CUDA_API)
		rc = xp_usage_text(u, "--by name groups NVTX ranges and kernels by name; %s",
				   "copies and sets have no name: use --by stream or device");
out:
	xp_error_clear(&err);
	xp_selector_free(&s);
	xp_selector_free(&e);
	return rc;
}

/*
 * Selector texts that do not parse pass: the command reports them as
 * INVALID_EVENT_SELECTOR, as every measurement does.
 */
static int reasons(const struct xp_cli *cli, struct xp_usage *u)
{
	struct xp_selector s, e;
	struct xp_error err = { 0 };
	bool measure = cli->command && strcmp(cli->command, "measure") == 0;
	bool cuda;
	int policy, rc = 0;

	if (measure && !cli->has_pid)
		return xp_usage_text(u, "--histogram requires --pid: it measures a live process");
	if (!cli->from || !cli->to || !cli->match)
		return xp_usage_text(u, "--histogram requires --from, --to and --match");
	cuda = !strncmp(cli->from, "cuda:", 5) || !strncmp(cli->to, "cuda:", 5);
	if ((cli->agent || cli->cupti_socket) && !cuda)
		return xp_usage_text(
			u,
			"--%s reaches the Agent, which --histogram uses for cuda: endpoints only",
			cli->agent ? "agent" : "cupti-socket");
	if (cuda)
		return cuda_reasons(cli, u, xp_policy_parse(cli->match));
	if (cli->by && strcmp(cli->by, "thread") && strcmp(cli->by, "arg0"))
		return xp_usage_text(u, "invalid value '%s' for '--by': expected thread or arg0",
				     cli->by);
	if (cli->has_max_groups && !cli->by)
		return xp_usage_text(
			u, "--max-groups bounds the groups of --by; add --by thread or --by arg0");
	policy = xp_policy_parse(cli->match);
	if (policy != XP_POLICY_EXACT && policy != XP_POLICY_STACK_NESTED)
		return xp_usage_text(
			u, "--histogram pairs in the kernel with --match exact or stack-nested, not '%s'",
			cli->match);
	if (cli->has_interval_ms && cli->interval_ms < 100)
		return xp_usage_text(
			u, "invalid value '%llu' for '--interval-ms': at least 100 milliseconds",
			(unsigned long long)cli->interval_ms);
	if (cli->metrics_out && !*cli->metrics_out)
		return xp_usage_text(u, "--metrics-out needs a path (PATH.prom)");
	if (cli->has_max_depth && policy != XP_POLICY_STACK_NESTED)
		return xp_usage_text(
			u,
			"--max-depth bounds stack-nested pairing; --match exact keeps one open start per thread");
	memset(&s, 0, sizeof(s));
	memset(&e, 0, sizeof(e));
	/* a selector that does not parse is the command's INVALID_EVENT_SELECTOR */
	if (xp_selector_parse(cli->from, &s, &err) == 0 &&
	    xp_selector_parse(cli->to, &e, &err) == 0 && !one_lifecycle(&s, &e)) {
		xp_usage_text(
			u,
			"--histogram pairs the start and end of one lifecycle per thread in the kernel: syscall:NAME:entry -> syscall:NAME:exit, uprobe:BIN:FUNC:entry -> uprobe:BIN:FUNC:return (the function named the same way), or python:gc_start -> python:gc_end; '%s' -> '%s' is not one",
			cli->from, cli->to);
		rc = -EINVAL;
	}
	xp_error_clear(&err);
	xp_selector_free(&s);
	xp_selector_free(&e);
	return rc;
}

/* The reason, cut at WHY_MAX - 1 bytes as it always was. */
#define WHY_MAX 640

static int usage(const struct xp_cli *cli, struct xp_usage *u)
{
	int rc = reasons(cli, u);

	if (rc && u->text && strlen(u->text) >= WHY_MAX)
		u->text[WHY_MAX - 1] = '\0';
	return rc;
}

/* a live in-kernel distribution, no capture: no other mode, no artifact */
static const unsigned long conflicts[] = {
	XP_OPT_INPUT,	   XP_OPT_SPEC,	      XP_OPT_EVENTS_OUT,  XP_OPT_FORMAT,    XP_OPT_SAMPLES,
	XP_OPT_MAX_EVENTS, XP_OPT_CPU_SAMPLE, XP_OPT_SYSCALL_AGG, XP_OPT_AGGREGATE, 0,
};

const struct xp_mode_rules xp_histogram_rules = {
	.flag = XP_OPT_HISTOGRAM,
	.conflicts = conflicts,
	.options = XP_OPT_MAX_GROUPS | XP_OPT_MAX_INFLIGHT | XP_OPT_BY | XP_OPT_MAX_DEPTH |
		   XP_OPT_INTERVAL | XP_OPT_METRICS_OUT,
	.usage = usage,
};
