/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_correlate.c - the correlator on hand-built captures whose answers
 * are worked out by hand in the comments: every policy's pairing and
 * counters, method/confidence, score, clock alignment and estimated error,
 * warnings, the duration window, sample truncation, the error order and the
 * details of every correlator error, and the statistics.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "correlate/correlate.h"
#include "test_selector_events.h"
#include "testlib.h"

struct run {
	struct xp_correlation r;
	struct xp_error err;
	int rc;
};

static struct xp_correlate_opts opts_of(enum xp_policy p, uint64_t samples, uint64_t duration)
{
	struct xp_correlate_opts o = { p, samples, duration, 1000000 };

	return o;
}

static int correlate_o(struct xp_capture *c, const char *from, const char *to,
		       const struct xp_correlate_opts *o, struct run *run)
{
	struct xp_selector s, e;
	struct xp_error perr = { 0 };

	memset(run, 0, sizeof(*run));
	if (xp_selector_parse(from, &s, &perr) || xp_selector_parse(to, &e, &perr)) {
		fprintf(stderr, "selector parse failed: %s\n", perr.message);
		CHECK(0);
		run->rc = -1;
	} else {
		run->rc = xp_correlate(c, &s, &e, o, &run->r, &run->err);
	}
	xp_error_clear(&perr);
	xp_selector_free(&s);
	xp_selector_free(&e);
	return run->rc;
}

static int correlate(struct xp_capture *c, const char *from, const char *to, enum xp_policy p,
		     uint64_t samples, struct run *run)
{
	struct xp_correlate_opts o = opts_of(p, samples, 0);

	if (!samples)
		o.duration_ns = UINT64_MAX / 2; /* a bound is required; this one keeps all */
	return correlate_o(c, from, to, &o, run);
}

static void run_free(struct run *run)
{
	xp_correlation_free(&run->r);
	xp_error_clear(&run->err);
}

#define CHECK_PAIR(run, i, s, e, lat)                                    \
	do {                                                             \
		CHECK((run)->r.npairs > (i));                            \
		if ((run)->r.npairs > (i)) {                             \
			CHECK_EQ_U64((run)->r.pairs[i].start, s);        \
			CHECK_EQ_U64((run)->r.pairs[i].end, e);          \
			CHECK_EQ_U64((run)->r.pairs[i].latency_ns, lat); \
		}                                                        \
	} while (0)

#define CHECK_COUNTS(run, m, us, ue, amb)                   \
	do {                                                \
		CHECK_EQ_U64((run)->r.matched, m);          \
		CHECK_EQ_U64((run)->r.npairs, m);           \
		CHECK_EQ_U64((run)->r.unmatched_start, us); \
		CHECK_EQ_U64((run)->r.unmatched_end, ue);   \
		CHECK_EQ_U64((run)->r.ambiguous, amb);      \
	} while (0)

static void check_common_details(const struct run *run, const char *from, const char *to,
				 const char *policy)
{
	char want[512];

	snprintf(want, sizeof(want), "\"%s\"", from);
	CHECK_STR(xp_error_detail_get(&run->err, "start_selector"), want);
	snprintf(want, sizeof(want), "\"%s\"", to);
	CHECK_STR(xp_error_detail_get(&run->err, "end_selector"), want);
	snprintf(want, sizeof(want), "\"%s\"", policy);
	CHECK_STR(xp_error_detail_get(&run->err, "match_policy"), want);
	CHECK(run->err.recoverable);
}

static bool has_hint(const struct xp_error *e, const char *h)
{
	size_t i;

	for (i = 0; i < e->nhints; i++)
		if (strcmp(e->hints[i], h) == 0)
			return true;
	return false;
}

/* --- exact: syscall lifecycle ---------------------------------------------- */

/*
 *  #  ts   tid  event
 *  0  100  1    read entry
 *  1  110  2    read entry
 *  2  120  1    read exit      -> pairs #0, 20
 *  3  125  2    read exit      -> pairs #1, 15
 *  4  130  1    read exit      -> nothing pending: unmatched_end
 *  5  140  1    read entry
 *  6  150  1    read entry     -> replaces #5: ambiguous
 *  7  160  1    read exit      -> pairs #6, 10
 *  8  170  3    read entry     -> left pending: unmatched_start
 *  9  175  1    write entry    (not selected)
 * 10  180  2    read entry, another process_start_time -> unmatched_start
 * 11  190  2    read exit  (start time 777: no pending)  -> unmatched_end
 * matched 3, us 2, ue 2, amb 1, score 3/8; latencies 10 15 20.
 */
static void build_syscalls(struct xp_capture *c)
{
	xp_capture_init(c, 0);
	tev_syscall(c, 100, 1, "read", 0);
	tev_syscall(c, 110, 2, "read", 0);
	tev_syscall(c, 120, 1, "read", 1);
	tev_syscall(c, 125, 2, "read", 1);
	tev_syscall(c, 130, 1, "read", 1);
	tev_syscall(c, 140, 1, "read", 0);
	tev_syscall(c, 150, 1, "read", 0);
	tev_syscall(c, 160, 1, "read", 1);
	tev_syscall(c, 170, 3, "read", 0);
	tev_syscall(c, 175, 1, "write", 0);
	tev_syscall(c, 180, 2, "read", 0)->process_start_time = 999;
	tev_syscall(c, 190, 2, "read", 1);
}

static void test_exact_syscall(void)
{
	struct xp_capture c;
	struct run run;

	build_syscalls(&c);
	CHECK(correlate(&c, "syscall:read:entry", "syscall:read:exit", XP_POLICY_EXACT, 0, &run) ==
	      0);
	CHECK_COUNTS(&run, 3, 2, 2, 1);
	CHECK_PAIR(&run, 0, 0, 2, 20);
	CHECK_PAIR(&run, 1, 1, 3, 15);
	CHECK_PAIR(&run, 2, 6, 7, 10);
	CHECK(run.r.score == 3.0 / 8.0);
	CHECK_STR(run.r.method, "exact_syscall_tid_lifecycle");
	CHECK(run.r.confidence == XP_CONF_EXACT);
	CHECK_STR(xp_confidence_name(run.r.confidence), "exact");
	CHECK(run.r.alignment == XP_ALIGN_HOST_MONOTONIC);
	CHECK_STR(xp_alignment_name(run.r.alignment), "host_monotonic");
	CHECK(run.r.has_estimated_error && run.r.estimated_error_ns == 0);
	CHECK_EQ_U64(run.r.warnings.n, 0);
	CHECK_EQ_U64(run.r.host_events, 12);
	CHECK_EQ_U64(run.r.cuda_events, 0);
	CHECK_EQ_U64(run.r.dropped, 0);
	CHECK_EQ_U64(run.r.latency.min, 10);
	CHECK_EQ_U64(run.r.latency.max, 20);
	CHECK_EQ_U64(run.r.latency.p50, 15);
	CHECK_EQ_U64(run.r.latency.p90, 20);
	CHECK_EQ_U64(run.r.latency.p95, 20);
	CHECK_EQ_U64(run.r.latency.p99, 20);
	CHECK(run.r.latency.mean == 15.0);
	run_free(&run);

	/* samples 2: the first two by start; counters are not reduced */
	CHECK(correlate(&c, "syscall:read:entry", "syscall:read:exit", XP_POLICY_EXACT, 2, &run) ==
	      0);
	CHECK_COUNTS(&run, 2, 2, 2, 1);
	CHECK_PAIR(&run, 0, 0, 2, 20);
	CHECK_PAIR(&run, 1, 1, 3, 15);
	CHECK(run.r.score == 2.0 / 7.0);
	CHECK(run.r.latency.mean == 17.5);
	run_free(&run);
	xp_capture_free(&c);

	/* an entry and an exit at the same instant: entry first, latency 0 */
	xp_capture_init(&c, 0);
	tev_syscall(&c, 5, 1, "mmap", 1);
	tev_syscall(&c, 5, 1, "mmap", 0);
	CHECK(correlate(&c, "syscall:mmap:entry", "syscall:mmap:exit", XP_POLICY_EXACT, 0, &run) ==
	      0);
	CHECK_COUNTS(&run, 1, 0, 0, 0);
	CHECK_PAIR(&run, 0, 1, 0, 0);
	CHECK(run.r.score == 1.0);
	run_free(&run);
	xp_capture_free(&c);
}

