/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine.c - the device-profile engine (engine.h): captures, the SESSION
 * stash, MODEL profiles, executions, continuous ring, routing of completed
 * backend buffers, and writing device profiles as .xtf files.
 *
 * A capture (struct xpl_cap) is a list of chunks, each holding records of
 * one device; it is written as one stream per device, the chunks of a
 * device back to back (no copy: each chunk is a writer segment).  A
 * capture keeps at most capture_bytes; records beyond are counted per
 * device as dropped.
 *
 * Invariant: dev[d].arm_refs counts the captures that need device d armed:
 * an active SESSION capture, each user MODEL profile, each automatic
 * profile of an execution in flight.  The backend is started on 0 -> 1 and
 * stopped on 1 -> 0.  Each arm is paired with exactly one release; the
 * rollback paths release what they armed, in reverse order.
 *
 * Differences from the original controller (docs/seed-mapping.md): the stop
 * path writes every pending stash and every open profile instead of only the
 * id minted by the stop; on-fail writes only the failing execution's files,
 * into <session>/on_fail/, instead of sweeping the whole output directory
 * into ./tmp; continuous files carry the execution id so two saves in one
 * second cannot collide.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../internal.h"
#include "../producers/clock.h"
#include "engine.h"

#define XPL_CHUNK_DATA (64 * 1024 - 64)
#define XPL_DEFAULT_CAPTURE_BYTES (64ull << 20)
#define XPL_MAX_MODELS 4096

struct xpl_chunk {
	struct xpl_chunk *next;
	uint32_t dev;
	uint32_t len; /* bytes used */
	uint64_t records;
	uint8_t data[XPL_CHUNK_DATA] __attribute__((aligned(8)));
};

struct xpl_cap {
	struct xpl_chunk *head, *tail;
	uint64_t bytes, records;
	uint64_t dropped[XPROBE_MAX_DEVICES];
	uint64_t start_ns, stop_ns;
	char harvest_error[160];
};

struct xpl_stash {
	struct xpl_stash *next;
	uint64_t id;
	struct xpl_cap cap;
};

struct xpl_devslot {
	uint32_t arm_refs;
	bool session_active;
	struct xpl_cap *session; /* the running SESSION capture */
	uint64_t next_session_id; /* the next id minted (from 1) */
	struct xpl_stash *stash;
	struct xpl_chunk *q_head, *q_tail; /* completed backend buffers, not yet routed */
};

struct xpl_prof {
	struct xpl_prof *next;
	char filename[128];
	char model[128];
	const char *key_space; /* "model", "on_fail", "continuous" */
	bool user; /* registered by xprobe_profile_start */
	uint64_t reg_seq; /* user: executions with seq > this are captured */
	uint64_t exec_id; /* automatic: its execution */
	int status;
	bool has_status;
	uint64_t end_real_ns; /* continuous: wall clock at execution end */
	uint8_t armed[XPROBE_MAX_DEVICES / 8]; /* devices this profile holds armed */
	struct xpl_cap cap;
};

struct xpl_engine_exec {
	struct xpl_engine_exec *next;
	uint64_t id, seq;
	char model[128];
	struct xpl_prof *autop; /* MODEL or on-fail profile */
	struct xpl_prof *cont; /* continuous capture */
};

struct xpl_model_count {
	char model[128];
	uint64_t count;
};

struct xpl_engine {
	struct xpl_backend be;
	uint32_t ndev;
	uint8_t enabled[XPROBE_MAX_DEVICES];
	uint64_t capture_bytes;
	uint32_t warmup;
	pthread_mutex_t qlock; /* guards dev[].q_* (completion from any thread) */
	struct xpl_devslot dev[XPROBE_MAX_DEVICES];
	struct xpl_prof *profiles; /* user MODEL profiles */
	struct xpl_engine_exec *execs; /* executions in flight */
	uint64_t exec_seq;
	struct xpl_model_count *models;
	size_t nmodels, models_cap;
	bool continuous;
	uint32_t ccap, cnext, ccount; /* ring of the newest continuous captures */
	struct xpl_prof **ring;
};

/* --- arena ------------------------------------------------------------------- */

int xpl_arena_alloc(struct xpl_arena *a, size_t meta, size_t nsegs, size_t nstreams,
		    size_t reader_size)
{
	memset(a, 0, sizeof(*a));
	a->meta_len = meta;
	a->bounce_len = 1u << 18;
	a->nsegs = nsegs ? nsegs : 1;
	a->nstreams = nstreams ? nstreams : 1;
	a->reader_size = reader_size;
	a->meta = malloc(a->meta_len);
	a->bounce = malloc(a->bounce_len);
	a->segs = calloc(a->nsegs, sizeof(*a->segs));
	a->streams = calloc(a->nstreams, sizeof(*a->streams));
	a->sptr = calloc(a->nstreams, sizeof(*a->sptr));
	a->srcs = calloc(a->nstreams, sizeof(*a->srcs));
	a->readers = reader_size ? calloc(a->nstreams, reader_size) : NULL;
	if (!a->meta || !a->bounce || !a->segs || !a->streams || !a->sptr || !a->srcs ||
	    (reader_size && !a->readers)) {
		xpl_arena_free(a);
		return -ENOMEM;
	}
	return 0;
}

void xpl_arena_free(struct xpl_arena *a)
{
	free(a->meta);
	free(a->bounce);
	free(a->segs);
	free(a->streams);
	free(a->sptr);
	free(a->srcs);
	free(a->readers);
	memset(a, 0, sizeof(*a));
}

