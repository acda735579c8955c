/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libbpf_msg.h - the one capture of libbpf's messages, for every libbpf
 * user of the CLI (live_bpf.c, syscall_aggregate.c).
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
void xp_libbpf_capture(void);

/* The last message libbpf printed since xp_libbpf_capture(), or "". */
const char *xp_libbpf_message(void);

/*
 * The details every failed libbpf step carries: "errno" (the text of
 * @e; @e may be negative, 0 reads as EINVAL) and "libbpf_message" when
 * libbpf said something.  Writes the errno text into @why and returns the
 * positive errno the caller maps to a contract code.
 */
int xp_libbpf_fail_details(struct xp_error *err, int e, char *why, size_t size);

#endif
