/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd.h - the four commands' entry points and what they take: the command
 * line as src/cli/args.c parsed it (every flag of every command, has_*
 * telling whether it was given), with the contract's defaults.  The
 * commands write through the output contract (src/report/output.h);
 * src/cli dispatches to them and never the other way round.
 */
#ifndef XP_CMD_CMD_H
#define XP_CMD_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../report/output.h"

#define XP_VERSION "0.1.0"
#define XP_MAX_INPUTS 64

/*
 * The flags, one bit each (XP_OPT_*): what a command accepts (src/cli),
 * what a command line gave (xp_cli.given).  The order of the bits is the
 * order in which options given without their mode are reported
 * (mode_rules.c): --limit after the inventories' and --histogram's.
 */
enum xp_opt_bit {
	XP_OPT_PID = 1ul << 0,
	XP_OPT_HIST = 1ul << 1,
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
	XP_OPT_LIMIT = 1ul << 30,
	XP_OPT_LIST = 1ul << 31,
	XP_OPT_EXPLAIN = 1ul << 32,
	XP_OPT_EXPLAIN_TOP = 1ul << 33,
	XP_OPT_INTERVAL = 1ul << 34,
	XP_OPT_METRICS_OUT = 1ul << 35,
};

/* Every flag of every command; has_* tells whether it was given. */
struct xp_cli {
	const char *command;     /* "doctor", "discover", "validate", "measure" */
	unsigned long given;     /* XP_OPT_* of the flags given */
	struct xp_output out;    /* --json, --non-interactive, --no-color */
	int hist;                /* --hist: enum xp_hist_view (report.h), log2 by default */

	bool has_pid;
	uint32_t pid;
	bool has_limit;
	uint64_t limit;          /* discover, validate --list: --limit, default 200 */
	const char *list;        /* validate --list PATTERN */

	const char *from;        /* --from */
	const char *to;          /* --to */
	const char *match;       /* --match, as written */

	const char *spec;        /* measure --spec */
	const char *inputs[XP_MAX_INPUTS];
	size_t ninputs;
	const char *agent;       /* --agent */
	const char *cupti_socket; /* hidden --cupti-socket */
	const char *events_out;  /* --events-out */
	const char *format;      /* --format, as written */
	const char *name;        /* --name */

	bool has_samples;
	uint64_t samples;
	bool has_duration_ms;
	uint64_t duration_ms;
	bool has_timeout_ms;
	uint64_t timeout_ms;     /* default 30000 */
	bool has_max_events;
	uint64_t max_events;     /* default 100000 */

	bool aggregate;          /* --aggregate (CUDA activity inventory) */
	bool cpu_sample;         /* --cpu-sample */
	bool syscall_aggregate;  /* --syscall-aggregate */
	bool has_max_groups;
	uint64_t max_groups;
	bool has_frequency_hz;
	uint64_t frequency_hz;
	bool has_max_samples;
	uint64_t max_samples;
	bool has_stack_depth;
	uint64_t stack_depth;
	bool has_max_threads;
	uint64_t max_threads;
	bool has_max_inflight;
	uint64_t max_inflight;

	bool unsafe_offset;      /* --unsafe-offset (resolve/insn.h) */

	bool histogram;          /* --histogram (docs/histograms.md) */
	const char *by;          /* --by thread|arg0, as written */
	bool has_max_depth;
	uint64_t max_depth;      /* --max-depth (stack-nested --histogram) */
	bool explain;            /* --explain (docs/explain.md) */
	bool has_explain_top;
	uint64_t explain_top;    /* --explain-top N */
	bool has_interval_ms;
	uint64_t interval_ms;    /* --interval-ms N (--histogram) */
	const char *metrics_out; /* --metrics-out PATH.prom (--histogram) */

	const char *report;      /* measure --report PATH.html (src/report/html_report.h) */
	int argc;                /* the command line, as given (the report shows it) */
	char *const *argv;
};

/* Defaults of the contract. */
#define XP_DEFAULT_TIMEOUT_MS 30000u
#define XP_DEFAULT_MAX_EVENTS 100000u
#define XP_DEFAULT_DISCOVER_LIMIT 200u
#define XP_DEFAULT_LIST_LIMIT 200u
#define XP_DEFAULT_AGG_MAX_GROUPS 4096u
#define XP_DEFAULT_FREQUENCY_HZ 99u
#define XP_DEFAULT_MAX_SAMPLES 10000u
#define XP_DEFAULT_INV_MAX_GROUPS 256u
#define XP_DEFAULT_STACK_DEPTH 64u
#define XP_DEFAULT_MAX_THREADS 1024u
#define XP_DEFAULT_MAX_INFLIGHT 1024u

/* Each returns the process exit code, having written its document. */
int cmd_doctor(const struct xp_cli *cli);
int cmd_discover(const struct xp_cli *cli);
int cmd_validate(const struct xp_cli *cli);
int cmd_measure(const struct xp_cli *cli);

#endif /* XP_CMD_CMD_H */
