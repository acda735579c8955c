/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent.h - the Agent's wire ABI: how `xprobe measure` drives libxprobe
 * inside a target over its control socket (docs/agent.md).  Both sides
 * include this header and nothing else of each other: libxprobe serves it
 * (lib/agent/), the CLI speaks it (src/agent/agent_client.c) and decodes
 * its captures (src/capture/decode_agent.c).
 *
 * Transport.  One AF_UNIX SOCK_SEQPACKET socket per process, created when
 * libxprobe initializes (NVTX injection, LD_PRELOAD, linking, or online
 * injection) and idle until ARM:
 *
 *   <runtime dir>/agent-<pid>-<start time>.sock
 *
 * where <runtime dir> is XPROBE_AGENT_DIR_FMT with the process's effective uid
 * (a directory owned by that uid, mode 0700, never a link), <pid> the
 * process's PID as it sees itself and <start time> field 22 of its
 * /proc/self/stat, so a reused PID never reaches another process's Agent.
 * The CLI reaches a target in another mount namespace through
 * /proc/<pid>/root.  Peers are checked with SO_PEERCRED: the target's uid
 * or root; anyone else is refused before a byte is read.
 *
 * Messages.  Every request is one packet holding exactly one struct
 * xprobe_agent_req (size checked, magic and version checked, reserved
 * fields zero).  Every reply is one packet holding a struct
 * xprobe_agent_reply, followed, for SNAPSHOT and STOP, by
 * reply.nchunks packets of records (struct xprobe_record stream, the
 * layout of include/xprobe/record.h, at most XPROBE_AGENT_CHUNK_MAX bytes
 * each, whole records only, timestamps in CLOCK_MONOTONIC ns).  In
 * MODE_AGGREGATE the packets hold groups instead (struct
 * xprobe_agent_group, fixed size, whole groups only), and in
 * MODE_HISTOGRAM histograms (struct xprobe_agent_hist, the total first).  A
 * malformed request gets a reply with status -XPROBE_E_INVALID_ARGUMENT
 * and changes nothing.  One connection drives one capture: if it closes
 * while armed, the Agent disarms (within 100 ms) and the capture is gone.
 *
 * Everything is native-endian (x86_64 little-endian), naturally aligned,
 * fixed-size; no pointers.
 */
#ifndef XPROBE_AGENT_H
#define XPROBE_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "latency_buckets.h"
#include "record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Control protocol version; a request of another version is refused. */
#define XPROBE_AGENT_PROTO_VERSION 1u
#define XPROBE_AGENT_REQ_MAGIC "XPAGREQ" /* 8 bytes with the NUL */
#define XPROBE_AGENT_REPLY_MAGIC "XPAGREP"

/* Runtime directory (printf format, one unsigned: the effective uid). */
#define XPROBE_AGENT_DIR_FMT "/tmp/xprobe-agent-%u"
/* Socket name inside it (printf: pid, start time in clock ticks). */
#define XPROBE_AGENT_SOCK_FMT "agent-%u-%llu.sock"

/* Largest record packet that follows a reply. */
#define XPROBE_AGENT_CHUNK_MAX (64u * 1024u)
/* Largest capacity an ARM may ask for (records or groups). */
#define XPROBE_AGENT_CAPACITY_MAX (16u * 1024u * 1024u)
#define XPROBE_AGENT_MAX_FILTERS 2

enum xprobe_agent_op {
	XPROBE_AGENT_OP_HELLO = 1, /* versions and features; changes nothing */
	XPROBE_AGENT_OP_ARM = 2, /* begin a bounded capture with filters */
	XPROBE_AGENT_OP_SNAPSHOT = 3, /* records from req.offset on, capture goes on */
	XPROBE_AGENT_OP_STOP = 4, /* disarm; the final records from req.offset on */
	XPROBE_AGENT_OP_CLOSE = 5, /* STOP if armed; an injected Agent removes its socket */
};