/* --- file helpers ------------------------------------------------------------ */

void xpl_capture_meta_init(const struct xpl_file_ctx *f, uint32_t kind, Xprobe__Xtf__Capture *m,
			   Xprobe__Xtf__Clock *clock)
{
	static char producer[] = "libxprobe 0.1.0";

	xprobe__xtf__clock__init(clock);
	clock->domain = (char *)"host_monotonic";
	clock->source = (char *)(f->tsc ? "tsc" : "clock_gettime");
	clock->begin_tsc = f->begin.tsc;
	clock->begin_ns = f->begin.ns;
	clock->end_tsc = f->end.tsc;
	clock->end_ns = f->end.ns;
	xprobe__xtf__capture__init(m);
	m->kind = (Xprobe__Xtf__FileKind)kind;
	m->producer = producer;
	m->pid = f->pid;
	m->process_start_time = f->process_start_time;
	m->instance_id = (char *)f->instance_id;
	m->session_start_ns = f->session_start_ns;
	m->backend = (char *)f->backend;
	m->simulated = f->simulated;
	m->clock = clock;
}

void xpl_write_args_init(struct xpl_xtf_write_args *wa, const struct xpl_file_ctx *f, uint32_t kind,
			 Xprobe__Xtf__Capture *meta, const struct xpl_stream_src *src,
			 const struct xpl_arena *a)
{
	memset(wa, 0, sizeof(*wa));
	wa->kind = kind;
	wa->flags = f->flags | (f->simulated ? XPROBE_XTF_F_SIMULATED : 0);
	wa->meta = meta;
	wa->src = src;
	wa->scratch = a->meta;
	wa->scratch_len = a->meta_len;
	wa->bounce = a->bounce;
	wa->bounce_len = a->bounce_len;
}

