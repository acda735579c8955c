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

/* Every flag of every command; has_* tells whether it was given. */
struct xp_cli {
	const char *command;     /* "doctor", "discover", "validate", "measure" */
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
