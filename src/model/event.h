/* SPDX-License-Identifier: Apache-2.0 */
/*
 * event.h - the normalized event model and the capture that holds events.
 *
 * One struct xp_event is one observed boundary: a function entry, a syscall
 * exit, a GC start, a CUDA kernel start, an NVTX range end ...  Every
 * producer (the eBPF collectors, the Event JSONL and host-capture decoders,
 * the .xtf reader) turns what it reads into these, and every consumer (the
 * selectors, the correlator, the exporters, the result renderers) reads only
 * these.  The JSON form is the reference "Event" document (event.schema.json
 * in schemas/); field order in JSON follows the reference.
 *
 * Layout and memory.  An event is a fixed-size struct (about 230 bytes) with
 * its optional parts inline and a presence bitmask, so a capture is one
 * array; strings (paths, symbols, kernel and NVTX names, attribute and
 * argument values) are interned once per capture in a string table and an
 * event stores 32-bit ids (0 = JSON null).  A million-event capture of a
 * few distinct symbols therefore costs ~230 MB, under the 300 bytes per
 * retained event the foundation issue sets.
 *
 * Identity.  An event belongs to one process: pid plus, where known, the
 * process start time (clock ticks since boot, /proc/<pid>/stat field 22).
 * The session_id and event_id of decoded documents are checked and then
 * dropped: a capture is re-sequenced when merged, and event_id is always
 * "evt_<sequence>" of the emitting session.
 *
 * Attributes (a JSON object of anything) are kept as (key id, value id)
 * pairs whose value is the canonical compact JSON text of the value, so a
 * selector compares ids, not strings.  Arguments likewise.
 */
#ifndef XP_MODEL_EVENT_H
#define XP_MODEL_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

#define XP_SCHEMA_VERSION "2.0"
/* The public xprobe CLI contract this build implements (docs/contract.md):
 * `xprobe --version` says it, with XP_SCHEMA_VERSION. */
#define XP_CONTRACT_VERSION "0.4"

enum xp_source {
	XP_SRC_EBPF = 0,
	XP_SRC_CUPTI_CALLBACK,
	XP_SRC_CUPTI_ACTIVITY,
	XP_SRC_MARKER,
	XP_SRC__COUNT
};

/*
 * Order = the reference EventType enum, exactly: the contract's readers
 * reject any other value.  A USDT marker hit (CPython gc__start /
 * gc__done) is XP_EV_MARKER from source ebpf with host.probe_kind "usdt",
 * host.symbol the marker name and attributes.usdt_provider the provider;
 * libxprobe's own markers are XP_EV_MARKER from source marker.
 */
enum xp_event_type {
	XP_EV_HOST_FUNCTION_ENTRY = 0,
	XP_EV_HOST_FUNCTION_EXIT,
	XP_EV_KERNEL_FUNCTION_ENTRY,
	XP_EV_KERNEL_FUNCTION_EXIT,
	XP_EV_TRACEPOINT,
	XP_EV_SYSCALL_ENTRY,
	XP_EV_SYSCALL_EXIT,
	XP_EV_CUDA_API_ENTRY,
	XP_EV_CUDA_API_EXIT,
	XP_EV_GPU_KERNEL_START,
	XP_EV_GPU_KERNEL_END,
	XP_EV_GPU_MEMCPY_START,
	XP_EV_GPU_MEMCPY_END,
	XP_EV_GPU_MEMSET_START,
	XP_EV_GPU_MEMSET_END,
	XP_EV_NVTX_RANGE_START,
	XP_EV_NVTX_RANGE_END,
	XP_EV_MARKER,
	XP_EV__COUNT
};

enum xp_clock_domain {
	XP_CLOCK_HOST_MONOTONIC = 0,
	XP_CLOCK_CUPTI,
	XP_CLOCK_CUPTI_NORMALIZED, /* "cupti_normalized_to_host_monotonic" */
	XP_CLOCK__COUNT
};