void xpl_safe_name(char *dst, size_t size, const char *model)
{
	size_t i = 0;

	for (; model[i] && i + 1 < size; i++) {
		char c = model[i];

		dst[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-') ?
				 c :
				 '_';
	}
	dst[i] = '\0';
	if (!strcmp(dst, ".") || !strcmp(dst, "..") || !dst[0])
		xpl_sfmt(dst, size, "model");
}

/* --- captures ------------------------------------------------------------------ */

static struct xpl_cap *cap_new(void)
{
	struct xpl_cap *c = calloc(1, sizeof(*c));

	if (c)
		c->start_ns = xpl_mono_ns();
	return c;
}

static void cap_clear(struct xpl_cap *c)
{
	struct xpl_chunk *k = c->head;

	while (k) {
		struct xpl_chunk *n = k->next;

		free(k);
		k = n;
	}
	c->head = c->tail = NULL;
}

static void cap_free(struct xpl_cap *c)
{
	if (!c)
		return;
	cap_clear(c);
	free(c);
}

static void cap_append(struct xpl_cap *c, uint32_t dev, const uint8_t *rec, size_t size,
		       uint64_t limit)
{
	if (c->bytes + size > limit) {
		testcase(c->bytes + size == limit + 8);
		c->dropped[dev]++;
		return;
	}
	if (!c->tail || c->tail->dev != dev || c->tail->len + size > XPL_CHUNK_DATA) {
		struct xpl_chunk *k = malloc(sizeof(*k));

		if (!k) {
			c->dropped[dev]++;
			return;
		}
		k->next = NULL;
		k->dev = dev;
		k->len = 0;
		k->records = 0;
		if (c->tail)
			c->tail->next = k;
		else
			c->head = k;
		c->tail = k;
	}
	memcpy(c->tail->data + c->tail->len, rec, size);
	c->tail->len += (uint32_t)size;
	c->tail->records++;
	c->bytes += size;
	c->records++;
}

static void cap_error(struct xpl_cap *c, uint32_t dev, const char *what)
{
	if (!c->harvest_error[0])
		xpl_sfmt(c->harvest_error, sizeof(c->harvest_error), "device %u: %s", dev, what);
}

/*
 * Where a file named @name (relative to f->dir; at most one subdirectory,
 * "on_fail/x.xtf") is created: *dfd and *leaf.  Without a directory
 * descriptor (continuous profiling) f->dir is opened here into *own_dir;
 * a subdirectory is created and opened into *own_sub, never through a
 * symbolic link.  Async-signal-safe when f->dirfd is set.
 */
static int open_dest(const struct xpl_file_ctx *f, const char *name, int *dfd, int *own_dir,
		     int *own_sub, const char **leaf)
{
	const char *slash = strchr(name, '/');
	char sub[128];
	int rc;

	if (*dfd < 0) {
		rc = xpl_dir_open(f->dir, xpl_parent_len(f->dir), own_dir, NULL, 0);
		if (rc)
			return rc;
		*dfd = *own_dir;
	}
	if (!slash)
		return 0;
	if ((size_t)(slash - name) >= sizeof(sub))
		return -ENAMETOOLONG;
	memcpy(sub, name, (size_t)(slash - name));
	sub[slash - name] = '\0';
	if (mkdirat(*dfd, sub, 0700) != 0 && errno != EEXIST)
		return -errno;
	*own_sub = xpl_openat_dir(*dfd, sub, true);
	if (*own_sub < 0)
		return *own_sub;
	*dfd = *own_sub;
	*leaf = slash + 1;
	return 0;
}

/*
 * Write @c as a device profile.  @name is relative to f->dir (registered in
 * the session's file list) or, with @abs, a path of the caller's.
 */
static int cap_write(const struct xpl_engine *e, const struct xpl_file_ctx *f,
		     const struct xpl_cap *c, Xprobe__Xtf__DeviceProfile *dp, const char *name,
		     bool abs)
{
	/* the preallocated arena belongs to the signal path only: a signal may
	 * interrupt a normal-path write that would be using it */
	struct xpl_arena own = { 0 }, *a = f->signal_path ? f->arena : NULL;
	Xprobe__Xtf__Capture meta;
	Xprobe__Xtf__Clock clock;
	struct xpl_xtf_write_args wa;
	size_t nsegs = 0, nstreams = 0, si = 0;
	const char *leaf = name;
	uint64_t size = 0;
	int rc, dfd = abs ? AT_FDCWD : f->dirfd, own_dir = -1, own_sub = -1;

	for (const struct xpl_chunk *k = c->head; k; k = k->next)
		nsegs++;
	for (uint32_t d = 0; d < e->ndev; d++) {
		bool has = c->dropped[d] > 0;

		for (const struct xpl_chunk *k = c->head; k && !has; k = k->next)
			has = k->dev == d;
		nstreams += has;
	}
	if (!a || a->nsegs < nsegs || a->nstreams < nstreams) {
		if (f->signal_path)
			return -XPROBE_E_TRUNCATED;
		rc = xpl_arena_alloc(&own, 4096 + nstreams * 64, nsegs, nstreams, 0);
		if (rc)
			return rc;
		a = &own;
	}
	xpl_capture_meta_init(f, XPROBE_XTF_DEVICE_PROFILE, &meta, &clock);
	/* device records carry CLOCK_MONOTONIC from the backend: no TSC here */
	clock.source = (char *)"clock_gettime";
	clock.begin_tsc = clock.end_tsc = 0;
	meta.device = dp;
	dp->harvest_error = c->harvest_error[0] ? (char *)c->harvest_error : NULL;
	dp->start_ns = c->start_ns;
	dp->stop_ns = c->stop_ns >= c->start_ns ? c->stop_ns : c->start_ns;
	nsegs = 0;
	for (uint32_t d = 0; d < e->ndev; d++) {
		Xprobe__Xtf__Stream *s = &a->streams[si];
		size_t first = nsegs;
		uint64_t recs = 0;

		for (const struct xpl_chunk *k = c->head; k; k = k->next) {
			if (k->dev != d)
				continue;
			a->segs[nsegs].p = k->data;
			a->segs[nsegs].len = k->len;
			recs += k->records;
			nsegs++;
		}
		if (nsegs == first && !c->dropped[d])
			continue;
		xprobe__xtf__stream__init(s);
		s->records = recs;
		s->dropped = c->dropped[d];
		s->has_device = true;
		s->device = d;
		a->sptr[si] = s;
		a->srcs[si].segs = &a->segs[first];
		a->srcs[si].nsegs = nsegs - first;
		a->srcs[si].read = NULL;
		si++;
	}
	meta.n_streams = si;
	meta.streams = a->sptr;
	xpl_write_args_init(&wa, f, XPROBE_XTF_DEVICE_PROFILE, &meta, a->srcs, a);
	rc = abs ? 0 : open_dest(f, name, &dfd, &own_dir, &own_sub, &leaf);
	if (!rc)
		rc = xpl_xtf_write_at(dfd, leaf, &wa, &size);
	if (own_sub >= 0)
		close(own_sub);
	if (own_dir >= 0)
		close(own_dir);
	if (!rc && !abs && f->wrote)
		f->wrote(f->cb, name, XPROBE_XTF_DEVICE_PROFILE, size);
	if (rc && f->note) {
		char msg[256];

		xpl_sfmt(msg, sizeof(msg), "could not write %s: %s", name, xpl_errdesc(rc));
		f->note(f->cb, msg);
	}
	if (a == &own)
		xpl_arena_free(&own);
	return rc;
}

/* --- the engine ------------------------------------------------------------------- */

int xpl_engine_create(const struct xpl_engine_params *p, struct xpl_engine **out)
{
	struct xpl_engine *e;
	int rc;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->be.ops = p->ops;
	e->be.engine = e;
	e->be.complete = xpl_engine_complete;
	pthread_mutex_init(&e->qlock, NULL);
	rc = p->ops->open(&e->be, p->opts);
	if (rc) {
		pthread_mutex_destroy(&e->qlock);
		free(e);
		return rc;
	}
	e->ndev = e->be.ndev;
	for (uint32_t d = 0; d < XPROBE_MAX_DEVICES; d++) {
		e->enabled[d] = p->enabled ? p->enabled[d] : 1;
		e->dev[d].next_session_id = 1;
	}
	e->capture_bytes = p->capture_bytes ? p->capture_bytes : XPL_DEFAULT_CAPTURE_BYTES;
	e->warmup = p->warmup;
	*out = e;
	return 0;
}

static void prof_free(struct xpl_prof *p)
{
	if (p) {
		cap_clear(&p->cap);
		free(p);
	}
}

void xpl_engine_destroy(struct xpl_engine *e)
{
	if (!e)
		return;
	for (uint32_t d = 0; d < e->ndev; d++) {
		struct xpl_devslot *s = &e->dev[d];

		if (s->arm_refs) {
			e->be.ops->stop(&e->be, d);
			e->be.ops->drop(&e->be, d);
		}
		cap_free(s->session);
		while (s->stash) {
			struct xpl_stash *n = s->stash->next;

			cap_clear(&s->stash->cap);
			free(s->stash);
			s->stash = n;
		}
		while (s->q_head) {
			struct xpl_chunk *n = s->q_head->next;

			free(s->q_head);
			s->q_head = n;
		}
	}
	while (e->profiles) {
		struct xpl_prof *n = e->profiles->next;

		prof_free(e->profiles);
		e->profiles = n;
	}
	while (e->execs) {
		struct xpl_engine_exec *n = e->execs->next;

		prof_free(e->execs->autop);
		prof_free(e->execs->cont);
		free(e->execs);
		e->execs = n;
	}
	if (e->ring)
		for (uint32_t i = 0; i < e->ccap; i++)
			prof_free(e->ring[i]);
	free(e->ring);
	free(e->models);
	e->be.ops->close(&e->be);
	pthread_mutex_destroy(&e->qlock);
	free(e);
}

uint32_t xpl_engine_ndev(const struct xpl_engine *e)
{
	return e->ndev;
}

const struct xpl_backend *xpl_engine_backend(const struct xpl_engine *e)
{
	return &e->be;
}

bool xpl_engine_dev_armed(const struct xpl_engine *e, uint32_t dev)
{
	return dev < e->ndev && e->dev[dev].arm_refs > 0;
}

bool xpl_engine_session_active(const struct xpl_engine *e, uint32_t dev)
{
	return dev < e->ndev && e->dev[dev].session_active;
}

void xpl_engine_arena_needs(const struct xpl_engine *e, size_t *nsegs, size_t *nstreams)
{
	/* a capture of capture_bytes in full chunks, plus slack for partly
	 * filled chunks of several devices */
	*nsegs = (size_t)(e->capture_bytes / XPL_CHUNK_DATA) + 2 * e->ndev + 16;
	*nstreams = e->ndev;
}

void xpl_engine_complete(struct xpl_engine *e, uint32_t dev, const void *recs, size_t len)
{
	const uint8_t *p = recs;

	if (!e || dev >= e->ndev)
		return;
	pthread_mutex_lock(&e->qlock);
	while (len) {
		size_t n = len < XPL_CHUNK_DATA ? len : XPL_CHUNK_DATA;
		struct xpl_chunk *k;

		/* cut on a record boundary */
		if (n < len) {
			size_t o = 0;

			while (o + 8 <= n && o + xpl_get_u16(p + o) <= n && xpl_get_u16(p + o) >= 8)
				o += xpl_get_u16(p + o);
			n = o;
			if (!n)
				break;
		}
		k = malloc(sizeof(*k));
		if (!k)
			break;
		k->next = NULL;
		k->dev = dev;
		k->len = (uint32_t)n;
		k->records = 0;
		memcpy(k->data, p, n);
		if (e->dev[dev].q_tail)
			e->dev[dev].q_tail->next = k;
		else
			e->dev[dev].q_head = k;
		e->dev[dev].q_tail = k;
		p += n;
		len -= n;
	}
	pthread_mutex_unlock(&e->qlock);
}

static struct xpl_engine_exec *exec_find(struct xpl_engine *e, uint64_t id)
{
	for (struct xpl_engine_exec *x = e->execs; x; x = x->next)
		if (x->id == id)
			return x;
	return NULL;
}

/* Route the queued records of @dev to the captures that want them. */
static void route(struct xpl_engine *e, uint32_t dev)
{
	struct xpl_devslot *s = &e->dev[dev];
	struct xpl_chunk *k;

	pthread_mutex_lock(&e->qlock);
	k = s->q_head;
	s->q_head = s->q_tail = NULL;
	pthread_mutex_unlock(&e->qlock);
	while (k) {
		struct xpl_chunk *next = k->next;
		uint32_t o = 0;

		while (o + XPROBE_RECORD_HDR_SIZE <= k->len) {
			const struct xprobe_record *r = (const void *)(k->data + o);
			struct xpl_engine_exec *x;

			if (r->size < XPROBE_RECORD_HDR_SIZE || r->size % 8 || o + r->size > k->len)
				break; /* a backend bug; the rest of the buffer is not trusted */
			if (s->session_active)
				cap_append(s->session, dev, (const uint8_t *)r, r->size,
					   e->capture_bytes);
			x = r->a1 ? exec_find(e, r->a1) : NULL;
			if (x) {
				if (x->autop)
					cap_append(&x->autop->cap, dev, (const uint8_t *)r, r->size,
						   e->capture_bytes);
				if (x->cont)
					cap_append(&x->cont->cap, dev, (const uint8_t *)r, r->size,
						   e->capture_bytes);
				for (struct xpl_prof *p = e->profiles; p; p = p->next)
					if (x->seq > p->reg_seq && !strcmp(p->model, x->model))
						cap_append(&p->cap, dev, (const uint8_t *)r,
							   r->size, e->capture_bytes);
			}
			o += r->size;
		}
		free(k);
		k = next;
	}
}

/* Harvest @dev and route; an error marks every capture that lost data. */
static int harvest(struct xpl_engine *e, uint32_t dev)
{
	int rc = e->be.ops->harvest(&e->be, dev);

	route(e, dev);
	if (rc) {
		if (e->dev[dev].session_active)
			cap_error(e->dev[dev].session, dev, "harvest failed");
		for (struct xpl_engine_exec *x = e->execs; x; x = x->next) {
			if (x->autop && (x->autop->armed[dev / 8] >> (dev % 8) & 1))
				cap_error(&x->autop->cap, dev, "harvest failed");
			if (x->cont && (x->cont->armed[dev / 8] >> (dev % 8) & 1))
				cap_error(&x->cont->cap, dev, "harvest failed");
		}
		for (struct xpl_prof *p = e->profiles; p; p = p->next)
			if (p->armed[dev / 8] >> (dev % 8) & 1)
				cap_error(&p->cap, dev, "harvest failed");
	}
	return rc;
}

static int dev_arm(struct xpl_engine *e, uint32_t d)
{
	if (e->dev[d].arm_refs == 0) {
		int rc = e->be.ops->start(&e->be, d);

		if (rc)
			return rc;
	}
	e->dev[d].arm_refs++;
	return 0;
}

/* Release one reference; the last one stops the device.  @rollback: the
 * device also drops what it holds (begin failed). */
static void dev_release(struct xpl_engine *e, uint32_t d, bool rollback)
{
	if (NEVER(e->dev[d].arm_refs == 0))
		return;
	if (--e->dev[d].arm_refs == 0) {
		e->be.ops->stop(&e->be, d);
		if (rollback)
			e->be.ops->drop(&e->be, d);
	}
}

/* Arm every enabled device for @p; on failure release what was armed. */
static int prof_arm(struct xpl_engine *e, struct xpl_prof *p)
{
	for (uint32_t d = 0; d < e->ndev; d++) {
		int rc;

		if (!e->enabled[d])
			continue;
		rc = dev_arm(e, d);
		if (rc) {
			for (uint32_t k = d; k-- > 0;)
				if (p->armed[k / 8] >> (k % 8) & 1) {
					dev_release(e, k, true);
					p->armed[k / 8] &= (uint8_t) ~(1u << (k % 8));
				}
			return rc;
		}
		p->armed[d / 8] |= (uint8_t)(1u << (d % 8));
	}
	return 0;
}

static void prof_release(struct xpl_engine *e, struct xpl_prof *p)
{
	for (uint32_t d = 0; d < e->ndev; d++)
		if (p->armed[d / 8] >> (d % 8) & 1) {
			dev_release(e, d, false);
			p->armed[d / 8] &= (uint8_t) ~(1u << (d % 8));
		}
}

/* --- SESSION key space ------------------------------------------------------------- */

int xpl_engine_session_start(struct xpl_engine *e, uint32_t dev)
{
	struct xpl_devslot *s;
	int rc;

	if (dev >= e->ndev)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "device %u does not exist (%u devices)",
				dev, e->ndev);
	s = &e->dev[dev];
	if (s->session_active)
		return xpl_fail(-XPROBE_E_ALREADY_ACTIVE,
				"device %u already has a running session capture", dev);
	s->session = cap_new();
	if (!s->session)
		return -ENOMEM;
	rc = dev_arm(e, dev);
	if (rc) {
		cap_free(s->session);
		s->session = NULL;
		return xpl_fail(-XPROBE_E_DEVICE_FAILED, "the %s backend failed to arm device %u",
				e->be.ops->name, dev);
	}
	s->session_active = true;
	return 0;
}

