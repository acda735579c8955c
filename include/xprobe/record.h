/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record.h - the record layout of libxprobe: what a host event ring holds,
 * what the record blobs of an .xtf file hold, and what
 * xprobe_inspect_fetch(XPROBE_FETCH_RECORDS) hands out.  One layout for all
 * three, so every consumer has one decoder (docs/xtf-format.md).
 *
 * A record is a 40-byte header followed by a type-specific tail:
 *   - named types (NVTX push/start/mark, executions, device activity, CUDA
 *     API calls): the name, name_len bytes (at most XPROBE_NAME_MAX), not
 *     NUL-terminated, zero-padded to a multiple of 8;
 *   - sample types (cpu, memory): a fixed struct (below);
 *   - CUDA activity (kernel, memcpy, memset): a fixed struct (struct
 *     xprobe_cuda_activity), then the kernel's name as for named types
 *     (memcpy and memset records have none);
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
/* Largest record: a CUDA kernel record (header + struct xprobe_cuda_activity
 * tail) with a full name, padded: 104 + 128.  Readers size their copy
 * buffers with it; every record type fits. */
#define XPROBE_RECORD_MAX_SIZE 232
/* Largest record of the types without a fixed tail: header + a full name. */
#define XPROBE_RECORD_NAMED_MAX_SIZE 168

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
	/*
	 * The CUDA types of the CUPTI device backend (docs/agent.md, "The
	 * CUPTI backend").  API records exist only in Agent captures;
	 * activity records in Agent captures and in device-profile files of
	 * sessions with backend "cupti".
	 */
	XPROBE_EV_CUDA_API_ENTRY = 15, /* a CUDA API call entered (CUPTI callback, site enter):
					  tid = calling thread, ts = entry, name = the API
					  function (cuptiGetCallbackName, a trailing _v<N>
					  stripped), aux = CUPTI callback id, a0 = CUPTI
					  correlation id, a1 = domain (XPROBE_CUDA_DOMAIN_*),
					  | the call's context id << 32 when flagged
					  XPROBE_RECF_CONTEXT */
	XPROBE_EV_CUDA_API_EXIT = 16, /* the same call returned: the same fields, ts = exit */
	XPROBE_EV_CUDA_KERNEL = 17, /* struct xprobe_cuda_activity + name = the kernel */
	XPROBE_EV_CUDA_MEMCPY = 18, /* struct xprobe_cuda_activity, no name */
	XPROBE_EV_CUDA_MEMSET = 19, /* struct xprobe_cuda_activity, no name */
	XPROBE_EV__COUNT
};

/* record flags */
#define XPROBE_RECF_NAME_COMPLETE 0x1u /* the whole name fit (named types) */
#define XPROBE_RECF_NAME_UNSUPPORTED \
	0x2u /* Ex form with a wide or registered message:
					   * range tracked for nesting, name not collected */
#define XPROBE_RECF_CONTEXT \
	0x4u /* CUDA API records: a1's high 32 bits are CUPTI's context id of the
	      * call (contextUid, the id its activity records name) */
#define XPROBE_RECF__ALL 0x7u

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

/* API domains of XPROBE_EV_CUDA_API_* records (a1); the values of agent.h's
 * enum xprobe_agent_api_domain. */
#define XPROBE_CUDA_DOMAIN_DRIVER 1u
#define XPROBE_CUDA_DOMAIN_RUNTIME 2u
/* A device, context or stream id CUPTI did not know. */
#define XPROBE_CUDA_UNKNOWN 0xffffffffu

/*
 * XPROBE_EV_CUDA_KERNEL / _MEMCPY / _MEMSET: one device activity as CUPTI
 * reported it, timestamps normalized to CLOCK_MONOTONIC ns (whether the
 * normalization held is the capture's XPROBE_AGENT_F_HOST_MONOTONIC, or the
 * file's clock).  size = 104 + the kernel name rounded up to 8 (exactly 104
 * for memcpy and memset: name_len 0, no flags); every byte not named here
 * is zero.
 *
 * Header fields: tid 0; ts = start; aux = device id (XPROBE_CUDA_UNKNOWN
 * when CUPTI gave none); flags = XPROBE_RECF_NAME_COMPLETE on a kernel
 * whose whole name fit; name_len = kernel name bytes (0..127; 0 for
 * memcpy/memset); a0 = end (>= ts); a1 = the execution id a session
 * attributed it to (device-profile files; 0 = none, and always 0 in
 * Agent captures).
 *
 * Correlation: correlation_id is CUPTI's correlation id of the activity,
 * equal to a0 of the XPROBE_EV_CUDA_API_* records of the API call that
 * launched it (for kernels that call's, runtime or driver; for memcpy the
 * driver call's); runtime_correlation_id (memcpy only) the runtime call's.
 */
struct xprobe_cuda_activity {
	struct xprobe_record hdr;
	uint64_t bytes; /* @40 memcpy/memset: bytes; kernel: 0 */
	uint32_t context_id; /* @48 CUDA context id, XPROBE_CUDA_UNKNOWN unknown */
	uint32_t stream_id; /* @52 stream id, XPROBE_CUDA_UNKNOWN unknown */
	uint32_t correlation_id; /* @56 0 = none */
	uint32_t runtime_correlation_id; /* @60 memcpy: the runtime API call's; else 0 */
	uint32_t memcpy_kind; /* @64 memcpy: enum xprobe_agent_memcpy_kind (agent.h),
				 0 = none of HtoD/DtoH/DtoD/HtoH/PtoP; else 0 */
	uint32_t raw_copy_kind; /* @68 memcpy: CUPTI's CUpti_ActivityMemcpyKind as reported */
	uint32_t memset_value; /* @72 memset: the value set; else 0 */
	uint32_t grid_x, grid_y, grid_z; /* @76 kernel: grid dimensions; else 0 */
	uint32_t block_x, block_y, block_z; /* @88 kernel: block dimensions; else 0 */
	uint32_t reserved; /* @100 zero */
	/* @104: the kernel name (name_len bytes), zero-padded to 8 */
};
#define XPROBE_CUDA_ACTIVITY_SIZE 104

#ifndef __cplusplus
_Static_assert(sizeof(struct xprobe_record) == XPROBE_RECORD_HDR_SIZE, "record header");
_Static_assert(sizeof(struct xprobe_cuda_activity) == XPROBE_CUDA_ACTIVITY_SIZE, "cuda activity");
_Static_assert(XPROBE_CUDA_ACTIVITY_SIZE + XPROBE_NAME_MAX + 1 == XPROBE_RECORD_MAX_SIZE,
	       "largest record");
_Static_assert(sizeof(struct xprobe_cpu_sample) == 72, "cpu sample");
_Static_assert(sizeof(struct xprobe_mem_sample) == 72, "mem sample");
#endif

#ifdef __cplusplus
}
#endif
#endif /* XPROBE_RECORD_H */
