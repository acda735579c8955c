/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libbpf_msg.h - the one capture of libbpf's messages, for every libbpf
 * user of the CLI (live_bpf.c, src/inventory's latency_histogram.c and
 * syscall_aggregate.c), the contract codes they map a failed libbpf step
 * to, and the words of a failed load check.
 *
 * libbpf prints its diagnostics (the verifier's complaint, a missing BTF,
 * a refused map) through one process-wide callback.  xprobe never lets
 * them reach stderr (a --json run keeps stderr clean, and modules never
 * print): the callback keeps the last non-debug message, trailing newline
 * and spaces cut, and an error built after a failed libbpf call carries
 * it as the detail "libbpf_message".
 *
 * Invariant: one libbpf user at a time (a measurement runs one collector;
 * validate's load check runs alone), so one static buffer serves; the
 * callback is installed once and stays (never the default printer).
 */
#ifndef XP_COLLECT_LIBBPF_MSG_H
#define XP_COLLECT_LIBBPF_MSG_H

#include <stddef.h>

#include "../model/error_record.h"

/* Install the capture and forget the previous message: call before
 * opening a BPF object. */
void xp_live_libbpf_capture(void);

/* The last message libbpf printed since xp_live_libbpf_capture(), or "". */
const char *xp_live_libbpf_message(void);

/*
 * The details every failed libbpf step carries: "errno" (the text of
 * @e; @e may be negative, 0 reads as EINVAL) and "libbpf_message" when
 * libbpf said something.  Writes the errno text into @why and returns the
 * positive errno the caller maps to a contract code.
 */
int xp_live_libbpf_fail_details(struct xp_error *err, int e, char *why, size_t size);

/* The kernel's ENOTSUPP (include/linux/errno.h), not in libc's errno.h:
 * what uprobe registration returns for an instruction it will not probe. */
#define XP_ENOTSUPP_KERNEL 524

struct xp_live_endpoint; /* live.h */

/* A failed libbpf step, as xp_live_libbpf_fail() words and maps it. */
struct xp_live_libbpf_failure {
	int e; /* the errno (either sign; 0 reads as EINVAL); positive after */
	const char *what; /* the step: "load", "attach", "size the maps of" */
	const char *objects; /* what it was done to: "the syscall aggregate eBPF programs" */
	const struct xp_live_endpoint *ep; /* the endpoint being attached, or NULL */
	const char *maps; /* maps sized by --max-groups / --max-inflight: "the
			   * syscall aggregate maps"; NULL: none */
	const char *perm_hint; /* a second hint for PERMISSION_DENIED, or NULL */
	char why[128]; /* out: the errno's text */
};

/*
 * The rules every libbpf user of the CLI shares, in this order, after the
 * details of xp_live_libbpf_fail_details() and the endpoint's "selector":
 *   EPERM, EACCES: PERMISSION_DENIED "permission denied to <what>
 *     <objects>" (run as root or grant CAP_BPF and CAP_PERFMON; then
 *     perm_hint);
 *   ESRCH: TARGET_EXITED (the target exited while probes were attached);
 *   E2BIG, ENOMEM with maps: SESSION_LIMIT_EXCEEDED "the kernel refused
 *     <maps> at their configured sizes";
 *   ENOTSUPP (524) attaching a uprobe: INVALID_EVENT_SELECTOR (an
 *     instruction the kernel will not probe; validate names it first);
 *   ENOENT attaching a uprobe: BINARY_NOT_MAPPED (its binary is gone).
 * Returns -code, or 0 when none applies: the caller's own rules follow,
 * then xp_live_libbpf_fail_internal().
 */
int xp_live_libbpf_fail(struct xp_error *err, struct xp_live_libbpf_failure *f);
/* INTERNAL "failed to <what> <objects>: <why>", the doctor hint. */
int xp_live_libbpf_fail_internal(struct xp_error *err, const struct xp_live_libbpf_failure *f);

/*
 * The detail of a failed load check (validate loads an object and frees
 * it): "loading the <object> object failed: <errno text>[: <libbpf's
 * message>]" into @detail.  @rc either sign.
 */
void xp_live_libbpf_load_failed(char *detail, size_t size, const char *object, int rc);

#endif