int xpl_engine_session_stop(struct xpl_engine *e, uint32_t dev, uint64_t *id)
{
	struct xpl_devslot *s;
	struct xpl_stash *st;
	int hrc;

	if (dev >= e->ndev)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "device %u does not exist (%u devices)",
				dev, e->ndev);
	s = &e->dev[dev];
	if (!s->session_active)
		return xpl_fail(-XPROBE_E_NOT_ACTIVE, "no session capture is running on device %u",
				dev);
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	hrc = harvest(e, dev);
	s->session_active = false;
	s->session->stop_ns = xpl_mono_ns();
	dev_release(e, dev, false);
	st->id = s->next_session_id++;
	st->cap = *s->session; /* move: the chunks now belong to the stash */
	free(s->session);
	s->session = NULL;
	st->next = s->stash;
	s->stash = st;
	*id = st->id;
	if (hrc)
		return xpl_fail(
			-XPROBE_E_DEVICE_FAILED,
			"device %u failed to harvest; a partial profile is stashed as id %llu", dev,
			(unsigned long long)st->id);
	return 0;
}

/* The link to stash @id of device @dev, or an error (unknown device or id). */
static int stash_find(struct xpl_engine *e, uint32_t dev, uint64_t id, struct xpl_stash ***out)
{
	if (dev >= e->ndev)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "device %u does not exist (%u devices)",
				dev, e->ndev);
	for (struct xpl_stash **pp = &e->dev[dev].stash; *pp; pp = &(*pp)->next)
		if ((*pp)->id == id) {
			*out = pp;
			return 0;
		}
	return xpl_fail(-XPROBE_E_NO_SUCH_SESSION,
			"device %u has no stashed profile session id %llu", dev,
			(unsigned long long)id);
}