/* The capture is not in timestamp order: selection sorts it. */
static void test_unsorted_capture(void)
{
	struct xp_capture c;
	struct run run;

	xp_capture_init(&c, 0);
	tev_syscall(&c, 300, 1, "read", 1); /* #0 */
	tev_syscall(&c, 200, 1, "read", 0); /* #1 */
	tev_syscall(&c, 150, 1, "read", 1); /* #2 */
	tev_syscall(&c, 100, 1, "read", 0); /* #3 */
	/* timeline: 100 entry(#3), 150 exit(#2), 200 entry(#1), 300 exit(#0) */
	CHECK(correlate(&c, "syscall:read:entry", "syscall:read:exit", XP_POLICY_EXACT, 0, &run) ==
	      0);
	CHECK_COUNTS(&run, 2, 0, 0, 0);
	CHECK_PAIR(&run, 0, 3, 2, 50);
	CHECK_PAIR(&run, 1, 1, 0, 100);
	run_free(&run);
	xp_capture_free(&c);
}

/* --- exact: CPython GC ------------------------------------------------------- */

static void test_exact_python_gc(void)
{
	struct xp_capture c;
	struct run run;

	/*
	 * #0 gc_end   tid1 t=900   nothing pending: unmatched_end
	 * #1 gc_start tid1 t=1000
	 * #2 gc_start tid2 t=1005
	 * #3 gc_end   tid2 t=1500  -> #2, 495
	 * #4 gc_end   tid1 t=2000  -> #1, 1000
	 * #5 gc_start tid1 t=3000  open at the end: unmatched_start
	 */
	xp_capture_init(&c, 0);
	tev_gc(&c, 900, 1, 1);
	tev_gc(&c, 1000, 1, 0);
	tev_gc(&c, 1005, 2, 0);
	tev_gc(&c, 1500, 2, 1);
	tev_gc(&c, 2000, 1, 1);
	tev_gc(&c, 3000, 1, 0);
	tev_syscall(&c, 3100, 1, "read", 0);
	CHECK(correlate(&c, "python:gc_start", "python:gc_end", XP_POLICY_EXACT, 0, &run) == 0);
	CHECK_COUNTS(&run, 2, 1, 1, 0);
	CHECK_PAIR(&run, 0, 1, 4, 1000);
	CHECK_PAIR(&run, 1, 2, 3, 495);
	CHECK_STR(run.r.method, "exact_python_gc_tid_lifecycle");
	CHECK(run.r.confidence == XP_CONF_EXACT);
	CHECK(run.r.score == 0.5);
	CHECK(run.r.latency.mean == 747.5);
	CHECK_EQ_U64(run.r.host_events, 7);
	run_free(&run);

	/* reversed boundaries are not a lifecycle: exact is refused */
	CHECK(correlate(&c, "python:gc_end", "python:gc_start", XP_POLICY_EXACT, 0, &run) ==
	      -XPROBE_E_INVALID_CORRELATION_POLICY);
	check_common_details(&run, "python:gc_end", "python:gc_start", "exact");
	run_free(&run);
	xp_capture_free(&c);
}

/* --- exact: NVTX range lifecycle -------------------------------------------- */

static void test_exact_nvtx(void)
{
	struct xp_capture c;
	struct run run;

	/*
	 * #0 start forward  process id1 tid1 t=10
	 * #1 start forward  process id2 tid2 t=20
	 * #2 start backward process id4 t=25 (not selected)
	 * #3 end   forward  process id1 tid2 t=30  -> #0, 20 (ended on another thread)
	 * #4 end   forward  process id2 tid1 t=40  -> #1, 20
	 * #5 start forward  process id3 t=50       open: unmatched_start
	 * #6 end   forward  process id9 t=60       no start: unmatched_end
	 * #7 start forward  thread id0 t=70 tid5
	 * #8 end   forward  thread id0 t=80 tid5   -> #7, 10 (other kind, other key)
	 */
	xp_capture_init(&c, 0);
	tev_nvtx(&c, 10, 1, "forward", 0, XP_NVTX_PROCESS, 1);
	tev_nvtx(&c, 20, 2, "forward", 0, XP_NVTX_PROCESS, 2);
	tev_nvtx(&c, 25, 2, "backward", 0, XP_NVTX_PROCESS, 4);
	tev_nvtx(&c, 30, 2, "forward", 1, XP_NVTX_PROCESS, 1);
	tev_nvtx(&c, 40, 1, "forward", 1, XP_NVTX_PROCESS, 2);
	tev_nvtx(&c, 50, 1, "forward", 0, XP_NVTX_PROCESS, 3);
	tev_nvtx(&c, 60, 1, "forward", 1, XP_NVTX_PROCESS, 9);
	tev_nvtx(&c, 70, 5, "forward", 0, XP_NVTX_THREAD, 0);
	tev_nvtx(&c, 80, 5, "forward", 1, XP_NVTX_THREAD, 0);
	CHECK(correlate(&c, "cuda:nvtx_range_start:name~^forward$",
			"cuda:nvtx_range_end:name~^forward$", XP_POLICY_EXACT, 0, &run) == 0);
	CHECK_COUNTS(&run, 3, 1, 1, 0);
	CHECK_PAIR(&run, 0, 0, 3, 20);
	CHECK_PAIR(&run, 1, 1, 4, 20);
	CHECK_PAIR(&run, 2, 7, 8, 10);
	CHECK_STR(run.r.method, "exact_nvtx_range_id");
	CHECK(run.r.alignment == XP_ALIGN_HOST_MONOTONIC);
	CHECK_EQ_U64(run.r.host_events, 0);
	CHECK_EQ_U64(run.r.cuda_events, 9);
	run_free(&run);

	/* different regex text: no NVTX lifecycle, exact refused */
	CHECK(correlate(&c, "cuda:nvtx_range_start:name~^forward$",
			"cuda:nvtx_range_end:name~^forward", XP_POLICY_EXACT, 0,
			&run) == -XPROBE_E_INVALID_CORRELATION_POLICY);
	CHECK_STR(xp_error_detail_get(&run.err, "compatible_policies"),
		  "[\"first_after\",\"nearest\"]");
	CHECK_STR(xp_error_detail_get(&run.err, "recommended_policy"), "\"first-after\"");
	CHECK_STR(run.err.message,
		  "invalid correlation policy: exact matching requires endpoints that share a "
		  "deterministic correlation key; compatible policies for these selectors: "
		  "first-after, nearest");
	CHECK(has_hint(&run.err,
		       "use policy_recommendation.compatible_policies from xprobe validate"));
	run_free(&run);
	xp_capture_free(&c);
}

