/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session_lifecycle.c - an inspect session from begin to close: begin
 * (with its activity fan-out and rollback), the fused stop (harvest +
 * serialize, reached from stop, close, fatal signals and exit, once),
 * close, the queries (output dir, is_active) and fetch.  The shared state
 * and its locking are described in controller.h.
 *
 * The stop path allocates nothing when it runs from a signal handler:
 * everything it needs (protobuf structs, the segment table, the metadata
 * buffer, the bounce buffer, ring readers, the file list) is allocated at
 * begin, and the writer only does open/write/pwrite/rename.  The normal
 * path runs the very same code (plus joining the monitor thread and
 * harvesting the backend), so the crash path is the tested path.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../device/cupti.h"
#include "../internal.h"
#include "../producers/clock.h"
#include "../producers/monitor.h"
#include "../producers/sys_trace.h"
#include "../profile/engine.h"
#include "config.h"
#include "controller.h"
#include "xprobe/inspect.h"

pthread_mutex_t xpl_ctl_lock = PTHREAD_MUTEX_INITIALIZER;
struct xpl_session *xpl_sess;
struct xpl_session *_Atomic xpl_sess_sig;
struct xpl_continuous *xpl_cont;

/* This thread is running a stop: a signal it receives must not wait for
 * that stop to finish (it cannot, while the handler runs on top of it). */
static __thread int in_stop;

/* --- file list and notes (callbacks of the file context) ----------------------- */

static void on_wrote(void *cb, const char *name, uint32_t kind, uint64_t size)
{
	struct xpl_session *s = cb;

	if (s->nfiles == s->files_cap) {
		size_t cap = s->files_cap * 2;
		void *a, *b, *c;

		if (s->in_signal) {
			if (s->nnotes < XPL_MAX_NOTES)
				xpl_sfmt(s->notes[s->nnotes++], sizeof(s->notes[0]),
					 "file list full: %s is not listed", name);
			return;
		}
		a = realloc(s->files, cap * sizeof(*s->files));
		if (a)
			s->files = a;
		b = realloc(s->fptrs, cap * sizeof(*s->fptrs));
		if (b)
			s->fptrs = b;
		c = realloc(s->fnames, cap * sizeof(*s->fnames));
		if (c)
			s->fnames = c;
		if (!a || !b || !c)
			return;
		s->files_cap = cap;
	}
	for (size_t i = 0; i < s->nfiles; i++) /* rewritten file: update it */
		if (!strcmp(s->fnames[i], name)) {
			s->files[i].size = size;
			return;
		}
	xprobe__xtf__file_entry__init(&s->files[s->nfiles]);
	xpl_sfmt(s->fnames[s->nfiles], sizeof(s->fnames[0]), "%s", name);
	s->files[s->nfiles].name = s->fnames[s->nfiles];
	s->files[s->nfiles].kind = (Xprobe__Xtf__FileKind)kind;
	s->files[s->nfiles].size = size;
	s->nfiles++;
}

/*
 * A note of trace_info.pb, also logged at WARN.  Notes of files that could
 * not be written start with "could not write " (here and in the engine):
 * the first of them is what a failed stop says in xprobe_last_error().
 */
static void on_note(void *cb, const char *msg)
{
	struct xpl_session *s = cb;

	if (s->nnotes < XPL_MAX_NOTES) {
		if (!s->fail_note && !strncmp(msg, "could not write ", 16))
			s->fail_note = s->nnotes + 1;
		xpl_sfmt(s->notes[s->nnotes++], sizeof(s->notes[0]), "%s", msg);
	}
	xpl_log_signal_safe(XPROBE_LOG_WARN, msg);
}

/* Note that @name could not be written, with the reason and what follows. */
static void write_failed(struct xpl_session *s, const char *name, int rc, const char *then)
{
	char msg[200];

	xpl_sfmt(msg, sizeof(msg), "could not write %s: %s%s%s", name, xpl_errdesc(rc),
		 then ? "; " : "", then ? then : "");
	on_note(s, msg);
}

/*
 * Before the session writes: is s->dirfd still the session directory?  The
 * program may have closed every descriptor (a daemon does) and reused the
 * number for one of its own, and every file is created relative to it.  A
 * number that is no longer the directory is abandoned (never closed: it is
 * the program's), and the directory is opened again by its path (the leaf
 * never through a link), which must still be the same directory; else
 * s->dirfd is -1 and every write fails (EBADF), each with its note.
 * Async-signal-safe.
 */
