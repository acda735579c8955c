/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record_events.c - the record -> event mapping shared by .xtf files and
 * the Agent's socket (record_events.h says who keeps which state).
 * docs/xtf-format.md, "Events", is the user-facing form of this table.
 *
 * Mappings:
 *   NVTX push / pop      nvtx_range_start / nvtx_range_end, source
 *                        cupti_callback, clock host_monotonic, nvtx
 *                        {name, name_complete, range_kind "thread",
 *                        range_id, start_tid}, attributes.nvtx_push_level.
 *                        A pop carries the name of the push it closes
 *                        (found by thread and level).  range_id is
 *                        (tid << 32) | n for the n-th push of that thread
 *                        this mapper saw, so every (tid, level) occurrence
 *                        has its own key and the exact NVTX policy pairs
 *                        each push with its pop.
 *   NVTX start / end     the same types, range_kind "process", range_id =
 *                        the id nvtxRangeStart returned, start_tid = the
 *                        starting thread (the end may be on another).
 *   An end whose start the mapper never saw is an unmatched end: an empty
 *   name, name_complete false.
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
 *   CUDA API entry / exit   cuda_api_entry / cuda_api_exit, source
 *                        cupti_callback, clock host_monotonic, tid the
 *                        calling thread, cuda {correlation_id, callback_domain,
 *                        callback_id; runtime_correlation_id = the
 *                        correlation id on runtime calls}, attributes
 *                        {cuda_api_domain "runtime_api"|"driver_api",
 *                        cuda_api_name} (what cuda:<domain>:<name> selectors
 *                        match).
 *   CUDA kernel / memcpy / memset   two events each, gpu_<kind>_start at
 *                        ts and gpu_<kind>_end at a0, source
 *                        cupti_activity, clock m->activity_clock, tid 0,
 *                        cuda {device_id, context_id, stream_id (null when
 *                        CUPTI gave none), correlation_id,
 *                        runtime_correlation_id (memcpy), start_ns on the
 *                        start event, end_ns on the end event; kernels:
 *                        kernel_name, grid, block; memcpy: bytes,
 *                        memcpy_kind ("unknown" for a kind outside HtoD ..
 *                        PtoP); memset: bytes}; attributes: kernels
 *                        kernel_name_complete (the name fit the 127-byte
 *                        bound: the contract's closed cuda object has no
 *                        field for it), memcpy cupti_copy_kind (CUPTI's raw
 *                        kind), memset memset_value; execution_id when a
 *                        session attributed the activity to one.
 *   Samples (cpu, memory) are not boundaries: unknown_records here (the
 *   xtf decoder never passes them).
 *
 * Bound: events beyond the capture's max_events are counted in observed,
 * not kept (full); the caller turns that into EVENT_RATE_TOO_HIGH.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xprobe/agent.h"

#include "record_events.h"

/* One open thread range: what a pop needs from its push. */
struct open_range {
	uint64_t range_id;
	xp_str_t name;
	bool complete;
	bool skip; /* name not collected: no events for this range */
};

/* Per-thread push stack. */
struct xp_rec_thread {
	uint32_t tid;
	uint32_t pushes; /* pushes seen: the n of range ids */
	struct open_range *lv; /* by level */
	size_t cap;
};

/* A process range started (and, without starts_first, not yet ended). */
struct xp_rec_proc {
	uint64_t id;
	xp_str_t name;
	uint32_t tid;
	bool used;
	bool complete;
	bool skip;
};

#define MAX_LEVEL 4096

void xp_rec_map_init(struct xp_rec_map *m, struct xp_capture *c, uint32_t pid, uint64_t start_time,
		     int (*fail)(void *ctx, const char *what), void *fail_ctx)
{
	memset(m, 0, sizeof(*m));
	m->c = c;
	m->pid = pid;
	m->start_time = start_time;
	m->fail = fail;
	m->fail_ctx = fail_ctx;
	m->activity_clock = XP_CLOCK_CUPTI_NORMALIZED;
}

void xp_rec_map_free(struct xp_rec_map *m)
{
	for (size_t i = 0; i < m->nts; i++)
		free(m->ts[i].lv);
	free(m->ts);
	free(m->pr);
	m->ts = NULL;
	m->pr = NULL;
	m->nts = m->cap_ts = m->npr = m->cap_pr = 0;
}

static int oom(struct xp_rec_map *m)
{
	return m->fail(m->fail_ctx, "out of memory");
}