/* --- exact: CUPTI correlation id -------------------------------------------- */

/*
 *  #  ts   event                       key
 *  0  100  cudaLaunchKernel exit       ctx1 corr10
 *  1  150  kernel start (normalized)   ctx1 corr10   -> #0, 50
 *  2  190  kernel start                ctx1 corr11   end before its start:
 *  3  200  cudaLaunchKernel exit       ctx1 corr11     us+1, ue+1
 *  4  300  cudaLaunchKernel exit       ctx1 corr12   no end: us+1
 *  5  310  kernel start                ctx1 corr13   no start: ue+1
 *  6  400  cudaLaunchKernel exit       ctx2 corr20   2 starts, 1 end:
 *  7  410  cudaLaunchKernel exit       ctx2 corr20     ambiguous 2
 *  8  450  kernel start                ctx2 corr20
 *  9  500  cudaLaunchKernel exit       ctx1 corr14
 * 10  520  kernel start                ctx1 corr14   -> #9, 20
 * 11  600  cudaLaunchKernel exit       no ids: us+1
 * matched 2, us 3, ue 2, amb 2; score 2/9; latencies 20 50.
 */
static void build_cupti(struct xp_capture *c)
{
	const uint8_t n = XP_CLOCK_CUPTI_NORMALIZED;

	xp_capture_init(c, 0);
	tev_api(c, 100, 7, "runtime_api", "cudaLaunchKernel", 1, 1, 10);
	tev_kernel(c, 150, 0, "k", 1, 10, 7, n);
	tev_kernel(c, 190, 0, "k", 1, 11, 7, n);
	tev_api(c, 200, 7, "runtime_api", "cudaLaunchKernel", 1, 1, 11);
	tev_api(c, 300, 7, "runtime_api", "cudaLaunchKernel", 1, 1, 12);
	tev_kernel(c, 310, 0, "k", 1, 13, 7, n);
	tev_api(c, 400, 7, "runtime_api", "cudaLaunchKernel", 1, 2, 20);
	tev_api(c, 410, 7, "runtime_api", "cudaLaunchKernel", 1, 2, 20);
	tev_kernel(c, 450, 0, "k", 2, 20, 7, n);
	tev_api(c, 500, 7, "runtime_api", "cudaLaunchKernel", 1, 1, 14);
	tev_kernel(c, 520, 0, "k", 1, 14, 7, n);
	tev_api(c, 600, 7, "runtime_api", "cudaLaunchKernel", 1, 1, 15)->cuda.flags = 0;
}

static void test_exact_cupti(void)
{
	static const char from[] = "cuda:runtime_api:cudaLaunchKernel:exit";
	static const char to[] = "cuda:kernel_start";
	struct xp_capture c;
	struct run run;
	size_t i;

	build_cupti(&c);
	CHECK(correlate(&c, from, to, XP_POLICY_EXACT, 0, &run) == 0);
	CHECK_COUNTS(&run, 2, 3, 2, 2);
	CHECK_PAIR(&run, 0, 0, 1, 50);
	CHECK_PAIR(&run, 1, 9, 10, 20);
	CHECK(run.r.score == 2.0 / 9.0);
	CHECK_STR(run.r.method, "exact_cupti_correlation_id");
	CHECK(run.r.confidence == XP_CONF_EXACT);
	/* normalized CUPTI without an error bound: null error and a warning */
	CHECK(run.r.alignment == XP_ALIGN_CUPTI_NORMALIZED);
	CHECK_STR(xp_alignment_name(run.r.alignment), "cupti_normalized_to_host_monotonic");
	CHECK(!run.r.has_estimated_error);
	CHECK_EQ_U64(run.r.warnings.n, 1);
	if (run.r.warnings.n == 1) {
		CHECK_STR(run.r.warnings.v[0].code, "CLOCK_ERROR_UNAVAILABLE");
		CHECK_STR(
			run.r.warnings.v[0].message,
			"CUPTI does not report an error bound for GPU-to-host timestamp interpolation");
	}
	CHECK_EQ_U64(run.r.latency.p50, 20);
	CHECK_EQ_U64(run.r.latency.p90, 50);
	CHECK(run.r.latency.mean == 35.0);
	CHECK_EQ_U64(run.r.host_events, 0);
	CHECK_EQ_U64(run.r.cuda_events, 12);
	run_free(&run);

	/* error bounds on every kernel: max over the evidence (#1: 7, #10: 3),
	 * host-clock API events count 0; #2 (100) is selected but no evidence */
	for (i = 0; i < c.count; i++) {
		struct xp_event *e = &c.events[i];

		if (e->event_type != XP_EV_GPU_KERNEL_START)
			continue;
		e->flags |= XP_EVF_TS_ERROR;
		e->timestamp_error_ns = i == 1 ? 7 : i == 10 ? 3 : i == 2 ? 100 : 1;
	}
	CHECK(correlate(&c, from, to, XP_POLICY_EXACT, 0, &run) == 0);
	CHECK(run.r.has_estimated_error);
	CHECK_EQ_U64(run.r.estimated_error_ns, 7);
	CHECK_EQ_U64(run.r.warnings.n, 0);
	run_free(&run);
	/* one selected kernel outside the evidence without a bound: warning,
	 * but the evidence's bound is known */
	c.events[5].flags &= (uint8_t)~XP_EVF_TS_ERROR;
	CHECK(correlate(&c, from, to, XP_POLICY_EXACT, 0, &run) == 0);
	CHECK(run.r.has_estimated_error && run.r.estimated_error_ns == 7);
	CHECK(run.r.warnings.n == 1 && xp_warnings_has(&run.r.warnings, "CLOCK_ERROR_UNAVAILABLE"));
	run_free(&run);
	xp_capture_free(&c);

	/* one selector on both sides: each event is its own end, latency 0 */
	xp_capture_init(&c, 0);
	tev_kernel(&c, 10, 0, "k", 1, 1, 7, XP_CLOCK_CUPTI);
	tev_kernel(&c, 20, 0, "k", 1, 2, 7, XP_CLOCK_CUPTI);
	CHECK(correlate(&c, "cuda:kernel_start", "cuda:kernel_start", XP_POLICY_EXACT, 0, &run) ==
	      0);
	CHECK_COUNTS(&run, 2, 0, 0, 0);
	CHECK_PAIR(&run, 0, 0, 0, 0);
	CHECK(run.r.alignment == XP_ALIGN_CUPTI_SAME_DOMAIN);
	CHECK(run.r.has_estimated_error && run.r.estimated_error_ns == 0);
	CHECK_EQ_U64(run.r.warnings.n, 0);
	run_free(&run);
	xp_capture_free(&c);
}

/*
 * The Agent's CUDA events: API records carry no context id (record.h), so
 * an API call and the kernel it launched share only the correlation id,
 * which CUPTI counts per process; and a kernel start pairs with its own
 * end when one correlation id launched kernels on two streams that
 * overlap (a graph).
 */
