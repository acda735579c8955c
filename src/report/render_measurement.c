/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_measurement.c - the MeasurementResult document (schemas/
 * measurement-result.schema.json) and its human summary.
 *
 * The contract's schema is closed: the live eBPF ring's counters
 * (struct xp_host_collection) are not a JSON field; the human summary
 * prints them, and losses after a samples capture's stopping point are
 * the warning HOST_RECORDS_LOST_AFTER_STOP (src/cmd/measure.c).
 *
 * Under the human summary: the distribution of the matched latencies
 * (--hist log2 | linear | none, render_bars.h) and, when pairs of more
 * than one thread matched, one line per thread (count, p50, p99, max),
 * from src/correlate/latency_view.h.  Nothing of it is in the JSON.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/json.h"
#include "../correlate/latency_view.h"
#include "../model/event_json.h"
#include "render_bars.h"
#include "report.h"

static void render_collection(struct xpc_json *w, const struct xp_measurement_view *v)
{
	const struct xp_capture *c = v->capture;
	const struct xp_correlation *r = v->corr;

	xpc_json_kobj_begin(w, "collection");
	xpc_json_kstr(w, "completeness", "complete");
	xpc_json_ku64(w, "host_events", r->host_events);
	xpc_json_ku64(w, "cuda_events", r->cuda_events);
	xpc_json_ku64(w, "dropped_events", c->dropped);
	xpc_json_key(w, "cupti");
	if (c->cupti.present) {
		/* the contract's units: one record per event (an activity's start
		 * and end are two), retained = the capture's CUDA events, observed
		 * = retained + lost; capacity is --max-events, which bounds events */
		uint64_t retained = r->cuda_events;

		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "record_capacity", c->cupti.record_capacity);
		xpc_json_ku64(w, "observed_records", retained + c->cupti.dropped_records);
		xpc_json_ku64(w, "retained_records", retained);
		xpc_json_ku64(w, "dropped_records", c->cupti.dropped_records);
		xpc_json_kf64(w, "buffer_utilization",
			      c->cupti.record_capacity ?
				      (double)retained / (double)c->cupti.record_capacity :
				      0.0);
		xpc_json_obj_end(w);
	} else {
		xpc_json_null(w);
	}
	xpc_json_obj_end(w);
}

void xp_render_measurement_json(struct xpc_json *w, const struct xp_measurement_view *v)
{
	const struct xp_correlation *r = v->corr;
	const struct xp_capture *c = v->capture;
	size_t i;

	xp_render_result_begin(w, v->session_id, v->status);
	xpc_json_kobj_begin(w, "measurement");
	xpc_json_kstr(w, "name", v->name);
	xpc_json_kobj_begin(w, "samples");
	xpc_json_ku64(w, "matched", r->matched);
	xpc_json_ku64(w, "unmatched_start", r->unmatched_start);
	xpc_json_ku64(w, "unmatched_end", r->unmatched_end);
	xpc_json_ku64(w, "ambiguous", r->ambiguous);
	xpc_json_ku64(w, "dropped", r->dropped);
	xpc_json_obj_end(w);
	xpc_json_kobj_begin(w, "latency_ns");
	xpc_json_ku64(w, "min", r->latency.min);
	xpc_json_kf64(w, "mean", r->latency.mean);
	xpc_json_ku64(w, "p50", r->latency.p50);
	xpc_json_ku64(w, "p90", r->latency.p90);
	xpc_json_ku64(w, "p95", r->latency.p95);
	xpc_json_ku64(w, "p99", r->latency.p99);
	xpc_json_ku64(w, "max", r->latency.max);
	xpc_json_obj_end(w);
	xpc_json_obj_end(w);

	xpc_json_kobj_begin(w, "correlation");
	xpc_json_kstr(w, "method", r->method);
	xpc_json_kstr(w, "confidence", xp_confidence_name(r->confidence));
	xpc_json_kf64(w, "score", r->score);
	xpc_json_obj_end(w);

	xpc_json_kobj_begin(w, "clock");
	xpc_json_kstr(w, "alignment", xp_alignment_name(r->alignment));
	xpc_json_kopt_u64(w, "estimated_error_ns", r->has_estimated_error, r->estimated_error_ns);
	xpc_json_obj_end(w);

	render_collection(w, v);

	xpc_json_karr_begin(w, "evidence");
	for (i = 0; i < r->npairs; i++) {
		const struct xp_pair *p = &r->pairs[i];

		xpc_json_obj_begin(w);
		xpc_json_key(w, "start");
		xp_event_render(w, c, &c->events[p->start], v->session_id);
		xpc_json_key(w, "end");
		xp_event_render(w, c, &c->events[p->end], v->session_id);
		xpc_json_ku64(w, "latency_ns", p->latency_ns);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);

	xpc_json_karr_begin(w, "warnings");
	for (i = 0; i < r->warnings.n + (v->extra_warnings ? v->extra_warnings->n : 0); i++) {
		/* the correlator's first, then the collection's */
		const struct xp_warning *x = i < r->warnings.n ?
						     &r->warnings.v[i] :
						     &v->extra_warnings->v[i - r->warnings.n];

		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "code", x->code);
		xpc_json_kstr(w, "message", x->message);
		xpc_json_kraw(w, "details", x->details ? x->details : "{}");
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xpc_json_obj_end(w);
}