static struct xp_rec_thread *stack_of(struct xp_rec_map *m, uint32_t tid)
{
	for (size_t i = 0; i < m->nts; i++)
		if (m->ts[i].tid == tid)
			return &m->ts[i];
	if (m->nts == m->cap_ts) {
		size_t cap = m->cap_ts ? m->cap_ts * 2 : 16;
		void *p = realloc(m->ts, cap * sizeof(*m->ts));

		if (!p)
			return NULL;
		m->ts = p;
		m->cap_ts = cap;
	}
	memset(&m->ts[m->nts], 0, sizeof(m->ts[0]));
	m->ts[m->nts].tid = tid;
	return &m->ts[m->nts++];
}

static struct open_range *level_slot(struct xp_rec_thread *t, uint32_t level)
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

/* --- process ranges: open addressing, linear probing, backward-shift delete */

static size_t proc_hash(uint64_t id, size_t cap)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (size_t)id & (cap - 1);
}

static struct xp_rec_proc *proc_find(const struct xp_rec_map *m, uint64_t id)
{
	if (!m->cap_pr)
		return NULL;
	for (size_t i = proc_hash(id, m->cap_pr);; i = (i + 1) & (m->cap_pr - 1)) {
		if (!m->pr[i].used)
			return NULL;
		if (m->pr[i].id == id)
			return &m->pr[i];
	}
}

/* Slot for @id (existing or new), growing at 1/2 load; NULL: no memory. */
static struct xp_rec_proc *proc_slot(struct xp_rec_map *m, uint64_t id)
{
	struct xp_rec_proc *p;
	size_t i;

	if ((m->npr + 1) * 2 > m->cap_pr) {
		size_t cap = m->cap_pr ? m->cap_pr * 2 : 64;
		struct xp_rec_proc *old = m->pr, *nw = calloc(cap, sizeof(*nw));
		size_t ocap = m->cap_pr;

		if (!nw)
			return NULL;
		m->pr = nw;
		m->cap_pr = cap;
		for (i = 0; i < ocap; i++) {
			size_t j;

			if (!old[i].used)
				continue;
			for (j = proc_hash(old[i].id, cap); nw[j].used; j = (j + 1) & (cap - 1))
				;
			nw[j] = old[i];
		}
		free(old);
	}
	for (i = proc_hash(id, m->cap_pr);; i = (i + 1) & (m->cap_pr - 1)) {
		p = &m->pr[i];
		if (!p->used) {
			p->used = true;
			p->id = id;
			m->npr++;
			return p;
		}
		if (p->id == id)
			return p;
	}
}

static void proc_remove(struct xp_rec_map *m, struct xp_rec_proc *p)
{
	size_t mask = m->cap_pr - 1, i = (size_t)(p - m->pr), j = i;

	m->pr[i].used = false;
	m->npr--;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!m->pr[j].used)
			return;
		home = proc_hash(m->pr[j].id, m->cap_pr);
		/* move j back to the hole at i unless its home lies in (i, j] */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		m->pr[i] = m->pr[j];
		m->pr[j].used = false;
		i = j;
	}
}

void xp_rec_map_proc_reset(struct xp_rec_map *m)
{
	if (m->cap_pr)
		memset(m->pr, 0, m->cap_pr * sizeof(*m->pr));
	m->npr = 0;
}

static xp_str_t rec_name(struct xp_rec_map *m, const struct xprobe_record *r)
{
	if (r->flags & XPROBE_RECF_NAME_UNSUPPORTED)
		return 0;
	return xp_capture_intern_n(m->c, (const char *)r + XPROBE_RECORD_HDR_SIZE, r->name_len);
}

int xp_rec_map_proc_start(struct xp_rec_map *m, const struct xprobe_record *r)
{
	struct xp_rec_proc *p = proc_slot(m, r->a0);

	if (!p)
		return oom(m);
	p->name = rec_name(m, r);
	p->tid = r->tid;
	p->complete = r->flags & XPROBE_RECF_NAME_COMPLETE;
	p->skip = r->flags & XPROBE_RECF_NAME_UNSUPPORTED;
	return 0;
}

