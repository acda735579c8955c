/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inspect.h - the inspect session: its options bag, begin/stop/close, the
 * execution API that drives device profiling, the output directory and the
 * live fetch of host events.
 *
 * One session per process at a time.  xprobe_inspect_begin_with_options()
 * arms the activities of a config (host event rings, the /proc monitor, the
 * device profile), writes nothing until it stops, and stop is one fused
 * harvest + serialize into the session directory
 *     <output_dir>/<instance-id>-<pid>/<session-start-ns>/
 * reached from xprobe_inspect_stop(), xprobe_inspect_close(), a fatal
 * signal, or process exit, whichever comes first (then never again).
 * docs/libxprobe.md is the reference; docs/environment.md lists the
 * XPROBE_INSPECT_* variables that begin a session when the library loads.
 *
 * Thread safety: every function here may be called from any thread; the
 * lifecycle calls serialize on one lock.  Recording (NVTX, executions,
 * xprobe_trace_*) never takes it.
 */
#ifndef XPROBE_INSPECT_H
#define XPROBE_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Activities: which producers a session arms (names below). */
enum xprobe_activity {
	XPROBE_ACT_SYSTEM_PROFILE = 1u << 0, /* "system_profile": host event rings -> ntrace.pb */
	XPROBE_ACT_DEVICE_PROFILE = 1u << 1, /* "device_profile": device backend -> *.xtf */
	XPROBE_ACT_HOST_MEMORY = 1u << 2, /* "host_memory": /proc sampler -> host_mem.pb */
	XPROBE_ACT_CPU_UTIL = 1u << 3, /* "cpu_util": /proc sampler -> cpu_util.pb */
	XPROBE_ACT_ALL = 0xfu, /* "all" */
};

enum xprobe_device_profile_mode {
	XPROBE_DEVICE_PROFILE_DISABLED = 0, /* no device profiling */
	XPROBE_DEVICE_PROFILE_MODEL = 1, /* one profile per execution, keyed by file name */
	XPROBE_DEVICE_PROFILE_SESSION = 2, /* one profile per device for the whole session */
};

/* Most devices a bitmap can name (docs/libxprobe.md, "Backends"). */
#define XPROBE_MAX_DEVICES 256

/*
 * Options of a device backend (xprobe_inspect_config_set_backend,
 * struct xprobe_continuous_opts).  Zero is every field's default.
 */
struct xprobe_backend_opts {
	size_t sz; /* size of this struct, for forward/backward compatibility */
	/* sim: number of simulated cores (devices), 1..256; 0 = 4.  v0.1 */
	uint32_t sim_cores;
	/* sim: activity records per execution and core; 0 = derived from the
	 * model name (1..4), deterministic.  At most 64.  v0.1 */
	uint32_t sim_records_per_exec;
	/* sim: bitmap of devices whose arming fails (bit d of word d/64).  v0.1 */
	uint64_t sim_fail_arm[4];
	/* sim: bitmap of devices whose harvest fails (the profile is kept,
	 * partial, with harvest_error set).  v0.1 */
	uint64_t sim_fail_harvest[4];
	/* bytes of device records one capture (all its devices together)
	 * keeps before it counts drops; 0 = 64 MiB.  v0.1 */
	uint64_t capture_bytes;
	size_t : 0;
};
#define xprobe_backend_opts__last_field capture_bytes

/* The options bag of a session: opaque, allocated with defaults. */
struct xprobe_inspect_config;

/**
 * xprobe_inspect_config_new() - allocate an options bag with the defaults:
 * enabled, on-fail off, session id 0, output dir "" (= "./output"),
 * activities system_profile + cpu_util + host_memory, device profile
 * DISABLED, every device and every event type captured, ring 65536 events
 * per thread, 256 threads, monitor period 1000 ms, warm-up 0, no backend
 * (device profiling then needs one: "sim" or, later, "cupti"), instance id
 * = the host name, ring backing "file".  The environment is not read.
 * @out: receives the bag.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT (@out NULL); -ENOMEM.
 */
XPROBE_API int xprobe_inspect_config_new(struct xprobe_inspect_config **out);

