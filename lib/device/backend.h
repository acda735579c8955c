/* SPDX-License-Identifier: Apache-2.0 */
/*
 * backend.h - the device backend table: the few functions through which the
 * device-profile engine (profile/engine.c) drives a device, whatever it is.
 *
 * Shaped after CUPTI's activity API, the real backend to come: the backend
 * fills activity buffers on its own schedule (CUPTI: bufferRequested /
 * bufferCompleted callbacks on its own thread) and hands each completed
 * buffer to xpl_backend_complete(), which passes it to the engine's
 * complete hook (profile/engine.c sets it, with `engine`, before open:
 * device/ sits below profile/ and never calls up into it); the engine
 * only queues it.  harvest() forces every pending buffer out
 * (cuptiActivityFlushAll) and reports whether that worked; the engine then
 * routes the queued records to the captures that want them (SESSION
 * slots, MODEL profiles, continuous).  So a backend never needs to know
 * about captures, and routing happens in one place, under the engine's
 * lock.
 *
 *   open     count the devices (ndev), allocate per-device state
 *   start    arm device d: begin collecting (CUPTI: enable activity kinds)
 *   harvest  complete every pending buffer of d now; an error means the
 *            harvest is partial (what was completed stays delivered)
 *   stop     disarm d (after a last harvest)
 *   drop     forget whatever d still holds (rollback)
 *   execution  an execution the application declared ended: a backend that
 *            sees devices by itself (CUPTI) ignores it; `sim` turns it into
 *            deterministic activity records on each armed device
 *   close    free everything
 *
 * Records are struct xprobe_record of type XPROBE_EV_DEVICE_ACTIVITY
 * (sim) or XPROBE_EV_CUDA_KERNEL/_MEMCPY/_MEMSET (cupti, struct
 * xprobe_cuda_activity): ts = start (CLOCK_MONOTONIC ns), a0 = end ns,
 * aux = device, a1 = execution id (0 = not attributable).
 */
#ifndef XPL_BACKEND_H
#define XPL_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "xprobe/inspect.h"

struct xpl_engine;

struct xpl_exec_info {
	uint64_t id;
	const char *model;
	uint64_t begin_ns; /* CLOCK_MONOTONIC */
	uint64_t end_ns;
	int status;
};

struct xpl_backend {
	const struct xpl_backend_ops *ops;
	struct xpl_engine *engine; /* where completed buffers go */
	/* how they go there (xpl_backend_complete): set with `engine` before
	 * open and never changed while the backend is open, so the backend's
	 * threads read it without a lock; NULL drops the buffers */
	void (*complete)(struct xpl_engine *e, uint32_t dev, const void *recs, size_t len);
	uint32_t ndev;
	void *priv;
};

struct xpl_backend_ops {
	const char *name;
	bool simulated;
	int (*open)(struct xpl_backend *b, const struct xprobe_backend_opts *o);
	void (*close)(struct xpl_backend *b);
	int (*start)(struct xpl_backend *b, uint32_t dev);
	int (*harvest)(struct xpl_backend *b, uint32_t dev);
	void (*stop)(struct xpl_backend *b, uint32_t dev);
	void (*drop)(struct xpl_backend *b, uint32_t dev);
	void (*execution)(struct xpl_backend *b, uint32_t dev, const struct xpl_exec_info *e);
};

/* The table by name: "sim", "cupti" (lib/device/cupti.c; a build for a
 * platform without CUPTI, not 64-bit Linux, answers
 * -XPROBE_E_BACKEND_UNAVAILABLE for it).  Anything else:
 * -XPROBE_E_UNKNOWN_NAME. */
int xpl_backend_find(const char *name, const struct xpl_backend_ops **ops);

/* Codes a backend's open returns that its callers pass on as they are
 * (the reason is the backend's, not "the device failed"). */
static inline bool xpl_backend_own_code(int rc)
{
	return rc == -XPROBE_E_INVALID_ARGUMENT || rc == -XPROBE_E_UNSUPPORTED_CUDA_VERSION ||
	       rc == -XPROBE_E_CUPTI_NOT_AVAILABLE || rc == -XPROBE_E_CUDA_CONTEXT_NOT_FOUND ||
	       rc == -XPROBE_E_ALREADY_ACTIVE || rc == -XPROBE_E_BACKEND_UNAVAILABLE;
}

/* A backend hands over a completed buffer of @len bytes of records for
 * @dev to its engine.  The engine copies; callable from any thread. */
static inline void xpl_backend_complete(struct xpl_backend *b, uint32_t dev, const void *recs,
					size_t len)
{
	if (b->complete)
		b->complete(b->engine, dev, recs, len);
}

extern const struct xpl_backend_ops xpl_sim_backend;

/* Test visibility of the sim backend (tests/unit/test_lib_*.c). */
struct xpl_sim_stats {
	uint64_t starts, stops, drops, harvests, arm_failures, harvest_failures, executions;
	bool armed;
};
void xpl_sim_stats(const struct xpl_backend *b, uint32_t dev, struct xpl_sim_stats *out);

#endif /* XPL_BACKEND_H */
