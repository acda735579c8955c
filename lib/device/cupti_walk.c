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
 * Kernel10 in 13.0 and 13.1, Kernel11 / Kernel12 in later 13.x), and
 * emits the newest struct of the library's own version.  We read each
 * record through the struct its CUPTI version emits; the fields we use sit
 * at the same offsets in every struct named here (tests/unit/
 * test_lib_cupti.c checks that against the installed headers), and a
 * record is only read when the buffer holds those fields.  A CUPTI newer
 * than the headers this file was built with is refused at ARM
 * (xpl_cupti_layout_for() returns -2): its structs are not in our headers.
 */
#include <stddef.h>

#include <cupti.h>

#include "../internal.h"
#include "cupti.h"

/* Bytes of a record we read: up to the end of the last field used. */
#define READ_END(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))

int xpl_cupti_layout_for(uint32_t version, struct xpl_cupti_layout *L)
{
	memset(L, 0, sizeof(*L));
	L->version = version;
	if (version >= 19 && version < 100) {
		/* CUDA 12.0 (19) .. 12.9 update 1 (28): Kernel9; the copy and
		 * set structs grew in 12.8 (26) */
		L->major = 12;
		L->kernel = 9;
		L->kernel_bytes = sizeof(CUpti_ActivityKernel9);
		L->memcpy = version >= 26 ? 6 : 5;
		L->memcpy_bytes = version >= 26 ? sizeof(CUpti_ActivityMemcpy6) :
						  sizeof(CUpti_ActivityMemcpy5);
		L->memset = version >= 26 ? 4 : 3;
		L->memset_bytes = version >= 26 ? sizeof(CUpti_ActivityMemset4) :
						  sizeof(CUpti_ActivityMemset3);
		return 0;
	}
	if (version < 130000 || version >= 140000) {
		/* CUDA 11 and older (<= 18), or another major's xxyyzz */
		L->major = version >= 100 ? version / 10000 : (version >= 13 ? 11 : 0);
		return -1;
	}
	L->major = 13;
	/* newer than our headers: its structs may be ones we do not have */
	if (CUPTI_API_VERSION < 130000 || version / 100 > CUPTI_API_VERSION / 100)
		return -2;
#if CUPTI_API_VERSION >= 130000
	L->memcpy = 6;
	L->memcpy_bytes = sizeof(CUpti_ActivityMemcpy6);
	L->memset = 4;
	L->memset_bytes = sizeof(CUpti_ActivityMemset4);
	L->kernel = 10;
	L->kernel_bytes = sizeof(CUpti_ActivityKernel10);
#endif
#if CUPTI_API_VERSION >= 130200
	if (version >= 130200) {
		L->kernel = 11;
		L->kernel_bytes = sizeof(CUpti_ActivityKernel11);
	}
#endif
#if CUPTI_API_VERSION >= 130300
	if (version >= 130300) {
		L->kernel = 12;
		L->kernel_bytes = sizeof(CUpti_ActivityKernel12);
	}
#endif
	return L->kernel ? 0 : -2;
}

uint32_t xpl_cupti_memcpy_kind(uint32_t raw)
{
	switch (raw) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return XPROBE_AGENT_MEMCPY_HTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return XPROBE_AGENT_MEMCPY_DTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		return XPROBE_AGENT_MEMCPY_DTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return XPROBE_AGENT_MEMCPY_HTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return XPROBE_AGENT_MEMCPY_PTOP;
	}
	return 0;
}

uint32_t xpl_cupti_name_kept(const char *name, bool *complete)
{
	*complete = true;
	return name ? (uint32_t)xpl_name_cut(name, complete) : 0;
}

#define KERNEL_FROM(T)                                                                \
	static int kernel_##T(const void *rec, size_t avail, struct xpl_cupti_act *o) \
	{                                                                             \
		const T *k = rec;                                                     \
                                                                                      \
		if (avail < READ_END(T, name))                                        \
			return -1;                                                    \
		o->type = XPROBE_EV_CUDA_KERNEL;                                      \
		o->start = k->start;                                                  \
		o->end = k->end;                                                      \
		o->device = k->deviceId;                                              \
		o->context = k->contextId;                                            \
		o->stream = k->streamId;                                              \
		o->corr = k->correlationId;                                           \
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
		o->type = XPROBE_EV_CUDA_MEMCPY;                                      \
		o->start = m->start;                                                  \
		o->end = m->end;                                                      \
		o->device = m->deviceId;                                              \
		o->context = m->contextId;                                            \
		o->stream = m->streamId;                                              \
		o->corr = m->correlationId;                                           \
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
		o->type = XPROBE_EV_CUDA_MEMSET;                                      \
		o->start = m->start;                                                  \
		o->end = m->end;                                                      \
		o->device = m->deviceId;                                              \
		o->context = m->contextId;                                            \
		o->stream = m->streamId;                                              \
		o->corr = m->correlationId;                                           \
		o->bytes = m->bytes;                                                  \
		o->memset_value = m->value;                                           \
		return XPROBE_EV_CUDA_MEMSET;                                         \
	}

KERNEL_FROM(CUpti_ActivityKernel9)
MEMCPY_FROM(CUpti_ActivityMemcpy5)
MEMSET_FROM(CUpti_ActivityMemset3)
#if CUPTI_API_VERSION >= 130000
KERNEL_FROM(CUpti_ActivityKernel10)
MEMCPY_FROM(CUpti_ActivityMemcpy6)
MEMSET_FROM(CUpti_ActivityMemset4)
#endif
#if CUPTI_API_VERSION >= 130200
KERNEL_FROM(CUpti_ActivityKernel11)
#endif
#if CUPTI_API_VERSION >= 130300
KERNEL_FROM(CUpti_ActivityKernel12)
#endif

int xpl_cupti_decode(const struct xpl_cupti_layout *L, const void *rec, size_t avail,
		     struct xpl_cupti_act *out)
{
	CUpti_ActivityKind kind;

	memset(out, 0, sizeof(*out));
	if (avail < sizeof(kind))
		return -1;
	memcpy(&kind, rec, sizeof(kind));
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		switch (L->kernel) {
		case 9:
			return kernel_CUpti_ActivityKernel9(rec, avail, out);
#if CUPTI_API_VERSION >= 130000
		case 10:
			return kernel_CUpti_ActivityKernel10(rec, avail, out);
#endif
#if CUPTI_API_VERSION >= 130200
		case 11:
			return kernel_CUpti_ActivityKernel11(rec, avail, out);
#endif
#if CUPTI_API_VERSION >= 130300
		case 12:
			return kernel_CUpti_ActivityKernel12(rec, avail, out);
#endif
		}
		return 0;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		switch (L->memcpy) {
		case 5:
			return memcpy_CUpti_ActivityMemcpy5(rec, avail, out);
#if CUPTI_API_VERSION >= 130000
		case 6:
			return memcpy_CUpti_ActivityMemcpy6(rec, avail, out);
#endif
		}
		return 0;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		switch (L->memset) {
		case 3:
			return memset_CUpti_ActivityMemset3(rec, avail, out);
#if CUPTI_API_VERSION >= 130000
		case 4:
			return memset_CUpti_ActivityMemset4(rec, avail, out);
#endif
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
	while (next(buf, valid, &rec) == CUPTI_SUCCESS) {
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
