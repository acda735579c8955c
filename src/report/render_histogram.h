/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_histogram.h - the two documents of `--histogram`: the
 * LatencyHistogramResult of `measure --histogram`
 * (schemas/latency-histogram-result.schema.json) and the
 * latency_histogram form of `validate --histogram`
 * (schemas/inventory-validation.schema.json), each as JSON and as the
 * terminal view.  The renderers only print what src/inventory/latency_histogram.h
 * computed (percentiles are computed there, from the folded buckets).
 */
#ifndef XP_REPORT_RENDER_HISTOGRAM_H
#define XP_REPORT_RENDER_HISTOGRAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../checks/bpfprobe.h"
#include "../checks/validate_checks.h"
#include "../inventory/latency_histogram.h"
#include "../live/live.h"
#include "output.h"

struct xpc_json;

/* What a LatencyHistogramResult shows. */
struct xp_histogram_view {
	const char *session_id;
	const char *name;            /* --name or NULL */
	uint32_t pid;
	uint64_t process_start_time;
	const char *start_selector;
	const char *end_selector;
	const struct xp_live_endpoint *start, *end; /* resolved (the live plan); NULL
						       both for the Agent's cuda: pairs */
	bool pid_namespace_filter;
	uint64_t duration_ms;        /* 0 = none given (null) */
	uint64_t timeout_ms;         /* 0 = none given (null) */
	const struct xp_inv_lh_result *result; /* finished */
	const struct xp_warnings *warnings;
	bool color;                  /* the terminal view's bars in color */
};

/* "completed", "cancelled", "target_exited", "timed_out". */
const char *xp_histogram_status(const struct xp_inv_lh_result *r);

void xp_render_histogram_json(struct xpc_json *w, const struct xp_histogram_view *v);
void xp_render_histogram_human(FILE *out, const struct xp_histogram_view *v);
extern const struct xp_doc_type xp_doc_histogram;

/* A group's label as the documents print it ("tid 4242", "generation 2",
 * "arg0 17", "stream 7", or a name): @by the grouping, @start the start
 * endpoint (its key kind; NULL for the Agent's), @g the group. */
void xp_render_histogram_group_label(char *buf, size_t size, int by,
				     const struct xp_live_endpoint *start,
				     const struct xp_inv_lh_group *g);

/*
 * --interval-ms (render_histogram.c): what one interval of the window
 * added, the LatencyHistogramInterval document
 * (schemas/latency-histogram-interval.schema.json), one line of JSON Lines
 * or a block of the terminal view under a time header.
 */
struct xp_histogram_interval_view {
	const struct xp_histogram_view *capture; /* the capture's identity (result unused) */
	const struct xp_inv_lh_interval *iv;
	uint64_t armed_at_ns;
	bool explain;
	int group_by;
	bool nested;
};
void xp_render_histogram_interval_json(struct xpc_json *w,
				       const struct xp_histogram_interval_view *v);
void xp_render_histogram_interval_human(FILE *out, const struct xp_histogram_interval_view *v);
extern const struct xp_doc_type xp_doc_histogram_interval;

/*
 * --metrics-out (render_prometheus.c): the distribution so far in the
 * Prometheus text exposition format.  @result is cumulative (a finished
 * result, or an interval's cumulative read).
 */
struct xp_prom_view {
	const char *name;            /* --name or NULL */
	uint32_t pid;
	uint64_t process_start_time;
	const char *comm, *exe;      /* the target's, "" when unreadable */
	const char *start_selector, *end_selector;
	const struct xp_live_endpoint *start; /* the start's kind names --by arg0 keys */
	const struct xp_inv_lh_result *result;
	uint64_t window_ns;          /* armed so far */
};
struct xpc_buf;
void xp_render_prometheus(struct xpc_buf *b, const struct xp_prom_view *v);

/* Power-of-two bin of log-linear bucket @b (render_bars.h's bins). */
unsigned xp_render_lh_pow2_bin(uint32_t b);

/* --explain (render_explain.c): the "explain" member (null without), a
 * group's parts under @key, and the terminal's split bars and summary. */
void xp_render_explain_json(struct xpc_json *w, const struct xp_inv_lh_result *r);
void xp_render_explain_parts_json(struct xpc_json *w, const char *key, const struct xp_ex_sums *s);
void xp_render_explain_bars(FILE *out, const struct xp_inv_lh_result *r, bool color);
void xp_render_explain_parts_line(FILE *out, const struct xp_ex_sums *s, uint64_t pairs);
void xp_render_explain_human(FILE *out, const struct xp_inv_lh_result *r);
/* The parts both --explain documents share (--histogram's and the exact
 * modes' explained-measurement-result): "blocked_by_syscall", "top" and
 * "slowest" (group keys only when @grouped), and their terminal lines
 * (a slow pair's time as seconds after @t0). */
void xp_render_explain_blocked_json(struct xpc_json *w, const struct xp_inv_ex_result *ex);
void xp_render_explain_slowest_json(struct xpc_json *w, const struct xp_inv_ex_result *ex,
				    bool grouped);
void xp_render_explain_blocked_human(FILE *out, const struct xp_inv_ex_result *ex);
void xp_render_explain_slowest_human(FILE *out, const struct xp_inv_ex_result *ex, uint64_t t0);

/* What `validate --histogram` found. */
struct xp_histogram_check {
	const struct xp_validation *v;   /* the pair check (policy, capabilities) */
	const struct xp_live_endpoint *start, *end; /* resolved, NULL when unresolved */
	int group_by;                   /* XP_LH_BY_* */
	bool agent; /* cuda: endpoints: the Agent pairs them, no BPF */
	struct xp_bpf_step object_load; /* the real object loaded, nothing attached */
	struct xp_issue issues[XP_MAX_ISSUES];
	size_t nissues;
	const struct xp_warnings *warnings;
};

void xp_render_histogram_check_json(struct xpc_json *w, const struct xp_histogram_check *c);
void xp_render_histogram_check_human(FILE *out, const struct xp_histogram_check *c);
extern const struct xp_doc_type xp_doc_histogram_check;

#endif /* XP_REPORT_RENDER_HISTOGRAM_H */