enum xprobe_agent_mode {
	XPROBE_AGENT_MODE_EXACT = 0, /* every admitted record, up to capacity */
	XPROBE_AGENT_MODE_AGGREGATE = 1, /* device activity grouped (CUPTI backend):
					    capacity = groups; replies carry
					    struct xprobe_agent_group */
	XPROBE_AGENT_MODE_HISTOGRAM = 2, /* pairs formed in the target, each latency
					    counted into log-linear buckets:
					    capacity = groups (--max-groups),
					    req.by the grouping, req.offset at ARM
					    the in-flight slots (--max-inflight);
					    replies carry struct xprobe_agent_hist */
};

/*
 * What a HISTOGRAM capture groups its pairs by (req.by at ARM).  NAME: the
 * range's (push or start) or the kernel's name, kept bytes and
 * completeness (the name_complete rule of AGGREGATE); THREAD: the thread
 * id of the pair's start (as the target's PID namespace numbers it);
 * STREAM: the CUDA stream id of an activity; DEVICE: its device id.
 */
enum xprobe_agent_hist_by {
	XPROBE_AGENT_BY_NONE = 0, /* the total only */
	XPROBE_AGENT_BY_NAME = 1,
	XPROBE_AGENT_BY_THREAD = 2,
	XPROBE_AGENT_BY_STREAM = 3, /* activity kinds only */
	XPROBE_AGENT_BY_DEVICE = 4, /* activity kinds only */
	XPROBE_AGENT_BY__COUNT
};

/* Largest in-flight table a HISTOGRAM ARM may ask for (req.offset). */
#define XPROBE_AGENT_INFLIGHT_MAX 65536u
/* Largest group table of a HISTOGRAM capture (8 KiB a group). */
#define XPROBE_AGENT_HIST_GROUPS_MAX 16384u

/*
 * What a filter admits.  NVTX ranges: push/pop (thread ranges) and
 * start/end (process ranges) whose start name passes the name rule; the
 * end of an admitted range is admitted with it, the end of a range that
 * began before ARM or was not admitted never is.  The CUDA kinds are the
 * device backend's (docs/agent.md); without a backend an ARM naming one
 * fails with -XPROBE_E_BACKEND_UNAVAILABLE.
 *
 * CUDA_API: entry and exit records (XPROBE_EV_CUDA_API_*) of the calls whose
 * callback name (CUPTI's, a trailing _v<N> stripped) passes the name rule,
 * in api_domain (ANY: driver and runtime); the ARM fails when no callback
 * of the domain passes.  KERNEL: kernel records whose name passes the name
 * rule (as for NVTX: exact on the whole name, prefix/contains on the bytes
 * kept, suffix on a whole name).  MEMCPY: memcpy records of memcpy_kind
 * (ANY: every one).  MEMSET: every memset record.  Activity that began
 * before ARM is never admitted.
 */
enum xprobe_agent_kind {
	XPROBE_AGENT_KIND_NONE = 0, /* unused filter slot: admits nothing */
	XPROBE_AGENT_KIND_NVTX_RANGE = 1,
	XPROBE_AGENT_KIND_CUDA_API = 2, /* api_domain, name = API function name */
	XPROBE_AGENT_KIND_KERNEL = 3, /* name rule on the kernel name */
	XPROBE_AGENT_KIND_MEMCPY = 4, /* memcpy_kind */
	XPROBE_AGENT_KIND_MEMSET = 5,
	XPROBE_AGENT_KIND__COUNT
};

enum xprobe_agent_api_domain {
	XPROBE_AGENT_API_ANY = 0,
	XPROBE_AGENT_API_DRIVER = 1,
	XPROBE_AGENT_API_RUNTIME = 2,
};

enum xprobe_agent_memcpy_kind {
	XPROBE_AGENT_MEMCPY_ANY = 0,
	XPROBE_AGENT_MEMCPY_HTOD = 1,
	XPROBE_AGENT_MEMCPY_DTOH = 2,
	XPROBE_AGENT_MEMCPY_DTOD = 3,
	XPROBE_AGENT_MEMCPY_HTOH = 4,
	XPROBE_AGENT_MEMCPY_PTOP = 5,
};

