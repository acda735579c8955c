/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mode_rules.c - the one place the modes' option rules are checked
 * (mode_rules.h).  The order is part of the contract: of several
 * mistakes on one command line, the one reported is the first in the
 * order of rules[] (and of each table's conflicts), then the options in
 * the order of their XP_OPT_* bits, then the modes' own hooks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mode_rules.h"

static const struct xp_mode_rules *const rules[] = {
	&xp_list_rules,
	&xp_spec_rules,
	&xp_aggregate_rules,
	&xp_cpu_sample_rules,
	&xp_syscall_agg_rules,
	&xp_unsafe_offset_rules,
	&xp_histogram_rules,
	&xp_explain_rules,
	&xp_hist_rules,
	&xp_input_rules,
};

#define NRULES (sizeof(rules) / sizeof(rules[0]))

static int conflict(struct xp_usage *u, enum xp_usage_kind kind, unsigned long flag,
		    unsigned long other)
{
	u->kind = kind;
	u->flag = flag;
	u->other = other;
	return -EINVAL;
}

/* The modes that take option @bit (0: a flag of no mode). */
static unsigned long modes_taking(unsigned long bit)
{
	unsigned long modes = 0;
	size_t i;

	for (i = 0; i < NRULES; i++)
		if (rules[i]->options & bit)
			modes |= rules[i]->flag;
	return modes;
}

int xp_mode_conflicts(const struct xp_cli *cli, unsigned long accepted, struct xp_usage *u)
{
	unsigned long given = cli->given, bit, modes, first;
	const unsigned long *c;
	size_t i;

	for (i = 0; i < NRULES; i++) {
		if (!(given & rules[i]->flag) || !rules[i]->conflicts)
			continue;
		for (c = rules[i]->conflicts; *c; c++)
			if (given & *c)
				return conflict(u, XP_USAGE_CONFLICT, rules[i]->flag, *c);
	}
	for (bit = 1; bit; bit <<= 1) {
		modes = modes_taking(bit);
		/* a command without the mode (discover's --limit) takes it alone */
		if (!(given & bit) || !modes || (given & modes) || !(accepted & modes))
			continue;
		for (first = 1; !(modes & accepted & first); first <<= 1)
			;
		return conflict(u, XP_USAGE_REQUIRES, bit, first);
	}
	return 0;
}

int xp_mode_usage(const struct xp_cli *cli, struct xp_usage *u)
{
	size_t i;
	int rc;

	for (i = 0; i < NRULES; i++) {
		if (!(cli->given & rules[i]->flag) || !rules[i]->usage)
			continue;
		rc = rules[i]->usage(cli, u);
		if (rc)
			return rc;
	}
	return 0;
}

int xp_usage_text(struct xp_usage *u, const char *fmt, ...)
{
	va_list ap;

	u->kind = XP_USAGE_TEXT;
	free(u->text);
	va_start(ap, fmt);
	if (vasprintf(&u->text, fmt, ap) < 0)
		u->text = NULL;
	va_end(ap);
	return -EINVAL;
}

int xp_usage_missing(struct xp_usage *u, const char *arg)
{
	u->kind = XP_USAGE_MISSING;
	free(u->text);
	u->text = strdup(arg);
	return -EINVAL;
}

void xp_usage_free(struct xp_usage *u)
{
	free(u->text);
	u->text = NULL;
}
