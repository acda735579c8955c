/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h - the command-line frame: parsed options, the command table, and
 * the output contract shared by the four commands.
 *
 * Output contract (seed CLI contract, "Common behavior"):
 *   --json: exactly one pretty JSON document on stdout, success or error,
 *           schema_version "2.0"; stderr only for documented diagnostics;
 *   otherwise: a short human summary on stdout, errors as "CODE: message"
 *           (plus "hint: ..." lines) on stderr.
 * Exit codes: 0 result emitted, 1 failure, 2 syntax (usage on stderr, never
 * JSON), 3 target missing/exited/reused, 4 permission denied.
 */
#ifndef XP_CLI_H
#define XP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../model/error_record.h"

#define XP_VERSION "0.1.0"
#define XP_MAX_INPUTS 64

struct xpc_json;

/* Every flag of every command; has_* tells whether it was given. */
struct xp_cli {
	const char *command;     /* "doctor", "discover", "validate", "measure" */
	bool json;
	bool non_interactive;    /* also: no progress line on stderr */
	bool no_color;           /* (NO_COLOR too: xp_cli_color) */
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

int cmd_doctor(const struct xp_cli *cli);
int cmd_discover(const struct xp_cli *cli);
int cmd_validate(const struct xp_cli *cli);
int cmd_measure(const struct xp_cli *cli);

/*
 * Emit a failure the contract's way and return its exit code (1, 3 or 4).
 * JSON mode: the error envelope on stdout; human mode: "CODE: message"
 * and hints on stderr.
 */
int xp_cli_fail(const struct xp_cli *cli, const struct xp_error *err);

/*
 * Emit a success document: in JSON mode @render_json is called inside a
 * pretty writer on stdout; otherwise @render_human writes to stdout.
 * Returns 0, or 1 if stdout could not be written.
 */
int xp_cli_emit(const struct xp_cli *cli, void (*render_json)(struct xpc_json *w, void *ctx),
		void (*render_human)(FILE *out, void *ctx), void *ctx);

/*
 * A diagnostic line on stderr, "xprobe: warning: <message>", whatever the
 * output mode (the contract: diagnostics, including the online-injection
 * warning, go to stderr).
 */
void xp_cli_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Colors: only on a terminal (@fd), never with --no-color, with NO_COLOR
 * set to anything non-empty (https://no-color.org), or with TERM=dumb.
 */
bool xp_cli_color(const struct xp_cli *cli, int fd);

/*
 * The progress line on stderr while a live capture runs: only when
 * stderr is a terminal and --non-interactive was not given (whatever
 * --json says: a terminal is no program reading the document).  One line,
 * redrawn in place ("\r", the line, blanks over the rest), at most once per
 * XP_CLI_PROGRESS_NS, cut to the terminal's width so it never wraps, and
 * erased by xp_cli_progress_end before anything else is printed.  Drawing
 * allocates nothing (one write(2) of a stack buffer): it runs inside the
 * live loop (src/live/live_run.c calls back with counters, the command
 * formats them, this writes them).
 */
#define XP_CLI_PROGRESS_NS 100000000ull /* 10 redraws a second at most */

struct xp_cli_progress {
	bool on;          /* a terminal, and --non-interactive not given */
	bool color;
	bool drawn;       /* a line is on the screen now */
	size_t width;     /* ... this many bytes of it (blanked by the next) */
	uint64_t last_ns; /* CLOCK_MONOTONIC of the last redraw */
};

void xp_cli_progress_init(struct xp_cli_progress *p, const struct xp_cli *cli);
/* Redraw with @text (plain ASCII), unless the last redraw is too recent. */
void xp_cli_progress_draw(struct xp_cli_progress *p, const char *text);
/* Erase the line ("\r", blanks, "\r") if one is drawn. */
void xp_cli_progress_end(struct xp_cli_progress *p);

/* Session id of this invocation: "xp_<kind>_<xprobe pid>". */
void xp_cli_session_id(const char *kind, char *buf, size_t size);

#endif /* XP_CLI_H */
