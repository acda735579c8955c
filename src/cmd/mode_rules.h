/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mode_rules.h - the option rules of the modes of measure and validate.
 * Each mode (measure --spec, --input, --aggregate, --cpu-sample,
 * --syscall-aggregate, --histogram, validate --list) and each option
 * that belongs to some modes only (--unsafe-offset: live uprobes; --hist:
 * a latency result's terminal view) writes its rules in one table, in its
 * own file, next to what it runs; mode_rules.c checks them all, in one
 * place and one order.
 *
 * Two kinds of rule.  A command line no target could make valid is a
 * syntax error (src/cli/args.c prints it with the usage, exit 2, never
 * JSON): the conflicts and the options without their mode, checked here,
 * and a mode's own reasons (its usage hook).  What the contract answers
 * with a document (exit 1) is the mode's to check where it runs (e.g.
 * xp_inventory_check), after the outputs are checked.
 */
#ifndef XP_CMD_MODE_RULES_H
#define XP_CMD_MODE_RULES_H

#include "cmd.h"

/* A syntax error: what args.c says (the wording of each kind is its). */
enum xp_usage_kind {
	XP_USAGE_OK = 0,
	XP_USAGE_CONFLICT, /* the argument '--<flag>' cannot be used with '--<other>' */
	XP_USAGE_REQUIRES, /* the argument '--<flag>' requires '--<other>' */
	XP_USAGE_MISSING,  /* the following required argument was not provided: <text> */
	XP_USAGE_TEXT,     /* <text> */
};

struct xp_usage {
	enum xp_usage_kind kind;
	unsigned long flag, other; /* XP_OPT_* */
	char *text;                /* owned (xp_usage_free); NULL: out of memory */
};

/*
 * The rules of one mode (or mode-only option), @flag.  When @flag is
 * given: each of @conflicts given too is a conflict ("--flag cannot be
 * used with --other", in this order), and @usage (NULL: none) says what
 * else it refuses (0, or -EINVAL with @u filled).  @options are the flags
 * this mode takes that no mode-less command line does: one given without
 * any mode that takes it "requires" that mode.
 */
struct xp_mode_rules {
	unsigned long flag;
	const unsigned long *conflicts; /* 0-terminated */
	unsigned long options;
	int (*usage)(const struct xp_cli *cli, struct xp_usage *u);
};

/* The tables, each in its mode's file (mode_rules.c: their order). */
extern const struct xp_mode_rules xp_list_rules;          /* cmd_validate.c */
extern const struct xp_mode_rules xp_spec_rules;          /* measure.c */
extern const struct xp_mode_rules xp_aggregate_rules;     /* measure_aggregate.c */
extern const struct xp_mode_rules xp_cpu_sample_rules;    /* measure_cpu_sample.c */
extern const struct xp_mode_rules xp_syscall_agg_rules;   /* measure_syscall_agg.c */
extern const struct xp_mode_rules xp_unsafe_offset_rules; /* measure_live.c */
extern const struct xp_mode_rules xp_explain_rules;       /* measure_live.c */
extern const struct xp_mode_rules xp_histogram_rules;     /* histogram_rules.c */
extern const struct xp_mode_rules xp_hist_rules;          /* measure.c */
extern const struct xp_mode_rules xp_input_rules;         /* measure.c */

/*
 * The conflicts of every mode given, then the options given without
 * their mode (only those of @accepted, the command's flags, count).
 * 0, or -EINVAL with @u filled.
 */
int xp_mode_conflicts(const struct xp_cli *cli, unsigned long accepted, struct xp_usage *u);

/* The usage hooks of the modes given. 0, or -EINVAL with @u filled. */
int xp_mode_usage(const struct xp_cli *cli, struct xp_usage *u);

/* @u a TEXT error (printf), or a MISSING argument @arg; return -EINVAL. */
int xp_usage_text(struct xp_usage *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int xp_usage_missing(struct xp_usage *u, const char *arg);
void xp_usage_free(struct xp_usage *u);

/*
 * The syntax rules of each command, run by args.c after parsing
 * (struct xp_command's usage): 0, or -EINVAL with @u filled.
 */
int xp_measure_usage(const struct xp_cli *cli, unsigned long accepted, struct xp_usage *u);
int xp_validate_usage(const struct xp_cli *cli, unsigned long accepted, struct xp_usage *u);
int xp_discover_usage(const struct xp_cli *cli, unsigned long accepted, struct xp_usage *u);

#endif /* XP_CMD_MODE_RULES_H */