/**
 * xprobe_inspect_config_free() - free a bag.  NULL is accepted; a pointer
 * that is not a live bag (freed twice, never allocated) is ignored.
 * @cfg: the bag.
 */
XPROBE_API void xprobe_inspect_config_free(struct xprobe_inspect_config *cfg);

/* Every setter below returns 0, -XPROBE_E_MISUSE for a NULL, freed or
 * foreign @cfg, and the errors listed with it. */

/**
 * xprobe_inspect_config_set_session_id() - the caller's id of the session,
 * recorded in trace_info.pb and in the session begin/end events.
 * @cfg: the bag. @id: any value.
 */
XPROBE_API int xprobe_inspect_config_set_session_id(struct xprobe_inspect_config *cfg, int64_t id);

/**
 * xprobe_inspect_config_set_output_dir() - the base of the output tree.
 * @cfg: the bag.
 * @dir: a path ("" or NULL = "./output"), shorter than 3072 bytes.
 *
 * Checked at begin, not here: /dev/null and other existing non-directories
 * (-XPROBE_E_OUTPUT_NOT_DIRECTORY) and a base whose last component is the
 * on-fail salvage directory name "on_fail" (-XPROBE_E_RESERVED_OUTPUT_DIR).
 * Return: also -XPROBE_E_INVALID_ARGUMENT (too long); -ENOMEM.
 */
XPROBE_API int xprobe_inspect_config_set_output_dir(struct xprobe_inspect_config *cfg,
						    const char *dir);

/**
 * xprobe_inspect_config_set_activity() - enable or disable an activity by
 * name: "system_profile", "device_profile", "host_memory", "cpu_util" or
 * "all".  Enabling device_profile while the mode is DISABLED makes the mode
 * SESSION; disabling it makes the mode DISABLED.
 * @cfg: the bag. @name: the activity. @enable: on or off.
 * Return: also -XPROBE_E_INVALID_ARGUMENT (@name NULL),
 * -XPROBE_E_UNKNOWN_NAME.
 */
XPROBE_API int xprobe_inspect_config_set_activity(struct xprobe_inspect_config *cfg,
						  const char *name, bool enable);

/**
 * xprobe_inspect_config_get_activities() - the enabled activity bits.
 * @cfg: the bag. @mask: receives enum xprobe_activity bits.
 * Return: also -XPROBE_E_INVALID_ARGUMENT (@mask NULL).
 */
XPROBE_API int xprobe_inspect_config_get_activities(const struct xprobe_inspect_config *cfg,
						    uint32_t *mask);

/**
 * xprobe_inspect_config_set_device_profile_mode() - DISABLED, MODEL or
 * SESSION.  MODEL and SESSION also enable the device_profile activity;
 * DISABLED disables it.
 * @cfg: the bag. @mode: enum xprobe_device_profile_mode.
 * Return: also -XPROBE_E_INVALID_ARGUMENT (not one of the three).
 */
XPROBE_API int xprobe_inspect_config_set_device_profile_mode(struct xprobe_inspect_config *cfg,
							     int mode);

/**
 * xprobe_inspect_config_set_capture_enabled_for_device() - include or
 * exclude one device (all are included by default).
 * @cfg: the bag. @device: 0..255, or -1 for every device. @enable: on/off.
 * Return: also -XPROBE_E_INVALID_ARGUMENT (out of range).
 */
XPROBE_API int
xprobe_inspect_config_set_capture_enabled_for_device(struct xprobe_inspect_config *cfg, int device,
						     bool enable);

/**
 * xprobe_inspect_config_set_capture_enabled_for_event_type() - include or
 * exclude one host event type by name (xprobe_event_type_names), or "all".
 * @cfg: the bag. @name: the type. @enable: on/off.
 * Return: also -XPROBE_E_INVALID_ARGUMENT (@name NULL),
 * -XPROBE_E_UNKNOWN_NAME.
 */
XPROBE_API int
xprobe_inspect_config_set_capture_enabled_for_event_type(struct xprobe_inspect_config *cfg,
							 const char *name, bool enable);