static void test_exact_cuda_keys(void)
{
	const uint8_t n = XP_CLOCK_CUPTI_NORMALIZED;
	struct xp_capture c;
	struct run run;

	xp_capture_init(&c, 0);
	tev_api(&c, 100, 7, "runtime_api", "cudaLaunchKernel", 0, 0, 10)->cuda.flags &=
		(uint16_t)~XP_CUDAF_CONTEXT_ID;
	tev_api(&c, 200, 7, "driver_api", "cuLaunchKernel", 0, 0, 11)->cuda.flags &=
		(uint16_t)~XP_CUDAF_CONTEXT_ID;
	tev_kernel(&c, 150, 0, "k", 3, 10, 7, n);
	tev_kernel(&c, 260, 0, "k", 5, 11, 7, n);
	CHECK(correlate(&c, "cuda:runtime_api:cudaLaunchKernel:entry", "cuda:kernel_start",
			XP_POLICY_EXACT, 0, &run) == 0);
	CHECK_COUNTS(&run, 1, 0, 1, 0);
	CHECK_PAIR(&run, 0, 0, 2, 50);
	run_free(&run);
	CHECK(correlate(&c, "cuda:driver_api:cuLaunchKernel:entry", "cuda:kernel_start",
			XP_POLICY_EXACT, 0, &run) == 0);
	CHECK_COUNTS(&run, 1, 0, 1, 0);
	CHECK_PAIR(&run, 0, 1, 3, 60);
	run_free(&run);
	xp_capture_free(&c);

	/* correlation 20 launched a long kernel on stream 1 (1000..5000) and
	 * a short one on stream 2 (1100..1200): by start and end order alone
	 * the long start would take the short end */
	xp_capture_init(&c, 0);
	tev_kernel(&c, 1000, 0, "long", 1, 20, 1, n);
	tev_kernel(&c, 1100, 0, "short", 1, 20, 2, n);
	tev_kernel(&c, 1200, 1, "short", 1, 20, 2, n);
	tev_kernel(&c, 5000, 1, "long", 1, 20, 1, n);
	CHECK(correlate(&c, "cuda:kernel_start", "cuda:kernel_end", XP_POLICY_EXACT, 0, &run) ==
	      0);
	CHECK_COUNTS(&run, 2, 0, 0, 0);
	CHECK_PAIR(&run, 0, 0, 3, 4000);
	CHECK_PAIR(&run, 1, 1, 2, 100);
	CHECK_STR(run.r.method, "exact_cupti_correlation_id");
	run_free(&run);
	xp_capture_free(&c);
}

/* --- clocks ------------------------------------------------------------------ */

static void test_clock_alignment(void)
{
	static const char from[] = "cuda:runtime_api:cudaLaunchKernel:exit";
	static const char to[] = "cuda:kernel_start";
	struct xp_capture c;
	struct run run;

	/* host-clock API and raw CUPTI-clock kernels cannot be subtracted */
	xp_capture_init(&c, 0);
	tev_api(&c, 100, 7, "runtime_api", "cudaLaunchKernel", 1, 1, 10);
	tev_kernel(&c, 150, 0, "k", 1, 10, 7, XP_CLOCK_CUPTI);
	CHECK(correlate(&c, from, to, XP_POLICY_EXACT, 0, &run) ==
	      -XPROBE_E_CLOCK_ALIGNMENT_FAILED);
	CHECK_EQ_U64(run.err.code, XPROBE_E_CLOCK_ALIGNMENT_FAILED);
	CHECK_STR(run.err.message, "cannot subtract unaligned host_monotonic and cupti timestamps");
	CHECK_STR(xp_error_detail_get(&run.err, "start_clock"), "\"host_monotonic\"");
	CHECK_STR(xp_error_detail_get(&run.err, "end_clock"), "\"cupti\"");
	check_common_details(&run, from, to, "exact");
	CHECK(has_hint(&run.err, "use endpoints in one clock domain or a CUPTI capture normalized "
				 "to host monotonic time"));
	CHECK(run.r.npairs == 0 && run.r.pairs == NULL);
	run_free(&run);
	/* also under a temporal policy, and when the mix is within one side */
	CHECK(correlate(&c, to, to, XP_POLICY_NEAREST, 0, &run) == 0);
	run_free(&run);
	tev_kernel(&c, 160, 0, "k", 1, 11, 7, XP_CLOCK_CUPTI_NORMALIZED);
	CHECK(correlate(&c, to, to, XP_POLICY_FIRST_AFTER, 0, &run) ==
	      -XPROBE_E_CLOCK_ALIGNMENT_FAILED);
	CHECK_STR(
		run.err.message,
		"cannot subtract unaligned cupti and cupti_normalized_to_host_monotonic timestamps");
	check_common_details(&run, to, to, "first-after");
	run_free(&run);
	xp_capture_free(&c);
}

/* --- first-after ---------------------------------------------------------- */

/*
 * starts (uprobe entry) at 10 20 50 90; ends (write exit) at 5 25 30 60 100 110.
 * 10: skip end 5 (ue), pair 25 (15); 20: pair 30 (10); 50: pair 60 (10);
 * 90: pair 100 (10); leftover 110: ue.  matched 4, us 0, ue 2.
 */
static void build_first_after(struct xp_capture *c)
{
	xp_capture_init(c, 0);
	tev_syscall(c, 5, 9, "write", 1); /* #0 */
	tev_uprobe(c, 10, 1, "/srv/app", "handle", 0); /* #1 */
	tev_uprobe(c, 20, 2, "/srv/app", "handle", 0); /* #2 */
	tev_syscall(c, 25, 9, "write", 1); /* #3 */
	tev_syscall(c, 30, 9, "write", 1); /* #4 */
	tev_uprobe(c, 50, 1, "/srv/app", "handle", 0); /* #5 */
	tev_syscall(c, 60, 9, "write", 1); /* #6 */
	tev_uprobe(c, 90, 3, "/srv/app", "handle", 0); /* #7 */
	tev_syscall(c, 100, 9, "write", 1); /* #8 */
	tev_syscall(c, 110, 9, "write", 1); /* #9 */
}

