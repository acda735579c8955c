/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_sample_verdict.c - what a `--cpu-sample` result says about itself:
 * Python coverage, completeness, and its warnings.  Derived here so the
 * renderer only prints, and so every rule has one home.
 *
 * The rule that matters most: Python coverage is only ever claimed from
 * perf-map "py::" frames.  A CPython process without a perf map gets
 * "no_perf_map" and a hint, however many native interpreter frames
 * (_PyEval_EvalFrameDefault ...) resolved -- those say the interpreter
 * was busy, not which Python function was.
 *
 * Bounds are never silent: each one hit adds a warning whose details carry
 * the bound and the count, and makes the result "partial".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "../../common/readfile.h"
#include "cpu_sample.h"

/* CPython 3.12 added the perf trampoline (-X perf, PYTHONPERFSUPPORT=1). */
static bool python_has_perf_support(const char *version)
{
	unsigned major = 0, minor = 0;
	const char *p = version;

	while (*p >= '0' && *p <= '9')
		major = major * 10 + (unsigned)(*p++ - '0');
	if (*p++ != '.')
		return false;
	while (*p >= '0' && *p <= '9')
		minor = minor * 10 + (unsigned)(*p++ - '0');
	return major > 3 || (major == 3 && minor >= 12);
}

const char *xp_inv_cpu_python_status(const struct xp_inv_symbolizer *s,
				     const struct xp_inv_cpu_profile *p, char *hint, size_t size)
{
	hint[0] = '\0';
	if (p->python_frames)
		return "python_frames_resolved";
	if (!s->cpython)
		return "not_python";
	if (s->perf_map_refused) {
		char why[160];

		xp_perf_map_refusal_text(&s->perf_map.file, &s->perf_map_owners, why,
					 sizeof(why));
		snprintf(hint, size,
			 "%s exists but was not used: %s; Python functions are not resolved; "
			 "%" PRIu64 " samples were in native interpreter code",
			 s->perf_map_path, why, p->interpreter_samples);
		return "perf_map_unreadable";
	}
	if (s->perf_map_error) {
		snprintf(hint, size,
			 "%s exists but could not be read (%s): Python functions are not resolved; "
			 "%" PRIu64 " samples were in native interpreter code",
			 s->perf_map_path, strerror(-s->perf_map_error), p->interpreter_samples);
		return "perf_map_unreadable";
	}
	if (!s->perf_map_present) {
		if (python_has_perf_support(s->python_version))
			snprintf(
				hint, size,
				"CPython %s wrote no %s: start it with -X perf or PYTHONPERFSUPPORT=1 "
				"(or call sys.activate_stack_trampoline(\"perf\")) to resolve Python "
				"functions; the %" PRIu64 " interpreter samples are native CPython "
				"frames, not Python coverage",
				s->python_version, s->perf_map_path, p->interpreter_samples);
		else
			snprintf(
				hint, size,
				"CPython %s cannot write a perf map (support arrived in 3.12 with -X "
				"perf), so no Python function is resolved; the %" PRIu64
				" interpreter samples are native CPython frames, not Python "
				"coverage; run the workload on CPython 3.12+ with -X perf for Python "
				"frames, or measure its native hotspots with the uprobe hints",
				s->python_version, p->interpreter_samples);
		return "no_perf_map";
	}
	snprintf(hint, size,
		 "%s has no py:: entry for any sampled address: Python functions are not "
		 "resolved (is the perf trampoline active in this process?)",
		 s->perf_map_path);
	return "perf_map_without_python_frames";
}

bool xp_inv_cpu_sample_complete(const struct xp_inv_cpu_sample_result *r)
{
	const struct xp_inv_cpu_sample_counts *c = &r->counts;

	return !c->lost_samples && !c->samples_beyond_limit && !r->stacks.ungrouped_samples &&
	       !c->threads_over_bound && !c->threads_open_failed && !c->threads_started &&
	       !c->malformed_records && r->stop_reason == XP_CPU_STOP_DURATION;
}