static void fmt_ns(char *buf, size_t n, double ns)
{
	if (ns >= 1e9)
		snprintf(buf, n, "%.3f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, n, "%.3f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, n, "%.3f us", ns / 1e3);
	else
		snprintf(buf, n, "%.0f ns", ns);
}

#define XP_HUMAN_THREADS 16

/* The distribution under the summary: bpftrace's hist() or lhist(). */
static void human_histogram(FILE *out, const struct xp_measurement_view *v)
{
	const struct xp_correlation *r = v->corr;

	if (v->hist == XP_HIST_NONE || !r->npairs)
		return;
	if (v->hist == XP_HIST_LINEAR) {
		struct xp_linear_hist h;
		char step[32];

		xp_latency_linear(r->pairs, r->npairs, &h);
		xp_render_linear_step(step, sizeof(step), &h);
		fprintf(out, "\nhistogram of %zu pairs (linear buckets of %s):\n", r->npairs, step);
		xp_render_linear_bars(out, &h, v->color);
	} else {
		uint64_t bins[XP_POW2_BINS];

		xp_latency_pow2(r->pairs, r->npairs, bins);
		fprintf(out, "\nhistogram of %zu pairs (power-of-two buckets):\n", r->npairs);
		xp_render_pow2_bars(out, bins, v->color);
	}
}

/* @n and the noun's singular or plural. */
static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/*
 * Syscall pairs whose exit returned an error (-4095..-1): "N of M pairs
 * ended in an error return", with the commonest errnos by name.
 */
static void human_error_returns(FILE *out, const struct xp_measurement_view *v)
{
	const struct xp_correlation *r = v->corr;
	struct {
		int64_t ret;
		uint64_t n;
	} top[4] = { 0 };
	uint64_t errors = 0, syscall_pairs = 0;
	size_t i, k;

	for (i = 0; i < r->npairs; i++) {
		const struct xp_event *e = &v->capture->events[r->pairs[i].end];

		if (e->event_type != XP_EV_SYSCALL_EXIT || !(e->flags & XP_EVF_HOST) ||
		    !(e->host.flags & XP_HOSTF_RETURN_VALUE))
			continue;
		syscall_pairs++;
		if (e->host.return_value >= 0 || e->host.return_value < -4095)
			continue;
		errors++;
		for (k = 0; k < 4 && top[k].n && top[k].ret != e->host.return_value; k++)
			;
		if (k < 4) {
			top[k].ret = e->host.return_value;
			top[k].n++;
		}
	}
	if (!errors)
		return;
	fprintf(out, "errors: %" PRIu64 " of %" PRIu64 " %s ended in an error return (", errors,
		syscall_pairs, plural(syscall_pairs, "pair", "pairs"));
	for (k = 0; k < 4 && top[k].n; k++) {
		const char *name = strerrorname_np((int)-top[k].ret);

		fprintf(out, "%s%s %" PRIu64, k ? ", " : "", name ? name : "errno", top[k].n);
	}
	fprintf(out, ")\n");
}

