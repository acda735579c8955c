/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_correlate_count.c - the incremental pair counter (src/correlate/
 * pair_count.c) against the correlator: random event streams for every
 * policy and key kind, fed in random chunks and partly out of order
 * (ties, late records), the count after each chunk equal to
 * xp_correlate's `matched` over the capture so far; the shortest prefix
 * that holds N pairs equal to the one a scan of correlations finds; and
 * what the counter declines (mixed clocks, a policy the selectors forbid).
 */
#include <errno.h>
#include <stdlib.h>

#include "correlate/pair_count.h"
#include "selector/selector.h"
#include "testlib.h"
#include "test_selector_events.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

enum gen {
	GEN_UPROBE,   /* entry/return of one function, three threads */
	GEN_SYSCALL,  /* read entry/exit, three threads */
	GEN_GC,       /* CPython GC start/done */
	GEN_NVTX,     /* NVTX ranges: ids, kinds, one name */
	GEN_API,      /* cudaLaunchKernel exit -> kernel start, some without context */
	GEN_KERNEL,   /* kernel start -> end: correlation ids, streams */
};

struct scenario {
	const char *name;
	const char *from, *to;
	enum xp_policy policy;
	enum gen gen;
};

static const struct scenario scenarios[] = {
	{ "stack", "uprobe:/bin/app:work:entry", "uprobe:/bin/app:work:return",
	  XP_POLICY_STACK_NESTED, GEN_UPROBE },
	{ "first-after", "uprobe:/bin/app:work:entry", "uprobe:/bin/app:work:return",
	  XP_POLICY_FIRST_AFTER, GEN_UPROBE },
	{ "first-after-same", "uprobe:/bin/app:work:entry", "uprobe:/bin/app:work:entry",
	  XP_POLICY_FIRST_AFTER, GEN_UPROBE },
	{ "nearest", "uprobe:/bin/app:work:entry", "uprobe:/bin/app:work:return",
	  XP_POLICY_NEAREST, GEN_UPROBE },
	{ "exact-syscall", "syscall:read:entry", "syscall:read:exit", XP_POLICY_EXACT,
	  GEN_SYSCALL },
	{ "exact-gc", "python:gc_start", "python:gc_end", XP_POLICY_EXACT, GEN_GC },
	{ "exact-nvtx", "cuda:nvtx_range_start:name~^fwd$", "cuda:nvtx_range_end:name~^fwd$",
	  XP_POLICY_EXACT, GEN_NVTX },
	{ "exact-key", "cuda:runtime_api:cudaLaunchKernel:exit", "cuda:kernel_start",
	  XP_POLICY_EXACT, GEN_API },
	{ "exact-activity", "cuda:kernel_start", "cuda:kernel_end", XP_POLICY_EXACT, GEN_KERNEL },
	{ "stream-order", "cuda:kernel_start", "cuda:kernel_end", XP_POLICY_STREAM_ORDER,
	  GEN_KERNEL },
	{ "first-after-kernel", "cuda:kernel_start", "cuda:kernel_end", XP_POLICY_FIRST_AFTER,
	  GEN_KERNEL },
};

/* One random event of @g at @ts. */
static void gen_event(struct xp_capture *c, enum gen g, uint64_t ts, bool with_no_context)
{
	uint32_t tid = 1 + rnd(3);
	int side = (int)rnd(2);
	struct xp_event *e;

	switch (g) {
	case GEN_UPROBE:
		tev_uprobe(c, ts, tid, "/bin/app", rnd(8) ? "work" : "other", side);
		break;
	case GEN_SYSCALL:
		tev_syscall(c, ts, tid, rnd(8) ? "read" : "write", side);
		break;
	case GEN_GC:
		tev_gc(c, ts, tid, side);
		break;
	case GEN_NVTX:
		tev_nvtx(c, ts, tid, rnd(6) ? "fwd" : "bwd", side,
			 rnd(2) ? XP_NVTX_PROCESS : XP_NVTX_THREAD, rnd(5));
		break;
	case GEN_API:
		if (side) {
			tev_kernel(c, ts, 0, "k", 1 + rnd(2), rnd(6), rnd(2), XP_CLOCK_CUPTI_NORMALIZED);
		} else {
			e = tev_api(c, ts, tid, "runtime_api", "cudaLaunchKernel", 1, 1 + rnd(2),
				    rnd(6));
			if (with_no_context && !rnd(10))
				e->cuda.flags &= (uint16_t)~XP_CUDAF_CONTEXT_ID;
		}
		break;
	case GEN_KERNEL:
		tev_kernel(c, ts, side, "k", 1, rnd(6), rnd(3), XP_CLOCK_CUPTI_NORMALIZED);
		break;
	}
}

