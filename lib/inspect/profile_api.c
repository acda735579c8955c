/* SPDX-License-Identifier: Apache-2.0 */
/*
 * profile_api.c - the entry points of include/xprobe/profile.h: MODEL
 * profiles by file name, SESSION captures by device, and continuous
 * (flight-recorder) profiling with its own engine.  Each call checks its
 * arguments, takes xpl_ctl_lock, finds the engine (the inspect session's
 * or continuous profiling's; exec_registry.c) and hands over to
 * profile/engine.c, where the key spaces live.
 *
 * Continuous profiling and inspect device profiling exclude each other in
 * both directions (CONTINUOUS_CONFLICT): one engine at a time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../internal.h"
#include "../profile/engine.h"
#include "config.h"
#include "controller.h"
#include "xprobe/profile.h"

#define WITH_ENGINE(e, f)                                                                  \
	struct xpl_file_ctx f;                                                             \
	struct xpl_engine *e;                                                              \
	pthread_mutex_lock(&xpl_ctl_lock);                                                 \
	e = xpl_active_engine(&f);                                                         \
	if (!e) {                                                                          \
		pthread_mutex_unlock(&xpl_ctl_lock);                                       \
		return xpl_fail(-XPROBE_E_NOT_ACTIVE,                                      \
				"no device-profile engine: begin an inspect session with " \
				"device profiling, or continuous profiling");              \
	}

XPROBE_API int xprobe_profile_start(const char *model, const char *filename)
{
	int rc;

	if (!xpl_model_name(model) || !xpl_plain_name(filename))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"model must be 1..127 bytes without '/'; filename a plain name");
	{
		WITH_ENGINE(e, f);
		(void)f;
		rc = xpl_engine_profile_start(e, model, filename);
		pthread_mutex_unlock(&xpl_ctl_lock);
	}
	return rc;
}

XPROBE_API int xprobe_profile_stop(const char *filename)
{
	int rc;

	if (!xpl_plain_name(filename))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "filename must be a plain file name");
	{
		WITH_ENGINE(e, f);
		rc = xpl_engine_profile_stop(e, filename, &f);
		pthread_mutex_unlock(&xpl_ctl_lock);
	}
	return rc;
}

XPROBE_API int xprobe_profile_session_start(uint32_t device)
{
	int rc;

	WITH_ENGINE(e, f);
	(void)f;
	rc = xpl_engine_session_start(e, device);
	pthread_mutex_unlock(&xpl_ctl_lock);
	return rc;
}

XPROBE_API int xprobe_profile_session_stop(uint32_t device, uint64_t *session_id)
{
	int rc;

	if (!session_id)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "session_id must not be NULL");
	{
		WITH_ENGINE(e, f);
		(void)f;
		rc = xpl_engine_session_stop(e, device, session_id);
		pthread_mutex_unlock(&xpl_ctl_lock);
	}
	return rc;
}

XPROBE_API int xprobe_profile_session_serialize(uint32_t device, uint64_t session_id,
						const char *path)
{
	int rc;

	if (path && !path[0])
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "path must be NULL or a file path");
	{
		WITH_ENGINE(e, f);
		rc = xpl_engine_session_serialize(e, device, session_id, path, &f);
		pthread_mutex_unlock(&xpl_ctl_lock);
	}
	return rc;
}

XPROBE_API int xprobe_profile_session_drop(uint32_t device, uint64_t session_id)
{
	int rc;

	WITH_ENGINE(e, f);
	(void)f;
	rc = xpl_engine_session_drop(e, device, session_id);
	pthread_mutex_unlock(&xpl_ctl_lock);
	return rc;
}

XPROBE_API int xprobe_profile_device_count(void)
{
	int n;

	WITH_ENGINE(e, f);
	(void)f;
	n = (int)xpl_engine_ndev(e);
	pthread_mutex_unlock(&xpl_ctl_lock);
	return n;
}

XPROBE_API int xprobe_profile_continuous_start(const struct xprobe_continuous_opts *opts)
{
	const struct xpl_backend_ops *ops = NULL;
	struct xpl_continuous *c;
	const char *backend, *dir;
	uint32_t capacity;
	int rc;

	xpl_clear_error();
	if (!opts)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "continuous opts must not be NULL");
	if (!OPTS_VALID(opts, xprobe_continuous_opts))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"continuous opts: bad sz or unknown trailing fields");
	backend = OPTS_GET(opts, backend, NULL);
	capacity = OPTS_GET(opts, capacity, 0);
	dir = OPTS_GET(opts, output_dir, NULL);
	if (!capacity)
		capacity = 8;
	if (capacity > 1024)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "capacity %u is above 1024", capacity);
	if (!backend || !backend[0])
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"continuous profiling needs a backend: 'sim' must be chosen "
				"explicitly");
	rc = xpl_backend_find(backend, &ops);
	if (rc == -XPROBE_E_BACKEND_UNAVAILABLE)
		return xpl_fail(rc, "the cupti backend is not in this build of libxprobe");
	if (rc)
		return xpl_fail(rc, "unknown backend '%s'", backend);
	if (!OPTS_VALID(OPTS_GET(opts, backend_opts, NULL), xprobe_backend_opts))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"backend opts: bad sz or unknown trailing fields");
	if (dir && strlen(dir) >= 3072)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "output dir too long");
	if (dir && dir[0] && (rc = xpl_outdir_check_base(dir)))
		return rc;
	pthread_mutex_lock(&xpl_ctl_lock);
	if (xpl_cont) {
		pthread_mutex_unlock(&xpl_ctl_lock);
		return xpl_fail(-XPROBE_E_ALREADY_ACTIVE,
				"continuous profiling is already running");
	}
	if (xpl_sess && xpl_sess->engine && atomic_load(&xpl_sess->state) == XPL_S_ACTIVE) {
		pthread_mutex_unlock(&xpl_ctl_lock);
		return xpl_fail(-XPROBE_E_CONTINUOUS_CONFLICT,
				"inspect device profiling is running (session %s): disable it "
				"before continuous profiling",
				xpl_sess->dir);
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pthread_mutex_unlock(&xpl_ctl_lock);
		return xpl_fail(-ENOMEM, "out of memory");
	}
	{
		struct xpl_engine_params ep = {
			.ops = ops,
			.opts = OPTS_GET(opts, backend_opts, NULL),
			.enabled = NULL,
			.capture_bytes = 0,
			.warmup = OPTS_GET(opts, warmup, 0),
		};
		const struct xprobe_backend_opts *bo = ep.opts;

		if (bo)
			ep.capture_bytes = OPTS_GET(bo, capture_bytes, 0);
		rc = xpl_engine_create(&ep, &c->engine);
	}
	if (!rc)
		rc = xpl_engine_continuous_enable(c->engine, capacity, NULL);
	if (rc) {
		char why[256];

		snprintf(why, sizeof(why), "%s", xprobe_last_error());
		xpl_engine_destroy(c->engine);
		free(c);
		pthread_mutex_unlock(&xpl_ctl_lock);
		return xpl_fail(rc == -ENOMEM || xpl_backend_own_code(rc) ? rc :
									     -XPROBE_E_DEVICE_FAILED,
				"the %s backend could not be opened: %s", backend,
				why[0] ? why : xpl_errdesc(rc));
	}
	snprintf(c->dir, sizeof(c->dir), "%s", dir && dir[0] ? dir : "./output");
	c->start_real_ns = xpl_now_real_ns();
	c->backend = ops->name;
	c->simulated = ops->simulated;
	{
		struct xprobe_inspect_config tmp;

		xpl_config_defaults(&tmp);
		snprintf(c->instance_id, sizeof(c->instance_id), "%s", tmp.instance_id);
	}
	xpl_cont = c;
	pthread_mutex_unlock(&xpl_ctl_lock);
	return 0;
}

XPROBE_API int xprobe_profile_continuous_save(const struct xprobe_continuous_save_opts *opts)
{
	struct xpl_file_ctx f;
	const char *dir;
	int rc, dirfd = -1;

	if (!OPTS_VALID(opts, xprobe_continuous_save_opts))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"save opts: bad sz or unknown trailing fields");
	pthread_mutex_lock(&xpl_ctl_lock);
	if (!xpl_cont) {
		pthread_mutex_unlock(&xpl_ctl_lock);
		return xpl_fail(-XPROBE_E_NOT_ACTIVE,
				"to use xprobe_profile_continuous_save() you must first call "
				"xprobe_profile_continuous_start()");
	}
	dir = OPTS_GET(opts, output_dir, NULL);
	if (!dir || !dir[0])
		dir = xpl_cont->dir;
	rc = xpl_outdir_check_base(dir);
	if (!rc)
		rc = xpl_outdir_open(dir, &dirfd);
	if (!rc) {
		xpl_active_engine(&f);
		rc = xpl_engine_continuous_save(xpl_cont->engine, OPTS_GET(opts, count, 0), dir,
						dirfd, &f);
		close(dirfd);
	}
	pthread_mutex_unlock(&xpl_ctl_lock);
	return rc;
}

XPROBE_API int xprobe_profile_continuous_stop(void)
{
	pthread_mutex_lock(&xpl_ctl_lock);
	if (!xpl_cont) {
		pthread_mutex_unlock(&xpl_ctl_lock);
		return xpl_fail(-XPROBE_E_NOT_ACTIVE, "continuous profiling is not running");
	}
	xpl_execs_forget_engine(xpl_cont->engine);
	xpl_engine_destroy(xpl_cont->engine);
	free(xpl_cont);
	xpl_cont = NULL;
	pthread_mutex_unlock(&xpl_ctl_lock);
	return 0;
}