/* count, p50, p99, max of each thread, when more than one matched. */
static void human_threads(FILE *out, const struct xp_measurement_view *v)
{
	const struct xp_correlation *r = v->corr;
	struct xp_thread_latency *t;
	size_t i, n;

	if (r->npairs < 2)
		return;
	if (xp_latency_threads(v->capture, r->pairs, r->npairs, &t, &n)) {
		fprintf(out, "\nper thread: not shown (out of memory)\n");
		return;
	}
	if (n > 1) {
		fprintf(out, "\nper thread (the start event's tid), %zu %s:\n", n,
			plural(n, "thread", "threads"));
		for (i = 0; i < n && i < XP_HUMAN_THREADS; i++) {
			char a[32], b[32], c[32];

			fmt_ns(a, sizeof(a), (double)t[i].st.p50);
			fmt_ns(b, sizeof(b), (double)t[i].st.p99);
			fmt_ns(c, sizeof(c), (double)t[i].st.max);
			fprintf(out, "  tid %-7u %7" PRIu64 " %-5s  p50 %s  p99 %s  max %s\n",
				t[i].tid, t[i].count, plural(t[i].count, "pair", "pairs"), a, b, c);
		}
		if (n > XP_HUMAN_THREADS)
			fprintf(out,
				"  ... %zu more %s (every pair is in --json's evidence)\n",
				n - XP_HUMAN_THREADS, plural(n - XP_HUMAN_THREADS, "thread", "threads"));
	}
	free(t);
}

void xp_render_measurement_human(FILE *out, const struct xp_measurement_view *v)
{
	const struct xp_correlation *r = v->corr;
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32];

	fprintf(out, "%s%s -> %s%s (%s, %s)\n", v->color ? XP_SGR_BOLD : "", v->start_selector,
		v->end_selector, v->color ? XP_SGR_RESET : "", r->method,
		xp_confidence_name(r->confidence));
	fprintf(out, "status: %s; %" PRIu64 " %s matched, %" PRIu64 " unmatched %s, %" PRIu64
		     " unmatched %s, %" PRIu64 " ambiguous; score %.3f\n",
		v->status, r->matched, plural(r->matched, "pair", "pairs"), r->unmatched_start,
		plural(r->unmatched_start, "start", "starts"), r->unmatched_end,
		plural(r->unmatched_end, "end", "ends"), r->ambiguous, r->score);
	if (v->signo)
		fprintf(out,
			"cancelled: signal %d (%s) stopped the live capture early; these are the "
			"pairs captured until then\n",
			v->signo, strsignal(v->signo));
	fmt_ns(a, sizeof(a), (double)r->latency.min);
	fmt_ns(b, sizeof(b), (double)r->latency.p50);
	fmt_ns(c, sizeof(c), (double)r->latency.p99);
	fmt_ns(d, sizeof(d), (double)r->latency.max);
	fmt_ns(e, sizeof(e), r->latency.mean);
	fmt_ns(f, sizeof(f), (double)r->latency.p90);
	fmt_ns(g, sizeof(g), (double)r->latency.p95);
	fprintf(out, "latency: min %s  p50 %s  p90 %s  p95 %s  p99 %s  max %s  (mean %s)\n", a, b,
		f, g, c, d, e);
	fprintf(out, "clock: %s; events: %" PRIu64 " host, %" PRIu64 " CUDA\n",
		xp_alignment_name(r->alignment), r->host_events, r->cuda_events);
	if (v->host)
		fprintf(out,
			"host ring: %" PRIu64 " of %" PRIu64 " records kept (%.1f%%), %" PRIu64
			" observed, %" PRIu64 " lost\n",
			v->host->retained_records, v->host->record_capacity,
			100.0 * v->host->buffer_utilization, v->host->observed_records,
			v->host->dropped_records);
	human_error_returns(out, v);
	xp_render_warnings_human(out, &r->warnings);
	xp_render_warnings_human(out, v->extra_warnings);
	human_histogram(out, v);
	human_threads(out, v);
	if (v->artifact_path || v->report_path)
		fputc('\n', out);
	if (v->artifact_path)
		fprintf(out, "events written: %s (%s, %zu %s)\n", v->artifact_path,
			v->artifact_format ? v->artifact_format : "jsonl", v->capture->count,
			plural(v->capture->count, "event", "events"));
	if (v->report_path)
		fprintf(out, "report written: %s\n", v->report_path);
}

/* The document type the commands emit (output.h). */
XP_DOC_TYPE(xp_doc_measurement, "measurement-result", struct xp_measurement_view,
	    xp_render_measurement_json, xp_render_measurement_human);