/* The name rule (the selector parser reduces a name~REGEX to one of these). */
enum xprobe_agent_name_match {
	XPROBE_AGENT_NAME_ANY = 0,
	XPROBE_AGENT_NAME_EXACT = 1,
	XPROBE_AGENT_NAME_PREFIX = 2,
	XPROBE_AGENT_NAME_SUFFIX = 3,
	XPROBE_AGENT_NAME_CONTAINS = 4,
};

struct xprobe_agent_filter {
	uint32_t kind; /* @0 enum xprobe_agent_kind */
	uint32_t api_domain; /* @4 enum xprobe_agent_api_domain (CUDA_API) */
	uint32_t memcpy_kind; /* @8 enum xprobe_agent_memcpy_kind (MEMCPY) */
	uint32_t name_match; /* @12 enum xprobe_agent_name_match */
	uint32_t name_len; /* @16 bytes of name, < XPROBE_NAME_MAX + 1; 0 with NAME_ANY */
	uint32_t reserved; /* @20 zero */
	char name[XPROBE_NAME_MAX + 1]; /* @24 name_len bytes, then zeros */
};

struct xprobe_agent_req {
	char magic[8]; /* @0 XPROBE_AGENT_REQ_MAGIC */
	uint32_t version; /* @8 XPROBE_AGENT_PROTO_VERSION */
	uint32_t op; /* @12 enum xprobe_agent_op */
	uint32_t size; /* @16 sizeof(struct xprobe_agent_req) */
	uint32_t mode; /* @20 ARM: enum xprobe_agent_mode; else 0 */
	uint64_t capacity; /* @24 ARM: 1..XPROBE_AGENT_CAPACITY_MAX records (groups); else 0 */
	uint64_t offset; /* @32 SNAPSHOT/STOP: first record wanted (index since ARM);
			    ARM of MODE_HISTOGRAM: in-flight slots,
			    1..XPROBE_AGENT_INFLIGHT_MAX; other ARMs 0 */
	uint32_t nfilters; /* @40 ARM: 1..XPROBE_AGENT_MAX_FILTERS; else 0 */
	uint32_t by; /* @44 ARM of MODE_HISTOGRAM: enum xprobe_agent_hist_by; else 0
			(was `reserved`: every older request has 0 here) */
	struct xprobe_agent_filter filters[XPROBE_AGENT_MAX_FILTERS]; /* @48 */
};

/*
 * Features (reply.features): what this Agent can do now.
 * HOST_MONOTONIC: every timestamp of the capture is CLOCK_MONOTONIC ns.
 * Host records (NVTX, CUDA API) always are; CUDA activity records are
 * normalized by the CUPTI backend (its timestamp callback, or an offset
 * calibrated at ARM), and the flag is cleared for the whole capture as soon
 * as one admitted activity record fails the backend's sanity check (a start
 * outside [ARM - 1 s, now + 1 s], or a kernel that starts over 1 ms before
 * the API entry with its correlation id): then activity times may only be
 * compared with each other, never with host times.
 */
#define XPROBE_AGENT_F_NVTX_ROUTED 0x1u /* NVTX calls reach libxprobe (injection active) */
#define XPROBE_AGENT_F_DEVICE_BACKEND 0x2u /* the CUDA device backend (CUPTI) is loaded:
					      cuda_major, cupti_major are set */
#define XPROBE_AGENT_F_HOST_MONOTONIC 0x4u /* record timestamps are CLOCK_MONOTONIC (above) */
#define XPROBE_AGENT_F_INJECTED 0x8u /* loaded by online injection (CLOSE removes the socket) */
#define XPROBE_AGENT_F__ALL 0xfu

enum xprobe_agent_state {
	XPROBE_AGENT_IDLE = 0, /* no capture armed */
	XPROBE_AGENT_ACTIVE = 1, /* armed and admitting */
	XPROBE_AGENT_LIMIT_REACHED = 2, /* capacity full: frozen, further records refused */
	XPROBE_AGENT_STOPPED = 3, /* STOP or CLOSE ended it */
	XPROBE_AGENT_FAILED = 4, /* ARM could not be honoured (see status, message) */
};

enum xprobe_agent_stop_reason {
	XPROBE_AGENT_STOP_NONE = 0,
	XPROBE_AGENT_STOP_REQUESTED = 1,
	XPROBE_AGENT_STOP_RECORD_LIMIT = 2,
	XPROBE_AGENT_STOP_BACKEND_ERROR = 3,
};