static void test_first_after(void)
{
	static const char from[] = "uprobe:/srv/app:handle:entry";
	static const char to[] = "syscall:write:exit";
	struct xp_capture c;
	struct run run;

	build_first_after(&c);
	CHECK(correlate(&c, from, to, XP_POLICY_FIRST_AFTER, 0, &run) == 0);
	CHECK_COUNTS(&run, 4, 0, 2, 0);
	CHECK_PAIR(&run, 0, 1, 3, 15);
	CHECK_PAIR(&run, 1, 2, 4, 10);
	CHECK_PAIR(&run, 2, 5, 6, 10);
	CHECK_PAIR(&run, 3, 7, 8, 10);
	CHECK_STR(run.r.method, "first_after");
	CHECK(run.r.confidence == XP_CONF_HEURISTIC);
	CHECK(run.r.score == 4.0 / 6.0);
	CHECK_EQ_U64(run.r.warnings.n, 1);
	if (run.r.warnings.n) {
		CHECK_STR(run.r.warnings.v[0].code, "HEURISTIC_CORRELATION");
		CHECK_STR(run.r.warnings.v[0].message,
			  "temporal matching does not prove request-level causality");
	}
	run_free(&run);

	/* samples 2: stops before start 50; leftover ends are not counted */
	CHECK(correlate(&c, from, to, XP_POLICY_FIRST_AFTER, 2, &run) == 0);
	CHECK_COUNTS(&run, 2, 0, 1, 0);
	CHECK(run.r.score == 2.0 / 3.0);
	run_free(&run);
	/* samples 4: reached exactly at the last start; still no leftover count */
	CHECK(correlate(&c, from, to, XP_POLICY_FIRST_AFTER, 4, &run) == 0);
	CHECK_COUNTS(&run, 4, 0, 1, 0);
	run_free(&run);
	/* samples 5: never reached, the leftover end counts */
	CHECK(correlate(&c, from, to, XP_POLICY_FIRST_AFTER, 5, &run) == 0);
	CHECK_COUNTS(&run, 4, 0, 2, 0);
	run_free(&run);
	xp_capture_free(&c);

	/* ends run out: the remaining starts are unmatched */
	xp_capture_init(&c, 0);
	tev_uprobe(&c, 10, 1, "/srv/app", "handle", 0);
	tev_syscall(&c, 15, 9, "write", 1);
	tev_uprobe(&c, 20, 1, "/srv/app", "handle", 0);
	tev_uprobe(&c, 30, 1, "/srv/app", "handle", 0);
	CHECK(correlate(&c, from, to, XP_POLICY_FIRST_AFTER, 0, &run) == 0);
	CHECK_COUNTS(&run, 1, 2, 0, 0);
	CHECK_PAIR(&run, 0, 0, 1, 5);
	run_free(&run);
	xp_capture_free(&c);
}

/* --- nearest ---------------------------------------------------------------- */

static void test_nearest(void)
{
	static const char from[] = "syscall:read:entry";
	static const char to[] = "syscall:read:exit";
	struct xp_capture c;
	struct run run;

	/*
	 * ends 90 180 230 305, starts 100 200 300:
	 * 100: 90 (10) beats 180 (80); 200: 180 (20) beats 230 (30);
	 * 300: 305 (5) beats 230 (70).  An end before its start is allowed.
	 */
	xp_capture_init(&c, 0);
	tev_syscall(&c, 90, 1, "read", 1); /* #0 */
	tev_syscall(&c, 100, 1, "read", 0); /* #1 */
	tev_syscall(&c, 180, 1, "read", 1); /* #2 */
	tev_syscall(&c, 200, 1, "read", 0); /* #3 */
	tev_syscall(&c, 230, 1, "read", 1); /* #4 */
	tev_syscall(&c, 300, 1, "read", 0); /* #5 */
	tev_syscall(&c, 305, 1, "read", 1); /* #6 */
	CHECK(correlate(&c, from, to, XP_POLICY_NEAREST, 0, &run) == 0);
	CHECK_COUNTS(&run, 3, 0, 1, 0);
	CHECK_PAIR(&run, 0, 1, 0, 10);
	CHECK_PAIR(&run, 1, 3, 2, 20);
	CHECK_PAIR(&run, 2, 5, 6, 5);
	CHECK_STR(run.r.method, "nearest");
	CHECK(run.r.confidence == XP_CONF_HEURISTIC);
	CHECK(xp_warnings_has(&run.r.warnings, "HEURISTIC_CORRELATION"));
	run_free(&run);
	xp_capture_free(&c);

	/*
	 * ends 190, 210a, 210b; starts 200, 201.
	 * 200: 190 and 210 both 10 away: the later wins; bucket 210 gives its
	 * last end (b).  201: 190 is 11, 210 is 9: 210a.  190 left: ue 1.
	 */
	xp_capture_init(&c, 0);
	tev_syscall(&c, 190, 1, "read", 1); /* #0 */
	tev_syscall(&c, 200, 1, "read", 0); /* #1 */
	tev_syscall(&c, 201, 2, "read", 0); /* #2 */
	tev_syscall(&c, 210, 1, "read", 1); /* #3 a */
	tev_syscall(&c, 210, 2, "read", 1); /* #4 b */
	CHECK(correlate(&c, from, to, XP_POLICY_NEAREST, 0, &run) == 0);
	CHECK_COUNTS(&run, 2, 0, 1, 0);
	CHECK_PAIR(&run, 0, 1, 4, 10);
	CHECK_PAIR(&run, 1, 2, 3, 9);
	run_free(&run);
	/* samples 1: the bound stops the loop, so no leftover ends count */
	CHECK(correlate(&c, from, to, XP_POLICY_NEAREST, 1, &run) == 0);
	CHECK_COUNTS(&run, 1, 0, 0, 0);
	CHECK_PAIR(&run, 0, 1, 4, 10);
	CHECK(run.r.score == 1.0);
	run_free(&run);
	xp_capture_free(&c);

	/* the ends run out: remaining starts unmatched */
	xp_capture_init(&c, 0);
	tev_syscall(&c, 1, 1, "read", 0);
	tev_syscall(&c, 2, 1, "read", 1);
	tev_syscall(&c, 2, 1, "read", 0);
	tev_syscall(&c, 3, 1, "read", 0);
	CHECK(correlate(&c, from, to, XP_POLICY_NEAREST, 0, &run) == 0);
	CHECK_COUNTS(&run, 1, 2, 0, 0);
	CHECK_PAIR(&run, 0, 0, 1, 1);
	run_free(&run);
	xp_capture_free(&c);
}

/* --- stack-nested ------------------------------------------------------------ */

/*
 *  #  ts  tid  event
 *  0  10  1    f entry   A
 *  1  15  2    f entry   C
 *  2  20  1    f entry   B (recursion)
 *  3  25  2    f return  -> C, 10
 *  4  30  1    f return  -> B, 10
 *  5  35  2    f return  empty stack: ue
 *  6  50  1    f return  -> A, 40
 *  7  60  3    f entry   D, never returns: us
 *  8  70  1    f return  E's return, same instant: entry first
 *  9  70  1    f entry   E -> pair E (#9), #8, 0
 *  sorted by start: A(10) C(15) B(20) E(70); latencies 40 10 10 0.
 */
