/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller.h - the session controller's shared state and internal seams,
 * between the four files that make it up and what tests may peek at:
 *
 *   session_lifecycle.c  begin (activity fan-out, rollback), the fused stop
 *                        (harvest + serialize), close, queries, fetch
 *   crash_handlers.c     fatal-signal handlers, the alternate stack, the
 *                        atexit stop, fork handlers
 *   exec_registry.c      executions in flight (xprobe_execution_*) and the
 *                        engine they run on
 *   profile_api.c        include/xprobe/profile.h: MODEL, SESSION and
 *                        continuous profiling entry points
 *   outdir.c             output-dir resolution and creation
 *
 * State and locks.  `xpl_ctl_lock` (one mutex) guards every lifecycle call
 * and the execution registry; recording never takes it.  The session
 * object is created by begin and freed by close (or by the next begin
 * after a stop).  Its `state` moves ACTIVE -> STOPPING -> STOPPED by
 * compare-and-swap, which is what makes stop idempotent across the four
 * ways it is reached; the signal path takes no lock at all (a crashing
 * thread may hold it) and relies on that CAS alone.
 */
#ifndef XPL_CONTROLLER_H
#define XPL_CONTROLLER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "../internal.h"
#include "../producers/clock.h"
#include "../profile/engine.h"
#include "config.h"

#define XPL_ON_FAIL_DIR "on_fail"

enum { XPL_S_ACTIVE = 1, XPL_S_STOPPING = 2, XPL_S_STOPPED = 3 };

#define XPL_MAX_NOTES 16

struct xpl_rings;
struct xpl_monitor;

/* One inspect session: begin to close. */
struct xpl_session {
	struct xprobe_inspect_config cfg; /* copied at begin */
	char dir[4096]; /* the session directory */
	int dirfd; /* the session directory, opened without following links:
		      every file is created relative to it */
	struct xpl_fdid dir_id; /* what dirfd is (session_lifecycle.c checks it
				 * before the stop writes through it) */
	uint32_t pid;
	uint64_t process_start_time;
	uint64_t start_real_ns; /* the directory leaf */
	struct xpl_calib begin;
	bool tsc;
	const char *backend; /* "none", "sim", "cupti" */
	bool simulated;
	struct xpl_rings *rings; /* system_profile */
	struct xpl_monitor *mon; /* cpu_util / host_memory */
	struct xpl_engine *engine; /* device profiling */
	_Atomic int state;
	int stop_rc;
	/* the file list of trace_info.pb, grown on the normal path only */
	Xprobe__Xtf__FileEntry *files;
	Xprobe__Xtf__FileEntry **fptrs;
	char (*fnames)[160];
	size_t nfiles, files_cap;
	bool in_signal; /* the stop runs in a signal handler */
	char notes[XPL_MAX_NOTES][200];
	char *note_ptrs[XPL_MAX_NOTES];
	size_t nnotes;
	size_t fail_note; /* 1 + the first note of a file not written, 0 none */
	struct xpl_arena arena; /* for the signal path */
	uint64_t fetched;
};

/* An execution in flight (exec_registry.c). */
struct xpl_exec_ent {
	struct xpl_exec_ent *next;
	uint64_t id;
	char model[128];
	uint64_t begin_ns;
	struct xpl_engine *engine; /* engine it was begun on, NULL = none */
	struct xpl_engine_exec *ex;
};

/* Continuous profiling (its own engine; profile_api.c). */
struct xpl_continuous {
	struct xpl_engine *engine;
	char dir[4096];
	uint64_t start_real_ns;
	char instance_id[64];
	const char *backend;
	bool simulated;
};

extern pthread_mutex_t xpl_ctl_lock;
extern struct xpl_session *xpl_sess; /* under xpl_ctl_lock */
extern struct xpl_session *_Atomic xpl_sess_sig; /* what a signal handler may stop */
extern struct xpl_continuous *xpl_cont; /* under xpl_ctl_lock */
extern struct xpl_exec_ent *xpl_execs; /* under xpl_ctl_lock */

/* --- session_lifecycle.c ------------------------------------------------ */

/*
 * The fused stop, reached from stop, close, a fatal signal and exit; only
 * the first caller runs it (state CAS).  @sigpath: from a signal handler,
 * allocation- and lock-free.  Returns 0 or the first write error.
 */
int xpl_session_stop(struct xpl_session *s, const char *reason, int sig, bool sigpath);
/* A file context writing into the session directory. */
void xpl_session_file_ctx(struct xpl_session *s, struct xpl_file_ctx *f);
/* The engine of the running session or of continuous profiling (tests). */
struct xpl_engine *xpl_controller_engine(void);

/* --- crash_handlers.c ---------------------------------------------------- */

/* Install the crash, exit and fork handlers, once per process. */
void xpl_crash_handlers_install(void);
/*
 * The crash handler's one hook from above: @fn (NULL clears it) is called
 * with the signal number on a fatal signal, after the session's
 * signal-path stop and before the previous action runs.  It must be
 * async-signal-safe (no lock, no allocation).  The Agent's saved capture
 * (lib/agent/capfile.c) sets it when it arms, clears it once written, so
 * inspect/ never calls up into agent/.  Any thread, any time: the pointer
 * is an atomic a handler loads once.
 */
void xpl_crash_set_signal_hook(void (*fn)(int sig));

/* --- exec_registry.c ----------------------------------------------------- */

/* The engine executions and profile calls use (the running session's,
 * else continuous profiling's), with a file context for it; NULL: none.
 * Caller holds xpl_ctl_lock. */
struct xpl_engine *xpl_active_engine(struct xpl_file_ctx *f);
/* Forget executions begun on @e (the engine goes away).  Caller holds
 * xpl_ctl_lock. */
void xpl_execs_forget_engine(struct xpl_engine *e);

/* --- outdir.c ------------------------------------------------------------- */

/* Check a base dir against the reserved names. */
int xpl_outdir_check_base(const char *base);
/* Resolve and create <base>/<instance>-<pid>/<start_ns> into @out; *dirfd
 * receives it opened.  Neither the base nor anything below it is followed
 * through a symbolic link. */
int xpl_outdir_make(const char *base, const char *instance_id, uint32_t pid, uint64_t start_ns,
		    char *out, size_t outlen, int *dirfd);
/* Create (mkdir -p) and open a directory libxprobe writes into, the last
 * component never through a link: 0 or an error filled in (OUTPUT_FAILED). */
int xpl_outdir_open(const char *dir, int *dirfd);

#endif /* XPL_CONTROLLER_H */
