/* SPDX-License-Identifier: Apache-2.0 */
/*
 * args.h - flag parsing for the four commands (getopt_long over one option
 * table; each command lists the flags it accepts).  Every syntax error --
 * unknown or repeated flag, missing value, bad integer, conflicting source
 * or inventory modes, a flag that requires another (the command's mode
 * rules, src/cmd/mode_rules.h) -- prints the message and the command's
 * usage on stderr and exits 2, never JSON (the contract's "invalid CLI
 * syntax").
 */
#ifndef XP_CLI_ARGS_H
#define XP_CLI_ARGS_H

#include <stdio.h>

#include "../cmd/cmd.h"

struct xp_usage;

/* A command: parse flags are shared; run returns the process exit code. */
struct xp_command {
	const char *name;
	const char *summary;
	const char *usage;   /* one line of flags */
	const char *help;    /* full --help text after the usage line */
	const char *examples; /* "Examples:" lines, each "  $ xprobe ..." */
	unsigned long flags; /* XP_OPT_* accepted */
	int (*run)(const struct xp_cli *cli);
	/* its syntax rules after parsing (src/cmd/mode_rules.h), NULL: none */
	int (*check)(const struct xp_cli *cli, unsigned long accepted, struct xp_usage *u);
};

/* @text word-wrapped at 100 columns, the first line starting at column
 * @first_indent, the others indented by @indent. */
void xp_args_wrap(FILE *out, const char *text, size_t first_indent, size_t indent);
/* @cmd's --help (also `xprobe help COMMAND`), within 100 columns. */
void xp_args_help(const struct xp_command *cmd, FILE *out);

/*
 * Parse argv (argv[0] is the command name) for @cmd into @cli.
 * Returns 0, or an exit code: 2 after printing a syntax error, 0 with
 * *done = true after printing --help.
 */
int xp_args_parse(const struct xp_command *cmd, int argc, char **argv, struct xp_cli *cli,
		  bool *done);

#endif /* XP_CLI_ARGS_H */
