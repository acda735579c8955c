/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xp_lttng_tp.h - the LTTng-UST tracepoint provider bench/bench_lib.sh
 * compares libxprobe with: the same payloads as libxprobe's records.
 *   xpbench:record  u32 type, u64 a0, u64 a1   (xprobe_trace_record)
 *   xpbench:push    string name, int level      (an NVTX push record)
 *   xpbench:pop     int level                   (an NVTX pop record)
 * Legacy TRACEPOINT_* macros, supported by LTTng-UST 2.13 (Debian 12).
 */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER xpbench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./xp_lttng_tp.h"

#if !defined(XP_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define XP_LTTNG_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

TRACEPOINT_EVENT(xpbench, record,
	TP_ARGS(uint32_t, type, uint64_t, a0, uint64_t, a1),
	TP_FIELDS(ctf_integer(uint32_t, type, type)
		  ctf_integer(uint64_t, a0, a0)
		  ctf_integer(uint64_t, a1, a1)))

TRACEPOINT_EVENT(xpbench, push,
	TP_ARGS(const char *, name, int, level),
	TP_FIELDS(ctf_string(name, name)
		  ctf_integer(int, level, level)))

TRACEPOINT_EVENT(xpbench, pop,
	TP_ARGS(int, level),
	TP_FIELDS(ctf_integer(int, level, level)))

#endif /* XP_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