static int parse(const char *text, struct xp_selector *s)
{
	struct xp_error err = { 0 };
	int rc = xp_selector_parse(text, s, &err);

	if (rc)
		fprintf(stderr, "selector %s: %s\n", text, err.message);
	xp_error_clear(&err);
	return rc;
}

/* The correlator's matched (0 when it finds none), or -1 on another error. */
static int64_t correlate_matched(const struct xp_capture *c, struct xp_selector *f,
				 struct xp_selector *t, const struct xp_correlate_opts *o)
{
	struct xp_correlation r;
	struct xp_error err = { 0 };
	int rc = xp_correlate(c, f, t, o, &r, &err);
	int64_t m = rc ? (rc == -XPROBE_E_NO_MATCHED_SAMPLES ? 0 : -1) : (int64_t)r.matched;

	xp_correlation_free(&r);
	xp_error_clear(&err);
	return m;
}

static int compared, replays_refused;

/* One random stream of @sc fed in chunks; checks the count after each. */
static void run_stream(const struct scenario *sc, uint64_t samples, uint64_t duration,
		       bool jitter)
{
	struct xp_selector f, t;
	struct xp_correlate_opts o = { sc->policy, samples, duration, 1u << 20 };
	struct xp_pair_count pc;
	struct xp_capture c;
	uint64_t ts = 1000;
	int n = 20 + (int)rnd(120), i = 0;

	if (parse(sc->from, &f) || parse(sc->to, &t)) {
		CHECK(0);
		return;
	}
	xp_capture_init(&c, 0);
	CHECK(xp_pair_count_init(&pc, &f, &t, &o) == 0);
	while (i < n) {
		int chunk = 1 + (int)rnd(12), k, rc;
		int64_t want;

		for (k = 0; k < chunk && i < n; k++, i++) {
			uint64_t at;

			ts += rnd(4); /* steps of 0: ties */
			at = ts;
			if (jitter && !rnd(6) && at > 1010)
				at -= rnd(10); /* a record of another CPU, late */
			gen_event(&c, sc->gen, at, jitter);
		}
		rc = xp_pair_count_update(&pc, &c, rnd(3) != 0);
		if (rc == 0) {
			replays_refused++;
			rc = xp_pair_count_update(&pc, &c, true);
		}
		want = correlate_matched(&c, &f, &t, &o);
		CHECK(rc == 1);
		CHECK(want >= 0);
		if (rc == 1 && want >= 0 && (uint64_t)want != xp_pair_count_matched(&pc)) {
			fprintf(stderr, "%s: %zu events, samples %llu, window %llu: counted %llu, "
					"correlated %lld\n",
				sc->name, c.count, (unsigned long long)samples,
				(unsigned long long)duration,
				(unsigned long long)xp_pair_count_matched(&pc), (long long)want);
			CHECK(0);
		}
		compared++;
	}
	xp_pair_count_free(&pc);
	xp_capture_free(&c);
	xp_selector_free(&f);
	xp_selector_free(&t);
}

/* The shortest sorted prefix holding @want pairs: the counter's answer
 * against a scan of correlations over every prefix. */
static int prefix_found, prefix_declined;

