/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_bench.c - decode-only throughput of completed captures: time
 * xp_inputs_load() (detection, decode, sort) on the files given and print
 * one line of key=value figures: events, seconds, events/s, MB/s and the
 * process's peak RSS in bytes and bytes per retained event.
 *
 * Built ad hoc by bench/bench_decode.sh against the static libraries of a
 * build directory; not part of the CMake build.
 * Usage: decode_bench MAX_EVENTS FILE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "capture/capture_io.h"
#include "capture/decode_json.h"
#include "../common/parse.h"

int main(int argc, char **argv)
{
	struct xp_error err = { 0 };
	struct xp_capture c;
	struct timespec t0, t1;
	struct rusage ru;
	uint64_t max_events, bytes = 0;
	double secs;
	int i, rc;

	if (argc < 3 || xpc_parse_u64(argv[1], 1, UINT64_MAX, &max_events)) {
		fprintf(stderr, "usage: %s MAX_EVENTS FILE...\n", argv[0]);
		return 2;
	}
	for (i = 2; i < argc; i++) {
		struct stat sb;

		if (stat(argv[i], &sb) == 0)
			bytes += (uint64_t)sb.st_size;
	}
	xp_json_use(&xp_json_builtin); /* linked in: no plugin to find */
	xp_capture_init(&c, (size_t)max_events);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = xp_inputs_load((const char *const *)argv + 2, (size_t)(argc - 2), &c, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc) {
		fprintf(stderr, "error: %s\n", err.message);
		xp_error_clear(&err);
		xp_capture_free(&c);
		return 1;
	}
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	getrusage(RUSAGE_SELF, &ru);
	printf("events=%zu seconds=%.4f events_per_s=%.0f mb_per_s=%.1f peak_rss=%ld "
	       "bytes_per_event=%.1f\n",
	       c.count, secs, (double)c.count / secs, (double)bytes / secs / 1e6,
	       ru.ru_maxrss * 1024L, c.count ? ru.ru_maxrss * 1024.0 / (double)c.count : 0.0);
	xp_capture_free(&c);
	return 0;
}