static void session_dir_check(struct xpl_session *s)
{
	int fd;

	if (s->dirfd < 0 || xpl_fd_same(s->dirfd, &s->dir_id))
		return;
	fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && xpl_fd_same(fd, &s->dir_id)) {
		s->dirfd = fd;
		on_note(s, "the session directory's descriptor was closed by the program; "
			   "the directory was opened again by its path");
		return;
	}
	if (fd >= 0)
		close(fd);
	s->dirfd = -1;
	on_note(s, "the session directory's descriptor was closed by the program and its path "
		   "no longer names that directory: nothing is written");
}

void xpl_session_file_ctx(struct xpl_session *s, struct xpl_file_ctx *f)
{
	/* every write of the session (the stop's, a profile saved while it
	 * runs) goes through here first */
	session_dir_check(s);
	memset(f, 0, sizeof(*f));
	f->dir = s->dir;
	f->dirfd = s->dirfd;
	f->pid = s->pid;
	f->process_start_time = s->process_start_time;
	f->instance_id = s->cfg.instance_id;
	f->session_start_ns = s->start_real_ns;
	f->backend = s->backend;
	f->simulated = s->simulated;
	f->begin = s->begin;
	f->end = s->begin;
	f->tsc = s->tsc;
	f->arena = &s->arena;
	f->wrote = on_wrote;
	f->note = on_note;
	f->cb = s;
}

/* --- the fused stop -------------------------------------------------------------- */

static int write_ntrace(struct xpl_session *s, const struct xpl_file_ctx *f, uint64_t *events,
			uint64_t *dropped, uint32_t *threads, uint32_t *no_ring)
{
	struct xpl_rings *r = s->rings;
	struct xpl_arena *a = &s->arena;
	struct xpl_ring_reader *rd = a->readers;
	struct xpl_conv conv;
	Xprobe__Xtf__Capture meta;
	Xprobe__Xtf__Clock clock;
	struct xpl_xtf_write_args wa;
	uint32_t used = __atomic_load_n(&r->hdr->rings_used, __ATOMIC_ACQUIRE), n = 0, unreserved;
	uint64_t size = 0;
	int rc;

	*no_ring = used > r->max_rings ? used - r->max_rings : 0;
	unreserved = __atomic_load_n(&r->hdr->unreserved_rings, __ATOMIC_RELAXED);
	if (unreserved) {
		char msg[200];

		xpl_sfmt(msg, sizeof(msg),
			 "%u thread(s) recorded nothing, no ring: reserving space for their rings "
			 "in host_rings.live failed: %s",
			 unreserved, xpl_errdesc(atomic_load(&r->reserve_err)));
		on_note(s, msg);
		*no_ring += unreserved;
	}
	if (used > r->max_rings)
		used = r->max_rings;
	xpl_conv_init(&conv, &f->begin, &f->end, r->tsc);
	for (uint32_t i = 0; i < used && i < a->nstreams; i++) {
		struct xpl_ring_ctl *c = &r->ctl[i];
		Xprobe__Xtf__Stream *st = &a->streams[n];
		uint64_t head, end;

		if (!__atomic_load_n(&c->in_use, __ATOMIC_ACQUIRE))
			continue;
		head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
		xprobe__xtf__stream__init(st);
		st->tid = c->tid;
		st->records = xpl_ring_count(r, i, c->tail, head, &end);
		st->dropped = __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
		rd[n].r = r;
		rd[n].ring = i;
		rd[n].pos = c->tail;
		rd[n].end = end;
		rd[n].conv = &conv;
		a->srcs[n].segs = NULL;
		a->srcs[n].nsegs = 0;
		a->srcs[n].read = xpl_ring_read;
		a->srcs[n].ctx = &rd[n];
		a->srcs[n].len = end - c->tail;
		a->sptr[n] = st;
		*events += st->records;
		*dropped += st->dropped;
		n++;
	}
	*threads = n;
	*dropped += __atomic_load_n(&r->hdr->unattached_drops, __ATOMIC_RELAXED);
	xpl_capture_meta_init(f, XPROBE_XTF_NTRACE, &meta, &clock);
	meta.n_streams = n;
	meta.streams = a->sptr;
	xpl_write_args_init(&wa, f, XPROBE_XTF_NTRACE, &meta, a->srcs, a);
	rc = xpl_xtf_write_at(s->dirfd, "ntrace.pb", &wa, &size);
	if (!rc)
		f->wrote(f->cb, "ntrace.pb", XPROBE_XTF_NTRACE, size);
	return rc;
}