/**
 * xprobe_inspect_config_set_ring_events() - size of each thread's host event
 * ring, in events of the common 64-byte bound (ring bytes = events * 64,
 * rounded up to a power of two).  When a ring is full, new events are
 * dropped and counted.
 * @cfg: the bag. @events: 1024 .. 2^26 (67,108,864).
 * Return: also -XPROBE_E_INVALID_ARGUMENT.
 */
XPROBE_API int xprobe_inspect_config_set_ring_events(struct xprobe_inspect_config *cfg,
						     uint64_t events);

/**
 * xprobe_inspect_config_set_max_threads() - how many threads may own a
 * ring in one session; later threads' events are counted as dropped.
 * @cfg: the bag. @threads: 1 .. 4096.
 * Return: also -XPROBE_E_INVALID_ARGUMENT.
 */
XPROBE_API int xprobe_inspect_config_set_max_threads(struct xprobe_inspect_config *cfg,
						     uint32_t threads);

/**
 * xprobe_inspect_config_set_monitor_period_ms() - period of the /proc
 * sampler (cpu_util, host_memory).
 * @cfg: the bag. @ms: 10 .. 3,600,000.
 * Return: also -XPROBE_E_INVALID_ARGUMENT.
 */
XPROBE_API int xprobe_inspect_config_set_monitor_period_ms(struct xprobe_inspect_config *cfg,
							   uint32_t ms);

/**
 * xprobe_inspect_config_set_enable() - master switch.  A disabled config
 * begins nothing unless on-fail is enabled (then only on-fail device
 * profiling runs).
 * @cfg: the bag. @enable: on/off.
 */
XPROBE_API int xprobe_inspect_config_set_enable(struct xprobe_inspect_config *cfg, bool enable);

/**
 * xprobe_inspect_config_set_enable_on_fail() - profile every execution on
 * the devices and keep only the profiles of executions that fail (status
 * != 0), in <session dir>/on_fail/.  Needs a backend; implies per-execution
 * (MODEL-style) capture whatever the device-profile mode.
 * @cfg: the bag. @enable: on/off.
 */
XPROBE_API int xprobe_inspect_config_set_enable_on_fail(struct xprobe_inspect_config *cfg,
							bool enable);

/**
 * xprobe_inspect_config_set_warmup() - skip the first @n executions of each
 * model before profiling it (MODEL mode, on-fail and continuous).
 * @cfg: the bag. @n: 0 .. 1,000,000.
 * Return: also -XPROBE_E_INVALID_ARGUMENT.
 */
XPROBE_API int xprobe_inspect_config_set_warmup(struct xprobe_inspect_config *cfg, uint32_t n);

/**
 * xprobe_inspect_config_set_backend() - choose the device backend by name.
 * "sim" is the software device (never chosen implicitly; every file it
 * makes says simulated); "cupti" is the NVIDIA backend (not in this build:
 * begin then fails with -XPROBE_E_BACKEND_UNAVAILABLE); NULL or "" = none.
 * @cfg: the bag. @name: backend name. @opts: backend options or NULL.
 * Return: also -XPROBE_E_UNKNOWN_NAME, -XPROBE_E_INVALID_ARGUMENT (bad
 * opts: sz, unknown trailing bytes, sim_cores > 256, records > 64).
 */
XPROBE_API int xprobe_inspect_config_set_backend(struct xprobe_inspect_config *cfg,
						 const char *name,
						 const struct xprobe_backend_opts *opts);

/**
 * xprobe_inspect_config_set_instance_id() - the <instance-id> of the output
 * tree (default: the host name).
 * @cfg: the bag.
 * @id: 1..63 bytes of [A-Za-z0-9._-].
 * Return: also -XPROBE_E_INVALID_ARGUMENT.
 */
XPROBE_API int xprobe_inspect_config_set_instance_id(struct xprobe_inspect_config *cfg,
						     const char *id);

enum xprobe_ring_backing {
	XPROBE_RING_FILE = 0, /* rings live in <session dir>/host_rings.live (MAP_SHARED):
			       * what was recorded survives SIGKILL and is recoverable */
	XPROBE_RING_ANON = 1, /* anonymous memory: a little faster, lost on SIGKILL */
};

