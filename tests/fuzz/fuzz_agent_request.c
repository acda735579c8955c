// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_agent_request.c - the Agent's control-request decoder
 * (lib/agent/request.c): a request packet comes from another process over
 * the control socket, so every byte of it is untrusted.  Two ways in,
 * chosen by the first byte of the input:
 *
 *   even   the rest of the input is the packet, as received;
 *   odd    byte 1 picks the op (% 6, so 0 and out-of-range ops too), and
 *          the rest overwrites a well-formed request of that op from byte
 *          20 on (after magic, version, op and size), so the fuzzer spends
 *          its time in the field and filter checks rather than on the
 *          magic.
 *
 * The contract checked on every input: a refusal says why (non-empty,
 * NUL-terminated) and hands nothing out; an accepted request is 352 bytes
 * that obey agent.h field by field, and decoding it again gives the same
 * bytes.  xpl_agent_req_op answers 0..5 for any prefix.  Seeds:
 * tests/fuzz/gen_agent_request_seeds.py.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/request.h"

static bool zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void check_accepted(const struct xprobe_agent_req *q)
{
	struct xprobe_agent_req again;
	char why[256];

	if (memcmp(q->magic, XPROBE_AGENT_REQ_MAGIC, 8) ||
	    q->version != XPROBE_AGENT_PROTO_VERSION || q->size != sizeof(*q) || q->op < 1 ||
	    q->op > 5)
		abort();
	if (q->op != XPROBE_AGENT_OP_ARM) {
		if (q->mode || q->capacity || q->nfilters || q->by ||
		    !zero(q->filters, sizeof(q->filters)))
			abort();
		if (q->offset && q->op != XPROBE_AGENT_OP_SNAPSHOT && q->op != XPROBE_AGENT_OP_STOP)
			abort();
	} else {
		bool hist = q->mode == XPROBE_AGENT_MODE_HISTOGRAM;

		if (q->mode > 2 || !q->capacity ||
		    q->capacity >
			    (hist ? XPROBE_AGENT_HIST_GROUPS_MAX : XPROBE_AGENT_CAPACITY_MAX) ||
		    (!hist && (q->offset || q->by)) ||
		    (hist && (!q->offset || q->offset > XPROBE_AGENT_INFLIGHT_MAX ||
			      q->by >= XPROBE_AGENT_BY__COUNT)) ||
		    !q->nfilters || q->nfilters > XPROBE_AGENT_MAX_FILTERS)
			abort();
		for (uint32_t i = 0; i < XPROBE_AGENT_MAX_FILTERS; i++) {
			const struct xprobe_agent_filter *f = &q->filters[i];

			if (i >= q->nfilters) {
				if (!zero(f, sizeof(*f)))
					abort();
				continue;
			}
			if (!f->kind || f->kind >= XPROBE_AGENT_KIND__COUNT || f->reserved ||
			    f->name_match > 4 || f->name_len > XPROBE_NAME_MAX ||
			    (f->name_match == 0) != (f->name_len == 0) ||
			    memchr(f->name, 0, f->name_len) ||
			    !zero(f->name + f->name_len, sizeof(f->name) - f->name_len))
				abort();
			if ((f->api_domain && f->kind != XPROBE_AGENT_KIND_CUDA_API) ||
			    (f->memcpy_kind && f->kind != XPROBE_AGENT_KIND_MEMCPY))
				abort();
			if (q->mode == XPROBE_AGENT_MODE_AGGREGATE &&
			    (f->kind == XPROBE_AGENT_KIND_NVTX_RANGE ||
			     f->kind == XPROBE_AGENT_KIND_CUDA_API))
				abort();
		}
	}
	if (xpl_agent_req_decode(q, sizeof(*q), &again, why, sizeof(why)) != 0 ||
	    memcmp(q, &again, sizeof(again)))
		abort();
}

static void one(const uint8_t *p, size_t n)
{
	struct xprobe_agent_req q;
	char why[256];
	uint32_t op = xpl_agent_req_op(p, n);

	if (op > 5)
		abort();
	memset(&q, 0x5a, sizeof(q));
	memset(why, 'x', sizeof(why));
	if (xpl_agent_req_decode(p, n, &q, why, sizeof(why)) == 0) {
		if (n != sizeof(q))
			abort();
		check_accepted(&q);
		return;
	}
	if (!memchr(why, '\0', sizeof(why)) || !why[0])
		abort();
	for (size_t i = 0; i < sizeof(q); i++)
		if (((uint8_t *)&q)[i] != 0x5a)
			abort(); /* a refusal hands nothing out */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xprobe_agent_req q;
	size_t n;

	if (!size)
		return 0;
	if (!(data[0] & 1)) {
		one(data + 1, size - 1);
		return 0;
	}
	memset(&q, 0, sizeof(q));
	memcpy(q.magic, XPROBE_AGENT_REQ_MAGIC, sizeof(q.magic));
	q.version = XPROBE_AGENT_PROTO_VERSION;
	q.size = sizeof(q);
	q.op = size > 1 ? data[1] % 6 : 1;
	n = size > 2 ? size - 2 : 0;
	if (n > sizeof(q) - 20)
		n = sizeof(q) - 20;
	memcpy((uint8_t *)&q + 20, data + 2, n);
	one((const uint8_t *)&q, sizeof(q));
	return 0;
}
