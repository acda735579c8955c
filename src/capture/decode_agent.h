/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_agent.h - the Agent's captures as events: a reply header of the
 * control socket (include/xprobe/agent.h) and the record stream behind it
 * (include/xprobe/record.h) into a struct xp_capture, with the capture's
 * collection counters kept for the result document.
 *
 * The same decoder reads a saved capture file (xp_capture_agent_dec_file, below):
 * its header holds the capture's final STOP reply, replayed with the
 * file's records as that reply's packets.
 *
 * A capture arrives in pieces: the ARM reply (the baseline), then SNAPSHOT
 * replies whose offset continues where the last one ended, then the STOP
 * reply with the final records.  The decoder keeps what spans pieces:
 * the next offset, the per-thread NVTX push stacks and the open process
 * ranges (an end may arrive a snapshot after its start), and the counters
 * of the last reply.  The record -> event mapping is the one .xtf files
 * use (record_events.h), so an NVTX range is the same event whether it
 * came from a session file or the socket.
 *
 * Checks (every one a TRACE_EXPORT_FAILED, not recoverable, details
 * {"field", "pid"}, hint "rebuild xprobe and libxprobe from the same
 * release"):
 *   the header alone (xp_capture_agent_reply_check): size, magic, version, op
 *   echo, state and stop_reason in range, features within
 *   XPROBE_AGENT_F__ALL, mode 0..2, message NUL-terminated, status 0
 *   or a negative code; retained <= capacity <= XPROBE_AGENT_CAPACITY_MAX,
 *   retained <= observed, offset + nrecords <= retained; records only
 *   behind a successful SNAPSHOT/STOP; bytes within
 *   [nrecords * 40, nrecords * XPROBE_RECORD_MAX_SIZE]; nchunks 0 exactly
 *   when nrecords is 0, else between ceil(bytes / XPROBE_AGENT_CHUNK_MAX)
 *   and nrecords;
 *   across replies (xp_capture_agent_dec_reply): offset == records decoded so
 *   far, capacity and arm_ns constant, observed / retained / dropped /
 *   unknown never decreasing, the pid and start time the decoder was
 *   given;
 *   each packet (xp_capture_agent_dec_chunk): at most XPROBE_AGENT_CHUNK_MAX
 *   bytes, whole records only, no more packets, records or bytes than the
 *   header announced; each record: size a multiple of 8 in [40, 168],
 *   named types sized exactly by name_len <= XPROBE_NAME_MAX, other types
 *   exactly 40 bytes, flags within XPROBE_RECF__ALL, nonzero timestamp,
 *   never a PAD record (a capture holds no ring filler);
 *   at the end of a reply (xp_capture_agent_dec_end): every announced packet,
 *   record and byte arrived.
 * A record type this build does not know (the next issue's CUDA types
 * in an older CLI) is counted in the capture's unknown_records, not an
 * error here: measure refuses a capture with unknown records.
 *
 * Bound: events beyond the capture's max_events are counted, not kept;
 * the reply that crossed it fails with EVENT_RATE_TOO_HIGH at
 * xp_capture_agent_dec_end.
 */
#ifndef XP_CAPTURE_DECODE_AGENT_H
#define XP_CAPTURE_DECODE_AGENT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xprobe/agent.h"

#include "../model/error_record.h"
#include "../model/event.h"

struct xp_rec_map; /* record_events.h */

/* The collection counters of the last reply (what the result reports). */
struct xp_capture_agent_stats {
	bool valid; /* a reply was accepted */
	uint32_t features; /* XPROBE_AGENT_F_* */
	uint32_t state; /* enum xprobe_agent_state */
	uint32_t stop_reason; /* enum xprobe_agent_stop_reason */
	uint64_t arm_ns; /* CLOCK_MONOTONIC at ARM */
	uint64_t capacity; /* records the capture holds */
	uint64_t observed; /* records that passed the filters */
	uint64_t retained; /* records held */
	uint64_t dropped; /* records admitted but lost */
	uint64_t unknown; /* records the Agent could not interpret */
	uint64_t records; /* records received and decoded (the next offset) */
	uint64_t unknown_types; /* records of a type this build does not map */
};

/* A checked reply's counters into @st (valid set; records and
 * unknown_types are the decoder's own): both decoders' last reply. */
void xp_capture_agent_stats_take(struct xp_capture_agent_stats *st,
				 const struct xprobe_agent_reply *rep);

/*
 * The TRACE_EXPORT_FAILED (not recoverable) every check of the Agent's
 * replies, packets and files returns: details.field = @field, the hint
 * @hint, the message "@where: " and @fmt's text.  Return its code.
 */
int xp_capture_agent_vfail(struct xp_error *err, const char *field, const char *hint,
			   const char *where, const char *fmt, va_list ap);

struct xp_capture_agent_dec {
	struct xp_capture *c; /* events go here (not owned) */
	uint32_t pid; /* events' pid; also checked against reply.pid */
	uint64_t start_time; /* events' process_start_time; checked too (0: unchecked) */
	struct xp_capture_agent_stats st;
	/* the reply being received */
	bool in_reply;
	uint32_t op;
	uint64_t rec_left, bytes_left; /* announced, not yet received */
	uint32_t chunks_left;
	uint64_t events_before; /* c->count when the reply began */
	uint64_t obs_before; /* map->observed when the reply began */
	struct xp_rec_map *map; /* NVTX state across pieces (owned) */
};

/* "hello", "arm", ...; "active", "limit_reached", ...; "requested",
 * "record_limit", ... ("unknown" outside the enums): for messages and
 * details (capture_state). */
const char *xp_capture_agent_op_name(uint32_t op);
const char *xp_capture_agent_state_name(uint32_t state);
const char *xp_capture_agent_stop_reason_name(uint32_t reason);

/*
 * Prepare @d for one capture of the Agent of process @pid (as the events
 * will carry it: the PID the target sees itself as, like the eBPF
 * collectors' events) started at @start_time (clock ticks; 0 = unknown).
 * @c must be initialized with its bound.  Return 0 or -ENOMEM.
 */
int xp_capture_agent_dec_init(struct xp_capture_agent_dec *d, struct xp_capture *c, uint32_t pid,
			      uint64_t start_time);
void xp_capture_agent_dec_free(struct xp_capture_agent_dec *d);

/*
 * Check one reply packet of @len bytes on its own (the header comment's
 * first list) as the answer to a request of @op.  Pure; no state.  Return
 * 0 or -XPROBE_E_TRACE_EXPORT_FAILED with @err naming the field.  Status
 * errors are not checked here beyond their range: a well-formed reply
 * may carry one.
 */
int xp_capture_agent_reply_check(const void *buf, size_t len, uint32_t op, struct xp_error *err);

/*
 * Accept a reply header (already through xp_capture_agent_reply_check, status 0)
 * into @d: the continuity checks, then the counters: the capture's
 * dropped and unknown_records grow by the reply's increase,
 * record_limit_reached is set on LIMIT_REACHED / RECORD_LIMIT, and the
 * capture's cupti summary (collection.cupti) takes capacity, observed and
 * dropped.  An ARM reply (op ARM) sets the baseline: offset 0, nothing
 * follows.  A SNAPSHOT/STOP reply opens a reply whose packets follow.
 */
int xp_capture_agent_dec_reply(struct xp_capture_agent_dec *d, const struct xprobe_agent_reply *rep,
			       struct xp_error *err);

/* One record packet of the open reply: records -> events. */
int xp_capture_agent_dec_chunk(struct xp_capture_agent_dec *d, const void *buf, size_t len,
			       struct xp_error *err);

/* Close the open reply: everything announced arrived; the bound. */
int xp_capture_agent_dec_end(struct xp_capture_agent_dec *d, struct xp_error *err);

/* A broken stream of @d: xp_capture_agent_vfail with details pid and
 * record_offset, "failed to decode the Agent capture of PID <pid>". */
int xp_capture_agent_dec_vbad(struct xp_capture_agent_dec *d, struct xp_error *err,
			      const char *field, const char *fmt, va_list ap);

/*
 * Everything at once, for the fuzz target and tests: one or more replies,
 * each a header (sizeof(struct xprobe_agent_reply) bytes) followed by its
 * packets, each packet preceded by its length as a native uint32_t.  Runs
 * xp_capture_agent_reply_check (with the op the header names: ARM, SNAPSHOT or
 * STOP), xp_capture_agent_dec_reply, xp_capture_agent_dec_chunk for each packet and
 * xp_capture_agent_dec_end, reply after reply, so the continuity checks and the
 * state across pieces are exercised; a reply with a nonzero status, a
 * truncated packet or header, or bytes left over is an error.
 */
int xp_capture_agent_dec_buf(struct xp_capture_agent_dec *d, const void *buf, size_t len,
			     struct xp_error *err);

/*
 * A saved capture file (include/xprobe/agent.h, struct xprobe_agent_capfile:
 * what libxprobe writes for XPROBE_AGENT_OUTPUT), whole in memory.
 *
 * xp_capture_agent_file_check checks the header alone: at least its size, magic,
 * version, header_size, file_size == @len (a file cut short or grown),
 * flags within XPROBE_AGENT_CAPFILE_F__ALL, signal set exactly with
 * F_SIGNAL; then the reply as a STOP reply (xp_capture_agent_reply_check) and what
 * a saved capture adds: status 0, state STOPPED, stop reason REQUESTED or
 * RECORD_LIMIT, a pid, the whole capture (offset 0, nrecords == retained),
 * observed == retained + dropped, bytes == @len - header.  Every failure
 * is TRACE_EXPORT_FAILED with details.field.  *@out (may be NULL) gets
 * the checked header.
 *
 * xp_capture_agent_dec_file decodes it into @d: a decoder given pid 0 takes the
 * file's pid and start time (otherwise they must be the decoder's), then
 * the reply (xp_capture_agent_dec_reply: counters, dropped, unknown_records,
 * record_limit_reached, collection.cupti) and the record stream replayed
 * as the STOP reply's packets, cut before each record that would not fit
 * in XPROBE_AGENT_CHUNK_MAX as the Agent cuts them (so reply.nchunks is
 * checked, and every record as xp_capture_agent_dec_chunk checks it), then the
 * reply's end.  Events beyond the capture's bound are counted in
 * d->map->observed; the file then fails with EVENT_RATE_TOO_HIGH unless
 * @defer_limit (measure --input reports the total of every input).
 */
int xp_capture_agent_file_check(const void *buf, size_t len, struct xprobe_agent_capfile *out,
				struct xp_error *err);
int xp_capture_agent_dec_file(struct xp_capture_agent_dec *d, const void *buf, size_t len,
			      bool defer_limit, struct xp_error *err);

#endif /* XP_CAPTURE_DECODE_AGENT_H */