struct xprobe_agent_reply {
	char magic[8]; /* @0 XPROBE_AGENT_REPLY_MAGIC */
	uint32_t version; /* @8 XPROBE_AGENT_PROTO_VERSION */
	uint32_t op; /* @12 the request's op */
	uint32_t size; /* @16 sizeof(struct xprobe_agent_reply) */
	int32_t status; /* @20 0, or -XPROBE_E_* (message says why) */
	uint32_t features; /* @24 XPROBE_AGENT_F_* */
	uint32_t state; /* @28 enum xprobe_agent_state after the request */
	uint32_t stop_reason; /* @32 enum xprobe_agent_stop_reason */
	uint32_t pid; /* @36 the Agent's process, as it sees itself */
	uint64_t start_time; /* @40 its /proc/self/stat start time (ticks) */
	uint32_t cuda_major; /* @48 CUDA runtime major the backend sees, 0 none */
	uint32_t cupti_major; /* @52 CUPTI major the backend uses, 0 none */
	uint64_t arm_ns; /* @56 CLOCK_MONOTONIC at ARM; 0 when never armed */
	uint64_t capacity; /* @64 records (groups) the capture holds */
	uint64_t observed; /* @72 records (aggregate: activities) that passed the
			      filters while armed */
	uint64_t retained; /* @80 records held (aggregate: groups in use), <= capacity */
	uint64_t dropped; /* @88 records (activities) admitted but lost: no slot, a
			     full group table, CUPTI's dropped records */
	uint64_t unknown; /* @96 records the Agent could not interpret (malformed NVTX
			     attributes, CUPTI activity kinds it does not read) */
	uint64_t offset; /* @104 index of the first record (group) that follows */
	uint64_t nrecords; /* @112 records (groups) that follow */
	uint64_t bytes; /* @120 bytes of the record packets that follow */
	uint32_t nchunks; /* @128 record packets that follow */
	uint32_t mode; /* @132 enum xprobe_agent_mode of the capture the counters
			  describe (0 with none; was `reserved`, always 0
			  before MODE_HISTOGRAM) */
	char message[256]; /* @136 NUL-terminated; an error's reason, else empty */
};

/*
 * One group of an aggregate capture (MODE_AGGREGATE; docs/agent.md,
 * "Aggregate captures"): the device activities of one key (kind, device,
 * memcpy kind, kernel name bytes and completeness) seen while armed.
 * SNAPSHOT and STOP send groups [offset, groups in use) in the order their
 * first activity was grouped, each with its totals as of the reply (a group
 * sent before may have grown since: read from offset 0 for the totals).
 * Durations are end - start of CLOCK_MONOTONIC-normalized times (a
 * difference, so valid whatever XPROBE_AGENT_F_HOST_MONOTONIC says).  A
 * full table makes the capture LIMIT_REACHED (stop_reason RECORD_LIMIT):
 * activities of a new key are then counted in dropped; existing groups
 * still grow.  Every byte not named here is zero.
 */
struct xprobe_agent_group {
	uint64_t count; /* @0 activities in the group, >= 1 */
	uint64_t total_ns; /* @8 sum of their durations */
	uint64_t min_ns; /* @16 shortest duration (<= total_ns / count) */
	uint64_t max_ns; /* @24 longest duration (>= total_ns / count) */
	uint64_t bytes; /* @32 MEMCPY, MEMSET: sum of their bytes; KERNEL: 0 */
	uint32_t kind; /* @40 XPROBE_AGENT_KIND_KERNEL, _MEMCPY or _MEMSET */
	uint32_t device; /* @44 device id; XPROBE_CUDA_UNKNOWN when CUPTI gave none */
	uint32_t memcpy_kind; /* @48 MEMCPY: enum xprobe_agent_memcpy_kind (0: another
				 kind); else 0 */
	uint16_t flags; /* @52 KERNEL: XPROBE_RECF_NAME_COMPLETE when the whole name fit
			   (a name of 128 bytes or more is cut at 127 on a UTF-8
			   boundary and lacks it); else 0 */
	uint16_t name_len; /* @54 KERNEL: 0..127 name bytes (0: CUPTI gave no name); else 0 */
	char name[XPROBE_NAME_MAX + 1]; /* @56 the kernel name, name_len bytes, then zeros */
};

