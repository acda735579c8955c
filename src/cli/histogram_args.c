/* SPDX-License-Identifier: Apache-2.0 */
/*
 * histogram_args.c - the usage rules of `--histogram` beyond args.c's flag
 * tables (see histogram_args.h).  The pairs are the ones
 * bpf/latency_hist.bpf.c pairs per thread in the kernel:
 *
 *   syscall:NAME:entry          -> syscall:NAME:exit          (exact)
 *   uprobe:BIN:FUNC:entry       -> uprobe:BIN:FUNC:return     (stack-nested)
 *   python:gc_start             -> python:gc_end              (exact)
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
#include "histogram_args.h"

static int fail(char *why, size_t size, const char *msg)
{
	snprintf(why, size, "%s", msg);
	return -EINVAL;
}

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

int xp_histogram_usage(const struct xp_cli *cli, char *why, size_t size)
{
	struct xp_selector s, e;
	struct xp_error err = { 0 };
	bool measure = cli->command && strcmp(cli->command, "measure") == 0;
	int policy, rc = 0;

	if (measure && !cli->has_pid)
		return fail(why, size, "--histogram requires --pid: it measures a live process");
	if (!cli->from || !cli->to || !cli->match)
		return fail(why, size, "--histogram requires --from, --to and --match");
	if (cli->by && strcmp(cli->by, "thread") && strcmp(cli->by, "arg0")) {
		snprintf(why, size, "invalid value '%s' for '--by': expected thread or arg0",
			 cli->by);
		return -EINVAL;
	}
	if (cli->has_max_groups && !cli->by)
		return fail(why, size,
			    "--max-groups bounds the groups of --by; add --by thread or --by arg0");
	policy = xp_policy_parse(cli->match);
	if (policy != XP_POLICY_EXACT && policy != XP_POLICY_STACK_NESTED) {
		snprintf(
			why, size,
			"--histogram pairs in the kernel with --match exact or stack-nested, not '%s'",
			cli->match);
		return -EINVAL;
	}
	if (cli->has_max_depth && policy != XP_POLICY_STACK_NESTED)
		return fail(
			why, size,
			"--max-depth bounds stack-nested pairing; --match exact keeps one open start per thread");
	if (!strncmp(cli->from, "cuda:", 5) || !strncmp(cli->to, "cuda:", 5))
		return fail(
			why, size,
			"--histogram takes host endpoints (syscall:, uprobe:, python:); cuda: endpoints are collected by the Agent, not in the kernel");
	memset(&s, 0, sizeof(s));
	memset(&e, 0, sizeof(e));
	/* a selector that does not parse is the command's INVALID_EVENT_SELECTOR */
	if (xp_selector_parse(cli->from, &s, &err) == 0 &&
	    xp_selector_parse(cli->to, &e, &err) == 0 && !one_lifecycle(&s, &e)) {
		snprintf(
			why, size,
			"--histogram pairs the start and end of one lifecycle per thread in the kernel: syscall:NAME:entry -> syscall:NAME:exit, uprobe:BIN:FUNC:entry -> uprobe:BIN:FUNC:return (the function named the same way), or python:gc_start -> python:gc_end; '%s' -> '%s' is not one",
			cli->from, cli->to);
		rc = -EINVAL;
	}
	xp_error_clear(&err);
	xp_selector_free(&s);
	xp_selector_free(&e);
	return rc;
}