enum xp_probe_kind {
	XP_PROBE_UPROBE = 0,
	XP_PROBE_URETPROBE,
	XP_PROBE_KPROBE,
	XP_PROBE_KRETPROBE,
	XP_PROBE_TRACEPOINT,
	XP_PROBE_SYSCALL,
	XP_PROBE_USDT,
	XP_PROBE__COUNT
};

enum xp_memcpy_kind {
	XP_MEMCPY_HTOD = 0,
	XP_MEMCPY_DTOH,
	XP_MEMCPY_DTOD,
	XP_MEMCPY_HTOH,
	XP_MEMCPY_PTOP,
	XP_MEMCPY_UNKNOWN,
	XP_MEMCPY__COUNT
};

enum xp_nvtx_range_kind {
	XP_NVTX_THREAD = 0,
	XP_NVTX_PROCESS,
	XP_NVTX__COUNT
};

/* enum <-> JSON string; *_parse return -1 for unknown text. */
const char *xp_source_name(unsigned v);
int xp_source_parse(const char *s, size_t n);
const char *xp_event_type_name(unsigned v);
int xp_event_type_parse(const char *s, size_t n);
const char *xp_clock_domain_name(unsigned v);
int xp_clock_domain_parse(const char *s, size_t n);
const char *xp_probe_kind_name(unsigned v);
int xp_probe_kind_parse(const char *s, size_t n);
const char *xp_memcpy_kind_name(unsigned v);
int xp_memcpy_kind_parse(const char *s, size_t n);
const char *xp_nvtx_range_kind_name(unsigned v);
int xp_nvtx_range_kind_parse(const char *s, size_t n);

/* Event presence flags (xp_event.flags). */
#define XP_EVF_CPU (1u << 0)       /* cpu valid */
#define XP_EVF_TS_ERROR (1u << 1)  /* timestamp_error_ns valid */
#define XP_EVF_START_TIME (1u << 2) /* process_start_time valid */
#define XP_EVF_HOST (1u << 3)      /* host part present (else JSON null) */
#define XP_EVF_CUDA (1u << 4)      /* cuda part present */
#define XP_EVF_NVTX (1u << 5)      /* nvtx part present */

/* Host part presence flags (xp_host_part.flags). */
#define XP_HOSTF_OFFSET (1u << 0)
#define XP_HOSTF_RETURN_VALUE (1u << 1)

struct xp_host_part {
	uint64_t offset;       /* file offset (+0x selectors); XP_HOSTF_OFFSET */
	int64_t return_value;  /* syscall exit; XP_HOSTF_RETURN_VALUE */
	xp_str_t binary_path;  /* canonical path, 0 = null */
	xp_str_t build_id;     /* lowercase hex, 0 = null */
	xp_str_t symbol;       /* mangled ELF name / syscall / tracepoint / USDT name */
	xp_str_t symbol_demangled;
	uint32_t args_first;   /* index into capture->args */
	uint16_t args_count;   /* 0 = [] */
	uint8_t probe_kind;    /* enum xp_probe_kind */
	uint8_t flags;         /* XP_HOSTF_* */
};

/* CUDA part presence flags (xp_cuda_part.flags): one bit per optional field. */
#define XP_CUDAF_DEVICE_ID (1u << 0)
#define XP_CUDAF_CONTEXT_ID (1u << 1)
#define XP_CUDAF_STREAM_ID (1u << 2)
#define XP_CUDAF_CORRELATION_ID (1u << 3)
#define XP_CUDAF_RUNTIME_CORRELATION_ID (1u << 4)
#define XP_CUDAF_CALLBACK_DOMAIN (1u << 5)
#define XP_CUDAF_CALLBACK_ID (1u << 6)
#define XP_CUDAF_START_NS (1u << 7)
#define XP_CUDAF_END_NS (1u << 8)
#define XP_CUDAF_GRID (1u << 9)
#define XP_CUDAF_BLOCK (1u << 10)
#define XP_CUDAF_BYTES (1u << 11)
#define XP_CUDAF_MEMCPY_KIND (1u << 12)