/*
 * One histogram of a HISTOGRAM capture (MODE_HISTOGRAM; docs/agent.md,
 * "Histogram captures"): the pairs formed in the target while armed, each
 * latency (end - start, ns) counted into the log-linear buckets of
 * latency_buckets.h.  SNAPSHOT and STOP send histograms [offset, 1 +
 * groups in use): number 0 is the total (every pair, flag TOTAL, with the
 * capture's counters), then the groups in the order their first pair came,
 * each cumulative since ARM (nothing is reset by a read: an interval is
 * the difference of two reads).  In the replies of such a capture
 * `capacity` is 1 + the groups asked for and `retained` 1 + the groups in
 * use (histograms, the total counted); `observed` the pairs counted.  The
 * count of a histogram is the sum of
 * its buckets; sum_ns, min_ns and max_ns may include a pair whose bucket
 * the read missed (the Agent updates them before the bucket), so min_ns
 * and max_ns always cover the non-empty buckets read (min below the
 * lowest one's upper bound, max at or above the highest one's lower
 * bound), and sum_ns / count is
 * exact once the capture is stopped.  Every byte not named here is zero.
 */
#define XPROBE_AGENT_HIST_F_TOTAL 0x1u /* number 0: every pair */
#define XPROBE_AGENT_HIST_F_NAME_COMPLETE 0x2u /* BY_NAME: the whole name fit */

/* The total's counters (xprobe_agent_hist.counters[]; 0 in a group). */
enum xprobe_agent_hist_counter {
	XPROBE_AGENT_HC_INFLIGHT_OVERFLOW = 0, /* starts not stored: no in-flight slot
						  (thread stacks, open process ranges,
						  open API calls) */
	XPROBE_AGENT_HC_DEPTH_OVERFLOW = 1, /* pushes at level >= 64 */
	XPROBE_AGENT_HC_GROUP_OVERFLOW = 2, /* pairs whose group found the table full
					       (they are in the total) */
	XPROBE_AGENT_HC_SUPERSEDED = 3, /* starts whose slot the next start of the
					   same key took before an end */
	XPROBE_AGENT_HC_OPEN = 4, /* starts stored and not yet ended, now */
	XPROBE_AGENT_HC_CLOCK_BAD = 5, /* activity records whose end < start */
	XPROBE_AGENT_HC_STACKS = 6, /* thread stacks handed out, now (<= in-flight slots) */
	XPROBE_AGENT_HC__COUNT = 8
};

struct xprobe_agent_hist {
	uint64_t count; /* @0 pairs: the sum of buckets[] as copied */
	uint64_t sum_ns; /* @8 sum of their latencies */
	uint64_t min_ns; /* @16 shortest latency (valid when count > 0) */
	uint64_t max_ns; /* @24 longest */
	uint64_t key; /* @32 BY_THREAD: thread id; BY_STREAM: stream id;
			 BY_DEVICE: device id; else 0 */
	uint32_t kind; /* @40 enum xprobe_agent_kind of the pairs (0 in the total) */
	uint16_t flags; /* @44 XPROBE_AGENT_HIST_F_* */
	uint16_t name_len; /* @46 BY_NAME: 0..127 name bytes; else 0 */
	char name[XPROBE_NAME_MAX + 1]; /* @48 BY_NAME: the name, then zeros */
	uint64_t counters[XPROBE_AGENT_HC__COUNT]; /* @176 the total's; 0 in a group */
	uint64_t buckets[XPROBE_LH_BUCKETS]; /* @240 pairs per bucket */
};

