/* SPDX-License-Identifier: Apache-2.0 */
/*
 * correlate.c - the correlation pipeline (docs/contract.md, "Correlation"):
 * limits, capture bound, drops, policy compatibility, selection, clock
 * check, duration window, pairing (pairing.c), sample truncation, and the
 * statistics and quality a MeasurementResult reports.
 *
 * Error order is part of the contract; the numbered steps below are the
 * numbers of correlate.h and docs/correlation.md.  Every error is
 * recoverable and carries details start_selector, end_selector and
 * match_policy (kebab-case) plus the counters of its code.
 *
 * Speed.  A capture holds up to millions of ~230-byte events, so selection
 * is one sequential pass that first compares event_type (rejecting almost
 * every event with one compare) and only then asks the selector, whose
 * strings are bound to the capture's ids (match.c).  Selected events become
 * ranks with their timestamps copied into dense arrays, so pairing reads
 * 8-byte timestamps, not events.  Pairs are ordered by start rank with one
 * O(n) placement (every start pairs at most once), and latencies are
 * radix-sorted for the percentiles.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/search.h"
#include "../../common/cancel.h"
#include "correlate.h"
#include "pairing.h"

#define NONE UINT32_MAX

#define MSG_HEURISTIC "temporal matching does not prove request-level causality"
#define MSG_CLOCK_ERROR \
	"CUPTI does not report an error bound for GPU-to-host timestamp interpolation"
#define HINT_LIMITS "set positive samples or duration, timeout, and max-events bounds"
#define HINT_RATE "narrow the selectors or explicitly increase max-events"
#define HINT_DROPS "reduce the event rate or explicitly increase the capture capacity"
#define HINT_POLICY "use policy_recommendation.compatible_policies from xprobe validate"
#define HINT_CLOCK \
	"use endpoints in one clock domain or a CUPTI capture normalized to host monotonic time"
#define HINT_NO_MATCH \
	"inspect the events-out artifact, then adjust selectors or choose an explicitly compatible policy"

struct ctx {
	const struct xp_capture *c;
	struct xp_selector *start, *end;
	const struct xp_correlate_opts *opts;
	struct xp_error *err;
};

static int fail(const struct ctx *x, int code, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Record a correlator error with the details every one of them carries. */
static int fail(const struct ctx *x, int code, const char *hint, const char *fmt, ...)
{
	char msg[XP_ERR_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	xp_error_detail_str(x->err, "start_selector", x->start->text);
	xp_error_detail_str(x->err, "end_selector", x->end->text);
	xp_error_detail_str(x->err, "match_policy", xp_policy_kebab(x->opts->policy));
	if (hint)
		xp_error_hint(x->err, "%s", hint);
	return xp_error_set(x->err, code, true, "%s", msg);
}

static int fail_oom(const struct ctx *x)
{
	xp_error_set(x->err, XPROBE_E_INTERNAL, false, "out of memory while correlating %zu events",
		     x->c->count);
	return -ENOMEM;
}

/* --- statistics ----------------------------------------------------------- */

/* LSD radix sort, 16-bit digits, skipping digits every value shares. */
static bool radix_sort_u64(uint64_t *v, size_t n)
{
	uint64_t *tmp, *src = v, *dst, all_or = 0, all_and = ~0ull;
	size_t *count, i;
	unsigned shift;

	if (n < 2)
		return true;
	tmp = malloc(n * sizeof(*tmp));
	count = malloc(65536 * sizeof(*count));
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return false;
	}
	dst = tmp;
	for (i = 0; i < n; i++) {
		all_or |= v[i];
		all_and &= v[i];
	}
	for (shift = 0; shift < 64; shift += 16) {
		size_t sum = 0;

		if ((((all_or ^ all_and) >> shift) & 0xffff) == 0)
			continue; /* same digit everywhere: order unchanged */
		memset(count, 0, 65536 * sizeof(*count));
		for (i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xffff]++;
		for (i = 0; i < 65536; i++) {
			size_t c = count[i];

			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xffff]++] = src[i];
		{
			uint64_t *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	free(count);
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: sorted[max(ceil(P * n / 100), 1) - 1]. */
static uint64_t nearest_rank(const uint64_t *sorted, size_t n, unsigned pct)
{
	uint64_t rank = ((uint64_t)pct * n + 99) / 100;

	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

void xp_latency_stats_compute(uint64_t *lat, size_t n, struct xp_latency_stats *out)
{
	unsigned __int128 sum = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	if (!radix_sort_u64(lat, n))
		qsort(lat, n, sizeof(*lat), cmp_u64);
	for (i = 0; i < n; i++)
		sum += lat[i];
	out->min = lat[0];
	out->max = lat[n - 1];
	out->p50 = nearest_rank(lat, n, 50);
	out->p90 = nearest_rank(lat, n, 90);
	out->p95 = nearest_rank(lat, n, 95);
	out->p99 = nearest_rank(lat, n, 99);
	out->mean = (double)sum / (double)n;
}

/* --- selection ------------------------------------------------------------ */

struct selected {
	uint32_t *idx; /* event indices by (timestamp, index) */
	uint64_t *ts;
	size_t n;
};

struct ts_idx {
	uint64_t ts;
	uint32_t idx;
};

static int cmp_ts_idx(const void *a, const void *b)
{
	const struct ts_idx *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Fill sel->ts from the capture; sort by (timestamp, index) if needed. */
static int finish_side(const struct xp_capture *c, struct selected *sel)
{
	bool sorted = true;
	size_t i;

	sel->ts = malloc((sel->n ? sel->n : 1) * sizeof(*sel->ts));
	if (!sel->ts)
		return -ENOMEM;
	for (i = 0; i < sel->n; i++) {
		sel->ts[i] = c->events[sel->idx[i]].timestamp_ns;
		if (i && sel->ts[i] < sel->ts[i - 1])
			sorted = false;
	}
	if (!sorted) {
		struct ts_idx *t = malloc(sel->n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (i = 0; i < sel->n; i++) {
			t[i].ts = sel->ts[i];
			t[i].idx = sel->idx[i];
		}
		qsort(t, sel->n, sizeof(*t), cmp_ts_idx);
		for (i = 0; i < sel->n; i++) {
			sel->ts[i] = t[i].ts;
			sel->idx[i] = t[i].idx;
		}
		free(t);
	}
	return 0;
}

/* One pass: the events each selector selects, and host/CUDA totals. */
static int select_events(const struct ctx *x, struct xp_correlation *out, struct selected *s,
			 struct selected *e)
{
	const struct xp_capture *c = x->c;
	struct xp_selector *ss = x->start, *es = x->end;
	uint8_t st = ss->event_type, et = es->event_type;
	uint64_t host = 0;
	size_t i, n = c->count;

	s->idx = malloc((n ? n : 1) * sizeof(*s->idx));
	e->idx = malloc((n ? n : 1) * sizeof(*e->idx));
	if (!s->idx || !e->idx)
		return -ENOMEM;
	if (xp_selector_bind(ss, c) || xp_selector_bind(es, c))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct xp_event *ev = &c->events[i];

		host += ev->source == XP_SRC_EBPF;
		if (ev->event_type == st && xp_selector_matches(ss, c, ev))
			s->idx[s->n++] = (uint32_t)i;
		if (ev->event_type == et && xp_selector_matches(es, c, ev))
			e->idx[e->n++] = (uint32_t)i;
	}
	out->host_events = host;
	out->cuda_events = n - host;
	if (finish_side(c, s) || finish_side(c, e))
		return -ENOMEM;
	return 0;
}

/* --- clock check ------------------------------------------------------------ */

static bool cupti_group(uint8_t domain)
{
	return domain == XP_CLOCK_CUPTI;
}

/*
 * Step 6: every selected event must be in one clock group, {host_monotonic,
 * cupti_normalized_to_host_monotonic} or {cupti}.  Also decides the result's
 * alignment and whether CLOCK_ERROR_UNAVAILABLE applies (a selected
 * normalized event without an error bound), both over all selected events.
 */
static int check_clocks(const struct ctx *x, const struct selected *s, const struct selected *e,
			struct xp_correlation *out, bool *clock_error_unknown)
{
	const struct xp_capture *c = x->c;
	const struct selected *sides[2] = { s, e };
	bool have_first = false, normalized = false;
	uint8_t first = 0;
	size_t k, i;

	*clock_error_unknown = false;
	for (k = 0; k < 2; k++) {
		for (i = 0; i < sides[k]->n; i++) {
			const struct xp_event *ev = &c->events[sides[k]->idx[i]];

			if (!have_first) {
				have_first = true;
				first = ev->clock_domain;
			} else if (cupti_group(ev->clock_domain) != cupti_group(first)) {
				const char *a = xp_clock_domain_name(first);
				const char *b = xp_clock_domain_name(ev->clock_domain);

				xp_error_detail_str(x->err, "start_clock", a);
				xp_error_detail_str(x->err, "end_clock", b);
				return fail(x, XPROBE_E_CLOCK_ALIGNMENT_FAILED, HINT_CLOCK,
					    "cannot subtract unaligned %s and %s timestamps", a, b);
			}
			if (ev->clock_domain == XP_CLOCK_CUPTI_NORMALIZED) {
				normalized = true;
				if (!(ev->flags & XP_EVF_TS_ERROR))
					*clock_error_unknown = true;
			}
		}
	}
	if (have_first && cupti_group(first))
		out->alignment = XP_ALIGN_CUPTI_SAME_DOMAIN;
	else if (normalized)
		out->alignment = XP_ALIGN_CUPTI_NORMALIZED;
	else
		out->alignment = XP_ALIGN_HOST_MONOTONIC;
	return 0;
}

/* --- pipeline ---------------------------------------------------------------- */

static void no_match_details(const struct ctx *x, const struct xp_correlation *out, size_t nstarts,
			     size_t nends)
{
	xp_error_detail_u64(x->err, "captured_events", x->c->count);
	xp_error_detail_u64(x->err, "host_events", out->host_events);
	xp_error_detail_u64(x->err, "cuda_events", out->cuda_events);
	xp_error_detail_u64(x->err, "selected_start_events", nstarts);
	xp_error_detail_u64(x->err, "selected_end_events", nends);
}

static int check_policy(const struct ctx *x)
{
	unsigned mask = xp_policy_compatible(x->start, x->end);
	enum xp_policy list[XP_POLICY__COUNT];
	const char *names[XP_POLICY__COUNT];
	struct xpc_buf b = XPC_BUF_INIT;
	size_t n, i;
	int rc;

	if (mask & (1u << x->opts->policy))
		return 0;
	n = xp_policy_list(mask, list);
	/* details.compatible_policies uses the JSON (snake_case) spelling,
	 * recommended_policy and the message the CLI (kebab-case) one, as the
	 * reference does (docs/contract.md, "Validation issues"). */
	for (i = 0; i < n; i++) {
		names[i] = xp_policy_snake(list[i]);
		xpc_buf_printf(&b, "%s%s", i ? ", " : "", xp_policy_kebab(list[i]));
	}
	xp_error_detail_strv(x->err, "compatible_policies", names, n);
	xp_error_detail_str(x->err, "recommended_policy",
			    xp_policy_kebab(xp_policy_recommend(mask)));
	rc = fail(x, XPROBE_E_INVALID_CORRELATION_POLICY, HINT_POLICY,
		  "invalid correlation policy: %s; compatible policies for these selectors: %s",
		  xp_policy_requirement(x->opts->policy), xpc_buf_str(&b));
	xpc_buf_free(&b);
	return rc;
}

/* Step 7: keep the prefix of a sorted side at or before @limit. */
struct limit_key {
	const struct selected *sd;
	uint64_t limit;
};

static bool ts_within(const void *ctx, size_t i)
{
	const struct limit_key *k = ctx;

	return k->sd->ts[i] <= k->limit;
}

static size_t window_prefix(const struct selected *sd, uint64_t limit)
{
	struct limit_key k = { sd, limit };

	return xpc_partition_point(sd->n, ts_within, &k);
}

static int run_policy(const struct ctx *x, struct xp_pairing *p)
{
	switch (x->opts->policy) {
	case XP_POLICY_EXACT:
		switch (xp_exact_kind(x->start, x->end)) {
		case XP_EXACT_SYSCALL:
		case XP_EXACT_PYTHON_GC:
			return xp_pair_lifecycle(p, XP_LIFE_TID);
		case XP_EXACT_NVTX:
			return xp_pair_lifecycle(p, XP_LIFE_NVTX);
		case XP_EXACT_CUPTI_KEY:
			return xp_pair_exact_key(p);
		}
		break;
	case XP_POLICY_FIRST_AFTER:
		return xp_pair_first_after(p);
	case XP_POLICY_NEAREST:
		return xp_pair_nearest(p);
	case XP_POLICY_STACK_NESTED:
		return xp_pair_stack_nested(p);
	case XP_POLICY_STREAM_ORDER:
		return xp_pair_stream_order(p);
	case XP_POLICY__COUNT:
		break;
	}
	return -EINVAL;
}

/*
 * Order pairs by start rank (= start timestamp, then capture index; each
 * start pairs at most once), truncate to the sample bound, and turn ranks
 * into event indices.
 */
static int order_pairs(const struct ctx *x, const struct xp_pairing *p, const struct selected *s,
		       const struct selected *e, struct xp_correlation *out)
{
	uint32_t *slot = malloc((s->n ? s->n : 1) * sizeof(*slot));
	uint64_t keep = p->npairs;
	size_t i, k = 0;

	if (!slot)
		return -ENOMEM;
	if (x->opts->samples && keep > x->opts->samples)
		keep = x->opts->samples;
	out->pairs = malloc((keep ? keep : 1) * sizeof(*out->pairs));
	if (!out->pairs) {
		free(slot);
		return -ENOMEM;
	}
	memset(slot, 0xff, (s->n ? s->n : 1) * sizeof(*slot));
	for (i = 0; i < p->npairs; i++)
		slot[p->pairs[i].s] = (uint32_t)i;
	for (i = 0; i < s->n && k < keep; i++) {
		const struct xp_rpair *rp;

		if (slot[i] == NONE)
			continue;
		rp = &p->pairs[slot[i]];
		out->pairs[k].start = s->idx[rp->s];
		out->pairs[k].end = e->idx[rp->e];
		out->pairs[k].latency_ns = rp->latency;
		k++;
	}
	out->npairs = k;
	free(slot);
	return 0;
}

/* Quality and statistics of the kept pairs. */
static int finish_result(const struct ctx *x, struct xp_correlation *out, bool clock_error_unknown)
{
	const struct xp_capture *c = x->c;
	uint64_t *lat, total, err_max = 0;
	bool err_known = true;
	size_t i;

	lat = malloc(out->npairs * sizeof(*lat));
	if (!lat)
		return -ENOMEM;
	for (i = 0; i < out->npairs; i++) {
		const struct xp_event *ev[2] = { &c->events[out->pairs[i].start],
						 &c->events[out->pairs[i].end] };
		unsigned k;

		lat[i] = out->pairs[i].latency_ns;
		for (k = 0; k < 2; k++) {
			bool has = ev[k]->flags & XP_EVF_TS_ERROR;

			if (ev[k]->clock_domain == XP_CLOCK_CUPTI_NORMALIZED && !has)
				err_known = false;
			else if (has && ev[k]->timestamp_error_ns > err_max)
				err_max = ev[k]->timestamp_error_ns;
		}
	}
	xp_latency_stats_compute(lat, out->npairs, &out->latency);
	free(lat);

	out->matched = out->npairs;
	total = out->matched + out->unmatched_start + out->unmatched_end + out->ambiguous;
	out->score = total ? (double)out->matched / (double)total : 0.0;
	out->has_estimated_error = err_known;
	out->estimated_error_ns = err_known ? err_max : 0;
	out->method = xp_correlation_method(x->opts->policy, x->start, x->end);
	out->confidence = xp_policy_confidence(x->opts->policy);
	out->dropped = c->dropped;
	if ((x->opts->policy == XP_POLICY_FIRST_AFTER || x->opts->policy == XP_POLICY_NEAREST) &&
	    xp_warnings_add(&out->warnings, "HEURISTIC_CORRELATION", MSG_HEURISTIC, NULL))
		return -ENOMEM;
	if (clock_error_unknown &&
	    xp_warnings_add(&out->warnings, "CLOCK_ERROR_UNAVAILABLE", MSG_CLOCK_ERROR, NULL))
		return -ENOMEM;
	if (out->without_context) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "%llu CUDA events carry no context id: exact pairs were keyed by "
			 "(pid, correlation_id), not (pid, context_id, correlation_id)",
			 (unsigned long long)out->without_context);
		if (xp_warnings_add_u64(&out->warnings, "EXACT_KEY_WITHOUT_CONTEXT", msg,
					"events_without_context", out->without_context,
					(const char *)NULL))
			return -ENOMEM;
	}
	return 0;
}

int xp_correlate(const struct xp_capture *c, struct xp_selector *start, struct xp_selector *end,
		 const struct xp_correlate_opts *opts, struct xp_correlation *out,
		 struct xp_error *err)
{
	struct ctx x = { c, start, end, opts, err };
	struct selected s = { 0 }, e = { 0 };
	struct xp_pairing p;
	bool clock_error_unknown;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	if ((unsigned)opts->policy >= XP_POLICY__COUNT)
		return xp_error_set(err, XPROBE_E_INVALID_CORRELATION_POLICY, true,
				    "invalid correlation policy %d", (int)opts->policy);

	/* 1. limits */
	if (!opts->samples && !opts->duration_ns)
		return fail(
			&x, XPROBE_E_SESSION_LIMIT_EXCEEDED, HINT_LIMITS,
			"invalid measurement limit: a positive samples or duration bound is required");
	if (!opts->max_events)
		return fail(&x, XPROBE_E_SESSION_LIMIT_EXCEEDED, HINT_LIMITS,
			    "invalid measurement limit: max_events must be positive");
	/* 2. capture bound (strictly greater) */
	if (c->count > opts->max_events) {
		xp_error_detail_u64(err, "observed_events", c->count);
		xp_error_detail_u64(err, "max_events", opts->max_events);
		return fail(&x, XPROBE_E_EVENT_RATE_TOO_HIGH, HINT_RATE,
			    "capture contains %zu events, exceeding the maximum of %llu", c->count,
			    (unsigned long long)opts->max_events);
	}
	if (c->count > UINT32_MAX - 1)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "capture of %zu events is too large to correlate", c->count);
	/* 3. drops */
	if (c->dropped) {
		xp_error_detail_u64(err, "dropped_events", c->dropped);
		return fail(&x, XPROBE_E_EVENTS_DROPPED, HINT_DROPS,
			    "capture dropped %llu events before correlation",
			    (unsigned long long)c->dropped);
	}
	/* 4. policy compatibility (selectors were parsed by the caller) */
	rc = check_policy(&x);
	if (rc)
		return rc;
	/* 5. selection (a stop request is honoured between the steps that
	 * walk the whole capture: common/cancel.h) */
	if (xpc_cancel_signo())
		return xp_error_cancelled(err, "correlation");
	rc = select_events(&x, out, &s, &e);
	if (rc) {
		rc = fail_oom(&x);
		goto out;
	}
	/* 6. clocks; nothing selected at all */
	rc = check_clocks(&x, &s, &e, out, &clock_error_unknown);
	if (rc)
		goto out;
	if (!s.n && !e.n) {
		no_match_details(&x, out, 0, 0);
		rc = fail(&x, XPROBE_E_NO_MATCHED_SAMPLES, HINT_NO_MATCH,
			  "no captured events matched the start or end selector");
		goto out;
	}
	/* 7. duration window from the first selected event */
	if (opts->duration_ns) {
		uint64_t t0 = UINT64_MAX, limit;

		if (s.n)
			t0 = s.ts[0];
		if (e.n && e.ts[0] < t0)
			t0 = e.ts[0];
		limit = t0 > UINT64_MAX - opts->duration_ns ? UINT64_MAX : t0 + opts->duration_ns;
		s.n = window_prefix(&s, limit);
		e.n = window_prefix(&e, limit);
	}
	/* 8. pair */
	if (xpc_cancel_signo()) {
		rc = xp_error_cancelled(err, "correlation");
		goto out;
	}
	p.c = c;
	p.s = (struct xp_side){ s.idx, s.ts, s.n };
	p.e = (struct xp_side){ e.idx, e.ts, e.n };
	p.samples = opts->samples;
	p.activity_key = xp_selector_is_activity(start) && xp_selector_is_activity(end);
	p.pairs = malloc(((s.n < e.n ? s.n : e.n) + 1) * sizeof(*p.pairs));
	if (!p.pairs || run_policy(&x, &p)) {
		rc = fail_oom(&x);
		goto out;
	}
	out->unmatched_start = p.unmatched_start;
	out->unmatched_end = p.unmatched_end;
	out->ambiguous = p.ambiguous;
	out->without_context = p.without_context;
	/* 9. order by start and truncate to samples */
	if (xpc_cancel_signo()) {
		rc = xp_error_cancelled(err, "correlation");
		goto out;
	}
	if (order_pairs(&x, &p, &s, &e, out)) {
		rc = fail_oom(&x);
		goto out;
	}
	/* 10. no pair */
	if (!out->npairs) {
		no_match_details(&x, out, s.n, e.n);
		xp_error_detail_u64(err, "unmatched_start", out->unmatched_start);
		xp_error_detail_u64(err, "unmatched_end", out->unmatched_end);
		xp_error_detail_u64(err, "ambiguous", out->ambiguous);
		rc = fail(&x, XPROBE_E_NO_MATCHED_SAMPLES, HINT_NO_MATCH,
			  "no event pairs matched the selectors");
		goto out;
	}
	if (finish_result(&x, out, clock_error_unknown)) {
		rc = fail_oom(&x);
		goto out;
	}
	rc = 0;
out:
	free(s.idx);
	free(s.ts);
	free(e.idx);
	free(e.ts);
	free(p.pairs);
	if (rc) {
		uint64_t host = out->host_events, cuda = out->cuda_events;

		xp_correlation_free(out);
		out->host_events = host; /* the live loop reports these */
		out->cuda_events = cuda;
	}
	return rc;
}

void xp_correlation_free(struct xp_correlation *r)
{
	if (!r)
		return;
	free(r->pairs);
	xp_warnings_free(&r->warnings);
	memset(r, 0, sizeof(*r));
}
