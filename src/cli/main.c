/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c - xprobe's entry point: the command table, top-level --help and
 * --version, and dispatch.  Commands are matched exactly (no prefixes:
 * scripts must not depend on abbreviations).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../../common/atomic_file.h"
#include "../../common/cancel.h"
#include "../../common/env_hooks.h"
#include "../../common/suggest.h"
#include "../model/event.h"
#include "../cmd/mode_rules.h"
#include "args.h"

#define COMMON_HELP                                                                         \
	"Common options:\n"                                                                 \
	"      --json             write exactly one JSON document to stdout\n"              \
	"      --non-interactive  never prompt (xprobe never does), no progress line\n"     \
	"      --no-color         no colors (also NO_COLOR=1; colors only on a terminal)\n" \
	"  -h, --help             print this help\n"

static const struct xp_command commands[] = {
	{
		"doctor",
		"Can this machine trace? Kernel, BTF, BPF/perf permission, tracefs, NVIDIA/CUDA/CUPTI.",
		"[--json] [--non-interactive] [--no-color]",
		"ok: true means the diagnosis completed, not that every capability is available.\n\n" COMMON_HELP,
		"  $ xprobe doctor\n"
		"  $ xprobe doctor --json --non-interactive --no-color | jq '.capabilities'\n",
		0,
		cmd_doctor,
	},
	{
		"discover",
		"List CUDA compute processes (NVML) that are PID or its descendants.",
		"--pid <PID> [--limit <N>] [--json] [--non-interactive] [--no-color]",
		"Options:\n"
		"      --pid <PID>        process-tree root\n"
		"      --limit <N>        at most N candidates (default 200, must be positive)\n\n" COMMON_HELP,
		"  $ xprobe discover --pid 1                # every CUDA process on the machine\n"
		"  $ xprobe discover --pid $(pgrep -o torchrun) --limit 16 --json\n",
		XP_OPT_PID | XP_OPT_LIMIT,
		cmd_discover,
		xp_discover_usage,
	},
	{
		"validate",
		"Check, read-only, whether a measurement can run against a live process.",
		"--pid <PID> (--from <SELECTOR> --to <SELECTOR> --match <POLICY> [--unsafe-offset] [--histogram [--by thread|arg0]] | --cpu-sample | --syscall-aggregate | --list <PATTERN> [--limit <N>]) [--json]",
		"Options:\n"
		"      --pid <PID>            target process\n"
		"      --from <SELECTOR>      start endpoint (see docs/selectors.md)\n"
		"      --to <SELECTOR>        end endpoint\n"
		"      --match <POLICY>       exact | first-after | nearest | stack-nested | stream-order\n"
		"      --unsafe-offset        accept a uprobe +0x offset whose instruction boundary\n"
		"                             cannot be checked (no function symbol covers it), with\n"
		"                             a warning; a mid-instruction offset is always refused\n"
		"      --cpu-sample           check CPU sampling (threads, perf events, Python symbols)\n"
		"      --syscall-aggregate    check the eBPF syscall aggregate path\n"
		"      --histogram            check the in-kernel latency histogram of the pair\n"
		"                             (its BPF object loaded for real); --by thread|arg0\n"
		"      --list <PATTERN>       list the target's endpoints whose selector matches the\n"
		"                             glob (uprobe:BIN:SYMBOL, python:gc_*, syscall:NAME,\n"
		"                             tracepoint:CAT:NAME), sorted; add :entry/:return\n"
		"                             (:exit for syscalls) to use one\n"
		"      --limit <N>            with --list: at most N endpoints (default 200)\n\n" COMMON_HELP,
		"  $ xprobe validate --pid 4242 --from syscall:read:entry --to syscall:read:exit \\\n"
		"      --match exact\n"
		"  $ xprobe validate --pid 4242 --from 'uprobe:/srv/app:handle:entry' \\\n"
		"      --to 'uprobe:/srv/app:handle:return' --match stack-nested --json\n"
		"  $ xprobe validate --pid 4242 --cpu-sample\n"
		"  $ xprobe validate --pid 4242 --list 'uprobe:*redis-server:*Command*'\n"
		"  $ xprobe validate --pid 4242 --list 'syscall:*mmap*'\n",
		XP_OPT_PID | XP_OPT_FROM | XP_OPT_TO | XP_OPT_MATCH | XP_OPT_CPU_SAMPLE |
			XP_OPT_SYSCALL_AGG | XP_OPT_UNSAFE_OFFSET | XP_OPT_HISTOGRAM | XP_OPT_BY |
			XP_OPT_LIST | XP_OPT_LIMIT,
		cmd_validate,
		xp_validate_usage,
	},
	{
		"measure",
		"Measure the latency between two events: live, from completed captures, or a spec.",
		"(--pid <PID> | --input <FILE>... | --spec <FILE>) [--from <SEL> --to <SEL> --match <POLICY>] [OPTIONS]",
		"Source (exactly one):\n"
		"      --pid <PID>            live target\n"
		"      --input <FILE>         completed capture: Event JSONL, host-capture JSON,\n"
		"                             .xtf file or libxprobe session directory (repeatable)\n"
		"      --spec <FILE>          versioned MeasurementSpec (live)\n"
		"Endpoints and pairing:\n"
		"      --from <SELECTOR>      start endpoint\n"
		"      --to <SELECTOR>        end endpoint\n"
		"      --match <POLICY>       exact | first-after | nearest | stack-nested | stream-order\n"
		"      --name <NAME>          measurement name\n"
		"      --unsafe-offset        probe a uprobe +0x offset whose instruction boundary\n"
		"                             cannot be checked, with a warning (see validate)\n"
		"Bounds:\n"
		"      --samples <N>          stop after N matched pairs\n"
		"      --duration-ms <MS>     collection window\n"
		"      --timeout-ms <MS>      outer bound (default 30000)\n"
		"      --max-events <N>       capture capacity in events (default 100000)\n"
		"Artifacts:\n"
		"      --events-out <PATH>    write the whole bounded capture atomically, mode 0600\n"
		"      --format <FMT>         jsonl (default) | chrome (Chrome Trace Event Format)\n"
		"      --report <PATH>        a self-contained HTML report of the result (or of a\n"
		"                             failed capture): percentiles, histogram, timeline;\n"
		"                             inventories too; written atomically, mode 0600\n"
		"Terminal view (without --json; docs/output.md):\n"
		"      --hist <MODE>          log2 | linear | none: the histogram of the matched\n"
		"                             latencies under the summary (default log2: power-of-two\n"
		"                             buckets; linear: automatic step)\n"
		"CUDA and NVTX endpoints (the xprobe Agent inside the target; docs/agent.md):\n"
		"      --agent <PATH>         Agent library to inject for CUDA API/activity\n"
		"                             endpoints (default: $XPROBE_CUPTI_AGENT_PATH, then\n"
		"                             ../lib/libxprobe.so beside the executable)\n"
		"      --cupti-socket <PATH>  connect to this Agent socket, not the target's own\n"
		"      --aggregate            GPU activity inventory: one kernel, memcpy or memset\n"
		"                             start/end pair, --match exact, --duration-ms,\n"
		"                             --max-groups (4096) groups counted in the target\n"
		"                             (AggregateInventoryResult; no --samples/--events-out)\n"
		"Inventories:\n"
		"      --cpu-sample           CPU/Python hotspot inventory; --frequency-hz (99),\n"
		"                             --max-samples (10000), --max-groups (256),\n"
		"                             --stack-depth (64), --max-threads (1024)\n"
		"      --syscall-aggregate    syscall lifecycle inventory; --max-groups (256),\n"
		"                             --max-inflight (1024)\n"
		"Latency histogram (docs/histograms.md):\n"
		"      --histogram            pair --from/--to in the kernel (exact: syscall or GC\n"
		"                             lifecycle; stack-nested: uprobe entry/return) into a\n"
		"                             log-linear histogram; runs for --duration-ms, until\n"
		"                             Ctrl-C or the target exits (--timeout-ms: outer\n"
		"                             bound, none by default); no events, no --samples\n"
		"                             (cuda: endpoints: paired inside the target by the Agent)\n"
		"      --by <KEY>             thread | arg0: one histogram per thread, or per value\n"
		"                             of the start's first argument (GC: the generation);\n"
		"                             cuda: endpoints: name | thread | stream | device\n"
		"      --max-inflight <N>     threads with open starts (1024)\n"
		"      --max-depth <N>        stack-nested nesting depth kept (32, at most 32)\n"
		"      --max-groups <N>       groups of --by (256)\n"
		"      --interval-ms <N>      also print each N ms what the interval added (at\n"
		"                             least 100; --json: one line each, JSON Lines)\n"
		"      --metrics-out <PATH>   keep PATH.prom, Prometheus text format, rewritten\n"
		"                             every interval and at the end (docs/fleet.md)\n"
		"      --explain              split each pair's latency into on CPU, run queue and\n"
		"                             blocked (on what, woken by whom) (docs/explain.md)\n"
		"      --explain-top <N>      slowest pairs kept with their stacks (20, at most 64)\n\n" COMMON_HELP,
		"  $ xprobe measure --pid 4242 --from syscall:mmap:entry --to syscall:mmap:exit \\\n"
		"      --match exact --samples 100\n"
		"  $ xprobe measure --pid 4242 --histogram --from 'uprobe:/srv/app:handle:entry' \\\n"
		"      --to 'uprobe:/srv/app:handle:return' --match stack-nested --duration-ms 60000\n"
		"  $ xprobe measure --input capture.jsonl --from syscall:mmap:entry \\\n"
		"      --to syscall:mmap:exit --match exact --samples 100 --report mmap.html\n",
		XP_OPT_PID | XP_OPT_FROM | XP_OPT_TO | XP_OPT_MATCH | XP_OPT_SPEC | XP_OPT_INPUT |
			XP_OPT_AGENT | XP_OPT_CUPTI_SOCKET | XP_OPT_EVENTS_OUT | XP_OPT_FORMAT |
			XP_OPT_NAME | XP_OPT_SAMPLES | XP_OPT_DURATION | XP_OPT_TIMEOUT |
			XP_OPT_MAX_EVENTS | XP_OPT_AGGREGATE | XP_OPT_CPU_SAMPLE |
			XP_OPT_SYSCALL_AGG | XP_OPT_MAX_GROUPS | XP_OPT_FREQUENCY |
			XP_OPT_MAX_SAMPLES | XP_OPT_STACK_DEPTH | XP_OPT_MAX_THREADS |
			XP_OPT_MAX_INFLIGHT | XP_OPT_UNSAFE_OFFSET | XP_OPT_HISTOGRAM | XP_OPT_BY |
			XP_OPT_MAX_DEPTH | XP_OPT_REPORT | XP_OPT_HIST | XP_OPT_EXPLAIN |
			XP_OPT_EXPLAIN_TOP | XP_OPT_INTERVAL | XP_OPT_METRICS_OUT,
		cmd_measure,
		xp_measure_usage,
	},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void top_usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"xprobe %s - measure the latency between two events in a live process\n\n"
		"Usage: xprobe <COMMAND> [OPTIONS]\n\nCommands:\n",
		XP_VERSION);
	/* one line a command (tools parse this list): summaries fit 88 columns */
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\nOptions:\n  -h, --help     print help\n  -V, --version  print version\n\n"
		"Run 'xprobe <COMMAND> --help' or 'xprobe help <COMMAND>' for the options of a\n"
		"command.\n");
}

