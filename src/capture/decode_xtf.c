/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_xtf.c - libxprobe sessions as completed captures: an .xtf file or
 * a session directory (<base>/<instance-id>-<pid>/<start-ns>) into events,
 * for `measure --input`.  Reading and validating the files is libxprobe's
 * public reader (include/xprobe/xtf.h, the xtf_reader library); this file
 * only maps records to the event model (docs/xtf-format.md, "Events").
 *
 * Mappings:
 *   NVTX push / pop      nvtx_range_start / nvtx_range_end, source
 *                        cupti_callback, clock host_monotonic, nvtx
 *                        {name, name_complete, range_kind "thread",
 *                        range_id, start_tid}, attributes.nvtx_push_level.
 *                        A pop carries the name of the push it closes
 *                        (found by thread and level).  range_id is
 *                        (tid << 32) | n for the n-th push of that thread in
 *                        this input, so every (tid, level) occurrence has
 *                        its own key and the exact NVTX policy pairs each
 *                        push with its pop.
 *   NVTX start / end     the same types, range_kind "process", range_id =
 *                        the id nvtxRangeStart returned, start_tid = the
 *                        starting thread (the end may be on another; the
 *                        starts of a file are collected first, since the
 *                        ending thread's stream may come before).
 *   Ex forms whose message was wide or registered were tracked for nesting
 *   only: they produce no event (the contract collects ASCII names only).
 *   NVTX marks, executions, user records, session lifecycle, signals, and
 *   device activity are not CUDA events: they become `marker` events
 *   (source marker) whose attributes say what they are:
 *     {"xprobe_event": "nvtx_mark", "name"}
 *     {"xprobe_event": "execution_begin"|"execution_end", "model",
 *      "execution_id", "status" (end)}
 *     {"xprobe_event": "user", "user_type", "a0", "a1"}
 *     {"xprobe_event": "session_begin"|"session_end", "session_id"}
 *     {"xprobe_event": "signal", "signal"}
 *     {"xprobe_event": "device_activity_start"|"device_activity_end",
 *      "activity", "device", "execution_id", "backend", "simulated"}
 *   cpu_util.pb and host_mem.pb hold samples, not boundaries: not decoded.
 *
 * Drops the session counted (rings full, threads without a ring, device
 * captures over their bound) go to the capture's `dropped`, so the
 * correlator refuses to measure a lossy session instead of reporting a
 * partial result.  Bounds: events beyond max_events are counted, not kept,
 * and the input fails with EVENT_RATE_TOO_HIGH naming the total.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/readfile.h"
#include "../../common/cancel.h"
#include "capture_io.h"
#include "decode_json.h"
#include "xprobe/xtf.h"

/* One open thread range: what a pop needs from its push. */
struct open_range {
	uint64_t range_id;
	xp_str_t name;
	bool complete;
	bool skip; /* name not collected: no events for this range */
};

/* Per-thread push stack. */
struct thread_stack {
	uint32_t tid;
	uint32_t pushes; /* pushes seen: the n of range ids */
	struct open_range *lv; /* by level */
	size_t cap;
};

/* Process ranges started and not yet ended. */
struct proc_range {
	uint64_t id;
	xp_str_t name;
	uint32_t tid;
	bool complete;
	bool skip;
};

struct dec {
	struct xp_capture *c;
	const char *path;
	const char *file; /* file inside a session, for messages */
	uint32_t pid;
	uint64_t start_time; /* process start time, clock ticks */
	uint64_t observed; /* events this input holds */
	bool full; /* capture bound reached: count only */
	const char *backend;
	bool simulated;
	struct thread_stack *ts;
	size_t nts, cap_ts;
	struct proc_range *pr;
	size_t npr, cap_pr;
	struct xp_error *err;
};

#define MAX_LEVEL 4096

static int dec_error(struct dec *d, const char *fmt, const char *what)
{
	xp_error_detail_str(d->err, "path", d->path);
	if (d->file)
		xp_error_detail_str(d->err, "file", d->file);
	return xp_error_set(d->err, XPROBE_E_TRACE_EXPORT_FAILED, false, fmt, d->path, what);
}

static struct thread_stack *stack_of(struct dec *d, uint32_t tid)
{
	for (size_t i = 0; i < d->nts; i++)
		if (d->ts[i].tid == tid)
			return &d->ts[i];
	if (d->nts == d->cap_ts) {
		size_t cap = d->cap_ts ? d->cap_ts * 2 : 16;
		void *p = realloc(d->ts, cap * sizeof(*d->ts));

		if (!p)
			return NULL;
		d->ts = p;
		d->cap_ts = cap;
	}
	memset(&d->ts[d->nts], 0, sizeof(d->ts[0]));
	d->ts[d->nts].tid = tid;
	return &d->ts[d->nts++];
}

static struct open_range *level_slot(struct thread_stack *t, uint32_t level)
{
	if (level >= MAX_LEVEL)
		return NULL;
	if (level >= t->cap) {
		size_t cap = t->cap ? t->cap : 8;
		void *p;

		while (cap <= level)
			cap *= 2;
		p = realloc(t->lv, cap * sizeof(*t->lv));
		if (!p)
			return NULL;
		t->lv = p;
		memset(t->lv + t->cap, 0, (cap - t->cap) * sizeof(*t->lv));
		t->cap = cap;
	}
	return &t->lv[level];
}

/* A new event, or NULL: bound reached (counted) or out of memory (*rc). */
static struct xp_event *new_event(struct dec *d, const struct xprobe_record *r, uint64_t ts,
				  int *rc)
{
	struct xp_event *e;
	int e2 = 0;

	*rc = 0;
	d->observed++;
	if (d->full)
		return NULL;
	e = xp_capture_add(d->c, &e2);
	if (!e) {
		if (e2 == -E2BIG) {
			d->full = true;
			return NULL;
		}
		*rc = dec_error(d, "failed to decode %s: %s", "out of memory");
		return NULL;
	}
	e->pid = d->pid;
	e->tid = r->tid;
	e->timestamp_ns = ts;
	e->timestamp_raw = ts;
	e->clock_domain = XP_CLOCK_HOST_MONOTONIC;
	if (d->start_time) {
		e->process_start_time = d->start_time;
		e->flags |= XP_EVF_START_TIME;
	}
	return e;
}

static int attr_raw(struct dec *d, struct xp_event *e, const char *key, const char *json)
{
	long idx = xp_capture_add_attr(d->c, xp_capture_intern(d->c, key),
				       xp_capture_intern(d->c, json));

	if (idx < 0)
		return (int)idx;
	if (e->attrs_count == 0)
		e->attrs_first = (uint32_t)idx;
	e->attrs_count++;
	return 0;
}

static int attr_i64(struct dec *d, struct xp_event *e, const char *key, int64_t v)
{
	char tmp[24];

	snprintf(tmp, sizeof(tmp), "%" PRId64, v);
	return attr_raw(d, e, key, tmp);
}

static int nvtx_event(struct dec *d, const struct xprobe_record *r, bool start, uint32_t kind,
		      uint64_t range_id, xp_str_t name, bool complete, uint32_t start_tid,
		      int64_t level)
{
	struct xp_event *e;
	int rc;

	e = new_event(d, r, r->ts, &rc);
	if (!e)
		return rc;
	e->source = XP_SRC_CUPTI_CALLBACK;
	e->event_type = start ? XP_EV_NVTX_RANGE_START : XP_EV_NVTX_RANGE_END;
	e->flags |= XP_EVF_NVTX;
	e->nvtx.name = name;
	e->nvtx.name_complete = complete;
	e->nvtx.range_kind = (uint8_t)kind;
	e->nvtx.range_id = range_id;
	e->nvtx.start_tid = start_tid;
	if (level >= 0 && attr_i64(d, e, "nvtx_push_level", level))
		return dec_error(d, "failed to decode %s: %s", "out of memory");
	return 0;
}

static xp_str_t rec_name(struct dec *d, const struct xprobe_record *r)
{
	if (r->flags & XPROBE_RECF_NAME_UNSUPPORTED)
		return 0;
	return xp_capture_intern_n(d->c, (const char *)r + XPROBE_RECORD_HDR_SIZE, r->name_len);
}

/* A marker event with "xprobe_event" = @what; more attributes follow. */
static struct xp_event *marker(struct dec *d, const struct xprobe_record *r, uint64_t ts,
			       const char *what, int *rc)
{
	struct xp_event *e = new_event(d, r, ts, rc);

	if (!e)
		return NULL;
	e->source = XP_SRC_MARKER;
	e->event_type = XP_EV_MARKER;
	if (xp_event_add_attr_str(d->c, e, "xprobe_event", what)) {
		*rc = dec_error(d, "failed to decode %s: %s", "out of memory");
		return NULL;
	}
	return e;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct proc_range *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static const struct proc_range *proc_find(const struct dec *d, uint64_t id)
{
	struct proc_range key = { .id = id };

	return d->npr ? bsearch(&key, d->pr, d->npr, sizeof(*d->pr), cmp_proc) : NULL;
}

/*
 * First pass over a host file: every process range start, so that an end
 * recorded by another thread (whose stream may come first) finds its name.
 */
static int collect_starts(struct dec *d, const struct xprobe_xtf *x, size_t nstreams)
{
	for (size_t i = 0; i < nstreams; i++) {
		struct xprobe_xtf_stream s;
		const struct xprobe_record *r;
		size_t cur = 0;

		xprobe_xtf_get_stream(x, i, &s);
		while ((r = xprobe_xtf_next_record(&s, &cur))) {
			struct proc_range *p;

			if (r->type != XPROBE_EV_NVTX_START)
				continue;
			if (d->npr == d->cap_pr) {
				size_t cap = d->cap_pr ? d->cap_pr * 2 : 64;
				void *q = realloc(d->pr, cap * sizeof(*d->pr));

				if (!q)
					return dec_error(d, "failed to decode %s: %s",
							 "out of memory");
				d->pr = q;
				d->cap_pr = cap;
			}
			p = &d->pr[d->npr++];
			p->id = r->a0;
			p->name = rec_name(d, r);
			p->tid = r->tid;
			p->complete = r->flags & XPROBE_RECF_NAME_COMPLETE;
			p->skip = r->flags & XPROBE_RECF_NAME_UNSUPPORTED;
		}
	}
	if (d->npr)
		qsort(d->pr, d->npr, sizeof(*d->pr), cmp_proc);
	return 0;
}

static int host_record(struct dec *d, const struct xprobe_record *r)
{
	char name[XPROBE_NAME_MAX + 1];
	struct xp_event *e = NULL;
	int rc = 0;

	memcpy(name, (const char *)r + XPROBE_RECORD_HDR_SIZE, r->name_len);
	name[r->name_len] = '\0';
	switch (r->type) {
	case XPROBE_EV_NVTX_PUSH: {
		struct thread_stack *t = stack_of(d, r->tid);
		struct open_range *o = t ? level_slot(t, r->aux) : NULL;

		if (!t || !o)
			return dec_error(d, "failed to decode %s: %s",
					 t ? "NVTX push level above 4096" : "out of memory");
		t->pushes++;
		o->range_id = (uint64_t)r->tid << 32 | t->pushes;
		o->name = rec_name(d, r);
		o->complete = r->flags & XPROBE_RECF_NAME_COMPLETE;
		o->skip = r->flags & XPROBE_RECF_NAME_UNSUPPORTED;
		if (o->skip)
			return 0;
		return nvtx_event(d, r, true, XP_NVTX_THREAD, o->range_id, o->name, o->complete,
				  r->tid, r->aux);
	}
	case XPROBE_EV_NVTX_POP: {
		struct thread_stack *t = stack_of(d, r->tid);
		struct open_range *o = t ? level_slot(t, r->aux) : NULL;
		struct open_range none = { (uint64_t)r->tid << 32, xp_capture_intern(d->c, ""),
					   false, false };

		if (!t)
			return dec_error(d, "failed to decode %s: %s", "out of memory");
		if (!o || !o->range_id)
			o = &none; /* its push is not in this input: an unmatched end */
		rc = o->skip ? 0 :
			       nvtx_event(d, r, false, XP_NVTX_THREAD, o->range_id, o->name,
					  o->complete, r->tid, r->aux);
		if (o != &none)
			memset(o, 0, sizeof(*o));
		return rc;
	}
	case XPROBE_EV_NVTX_START: {
		const struct proc_range *p = proc_find(d, r->a0);

		if (!p || p->skip)
			return 0;
		return nvtx_event(d, r, true, XP_NVTX_PROCESS, r->a0, p->name, p->complete, r->tid,
				  -1);
	}
	case XPROBE_EV_NVTX_END: {
		const struct proc_range *p = proc_find(d, r->a0);

		if (p && p->skip)
			return 0;
		if (p)
			return nvtx_event(d, r, false, XP_NVTX_PROCESS, r->a0, p->name, p->complete,
					  p->tid, -1);
		/* its start is not in this input: an unmatched end */
		return nvtx_event(d, r, false, XP_NVTX_PROCESS, r->a0, xp_capture_intern(d->c, ""),
				  false, r->tid, -1);
	}
	case XPROBE_EV_NVTX_MARK:
		if (r->flags & XPROBE_RECF_NAME_UNSUPPORTED)
			return 0;
		e = marker(d, r, r->ts, "nvtx_mark", &rc);
		if (e && xp_event_add_attr_str(d->c, e, "name", name))
			return dec_error(d, "failed to decode %s: %s", "out of memory");
		return rc;
	case XPROBE_EV_EXEC_BEGIN:
	case XPROBE_EV_EXEC_END:
		e = marker(d, r, r->ts,
			   r->type == XPROBE_EV_EXEC_BEGIN ? "execution_begin" : "execution_end",
			   &rc);
		if (e &&
		    (xp_event_add_attr_str(d->c, e, "model", name) ||
		     xp_event_add_attr_u64(d->c, e, "execution_id", r->a0) ||
		     (r->type == XPROBE_EV_EXEC_END && attr_i64(d, e, "status", (int32_t)r->aux))))
			return dec_error(d, "failed to decode %s: %s", "out of memory");
		return rc;
	case XPROBE_EV_USER:
		e = marker(d, r, r->ts, "user", &rc);
		if (e && (xp_event_add_attr_u64(d->c, e, "user_type", r->aux) ||
			  xp_event_add_attr_u64(d->c, e, "a0", r->a0) ||
			  xp_event_add_attr_u64(d->c, e, "a1", r->a1)))
			return dec_error(d, "failed to decode %s: %s", "out of memory");
		return rc;
	case XPROBE_EV_SESSION_BEGIN:
	case XPROBE_EV_SESSION_END:
		e = marker(d, r, r->ts,
			   r->type == XPROBE_EV_SESSION_BEGIN ? "session_begin" : "session_end",
			   &rc);
		if (e && attr_i64(d, e, "session_id", (int64_t)r->a0))
			return dec_error(d, "failed to decode %s: %s", "out of memory");
		return rc;
	case XPROBE_EV_SIGNAL:
		e = marker(d, r, r->ts, "signal", &rc);
		if (e && xp_event_add_attr_u64(d->c, e, "signal", r->aux))
			return dec_error(d, "failed to decode %s: %s", "out of memory");
		return rc;
	}
	d->c->unknown_records++;
	return 0;
}

static int device_record(struct dec *d, const struct xprobe_record *r)
{
	char name[XPROBE_NAME_MAX + 1];

	memcpy(name, (const char *)r + XPROBE_RECORD_HDR_SIZE, r->name_len);
	name[r->name_len] = '\0';
	for (int end = 0; end < 2; end++) {
		struct xp_event *e;
		int rc;

		e = marker(d, r, end ? r->a0 : r->ts,
			   end ? "device_activity_end" : "device_activity_start", &rc);
		if (!e) {
			if (rc)
				return rc;
			continue;
		}
		if (xp_event_add_attr_str(d->c, e, "activity", name) ||
		    xp_event_add_attr_u64(d->c, e, "device", r->aux) ||
		    xp_event_add_attr_u64(d->c, e, "execution_id", r->a1) ||
		    xp_event_add_attr_str(d->c, e, "backend", d->backend) ||
		    attr_raw(d, e, "simulated", d->simulated ? "true" : "false"))
			return dec_error(d, "failed to decode %s: %s", "out of memory");
	}
	return 0;
}

/* Map one opened file's records. */
static int decode_file(struct dec *d, const struct xprobe_xtf *x)
{
	struct xprobe_xtf_info in;

	memset(&in, 0, sizeof(in));
	in.sz = sizeof(in);
	if (xprobe_xtf_get_info(x, &in))
		return dec_error(d, "failed to decode %s: %s", "unreadable file information");
	if (d->pid && in.pid != d->pid)
		return dec_error(d, "failed to decode %s: %s",
				 "files of more than one process in one session");
	d->pid = in.pid;
	d->start_time = in.process_start_time;
	d->backend = in.backend;
	d->simulated = in.simulated;
	if (in.kind == XPROBE_XTF_TRACE_INFO) {
		d->c->dropped += in.host_dropped;
		return 0;
	}
	if (in.kind != XPROBE_XTF_NTRACE && in.kind != XPROBE_XTF_DEVICE_PROFILE)
		return 0; /* samples */
	/* a recovered ring file has no trace_info: its stream drops count */
	if (in.kind == XPROBE_XTF_DEVICE_PROFILE || (in.flags & XPROBE_XTF_F_RECOVERED))
		d->c->dropped += in.dropped;
	if (in.kind == XPROBE_XTF_NTRACE) {
		int rc;

		d->npr = 0;
		rc = collect_starts(d, x, in.streams);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < in.streams; i++) {
		struct xprobe_xtf_stream s;
		const struct xprobe_record *r;
		size_t cur = 0;
		int rc;

		if (xprobe_xtf_get_stream(x, i, &s))
			return dec_error(d, "failed to decode %s: %s", "unreadable stream");
		while ((r = xprobe_xtf_next_record(&s, &cur))) {
			if (!(d->observed % XPC_CANCEL_EVERY) && xpc_cancel_signo())
				return xp_error_cancelled(d->err, d->path);
			rc = in.kind == XPROBE_XTF_NTRACE ? host_record(d, r) : device_record(d, r);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/*
 * The CLI's side of reading a session directory: before the reader opens
 * anything by name, every entry of the directory and of its on_fail/ must
 * be a regular file within XP_INPUT_MAX_BYTES (lstat: a symlink is refused
 * too) or a directory.  A FIFO there would block the reader's open() for
 * ever; a 5 GiB sparse file would be read into memory whole.  libxprobe
 * writes only regular files and on_fail/ into a session.  Another user who
 * can write into the directory can still swap a file between this check
 * and the reader's open (the reader's own checks are libxprobe's).
 */
static int session_dir_check(int dfd, const char *sub, struct dec *d)
{
	struct dirent *de;
	char name[300];
	DIR *dir;
	int fd, rc = 0;

	fd = sub ? openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) :
		   dup(dfd);
	if (fd < 0)
		return sub && errno == ENOENT ? 0 : -errno;
	dir = fdopendir(fd);
	if (!dir) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while (!rc && (errno = 0, de = readdir(dir))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(name, sizeof(name), "%s%s%s", sub ? sub : "", sub ? "/" : "", de->d_name);
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT) /* removed meanwhile: the reader will say */
				continue;
			rc = -errno;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			if (!sub && !strcmp(de->d_name, "on_fail"))
				rc = session_dir_check(dirfd(dir), "on_fail", d);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			const char *type = xpc_file_type_name(st.st_mode);

			xp_error_detail_str(d->err, "file_type", type);
			xp_error_hint(d->err, "a libxprobe session directory holds regular files and "
					      "on_fail/ only; remove %s or pass its .xtf files one by one",
				      name);
			xp_error_detail_str(d->err, "path", d->path);
			xp_error_detail_str(d->err, "file", name);
			rc = xp_error_set(d->err, XPROBE_E_TRACE_EXPORT_FAILED, false,
					  "failed to read %s: %s is a %s, not a regular file", d->path,
					  name, type);
			break;
		}
		if ((uint64_t)st.st_size > XP_INPUT_MAX_BYTES) {
			char what[340];

			snprintf(what, sizeof(what), "session file %s", name);
			xp_error_detail_str(d->err, "file", name);
			rc = xp_input_too_large(d->err, d->path, what, (uint64_t)st.st_size);
			break;
		}
	}
	if (!rc && errno)
		rc = -errno;
	closedir(dir);
	return rc;
}

/* One .xtf file at @fd: read here (bounded), validated in memory. */
static int decode_one_file(struct dec *d, int fd, const struct stat *sb)
{
	struct xprobe_xtf *x = NULL;
	char why[512];
	size_t len;
	char *buf;
	int rc;

	if ((uint64_t)sb->st_size > XP_INPUT_MAX_BYTES)
		return xp_input_too_large(d->err, d->path, "the .xtf file", (uint64_t)sb->st_size);
	if (lseek(fd, 0, SEEK_SET) < 0)
		return dec_error(d, "failed to read %s: %s", strerror(errno));
	rc = xpc_read_fd(fd, XP_INPUT_MAX_BYTES, 0, &buf, &len);
	if (rc == -EFBIG)
		return xp_input_too_large(d->err, d->path, "the .xtf file", 0);
	if (rc)
		return dec_error(d, "failed to read %s: %s", strerror(-rc));
	why[0] = '\0';
	rc = xprobe_xtf_open_mem(buf, len, &x, why, sizeof(why));
	free(buf);
	if (rc) {
		xp_error_hint(d->err, "inputs are Event JSONL, host-capture JSON, .xtf files or "
				      "libxprobe session directories; see docs/inputs.md");
		return dec_error(d, "failed to decode %s: %s",
				 why[0] ? why : strerror(rc < 0 && -rc < 4000 ? -rc : EIO));
	}
	rc = decode_file(d, x);
	xprobe_xtf_close(x);
	return rc;
}

int xp_decode_xtf_fd(int fd, const struct stat *sb, const char *path, struct xp_capture *c,
		     struct xp_error *err)
{
	struct dec d;
	char why[512];
	size_t before = c->count;
	int rc = 0;

	memset(&d, 0, sizeof(d));
	d.c = c;
	d.path = path;
	d.err = err;
	if (S_ISDIR(sb->st_mode)) {
		struct xprobe_session *s = NULL;

		rc = session_dir_check(fd, NULL, &d);
		if (rc && !err->code)
			rc = dec_error(&d, "failed to read %s: %s", strerror(-rc));
		if (rc)
			return rc;
		why[0] = '\0';
		rc = xprobe_session_open(path, &s, why, sizeof(why));
		if (rc) {
			if (strstr(why, "not a libxprobe session"))
				xp_error_hint(err, "pass a session directory "
						   "<base>/<instance-id>-<pid>/<session-start-ns> "
						   "or one of its .xtf files");
			return dec_error(&d, "failed to decode %s: %s",
					 why[0] ? why : strerror(rc < 0 && -rc < 4000 ? -rc : EIO));
		}
		if (xprobe_session_recovered(s))
			xp_error_detail_bool(err, "recovered", true);
		for (size_t i = 0; !rc && i < xprobe_session_file_count(s); i++) {
			const char *name;
			const struct xprobe_xtf *x = xprobe_session_get_file(s, i, &name);

			d.file = name;
			rc = decode_file(&d, x);
		}
		xprobe_session_close(s);
	} else {
		rc = decode_one_file(&d, fd, sb);
	}
	for (size_t i = 0; i < d.nts; i++)
		free(d.ts[i].lv);
	free(d.ts);
	free(d.pr);
	if (!rc && d.full)
		rc = xp_error_event_limit(err, path, before + d.observed, c->max_events);
	return rc;
}