/* A new event, or NULL: bound reached (counted) or out of memory (*rc). */
static struct xp_event *new_event(struct xp_rec_map *m, const struct xprobe_record *r, uint64_t ts,
				  int *rc)
{
	struct xp_event *e;
	int e2 = 0;

	*rc = 0;
	m->observed++;
	if (m->full)
		return NULL;
	e = xp_capture_add(m->c, &e2);
	if (!e) {
		if (e2 == -E2BIG) {
			m->full = true;
			return NULL;
		}
		*rc = oom(m);
		return NULL;
	}
	e->pid = m->pid;
	e->tid = r->tid;
	e->timestamp_ns = ts;
	e->timestamp_raw = ts;
	e->clock_domain = XP_CLOCK_HOST_MONOTONIC;
	if (m->start_time) {
		e->process_start_time = m->start_time;
		e->flags |= XP_EVF_START_TIME;
	}
	return e;
}

static int attr_raw(struct xp_rec_map *m, struct xp_event *e, const char *key, const char *json)
{
	long idx = xp_capture_add_attr(m->c, xp_capture_intern(m->c, key),
				       xp_capture_intern(m->c, json));

	if (idx < 0)
		return (int)idx;
	if (e->attrs_count == 0)
		e->attrs_first = (uint32_t)idx;
	e->attrs_count++;
	return 0;
}

/* A string attribute from @n bytes that are not NUL-terminated. */
static int attr_raw_n(struct xp_rec_map *m, struct xp_event *e, const char *key, const char *s,
		      size_t n)
{
	char tmp[XPROBE_NAME_MAX + 1];

	if (n > XPROBE_NAME_MAX)
		n = XPROBE_NAME_MAX;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	return xp_event_add_attr_str(m->c, e, key, tmp);
}

static int attr_i64(struct xp_rec_map *m, struct xp_event *e, const char *key, int64_t v)
{
	char tmp[24];

	snprintf(tmp, sizeof(tmp), "%" PRId64, v);
	return attr_raw(m, e, key, tmp);
}

static int nvtx_event(struct xp_rec_map *m, const struct xprobe_record *r, bool start,
		      uint32_t kind, uint64_t range_id, xp_str_t name, bool complete,
		      uint32_t start_tid, int64_t level)
{
	struct xp_event *e;
	int rc;

	e = new_event(m, r, r->ts, &rc);
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
	if (level >= 0 && attr_i64(m, e, "nvtx_push_level", level))
		return oom(m);
	return 0;
}

/* A marker event with "xprobe_event" = @what; more attributes follow. */
static struct xp_event *marker(struct xp_rec_map *m, const struct xprobe_record *r, uint64_t ts,
			       const char *what, int *rc)
{
	struct xp_event *e = new_event(m, r, ts, rc);

	if (!e)
		return NULL;
	e->source = XP_SRC_MARKER;
	e->event_type = XP_EV_MARKER;
	if (xp_event_add_attr_str(m->c, e, "xprobe_event", what)) {
		*rc = oom(m);
		return NULL;
	}
	return e;
}

static int nvtx_push(struct xp_rec_map *m, const struct xprobe_record *r)
{
	struct xp_rec_thread *t = stack_of(m, r->tid);
	struct open_range *o = t ? level_slot(t, r->aux) : NULL;

	if (!t || !o)
		return m->fail(m->fail_ctx, t ? "NVTX push level above 4096" : "out of memory");
	t->pushes++;
	o->range_id = (uint64_t)r->tid << 32 | t->pushes;
	o->name = rec_name(m, r);
	o->complete = r->flags & XPROBE_RECF_NAME_COMPLETE;
	o->skip = r->flags & XPROBE_RECF_NAME_UNSUPPORTED;
	if (o->skip)
		return 0;
	return nvtx_event(m, r, true, XP_NVTX_THREAD, o->range_id, o->name, o->complete, r->tid,
			  r->aux);
}

static int nvtx_pop(struct xp_rec_map *m, const struct xprobe_record *r)
{
	struct xp_rec_thread *t = stack_of(m, r->tid);
	struct open_range *o = t ? level_slot(t, r->aux) : NULL;
	struct open_range none = { (uint64_t)r->tid << 32, xp_capture_intern(m->c, ""), false,
				   false };
	int rc;

	if (!t)
		return oom(m);
	if (!o || !o->range_id)
		o = &none; /* its push was never seen: an unmatched end */
	rc = o->skip ? 0 :
		       nvtx_event(m, r, false, XP_NVTX_THREAD, o->range_id, o->name, o->complete,
				  r->tid, r->aux);
	if (o != &none)
		memset(o, 0, sizeof(*o));
	return rc;
}

