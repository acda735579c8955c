/* SPDX-License-Identifier: Apache-2.0 */
/*
 * args.h - flag parsing for the four commands (getopt_long over one option
 * table; each command lists the flags it accepts).  Every syntax error --
 * unknown or repeated flag, missing value, bad integer, conflicting source
 * or inventory modes, a flag that requires another -- prints the message
 * and the command's usage on stderr and exits 2, never JSON (the contract's
 * "invalid CLI syntax").
 */
#ifndef XP_CLI_ARGS_H
#define XP_CLI_ARGS_H

#include <stdio.h>

#include "../cmd/cmd.h"

enum xp_opt_bit {
	XP_OPT_PID = 1ul << 0,
	XP_OPT_LIMIT = 1ul << 1,
	XP_OPT_FROM = 1ul << 2,
	XP_OPT_TO = 1ul << 3,
	XP_OPT_MATCH = 1ul << 4,
	XP_OPT_SPEC = 1ul << 5,
	XP_OPT_INPUT = 1ul << 6,
	XP_OPT_AGENT = 1ul << 7,
	XP_OPT_CUPTI_SOCKET = 1ul << 8,
	XP_OPT_EVENTS_OUT = 1ul << 9,
	XP_OPT_FORMAT = 1ul << 10,
	XP_OPT_NAME = 1ul << 11,
	XP_OPT_SAMPLES = 1ul << 12,
	XP_OPT_DURATION = 1ul << 13,
	XP_OPT_TIMEOUT = 1ul << 14,
	XP_OPT_MAX_EVENTS = 1ul << 15,
	XP_OPT_AGGREGATE = 1ul << 16,
	XP_OPT_CPU_SAMPLE = 1ul << 17,
	XP_OPT_SYSCALL_AGG = 1ul << 18,
	XP_OPT_MAX_GROUPS = 1ul << 19,
	XP_OPT_FREQUENCY = 1ul << 20,
	XP_OPT_MAX_SAMPLES = 1ul << 21,
	XP_OPT_STACK_DEPTH = 1ul << 22,
	XP_OPT_MAX_THREADS = 1ul << 23,
	XP_OPT_MAX_INFLIGHT = 1ul << 24,
	XP_OPT_UNSAFE_OFFSET = 1ul << 25,
	XP_OPT_HISTOGRAM = 1ul << 26,
	XP_OPT_BY = 1ul << 27,
	XP_OPT_MAX_DEPTH = 1ul << 28,
	XP_OPT_REPORT = 1ul << 29,
	XP_OPT_HIST = 1ul << 30,
	XP_OPT_LIST = 1ul << 31,
};

/* A command: parse flags are shared; run returns the process exit code. */
struct xp_command {
	const char *name;
	const char *summary;
	const char *usage;   /* one line of flags */
	const char *help;    /* full --help text after the usage line */
	const char *examples; /* "Examples:" lines, each "  $ xprobe ..." */
	unsigned long flags; /* XP_OPT_* accepted */
	int (*run)(const struct xp_cli *cli);
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