static void test_stack_nested(void)
{
	static const char from[] = "uprobe:/srv/app:f:entry";
	static const char to[] = "uprobe:/srv/app:f:return";
	struct xp_capture c;
	struct run run;

	xp_capture_init(&c, 0);
	tev_uprobe(&c, 10, 1, "/srv/app", "f", 0);
	tev_uprobe(&c, 15, 2, "/srv/app", "f", 0);
	tev_uprobe(&c, 20, 1, "/srv/app", "f", 0);
	tev_uprobe(&c, 25, 2, "/srv/app", "f", 1);
	tev_uprobe(&c, 30, 1, "/srv/app", "f", 1);
	tev_uprobe(&c, 35, 2, "/srv/app", "f", 1);
	tev_uprobe(&c, 50, 1, "/srv/app", "f", 1);
	tev_uprobe(&c, 60, 3, "/srv/app", "f", 0);
	tev_uprobe(&c, 70, 1, "/srv/app", "f", 1);
	tev_uprobe(&c, 70, 1, "/srv/app", "f", 0);
	CHECK(correlate(&c, from, to, XP_POLICY_STACK_NESTED, 0, &run) == 0);
	CHECK_COUNTS(&run, 4, 1, 1, 0);
	CHECK_PAIR(&run, 0, 0, 6, 40);
	CHECK_PAIR(&run, 1, 1, 3, 10);
	CHECK_PAIR(&run, 2, 2, 4, 10);
	CHECK_PAIR(&run, 3, 9, 8, 0);
	CHECK_STR(run.r.method, "stack_nested_tid_lifo");
	CHECK(run.r.confidence == XP_CONF_HIGH);
	CHECK_EQ_U64(run.r.warnings.n, 0);
	CHECK_EQ_U64(run.r.latency.p50, 10);
	CHECK_EQ_U64(run.r.latency.p90, 40);
	CHECK(run.r.latency.mean == 15.0);
	CHECK(run.r.score == 4.0 / 6.0);
	run_free(&run);

	/* samples 2: the first two returns in time (C, B) pair; A and E still
	 * pop, so they are neither pairs nor unmatched */
	CHECK(correlate(&c, from, to, XP_POLICY_STACK_NESTED, 2, &run) == 0);
	CHECK_COUNTS(&run, 2, 1, 1, 0);
	CHECK_PAIR(&run, 0, 1, 3, 10);
	CHECK_PAIR(&run, 1, 2, 4, 10);
	CHECK(run.r.score == 0.5);
	run_free(&run);

	/* another function's return: stack-nested refused */
	CHECK(correlate(&c, from, "uprobe:/srv/app:g:return", XP_POLICY_STACK_NESTED, 0, &run) ==
	      -XPROBE_E_INVALID_CORRELATION_POLICY);
	CHECK(strstr(run.err.message, "stack-nested matching requires entry and return probes "
				      "for the same host function") != NULL);
	run_free(&run);
	xp_capture_free(&c);
}

/* --- stream-order ------------------------------------------------------------ */

/*
 *  #  ts  event         stream
 *  0   5  kernel end    7    before any start on 7: ue
 *  1  10  kernel start  7
 *  2  12  kernel start  8
 *  3  20  kernel end    7    -> #1, 10
 *  4  30  kernel start  7
 *  5  40  kernel end    8    -> #2, 28
 *  6  45  kernel end    7    -> #4, 15
 *  7  50  kernel start  7    no end left: us
 *  8  55  kernel start  no stream id: us
 *  9  60  kernel end    9    end-only stream: ue
 */
static void test_stream_order(void)
{
	static const char from[] = "cuda:kernel_start";
	static const char to[] = "cuda:kernel_end";
	const uint8_t clk = XP_CLOCK_CUPTI;
	struct xp_capture c;
	struct run run;

	xp_capture_init(&c, 0);
	tev_kernel(&c, 5, 1, "k", 1, 1, 7, clk);
	tev_kernel(&c, 10, 0, "k", 1, 2, 7, clk);
	tev_kernel(&c, 12, 0, "k", 1, 3, 8, clk);
	tev_kernel(&c, 20, 1, "k", 1, 4, 7, clk);
	tev_kernel(&c, 30, 0, "k", 1, 5, 7, clk);
	tev_kernel(&c, 40, 1, "k", 1, 6, 8, clk);
	tev_kernel(&c, 45, 1, "k", 1, 7, 7, clk);
	tev_kernel(&c, 50, 0, "k", 1, 8, 7, clk);
	tev_kernel(&c, 55, 0, "k", 1, 9, 7, clk)->cuda.flags &= (uint16_t)~XP_CUDAF_STREAM_ID;
	tev_kernel(&c, 60, 1, "k", 1, 10, 9, clk);
	CHECK(correlate(&c, from, to, XP_POLICY_STREAM_ORDER, 0, &run) == 0);
	CHECK_COUNTS(&run, 3, 2, 2, 0);
	CHECK_PAIR(&run, 0, 1, 3, 10);
	CHECK_PAIR(&run, 1, 2, 5, 28);
	CHECK_PAIR(&run, 2, 4, 6, 15);
	CHECK_STR(run.r.method, "cuda_stream_order");
	CHECK(run.r.confidence == XP_CONF_HIGH);
	CHECK(run.r.alignment == XP_ALIGN_CUPTI_SAME_DOMAIN);
	CHECK(run.r.has_estimated_error && run.r.estimated_error_ns == 0);
	CHECK_EQ_U64(run.r.warnings.n, 0);
	run_free(&run);
	/* samples 1 keeps the earliest start's pair */
	CHECK(correlate(&c, from, to, XP_POLICY_STREAM_ORDER, 1, &run) == 0);
	CHECK_COUNTS(&run, 1, 2, 2, 0);
	CHECK_PAIR(&run, 0, 1, 3, 10);
	run_free(&run);
	/* a CUDA API endpoint is not GPU activity */
	CHECK(correlate(&c, "cuda:runtime_api:cudaLaunchKernel:exit", to, XP_POLICY_STREAM_ORDER, 0,
			&run) == -XPROBE_E_INVALID_CORRELATION_POLICY);
	CHECK(strstr(run.err.message,
		     "stream-order matching requires two GPU activity endpoints") != NULL);
	CHECK_STR(xp_error_detail_get(&run.err, "compatible_policies"),
		  "[\"exact\",\"first_after\",\"nearest\"]");
	CHECK_STR(xp_error_detail_get(&run.err, "recommended_policy"), "\"exact\"");
	check_common_details(&run, "cuda:runtime_api:cudaLaunchKernel:exit", to, "stream-order");
	run_free(&run);
	xp_capture_free(&c);
}

/* --- window, limits, errors --------------------------------------------------- */

static void test_duration_window(void)
{
	static const char from[] = "syscall:read:entry";
	static const char to[] = "syscall:read:exit";
	struct xp_capture c;
	struct xp_correlate_opts o;
	struct run run;

	xp_capture_init(&c, 0);
	tev_syscall(&c, 100, 1, "read", 0);
	tev_syscall(&c, 150, 1, "read", 1);
	tev_syscall(&c, 1000, 1, "read", 0);
	tev_syscall(&c, 1100, 1, "read", 1);
	tev_syscall(&c, 1200, 1, "read", 0);
	tev_syscall(&c, 1300, 1, "read", 1);
	/* t0 = 100, window through 1100 inclusive */
	o = opts_of(XP_POLICY_EXACT, 0, 1000);
	CHECK(correlate_o(&c, from, to, &o, &run) == 0);
	CHECK_COUNTS(&run, 2, 0, 0, 0);
	run_free(&run);
	/* through 1099: the second exit falls out, its entry stays pending */
	o.duration_ns = 999;
	CHECK(correlate_o(&c, from, to, &o, &run) == 0);
	CHECK_COUNTS(&run, 1, 1, 0, 0);
	run_free(&run);
	/* the window starts at the first selected event of either side */
	c.events[0].timestamp_ns = 2000; /* first entry now late; first exit at 150 */
	o.duration_ns = 1000; /* through 1150: entry 1000, exits 150 1100 */
	CHECK(correlate_o(&c, from, to, &o, &run) == 0);
	CHECK_COUNTS(&run, 1, 0, 1, 0);
	CHECK_PAIR(&run, 0, 2, 3, 100);
	run_free(&run);
	/* both bounds: window and samples */
	c.events[0].timestamp_ns = 100;
	o = opts_of(XP_POLICY_EXACT, 1, UINT64_MAX); /* saturating window */
	CHECK(correlate_o(&c, from, to, &o, &run) == 0);
	CHECK_COUNTS(&run, 1, 0, 0, 0);
	run_free(&run);
	xp_capture_free(&c);
}

