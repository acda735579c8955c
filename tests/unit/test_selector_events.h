/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_selector_events.h - builders of hand-made events for the selector
 * and correlator unit tests.  Each adds one event to a capture the way a
 * producer would (host part, CUDA part, NVTX part, attributes as canonical
 * JSON text) and returns it, so a test can adjust a field afterwards.
 */
#ifndef XP_TEST_SELECTOR_EVENTS_H
#define XP_TEST_SELECTOR_EVENTS_H

#include <stdlib.h>

#include "model/event.h"

#define TPID 4242u
#define TSTART 777u /* process_start_time of host events */

static __attribute__((unused)) struct xp_event *tev_base(struct xp_capture *c, uint8_t type, uint8_t source, uint64_t ts,
				 uint32_t tid)
{
	int err = 0;
	struct xp_event *e = xp_capture_add(c, &err);

	if (!e)
		abort();
	e->sequence = c->count - 1;
	e->event_type = type;
	e->source = source;
	e->timestamp_ns = ts;
	e->timestamp_raw = ts;
	e->pid = TPID;
	e->tid = tid;
	e->clock_domain = XP_CLOCK_HOST_MONOTONIC;
	return e;
}

static __attribute__((unused)) struct xp_event *tev_host(struct xp_capture *c, uint8_t type, uint64_t ts, uint32_t tid,
				 uint8_t probe_kind, const char *binary, const char *symbol)
{
	struct xp_event *e = tev_base(c, type, XP_SRC_EBPF, ts, tid);

	e->flags |= XP_EVF_HOST | XP_EVF_CPU | XP_EVF_START_TIME;
	e->process_start_time = TSTART;
	e->host.probe_kind = probe_kind;
	e->host.binary_path = xp_capture_intern(c, binary);
	e->host.symbol = xp_capture_intern(c, symbol);
	return e;
}

static __attribute__((unused)) struct xp_event *tev_uprobe(struct xp_capture *c, uint64_t ts, uint32_t tid,
				   const char *binary, const char *symbol, int is_return)
{
	return tev_host(c, is_return ? XP_EV_HOST_FUNCTION_EXIT : XP_EV_HOST_FUNCTION_ENTRY, ts,
			tid, is_return ? XP_PROBE_URETPROBE : XP_PROBE_UPROBE, binary, symbol);
}

static __attribute__((unused)) struct xp_event *tev_syscall(struct xp_capture *c, uint64_t ts, uint32_t tid,
				    const char *name, int is_exit)
{
	struct xp_event *e = tev_host(c, is_exit ? XP_EV_SYSCALL_EXIT : XP_EV_SYSCALL_ENTRY, ts,
				      tid, XP_PROBE_SYSCALL, NULL, name);

	if (xp_event_add_attr_str(c, e, "tracepoint_category", "syscalls"))
		abort();
	return e;
}

static __attribute__((unused)) struct xp_event *tev_tracepoint(struct xp_capture *c, uint64_t ts, uint32_t tid,
				       const char *category, const char *name)
{
	struct xp_event *e =
		tev_host(c, XP_EV_TRACEPOINT, ts, tid, XP_PROBE_TRACEPOINT, NULL, name);

	if (xp_event_add_attr_str(c, e, "tracepoint_category", category))
		abort();
	return e;
}

static __attribute__((unused)) struct xp_event *tev_gc(struct xp_capture *c, uint64_t ts, uint32_t tid, int is_end)
{
	struct xp_event *e = tev_host(c, XP_EV_MARKER, ts, tid, XP_PROBE_USDT, "/usr/bin/python3.11",
				      is_end ? "gc__done" : "gc__start");

	if (xp_event_add_attr_str(c, e, "usdt_provider", "python"))
		abort();
	return e;
}

static __attribute__((unused)) struct xp_event *tev_api(struct xp_capture *c, uint64_t ts, uint32_t tid,
				const char *domain, const char *name, int is_exit, uint32_t ctx,
				uint32_t corr)
{
	struct xp_event *e = tev_base(c, is_exit ? XP_EV_CUDA_API_EXIT : XP_EV_CUDA_API_ENTRY,
				      XP_SRC_CUPTI_CALLBACK, ts, tid);

	e->flags |= XP_EVF_CUDA;
	e->cuda.context_id = ctx;
	e->cuda.correlation_id = corr;
	e->cuda.runtime_correlation_id = corr;
	e->cuda.flags = XP_CUDAF_CONTEXT_ID | XP_CUDAF_CORRELATION_ID |
			XP_CUDAF_RUNTIME_CORRELATION_ID;
	if (xp_event_add_attr_str(c, e, "cuda_api_domain", domain) ||
	    xp_event_add_attr_str(c, e, "cuda_api_name", name))
		abort();
	return e;
}

/* An activity event (kernel/memcpy/memset start or end) on a stream. */
static __attribute__((unused)) struct xp_event *tev_activity(struct xp_capture *c, uint8_t type, uint64_t ts,
				     uint8_t clock, uint32_t ctx, uint32_t corr, uint32_t device,
				     uint64_t stream)
{
	struct xp_event *e = tev_base(c, type, XP_SRC_CUPTI_ACTIVITY, ts, 0);

	e->clock_domain = clock;
	e->flags |= XP_EVF_CUDA;
	e->cuda.context_id = ctx;
	e->cuda.correlation_id = corr;
	e->cuda.device_id = device;
	e->cuda.stream_id = stream;
	e->cuda.flags = XP_CUDAF_CONTEXT_ID | XP_CUDAF_CORRELATION_ID | XP_CUDAF_DEVICE_ID |
			XP_CUDAF_STREAM_ID;
	return e;
}

static __attribute__((unused)) struct xp_event *tev_kernel(struct xp_capture *c, uint64_t ts, int is_end,
				   const char *name, uint32_t ctx, uint32_t corr, uint64_t stream,
				   uint8_t clock)
{
	struct xp_event *e = tev_activity(c, is_end ? XP_EV_GPU_KERNEL_END : XP_EV_GPU_KERNEL_START,
					  ts, clock, ctx, corr, 0, stream);

	e->cuda.kernel_name = xp_capture_intern(c, name);
	return e;
}

static __attribute__((unused)) struct xp_event *tev_memcpy(struct xp_capture *c, uint64_t ts, int is_end, uint8_t kind,
				   uint32_t ctx, uint32_t corr, uint64_t stream, uint8_t clock)
{
	struct xp_event *e = tev_activity(c, is_end ? XP_EV_GPU_MEMCPY_END : XP_EV_GPU_MEMCPY_START,
					  ts, clock, ctx, corr, 0, stream);

	e->cuda.memcpy_kind = kind;
	e->cuda.bytes = 4096;
	e->cuda.flags |= XP_CUDAF_MEMCPY_KIND | XP_CUDAF_BYTES;
	return e;
}

static __attribute__((unused)) struct xp_event *tev_nvtx(struct xp_capture *c, uint64_t ts, uint32_t tid,
				 const char *name, int is_end, uint8_t kind, uint64_t range_id)
{
	struct xp_event *e = tev_base(c, is_end ? XP_EV_NVTX_RANGE_END : XP_EV_NVTX_RANGE_START,
				      XP_SRC_CUPTI_CALLBACK, ts, tid);

	e->flags |= XP_EVF_NVTX;
	e->nvtx.name = xp_capture_intern(c, name);
	e->nvtx.name_complete = 1;
	e->nvtx.range_kind = kind;
	e->nvtx.range_id = range_id;
	e->nvtx.start_tid = tid;
	return e;
}

#endif /* XP_TEST_SELECTOR_EVENTS_H */