static int nvtx_start(struct xp_rec_map *m, const struct xprobe_record *r)
{
	const struct xp_rec_proc *p;
	int rc;

	if (!m->starts_first) {
		rc = xp_rec_map_proc_start(m, r);
		if (rc)
			return rc;
	}
	p = proc_find(m, r->a0);
	if (!p || p->skip)
		return 0;
	return nvtx_event(m, r, true, XP_NVTX_PROCESS, r->a0, p->name, p->complete, r->tid, -1);
}

static int nvtx_end(struct xp_rec_map *m, const struct xprobe_record *r)
{
	struct xp_rec_proc *p = proc_find(m, r->a0);
	int rc;

	if (!p) /* its start was never seen: an unmatched end */
		return nvtx_event(m, r, false, XP_NVTX_PROCESS, r->a0, xp_capture_intern(m->c, ""),
				  false, r->tid, -1);
	rc = p->skip ? 0 :
		       nvtx_event(m, r, false, XP_NVTX_PROCESS, r->a0, p->name, p->complete, p->tid,
				  -1);
	if (!m->starts_first)
		proc_remove(m, p);
	return rc;
}

const char *xp_rec_cuda_domain_name(uint64_t domain)
{
	if (domain == XPROBE_CUDA_DOMAIN_RUNTIME)
		return "runtime_api";
	if (domain == XPROBE_CUDA_DOMAIN_DRIVER)
		return "driver_api";
	return "unknown";
}

uint8_t xp_rec_memcpy_kind(uint32_t agent_kind)
{
	switch (agent_kind) {
	case XPROBE_AGENT_MEMCPY_HTOD:
		return XP_MEMCPY_HTOD;
	case XPROBE_AGENT_MEMCPY_DTOH:
		return XP_MEMCPY_DTOH;
	case XPROBE_AGENT_MEMCPY_DTOD:
		return XP_MEMCPY_DTOD;
	case XPROBE_AGENT_MEMCPY_HTOH:
		return XP_MEMCPY_HTOH;
	case XPROBE_AGENT_MEMCPY_PTOP:
		return XP_MEMCPY_PTOP;
	}
	return XP_MEMCPY_UNKNOWN;
}

static int cuda_api(struct xp_rec_map *m, const struct xprobe_record *r)
{
	uint32_t domain = (uint32_t)r->a1; /* the high half: the context (RECF_CONTEXT) */
	struct xp_event *e;
	int rc;

	e = new_event(m, r, r->ts, &rc);
	if (!e)
		return rc;
	e->source = XP_SRC_CUPTI_CALLBACK;
	e->event_type =
		r->type == XPROBE_EV_CUDA_API_ENTRY ? XP_EV_CUDA_API_ENTRY : XP_EV_CUDA_API_EXIT;
	e->flags |= XP_EVF_CUDA;
	if (r->a0) {
		e->cuda.correlation_id = (uint32_t)r->a0;
		e->cuda.flags |= XP_CUDAF_CORRELATION_ID;
		if (domain == XPROBE_CUDA_DOMAIN_RUNTIME) {
			e->cuda.runtime_correlation_id = (uint32_t)r->a0;
			e->cuda.flags |= XP_CUDAF_RUNTIME_CORRELATION_ID;
		}
	}
	if (r->flags & XPROBE_RECF_CONTEXT) {
		e->cuda.context_id = (uint32_t)(r->a1 >> 32);
		e->cuda.flags |= XP_CUDAF_CONTEXT_ID;
	}
	e->cuda.callback_domain = domain;
	e->cuda.callback_id = r->aux;
	e->cuda.flags |= XP_CUDAF_CALLBACK_DOMAIN | XP_CUDAF_CALLBACK_ID;
	if (xp_event_add_attr_str(m->c, e, "cuda_api_domain", xp_rec_cuda_domain_name(domain)) ||
	    attr_raw_n(m, e, "cuda_api_name", (const char *)r + XPROBE_RECORD_HDR_SIZE,
		       r->name_len))
		return oom(m);
	return 0;
}