static size_t find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(name, commands[i].name) == 0)
			break;
	return i;
}

/* A word that is no command: said, with the closest command when one is. */
static int unknown_command(const char *word)
{
	const char *names[NCOMMANDS], *best;
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	best = xpc_closest(word, names, NCOMMANDS);
	fprintf(stderr, "error: unrecognized command '%s'\n\n", word);
	if (best)
		fprintf(stderr, "  tip: a similar command exists: '%s'\n\n", best);
	top_usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct xp_cli cli;
	bool done;
	size_t i;
	int rc;

	/*
	 * First of all: SIGINT/SIGTERM/SIGHUP become a stop request that the
	 * long phases of `measure` honour (a cancelled document, no temporary
	 * left behind) instead of killing xprobe mid-write (common/cancel.h).
	 */
	xpc_cancel_install();
	/* test builds: write artifacts as on a filesystem without O_TMPFILE */
	if (xpc_test_hook_env("XPROBE_TEST_NO_TMPFILE"))
		xpc_atomic_no_tmpfile = 1;
	/* test builds: every artifact write fails at its end (EIO), after the
	 * checks before the measurement passed */
	if (xpc_test_hook_env("XPROBE_TEST_WRITE_FAULT"))
		xpc_atomic_fault_before_rename = -EIO;
	if (argc < 2) {
		fprintf(stderr, "error: a command is required\n\n");
		top_usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "help") == 0 && argc > 2) {
		/* xprobe help COMMAND: that command's --help */
		i = find_command(argv[2]);
		if (i == NCOMMANDS)
			return unknown_command(argv[2]);
		xp_args_help(&commands[i], stdout);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		top_usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		/* the first line as ever; the second what a caller checks
		 * compatibility by, without knowing our version numbers */
		printf("xprobe %s\ncontract %s (schema_version %s)\n", XP_VERSION,
		       XP_CONTRACT_VERSION, XP_SCHEMA_VERSION);
		return 0;
	}
	i = find_command(argv[1]);
	if (i == NCOMMANDS)
		return unknown_command(argv[1]);
	/* only measure checks the request; the other commands are short and
	 * read-only: a signal acts as it always did */
	if (strcmp(commands[i].name, "measure") != 0)
		xpc_cancel_release();
	memset(&cli, 0, sizeof(cli));
	cli.command = commands[i].name;
	cli.argc = argc - 1; /* from the command's name on */
	cli.argv = argv + 1;
	rc = xp_args_parse(&commands[i], argc - 1, argv + 1, &cli, &done);
	if (rc || done)
		return rc;
	return commands[i].run(&cli);
}