static void session_dp(Xprobe__Xtf__DeviceProfile *dp, uint32_t dev, uint64_t id, bool complete)
{
	xprobe__xtf__device_profile__init(dp);
	dp->key_space = (char *)"session";
	dp->has_device = true;
	dp->device = dev;
	dp->has_session_id = true;
	dp->session_id = id;
	dp->complete = complete;
}

int xpl_engine_session_serialize(struct xpl_engine *e, uint32_t dev, uint64_t id, const char *path,
				 const struct xpl_file_ctx *f)
{
	Xprobe__Xtf__DeviceProfile dp;
	struct xpl_stash **pp, *st;
	char name[96];
	int rc;

	rc = stash_find(e, dev, id, &pp);
	if (rc)
		return rc;
	st = *pp;
	session_dp(&dp, dev, id, true);
	xpl_sfmt(name, sizeof(name), "profile_dev_%u_session_%llu.xtf", dev,
		 (unsigned long long)id);
	rc = cap_write(e, f, &st->cap, &dp, path ? path : name, path != NULL);
	if (rc)
		return xpl_fail(-XPROBE_E_OUTPUT_FAILED, "could not write %s: %s",
				path ? path : name, xpl_errdesc(rc));
	*pp = st->next;
	cap_clear(&st->cap);
	free(st);
	return 0;
}

