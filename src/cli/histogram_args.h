/* SPDX-License-Identifier: Apache-2.0 */
/*
 * histogram_args.h - the usage rules of `--histogram` that need more than
 * the flag tables of args.c: what the in-kernel pairing of
 * bpf/latency_hist.bpf.c can do.  A command line it cannot serve is a
 * syntax error (exit 2, usage on stderr), never a JSON document: the
 * combination is wrong whatever the target.
 */
#ifndef XP_CLI_HISTOGRAM_ARGS_H
#define XP_CLI_HISTOGRAM_ARGS_H

#include <stddef.h>

#include "../cmd/cmd.h"

/*
 * 0 when @cli (with --histogram) is a command line the histogram path can
 * run; otherwise -EINVAL with the reason in @why (@size bytes).  Selector
 * texts that do not parse pass: the command reports them as
 * INVALID_EVENT_SELECTOR, as every measurement does.
 */
int xp_histogram_usage(const struct xp_cli *cli, char *why, size_t size);

#endif /* XP_CLI_HISTOGRAM_ARGS_H */