static int write_samples(struct xpl_session *s, const struct xpl_file_ctx *f, bool cpu)
{
	struct xpl_monitor_view v;
	struct xpl_seg segs[2];
	struct xpl_stream_src src = { 0 };
	Xprobe__Xtf__Stream st, *stp = &st;
	Xprobe__Xtf__Capture meta;
	Xprobe__Xtf__Clock clock;
	struct xpl_xtf_write_args wa;
	const char *name = cpu ? "cpu_util.pb" : "host_mem.pb";
	uint32_t kind = cpu ? XPROBE_XTF_CPU_UTIL : XPROBE_XTF_HOST_MEM;
	uint64_t size = 0;
	int rc;

	xpl_monitor_view(s->mon, cpu, &v);
	segs[0].p = v.p[0];
	segs[0].len = v.len[0];
	segs[1].p = v.p[1];
	segs[1].len = v.len[1];
	src.segs = segs;
	src.nsegs = v.p[1] ? 2 : 1;
	xprobe__xtf__stream__init(&st);
	st.records = v.count;
	st.dropped = v.dropped;
	xpl_capture_meta_init(f, kind, &meta, &clock);
	clock.source = (char *)"clock_gettime"; /* samples are stamped with CLOCK_MONOTONIC */
	clock.begin_tsc = clock.end_tsc = 0;
	meta.n_streams = 1;
	meta.streams = &stp;
	meta.has_sample_period_ms = true;
	meta.sample_period_ms = xpl_monitor_period(s->mon);
	xpl_write_args_init(&wa, f, kind, &meta, &src, &s->arena);
	rc = xpl_xtf_write_at(s->dirfd, name, &wa, &size);
	if (!rc)
		f->wrote(f->cb, name, kind, size);
	return rc;
}

static const char *mode_name(int mode)
{
	switch (mode) {
	case XPROBE_DEVICE_PROFILE_MODEL:
		return "model";
	case XPROBE_DEVICE_PROFILE_SESSION:
		return "session";
	}
	return "disabled";
}

