/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record.h - the record layout of libxprobe: what a host event ring holds,
 * what the record blobs of an .xtf file hold, and what
 * xprobe_inspect_fetch(XPROBE_FETCH_RECORDS) hands out.  One layout for all
 * three, so every consumer has one decoder (docs/xtf-format.md).
 *
 * A record is a 40-byte header followed by a type-specific tail:
 *   - named types (NVTX push/start/mark, executions, device activity): the
 *     name, name_len bytes (at most XPROBE_NAME_MAX), not NUL-terminated,
 *     zero-padded to a multiple of 8;
 *   - sample types (cpu, memory): a fixed struct (below);
 *   - every other type: nothing.
 * `size` is the whole record in bytes and always a multiple of 8, so a
 * stream is walked by adding `size`.  XPROBE_EV_PAD records (size >= 8,
 * only the first 4 bytes meaningful) fill the end of a ring before it wraps
 * and are skipped by readers.
 *
 * Little-endian, naturally aligned, no pointers.  Field order puts size and
 * type first so that an 8-byte pad is a valid record.  Timestamps are
 * CLOCK_MONOTONIC nanoseconds in files and fetched records; only a live ring
 * holds raw TSC values (converted at harvest, docs/xtf-format.md).
 */
#ifndef XPROBE_RECORD_H
#define XPROBE_RECORD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest name kept in a record; longer names are cut at this bound (on a
 * UTF-8 character boundary) and lose XPROBE_RECF_NAME_COMPLETE. */
#define XPROBE_NAME_MAX 127
#define XPROBE_RECORD_HDR_SIZE 40
/* Largest record: header + a full name, padded. */
#define XPROBE_RECORD_MAX_SIZE 168

/*
 * Host and device event types.  The names (xprobe_event_type_name) are the
 * per-event-type filter's vocabulary.  Append only.
 */
enum xprobe_event_type {
	XPROBE_EV_PAD = 0, /* ring filler; never an event */
	XPROBE_EV_NVTX_PUSH = 1, /* nvtxRangePushA/PushEx: name, aux = push level */
	XPROBE_EV_NVTX_POP = 2, /* nvtxRangePop: aux = level of the range ended */
	XPROBE_EV_NVTX_START = 3, /* nvtxRangeStartA/StartEx: name, a0 = range id */
	XPROBE_EV_NVTX_END = 4, /* nvtxRangeEnd: a0 = range id */
	XPROBE_EV_NVTX_MARK = 5, /* nvtxMarkA/MarkEx: name */
	XPROBE_EV_EXEC_BEGIN = 6, /* xprobe_execution_begin: name = model, a0 = execution id */
	XPROBE_EV_EXEC_END = 7, /* xprobe_execution_end: name = model, a0 = id, aux = (u32)status */
	XPROBE_EV_USER = 8, /* xprobe_trace_record: aux = user type, a0, a1 = payload */
	XPROBE_EV_SESSION_BEGIN = 9, /* session armed: a0 = caller's session id */
	XPROBE_EV_SESSION_END = 10, /* session stopping: a0 = session id, aux = signal (0 = none) */
	XPROBE_EV_SIGNAL = 11, /* fatal signal received: aux = signal number */
	XPROBE_EV_DEVICE_ACTIVITY = 12, /* device files only: name = activity, aux = device,
					  a0 = end ns, a1 = execution id (0 = none) */
	XPROBE_EV_CPU_SAMPLE = 13, /* cpu_util.pb only: struct xprobe_cpu_sample */
	XPROBE_EV_MEM_SAMPLE = 14, /* host_mem.pb only: struct xprobe_mem_sample */
	XPROBE_EV__COUNT
};

/* record flags */
#define XPROBE_RECF_NAME_COMPLETE 0x1u /* the whole name fit (named types) */
#define XPROBE_RECF_NAME_UNSUPPORTED \
	0x2u /* Ex form with a wide or registered message:
					   * range tracked for nesting, name not collected */
#define XPROBE_RECF__ALL 0x3u

struct xprobe_record {
	uint16_t size; /* @0 bytes of this record, tail included, multiple of 8 */
	uint16_t type; /* @2 enum xprobe_event_type */
	uint32_t tid; /* @4 thread that recorded (0 for device and sample records) */
	uint64_t ts; /* @8 CLOCK_MONOTONIC ns (raw TSC while in a live ring) */
	uint32_t aux; /* @16 type-specific (level, status, device, signal, user type) */
	uint16_t flags; /* @20 XPROBE_RECF_* */
	uint16_t name_len; /* @22 bytes of name after the header (named types), else 0 */
	uint64_t a0; /* @24 type-specific */
	uint64_t a1; /* @32 type-specific */
	/* @40: name bytes or a sample struct's tail */
};

/* XPROBE_EV_CPU_SAMPLE: ts = sample time. */
struct xprobe_cpu_sample {
	struct xprobe_record hdr; /* type CPU_SAMPLE, aux = online CPUs */
	uint64_t proc_user_ns; /* @40 process user time since boot of the process */
	uint64_t proc_system_ns; /* @48 process system time */
	uint64_t host_busy_ns; /* @56 machine non-idle time, all CPUs (/proc/stat) */
	uint64_t host_total_ns; /* @64 machine total time, all CPUs */
};

/* XPROBE_EV_MEM_SAMPLE: ts = sample time. */
struct xprobe_mem_sample {
	struct xprobe_record hdr; /* type MEM_SAMPLE */
	uint64_t proc_rss_bytes; /* @40 resident set (/proc/self/statm) */
	uint64_t proc_vm_bytes; /* @48 virtual size */
	uint64_t host_total_bytes; /* @56 MemTotal */
	uint64_t host_avail_bytes; /* @64 MemAvailable */
};

#ifndef __cplusplus
_Static_assert(sizeof(struct xprobe_record) == XPROBE_RECORD_HDR_SIZE, "record header");
_Static_assert(sizeof(struct xprobe_cpu_sample) == 72, "cpu sample");
_Static_assert(sizeof(struct xprobe_mem_sample) == 72, "mem sample");
#endif

#ifdef __cplusplus
}
#endif
#endif /* XPROBE_RECORD_H */