/**
 * xprobe_inspect_config_set_ring_backing() - where host rings live.
 * @cfg: the bag. @backing: enum xprobe_ring_backing.
 * Return: also -XPROBE_E_INVALID_ARGUMENT.
 */
XPROBE_API int xprobe_inspect_config_set_ring_backing(struct xprobe_inspect_config *cfg,
						      int backing);

/**
 * xprobe_inspect_activity_names() - the activity names, in bit order, then
 * "all".
 * @names: receives a static array. @count: receives its length.
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT (NULL pointer).
 */
XPROBE_API int xprobe_inspect_activity_names(const char *const **names, size_t *count);

/**
 * xprobe_inspect_activity_from_name() - name -> bit (enum xprobe_activity).
 * @name: the name. @bit: receives the bit (XPROBE_ACT_ALL for "all").
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT; -XPROBE_E_UNKNOWN_NAME.
 */
XPROBE_API int xprobe_inspect_activity_from_name(const char *name, uint32_t *bit);

/**
 * xprobe_inspect_activity_name() - one bit -> its name.
 * @bit: a single XPROBE_ACT_* bit, or XPROBE_ACT_ALL.
 * Return: a static string, or NULL for anything else.
 */
XPROBE_API const char *xprobe_inspect_activity_name(uint32_t bit);

/**
 * xprobe_event_type_names() - the host event type names, index = enum
 * xprobe_event_type (index 0, the pad, is "pad" and cannot be filtered).
 * @names: receives a static array. @count: receives XPROBE_EV__COUNT.
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT.
 */
XPROBE_API int xprobe_event_type_names(const char *const **names, size_t *count);

/**
 * xprobe_event_type_from_name() - name -> enum xprobe_event_type.
 * @name: the name. @type: receives the value.
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT; -XPROBE_E_UNKNOWN_NAME.
 */
XPROBE_API int xprobe_event_type_from_name(const char *name, uint32_t *type);

/**
 * xprobe_inspect_begin() - begin a session with the defaults of
 * xprobe_inspect_config_new() overridden by the XPROBE_INSPECT_*
 * environment (docs/environment.md).
 *
 * Return: as xprobe_inspect_begin_with_options(); also
 * -XPROBE_E_INVALID_ARGUMENT when a variable cannot be parsed (the message
 * names it).
 */
XPROBE_API int xprobe_inspect_begin(void);

/**
 * xprobe_inspect_begin_with_options() - begin a session.  The environment
 * is not read.
 * @cfg: the options (copied; the caller may free it afterwards).
 *
 * Steps: check the config; make the output tree like mkdir -p; install the
 * fatal-signal handlers (once per process, chaining the previous ones);
 * arm the host rings, the monitor and, per enabled device, the device
 * profile.  If arming device k fails, devices 0..k-1 are stopped and
 * dropped, the empty session directory is removed and begin fails.
 *
 * Return: 0; -XPROBE_E_MISUSE (@cfg NULL or not a live bag);
 * -XPROBE_E_ALREADY_ACTIVE (a session is running); -XPROBE_E_CONTINUOUS_CONFLICT
 * (device profiling while continuous profiling runs);
 * -XPROBE_E_OUTPUT_NOT_DIRECTORY; -XPROBE_E_RESERVED_OUTPUT_DIR;
 * -XPROBE_E_OUTPUT_FAILED (mkdir); -XPROBE_E_BACKEND_UNAVAILABLE (device
 * profiling with no backend, or "cupti" in this build);
 * -XPROBE_E_DEVICE_FAILED (a device failed to arm); -ENOMEM.
 */
XPROBE_API int xprobe_inspect_begin_with_options(const struct xprobe_inspect_config *cfg);

/**
 * xprobe_inspect_stop() - stop the session: per device stop, stash and
 * serialize its profile (profile_dev_<n>_session_<id>.xtf), write the
 * pending stashes and open MODEL profiles, then the system profile
 * (ntrace.pb, cpu_util.pb, host_mem.pb) and trace_info.pb last.
 * Idempotent: the first of stop, close, a fatal signal or exit does it.
 *
 * Return: 0 (also when already stopped); -XPROBE_E_NOT_ACTIVE (no session
 * was ever begun); -XPROBE_E_OUTPUT_FAILED (a file could not be written:
 * what could be written was, trace_info.pb lists it and says what failed).
 */