int xpl_engine_session_drop(struct xpl_engine *e, uint32_t dev, uint64_t id)
{
	struct xpl_stash **pp, *st;
	int rc = stash_find(e, dev, id, &pp);

	if (rc)
		return rc;
	st = *pp;
	*pp = st->next;
	cap_clear(&st->cap);
	free(st);
	return 0;
}

/* --- MODEL key space: user profiles ------------------------------------------------- */

static struct xpl_prof **prof_find(struct xpl_engine *e, const char *filename)
{
	for (struct xpl_prof **pp = &e->profiles; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->filename, filename))
			return pp;
	return NULL;
}

static struct xpl_prof *prof_new(const char *model, const char *key_space)
{
	struct xpl_prof *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	snprintf(p->model, sizeof(p->model), "%s", model);
	p->key_space = key_space;
	p->cap.start_ns = xpl_mono_ns();
	return p;
}

int xpl_engine_profile_start(struct xpl_engine *e, const char *model, const char *filename)
{
	struct xpl_prof *p;
	int rc;

	if (prof_find(e, filename))
		return xpl_fail(-XPROBE_E_ALREADY_ACTIVE, "a profile is already registered as '%s'",
				filename);
	p = prof_new(model, "model");
	if (!p)
		return -ENOMEM;
	snprintf(p->filename, sizeof(p->filename), "%s", filename);
	p->user = true;
	p->reg_seq = e->exec_seq;
	rc = prof_arm(e, p);
	if (rc) {
		prof_free(p);
		return xpl_fail(-XPROBE_E_DEVICE_FAILED, "the %s backend failed to arm a device",
				e->be.ops->name);
	}
	p->next = e->profiles;
	e->profiles = p;
	return 0;
}

static void model_dp(Xprobe__Xtf__DeviceProfile *dp, const struct xpl_prof *p, bool complete)
{
	xprobe__xtf__device_profile__init(dp);
	dp->key_space = (char *)p->key_space;
	dp->model = (char *)p->model;
	if (p->user)
		dp->filename = (char *)p->filename;
	if (!p->user) {
		dp->has_execution_id = true;
		dp->execution_id = p->exec_id;
	}
	dp->has_status = p->has_status;
	dp->status = p->status;
	dp->complete = complete;
}

int xpl_engine_profile_stop(struct xpl_engine *e, const char *filename,
			    const struct xpl_file_ctx *f)
{
	Xprobe__Xtf__DeviceProfile dp;
	struct xpl_prof **pp = prof_find(e, filename), *p;
	int rc;

	if (!pp)
		return xpl_fail(-XPROBE_E_NO_SUCH_SESSION, "no profile is registered as '%s'",
				filename);
	p = *pp;
	for (uint32_t d = 0; d < e->ndev; d++)
		if (p->armed[d / 8] >> (d % 8) & 1)
			harvest(e, d);
	p->cap.stop_ns = xpl_mono_ns();
	prof_release(e, p);
	*pp = p->next; /* stopped: never written twice */
	model_dp(&dp, p, true);
	rc = cap_write(e, f, &p->cap, &dp, p->filename, false);
	prof_free(p);
	if (rc)
		return xpl_fail(-XPROBE_E_OUTPUT_FAILED, "could not write %s/%s: %s", f->dir,
				filename, xpl_errdesc(rc));
	return 0;
}

/* --- executions ------------------------------------------------------------------------- */

/* How many executions of @model began, this one included (-1: no memory). */
static int64_t count_model(struct xpl_engine *e, const char *model)
{
	for (size_t i = 0; i < e->nmodels; i++)
		if (!strcmp(e->models[i].model, model))
			return (int64_t)++e->models[i].count;
	if (e->nmodels == e->models_cap) {
		size_t cap = e->models_cap ? e->models_cap * 2 : 16;
		void *p;

		if (cap > XPL_MAX_MODELS)
			return -1;
		p = realloc(e->models, cap * sizeof(*e->models));
		if (!p)
			return -1;
		e->models = p;
		e->models_cap = cap;
	}
	snprintf(e->models[e->nmodels].model, sizeof(e->models[0].model), "%s", model);
	e->models[e->nmodels].count = 1;
	e->nmodels++;
	return 1;
}

/* An automatic profile of execution @x in @key_space, armed into *out (a
 * profile that fails to arm stays in *out for the caller's rollback). */
static int exec_prof(struct xpl_engine *e, struct xpl_engine_exec *x, const char *key_space,
		     struct xpl_prof **out)
{
	*out = prof_new(x->model, key_space);
	if (!*out)
		return -ENOMEM;
	(*out)->exec_id = x->id;
	return prof_arm(e, *out);
}