static void run_prefix(const struct scenario *sc, uint64_t want)
{
	struct xp_selector f, t;
	struct xp_correlate_opts o = { sc->policy, want, 0, 1u << 20 };
	struct xp_pair_count pc;
	struct xp_capture c;
	size_t full, k, first = 0;
	uint64_t ts = 1000;
	long got;
	int n = 20 + (int)rnd(80), i;

	if (parse(sc->from, &f) || parse(sc->to, &t)) {
		CHECK(0);
		return;
	}
	xp_capture_init(&c, 0);
	for (i = 0; i < n; i++) {
		ts += rnd(9) ? 1 + rnd(5) : 0; /* a few ties */
		gen_event(&c, sc->gen, ts, false);
	}
	CHECK(xp_capture_sort_and_sequence(&c) == 0);
	full = c.count;
	for (k = 1; k <= full && !first; k++) {
		c.count = k;
		if (correlate_matched(&c, &f, &t, &o) >= (int64_t)want)
			first = k;
	}
	c.count = full;
	CHECK(xp_pair_count_init(&pc, &f, &t, &o) == 0);
	got = xp_pair_count_first_prefix(&pc, &c, want);
	if (sc->gen == GEN_API || (sc->policy == XP_POLICY_EXACT && sc->gen == GEN_KERNEL)) {
		CHECK(got == -ENOTSUP); /* the exact key's count may fall */
		prefix_declined++;
	} else if (got == -EAGAIN) {
		prefix_declined++;
	} else {
		if ((size_t)got != first)
			fprintf(stderr, "%s: prefix for %llu pairs: counter %ld, scan %zu\n",
				sc->name, (unsigned long long)want, got, first);
		CHECK((size_t)got == first);
		prefix_found++;
	}
	xp_pair_count_free(&pc);
	xp_capture_free(&c);
	xp_selector_free(&f);
	xp_selector_free(&t);
}

static void test_random_streams(void)
{
	size_t s;
	int round;

	for (s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); s++) {
		for (round = 0; round < 60; round++) {
			uint64_t samples = rnd(3) ? 1 + rnd(30) : 0;
			uint64_t duration = !samples || !rnd(3) ? 20 + rnd(300) : 0;

			run_stream(&scenarios[s], samples, duration, round % 2 == 1);
		}
		for (round = 0; round < 20; round++)
			run_prefix(&scenarios[s], 1 + rnd(12));
	}
	/* the comparisons ran, out-of-order replays were exercised, and the
	 * prefix answer was given (not only declined) */
	CHECK(compared > 1000);
	CHECK(replays_refused > 10);
	fprintf(stderr, "%d comparisons, %d replays refused, prefixes: %d found, %d declined\n",
		compared, replays_refused, prefix_found, prefix_declined);
	CHECK(prefix_found > 100);
}

/* Mixed clocks: the correlator fails; the counter declines. */
static void test_declines(void)
{
	struct xp_selector f, t;
	struct xp_correlate_opts o = { XP_POLICY_FIRST_AFTER, 5, 0, 1000 };
	struct xp_pair_count pc;
	struct xp_capture c;

	CHECK(parse("uprobe:/bin/app:work:entry", &f) == 0);
	CHECK(parse("cuda:kernel_start", &t) == 0);
	xp_capture_init(&c, 0);
	tev_uprobe(&c, 10, 1, "/bin/app", "work", 0);
	tev_kernel(&c, 20, 0, "k", 1, 1, 0, XP_CLOCK_CUPTI);
	CHECK(xp_pair_count_init(&pc, &f, &t, &o) == 0);
	CHECK(xp_pair_count_update(&pc, &c, true) == -ENOTSUP);
	CHECK(correlate_matched(&c, &f, &t, &o) == -1);
	xp_pair_count_free(&pc);
	/* stack-nested between two different functions is not allowed */
	o.policy = XP_POLICY_STACK_NESTED;
	CHECK(xp_pair_count_init(&pc, &f, &t, &o) == -ENOTSUP);
	xp_capture_free(&c);
	xp_selector_free(&f);
	xp_selector_free(&t);
}

int main(void)
{
	test_random_streams();
	test_declines();
	TEST_MAIN_END();
}
