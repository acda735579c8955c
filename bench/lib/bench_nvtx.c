/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_nvtx.c - an ordinary NVTX v3 program (not linked with libxprobe):
 * N x (nvtxRangePushA("bench"); nvtxRangePop()) -> ns per pair on stdout.
 * bench/bench_lib.sh runs it with NVTX_INJECTION64_PATH=libxprobe.so and an
 * XPROBE_INSPECT_* session (the pair then costs two records), and without
 * (NVTX's own no-op path: no tracing at all).
 *
 *   bench_nvtx N
 */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <time.h>

#include "bench_util.h"

int main(int argc, char **argv)
{
	long n;
	double t0, t1;

	if (argc != 2)
		return 2;
	n = bench_count(argv[1]);
	if (n < 0)
		return 2;
	/* warm-up: the first call loads the injection; the first record of
	 * the thread attaches its ring */
	for (int i = 0; i < 100; i++) {
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	t1 = bench_now_ns();
	printf("%.2f\n", (t1 - t0) / n);
	return 0;
}
