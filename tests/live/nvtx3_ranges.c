/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvtx3_ranges.c - an NVTX program built against NVIDIA's own nvtx3
 * headers (the CUDA toolkit's include/nvtx3, found by the test that
 * compiles it: tests/live/test_histogram_nvtx.py), so the Agent is reached
 * through NVIDIA's injection loader, not tests/lib/nvtx_loader.c.  Its
 * first call (a mark) loads NVTX_INJECTION64_PATH; then it prints
 * "ready", and each "go" line on stdin makes N push/pop ranges "step"
 * sleeping US microseconds and prints {"ranges", "min_ns", "max_ns"} as
 * it timed them around the calls; "quit" ends it.
 *
 *   nvtx3_ranges N US
 */
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20;
	long us = argc > 2 ? strtol(argv[2], NULL, 10) : 500;
	struct timespec ts = { 0, us * 1000 };
	char line[64];

	nvtxMarkA("load");
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		uint64_t mn = UINT64_MAX, mx = 0;

		if (!strncmp(line, "quit", 4))
			break;
		for (long i = 0; i < n; i++) {
			uint64_t t0 = now_ns(), t1;

			nvtxRangePushA("step");
			nanosleep(&ts, NULL);
			nvtxRangePop();
			t1 = now_ns();
			mn = t1 - t0 < mn ? t1 - t0 : mn;
			mx = t1 - t0 > mx ? t1 - t0 : mx;
		}
		printf("{\"ranges\": %ld, \"min_ns\": %llu, \"max_ns\": %llu}\n", n,
		       (unsigned long long)mn, (unsigned long long)mx);
		fflush(stdout);
	}
	return 0;
}