struct xp_dim3 {
	uint32_t x, y, z;
};

struct xp_cuda_part {
	uint64_t stream_id;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;
	uint32_t device_id;
	uint32_t context_id;
	uint32_t correlation_id;
	uint32_t runtime_correlation_id;
	uint32_t callback_domain;
	uint32_t callback_id;
	struct xp_dim3 grid;
	struct xp_dim3 block;
	xp_str_t kernel_name;        /* 0 = null */
	xp_str_t kernel_name_mangled; /* 0 = null */
	uint16_t flags;              /* XP_CUDAF_* */
	uint8_t memcpy_kind;         /* enum xp_memcpy_kind; XP_CUDAF_MEMCPY_KIND */
};

struct xp_nvtx_part {
	uint64_t range_id;
	xp_str_t name;
	uint32_t start_tid;
	uint8_t range_kind;    /* enum xp_nvtx_range_kind */
	uint8_t name_complete; /* bool */
};

struct xp_event {
	uint64_t sequence;           /* 0-based index in timestamp order after merge */
	uint64_t timestamp_ns;       /* in clock_domain */
	uint64_t timestamp_raw;
	uint64_t timestamp_error_ns; /* XP_EVF_TS_ERROR */
	uint64_t process_start_time; /* XP_EVF_START_TIME */
	uint32_t pid;                /* as seen in the target's PID namespace */
	uint32_t tid;
	uint32_t cpu;                /* XP_EVF_CPU */
	uint32_t attrs_first;        /* index into capture->attrs */
	uint16_t attrs_count;        /* 0 = {} */
	uint8_t source;              /* enum xp_source */
	uint8_t event_type;          /* enum xp_event_type */
	uint8_t clock_domain;        /* enum xp_clock_domain */
	uint8_t flags;               /* XP_EVF_* */
	uint16_t input;              /* which --input it came from (0-based) */
	struct xp_host_part host;
	struct xp_cuda_part cuda;
	struct xp_nvtx_part nvtx;
};

/* One attribute: key and canonical compact JSON value text. */
struct xp_attr {
	xp_str_t key;
	xp_str_t value; /* JSON text, e.g. "\"syscalls\"" or "5" */
};

/* One ArgumentValue. */
struct xp_arg {
	xp_str_t abi_type;
	xp_str_t value;      /* JSON text; 0 = null */
	xp_str_t read_error; /* 0 = null */
	uint16_t index;
};

/*
 * What the Agent said about its capture (collection.cupti): its capacity
 * (--max-events), the records it admitted (its own units: one activity
 * record holds a start and an end) and lost.  The contract's counters are
 * in events: retained = the capture's CUDA events, observed = retained +
 * dropped (render_measurement.c).
 */
struct xp_cupti_summary {
	bool present;
	uint64_t record_capacity;
	uint64_t observed_records;
	uint64_t dropped_records;
};

/*
 * A bounded capture: the events of one target, with the tables they point
 * into.  max_events bounds how many events may be added: xp_capture_add()
 * refuses the (max_events+1)-th with -E2BIG so memory follows the bound.
 */
struct xp_capture {
	struct xp_event *events;
	size_t count;
	size_t cap;
	size_t max_events;          /* 0 = unbounded (tests only) */
	struct xp_strtab strings;   /* every xp_str_t of this capture */
	struct xp_attr *attrs;
	size_t nattrs, attrs_cap;
	struct xp_arg *args;
	size_t nargs, args_cap;
	uint64_t dropped;           /* records the producers lost */
	uint64_t unknown_records;   /* records a producer could not interpret */
	bool record_limit_reached;  /* a producer stopped at its bound */
	bool has_pid;               /* pid below is set (first event or target) */
	uint32_t pid;
	bool has_start_time;
	uint64_t process_start_time;
	struct xp_cupti_summary cupti;
	size_t events_map_len;      /* events is an mmap reservation of this size */
	uint64_t duplicates_dropped; /* events identical to one of another input */
};