int xpl_session_stop(struct xpl_session *s, const char *reason, int sig, bool sigpath)
{
	static const char *const act_names[] = { "system_profile", "device_profile", "host_memory",
						 "cpu_util" };
	Xprobe__Xtf__DeviceState dstates[XPROBE_MAX_DEVICES], *dptrs[XPROBE_MAX_DEVICES];
	char *acts[4], *types[XPROBE_EV__COUNT];
	uint64_t events = 0, dropped = 0;
	uint32_t threads = 0, no_ring = 0, ndev = 0;
	Xprobe__Xtf__TraceInfo ti;
	Xprobe__Xtf__Capture meta;
	Xprobe__Xtf__Clock clock;
	struct xpl_xtf_write_args wa;
	struct xpl_file_ctx f;
	unsigned stuck = 0;
	int expect = XPL_S_ACTIVE, rc, first = 0;
	size_t na = 0, nt = 0;
	bool complete = true;

	if (!atomic_compare_exchange_strong(&s->state, &expect, XPL_S_STOPPING)) {
		/* another thread stops it: a signal path waits (bounded) so the
		 * process does not die under the writer */
		if (sigpath && expect == XPL_S_STOPPING && !in_stop) {
			uint64_t until = xpl_mono_ns() + 10000000000ull;

			while (atomic_load(&s->state) != XPL_S_STOPPED && xpl_mono_ns() < until)
				sched_yield();
		}
		return 0;
	}
	s->in_signal = sigpath;
	in_stop = 1;
	if (s->rings) {
		xpl_rec_plain(XPROBE_EV_SESSION_END, sig, (uint64_t)s->cfg.session_id, 0);
		stuck = xpl_rings_quiesce(sigpath ? 200000000ull : 2000000000ull, sigpath);
		if (stuck) {
			char msg[160];

			complete = false;
			xpl_sfmt(msg, sizeof(msg),
				 "%u thread(s) were still inside a record at stop; their last "
				 "record may be missing",
				 stuck);
			on_note(s, msg);
		}
	}
	xpl_session_file_ctx(s, &f);
	xpl_calib_now(&f.end, s->tsc);
	f.signal_path = sigpath;
	f.flags = sigpath ? XPROBE_XTF_F_SIGNAL : 0;
	if (s->mon) {
		if (sigpath)
			xpl_monitor_stop_async(s->mon);
		else
			xpl_monitor_stop(s->mon);
	}
	/* device state before the engine stops it */
	if (s->engine) {
		ndev = xpl_engine_ndev(s->engine);
		for (uint32_t d = 0; d < ndev; d++) {
			xprobe__xtf__device_state__init(&dstates[d]);
			dstates[d].device = d;
			dstates[d].armed = xpl_engine_dev_armed(s->engine, d);
			dptrs[d] = &dstates[d];
		}
		rc = xpl_engine_stop_all(s->engine, &f, sig);
		if (rc && !first)
			first = rc;
	}
	if (s->rings) {
		rc = write_ntrace(s, &f, &events, &dropped, &threads, &no_ring);
		if (__atomic_load_n(&s->rings->hdr->unreserved_rings, __ATOMIC_RELAXED))
			complete = false; /* threads lost their records to a full disk */
		if (rc) {
			write_failed(s, "ntrace.pb", rc,
				     s->rings->file_backed ?
					     "host_rings.live is kept for recovery" :
					     "the rings were anonymous memory (XPROBE_RING_ANON): "
					     "their records are lost");
			if (!first)
				first = rc;
		}
		dropped +=
			atomic_load(&xpl_hot.reentrant_drops) + atomic_load(&xpl_hot.noslot_drops);
	}
	for (int cpu = 1; s->mon && cpu >= 0; cpu--) {
		if (!(s->cfg.activities & (cpu ? XPROBE_ACT_CPU_UTIL : XPROBE_ACT_HOST_MEMORY)))
			continue;
		rc = write_samples(s, &f, cpu);
		if (rc) {
			write_failed(s, cpu ? "cpu_util.pb" : "host_mem.pb", rc, NULL);
			if (!first)
				first = rc;
		}
	}

	/* trace_info.pb, last: its presence says the stop completed */
	xprobe__xtf__trace_info__init(&ti);
	ti.stop_reason = (char *)reason;
	if (sig) {
		ti.has_signal = true;
		ti.signal = sig;
	}
	for (size_t i = 0; i < 4; i++)
		if (s->cfg.enable && (s->cfg.activities & (1u << i)))
			acts[na++] = (char *)act_names[i];
	ti.n_activities = na;
	ti.activities = acts;
	ti.device_profile_mode = (char *)mode_name(s->engine ? s->cfg.mode : 0);
	for (size_t i = 0; i < s->nfiles; i++)
		s->fptrs[i] = &s->files[i];
	ti.n_files = s->nfiles;
	ti.files = s->fptrs;
	ti.host_events = events;
	ti.host_dropped = dropped;
	ti.fetched_events = s->rings ? s->rings->fetched : 0;
	ti.threads = threads;
	ti.threads_without_ring = no_ring;
	ti.n_devices = ndev;
	ti.devices = dptrs;
	ti.end_ns = f.end.ns;
	ti.session_id = s->cfg.session_id;
	for (uint32_t t = 1; t < XPROBE_EV__COUNT && t <= XPROBE_EV_SIGNAL; t++)
		if (s->cfg.type_mask & (1ull << t))
			types[nt++] = (char *)xprobe_event_type_name(t);
	ti.n_event_types = nt;
	ti.event_types = types;
	ti.ring_bytes = s->rings ? s->rings->ring_bytes : 0;
	ti.complete = complete && !first && !sigpath;
	for (size_t i = 0; i < s->nnotes; i++)
		s->note_ptrs[i] = s->notes[i];
	ti.n_notes = s->nnotes;
	ti.notes = s->note_ptrs;
	xpl_capture_meta_init(&f, XPROBE_XTF_TRACE_INFO, &meta, &clock);
	meta.info = &ti;
	xpl_write_args_init(&wa, &f, XPROBE_XTF_TRACE_INFO, &meta, NULL, &s->arena);
	rc = xpl_xtf_write_at(s->dirfd, "trace_info.pb", &wa, NULL);
	if (rc) {
		/* too late for its own notes: logged, and said by the stop */
		write_failed(s, "trace_info.pb", rc, NULL);
		if (!first)
			first = rc;
	}

	if (s->rings && !first) {
		/* ntrace.pb and trace_info.pb are written: the ring file is done */
		xpl_rings_mark_harvested(s->rings);
		xpl_rings_unlink(s->rings);
	}
	if (!sigpath && s->rings) {
		xpl_monitor_forget_rings(s->mon);
		xpl_rings_destroy(s->rings, false);
		s->rings = NULL;
	}
	s->stop_rc = first;
	atomic_store(&s->state, XPL_S_STOPPED);
	in_stop = 0;
	if (sigpath) {
		char msg[4300];

		if (first)
			xpl_sfmt(msg, sizeof(msg),
				 "signal %d: not every session file could be written to %s (the "
				 "warnings above say which)",
				 sig, s->dir);
		else
			xpl_sfmt(msg, sizeof(msg), "signal %d: session files written to %s", sig,
				 s->dir);
		xpl_log_signal_safe(XPROBE_LOG_WARN, msg);
	} else {
		pr_info("session stopped (%s): %s", reason, s->dir);
	}
	return first;
}

