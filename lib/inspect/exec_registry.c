/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec_registry.c - executions (xprobe_execution_begin/_end): the registry
 * of executions in flight, their ids, their execution_begin/_end events,
 * and the device-profile engine each one runs on (the inspect session's,
 * else continuous profiling's), which arms and finishes the captures an
 * execution needs (MODEL, on-fail, continuous).
 *
 * The registry is a list under xpl_ctl_lock (controller.h); an execution
 * remembers the engine it began on, and an engine that goes away (close,
 * continuous stop) is forgotten by every execution still in flight, so
 * their ends only record events.  Executions work without any session:
 * they are then only numbered.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../internal.h"
#include "../producers/clock.h"
#include "../producers/sys_trace.h"
#include "../profile/engine.h"
#include "controller.h"
#include "xprobe/inspect.h"

struct xpl_exec_ent *xpl_execs;
static _Atomic uint64_t g_exec_id;

void xpl_execs_forget_engine(struct xpl_engine *e)
{
	for (struct xpl_exec_ent *x = xpl_execs; x; x = x->next)
		if (x->engine == e) {
			x->engine = NULL;
			x->ex = NULL;
		}
}

struct xpl_engine *xpl_active_engine(struct xpl_file_ctx *f)
{
	if (xpl_sess && xpl_sess->engine && atomic_load(&xpl_sess->state) == XPL_S_ACTIVE) {
		xpl_session_file_ctx(xpl_sess, f);
		xpl_calib_now(&f->end, xpl_sess->tsc);
		return xpl_sess->engine;
	}
	if (xpl_cont) {
		memset(f, 0, sizeof(*f));
		f->dir = xpl_cont->dir;
		f->dirfd = -1; /* opened by the write that needs it */
		f->pid = (uint32_t)getpid();
		f->process_start_time = xpl_process_start_time((int)f->pid);
		f->instance_id = xpl_cont->instance_id;
		f->session_start_ns = xpl_cont->start_real_ns;
		f->backend = xpl_cont->backend;
		f->simulated = xpl_cont->simulated;
		xpl_calib_now(&f->begin, false);
		f->end = f->begin;
		return xpl_cont->engine;
	}
	return NULL;
}

XPROBE_API int xprobe_execution_begin(const char *model, uint64_t *exec_id)
{
	struct xpl_exec_ent *x;
	struct xpl_file_ctx f;
	struct xpl_engine *e;
	int rc = 0;

	if (!xpl_model_name(model) || !exec_id)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"model must be 1..127 bytes without '/', exec_id not NULL");
	x = calloc(1, sizeof(*x));
	if (!x)
		return xpl_fail(-ENOMEM, "out of memory");
	snprintf(x->model, sizeof(x->model), "%s", model);
	x->begin_ns = xpl_mono_ns();
	pthread_mutex_lock(&xpl_ctl_lock);
	x->id = atomic_fetch_add(&g_exec_id, 1) + 1;
	e = xpl_active_engine(&f);
	if (e) {
		unsigned what = 0;

		if (xpl_cont && e == xpl_cont->engine)
			what = XPL_EXEC_CONTINUOUS;
		else if (xpl_sess->cfg.on_fail)
			what = XPL_EXEC_AUTO_ON_FAIL;
		else if (xpl_sess->cfg.enable && xpl_sess->cfg.mode == XPROBE_DEVICE_PROFILE_MODEL)
			what = XPL_EXEC_AUTO_MODEL;
		rc = xpl_engine_exec_begin(e, x->id, model, x->begin_ns, what, &x->ex);
		x->engine = e;
	}
	if (rc) {
		pthread_mutex_unlock(&xpl_ctl_lock);
		free(x);
		return rc;
	}
	x->next = xpl_execs;
	xpl_execs = x;
	xpl_rec_named(XPROBE_EV_EXEC_BEGIN, model, 0, x->id, 0);
	pthread_mutex_unlock(&xpl_ctl_lock);
	*exec_id = x->id;
	return 0;
}

XPROBE_API int xprobe_execution_end(uint64_t exec_id, int status)
{
	struct xpl_exec_ent **pp, *x = NULL;
	struct xpl_file_ctx f;
	struct xpl_engine *e;
	int rc = 0;

	pthread_mutex_lock(&xpl_ctl_lock);
	for (pp = &xpl_execs; *pp; pp = &(*pp)->next)
		if ((*pp)->id == exec_id) {
			x = *pp;
			*pp = x->next;
			break;
		}
	if (!x) {
		pthread_mutex_unlock(&xpl_ctl_lock);
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"no execution %llu is in flight (unknown or already ended)",
				(unsigned long long)exec_id);
	}
	xpl_rec_named(XPROBE_EV_EXEC_END, x->model, (uint32_t)status, x->id, 0);
	e = xpl_active_engine(&f);
	if (e && e == x->engine)
		rc = xpl_engine_exec_end(e, x->ex, x->id, x->model, x->begin_ns, xpl_mono_ns(),
					 status, &f);
	else if (e)
		rc = xpl_engine_exec_end(e, NULL, x->id, x->model, x->begin_ns, xpl_mono_ns(),
					 status, &f);
	pthread_mutex_unlock(&xpl_ctl_lock);
	free(x);
	return rc;
}