static void test_errors(void)
{
	static const char from[] = "syscall:read:entry";
	static const char to[] = "syscall:read:exit";
	struct xp_capture c;
	struct xp_correlate_opts o;
	struct run run;

	build_syscalls(&c); /* 12 events */

	/* 1. limits come first */
	o = opts_of(XP_POLICY_STACK_NESTED, 0, 0);
	c.dropped = 5;
	CHECK(correlate_o(&c, from, to, &o, &run) == -XPROBE_E_SESSION_LIMIT_EXCEEDED);
	CHECK(strncmp(run.err.message, "invalid measurement limit: ", 27) == 0);
	CHECK(has_hint(&run.err,
		       "set positive samples or duration, timeout, and max-events bounds"));
	check_common_details(&run, from, to, "stack-nested");
	run_free(&run);
	o = opts_of(XP_POLICY_EXACT, 1, 0);
	o.max_events = 0;
	CHECK(correlate_o(&c, from, to, &o, &run) == -XPROBE_E_SESSION_LIMIT_EXCEEDED);
	CHECK_STR(run.err.message, "invalid measurement limit: max_events must be positive");
	run_free(&run);

	/* 2. capture bound (strictly greater), before drops and policy */
	o = opts_of(XP_POLICY_STACK_NESTED, 1, 0);
	o.max_events = 11;
	CHECK(correlate_o(&c, from, to, &o, &run) == -XPROBE_E_EVENT_RATE_TOO_HIGH);
	CHECK_STR(run.err.message, "capture contains 12 events, exceeding the maximum of 11");
	CHECK_STR(xp_error_detail_get(&run.err, "observed_events"), "12");
	CHECK_STR(xp_error_detail_get(&run.err, "max_events"), "11");
	CHECK(has_hint(&run.err, "narrow the selectors or explicitly increase max-events"));
	check_common_details(&run, from, to, "stack-nested");
	run_free(&run);

	/* 3. drops, before the policy */
	o.max_events = 12;
	CHECK(correlate_o(&c, from, to, &o, &run) == -XPROBE_E_EVENTS_DROPPED);
	CHECK_STR(run.err.message, "capture dropped 5 events before correlation");
	CHECK_STR(xp_error_detail_get(&run.err, "dropped_events"), "5");
	CHECK(has_hint(&run.err,
		       "reduce the event rate or explicitly increase the capture capacity"));
	check_common_details(&run, from, to, "stack-nested");
	run_free(&run);

	/* 4. policy compatibility */
	c.dropped = 0;
	CHECK(correlate_o(&c, from, to, &o, &run) == -XPROBE_E_INVALID_CORRELATION_POLICY);
	CHECK_STR(xp_error_detail_get(&run.err, "compatible_policies"),
		  "[\"exact\",\"first_after\",\"nearest\"]");
	CHECK_STR(xp_error_detail_get(&run.err, "recommended_policy"), "\"exact\"");
	check_common_details(&run, from, to, "stack-nested");
	CHECK(run.err.recoverable);
	run_free(&run);

	/* 6. nothing selected at all */
	o = opts_of(XP_POLICY_EXACT, 10, 0);
	CHECK(correlate_o(&c, "syscall:mmap:entry", "syscall:mmap:exit", &o, &run) ==
	      -XPROBE_E_NO_MATCHED_SAMPLES);
	CHECK_STR(run.err.message, "no captured events matched the start or end selector");
	CHECK_STR(xp_error_detail_get(&run.err, "captured_events"), "12");
	CHECK_STR(xp_error_detail_get(&run.err, "host_events"), "12");
	CHECK_STR(xp_error_detail_get(&run.err, "cuda_events"), "0");
	CHECK(has_hint(&run.err, "inspect the events-out artifact, then adjust selectors or "
				 "choose an explicitly compatible policy"));
	check_common_details(&run, "syscall:mmap:entry", "syscall:mmap:exit", "exact");
	CHECK_EQ_U64(run.r.host_events, 12); /* kept for the live loop */
	run_free(&run);

	/* 10. selected, but no pair */
	CHECK(correlate_o(&c, "syscall:write:entry", "syscall:read:exit", &o, &run) ==
	      -XPROBE_E_NO_MATCHED_SAMPLES);
	CHECK_STR(run.err.message, "no event pairs matched the selectors");
	CHECK_STR(xp_error_detail_get(&run.err, "selected_start_events"), "1");
	CHECK_STR(xp_error_detail_get(&run.err, "selected_end_events"), "5");
	CHECK_STR(xp_error_detail_get(&run.err, "captured_events"), "12");
	check_common_details(&run, "syscall:write:entry", "syscall:read:exit", "exact");
	run_free(&run);
	xp_capture_free(&c);

	/* an empty capture */
	xp_capture_init(&c, 0);
	CHECK(correlate_o(&c, from, to, &o, &run) == -XPROBE_E_NO_MATCHED_SAMPLES);
	CHECK_STR(xp_error_detail_get(&run.err, "captured_events"), "0");
	run_free(&run);
	xp_capture_free(&c);
}

/* --- policies ---------------------------------------------------------------- */

static unsigned mask_of(const char *from, const char *to)
{
	struct xp_selector s, e;
	struct xp_error err = { 0 };
	unsigned m = 0;

	if (xp_selector_parse(from, &s, &err) == 0 && xp_selector_parse(to, &e, &err) == 0)
		m = xp_policy_compatible(&s, &e);
	else
		CHECK(0);
	xp_error_clear(&err);
	xp_selector_free(&s);
	xp_selector_free(&e);
	return m;
}

