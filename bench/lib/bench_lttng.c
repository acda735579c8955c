/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_lttng.c - LTTng-UST's cost for libxprobe's two hot paths, with the
 * same payloads (xp_lttng_tp.h), measured the same way as bench_record.c:
 *
 *   bench_lttng record N   N x tracepoint(xpbench, record, ...)  -> ns/call
 *   bench_lttng pair N     N x (push "bench", pop)               -> ns/pair
 *
 * Prints "<ns>" (one number) on stdout.  bench/bench_lib.sh runs it inside
 * an active `lttng` session (lttng-sessiond, enable-event -u xpbench:*,
 * start) so the tracepoints are enabled and record.
 */
#define TRACEPOINT_DEFINE
#define TRACEPOINT_CREATE_PROBES
#include "xp_lttng_tp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

int main(int argc, char **argv)
{
	long n;
	double t0, t1;

	n = bench_args(argc, argv, 3);
	if (n < 0)
		return 2;
	/* warm-up: the first events register the provider, map buffers */
	for (int i = 0; i < 1000; i++) {
		tracepoint(xpbench, record, 1, i, i);
		tracepoint(xpbench, push, "bench", 0);
		tracepoint(xpbench, pop, 0);
	}
	if (!strcmp(argv[1], "record")) {
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			tracepoint(xpbench, record, 1, (uint64_t)i, (uint64_t)i);
		t1 = bench_now_ns();
	} else {
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++) {
			tracepoint(xpbench, push, "bench", 0);
			tracepoint(xpbench, pop, 0);
		}
		t1 = bench_now_ns();
	}
	printf("%.2f\n", (t1 - t0) / n);
	return 0;
}
