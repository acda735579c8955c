/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine.h - the device-profile engine: two key spaces on one engine
 * (docs/libxprobe.md, "Device profiles"), continuous profiling, and the
 * file context every libxprobe file is written through.
 *
 *   SESSION  per device: one running capture; stop harvests it and stashes
 *            the harvest under a fresh per-device id (from 1); serialize
 *            pops the stash and writes profile_dev_<n>_session_<id>.xtf;
 *            drop discards it.
 *   MODEL    a list of profiles keyed by file name, each bound to a model:
 *            user profiles (xprobe_profile_start) see every execution of
 *            their model that began after they were registered; automatic
 *            per-execution profiles (MODEL mode, on-fail, continuous) see
 *            one execution.
 *
 * The two never share a map.  A device is armed (backend start) while at
 * least one capture needs it, and stopped when the last one lets go.
 * Completed backend buffers are queued per device and routed to captures
 * by `route()` whenever the engine harvests (at a SESSION stop, at an
 * execution's end, at profile stop, at session stop).
 *
 * Locking: every call is made with the controller lock held (inspect/
 * controller.h), except xpl_engine_complete (any thread; takes the
 * engine's own queue lock) and the signal-path stop, which takes nothing
 * and skips a device whose queue lock is held (it says so in a note).
 */
#ifndef XPL_ENGINE_H
#define XPL_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "../device/backend.h"
#include "../xtf/xtf_internal.h"

struct xpl_engine;

/* Preallocated memory of the writer (signal path), or per-call malloc. */
struct xpl_arena {
	uint8_t *meta;
	size_t meta_len; /* packed metadata */
	uint8_t *bounce;
	size_t bounce_len; /* read() sources */
	struct xpl_seg *segs;
	size_t nsegs; /* segment table */
	Xprobe__Xtf__Stream *streams; /* nstreams each: */
	Xprobe__Xtf__Stream **sptr;
	struct xpl_stream_src *srcs;
	void *readers;
	size_t reader_size; /* host ring readers */
	size_t nstreams;
};
int xpl_arena_alloc(struct xpl_arena *a, size_t meta, size_t nsegs, size_t nstreams,
		    size_t reader_size);
void xpl_arena_free(struct xpl_arena *a);

/* Where and how files are written: session identity for every Capture,
 * the list of files written (trace_info.pb) and notes. */
struct xpl_file_ctx {
	const char *dir; /* directory files are written into (messages; opened
			    here when dirfd is -1) */
	int dirfd; /* that directory, opened without following links, or -1 */
	uint32_t pid;
	uint64_t process_start_time;
	const char *instance_id;
	uint64_t session_start_ns;
	const char *backend; /* "none", "sim", "cupti" */
	bool simulated;
	struct xpl_calib begin, end;
	bool tsc;
	uint32_t flags; /* extra header flags (XPROBE_XTF_F_SIGNAL) */
	bool signal_path; /* allocate nothing */
	struct xpl_arena *arena; /* required when signal_path */
	void (*wrote)(void *cb, const char *name, uint32_t kind, uint64_t size);
	void (*note)(void *cb, const char *msg);
	void *cb;
};

/* Fill the fields every Capture carries.  @clock must outlive the write. */
void xpl_capture_meta_init(const struct xpl_file_ctx *f, uint32_t kind, Xprobe__Xtf__Capture *m,
			   Xprobe__Xtf__Clock *clock);
/* The writer's arguments of a file of @kind written through @f: header
 * flags (SIGNAL, SIMULATED), metadata, stream sources, and the arena's
 * scratch and bounce buffers (which the writer then uses instead of
 * allocating). */
void xpl_write_args_init(struct xpl_xtf_write_args *wa, const struct xpl_file_ctx *f, uint32_t kind,
			 Xprobe__Xtf__Capture *meta, const struct xpl_stream_src *src,
			 const struct xpl_arena *a);

struct xpl_engine_params {
	const struct xpl_backend_ops *ops;
	const struct xprobe_backend_opts *opts;
	const uint8_t *enabled; /* [XPROBE_MAX_DEVICES], 1 = capture the device */
	uint64_t capture_bytes; /* per capture per device; 0 = 64 MiB */
	uint32_t warmup;
};

int xpl_engine_create(const struct xpl_engine_params *p, struct xpl_engine **out);
void xpl_engine_destroy(struct xpl_engine *e);
uint32_t xpl_engine_ndev(const struct xpl_engine *e);
const struct xpl_backend *xpl_engine_backend(const struct xpl_engine *e);
/* A completed buffer of @len bytes of records for @dev, queued (copied).
 * Any thread.  The backend's complete hook (device/backend.h): backends
 * reach it through xpl_backend_complete, never by name. */
void xpl_engine_complete(struct xpl_engine *e, uint32_t dev, const void *recs, size_t len);
/* Memory the signal-path stop needs to write this engine's captures. */
void xpl_engine_arena_needs(const struct xpl_engine *e, size_t *nsegs, size_t *nstreams);

/* SESSION key space (codes as in include/xprobe/profile.h) */
int xpl_engine_session_start(struct xpl_engine *e, uint32_t dev);
int xpl_engine_session_stop(struct xpl_engine *e, uint32_t dev, uint64_t *id);
int xpl_engine_session_serialize(struct xpl_engine *e, uint32_t dev, uint64_t id, const char *path,
				 const struct xpl_file_ctx *f);
int xpl_engine_session_drop(struct xpl_engine *e, uint32_t dev, uint64_t id);
bool xpl_engine_session_active(const struct xpl_engine *e, uint32_t dev);

/* MODEL key space, user profiles */
int xpl_engine_profile_start(struct xpl_engine *e, const char *model, const char *filename);
int xpl_engine_profile_stop(struct xpl_engine *e, const char *filename,
			    const struct xpl_file_ctx *f);

/* Executions.  What a new execution gets (bits). */
#define XPL_EXEC_AUTO_MODEL 0x1u /* one MODEL profile of this execution */
#define XPL_EXEC_AUTO_ON_FAIL 0x2u /* the same, kept only if it fails */
#define XPL_EXEC_CONTINUOUS 0x4u /* into the continuous ring */

struct xpl_engine_exec;
/* Count the execution of @model (warm-up) and arm its captures.  *out is
 * NULL when nothing was armed.  -XPROBE_E_DEVICE_FAILED: nothing armed. */
int xpl_engine_exec_begin(struct xpl_engine *e, uint64_t id, const char *model, uint64_t begin_ns,
			  unsigned what, struct xpl_engine_exec **out);
/*
 * The execution ended: tell the backend, harvest, route, and finish its
 * automatic captures (MODEL: write <model>_exec_<id>.xtf; on-fail: write
 * on_fail/<model>_exec_<id>.xtf only when @status != 0; continuous: rotate
 * into the ring).  @x may be NULL (the execution armed nothing: the backend
 * is still told, so SESSION captures and user profiles see it).
 */
int xpl_engine_exec_end(struct xpl_engine *e, struct xpl_engine_exec *x, uint64_t id,
			const char *model, uint64_t begin_ns, uint64_t end_ns, int status,
			const struct xpl_file_ctx *f);

/* Continuous (flight recorder) */
int xpl_engine_continuous_enable(struct xpl_engine *e, uint32_t capacity, const char *dir);
/* Write the newest @count executions into @dir (open as @dirfd); returns
 * files written or -code. */
int xpl_engine_continuous_save(struct xpl_engine *e, uint32_t count, const char *dir, int dirfd,
			       const struct xpl_file_ctx *f);

/*
 * The fused stop: harvest every device, stop every SESSION capture and
 * serialize it, serialize every pending stash, every open user profile
 * and every in-flight execution's profile (on-fail ones as failed with
 * status -@sig when @sig, else discarded).  Allocation-free when
 * f->signal_path.  Returns 0 or the first error (files that could be
 * written were).
 */
int xpl_engine_stop_all(struct xpl_engine *e, const struct xpl_file_ctx *f, int sig);

/* Per-device state for trace_info.pb. */
bool xpl_engine_dev_armed(const struct xpl_engine *e, uint32_t dev);

/* Make a file-name-safe copy of @model ([A-Za-z0-9._-], others '_'). */
void xpl_safe_name(char *dst, size_t size, const char *model);

#endif /* XPL_ENGINE_H */
