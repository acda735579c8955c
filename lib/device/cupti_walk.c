/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cupti_walk.c - reading CUPTI's activity buffers: which record structs a
 * CUPTI version emits, and the decoder that turns one record into a
 * struct xpl_cupti_act.  A completed buffer is data from outside (CUPTI's,
 * or anything that called our buffer callback), so every record handed out
 * is checked to lie inside the buffer and to hold the struct we read
 * before a byte of it is read; a kind we do not read is reported as such,
 * never guessed at.  Pure: no state, no CUPTI calls (the walker calls the
 * `next` function it is given), so tests/fuzz/fuzz_cupti_walk.c drives it.
 *
 * Layouts.  CUPTI grows its record structs by appending fields and
 * bumping the struct's number (CUpti_ActivityKernel9 in CUDA 12,
 * Kernel10 in 13.0; Memcpy5/Memset3 until 12.7, Memcpy6/Memset4 from
 * 12.8), and emits the newest struct of the library's own version.  We
 * read each record through the struct its CUPTI version emits, as
 * transcribed in cupti_abi.h (where every field we use is asserted to sit
 * at one offset in all of them, and cupti_abi_check.c asserts the
 * transcription against NVIDIA's headers); a record is only read when the
 * buffer holds those fields.  A CUPTI newer than the transcription
 * (XPL_CUPTI_ABI_VERSION) is refused at ARM (xpl_cupti_layout_for()
 * returns -2): its structs may be ones we do not know.
 */
#include <stddef.h>

#include "../internal.h"
#include "cupti.h"
#include "cupti_abi.h"

/* Bytes of a record we read: up to the end of the last field used. */
#define READ_END(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))

int xpl_cupti_layout_for(uint32_t version, struct xpl_cupti_layout *L)
{
	bool copy6 = version >= XPL_CUPTI_VERSION_12_8;

	memset(L, 0, sizeof(*L));
	L->version = version;
	if (version >= XPL_CUPTI_VERSION_12_0 && version < 100) {
		/* CUDA 12.0 (19) .. 12.9 update 1 (28): Kernel9; the copy and
		 * set structs grew in 12.8 (26) */
		L->major = 12;
		L->kernel = 9;
		L->kernel_bytes = sizeof(xpl_CUpti_ActivityKernel9);
		L->memcpy = copy6 ? 6 : 5;
		L->memcpy_bytes = copy6 ? sizeof(xpl_CUpti_ActivityMemcpy6) :
					  sizeof(xpl_CUpti_ActivityMemcpy5);
		L->memset = copy6 ? 4 : 3;
		L->memset_bytes = copy6 ? sizeof(xpl_CUpti_ActivityMemset4) :
					  sizeof(xpl_CUpti_ActivityMemset3);
		return 0;
	}
	if (version < XPL_CUPTI_VERSION_13_0 || version >= 140000) {
		/* CUDA 11 and older (<= 18), or another major's xxyyzz */
		L->major = version >= 100 ? version / 10000 : (version >= 13 ? 11 : 0);
		return -1;
	}
	L->major = 13;
	/* a later 13.x minor than the transcription: its structs may be ones
	 * we do not know (13.0 updates keep 13.0's) */
	if (version / 100 > XPL_CUPTI_ABI_VERSION / 100)
		return -2;
	L->kernel = 10;
	L->kernel_bytes = sizeof(xpl_CUpti_ActivityKernel10);
	L->memcpy = 6;
	L->memcpy_bytes = sizeof(xpl_CUpti_ActivityMemcpy6);
	L->memset = 4;
	L->memset_bytes = sizeof(xpl_CUpti_ActivityMemset4);
	return 0;
}

uint32_t xpl_cupti_memcpy_kind(uint32_t raw)
{
	switch (raw) {
	case XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return XPROBE_AGENT_MEMCPY_HTOD;
	case XPL_CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case XPL_CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return XPROBE_AGENT_MEMCPY_DTOH;
	case XPL_CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case XPL_CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case XPL_CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
	case XPL_CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		return XPROBE_AGENT_MEMCPY_DTOD;
	case XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return XPROBE_AGENT_MEMCPY_HTOH;
	case XPL_CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return XPROBE_AGENT_MEMCPY_PTOP;
	}
	return 0;
}

uint32_t xpl_cupti_name_kept(const char *name, bool *complete)
{
	*complete = true;
	return name ? (uint32_t)xpl_name_cut(name, complete) : 0;
}

/*
 * What a kernel, copy and set record share: the type, the times, where it
 * ran and the correlation id (each at one offset in every struct of its
 * kind: cupti_abi.h).
 */
#define ACT_COMMON(o, r, ev)                    \
	do {                                    \
		(o)->type = (ev);               \
		(o)->start = (r)->start;        \
		(o)->end = (r)->end;            \
		(o)->device = (r)->deviceId;    \
		(o)->context = (r)->contextId;  \
		(o)->stream = (r)->streamId;    \
		(o)->corr = (r)->correlationId; \
	} while (0)

#define KERNEL_FROM(T)                                                                \
	static int kernel_##T(const void *rec, size_t avail, struct xpl_cupti_act *o) \
	{                                                                             \
		const T *k = rec;                                                     \
                                                                                      \
		if (avail < READ_END(T, name))                                        \
			return -1;                                                    \
		ACT_COMMON(o, k, XPROBE_EV_CUDA_KERNEL);                              \
		o->grid[0] = (uint32_t)k->gridX;                                      \
		o->grid[1] = (uint32_t)k->gridY;                                      \
		o->grid[2] = (uint32_t)k->gridZ;                                      \
		o->block[0] = (uint32_t)k->blockX;                                    \
		o->block[1] = (uint32_t)k->blockY;                                    \
		o->block[2] = (uint32_t)k->blockZ;                                    \
		o->name = k->name;                                                    \
		return XPROBE_EV_CUDA_KERNEL;                                         \
	}

#define MEMCPY_FROM(T)                                                                \
	static int memcpy_##T(const void *rec, size_t avail, struct xpl_cupti_act *o) \
	{                                                                             \
		const T *m = rec;                                                     \
                                                                                      \
		if (avail < READ_END(T, runtimeCorrelationId))                        \
			return -1;                                                    \
		ACT_COMMON(o, m, XPROBE_EV_CUDA_MEMCPY);                              \
		o->rcorr = m->runtimeCorrelationId;                                   \
		o->bytes = m->bytes;                                                  \
		o->raw_copy_kind = m->copyKind;                                       \
		o->memcpy_kind = xpl_cupti_memcpy_kind(m->copyKind);                  \
		return XPROBE_EV_CUDA_MEMCPY;                                         \
	}

#define MEMSET_FROM(T)                                                                \
	static int memset_##T(const void *rec, size_t avail, struct xpl_cupti_act *o) \
	{                                                                             \
		const T *m = rec;                                                     \
                                                                                      \
		if (avail < READ_END(T, correlationId))                               \
			return -1;                                                    \
		ACT_COMMON(o, m, XPROBE_EV_CUDA_MEMSET);                              \
		o->bytes = m->bytes;                                                  \
		o->memset_value = m->value;                                           \
		return XPROBE_EV_CUDA_MEMSET;                                         \
	}

KERNEL_FROM(xpl_CUpti_ActivityKernel9)
KERNEL_FROM(xpl_CUpti_ActivityKernel10)
MEMCPY_FROM(xpl_CUpti_ActivityMemcpy5)
MEMCPY_FROM(xpl_CUpti_ActivityMemcpy6)
MEMSET_FROM(xpl_CUpti_ActivityMemset3)
MEMSET_FROM(xpl_CUpti_ActivityMemset4)

int xpl_cupti_decode(const struct xpl_cupti_layout *L, const void *rec, size_t avail,
		     struct xpl_cupti_act *out)
{
	xpl_CUpti_ActivityKind kind;

	memset(out, 0, sizeof(*out));
	if (avail < sizeof(kind))
		return -1;
	memcpy(&kind, rec, sizeof(kind));
	switch (kind) {
	case XPL_CUPTI_ACTIVITY_KIND_KERNEL:
	case XPL_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		switch (L->kernel) {
		case 9:
			return kernel_xpl_CUpti_ActivityKernel9(rec, avail, out);
		case 10:
			return kernel_xpl_CUpti_ActivityKernel10(rec, avail, out);
		}
		return 0;
	case XPL_CUPTI_ACTIVITY_KIND_MEMCPY:
		switch (L->memcpy) {
		case 5:
			return memcpy_xpl_CUpti_ActivityMemcpy5(rec, avail, out);
		case 6:
			return memcpy_xpl_CUpti_ActivityMemcpy6(rec, avail, out);
		}
		return 0;
	case XPL_CUPTI_ACTIVITY_KIND_MEMSET:
		switch (L->memset) {
		case 3:
			return memset_xpl_CUpti_ActivityMemset3(rec, avail, out);
		case 4:
			return memset_xpl_CUpti_ActivityMemset4(rec, avail, out);
		}
		return 0;
	default:
		return 0;
	}
}

uint64_t xpl_cupti_walk(const struct xpl_cupti_layout *L, xpl_cupti_next_fn next, uint8_t *buf,
			size_t valid, xpl_cupti_sink_fn fn, void *arg, uint64_t *bad)
{
	uint64_t n = 0;
	void *rec = NULL;

	if (!buf || !valid)
		return 0;
	while (next(buf, valid, &rec) == 0) {
		struct xpl_cupti_act a;
		uintptr_t p = (uintptr_t)rec, b = (uintptr_t)buf;
		int type;

		if (!rec || p < b || p - b >= valid || (p - b) % 8) {
			(*bad)++;
			break;
		}
		type = xpl_cupti_decode(L, rec, valid - (p - b), &a);
		if (type < 0) {
			(*bad)++;
			break;
		}
		n++;
		fn(arg, type, &a);
	}
	return n;
}
