/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clock.h - timestamps of the recording hot path.
 *
 * Recording under 20 ns needs the TSC read directly (docs/libxprobe.md,
 * "Performance": clock_gettime alone costs 23.5 ns on our VMs, rdtsc
 * ~7 ns), so rings hold raw TSC values and the stop path converts them to
 * CLOCK_MONOTONIC with a line through two calibration points (begin,
 * stop).  Where the TSC is not invariant (no constant_tsc + nonstop_tsc in
 * /proc/cpuinfo, or not x86), or XPROBE_INSPECT_CLOCK=monotonic, the hot
 * path calls clock_gettime and nothing is converted.
 */
#ifndef XPL_CLOCK_H
#define XPL_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "../xtf/xtf_internal.h"

/* Decide once per session: true when the hot path may use rdtsc. */
bool xpl_tsc_usable(void);

/* A calibration point: TSC and CLOCK_MONOTONIC read together (the best
 * of a few tries, TSC taken as the midpoint).  Async-signal-safe. */
void xpl_calib_now(struct xpl_calib *c, bool tsc);

static inline uint64_t xpl_rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return 0;
#endif
}

static inline uint64_t xpl_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* XPL_CLOCK_H */
