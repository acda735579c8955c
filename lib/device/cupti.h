/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cupti.h - the CUPTI device backend: what the rest of libxprobe calls
 * (the Agent's ARM/STOP, its HELLO features, the session backend table)
 * and the activity-record decoder (cupti_walk.c), which is pure so the
 * fuzz target drives it.  docs/agent.md, "The CUPTI backend", is the
 * design; cupti.c holds the state and its locking rules.
 *
 * libxprobe never links libcupti: everything here reaches CUPTI through a
 * table of entry points resolved with dlsym from the libcupti.so.<major>
 * this file's loader opens (cupti.c), and only when a capture or a session
 * asks for CUDA data, with the types of our own transcription of CUPTI's
 * ABI (cupti_abi.h): no CUDA toolkit is needed to build it.  On a platform
 * CUPTI is not published for (not 64-bit Linux: XPL_CUPTI_ABI is 0) every
 * entry point here answers -XPROBE_E_BACKEND_UNAVAILABLE.
 */
#ifndef XPL_CUPTI_H
#define XPL_CUPTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xprobe/agent.h"
#include "xprobe/record.h"

struct xpl_agent_cap;
struct xpl_backend_ops;

/* --- the Agent's side --------------------------------------------------------------- */

/*
 * Before an ARM with CUDA filters publishes @c: load the backend if it is
 * not (find the CUDA major the process maps, dlopen libcupti.so.<major>,
 * subscribe), check that this CUPTI's activity layouts are known when @c
 * wants activity, resolve @c's CUDA_API filters (@req) into callback ids,
 * allocate the buffer pool.  Nothing is enabled yet.
 *
 * Return: 0; or -XPROBE_E_* with @why filled (the reply's message):
 * CUDA_CONTEXT_NOT_FOUND (no CUDA runtime or driver mapped),
 * UNSUPPORTED_CUDA_VERSION (a major outside 12..13, conflicting majors, a
 * CUPTI whose layouts this build does not know), CUPTI_NOT_AVAILABLE
 * (libcupti missing or broken, another subscriber), INVALID_EVENT_SELECTOR
 * (an API filter no callback of its domain passes), ALREADY_ACTIVE (the
 * backend is feeding another capture), BACKEND_UNAVAILABLE (a platform
 * without CUPTI, cupti_abi.h).
 */
int xpl_cupti_agent_prepare(struct xpl_agent_cap *c, const struct xprobe_agent_req *req, char *why,
			    size_t whylen);
/* After @c is published: enable its callbacks and activity kinds.  On
 * failure (-XPROBE_E_CUPTI_NOT_AVAILABLE, @why filled) nothing stays
 * enabled and the caller disarms @c. */
int xpl_cupti_agent_start(struct xpl_agent_cap *c, char *why, size_t whylen);
/* Deliver what CUPTI holds for @c now (SNAPSHOT): cuptiActivityFlushAll. */
void xpl_cupti_agent_flush(struct xpl_agent_cap *c);
/* Before @c is unpublished: disable its callbacks, flush, disable its
 * activity kinds, flush again.  Idempotent.  The Agent sets it as @c's
 * device_stop hook, which xpl_capture_disarm calls (the capture, in
 * lib/producers/, never calls up into this backend). */
void xpl_cupti_agent_stop(struct xpl_agent_cap *c);

/* Loaded: *cuda_major and *cupti_major set, true.  Else false, zeros. */
bool xpl_cupti_loaded(uint32_t *cuda_major, uint32_t *cupti_major);

/* --- sessions ------------------------------------------------------------------------ */

extern const struct xpl_backend_ops xpl_cupti_backend;
/* The backend is built (XPL_CUPTI_ABI): the backend table may name "cupti". */
bool xpl_cupti_built(void);

/* --- the decoder (cupti_walk.c) -------------------------------------------------------- */

/*
 * Which record structs a CUPTI version emits for the kinds we read
 * (CUPTI_ACTIVITY_KIND_KERNEL / CONCURRENT_KERNEL, MEMCPY, MEMSET), and the
 * bytes of each we read (every field we use lies within them).
 */
struct xpl_cupti_layout {
	uint32_t version; /* cuptiGetVersion() */
	uint32_t major; /* CUDA major of that CUPTI: 12 or 13 */
	uint8_t kernel, memcpy, memset; /* CUpti_ActivityKernel<N>, Memcpy<N>, Memset<N> */
	uint32_t kernel_bytes, memcpy_bytes, memset_bytes; /* sizeof of those structs */
};

/*
 * The layouts of CUPTI API version @version (cuptiGetVersion): 12.x
 * reports 19..28 (CUDA 12.0 .. 12.9), 13.x reports 13mmpp.  0; -1 for a
 * version outside CUDA 12..13 (@L->major says which major, 0 unknown); -2
 * for a 13.x minor newer than the layouts cupti_abi.h transcribes
 * (XPL_CUPTI_ABI_VERSION: its records may use a struct this build does not
 * know).
 */
int xpl_cupti_layout_for(uint32_t version, struct xpl_cupti_layout *L);

/* One activity as decoded, in CUPTI's clock. */
struct xpl_cupti_act {
	uint32_t type; /* XPROBE_EV_CUDA_KERNEL / _MEMCPY / _MEMSET */
	uint64_t start, end;
	uint32_t device, context, stream, corr, rcorr;
	uint32_t memcpy_kind, raw_copy_kind, memset_value;
	uint64_t bytes;
	uint32_t grid[3], block[3];
	const char *name; /* kernels: CUPTI's string (may be NULL) */
};

/*
 * Decode the record at @rec, @avail bytes before the end of its buffer.
 * Return: the XPROBE_EV_CUDA_* type; 0 for a kind this backend does not
 * read (counted as unknown, never guessed); -1 when the record's struct
 * does not fit in @avail (the buffer is not trusted past it).
 */
int xpl_cupti_decode(const struct xpl_cupti_layout *L, const void *rec, size_t avail,
		     struct xpl_cupti_act *out);

/* CUPTI's CUpti_ActivityMemcpyKind -> enum xprobe_agent_memcpy_kind (0: none). */
uint32_t xpl_cupti_memcpy_kind(uint32_t raw);

/* The bytes of @name a record keeps (<= 127, on a UTF-8 boundary) and
 * whether that is all of it; NULL is an empty, complete name. */
uint32_t xpl_cupti_name_kept(const char *name, bool *complete);

/*
 * Walk a completed buffer: @next is cuptiActivityGetNextRecord (or a
 * stand-in), called until it stops; every record it hands out must lie in
 * [@buf, @buf + @valid).  @fn gets each decoded activity (type > 0), or
 * type 0 for a record of a kind not read.  Returns the records seen; a
 * record outside the buffer or one that does not fit ends the walk and
 * counts in *@bad.
 */
typedef int (*xpl_cupti_next_fn)(uint8_t *buf, size_t valid, void **rec);
typedef void (*xpl_cupti_sink_fn)(void *arg, int type, const struct xpl_cupti_act *a);
uint64_t xpl_cupti_walk(const struct xpl_cupti_layout *L, xpl_cupti_next_fn next, uint8_t *buf,
			size_t valid, xpl_cupti_sink_fn fn, void *arg, uint64_t *bad);

#endif /* XPL_CUPTI_H */