/* --- begin ------------------------------------------------------------------------------ */

struct xpl_engine *xpl_controller_engine(void)
{
	struct xpl_engine *e = NULL;

	pthread_mutex_lock(&xpl_ctl_lock);
	if (xpl_sess && xpl_sess->engine)
		e = xpl_sess->engine;
	else if (xpl_cont)
		e = xpl_cont->engine;
	pthread_mutex_unlock(&xpl_ctl_lock);
	return e;
}

static void session_free(struct xpl_session *s)
{
	if (!s)
		return;
	xpl_monitor_free(s->mon);
	xpl_engine_destroy(s->engine);
	xpl_rings_destroy(s->rings, true);
	xpl_arena_free(&s->arena);
	free(s->files);
	free(s->fptrs);
	free(s->fnames);
	if (s->dirfd >= 0)
		xpl_close_same(s->dirfd, &s->dir_id);
	free(s);
}

static int begin_locked(const struct xprobe_inspect_config *cfg)
{
	const struct xpl_backend_ops *ops = NULL;
	struct xpl_session *s;
	bool device;
	size_t nsegs = 16, nstreams = 1, readers;
	int rc;

	if (xpl_sess && atomic_load(&xpl_sess->state) != XPL_S_STOPPED)
		return xpl_fail(-XPROBE_E_ALREADY_ACTIVE,
				"a session is already recording into %s; stop or close it first",
				xpl_sess->dir);
	if (!cfg->enable && !cfg->on_fail) {
		pr_info("inspect config is disabled: no session begun");
		return 0;
	}
	device = (cfg->enable && cfg->mode != XPROBE_DEVICE_PROFILE_DISABLED) || cfg->on_fail;
	if (device && xpl_cont)
		return xpl_fail(-XPROBE_E_CONTINUOUS_CONFLICT,
				"continuous profiling is running: stop it "
				"(xprobe_profile_continuous_stop) before inspect device profiling");
	if (device) {
		if (!cfg->backend[0])
			return xpl_fail(-XPROBE_E_BACKEND_UNAVAILABLE,
					xpl_cupti_built() ?
						"device profiling needs a backend: choose 'cupti' "
						"(NVIDIA GPUs) or 'sim' (the software device)" :
						"device profiling needs a backend: choose 'sim' (the "
						"software device); 'cupti' is not in this build");
		rc = xpl_backend_find(cfg->backend, &ops);
		if (rc == -XPROBE_E_BACKEND_UNAVAILABLE)
			return xpl_fail(rc, "the cupti backend is not in this build of libxprobe; "
					    "use 'sim' on machines without a GPU");
		if (rc)
			return xpl_fail(rc, "unknown backend '%s'", cfg->backend);
	}
	/* the previous, stopped session goes now */
	if (xpl_sess) {
		atomic_store(&xpl_sess_sig, NULL);
		xpl_execs_forget_engine(xpl_sess->engine);
		session_free(xpl_sess);
		xpl_sess = NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return xpl_fail(-ENOMEM, "out of memory");
	s->cfg = *cfg;
	s->pid = (uint32_t)getpid();
	s->process_start_time = xpl_process_start_time((int)s->pid);
	s->start_real_ns = xpl_now_real_ns();
	s->backend = device ? ops->name : "none";
	s->simulated = device && ops->simulated;
	s->tsc = xpl_tsc_usable();
	xpl_calib_now(&s->begin, s->tsc);
	rc = xpl_outdir_make(cfg->output_dir, cfg->instance_id, s->pid, s->start_real_ns, s->dir,
			     sizeof(s->dir), &s->dirfd);
	if (rc) {
		free(s);
		return rc;
	}
	xpl_fdid_take(s->dirfd, &s->dir_id);
	xpl_crash_handlers_install();

	/* device profile: arm per device; any failure rolls back all */
	if (device) {
		struct xpl_engine_params ep = {
			.ops = ops,
			.opts = &cfg->bopts,
			.enabled = cfg->devices,
			.capture_bytes = OPTS_GET(&cfg->bopts, capture_bytes, 0),
			.warmup = cfg->warmup,
		};

		rc = xpl_engine_create(&ep, &s->engine);
		if (rc) {
			char why[256];

			/* the cupti backend's own code and reason (CUDA version,
			 * CUPTI missing, another subscriber) are the answer */
			snprintf(why, sizeof(why), "%s", xprobe_last_error());
			rc = xpl_fail(xpl_backend_own_code(rc) ? rc : -XPROBE_E_DEVICE_FAILED,
				      "the %s backend could not open its devices: %s", ops->name,
				      why[0] ? why : xpl_errdesc(rc));
			goto fail;
		}
		if (cfg->enable && cfg->mode == XPROBE_DEVICE_PROFILE_SESSION) {
			uint32_t nd = xpl_engine_ndev(s->engine);

			for (uint32_t d = 0; d < nd; d++) {
				if (!cfg->devices[d])
					continue;
				rc = xpl_engine_session_start(s->engine, d);
				if (!rc)
					continue;
				for (uint32_t k = d; k-- > 0;) {
					uint64_t id = 0;

					if (!xpl_engine_session_active(s->engine, k))
						continue;
					if (xpl_engine_session_stop(s->engine, k, &id) == 0 || id)
						xpl_engine_session_drop(s->engine, k, id);
					else
						pr_warn("failed to clean up the session on device %u "
							"after failure to start on device %u",
							k, d);
				}
				rc = xpl_fail(-XPROBE_E_DEVICE_FAILED,
					      "device %u of %u failed to arm; devices armed before "
					      "it were stopped and dropped",
					      d, nd);
				goto fail;
			}
		}
		xpl_engine_arena_needs(s->engine, &nsegs, &nstreams);
	}
	if (cfg->enable && (cfg->activities & XPROBE_ACT_SYSTEM_PROFILE)) {
		struct xpl_calib later;
		struct xpl_rings_params rp = {
			.dirfd = cfg->ring_backing == XPROBE_RING_FILE ? s->dirfd : -1,
			.ring_bytes = xpl_ring_bytes(cfg->ring_events),
			.max_rings = cfg->max_threads,
			.pid = s->pid,
			.process_start_time = s->process_start_time,
			.session_start_ns = s->start_real_ns,
			.instance_id = cfg->instance_id,
			.backend = s->backend,
			.simulated = s->simulated,
			.tsc = s->tsc,
			.begin = &s->begin,
			.latest = &later,
		};

		/* a second point ~1 ms later, so a killed session's rings can be
		 * converted even if nothing refreshes it */
		if (s->tsc) {
			uint64_t until = s->begin.ns + 1000000;

			while (xpl_mono_ns() < until)
				;
		}
		xpl_calib_now(&later, s->tsc);
		rc = xpl_rings_create(&rp, &s->rings);
		if (rc == -ENOSPC || rc == -EDQUOT) {
			rc = xpl_fail(-XPROBE_E_OUTPUT_FAILED,
				      "no space for the host rings: reserving %llu bytes of "
				      "%s/host_rings.live (its header and one %llu-byte ring) "
				      "failed: %s; free space, use smaller rings "
				      "(ring_events) or anonymous ones (XPROBE_RING_ANON)",
				      (unsigned long long)(rp.ring_bytes + 4096 +
							   ((cfg->max_threads * 64ull + 4095) &
							    ~4095ull)),
				      s->dir, (unsigned long long)rp.ring_bytes, strerror(-rc));
			goto fail;
		}
		if (rc) {
			rc = xpl_fail(-XPROBE_E_OUTPUT_FAILED,
				      "cannot create the host rings in %s: %s", s->dir,
				      strerror(-rc));
			goto fail;
		}
		if (nstreams < cfg->max_threads)
			nstreams = cfg->max_threads;
	}
	if (cfg->enable && (cfg->activities & (XPROBE_ACT_CPU_UTIL | XPROBE_ACT_HOST_MEMORY))) {
		rc = xpl_monitor_start(cfg->monitor_period_ms,
				       cfg->activities & XPROBE_ACT_CPU_UTIL,
				       cfg->activities & XPROBE_ACT_HOST_MEMORY, s->rings, &s->mon);
		if (rc) {
			rc = xpl_fail(rc, "cannot start the system monitor thread");
			goto fail;
		}
	}
	readers = sizeof(struct xpl_ring_reader);
	rc = xpl_arena_alloc(&s->arena, 65536 + nstreams * 64, nsegs, nstreams, readers);
	if (!rc) {
		s->files_cap = 64;
		s->files = calloc(s->files_cap, sizeof(*s->files));
		s->fptrs = calloc(s->files_cap, sizeof(*s->fptrs));
		s->fnames = calloc(s->files_cap, sizeof(*s->fnames));
		if (!s->files || !s->fptrs || !s->fnames)
			rc = -ENOMEM;
	}
	if (rc) {
		rc = xpl_fail(-ENOMEM, "out of memory preparing the stop path");
		goto fail;
	}
	atomic_store(&s->state, XPL_S_ACTIVE);
	xpl_sess = s;
	atomic_store(&xpl_sess_sig, s);
	if (s->rings) {
		xpl_rings_activate(s->rings, cfg->type_mask);
		xpl_rec_plain(XPROBE_EV_SESSION_BEGIN, 0, (uint64_t)cfg->session_id, 0);
	}
	pr_info("session begun: %s", s->dir);
	return 0;
fail : {
	char parent[4096];
	char *slash;

	xpl_monitor_free(s->mon);
	s->mon = NULL;
	xpl_engine_destroy(s->engine);
	s->engine = NULL;
	xpl_rings_destroy(s->rings, true);
	s->rings = NULL;
	xpl_arena_free(&s->arena);
	free(s->files);
	free(s->fptrs);
	free(s->fnames);
	close(s->dirfd);
	/* the empty tree made for this session goes too */
	rmdir(s->dir);
	snprintf(parent, sizeof(parent), "%s", s->dir);
	slash = strrchr(parent, '/');
	if (slash) {
		*slash = '\0';
		rmdir(parent); /* only if empty */
	}
	free(s);
}
	return rc;
}

XPROBE_API int xprobe_inspect_begin_with_options(const struct xprobe_inspect_config *cfg)
{
	int rc;

	xpl_clear_error();
	if (!xpl_config_live(cfg))
		return xpl_fail(-XPROBE_E_MISUSE,
				"config is NULL, freed or not from xprobe_inspect_config_new");
	pthread_mutex_lock(&xpl_ctl_lock);
	rc = begin_locked(cfg);
	pthread_mutex_unlock(&xpl_ctl_lock);
	if (rc)
		errno = rc < 0 ? -rc : rc;
	return rc;
}

XPROBE_API int xprobe_inspect_begin(void)
{
	struct xprobe_inspect_config *c;
	int rc;

	xpl_clear_error();
	rc = xprobe_inspect_config_new(&c);
	if (rc)
		return rc;
	rc = xpl_config_from_env(c);
	if (!rc)
		rc = xprobe_inspect_begin_with_options(c);
	xprobe_inspect_config_free(c);
	return rc;
}

/* --- stop, close, queries ------------------------------------------------------------------ */

/* The error of a stop that could not write every file: the first file it
 * could not write and why (the notes hold them all). */
static int stop_failed(const struct xpl_session *s, int rc)
{
	if (s->fail_note)
		return xpl_fail(-XPROBE_E_OUTPUT_FAILED,
				"the session stopped but not every file could be written in %s: %s",
				s->dir, s->notes[s->fail_note - 1]);
	return xpl_fail(-XPROBE_E_OUTPUT_FAILED,
			"the session stopped but not every file could be written in %s: %s", s->dir,
			xpl_errdesc(rc));
}

XPROBE_API int xprobe_inspect_stop(void)
{
	int rc;

	xpl_clear_error();
	pthread_mutex_lock(&xpl_ctl_lock);
	if (!xpl_sess) {
		pthread_mutex_unlock(&xpl_ctl_lock);
		return xpl_fail(-XPROBE_E_NOT_ACTIVE, "no session was begun");
	}
	rc = xpl_session_stop(xpl_sess, "stop", 0, false);
	if (rc)
		rc = stop_failed(xpl_sess, rc);
	pthread_mutex_unlock(&xpl_ctl_lock);
	return rc;
}

XPROBE_API int xprobe_inspect_close(void)
{
	int rc = 0;

	xpl_clear_error();
	pthread_mutex_lock(&xpl_ctl_lock);
	if (xpl_sess) {
		rc = xpl_session_stop(xpl_sess, "close", 0, false);
		if (rc)
			rc = stop_failed(xpl_sess, rc);
		atomic_store(&xpl_sess_sig, NULL);
		xpl_execs_forget_engine(xpl_sess->engine);
		session_free(xpl_sess);
		xpl_sess = NULL;
	}
	pthread_mutex_unlock(&xpl_ctl_lock);
	return rc;
}

XPROBE_API int xprobe_inspect_get_output_dir(char *buf, size_t size)
{
	int rc;

	if (!buf || !size)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "buf must not be NULL nor size 0");
	pthread_mutex_lock(&xpl_ctl_lock);
	if (!xpl_sess) {
		pthread_mutex_unlock(&xpl_ctl_lock);
		buf[0] = '\0';
		return xpl_fail(-XPROBE_E_NOT_ACTIVE, "no session since the last close");
	}
	rc = xpl_snprintf(buf, size, "%s", xpl_sess->dir);
	if (rc < 0)
		rc = xpl_fail(-XPROBE_E_TRUNCATED, "the output dir needs %zu bytes, buffer has %zu",
			      strlen(xpl_sess->dir) + 1, size);
	pthread_mutex_unlock(&xpl_ctl_lock);
	return rc;
}

