/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace.h - recording calls of the host event rings (the `sys_trace`
 * producer) that an application makes directly.  NVTX ranges and marks
 * reach the same rings through NVTX injection (docs/libxprobe.md, "NVTX").
 *
 * Hot path: each call checks the session's event-type filter, reserves a
 * slot in the calling thread's ring and stores the fields into it with a
 * raw TSC timestamp.  No lock, no allocation, no system call, no I/O
 * (except a thread's very first record in a session, which attaches a ring
 * to the thread).  A few ns above the cost of the rdtsc it contains
 * (bench/bench_lib.sh prints both).  Async-signal-safe.
 */
#ifndef XPROBE_TRACE_H
#define XPROBE_TRACE_H

#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * xprobe_trace_record() - record a user event (type "user") with two
 * 64-bit payload words.
 * @user_type: caller-defined kind, recorded as is.
 * @a0: payload. @a1: payload.
 *
 * Return: 0 recorded; -XPROBE_E_NOT_ACTIVE (no recording session, or the
 * "user" type is filtered out); -XPROBE_E_EVENTS_DROPPED (the ring was
 * full, the thread has no ring, or the call interrupted a record of the
 * same thread; counted in the session's drops).
 */
XPROBE_API int xprobe_trace_record(uint32_t user_type, uint64_t a0, uint64_t a1);

/**
 * xprobe_trace_mark() - record an instant with a name (type "nvtx_mark",
 * as nvtxMarkA does).
 * @name: the name; at most XPROBE_NAME_MAX bytes are kept.
 *
 * Return: as xprobe_trace_record(); -XPROBE_E_INVALID_ARGUMENT for NULL.
 */
XPROBE_API int xprobe_trace_mark(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* XPROBE_TRACE_H */