/*
 * Whether @a and @b of @c are the same event in every field (their
 * strings, arguments and attributes compared by value; sequence and
 * input aside).
 */
bool xp_event_same(const struct xp_capture *c, const struct xp_event *a, const struct xp_event *b);
/*
 * After xp_capture_sort_and_sequence: drop each event identical in every
 * field to an earlier one from another input (the same capture given
 * twice, or two captures that overlap), renumbering the rest; the count
 * goes to c->duplicates_dropped.
 */
void xp_capture_drop_duplicates(struct xp_capture *c);

void xp_capture_init(struct xp_capture *c, size_t max_events);
/* Events of @c not from the host (source other than ebpf): the contract's
 * collection.cuda_events. */
uint64_t xp_capture_cuda_events(const struct xp_capture *c);
void xp_capture_free(struct xp_capture *c);
/*
 * Append a zeroed event and return it, or NULL with *err set to -E2BIG
 * (max_events reached) or -ENOMEM.
 */
struct xp_event *xp_capture_add(struct xp_capture *c, int *err);
/* Drop the last event added (a decoder that rejected it half-way). */
void xp_capture_pop(struct xp_capture *c);

/* Intern helpers (0 = NULL in, or allocation failure: check strtab.failed). */
static inline xp_str_t xp_capture_intern(struct xp_capture *c, const char *s)
{
	return s ? xp_strtab_intern(&c->strings, s, __builtin_strlen(s)) : 0;
}
static inline xp_str_t xp_capture_intern_n(struct xp_capture *c, const char *s, size_t n)
{
	return xp_strtab_intern(&c->strings, s, n);
}
static inline const char *xp_capture_str(const struct xp_capture *c, xp_str_t id)
{
	return xp_strtab_get(&c->strings, id);
}

/* Append attributes/arguments to the tables; the caller links them to an
 * event via attrs_first/attrs_count (args_first/args_count).  Return the
 * index of the new entry or -ENOMEM. */
long xp_capture_add_attr(struct xp_capture *c, xp_str_t key, xp_str_t value);
long xp_capture_add_arg(struct xp_capture *c, const struct xp_arg *a);
/* Attribute value id of @key on @e, 0 when absent. */
xp_str_t xp_event_attr(const struct xp_capture *c, const struct xp_event *e, xp_str_t key);
/* Convenience: set a string-valued attribute on the last-added event e
 * (attributes of one event must be added contiguously). */
int xp_event_add_attr_str(struct xp_capture *c, struct xp_event *e, const char *key,
			  const char *value);
int xp_event_add_attr_u64(struct xp_capture *c, struct xp_event *e, const char *key,
			  uint64_t value);

/* Host-side events (source ebpf) vs CUDA ones, as collection counts them. */
static inline bool xp_event_is_host(const struct xp_event *e)
{
	return e->source == XP_SRC_EBPF;
}

/*
 * Stable sort by timestamp_ns, then renumber sequence 0..n-1 (the merge
 * rule of completed captures and live collection alike).
 */
int xp_capture_sort_and_sequence(struct xp_capture *c);

/*
 * Merge @src into @dst (both bounded by dst->max_events): strings,
 * attributes and arguments are re-interned, drop counters summed,
 * record_limit_reached OR-ed.  Target check: every event must share one
 * pid, else -EINVAL and *mixed_pid set to the offending pid.  Does not sort.
 */
int xp_capture_merge(struct xp_capture *dst, const struct xp_capture *src, uint32_t *mixed_pid);

#endif /* XP_MODEL_EVENT_H */