/* The attributes of one CUDA activity event (added contiguously). */
static int activity_attrs(struct xp_rec_map *m, struct xp_event *e,
			  const struct xprobe_cuda_activity *a)
{
	const struct xprobe_record *r = &a->hdr;

	switch (r->type) {
	case XPROBE_EV_CUDA_KERNEL:
		if (attr_raw(m, e, "kernel_name_complete",
			     r->flags & XPROBE_RECF_NAME_COMPLETE ? "true" : "false"))
			return -ENOMEM;
		break;
	case XPROBE_EV_CUDA_MEMCPY:
		if (xp_event_add_attr_u64(m->c, e, "cupti_copy_kind", a->raw_copy_kind))
			return -ENOMEM;
		break;
	case XPROBE_EV_CUDA_MEMSET:
		if (xp_event_add_attr_u64(m->c, e, "memset_value", a->memset_value))
			return -ENOMEM;
		break;
	}
	if (r->a1 && xp_event_add_attr_u64(m->c, e, "execution_id", r->a1))
		return -ENOMEM;
	return 0;
}

static int cuda_activity(struct xp_rec_map *m, const struct xprobe_record *r)
{
	const struct xprobe_cuda_activity *a = (const struct xprobe_cuda_activity *)r;
	uint8_t types[2];
	xp_str_t name = 0;

	switch (r->type) {
	case XPROBE_EV_CUDA_KERNEL:
		types[0] = XP_EV_GPU_KERNEL_START;
		types[1] = XP_EV_GPU_KERNEL_END;
		if (r->name_len)
			name = xp_capture_intern_n(
				m->c, (const char *)r + XPROBE_CUDA_ACTIVITY_SIZE, r->name_len);
		break;
	case XPROBE_EV_CUDA_MEMCPY:
		types[0] = XP_EV_GPU_MEMCPY_START;
		types[1] = XP_EV_GPU_MEMCPY_END;
		break;
	default:
		types[0] = XP_EV_GPU_MEMSET_START;
		types[1] = XP_EV_GPU_MEMSET_END;
		break;
	}
	for (int end = 0; end < 2; end++) {
		struct xp_event *e;
		struct xp_cuda_part *p;
		int rc;

		e = new_event(m, r, end ? r->a0 : r->ts, &rc);
		if (!e) {
			if (rc)
				return rc;
			continue;
		}
		e->source = XP_SRC_CUPTI_ACTIVITY;
		e->event_type = types[end];
		e->clock_domain = m->activity_clock;
		e->flags |= XP_EVF_CUDA;
		p = &e->cuda;
		if (r->aux != XPROBE_CUDA_UNKNOWN) {
			p->device_id = r->aux;
			p->flags |= XP_CUDAF_DEVICE_ID;
		}
		if (a->context_id != XPROBE_CUDA_UNKNOWN) {
			p->context_id = a->context_id;
			p->flags |= XP_CUDAF_CONTEXT_ID;
		}
		if (a->stream_id != XPROBE_CUDA_UNKNOWN) {
			p->stream_id = a->stream_id;
			p->flags |= XP_CUDAF_STREAM_ID;
		}
		if (a->correlation_id) {
			p->correlation_id = a->correlation_id;
			p->flags |= XP_CUDAF_CORRELATION_ID;
		}
		if (a->runtime_correlation_id) {
			p->runtime_correlation_id = a->runtime_correlation_id;
			p->flags |= XP_CUDAF_RUNTIME_CORRELATION_ID;
		}
		if (end) {
			p->end_ns = r->a0;
			p->flags |= XP_CUDAF_END_NS;
		} else {
			p->start_ns = r->ts;
			p->flags |= XP_CUDAF_START_NS;
		}
		if (r->type == XPROBE_EV_CUDA_KERNEL) {
			p->kernel_name = name;
			p->grid = (struct xp_dim3){ a->grid_x, a->grid_y, a->grid_z };
			p->block = (struct xp_dim3){ a->block_x, a->block_y, a->block_z };
			if (a->grid_x | a->grid_y | a->grid_z)
				p->flags |= XP_CUDAF_GRID;
			if (a->block_x | a->block_y | a->block_z)
				p->flags |= XP_CUDAF_BLOCK;
		} else {
			p->bytes = a->bytes;
			p->flags |= XP_CUDAF_BYTES;
		}
		if (r->type == XPROBE_EV_CUDA_MEMCPY) {
			p->memcpy_kind = xp_rec_memcpy_kind(a->memcpy_kind);
			p->flags |= XP_CUDAF_MEMCPY_KIND;
		}
		if (activity_attrs(m, e, a))
			return oom(m);
	}
	return 0;
}

