/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_util.h - what the libxprobe benchmark programs (bench_record.c,
 * bench_nvtx.c, bench_lttng.c) share: the iteration count from argv and
 * the monotonic clock they time with.  Header-only: bench/bench_lib.sh
 * builds each program from its one .c file (no common/ objects linked).
 */
#ifndef XP_BENCH_UTIL_H
#define XP_BENCH_UTIL_H

#include <time.h>

/* A positive decimal count, or -1 (empty, a sign, any other byte, or a
 * value past 10^15): the programs answer -1 with exit status 2. */
static inline long bench_count(const char *s)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 100000000000000L)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v > 0 ? v : -1;
}

/* The count, the last of exactly @want arguments (argv[0] included), or
 * -1 for a wrong argument count or a bad count. */
static inline long bench_args(int argc, char **argv, int want)
{
	return argc == want ? bench_count(argv[want - 1]) : -1;
}

static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#endif /* XP_BENCH_UTIL_H */
