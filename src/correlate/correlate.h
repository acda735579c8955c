/* SPDX-License-Identifier: Apache-2.0 */
/*
 * correlate.h - pair start and end events of a capture under one of the
 * five policies, and turn the pairs into statistics and quality.
 *
 * Pipeline (docs/correlation.md has the rules in full):
 *   1. limits: samples/duration/max_events (SESSION_LIMIT_EXCEEDED);
 *   2. capture larger than max_events -> EVENT_RATE_TOO_HIGH;
 *   3. capture->dropped != 0 -> EVENTS_DROPPED;
 *   4. policy/selector compatibility -> INVALID_CORRELATION_POLICY naming
 *      the compatible policies;
 *   5. select start and end events, stable by timestamp;
 *   6. clock check -> CLOCK_ALIGNMENT_FAILED for cross-clock subtraction
 *      without declared alignment; nothing selected -> NO_MATCHED_SAMPLES;
 *   7. duration window; 8. pair; 9. truncate to samples; 10. no pair ->
 *      NO_MATCHED_SAMPLES.
 *
 * Method strings and confidence:
 *   exact syscall entry->exit       exact_syscall_tid_lifecycle   exact
 *   exact python gc_start->gc_end   exact_python_gc_tid_lifecycle exact
 *   exact NVTX start->end           exact_nvtx_range_id           exact
 *   exact otherwise (CUDA)          exact_cupti_correlation_id    exact
 *   first-after                     first_after                   heuristic
 *   nearest                         nearest                       heuristic
 *   stack-nested                    stack_nested_tid_lifo         high
 *   stream-order                    cuda_stream_order             high
 */
#ifndef XP_CORRELATE_H
#define XP_CORRELATE_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "../model/event.h"
#include "../selector/selector.h"

enum xp_policy {
	XP_POLICY_EXACT = 0,
	XP_POLICY_FIRST_AFTER,
	XP_POLICY_NEAREST,
	XP_POLICY_STACK_NESTED,
	XP_POLICY_STREAM_ORDER,
	XP_POLICY__COUNT
};

/* "first-after" and "first_after" both parse; -1 when unknown. */
int xp_policy_parse(const char *s);
/* The policy name closest to @s (a typo of one), or NULL. */
const char *xp_policy_closest(const char *s);
const char *xp_policy_snake(enum xp_policy p); /* JSON: first_after */
const char *xp_policy_kebab(enum xp_policy p); /* CLI/details: first-after */

enum xp_confidence {
	XP_CONF_EXACT = 0,
	XP_CONF_HIGH,
	XP_CONF_HEURISTIC,
	XP_CONF_AMBIGUOUS,
};
const char *xp_confidence_name(enum xp_confidence c);

enum xp_alignment {
	XP_ALIGN_HOST_MONOTONIC = 0,
	XP_ALIGN_CUPTI_SAME_DOMAIN,
	XP_ALIGN_CUPTI_NORMALIZED,
};
const char *xp_alignment_name(enum xp_alignment a);

/*
 * Which policies the correlator accepts for a selector pair, as a bitmask
 * of (1 << enum xp_policy): the contract's correlator check
 * (docs/contract.md, "Correlation"), lenient on purpose (the stricter
 * validate-time rules live with `validate`).
 *   exact         allowed unless either endpoint is a uprobe, tracepoint,
 *                 NVTX or CPython GC selector; except syscall:X:entry ->
 *                 syscall:X:exit, python:gc_start -> python:gc_end, and
 *                 nvtx_range_start -> nvtx_range_end with identical regex
 *                 text, which are always allowed;
 *   stack-nested  uprobe entry -> uprobe return, same binary text and the
 *                 same symbol/signature/offset;
 *   stream-order  both endpoints kernel/memcpy/memset activity;
 *   first-after, nearest  always.
 */
unsigned xp_policy_compatible(const struct xp_selector *start, const struct xp_selector *end);

