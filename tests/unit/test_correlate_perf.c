/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_correlate_perf.c - selection + correlation at scale: a million
 * synthetic events per policy, checked for the exact answers their regular
 * construction implies, and timed.  The figure printed is events of the
 * whole capture per second through xp_correlate (binding, matching every
 * event against both selectors, sorting, pairing, statistics).  The time is
 * reported, not asserted (a loaded 2-core machine must not fail the suite);
 * the pipeline must do >= 2M events/s, which this test makes visible.
 * Sanitizer builds run a fifth of the events.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "correlate/correlate.h"
#include "test_selector_events.h"
#include "testlib.h"

#if defined(__SANITIZE_ADDRESS__)
#define NEVENTS 200000u
#else
#define NEVENTS 1000000u
#endif
#define THREADS 16u
#define BLOCK (2 * THREADS) /* THREADS entries, then THREADS exits */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double timed(struct xp_capture *c, const char *from, const char *to, enum xp_policy p,
		    struct xp_correlation *r)
{
	struct xp_correlate_opts o = { p, 0, UINT64_MAX / 2, NEVENTS };
	struct xp_selector s, e;
	struct xp_error err = { 0 };
	double t0, t;
	int rc;

	CHECK(xp_selector_parse(from, &s, &err) == 0);
	CHECK(xp_selector_parse(to, &e, &err) == 0);
	t0 = now();
	rc = xp_correlate(c, &s, &e, &o, r, &err);
	t = now() - t0;
	if (rc)
		fprintf(stderr, "correlate %s -> %s: %s\n", from, to, err.message);
	CHECK(rc == 0);
	fprintf(stderr, "%-14s %-40s %7.1f ms  %6.2f M events/s  (%zu pairs)\n",
		xp_policy_kebab(p), from, t * 1e3, (double)c->count / t / 1e6, r->npairs);
	xp_error_clear(&err);
	xp_selector_free(&s);
	xp_selector_free(&e);
	return t;
}

/*
 * Blocks of 16 thread entries then 16 exits, 1 ns apart: every entry pairs
 * with its thread's exit 16 ns later.  Every 8th block is write() noise.
 */
static void build_syscalls(struct xp_capture *c)
{
	uint32_t b, k;

	xp_capture_init(c, NEVENTS);
	for (b = 0; b < NEVENTS / BLOCK; b++) {
		const char *name = b % 8 == 7 ? "write" : "read";

		for (k = 0; k < BLOCK; k++)
			tev_syscall(c, (uint64_t)b * BLOCK + k, k % THREADS + 1, name, k >= THREADS);
	}
}

static void build_uprobes(struct xp_capture *c)
{
	uint32_t b, k;

	xp_capture_init(c, NEVENTS);
	for (b = 0; b < NEVENTS / BLOCK; b++)
		for (k = 0; k < BLOCK; k++)
			tev_uprobe(c, (uint64_t)b * BLOCK + k, k % THREADS + 1, "/srv/app",
				   b % 8 == 7 ? "other" : "handle", k >= THREADS);
}

/* Kernel starts then ends, 16 streams, one correlation id per kernel,
 * 64 distinct names of which "gemm" ones are 1 in 4. */
static void build_kernels(struct xp_capture *c)
{
	char names[64][32];
	uint32_t b, k, corr = 1;

	for (k = 0; k < 64; k++)
		snprintf(names[k], sizeof(names[k]), "%s_kernel_%u", k % 4 ? "conv" : "gemm", k);
	xp_capture_init(c, NEVENTS);
	for (b = 0; b < NEVENTS / BLOCK; b++) {
		for (k = 0; k < BLOCK; k++) {
			uint32_t s = k % THREADS;

			tev_kernel(c, (uint64_t)b * BLOCK + k, k >= THREADS, names[(b + s) % 64], 1,
				   corr + s, s, XP_CLOCK_CUPTI);
		}
		corr += THREADS;
	}
}

int main(void)
{
	const uint64_t blocks = NEVENTS / BLOCK, busy = blocks - blocks / 8;
	struct xp_correlation r;
	struct xp_capture c;
	double t, worst = 0;

	build_syscalls(&c);
	t = timed(&c, "syscall:read:entry", "syscall:read:exit", XP_POLICY_EXACT, &r);
	worst = t > worst ? t : worst;
	CHECK_EQ_U64(r.matched, busy * THREADS);
	CHECK(r.unmatched_start == 0 && r.unmatched_end == 0 && r.ambiguous == 0);
	CHECK(r.latency.min == THREADS && r.latency.max == THREADS && r.latency.mean == THREADS);
	xp_correlation_free(&r);
	/* temporal policies on the same capture: starts pair with the first
	 * (or nearest) exit regardless of thread */
	t = timed(&c, "syscall:read:entry", "syscall:read:exit", XP_POLICY_FIRST_AFTER, &r);
	CHECK_EQ_U64(r.matched, busy * THREADS);
	CHECK(r.latency.max == THREADS);
	xp_correlation_free(&r);
	t = timed(&c, "syscall:read:entry", "syscall:read:exit", XP_POLICY_NEAREST, &r);
	CHECK_EQ_U64(r.matched, busy * THREADS);
	xp_correlation_free(&r);
	xp_capture_free(&c);

	build_uprobes(&c);
	t = timed(&c, "uprobe:/srv/app:handle:entry", "uprobe:/srv/app:handle:return",
		  XP_POLICY_STACK_NESTED, &r);
	CHECK_EQ_U64(r.matched, busy * THREADS);
	CHECK(r.latency.min == THREADS && r.latency.max == THREADS);
	xp_correlation_free(&r);
	xp_capture_free(&c);

	build_kernels(&c);
	t = timed(&c, "cuda:kernel_start", "cuda:kernel_end", XP_POLICY_EXACT, &r);
	worst = t > worst ? t : worst;
	CHECK_EQ_U64(r.matched, blocks * THREADS);
	CHECK(r.latency.min == THREADS && r.latency.max == THREADS);
	xp_correlation_free(&r);
	t = timed(&c, "cuda:kernel_start", "cuda:kernel_end", XP_POLICY_STREAM_ORDER, &r);
	CHECK_EQ_U64(r.matched, blocks * THREADS);
	xp_correlation_free(&r);
	t = timed(&c, "cuda:kernel_start:name~^gemm_", "cuda:kernel_end:name~gemm", XP_POLICY_EXACT,
		  &r);
	CHECK_EQ_U64(r.matched, blocks * THREADS / 4);
	xp_correlation_free(&r);
	xp_capture_free(&c);

	fprintf(stderr, "slowest exact pass: %.2f M events/s\n", (double)NEVENTS / worst / 1e6);
	TEST_MAIN_END();
}
