/* SPDX-License-Identifier: Apache-2.0 */
/*
 * profile.h - the device-profile engine's public calls: two key spaces on
 * one engine (docs/libxprobe.md, "Device profiles"), and continuous
 * (flight-recorder) profiling.
 *
 *   MODEL key space   a file name -> a model: xprobe_profile_start(model,
 *                     file) captures the device activity of every execution
 *                     of that model until xprobe_profile_stop(file) writes it.
 *   SESSION key space a device -> one running capture; stopping it stashes
 *                     the harvest under a fresh session id, which is then
 *                     serialized to a file or dropped.
 *   continuous        every execution is captured into a bounded ring of the
 *                     newest executions; save writes the newest (or last N)
 *                     to timestamped files.  Excludes inspect device
 *                     profiling, both ways (-XPROBE_E_CONTINUOUS_CONFLICT).
 *
 * MODEL and SESSION calls need a running engine: an inspect session with
 * device profiling (inspect.h) or continuous profiling; otherwise they
 * return -XPROBE_E_NOT_ACTIVE.  Files of MODEL and SESSION profiles go to
 * the session directory.
 */
#ifndef XPROBE_PROFILE_H
#define XPROBE_PROFILE_H

#include <stdint.h>

#include "common.h"
#include "inspect.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * xprobe_profile_start() - register @filename for @model: every execution of
 * @model that begins from now on is captured into it, on every enabled
 * device, until xprobe_profile_stop(@filename).
 * @model: 1..127 bytes. @filename: a plain file name (no '/', not "." or
 * ".."), 1..127 bytes, unique among registered profiles.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT; -XPROBE_E_NOT_ACTIVE (no engine);
 * -XPROBE_E_ALREADY_ACTIVE (@filename is registered); -ENOMEM.
 */
XPROBE_API int xprobe_profile_start(const char *model, const char *filename);

/**
 * xprobe_profile_stop() - stop the MODEL profile registered as @filename and
 * write <session dir>/@filename.
 * @filename: as given to xprobe_profile_start.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT; -XPROBE_E_NOT_ACTIVE (no engine);
 * -XPROBE_E_NO_SUCH_SESSION (no such profile, or already stopped);
 * -XPROBE_E_OUTPUT_FAILED.
 */
XPROBE_API int xprobe_profile_stop(const char *filename);

/**
 * xprobe_profile_session_start() - start the SESSION capture of @device.
 * @device: 0 .. devices-1.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT (no such device);
 * -XPROBE_E_NOT_ACTIVE (no engine); -XPROBE_E_ALREADY_ACTIVE;
 * -XPROBE_E_DEVICE_FAILED (the backend failed to arm it).
 */
XPROBE_API int xprobe_profile_session_start(uint32_t device);

/**
 * xprobe_profile_session_stop() - stop the SESSION capture of @device,
 * harvest it and stash the harvest under a fresh id (per device, from 1).
 * A failed harvest still stashes what was collected, marked with the
 * error, and returns -XPROBE_E_DEVICE_FAILED with the id set.
 * @device: the device. @session_id: receives the id.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT; -XPROBE_E_NOT_ACTIVE (no engine,
 * or no capture running on @device); -XPROBE_E_DEVICE_FAILED.
 */
XPROBE_API int xprobe_profile_session_stop(uint32_t device, uint64_t *session_id);

/**
 * xprobe_profile_session_serialize() - write a stashed harvest and remove it
 * from the stash.
 * @device: the device. @session_id: from xprobe_profile_session_stop.
 * @path: the file to write, or NULL for
 * <session dir>/profile_dev_<device>_session_<id>.xtf.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT; -XPROBE_E_NOT_ACTIVE;
 * -XPROBE_E_NO_SUCH_SESSION; -XPROBE_E_OUTPUT_FAILED (the harvest stays
 * stashed).
 */
XPROBE_API int xprobe_profile_session_serialize(uint32_t device, uint64_t session_id,
						const char *path);

/**
 * xprobe_profile_session_drop() - discard a stashed harvest.
 * @device: the device. @session_id: the id.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT; -XPROBE_E_NOT_ACTIVE;
 * -XPROBE_E_NO_SUCH_SESSION.
 */
XPROBE_API int xprobe_profile_session_drop(uint32_t device, uint64_t session_id);

/**
 * xprobe_profile_device_count() - devices of the running engine's backend.
 *
 * Return: the count (>= 1); -XPROBE_E_NOT_ACTIVE.
 */
XPROBE_API int xprobe_profile_device_count(void);

struct xprobe_continuous_opts {
	size_t sz; /* size of this struct, for forward/backward compatibility */
	/* where save writes; NULL or "" = "./output".  v0.1 */
	const char *output_dir;
	/* backend name: "sim" (required explicitly) or "cupti".  v0.1 */
	const char *backend;
	/* backend options, NULL = defaults.  v0.1 */
	const struct xprobe_backend_opts *backend_opts;
	/* executions kept, newest first; 0 = 8; at most 1024.  v0.1 */
	uint32_t capacity;
	/* skip the first N executions of each model; 0 = none.  v0.1 */
	uint32_t warmup;
	size_t : 0;
};
#define xprobe_continuous_opts__last_field warmup

/**
 * xprobe_profile_continuous_start() - capture every execution on every
 * device into a ring of the newest @opts->capacity executions.
 * @opts: options (a backend is required).
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT (NULL, bad sz, no backend, bad
 * capacity); -XPROBE_E_UNKNOWN_NAME (backend); -XPROBE_E_BACKEND_UNAVAILABLE;
 * -XPROBE_E_ALREADY_ACTIVE (already running);
 * -XPROBE_E_CONTINUOUS_CONFLICT (an inspect session profiles devices);
 * -XPROBE_E_DEVICE_FAILED; -ENOMEM.
 */
XPROBE_API int xprobe_profile_continuous_start(const struct xprobe_continuous_opts *opts);

struct xprobe_continuous_save_opts {
	size_t sz; /* size of this struct, for forward/backward compatibility */
	/* override of the start options' output dir; NULL = that one.  v0.1 */
	const char *output_dir;
	/* how many of the newest executions to write; 0 = 1.  v0.1 */
	uint32_t count;
	size_t : 0;
};
#define xprobe_continuous_save_opts__last_field count

/**
 * xprobe_profile_continuous_save() - write the newest execution(s) to
 * <dir>/model_<model>_pid_<pid>_exec_<id>_<YYYYmmdd_HHMMSS>.xtf, one file
 * per execution, devices as streams.  The ring is not emptied.
 * @opts: NULL or options.
 *
 * Return: the number of files written (0 when no execution was captured
 * yet); -XPROBE_E_NOT_ACTIVE ("call xprobe_profile_continuous_start
 * first"); -XPROBE_E_INVALID_ARGUMENT; -XPROBE_E_OUTPUT_FAILED.
 */
XPROBE_API int xprobe_profile_continuous_save(const struct xprobe_continuous_save_opts *opts);

/**
 * xprobe_profile_continuous_stop() - stop continuous profiling and free its
 * ring.
 *
 * Return: 0; -XPROBE_E_NOT_ACTIVE.
 */
XPROBE_API int xprobe_profile_continuous_stop(void);

#ifdef __cplusplus
}
#endif
#endif /* XPROBE_PROFILE_H */
