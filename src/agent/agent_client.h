/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_client.h - the CLI's side of the Agent's control socket
 * (include/xprobe/agent.h is the wire ABI and its protocol comment):
 * find the socket of a target, connect to it safely, check that the peer
 * is the target, and drive one capture with HELLO / ARM / SNAPSHOT / STOP
 * / CLOSE, each bounded by a timeout.  Records that come back are handed
 * to the capture decoder (src/capture/decode_agent.h), which turns them
 * into events of a struct xp_capture and keeps the collection counters.
 *
 * Why here and not in cmd/: measure (and only measure) drives the Agent,
 * but the socket rules (no links followed, ownership and mode checks,
 * SO_PEERCRED, every reply validated before a byte of it is trusted) are
 * a collector's, testable without a command around them.
 *
 * Finding the socket.  The Agent of a process serves
 *   /tmp/xprobe-agent-<euid>/agent-<pid>-<start time>.sock
 * where euid, pid and start time are the process's own view: its
 * effective uid (/proc/<pid>/status, translated through
 * /proc/<pid>/uid_map when it runs in another user namespace), its PID in
 * its own namespace (the last NSpid entry) and field 22 of its stat file.
 * A target in another mount namespace, or with another root directory
 * (chroot), is reached through /proc/<pid>/root.  Every component after that root is opened with
 * openat(O_PATH | O_NOFOLLOW): /tmp must be a directory, the runtime
 * directory a directory (not a link) owned by the target's uid with mode
 * exactly 0700, the socket a socket owned by that uid.  connect() then
 * goes through /proc/self/fd/<dirfd>/<name>, so a path longer than
 * sun_path's 108 bytes works and no component can be swapped between the
 * check and the connect.  After connect, SO_PEERCRED must name the
 * target's PID (as xprobe sees it: the kernel translates into our PID
 * namespace) and its uid; anything else is PERMISSION_DENIED before a
 * request is sent.
 *
 * Errors (struct xp_error, the contract's codes):
 *   no runtime directory or no socket, or a socket nobody serves
 *     (ECONNREFUSED: the Agent's process is gone or its server stopped)
 *                                  CUPTI_AGENT_NOT_LOADED, recoverable,
 *                                  details {pid, socket_path}, hint
 *                                  naming NVTX_INJECTION64_PATH
 *   the directory or socket has another owner, mode or type, a link,
 *   EACCES/EPERM, a peer that is not the target
 *                                  PERMISSION_DENIED, recoverable,
 *                                  details {pid, socket_path, reason}
 *   a timeout, a connection closed by the Agent, a send/recv error
 *                                  CUPTI_NOT_AVAILABLE, recoverable,
 *                                  details {pid, op, timeout_ms}
 *   a reply that breaks the protocol (size, magic, version, op echo,
 *   enums, features, counters, chunk sizes, message not terminated,
 *   another pid or start time than the target's)
 *                                  TRACE_EXPORT_FAILED, not recoverable,
 *                                  details {pid, op, field}, hint
 *                                  "rebuild xprobe and libxprobe from the
 *                                  same release"
 *   reply status -XPROBE_E_BACKEND_UNAVAILABLE  CUPTI_NOT_AVAILABLE
 *   reply status -XPROBE_E_ALREADY_ACTIVE       CUPTI_NOT_AVAILABLE "the
 *                                  Agent of PID <pid> is already running a
 *                                  capture for another client", hint to
 *                                  wait or stop the other xprobe
 *   reply status -XPROBE_E_UNSUPPORTED_CUDA_VERSION  UNSUPPORTED_CUDA_VERSION
 *                                  (conflicting or unsupported CUDA/CUPTI
 *                                  majors the backend found at ARM)
 *   reply status -XPROBE_E_CUDA_CONTEXT_NOT_FOUND    CUDA_CONTEXT_NOT_FOUND
 *                                  (no CUDA runtime or driver mapped)
 *   reply status -XPROBE_E_INVALID_EVENT_SELECTOR    INVALID_EVENT_SELECTOR
 *                                  (an API name the target's CUPTI has no
 *                                  callback for)
 *   reply status -XPROBE_E_PERMISSION_DENIED    PERMISSION_DENIED
 *   reply status -XPROBE_E_INVALID_ARGUMENT     INTERNAL (we sent a
 *                                  request it refused: a CLI/Agent skew)
 *   reply status -XPROBE_E_NOT_ACTIVE           CUPTI_NOT_AVAILABLE
 *                                  "no capture is armed"
 *   any other status                            CUPTI_NOT_AVAILABLE
 * Every error carries the Agent's message (details.agent_message) when the
 * reply had one, and details.agent_status (the code's name).
 *
 * After an error.  A refusal (a reply status), an ARM that did not arm, or
 * a capture bound crossed after every packet arrived (EVENT_RATE_TOO_HIGH
 * from the decoder) leave the connection usable.  A timeout, a closed
 * connection or a protocol violation close it (fd -1): what is still in
 * flight cannot be told from the next reply; the Agent disarms when it
 * sees the close.
 *
 * Timeouts.  Every wait (for the socket to take a request, for a reply,
 * for each record packet, for a busy listener to accept) is a poll()
 * bounded by timeout_ms, in slices of at most 100 ms that test the stop
 * request (common/cancel.h: -ECANCELED, xp_error_cancelled()).  A large
 * snapshot therefore takes as long as its packets need, but a silent
 * Agent never holds the CLI longer than timeout_ms per wait.
 *
 * Not thread-safe: one struct xp_agent_conn is driven by one thread.
 */
#ifndef XP_COLLECT_AGENT_CLIENT_H
#define XP_COLLECT_AGENT_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xprobe/agent.h"

#include "../model/error_record.h"
#include "../process/identity.h"
#include "../selector/selector.h"

struct xp_capture_agent_dec; /* src/capture/decode_agent.h */
struct xp_capture_agg_dec; /* src/capture/decode_agent_agg.h */
struct xp_capture_hist_dec; /* src/capture/decode_agent_hist.h */

/* Default bound of each wait on the socket (header comment, Timeouts). */
#define XP_AGENT_TIMEOUT_MS 2000
/* Longest socket path kept for messages (the /proc/<pid>/root form). */
#define XP_AGENT_PATH_MAX 256

/* One connection to one target's Agent. */
struct xp_agent_conn {
	int fd; /* the SOCK_SEQPACKET socket; -1 when not connected */
	uint32_t pid; /* the target as xprobe sees it (SO_PEERCRED checks this) */
	uint32_t ns_pid; /* the target as it sees itself (socket name, reply.pid) */
	uint32_t uid; /* target's effective uid as xprobe sees it (owner checks) */
	uint64_t start_time; /* the target's start time (socket name, reply.start_time) */
	int timeout_ms; /* bound of each request, > 0 */
	char path[XP_AGENT_PATH_MAX]; /* socket path for messages (may be
					 truncated with "..."; never used to connect) */
	struct xprobe_agent_reply hello; /* the HELLO reply xp_agent_connect got */
	bool armed; /* ARM succeeded and no STOP/CLOSE since */
};

/*
 * The socket path of @t's Agent, for messages and validate (nothing is
 * opened): "/tmp/xprobe-agent-<euid>/agent-<nspid>-<start>.sock", or
 * "/proc/<pid>/root/tmp/..." when @t is in another mount namespace or
 * has another root directory.
 * Reads /proc/<pid>/status (and uid_map).  Return 0 or a negative code
 * with @err filled (TARGET_EXITED, PERMISSION_DENIED, INTERNAL).
 */
int xp_agent_socket_path(const struct xp_target *t, char *buf, size_t size, struct xp_error *err);

/*
 * Find @t's Agent socket, check it (header comment), connect, check the
 * peer, and send HELLO (its reply in @conn->hello).  @timeout_ms <= 0
 * means XP_AGENT_TIMEOUT_MS.  On failure @conn is left disconnected
 * (fd -1) and @err says why; on success release with
 * xp_agent_disconnect().  Does not check the HELLO features: see
 * xp_agent_require_nvtx().
 */
int xp_agent_connect(const struct xp_target *t, int timeout_ms, struct xp_agent_conn *conn,
		     struct xp_error *err);

/*
 * The same with a socket path the user gave (--cupti-socket): the last
 * component is opened O_PATH|O_NOFOLLOW in its directory and must be a
 * socket owned by the target's uid or root; the peer check and HELLO are
 * the same.  A missing path is CUPTI_AGENT_NOT_LOADED naming it.
 */
int xp_agent_connect_path(const struct xp_target *t, const char *path, int timeout_ms,
			  struct xp_agent_conn *conn, struct xp_error *err);

/* Close the socket without a request (safe on a zeroed or closed conn).
 * An armed capture is disarmed by the Agent when it sees the close. */
void xp_agent_disconnect(struct xp_agent_conn *conn);

/*
 * CUPTI_NOT_AVAILABLE (the contract's code: an Agent is loaded, NVTX does
 * not reach it) unless the HELLO features say NVTX calls reach
 * the Agent (XPROBE_AGENT_F_NVTX_ROUTED): the message says NVTX's dispatch
 * was fixed before the Agent loaded; the hint names
 * NVTX_INJECTION64_PATH=@agent_path (or "the path of libxprobe.so" when
 * @agent_path is NULL).  Return 0 or -XPROBE_E_CUPTI_NOT_AVAILABLE.
 */
int xp_agent_require_nvtx(const struct xp_agent_conn *conn, const char *agent_path,
			  struct xp_error *err);

/*
 * The filter of one endpoint.  NVTX: its reduced name filter (the parser
 * always has one).  Kernel: its reduced name filter; a regex that does
 * not reduce admits every kernel in exact mode (the correlator applies
 * the regex afterwards) and is INVALID_EVENT_SELECTOR in aggregate mode.
 * CUDA API: api_domain from runtime_api/driver_api, name exact.  Memcpy:
 * the kind, or any.  Memset: no field.
 * Return 1 when @out was filled, 0 when @sel is not an Agent endpoint (a
 * host selector; @out zeroed), negative with @err on failure.
 */
int xp_agent_filter_from_selector(const struct xp_selector *sel, enum xprobe_agent_mode mode,
				  struct xprobe_agent_filter *out, struct xp_error *err);

/*
 * A complete ARM request from the endpoints of a measurement (@n
 * selectors, host ones skipped): one filter per Agent endpoint, identical
 * filters merged (nvtx_range_start and nvtx_range_end of one name give
 * one NVTX filter; kernel_start and kernel_end one kernel filter).
 * @capacity is --max-events (exact) or --max-groups (aggregate):
 * 1..XPROBE_AGENT_CAPACITY_MAX, else SESSION_LIMIT_EXCEEDED.  No Agent
 * endpoint at all is INTERNAL (the caller decides whether to arm).
 */
int xp_agent_arm_build(const struct xp_selector *const *sels, size_t n, enum xprobe_agent_mode mode,
		       uint64_t capacity, struct xprobe_agent_req *req, struct xp_error *err);

/* True when @req has a filter whose kind needs the device backend (any
 * CUDA kind): the Agent refuses it without XPROBE_AGENT_F_DEVICE_BACKEND. */
bool xp_agent_req_needs_backend(const struct xprobe_agent_req *req);

/* A zeroed request of @op with magic, version and size set (tests, and
 * the requests below). */
void xp_agent_req_init(struct xprobe_agent_req *req, enum xprobe_agent_op op);

/*
 * Send @req (op ARM, from xp_agent_arm_build) and check that the reply
 * says the capture is armed (state ACTIVE, or LIMIT_REACHED when the
 * capture filled at once).  A status error maps as the header says (a
 * CUDA filter without backend: CUPTI_NOT_AVAILABLE).  @rep (may be NULL)
 * gets the reply; pass it to xp_capture_agent_dec_reply() as the baseline when
 * decoding.
 */
int xp_agent_arm(struct xp_agent_conn *conn, const struct xprobe_agent_req *req,
		 struct xprobe_agent_reply *rep, struct xp_error *err);

/*
 * SNAPSHOT from @dec's next offset (the records it already holds): the
 * reply header is checked (xp_capture_agent_reply_check, then the decoder's
 * continuity checks: offset, constant capacity, monotonic counters), then
 * every record packet is received and fed to @dec (src/capture/
 * decode_agent.h), which appends events to its capture.  The capture goes
 * on.  @rep (may be NULL) gets the reply header.
 */
int xp_agent_snapshot(struct xp_agent_conn *conn, struct xp_capture_agent_dec *dec,
		      struct xprobe_agent_reply *rep, struct xp_error *err);

/* STOP: disarm, then the final records from @dec's offset, as SNAPSHOT. */
int xp_agent_stop(struct xp_agent_conn *conn, struct xp_capture_agent_dec *dec,
		  struct xprobe_agent_reply *rep, struct xp_error *err);

/*
 * STOP for an AGGREGATE capture (an ARM of mode AGGREGATE) from offset 0,
 * so every group comes with its final totals; the groups go to @dec
 * (src/capture/decode_agent_agg.h), which replaces what it held.  Checks
 * and errors as for records.
 */
int xp_agent_stop_groups(struct xp_agent_conn *conn, struct xp_capture_agg_dec *dec,
			 struct xprobe_agent_reply *rep, struct xp_error *err);

/*
 * SNAPSHOT (the capture goes on) or STOP of a HISTOGRAM capture, from
 * offset 0: every histogram comes cumulative since ARM and replaces what
 * @dec held (src/capture/decode_agent_hist.h).  Checks and errors as for
 * records.
 */
int xp_agent_read_hist(struct xp_agent_conn *conn, enum xprobe_agent_op op,
		       struct xp_capture_hist_dec *dec, struct xprobe_agent_reply *rep,
		       struct xp_error *err);

/*
 * CLOSE: STOP if armed (its records are not sent: STOP first to keep
 * them), and an injected Agent removes its socket.  The connection stays
 * open until xp_agent_disconnect().
 */
int xp_agent_close(struct xp_agent_conn *conn, struct xprobe_agent_reply *rep,
		   struct xp_error *err);

#endif /* XP_COLLECT_AGENT_CLIENT_H */