XPROBE_API int xprobe_inspect_stop(void);

/**
 * xprobe_inspect_close() - stop (if needed) and release the session: its
 * memory, the monitor thread, the device backend.  A new session may begin
 * afterwards.
 *
 * Return: as xprobe_inspect_stop(); 0 when there is nothing to close.
 */
XPROBE_API int xprobe_inspect_close(void);

/**
 * xprobe_inspect_get_output_dir() - the session directory
 * (<base>/<instance-id>-<pid>/<session-start-ns>) into @buf.
 * @buf: caller buffer. @size: its size.
 *
 * Return: the length (without NUL); -XPROBE_E_INVALID_ARGUMENT (@buf NULL
 * or @size 0); -XPROBE_E_NOT_ACTIVE (no session since the last close);
 * -XPROBE_E_TRUNCATED (@buf too small: it holds a NUL-terminated prefix).
 */
XPROBE_API int xprobe_inspect_get_output_dir(char *buf, size_t size);

/**
 * xprobe_inspect_is_active() - whether a session is recording.
 * Return: 1 or 0.
 */
XPROBE_API int xprobe_inspect_is_active(void);

enum xprobe_fetch_format {
	XPROBE_FETCH_RECORDS = 0, /* struct xprobe_record stream, ts in CLOCK_MONOTONIC ns */
	XPROBE_FETCH_JSON = 1, /* one JSON object per line (docs/libxprobe.md) */
};

struct xprobe_fetch_opts {
	size_t sz; /* size of this struct, for forward/backward compatibility */
	uint32_t format; /* enum xprobe_fetch_format; default RECORDS.  v0.1 */
	uint32_t max_events; /* stop after this many; 0 = as many as fit.  v0.1 */
	size_t : 0;
};
#define xprobe_fetch_opts__last_field max_events

/**
 * xprobe_inspect_fetch() - hand over the host events recorded since the
 * last fetch while the session goes on.  Each event is handed out once:
 * fetched events leave the rings and are not written to ntrace.pb
 * (trace_info.pb counts them).  Whole events only; what does not fit stays
 * for the next call.  Events are in order per thread, threads one after
 * the other.
 * @opts: NULL or options. @buf: destination. @size: its size.
 * @len: receives the bytes written. @events: receives the event count (may
 * be NULL).
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT (NULL @buf or @len, bad opts or
 * format); -XPROBE_E_NOT_ACTIVE (no recording session);
 * -XPROBE_E_TRUNCATED (@size cannot hold the next event; nothing consumed).
 */
XPROBE_API int xprobe_inspect_fetch(const struct xprobe_fetch_opts *opts, void *buf, size_t size,
				    size_t *len, size_t *events);

/**
 * xprobe_execution_begin() - declare that an execution of @model starts on
 * this thread.  Records an execution_begin event; arms the per-execution
 * device profiles (MODEL mode after the warm-up, on-fail, continuous, and
 * any xprobe_profile_start() registered for @model).
 * @model: 1..127 bytes, no '/'. @exec_id: receives the execution id (>= 1).
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT; -XPROBE_E_DEVICE_FAILED (a device
 * failed to arm: nothing was armed, no execution exists); -ENOMEM.
 * Works without a session (then it only numbers executions).
 */
XPROBE_API int xprobe_execution_begin(const char *model, uint64_t *exec_id);

/**
 * xprobe_execution_end() - declare the end of an execution.  The backend
 * turns it into device activity; MODEL profiles are serialized, on-fail
 * profiles kept only when @status != 0, continuous captures rotated.
 * @exec_id: from xprobe_execution_begin. @status: 0 success, else failure.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT (unknown or ended id);
 * -XPROBE_E_OUTPUT_FAILED (a profile could not be written).
 */
XPROBE_API int xprobe_execution_end(uint64_t exec_id, int status);

#ifdef __cplusplus
}
#endif
#endif /* XPROBE_INSPECT_H */