#define U(x) ((uint64_t)(x))

/*
 * The perf map is the target's own account of its JIT code; when one
 * exists and is not used, or is used only in part, the document says so
 * whatever python.status says (a JIT that is not CPython has no status to
 * carry it).  Details keys are sorted.
 */
static int perf_map_warnings(const struct xp_inv_symbolizer *s, struct xp_warnings *ws)
{
	const struct xp_inv_perf_map *m = &s->perf_map;
	char msg[512];
	int rc = 0;

	if (s->perf_map_refused) {
		rc = xp_perf_map_refused_warning(ws, s->perf_map_path, &m->file,
						 &s->perf_map_owners,
						 "its JIT and Python frames are unresolved");
		if (rc)
			return rc;
	}
	if (s->perf_map_error) {
		snprintf(msg, sizeof(msg),
			 "the target's perf map %s could not be read (%s); its JIT and Python "
			 "frames are unresolved",
			 s->perf_map_path, strerror(-s->perf_map_error));
		rc = xp_warnings_add_u64(ws, "PERF_MAP_UNREADABLE", msg, "errno",
					 U(-s->perf_map_error), NULL);
		if (rc)
			return rc;
	}
	if (s->perf_map_present && m->truncated) {
		snprintf(msg, sizeof(msg),
			 "the target's perf map %s was read only in part (it grew past %llu bytes "
			 "or held more than %u entries for sampled addresses); frames beyond that "
			 "are unresolved",
			 s->perf_map_path, (unsigned long long)XP_PERF_MAP_MAX_BYTES,
			 XP_PERF_MAP_MAX_ENTRIES);
		rc = xp_warnings_add_u64(ws, "PERF_MAP_TRUNCATED", msg, "entries_kept", U(m->n),
					 "entry_limit", U(XP_PERF_MAP_MAX_ENTRIES),
					 "size_limit_bytes", U(XP_PERF_MAP_MAX_BYTES), NULL);
	}
	return rc;
}

