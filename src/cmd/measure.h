/* SPDX-License-Identifier: Apache-2.0 */
/*
 * measure.h - what measure.c shares with its collection halves: the
 * parsed request, what a live collection returns, the inventories.
 */
#ifndef XP_CMD_MEASURE_H
#define XP_CMD_MEASURE_H

#include "cmd.h"
#include "../correlate/correlate.h"
#include "../report/report.h"
#include "../selector/selector.h"
#include <limits.h>

#include "../process/children.h"
#include "../process/identity.h"
#include "../live/live_source.h"

/*
 * One measurement, whatever its mode: what cmd_measure took from the
 * command line (measure.c's req_init: the flags a mode reads are copied,
 * the line itself is not kept), then what the mode parsed and found.
 * Values of flags not given are 0 unless said otherwise; @given says which
 * were (XP_OPT_*), so that each mode applies its own defaults and rules.
 */
struct xp_measure_req {
	/* the command line */
	unsigned long given;       /* XP_OPT_* of the flags given */
	struct xp_output out;      /* --json, --no-color, --non-interactive */
	int argc;                  /* the command line as given (the report shows it) */
	char *const *argv;
	uint32_t pid;              /* --pid */
	const char *const *inputs; /* --input files */
	size_t ninputs;
	const char *spec;          /* --spec file */
	const char *match_text;    /* --match, as written */
	bool unsafe_offset;        /* --unsafe-offset */
	const char *agent;         /* --agent */
	const char *cupti_socket;  /* --cupti-socket */
	const char *report;        /* --report PATH, NULL = none */
	int hist;                  /* --hist: enum xp_hist_view */
	/* the inventories' and --histogram's bounds, as given */
	uint64_t frequency_hz;
	uint64_t max_samples;
	uint64_t stack_depth;
	uint64_t max_threads;
	uint64_t max_inflight;
	uint64_t max_depth;
	const char *by;            /* --by, as written */
	bool explain;              /* --explain */
	uint64_t explain_top;      /* --explain-top, as given */
	uint64_t interval_ms;      /* --interval-ms (--histogram), 0: none */
	const char *metrics_out;   /* --metrics-out PATH (--histogram), NULL: none */

	/* the measurement (a spec's, or the command line's with defaults) */
	const char *name;          /* measurement name or NULL */
	const char *from_text;
	const char *to_text;
	struct xp_selector from;
	struct xp_selector to;
	enum xp_policy policy;
	uint64_t samples;          /* 0 = none */
	uint64_t duration_ms;      /* 0 = none */
	uint64_t timeout_ms;       /* default XP_DEFAULT_TIMEOUT_MS */
	uint64_t max_events;       /* default XP_DEFAULT_MAX_EVENTS */
	uint64_t max_groups;       /* as given; --aggregate: the Agent's group table */
	const char *events_out;    /* NULL = no artifact */
	int format;                /* enum xp_export_format */
	char session_id[64];
	bool has_target;           /* live: target identity below */
	struct xp_target target;
	const struct xp_live_outcome *live; /* how a live capture ended, once it did */
	/* a failed measurement's capture, set where its artifacts are due
	 * (artifact_on_error): --report writes it with the final error
	 * (report_out.h); artifact_failed: --events-out could not be written */
	const struct xp_capture *report_capture;
	bool artifact_failed;
};

/*
 * What the live collection (measure_live.c) hands back: how the capture
 * ended, and each source's counters (the eBPF ring: host; the Agent:
 * agent).
 */
struct xp_live_outcome {
	struct xp_live_result res;
	bool has_host;
	struct xp_live_source_stats host;
	bool has_agent;
	struct xp_live_source_stats agent;
	bool agent_injected; /* this run loaded the Agent into the target */
	/* a capture without events: the target's children, those mapping
	 * children_file (the probed binary, "" for syscall or tracepoint
	 * endpoints: every child) -- the processes that may do the work */
	bool has_children;
	struct xp_children children;
	char children_file[PATH_MAX];
	/* --explain: the scheduler timeline beside the capture (its stacks
	 * stay readable until the caller frees it: xp_live_sched_free) */
	struct xp_live_sched *sched;
	/* the host collector's BPF object, stopped but still attached: the
	 * caller tears it down after writing the result (detaching waits for
	 * the kernel), xp_measure_live_teardown */
	struct xp_live_obj *bpf;
};

/*
 * Collect the live capture @req describes into @c (initialized with
 * max_events): validate, resolve, the sources, xp_live_run.  Returns 0
 * with @out saying how it ended, or a negative code with @err filled
 * (out->res.collected: @c holds what came before the failure).  @ws gets
 * the warnings that reach the result (--unsafe-offset's).  Never emits.
 */
/*
 * Detach and free @out's BPF object (after the result is written).  A
 * link that refuses to go is a warning on stderr, never a changed result.
 */
void xp_measure_live_teardown(struct xp_live_outcome *out);

int xp_measure_live_collect(struct xp_measure_req *req, struct xp_capture *c,
			    struct xp_live_outcome *out, struct xp_warnings *ws,
			    struct xp_error *err);

/*
 * A failure of the Agent or the injection (a reset connection, a refused
 * PTRACE_SEIZE, a dlopen in a process being torn down) that came from the
 * target's end: when @req's target has exited or been reused, @err
 * becomes TARGET_EXITED / TARGET_REUSED (exit 3), with the failure's code
 * and words in details.original_error_code and original_message.
 * Returns the resulting code (@rc unchanged otherwise, 0 stays 0).
 */
/*
 * What validation resolved for one endpoint (@ep lives in a struct
 * xp_validation the caller keeps until the plan is built), as the live
 * plan takes it: a selector is resolved once, by validation.
 */
struct xp_endpoint_check;
struct xp_live_resolved;
void xp_measure_resolved(const struct xp_endpoint_check *ep, struct xp_live_resolved *r);

int xp_measure_target_gone(struct xp_measure_req *req, int rc, struct xp_error *err);

/*
 * What a live measurement does before collecting, for a path that collects
 * on its own (measure --aggregate): validate the pair (its first issue is
 * the error, as for an exact measurement), then @check (may be NULL: the
 * mode's own rules, run after validation as the reference orders them),
 * then the Agent's activation (online injection when validate said
 * injection_required; CUPTI_AGENT_INJECTED in @ws when this run loaded
 * it, *@injected set).  Returns 0 or a negative code with @err.
 */
int xp_measure_agent_ready(struct xp_measure_req *req,
			   int (*check)(void *ctx, struct xp_measure_req *req, struct xp_error *err),
			   void *ctx, struct xp_warnings *ws, bool *injected, struct xp_error *err);

/* measure --aggregate (measure_aggregate.c): @req parsed (selectors,
 * policy, bounds, max_groups); emits its document (exit code >= 0) or
 * returns a negative code with @err for cmd_measure to emit. */
int xp_measure_aggregate(struct xp_measure_req *req, struct xp_error *err);

/*
 * Inventories (their own files): a negative return is an error recorded
 * in @err that cmd_measure still has to emit; a return >= 0 is the exit
 * code of a path that already emitted its document.
 */
int xp_measure_cpu_sample(struct xp_measure_req *req, struct xp_error *err);
int xp_measure_syscall_aggregate(struct xp_measure_req *req, struct xp_error *err);

#endif /* XP_CMD_MEASURE_H */
