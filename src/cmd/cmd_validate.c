/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_validate.c - `xprobe validate`: parse, orchestrate, render.  The checks
 * themselves live in src/checks/validate_checks.c.
 *
 * Order: identity -> --list (the endpoints matching a pattern, read-only,
 * src/resolve/endpoint_list.h) -> --cpu-sample / --syscall-aggregate (no event-pair
 * flags allowed) -> start selector -> end selector -> policy -> the pair
 * check (resolution, requirements, issues) narrowed by the correlator's
 * own policy mask.  A result with issues is still a result: valid false,
 * exit 0.  The syntax rules (xp_validate_usage, src/cli/args.c reports
 * them): --pid, the pair unless another mode is given, and each mode's
 * (--list's below, mode_rules.h).
 */
#include <errno.h>
#include <string.h>

#include "../live/probe_cost.h"
#include "../inventory/syscall_aggregate.h"
#include "../correlate/correlate.h"
#include "../report/report.h"
#include "../selector/selector.h"
#include "../process/identity.h"
#include "../resolve/endpoint_list.h"
#include "../checks/validate_checks.h"
#include "cmd.h"
#include "histogram.h"
#include "mode_rules.h"

/* --list: a listing, not a check (mode_rules.h) */
static const unsigned long list_conflicts[] = {
	XP_OPT_FROM, XP_OPT_TO, XP_OPT_MATCH, XP_OPT_CPU_SAMPLE, XP_OPT_SYSCALL_AGG,
	XP_OPT_HISTOGRAM, XP_OPT_UNSAFE_OFFSET, 0,
};

static int list_usage(const struct xp_cli *cli, struct xp_usage *u)
{
	if (!cli->list[0])
		return xp_usage_text(
			u, "invalid value '' for '--list': an empty pattern (try 'uprobe:*BINARY*:*NAME*')");
	if (strlen(cli->list) > XP_LIST_PATTERN_MAX)
		return xp_usage_text(u, "invalid value for '--list': a pattern of %zu bytes (at most %d)",
				     strlen(cli->list), XP_LIST_PATTERN_MAX);
	if (cli->has_limit && cli->limit == 0)
		return xp_usage_text(u, "invalid value '0' for '--limit': at least 1 endpoint");
	return 0;
}

const struct xp_mode_rules xp_list_rules = {
	.flag = XP_OPT_LIST,
	.conflicts = list_conflicts,
	.options = XP_OPT_LIMIT,
	.usage = list_usage,
};

int xp_validate_usage(const struct xp_cli *cli, unsigned long accepted, struct xp_usage *u)
{
	int rc = xp_mode_conflicts(cli, accepted, u);

	if (rc)
		return rc;
	if (!(cli->given & XP_OPT_PID))
		return xp_usage_missing(u, "--pid <PID>");
	/* the pair, unless an inventory or the listing is asked for */
	if (!(cli->given & (XP_OPT_CPU_SAMPLE | XP_OPT_SYSCALL_AGG | XP_OPT_LIST))) {
		if (!(cli->given & XP_OPT_FROM))
			return xp_usage_missing(u, "--from <SELECTOR>");
		if (!(cli->given & XP_OPT_TO))
			return xp_usage_missing(u, "--to <SELECTOR>");
		if (!(cli->given & XP_OPT_MATCH))
			return xp_usage_missing(u, "--match <POLICY>");
	}
	return xp_mode_usage(cli, u);
}

/* validate --list PATTERN [--limit N]: returns the exit code, or <0 with @err. */
static int list_endpoints(const struct xp_cli *cli, const struct xp_target *t,
			  struct xp_error *err)
{
	struct xp_endpoint_list l;
	int rc;

	rc = xp_endpoint_list(t, cli->list, cli->has_limit ? cli->limit : XP_DEFAULT_LIST_LIMIT,
			      &l, err);
	if (rc == 0)
		rc = xp_out_emit(&cli->out, &xp_doc_endpoint_list, &l);
	xp_endpoint_list_free(&l);
	return rc;
}

static int inventory(const struct xp_cli *cli, const struct xp_target *t, struct xp_error *err)
{
	const char *mode = cli->cpu_sample ? "--cpu-sample" : "--syscall-aggregate";
	int rc, code;

	if (cli->from || cli->to || cli->match) {
		xp_error_detail_str(err, "mode", mode);
		xp_error_hint(err, "drop --from/--to/--match, or validate the pair without %s",
			      mode);
		return xp_error_set(
			err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
			"%s validation takes no event-pair selectors (--from, --to, --match)",
			mode);
	}
	if (cli->cpu_sample) {
		struct xp_cpu_sample_check c;

		rc = xp_validate_cpu_sample(t, &c, err);
		if (rc) {
			xp_inventory_check_free(&c.warnings);
			return rc;
		}
		code = xp_out_emit(&cli->out, &xp_doc_cpu_sample_check, &c);
		xp_inventory_check_free(&c.warnings);
		return code;
	}
	{
		struct xp_syscall_agg_check c;

		rc = xp_validate_syscall_aggregate(t, &c, err);
		if (rc) {
			xp_inventory_check_free(&c.warnings);
			return rc;
		}
		/* beyond the generic probe: the real object, default bounds */
		c.object_load.tried = true;
		c.object_load.err =
			-xp_inv_sa_load_check(XP_DEFAULT_INV_MAX_GROUPS, XP_DEFAULT_MAX_INFLIGHT,
					      c.object_load.detail, sizeof(c.object_load.detail));
		if (c.object_load.err)
			xp_issue_add(c.issues, &c.nissues, xp_bpf_step_code(&c.object_load), "%s",
				     c.object_load.detail);
		code = xp_out_emit(&cli->out, &xp_doc_syscall_agg_check, &c);
		xp_inventory_check_free(&c.warnings);
		return code;
	}
}

int cmd_validate(const struct xp_cli *cli)
{
	struct xp_validate_opts opts = { .correlator_mask = xp_policy_compatible,
					 .unsafe_offset = cli->unsafe_offset,
					 .probe_cost = xp_live_probe_cost };
	struct xp_selector from, to;
	struct xp_validation v;
	struct xp_error err = { 0 };
	struct xp_target t;
	int rc, code, p;

	memset(&from, 0, sizeof(from));
	memset(&to, 0, sizeof(to));
	memset(&v, 0, sizeof(v));
	rc = xp_target_identify(cli->pid, &t, &err);
	if (rc)
		goto fail;
	if (cli->list) {
		rc = list_endpoints(cli, &t, &err);
		if (rc < 0)
			goto fail;
		xp_error_clear(&err);
		xp_target_release(&t);
		return rc;
	}
	if (cli->histogram) {
		rc = xp_validate_histogram(cli, &t, &err);
		if (rc < 0)
			goto fail;
		xp_error_clear(&err);
		xp_target_release(&t);
		return rc;
	}
	if (cli->cpu_sample || cli->syscall_aggregate) {
		rc = inventory(cli, &t, &err);
		if (rc < 0)
			goto fail;
		xp_error_clear(&err);
		xp_target_release(&t);
		return rc;
	}
	rc = xp_selector_parse(cli->from, &from, &err);
	if (rc)
		goto fail;
	rc = xp_selector_parse(cli->to, &to, &err);
	if (rc)
		goto fail;
	p = xp_policy_parse(cli->match);
	if (p < 0) {
		xp_error_detail_str(&err, "match_policy", cli->match);
		if (xp_policy_closest(cli->match))
			xp_error_hint(&err, "did you mean '%s'?", xp_policy_closest(cli->match));
		xp_error_hint(&err,
			      "use exact, first-after, nearest, stack-nested or stream-order");
		rc = xp_error_set(&err, XPROBE_E_INVALID_CORRELATION_POLICY, true,
				  "invalid correlation policy \"%s\"", cli->match);
		goto fail;
	}
	rc = xp_validate_pair(&t, &from, &to, (enum xp_policy)p, &opts, &v, &err);
	if (rc)
		goto fail;
	code = xp_out_emit(&cli->out, &xp_doc_validation, &v);
	xp_error_clear(&err);
	xp_validation_free(&v);
	xp_selector_free(&from);
	xp_selector_free(&to);
	xp_target_release(&t);
	return code;
fail:
	code = xp_out_fail(&cli->out, &err);
	xp_error_clear(&err);
	xp_validation_free(&v);
	xp_selector_free(&from);
	xp_selector_free(&to);
	xp_target_release(&t); /* identify leaves it zeroed on failure */
	return code;
}