XPROBE_API int xprobe_inspect_is_active(void)
{
	struct xpl_session *s = atomic_load(&xpl_sess_sig);

	return s && atomic_load(&s->state) == XPL_S_ACTIVE;
}

XPROBE_API int xprobe_inspect_fetch(const struct xprobe_fetch_opts *opts, void *buf, size_t size,
				    size_t *len, size_t *events)
{
	uint32_t format, max;
	int rc;

	if (!buf || !len)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "buf and len must not be NULL");
	*len = 0;
	if (events)
		*events = 0;
	if (!OPTS_VALID(opts, xprobe_fetch_opts))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"fetch opts: bad sz or unknown trailing fields");
	format = OPTS_GET(opts, format, XPROBE_FETCH_RECORDS);
	max = OPTS_GET(opts, max_events, 0);
	if (format != XPROBE_FETCH_RECORDS && format != XPROBE_FETCH_JSON)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"fetch format %u is not RECORDS (0) or "
				"JSON (1)",
				format);
	pthread_mutex_lock(&xpl_ctl_lock);
	if (!xpl_sess || atomic_load(&xpl_sess->state) != XPL_S_ACTIVE || !xpl_sess->rings) {
		pthread_mutex_unlock(&xpl_ctl_lock);
		return xpl_fail(-XPROBE_E_NOT_ACTIVE, "no session is recording host events");
	}
	rc = xpl_rings_fetch(xpl_sess->rings, (int)format, max, buf, size, len, events);
	pthread_mutex_unlock(&xpl_ctl_lock);
	if (rc == -XPROBE_E_TRUNCATED)
		return xpl_fail(rc, "a %zu-byte buffer cannot hold the next event", size);
	return rc;
}