/*
 * The policies of @mask in recommendation order (stack-nested, exact,
 * stream-order, first-after, nearest): the order validate lists
 * compatible_policies in.  Returns how many were written to @out.
 */
size_t xp_policy_list(unsigned mask, enum xp_policy out[XP_POLICY__COUNT]);
/* The strongest policy of @mask (first of xp_policy_list); first-after
 * when @mask holds none of stack-nested, exact, stream-order. */
enum xp_policy xp_policy_recommend(unsigned mask);
/* What @p requires of its endpoints ("exact matching requires endpoints
 * that share a deterministic correlation key", ...); NULL for the temporal
 * policies, which require nothing. */
const char *xp_policy_requirement(enum xp_policy p);

/* Which exact pairing a selector pair gets (and its method string). */
enum xp_exact_kind {
	XP_EXACT_CUPTI_KEY = 0, /* exact_cupti_correlation_id */
	XP_EXACT_SYSCALL,       /* exact_syscall_tid_lifecycle */
	XP_EXACT_PYTHON_GC,     /* exact_python_gc_tid_lifecycle */
	XP_EXACT_NVTX,          /* exact_nvtx_range_id */
};
enum xp_exact_kind xp_exact_kind(const struct xp_selector *start, const struct xp_selector *end);
/* The result's correlation.method and confidence for @p on this pair. */
const char *xp_correlation_method(enum xp_policy p, const struct xp_selector *start,
				  const struct xp_selector *end);
enum xp_confidence xp_policy_confidence(enum xp_policy p);

struct xp_correlate_opts {
	enum xp_policy policy;
	uint64_t samples;     /* stop after this many pairs; 0 = no bound */
	uint64_t duration_ns; /* correlation window from the first selected
				 event; 0 = no window */
	uint64_t max_events;  /* capture bound; must be > 0 */
};

struct xp_pair {
	uint32_t start; /* index into capture->events */
	uint32_t end;
	uint64_t latency_ns;
};

struct xp_latency_stats {
	uint64_t min, max, p50, p90, p95, p99;
	double mean;
};

struct xp_correlation {
	const char *method;            /* static string */
	enum xp_confidence confidence;
	double score;                  /* matched / (matched + unmatched + ambiguous) */
	uint64_t matched;
	uint64_t unmatched_start;
	uint64_t unmatched_end;
	uint64_t ambiguous;
	uint64_t dropped;              /* = capture->dropped (0 on success) */
	struct xp_pair *pairs;         /* sorted by start timestamp (owned) */
	size_t npairs;
	struct xp_latency_stats latency;
	enum xp_alignment alignment;
	bool has_estimated_error;      /* false = JSON null */
	uint64_t estimated_error_ns;
	uint64_t host_events;          /* events with source ebpf, whole capture */
	uint64_t cuda_events;          /* all other events */
	uint64_t without_context;      /* exact CUDA key fell back to (pid, correlation_id) */
	struct xp_warnings warnings;   /* HEURISTIC_CORRELATION, CLOCK_ERROR_UNAVAILABLE,
					* EXACT_KEY_WITHOUT_CONTEXT */
};

/*
 * Correlate @c.  On failure returns a negative code and fills @err with the
 * contract's message, details (start_selector, end_selector, match_policy
 * kebab-case, plus per-code counters) and hints; @out then holds no pairs
 * or warnings, only host_events/cuda_events when selection ran.  Either
 * way @out needs xp_correlation_free.  @start and @end are bound to @c
 * (xp_selector_bind) on entry.
 */
int xp_correlate(const struct xp_capture *c, struct xp_selector *start, struct xp_selector *end,
		 const struct xp_correlate_opts *opts, struct xp_correlation *out,
		 struct xp_error *err);
void xp_correlation_free(struct xp_correlation *r);

/* Nearest-rank statistics over @n latencies (sorted in place). */
void xp_latency_stats_compute(uint64_t *lat, size_t n, struct xp_latency_stats *out);

#endif /* XP_CORRELATE_H */
