/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record_events.h - libxprobe's records (include/xprobe/record.h) as
 * events: the one mapping behind both ways records reach the CLI, .xtf
 * files and session directories (decode_xtf.c) and the Agent's control
 * socket (decode_agent.c), so an NVTX range is the same event whichever
 * way it came.  The mapping itself is documented in record_events.c.
 *
 * The mapper keeps what spans records: each thread's push stack (a pop
 * takes its push's name and range id) and the open process ranges (an end,
 * possibly on another thread, takes its start's name and thread).  Two
 * ways to learn process range starts:
 *   - starts_first (files): the caller registers every start of a file
 *     with xp_rec_map_proc_start() before mapping its streams, since the
 *     ending thread's stream may come before the starting one's; ranges
 *     stay known after their end;
 *   - otherwise (the socket, records in commit order): a start record
 *     registers its range as it is mapped and the end removes it, so an
 *     end in a later snapshot than its start still finds it and the table
 *     holds only open ranges.
 *
 * Records must already be well-formed (the xtf reader's checks, or
 * decode_agent.c's): name_len <= XPROBE_NAME_MAX and within the record.
 */
#ifndef XP_CAPTURE_RECORD_EVENTS_H
#define XP_CAPTURE_RECORD_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xprobe/record.h"

#include "../model/event.h"

struct xp_rec_thread; /* record_events.c */
struct xp_rec_proc;

struct xp_rec_map {
	struct xp_capture *c; /* events go here */
	uint32_t pid; /* every event's pid */
	uint64_t start_time; /* process start time (ticks), 0 = unknown */
	const char *backend; /* device records: attributes.backend */
	bool simulated; /* device records: attributes.simulated */
	/*
	 * Clock of the CUDA activity events (enum xp_clock_domain):
	 * cupti_normalized_to_host_monotonic while the capture's activity
	 * times are CLOCK_MONOTONIC-normalized (XPROBE_AGENT_F_HOST_MONOTONIC,
	 * a session file of the cupti backend), else cupti, so the correlator
	 * refuses to subtract them from host times.  xp_rec_map_init sets the
	 * normalized one.
	 */
	uint8_t activity_clock;
	bool starts_first; /* see the header comment */
	uint64_t observed; /* events produced, kept or not */
	bool full; /* the capture's bound was reached: count only */
	/*
	 * How a failure is reported: called with what went wrong ("out of
	 * memory", "NVTX push level above 4096"), fills the caller's error
	 * and returns its negative code.
	 */
	int (*fail)(void *ctx, const char *what);
	void *fail_ctx;
	/* state */
	struct xp_rec_thread *ts;
	size_t nts, cap_ts;
	struct xp_rec_proc *pr; /* open addressing on the range id */
	size_t npr, cap_pr; /* used slots, slots (0 or a power of two) */
};

/* Zero @m and set the capture, pid, start time and failure callback. */
void xp_rec_map_init(struct xp_rec_map *m, struct xp_capture *c, uint32_t pid, uint64_t start_time,
		     int (*fail)(void *ctx, const char *what), void *fail_ctx);
void xp_rec_map_free(struct xp_rec_map *m);

/* Forget every registered process range (a new file of a session). */
void xp_rec_map_proc_reset(struct xp_rec_map *m);
/* Register the process range an NVTX start record begins (starts_first). */
int xp_rec_map_proc_start(struct xp_rec_map *m, const struct xprobe_record *r);

/* One host record (NVTX, marks, executions, user, session, signal, CUDA
 * API entry/exit) -> zero, one event; a CUDA activity record -> two (as
 * xp_rec_map_device); types it does not map count in c->unknown_records. */
int xp_rec_map_host(struct xp_rec_map *m, const struct xprobe_record *r);
/* One device record -> its start and end events: CUDA kernel / memcpy /
 * memset records (struct xprobe_cuda_activity, already checked: the tail
 * is within the record) as gpu_*_start / gpu_*_end, device activity of
 * other backends as markers. */
int xp_rec_map_device(struct xp_rec_map *m, const struct xprobe_record *r);

/* "runtime_api", "driver_api", "unknown": attributes.cuda_api_domain of
 * a CUDA API record's domain (record.h XPROBE_CUDA_DOMAIN_*). */
const char *xp_rec_cuda_domain_name(uint64_t domain);
/* enum xp_memcpy_kind of agent.h's enum xprobe_agent_memcpy_kind
 * (0 and anything unknown: XP_MEMCPY_UNKNOWN). */
uint8_t xp_rec_memcpy_kind(uint32_t agent_kind);

#endif /* XP_CAPTURE_RECORD_EVENTS_H */