int xpl_engine_exec_begin(struct xpl_engine *e, uint64_t id, const char *model, uint64_t begin_ns,
			  unsigned what, struct xpl_engine_exec **out)
{
	struct xpl_engine_exec *x;
	int64_t n = count_model(e, model);
	int rc = 0;

	(void)begin_ns;
	*out = NULL;
	if (n < 0 || (uint64_t)n <= e->warmup)
		what = 0; /* warm-up (or too many models to count): not profiled */
	if (!e->continuous)
		what &= ~XPL_EXEC_CONTINUOUS;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->id = id;
	x->seq = ++e->exec_seq;
	snprintf(x->model, sizeof(x->model), "%s", model);
	if (what & (XPL_EXEC_AUTO_MODEL | XPL_EXEC_AUTO_ON_FAIL)) {
		rc = exec_prof(e, x, what & XPL_EXEC_AUTO_ON_FAIL ? "on_fail" : "model", &x->autop);
		if (rc)
			goto fail;
	}
	if (what & XPL_EXEC_CONTINUOUS) {
		rc = exec_prof(e, x, "continuous", &x->cont);
		if (rc)
			goto fail;
	}
	x->next = e->execs;
	e->execs = x;
	*out = x;
	return 0;
fail:
	if (x->autop)
		prof_release(e, x->autop);
	prof_free(x->autop);
	prof_free(x->cont);
	free(x);
	if (rc == -ENOMEM)
		return rc;
	return xpl_fail(-XPROBE_E_DEVICE_FAILED,
			"the %s backend failed to arm a device for execution %llu of '%s'",
			e->be.ops->name, (unsigned long long)id, model);
}

static void exec_unlink(struct xpl_engine *e, struct xpl_engine_exec *x)
{
	for (struct xpl_engine_exec **pp = &e->execs; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			return;
		}
}

/* Write an automatic profile (MODEL, on-fail) as @name (NULL: not
 * wanted).  0 or -errno. */
static int finish_auto(struct xpl_engine *e, struct xpl_prof *p, const struct xpl_file_ctx *f,
		       bool complete, char name[300])
{
	Xprobe__Xtf__DeviceProfile dp;
	char safe[128];

	xpl_safe_name(safe, sizeof(safe), p->model);
	if (!strcmp(p->key_space, "on_fail")) {
		if (p->status == 0)
			return 0; /* succeeded: discarded, nothing was ever written */
		/* cap_write creates on_fail/ (never through a link) */
		xpl_sfmt(name, 300, "on_fail/%s_exec_%llu.xtf", safe,
			 (unsigned long long)p->exec_id);
	} else {
		xpl_sfmt(name, 300, "%s_exec_%llu.xtf", safe, (unsigned long long)p->exec_id);
	}
	model_dp(&dp, p, complete);
	return cap_write(e, f, &p->cap, &dp, name, false);
}

int xpl_engine_exec_end(struct xpl_engine *e, struct xpl_engine_exec *x, uint64_t id,
			const char *model, uint64_t begin_ns, uint64_t end_ns, int status,
			const struct xpl_file_ctx *f)
{
	struct xpl_exec_info info = { id, model, begin_ns, end_ns, status };
	char name[300] = "";
	int rc = 0;

	/* 1. the backend turns the execution into activity on armed devices */
	for (uint32_t d = 0; d < e->ndev; d++)
		if (e->dev[d].arm_refs)
			e->be.ops->execution(&e->be, d, &info);
	/* 2. harvest and route while the execution is still known */
	for (uint32_t d = 0; d < e->ndev; d++)
		if (e->dev[d].arm_refs)
			harvest(e, d);
	if (!x)
		return 0;
	/* 3. its own captures */
	if (x->autop) {
		x->autop->status = status;
		x->autop->has_status = true;
		x->autop->cap.stop_ns = xpl_mono_ns();
		prof_release(e, x->autop);
		rc = finish_auto(e, x->autop, f, true, name);
		prof_free(x->autop);
		x->autop = NULL;
	}
	if (x->cont) {
		struct xpl_prof *p = x->cont;

		p->status = status;
		p->has_status = true;
		p->cap.stop_ns = xpl_mono_ns();
		p->end_real_ns = xpl_now_real_ns();
		prof_release(e, p);
		prof_free(e->ring[e->cnext]); /* the oldest goes */
		e->ring[e->cnext] = p;
		e->cnext = (e->cnext + 1) % e->ccap;
		if (e->ccount < e->ccap)
			e->ccount++;
		x->cont = NULL;
	}
	exec_unlink(e, x);
	free(x);
	if (rc)
		return xpl_fail(-XPROBE_E_OUTPUT_FAILED,
				"could not write %s/%s, the profile of execution %llu of '%s': %s",
				f->dir, name, (unsigned long long)id, model, xpl_errdesc(rc));
	return 0;
}

/* --- continuous ---------------------------------------------------------------------- */

int xpl_engine_continuous_enable(struct xpl_engine *e, uint32_t capacity, const char *dir)
{
	(void)dir;
	e->ring = calloc(capacity, sizeof(*e->ring));
	if (!e->ring)
		return -ENOMEM;
	e->ccap = capacity;
	e->continuous = true;
	return 0;
}

