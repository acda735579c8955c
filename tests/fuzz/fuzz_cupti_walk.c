// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_cupti_walk.c - the CUPTI backend's activity-buffer walker and
 * record decoder (lib/device/cupti_walk.c).  A completed activity buffer
 * is data libxprobe did not write: CUPTI's, or whatever called our
 * buffer-completion callback, handing out record pointers through
 * cuptiActivityGetNextRecord.  The input is
 *
 *   byte 0        the CUPTI version whose layouts apply (index into a
 *                 list: CUDA 12.0/12.4/12.8/12.9, 13.0, 13.0u1, and ones
 *                 refused: 11.8, a newer 13.x)
 *   byte 1        n: how many records the stand-in GetNextRecord hands out
 *   n x u32       their offsets in the buffer (any value: outside it,
 *                 misaligned, past its end; 0xffffffff = a NULL record)
 *   the rest      the buffer (copied to 8-aligned memory); kernel records'
 *                 name pointers in it are replaced by NULL or pointers into
 *                 a 256-byte name area filled from the buffer's own bytes
 *                 (no NUL guaranteed: the decoder may read at most 128)
 *
 * Each decoded activity is then put through what the backend does with
 * it: the name cut (xpl_cupti_name_kept), a name rule, the group table.
 * The contract checked: every record the sink sees lies inside the buffer
 * with the bytes its layout needs; a decoded kind is one of the three
 * CUDA activity types; memcpy kinds are 0..5; a kept name is at most 127
 * bytes; the walk ends (bad counted) at the first record outside.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "producers/agent_group_table.h"
#include "producers/agent_capture.h"
#include "device/cupti.h"

static const uint32_t versions[] = { 19, 22, 26, 28, 130000, 130001, 18, 139900 };

static uint8_t *buf;
static size_t buf_len;
static const uint32_t *offs;
static size_t noffs;
static char names[256];
static struct xpl_agent_agg *agg;

static int fz_next(uint8_t *b, size_t valid, void **rec)
{
	static size_t i;
	uint32_t o;

	(void)valid;
	if (!*rec)
		i = 0;
	if (i >= noffs)
		return 12; /* CUPTI_ERROR_MAX_LIMIT_REACHED */
	memcpy(&o, &offs[i++], sizeof(o));
	/* computed as an integer: the walker must refuse it before use */
	*rec = o == 0xffffffffu ? NULL : (void *)((uintptr_t)b + o);
	return 0;
}

static void fz_sink(void *arg, int type, const struct xpl_cupti_act *a)
{
	static const struct xpl_agent_rule rule = { .match = XPROBE_AGENT_NAME_CONTAINS,
						    .len = 1,
						    .name = "a" };
	bool complete;
	uint32_t n;

	(void)arg;
	if (type == 0)
		return;
	if (type != XPROBE_EV_CUDA_KERNEL && type != XPROBE_EV_CUDA_MEMCPY &&
	    type != XPROBE_EV_CUDA_MEMSET)
		abort();
	if (a->memcpy_kind > XPROBE_AGENT_MEMCPY_PTOP)
		abort();
	n = xpl_cupti_name_kept(a->name, &complete);
	if (n > XPROBE_NAME_MAX || (n == 0 && a->name && a->name[0] && complete))
		abort();
	if (a->name)
		(void)xpl_agent_rules_ok(&rule, 1, a->name);
	xpl_agg_add(agg, (uint32_t)type, a->device, a->memcpy_kind,
		    complete ? XPROBE_RECF_NAME_COMPLETE : 0, a->name ? a->name : "", n,
		    a->end - a->start, a->bytes);
}

/* Point every kernel-looking record's name at the name area or NULL. */
static void patch_names(void)
{
	for (size_t o = 0; o + 112 <= buf_len; o += 8) {
		uint32_t kind;
		char *p;

		memcpy(&kind, buf + o, sizeof(kind));
		if (kind != 3 && kind != 10)
			continue;
		p = buf[o + 4] & 1 ? NULL : names + (buf[o + 5] % 64);
		memcpy(buf + o + 104, &p, sizeof(p));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xpl_cupti_layout L;
	uint64_t bad = 0, n;
	size_t head;

	if (size < 2)
		return 0;
	if (!agg && xpl_agg_new(4, &agg))
		abort();
	noffs = data[1] % 32;
	head = 2 + noffs * 4;
	if (size < head)
		return 0;
	offs = (const uint32_t *)(const void *)(data + 2);
	{
		static uint32_t o[32];

		memcpy(o, data + 2, noffs * 4);
		offs = o;
	}
	buf_len = size - head;
	free(buf);
	buf = aligned_alloc(8, (buf_len + 7) & ~(size_t)7);
	if (!buf)
		return 0;
	memcpy(buf, data + head, buf_len);
	for (size_t i = 0; i < sizeof(names); i++)
		names[i] = buf_len ? (char)(buf[i % buf_len] | 0x20) : 'a';
	patch_names();
	if (xpl_cupti_layout_for(versions[data[0] % (sizeof(versions) / sizeof(versions[0]))],
				 &L) != 0) {
		/* a version refused at ARM: its records are never walked; the
		 * walker must still not read outside with an empty layout */
		memset(&L, 0, sizeof(L));
	}
	xpl_agg_lock(agg);
	n = xpl_cupti_walk(&L, fz_next, buf, buf_len, fz_sink, NULL, &bad);
	xpl_agg_unlock(agg);
	if (n > noffs || bad > 1)
		abort();
	return 0;
}
