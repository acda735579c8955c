/* SPDX-License-Identifier: Apache-2.0 */
/*
 * monotonic.h - the CLI's one reading of CLOCK_MONOTONIC, and the one sleep to
 * an absolute time on it.  Every timestamp xprobe compares (BPF's
 * bpf_ktime_get_ns, the Agent's records, window deadlines, progress
 * lines) is CLOCK_MONOTONIC nanoseconds, so there is one clock and one
 * way to read it.  libxprobe has its own (lib/internal.h xpl_now_mono_ns):
 * lib never includes the CLI's headers.
 */
#ifndef XPC_MONOTONIC_H
#define XPC_MONOTONIC_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in nanoseconds. */
static inline uint64_t xpc_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleep until CLOCK_MONOTONIC reads @t ns.  A signal handler ends the
 * sleep early (EINTR is not retried): the caller's loop checks why. */
static inline void xpc_sleep_until_ns(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ull),
			       .tv_nsec = (long)(t % 1000000000ull) };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

#endif /* XPC_MONOTONIC_H */