int xpl_engine_continuous_save(struct xpl_engine *e, uint32_t count, const char *dir, int dirfd,
			       const struct xpl_file_ctx *f)
{
	struct xpl_file_ctx fc = *f;
	int written = 0, rc = 0;

	fc.dir = dir;
	fc.dirfd = dirfd;
	fc.wrote = NULL;
	if (count == 0)
		count = 1;
	if (count > e->ccount)
		count = e->ccount;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t idx = (e->cnext + e->ccap - 1 - i) % e->ccap;
		struct xpl_prof *p = e->ring[idx];
		Xprobe__Xtf__DeviceProfile dp;
		char safe[128], stamp[32], name[400];
		struct tm tm;
		time_t t;

		if (!p)
			continue;
		t = (time_t)(p->end_real_ns / 1000000000ull);
		localtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &tm);
		xpl_safe_name(safe, sizeof(safe), p->model);
		snprintf(name, sizeof(name), "model_%s_pid_%u_exec_%llu_%s.xtf", safe, f->pid,
			 (unsigned long long)p->exec_id, stamp);
		model_dp(&dp, p, true);
		rc = cap_write(e, &fc, &p->cap, &dp, name, false);
		if (rc)
			return xpl_fail(-XPROBE_E_OUTPUT_FAILED,
					"could not write %s/%s (%d of %u written): %s", dir, name,
					written, count, xpl_errdesc(rc));
		written++;
	}
	return written;
}

/* --- the fused stop ------------------------------------------------------------------- */

int xpl_engine_stop_all(struct xpl_engine *e, const struct xpl_file_ctx *f, int sig)
{
	bool sigpath = f->signal_path;
	int first = 0;

	/* 1. harvest every armed device.  Not from a signal handler: the
	 *    backend's completion path allocates; what was routed already is
	 *    written, buffers still pending in the backend are lost. */
	if (!sigpath) {
		for (uint32_t d = 0; d < e->ndev; d++)
			if (e->dev[d].arm_refs)
				harvest(e, d);
	} else if (f->note) {
		f->note(f->cb, "stopped by a signal: device buffers still pending in the backend "
			       "were not harvested");
	}
	/* 2. SESSION captures: stop and serialize (a normal stop stashes and
	 *    pops; the signal path writes the capture directly) */
	for (uint32_t d = 0; d < e->ndev; d++) {
		struct xpl_devslot *s = &e->dev[d];
		Xprobe__Xtf__DeviceProfile dp;
		char name[96];
		uint64_t id;
		int rc;

		if (!s->session_active)
			continue;
		s->session_active = false;
		s->session->stop_ns = xpl_mono_ns();
		id = s->next_session_id++;
		session_dp(&dp, d, id, !sigpath);
		xpl_sfmt(name, sizeof(name), "profile_dev_%u_session_%llu.xtf", d,
			 (unsigned long long)id);
		rc = cap_write(e, f, s->session, &dp, name, false);
		if (rc && !first)
			first = rc;
		if (!sigpath) {
			dev_release(e, d, false);
			cap_free(s->session);
			s->session = NULL;
		}
	}
	/* 3. stashes nobody serialized: written, not lost */
	for (uint32_t d = 0; d < e->ndev; d++) {
		for (struct xpl_stash *st = e->dev[d].stash; st; st = st->next) {
			Xprobe__Xtf__DeviceProfile dp;
			char name[96];
			int rc;

			session_dp(&dp, d, st->id, true);
			xpl_sfmt(name, sizeof(name), "profile_dev_%u_session_%llu.xtf", d,
				 (unsigned long long)st->id);
			rc = cap_write(e, f, &st->cap, &dp, name, false);
			if (rc && !first)
				first = rc;
		}
	}
	/* 4. user profiles never stopped: written as incomplete */
	for (struct xpl_prof *p = e->profiles; p; p = p->next) {
		Xprobe__Xtf__DeviceProfile dp;
		int rc;

		p->cap.stop_ns = xpl_mono_ns();
		model_dp(&dp, p, false);
		rc = cap_write(e, f, &p->cap, &dp, p->filename, false);
		if (rc && !first)
			first = rc;
	}
	/* 5. executions in flight: a signal means they failed; otherwise their
	 *    outcome is unknown (MODEL: written incomplete; on-fail: nothing) */
	for (struct xpl_engine_exec *x = e->execs; x; x = x->next) {
		char name[300];
		int rc = 0;

		if (!x->autop)
			continue;
		x->autop->cap.stop_ns = xpl_mono_ns();
		if (!strcmp(x->autop->key_space, "on_fail")) {
			if (!sig)
				continue;
			x->autop->status = -sig;
			x->autop->has_status = true;
		}
		rc = finish_auto(e, x->autop, f, false, name);
		if (rc && !first)
			first = rc;
	}
	/* 6. disarm everything (normal path; a dying process needs nothing) */
	if (!sigpath) {
		while (e->profiles) {
			struct xpl_prof *p = e->profiles;

			e->profiles = p->next;
			prof_release(e, p);
			prof_free(p);
		}
		for (struct xpl_engine_exec *x = e->execs; x; x = x->next) {
			if (x->autop) {
				prof_release(e, x->autop);
				prof_free(x->autop);
				x->autop = NULL;
			}
			if (x->cont) {
				prof_release(e, x->cont);
				prof_free(x->cont);
				x->cont = NULL;
			}
		}
		for (uint32_t d = 0; d < e->ndev; d++) {
			while (e->dev[d].stash) {
				struct xpl_stash *n = e->dev[d].stash->next;

				cap_clear(&e->dev[d].stash->cap);
				free(e->dev[d].stash);
				e->dev[d].stash = n;
			}
		}
	}
	return first;
}