/*
 * A saved capture (docs/agent.md, "Saved captures"): what a process started
 * with XPROBE_AGENT_OUTPUT=<path> writes at exit, and what `xprobe measure
 * --input` reads.  The file is
 *
 *   struct xprobe_agent_capfile   the file header, whose reply is the
 *                                 capture's final STOP reply from offset 0
 *   reply.bytes bytes of records  the struct xprobe_record stream, exactly
 *                                 the STOP reply's record packets end to end
 *
 * and nothing else: file_size = header_size + reply.bytes.  The reply obeys
 * every rule of a STOP reply on the socket (op STOP, status 0, state
 * STOPPED, stop_reason REQUESTED or RECORD_LIMIT) and holds the whole
 * capture: offset 0, nrecords = retained.  nchunks is the number of
 * packets of at most XPROBE_AGENT_CHUNK_MAX bytes the stream makes when cut
 * greedily before each record that would not fit (how the Agent cuts its
 * STOP reply), so a reader replays the file as that reply.  Little-endian
 * (x86_64), fixed size, every byte not named zero.
 */
#define XPROBE_AGENT_CAPFILE_MAGIC "XPAGCAP" /* 8 bytes with the NUL */
#define XPROBE_AGENT_CAPFILE_VERSION 1u
/* capfile.flags */
#define XPROBE_AGENT_CAPFILE_F_SIGNAL 0x1u /* written on a fatal signal's path:
					      `signal` is set; records a thread was
					      writing when it came are counted in
					      dropped */
#define XPROBE_AGENT_CAPFILE_F__ALL 0x1u

struct xprobe_agent_capfile {
	char magic[8]; /* @0 XPROBE_AGENT_CAPFILE_MAGIC */
	uint32_t version; /* @8 XPROBE_AGENT_CAPFILE_VERSION */
	uint32_t header_size; /* @12 sizeof(struct xprobe_agent_capfile) */
	uint64_t file_size; /* @16 header_size + reply.bytes: the whole file */
	uint32_t flags; /* @24 XPROBE_AGENT_CAPFILE_F_* */
	uint32_t signal; /* @28 the fatal signal (F_SIGNAL), else 0 */
	struct xprobe_agent_reply reply; /* @32 the final STOP reply (above) */
};

#ifndef __cplusplus
_Static_assert(sizeof(struct xprobe_agent_capfile) == 424, "agent capture file header");
_Static_assert(sizeof(struct xprobe_agent_group) == 184, "agent group");
_Static_assert(sizeof(struct xprobe_agent_hist) == 240 + 8 * XPROBE_LH_BUCKETS, "agent hist");
_Static_assert(sizeof(struct xprobe_agent_filter) == 152, "agent filter");
_Static_assert(sizeof(struct xprobe_agent_req) == 352, "agent request");
_Static_assert(sizeof(struct xprobe_agent_reply) == 392, "agent reply");
#endif

/**
 * xprobe_agent_start() - make sure this process's control socket exists
 * and is served (idempotent).  libxprobe calls it when it initializes;
 * online injection calls it through the target's own thread after
 * dlopen.  Does nothing (and returns -XPROBE_E_PERMISSION_DENIED) in a
 * process running with AT_SECURE, or when XPROBE_AGENT=0 is set.
 *
 * Return: 0 served; -XPROBE_E_* with xprobe_last_error() saying why.
 */
XPROBE_API int xprobe_agent_start(void);

/**
 * xprobe_agent_socket_path() - the path of this process's control socket.
 * Return: 0 and the path in @buf; -XPROBE_E_NOT_ACTIVE when none is
 * served; -XPROBE_E_TRUNCATED when @size is too small.
 */
XPROBE_API int xprobe_agent_socket_path(char *buf, size_t size);

/**
 * xprobe_agent_output_flush() - end the capture XPROBE_AGENT_OUTPUT armed
 * at load and write its file now (docs/agent.md, "Saved captures") instead
 * of at exit.  Once written (or failed), nothing more is recorded into it
 * and a control-socket ARM is accepted again.
 *
 * Return: 0 written; -XPROBE_E_NOT_ACTIVE when no such capture is armed (none
 * was asked for, or it was written already); -XPROBE_E_OUTPUT_FAILED when
 * the file could not be written (xprobe_last_error() says why; the
 * capture is lost, the process goes on).
 */
XPROBE_API int xprobe_agent_output_flush(void);

#ifdef __cplusplus
}
#endif
#endif /* XPROBE_AGENT_H */