int xp_inv_cpu_sample_warnings(const struct xp_inv_cpu_sample_result *r,
			       const struct xp_inv_cpu_profile *p,
			       const struct xp_inv_symbolizer *s, const char *python_status,
			       const char *python_hint, struct xp_warnings *ws)
{
	const struct xp_inv_cpu_sample_counts *c = &r->counts;
	char msg[512];
	int rc;

	if (!c->observed_samples &&
	    (rc = xp_warnings_add_u64(
		     ws, "NO_SAMPLES",
		     "the target's sampled threads used no CPU in user space or the kernel "
		     "during the window",
		     "threads_sampled", U(c->threads_sampled), "window_ns", U(r->window_ns), NULL)))
		return rc;
	if (c->lost_samples) {
		snprintf(msg, sizeof(msg),
			 "the kernel lost %" PRIu64 " samples (a per-thread ring was full); "
			 "counts and proportions cover the samples that arrived",
			 c->lost_samples);
		if ((rc = xp_warnings_add_u64(ws, "CPU_SAMPLES_LOST", msg, "lost_samples",
					      U(c->lost_samples), "lost_records",
					      U(c->lost_records), NULL)))
			return rc;
	}
	if (r->stop_reason == XP_CPU_STOP_MAX_SAMPLES) {
		snprintf(msg, sizeof(msg),
			 "--max-samples %" PRIu64 " was reached after %" PRIu64
			 " ms; the window ended early",
			 r->max_samples, r->window_ns / 1000000);
		if ((rc = xp_warnings_add_u64(ws, "SAMPLE_LIMIT_REACHED", msg, "sample_capacity",
					      U(r->max_samples), "samples_beyond_limit",
					      U(c->samples_beyond_limit), "window_ns",
					      U(r->window_ns), NULL)))
			return rc;
	}
	if (r->stop_reason == XP_CPU_STOP_CANCELLED &&
	    (rc = xp_warnings_add_u64(
		     ws, "SAMPLING_CANCELLED",
		     "a signal ended the window early; the result covers the time until then",
		     "window_ns", U(r->window_ns), NULL)))
		return rc;
	if (r->stacks.ungrouped_samples) {
		snprintf(
			msg, sizeof(msg),
			"%" PRIu64 " samples had a new stack after the %zu-group table was full: "
			"they count in observed_samples but in no stack or hotspot, so proportions "
			"are lower bounds; raise --max-groups",
			r->stacks.ungrouped_samples, r->stacks.cap);
		if ((rc = xp_warnings_add_u64(ws, "STACK_GROUPS_FULL", msg, "group_capacity",
					      U(r->stacks.cap), "ungrouped_samples",
					      U(r->stacks.ungrouped_samples), NULL)))
			return rc;
	}
	if (c->threads_over_bound) {
		snprintf(msg, sizeof(msg),
			 "%" PRIu64 " of the target's %" PRIu64
			 " threads were beyond --max-threads and were not sampled",
			 c->threads_over_bound, c->threads_seen);
		if ((rc = xp_warnings_add_u64(ws, "THREADS_OVER_BOUND", msg, "thread_capacity",
					      U(r->max_threads), "threads_seen", U(c->threads_seen),
					      "threads_over_bound", U(c->threads_over_bound),
					      NULL)))
			return rc;
	}
	if (c->threads_open_failed || c->threads_started) {
		snprintf(msg, sizeof(msg),
			 "%" PRIu64
			 " threads could not be sampled (perf_event_open failed) and %" PRIu64
			 " threads started during the window without being sampled",
			 c->threads_open_failed, c->threads_started);
		if ((rc = xp_warnings_add_u64(ws, "THREADS_NOT_SAMPLED", msg, "threads_open_failed",
					      U(c->threads_open_failed), "threads_started",
					      U(c->threads_started), "open_errno", U(r->open_errno),
					      NULL)))
			return rc;
	}
	if (c->truncated_stacks) {
		snprintf(
			msg, sizeof(msg),
			"%" PRIu64 " samples had stacks deeper than --stack-depth; their outermost "
			"frames are missing, so inclusive counts of outer functions are lower bounds",
			c->truncated_stacks);
		if ((rc = xp_warnings_add_u64(ws, "STACKS_TRUNCATED", msg, "truncated_stacks",
					      U(c->truncated_stacks), "stack_depth",
					      U(r->stack_depth), NULL)))
			return rc;
	}
	if (!r->kernel_time_included &&
	    (rc = xp_warnings_add_u64(
		     ws, "KERNEL_TIME_EXCLUDED",
		     "perf events were allowed for user mode only: time the target spent in the "
		     "kernel is not sampled",
		     NULL)))
		return rc;
	if (c->malformed_records &&
	    (rc = xp_warnings_add_u64(ws, "MALFORMED_RECORDS",
				      "some perf ring records were malformed and skipped",
				      "malformed_records", U(c->malformed_records), NULL)))
		return rc;
	if ((strcmp(python_status, "no_perf_map") == 0 ||
	     strcmp(python_status, "perf_map_unreadable") == 0 ||
	     strcmp(python_status, "perf_map_without_python_frames") == 0) &&
	    (rc = xp_warnings_add_u64(ws, "PYTHON_FRAMES_UNRESOLVED", python_hint,
				      "interpreter_samples", U(p->interpreter_samples),
				      "python_frames", U(p->python_frames), NULL)))
		return rc;
	if ((rc = perf_map_warnings(s, ws)))
		return rc;
	if (p->hints_rejected) {
		snprintf(
			msg, sizeof(msg),
			"%" PRIu64
			" native functions have no selector hint because validate rejects "
			"their symbol (selector_hint_error says why, e.g. AMBIGUOUS_TARGET for a local "
			"symbol defined twice)",
			p->hints_rejected);
		if ((rc = xp_warnings_add_u64(ws, "SELECTOR_HINTS_REJECTED", msg,
					      "selector_hints_rejected", U(p->hints_rejected),
					      NULL)))
			return rc;
	}
	return 0;
}