static bool cuda_activity_type(uint32_t type)
{
	return type == XPROBE_EV_CUDA_KERNEL || type == XPROBE_EV_CUDA_MEMCPY ||
	       type == XPROBE_EV_CUDA_MEMSET;
}

int xp_rec_map_host(struct xp_rec_map *m, const struct xprobe_record *r)
{
	char name[XPROBE_NAME_MAX + 1];
	struct xp_event *e = NULL;
	int rc = 0;

	memcpy(name, (const char *)r + XPROBE_RECORD_HDR_SIZE, r->name_len);
	name[r->name_len] = '\0';
	switch (r->type) {
	case XPROBE_EV_NVTX_PUSH:
		return nvtx_push(m, r);
	case XPROBE_EV_NVTX_POP:
		return nvtx_pop(m, r);
	case XPROBE_EV_NVTX_START:
		return nvtx_start(m, r);
	case XPROBE_EV_NVTX_END:
		return nvtx_end(m, r);
	case XPROBE_EV_NVTX_MARK:
		if (r->flags & XPROBE_RECF_NAME_UNSUPPORTED)
			return 0;
		e = marker(m, r, r->ts, "nvtx_mark", &rc);
		if (e && xp_event_add_attr_str(m->c, e, "name", name))
			return oom(m);
		return rc;
	case XPROBE_EV_EXEC_BEGIN:
	case XPROBE_EV_EXEC_END:
		e = marker(m, r, r->ts,
			   r->type == XPROBE_EV_EXEC_BEGIN ? "execution_begin" : "execution_end",
			   &rc);
		if (e &&
		    (xp_event_add_attr_str(m->c, e, "model", name) ||
		     xp_event_add_attr_u64(m->c, e, "execution_id", r->a0) ||
		     (r->type == XPROBE_EV_EXEC_END && attr_i64(m, e, "status", (int32_t)r->aux))))
			return oom(m);
		return rc;
	case XPROBE_EV_USER:
		e = marker(m, r, r->ts, "user", &rc);
		if (e && (xp_event_add_attr_u64(m->c, e, "user_type", r->aux) ||
			  xp_event_add_attr_u64(m->c, e, "a0", r->a0) ||
			  xp_event_add_attr_u64(m->c, e, "a1", r->a1)))
			return oom(m);
		return rc;
	case XPROBE_EV_SESSION_BEGIN:
	case XPROBE_EV_SESSION_END:
		e = marker(m, r, r->ts,
			   r->type == XPROBE_EV_SESSION_BEGIN ? "session_begin" : "session_end",
			   &rc);
		if (e && attr_i64(m, e, "session_id", (int64_t)r->a0))
			return oom(m);
		return rc;
	case XPROBE_EV_SIGNAL:
		e = marker(m, r, r->ts, "signal", &rc);
		if (e && xp_event_add_attr_u64(m->c, e, "signal", r->aux))
			return oom(m);
		return rc;
	case XPROBE_EV_CUDA_API_ENTRY:
	case XPROBE_EV_CUDA_API_EXIT:
		return cuda_api(m, r);
	case XPROBE_EV_CUDA_KERNEL:
	case XPROBE_EV_CUDA_MEMCPY:
	case XPROBE_EV_CUDA_MEMSET:
		return cuda_activity(m, r);
	}
	m->c->unknown_records++;
	return 0;
}

int xp_rec_map_device(struct xp_rec_map *m, const struct xprobe_record *r)
{
	char name[XPROBE_NAME_MAX + 1];

	if (cuda_activity_type(r->type))
		return cuda_activity(m, r);

	memcpy(name, (const char *)r + XPROBE_RECORD_HDR_SIZE, r->name_len);
	name[r->name_len] = '\0';
	for (int end = 0; end < 2; end++) {
		struct xp_event *e;
		int rc;

		e = marker(m, r, end ? r->a0 : r->ts,
			   end ? "device_activity_end" : "device_activity_start", &rc);
		if (!e) {
			if (rc)
				return rc;
			continue;
		}
		if (xp_event_add_attr_str(m->c, e, "activity", name) ||
		    xp_event_add_attr_u64(m->c, e, "device", r->aux) ||
		    xp_event_add_attr_u64(m->c, e, "execution_id", r->a1) ||
		    xp_event_add_attr_str(m->c, e, "backend", m->backend) ||
		    attr_raw(m, e, "simulated", m->simulated ? "true" : "false"))
			return oom(m);
	}
	return 0;
}