static void test_policy_compatibility(void)
{
	const unsigned T = (1u << XP_POLICY_FIRST_AFTER) | (1u << XP_POLICY_NEAREST);
	const unsigned X = 1u << XP_POLICY_EXACT, S = 1u << XP_POLICY_STACK_NESTED;
	const unsigned O = 1u << XP_POLICY_STREAM_ORDER;
	enum xp_policy list[XP_POLICY__COUNT];
	size_t n;

	CHECK_EQ_U64(mask_of("syscall:read:entry", "syscall:read:exit"), X | T);
	CHECK_EQ_U64(mask_of("syscall:read:entry", "syscall:write:exit"), X | T); /* lenient */
	CHECK_EQ_U64(mask_of("python:gc_start", "python:gc_end"), X | T);
	CHECK_EQ_U64(mask_of("python:gc_end", "python:gc_start"), T);
	CHECK_EQ_U64(mask_of("python:gc_start", "syscall:read:exit"), T);
	CHECK_EQ_U64(mask_of("uprobe:/a:f:entry", "uprobe:/a:f:return"), S | T);
	CHECK_EQ_U64(mask_of("uprobe:/a:+0x10:entry", "uprobe:/a:+0x10:return"), S | T);
	CHECK_EQ_U64(mask_of("uprobe:/a:+0x10:entry", "uprobe:/a:+0x20:return"), T);
	CHECK_EQ_U64(mask_of("uprobe:/a:f:entry", "uprobe:/b:f:return"), T);
	CHECK_EQ_U64(mask_of("uprobe:/a:f:return", "uprobe:/a:f:entry"), T);
	CHECK_EQ_U64(mask_of("uprobe:/a:f:entry", "uprobe:/a:symbol=f:return"), T);
	CHECK_EQ_U64(mask_of("uprobe:/a:f:entry", "cuda:kernel_start"), T);
	CHECK_EQ_U64(mask_of("tracepoint:sched:a", "tracepoint:sched:b"), T);
	CHECK_EQ_U64(mask_of("cuda:kernel_start", "cuda:kernel_end"), X | O | T);
	CHECK_EQ_U64(mask_of("cuda:memcpy_start", "cuda:memset_end"), X | O | T);
	CHECK_EQ_U64(mask_of("cuda:runtime_api:cudaLaunchKernel:exit", "cuda:kernel_start"), X | T);
	CHECK_EQ_U64(mask_of("cuda:runtime_api:cudaMalloc:entry", "cuda:memcpy_start"), X | T);
	CHECK_EQ_U64(mask_of("cuda:nvtx_range_start:name~^f$", "cuda:nvtx_range_end:name~^f$"),
		     X | T);
	CHECK_EQ_U64(mask_of("cuda:nvtx_range_start:name~^f$", "cuda:nvtx_range_end:name~f$"), T);
	CHECK_EQ_U64(mask_of("cuda:nvtx_range_start:name~^f$", "cuda:kernel_start"), T);

	n = xp_policy_list(X | O | T, list);
	CHECK_EQ_U64(n, 4);
	CHECK(list[0] == XP_POLICY_EXACT && list[1] == XP_POLICY_STREAM_ORDER &&
	      list[2] == XP_POLICY_FIRST_AFTER && list[3] == XP_POLICY_NEAREST);
	n = xp_policy_list(S | T, list);
	CHECK(n == 3 && list[0] == XP_POLICY_STACK_NESTED);
	CHECK(xp_policy_recommend(S | T) == XP_POLICY_STACK_NESTED);
	CHECK(xp_policy_recommend(X | O | T) == XP_POLICY_EXACT);
	CHECK(xp_policy_recommend(O | T) == XP_POLICY_STREAM_ORDER);
	CHECK(xp_policy_recommend(T) == XP_POLICY_FIRST_AFTER);
	CHECK(xp_policy_requirement(XP_POLICY_NEAREST) == NULL);

	CHECK_EQ_U64(xp_policy_parse("first-after"), XP_POLICY_FIRST_AFTER);
	CHECK_EQ_U64(xp_policy_parse("first_after"), XP_POLICY_FIRST_AFTER);
	CHECK_EQ_U64(xp_policy_parse("stack-nested"), XP_POLICY_STACK_NESTED);
	CHECK_EQ_U64(xp_policy_parse("stream_order"), XP_POLICY_STREAM_ORDER);
	CHECK(xp_policy_parse("Exact") == -1);
	CHECK(xp_policy_parse("") == -1);
	CHECK(xp_policy_parse(NULL) == -1);
	CHECK_STR(xp_policy_snake(XP_POLICY_STREAM_ORDER), "stream_order");
	CHECK_STR(xp_policy_kebab(XP_POLICY_STREAM_ORDER), "stream-order");
	CHECK_STR(xp_confidence_name(XP_CONF_HIGH), "high");
	CHECK_STR(xp_confidence_name(XP_CONF_HEURISTIC), "heuristic");
	CHECK_STR(xp_confidence_name(XP_CONF_AMBIGUOUS), "ambiguous");
	CHECK_STR(xp_alignment_name(XP_ALIGN_CUPTI_SAME_DOMAIN), "cupti_same_domain");
}

/* --- statistics ---------------------------------------------------------------- */

static void test_stats(void)
{
	struct xp_latency_stats st;
	uint64_t v[100], *big, *ref;
	size_t i;

	/* 1..100 shuffled: nearest rank gives P itself */
	for (i = 0; i < 100; i++)
		v[i] = (i * 37) % 100 + 1;
	xp_latency_stats_compute(v, 100, &st);
	CHECK(st.min == 1 && st.max == 100);
	CHECK(st.p50 == 50 && st.p90 == 90 && st.p95 == 95 && st.p99 == 99);
	CHECK(st.mean == 50.5);
	for (i = 0; i < 100; i++)
		CHECK(v[i] == i + 1); /* sorted in place */

	/* 10 values: p95 = rank ceil(9.5) = 10 */
	for (i = 0; i < 10; i++)
		v[i] = (10 - i) * 10;
	xp_latency_stats_compute(v, 10, &st);
	CHECK(st.p50 == 50 && st.p90 == 90 && st.p95 == 100 && st.p99 == 100);
	CHECK(st.mean == 55.0);

	/* 3 values: ranks 2, 3, 3, 3 */
	v[0] = 5;
	v[1] = 1;
	v[2] = 3;
	xp_latency_stats_compute(v, 3, &st);
	CHECK(st.min == 1 && st.p50 == 3 && st.p90 == 5 && st.p95 == 5 && st.p99 == 5 &&
	      st.max == 5);
	CHECK(st.mean == 3.0);

	/* one value; none */
	v[0] = 7;
	xp_latency_stats_compute(v, 1, &st);
	CHECK(st.min == 7 && st.p50 == 7 && st.p99 == 7 && st.max == 7 && st.mean == 7.0);
	xp_latency_stats_compute(v, 0, &st);
	CHECK(st.min == 0 && st.max == 0 && st.mean == 0.0);

	/* the sum needs more than 64 bits */
	v[0] = UINT64_MAX;
	v[1] = UINT64_MAX;
	v[2] = UINT64_MAX - 1;
	xp_latency_stats_compute(v, 3, &st);
	CHECK(st.mean == (double)UINT64_MAX);
	CHECK(st.min == UINT64_MAX - 1 && st.max == UINT64_MAX);

	/* a fractional mean */
	v[0] = 1;
	v[1] = 2;
	xp_latency_stats_compute(v, 2, &st);
	CHECK(st.mean == 1.5 && st.p50 == 1 && st.p90 == 2);

	/* radix sort against qsort on wide random values */
	big = malloc(100000 * sizeof(*big));
	ref = malloc(100000 * sizeof(*ref));
	{
		uint64_t x = 88172645463325252ull;

		for (i = 0; i < 100000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			big[i] = i % 3 ? x : x >> (i % 60);
			ref[i] = big[i];
		}
	}
	xp_latency_stats_compute(big, 100000, &st);
	for (i = 1; i < 100000; i++)
		if (big[i - 1] > big[i])
			break;
	CHECK_EQ_U64(i, 100000);
	CHECK(st.min == big[0] && st.max == big[99999] && st.p50 == big[49999] &&
	      st.p99 == big[98999]);
	free(big);
	free(ref);
}

int main(void)
{
	test_exact_syscall();
	test_unsorted_capture();
	test_exact_python_gc();
	test_exact_nvtx();
	test_exact_cupti();
	test_exact_cuda_keys();
	test_clock_alignment();
	test_first_after();
	test_nearest();
	test_stack_nested();
	test_stream_order();
	test_duration_window();
	test_errors();
	test_policy_compatibility();
	test_stats();
	TEST_MAIN_END();
}
