/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request.h - the Agent's control-request decoder (request.c): one packet
 * from the socket into a checked struct xprobe_agent_req, or the reason it
 * is refused.  Pure (no state, no I/O), so tests/fuzz/fuzz_agent_request.c
 * drives it directly and the server trusts only what it returns.
 */
#ifndef XPL_AGENT_REQUEST_H
#define XPL_AGENT_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "xprobe/agent.h"

/*
 * xpl_agent_req_decode() - check one request packet.
 * @buf, @len: the packet as received (@len its real length, even when it
 *             was longer than the buffer: MSG_TRUNC).
 * @req:       receives the request when it is well-formed.
 * @why:       receives the reason of a refusal (NUL-terminated), at most
 *             @whylen bytes.
 *
 * Every field is checked (agent.h): length, magic, version, size, op; mode,
 * capacity, nfilters and offset for the op; each used filter's kind, the
 * enums, name_match against name_len, name bytes (no NUL inside, zeros
 * after), reserved words; unused filter slots all zero.  The checks stop at
 * the first refusal, in the order of the fields.  Whether an ARM can be
 * honoured (device kinds need a backend) is the server's decision, not the
 * decoder's.
 *
 * Return: 0, or -XPROBE_E_INVALID_ARGUMENT with @why filled.
 */
int xpl_agent_req_decode(const void *buf, size_t len, struct xprobe_agent_req *req, char *why,
			 size_t whylen);

/* The op a refusal's reply names: the packet's op when it has one in range,
 * else 0. */
uint32_t xpl_agent_req_op(const void *buf, size_t len);

#endif /* XPL_AGENT_REQUEST_H */
