/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_capture.c - the Agent's bounded capture outside the hot path:
 * allocation at ARM, publish and disarm, the prefault that keeps page
 * faults out of the recording threads, the counters a reply reports, and
 * the read of committed records into reply chunks with timestamps
 * converted to CLOCK_MONOTONIC.  agent_capture.h holds the layout, the
 * protocol with the producers and the hot path itself.
 *
 * Every function here runs on the Agent's server thread (lib/agent/
 * server.c), which owns the captures, or on the thread that writes the
 * XPROBE_AGENT_OUTPUT capture (lib/agent/capfile.c); producers only touch
 * what agent_capture.h's hot path touches.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../internal.h"
#include "agent_group_table.h"
#include "agent_hist_table.h"
#include "agent_capture.h"

struct xpl_agent_hot xpl_agent_hot;
_Atomic uint64_t xpl_nvtx_range_seq;

/* Prefault this much synchronously at ARM, then keep this window ahead of
 * the writers (server.c calls xpl_capture_prefault_step between polls),
 * one step at a time so the server answers its socket in between. */
#define PREFAULT_FIRST (256ull << 10)
#define PREFAULT_WINDOW (32ull << 20)
#define PREFAULT_STEP (1ull << 20)
/* How long a disarm waits for a thread inside a record (it only ever runs
 * a few dozen instructions there; a longer wait means it was descheduled). */
#define QUIESCE_WAIT_NS 2000000000ull

static uint32_t gen_counter; /* server thread only */
static int tsc_state; /* 0 not decided, 1 rdtsc, 2 clock_gettime */

static uint32_t next_gen(void)
{
	if (++gen_counter == 0)
		++gen_counter;
	return gen_counter;
}

static uint64_t used_bytes(const struct xpl_agent_cap *c)
{
	return (uint32_t)atomic_load_explicit(&c->resv, memory_order_relaxed);
}

/*
 * Fault [from, to) of the buffer in without writing it: MADV_POPULATE_WRITE
 * maps the pages writable (a kernel operation, harmless where a producer is
 * already writing), then one read a page, which under shadow paging is what
 * stops the first user access from trapping (sys_trace.c's prefault says
 * why).  Without MADV_POPULATE_WRITE nothing is done: writing a page to
 * fault it in could race with a producer.
 */
static void prefault(struct xpl_agent_cap *c, uint64_t from, uint64_t to)
{
#ifdef MADV_POPULATE_WRITE
	if (to <= from || !c->buf)
		return;
	if (madvise(c->buf + from, to - from, MADV_POPULATE_WRITE) != 0)
		return;
#ifndef XPL_TSAN
	for (uint64_t o = from; o < to; o += 4096)
		(void)*(volatile const uint8_t *)(c->buf + o);
#endif
#else
	(void)c;
	(void)from;
	(void)to;
#endif
}

static void rule_set(struct xpl_agent_rule *r, const struct xprobe_agent_filter *f)
{
	r->match = f->name_match;
	r->len = f->name_len;
	memcpy(r->name, f->name, f->name_len);
}

/* The filters of @req into @c: NVTX rules, kernel rules, memcpy kinds,
 * memset, whether the CUPTI backend is needed. */
static void filters_set(struct xpl_agent_cap *c, const struct xprobe_agent_req *req)
{
	for (uint32_t i = 0; i < req->nfilters && i < XPROBE_AGENT_MAX_FILTERS; i++) {
		const struct xprobe_agent_filter *f = &req->filters[i];

		switch (f->kind) {
		case XPROBE_AGENT_KIND_NVTX_RANGE:
			rule_set(&c->rules[c->nrules++], f);
			break;
		case XPROBE_AGENT_KIND_CUDA_API:
			c->api = true;
			break;
		case XPROBE_AGENT_KIND_KERNEL:
			c->kernel = true;
			rule_set(&c->krules[c->nkrules++], f);
			break;
		case XPROBE_AGENT_KIND_MEMCPY:
			c->memcpy_mask |= f->memcpy_kind == XPROBE_AGENT_MEMCPY_ANY ?
						  0x3fu :
						  1u << f->memcpy_kind;
			break;
		case XPROBE_AGENT_KIND_MEMSET:
			c->memset = true;
			break;
		}
		if (f->kind != XPROBE_AGENT_KIND_NVTX_RANGE)
			c->device = true;
	}
}

/*
 * ns per TSC tick (32.32 fixed point), measured once per process at the
 * first HISTOGRAM ARM: two calibration points (clock.h: TSC and
 * CLOCK_MONOTONIC read together, the best of a few tries) 2 ms apart.
 * Each point is good to tens of ns, so the ratio is good to about 1e-5,
 * far inside a bucket's 1/16; the TSC's rate is invariant (xpl_tsc_usable
 * decided that), so it never needs measuring again.  The ARM that measures
 * it takes 2 ms longer.
 */
static uint64_t ns_per_tick(void)
{
	static _Atomic uint64_t cached;
	struct xpl_calib a, b;
	struct timespec ts = { 0, 2000000 };
	uint64_t v = atomic_load(&cached);

	if (v)
		return v;
	xpl_calib_now(&a, true);
	nanosleep(&ts, NULL);
	xpl_calib_now(&b, true);
	if (NEVER(b.tsc <= a.tsc || b.ns <= a.ns))
		return 1ull << 32; /* cannot happen with an invariant TSC */
	v = (uint64_t)(((unsigned __int128)(b.ns - a.ns) << 32) / (b.tsc - a.tsc));
	atomic_store(&cached, v);
	return v;
}

/* A thread exits (xpl_slot_exit_hook): the histogram stack it holds in the
 * armed capture is free for another thread.  Entered as a producer, so a
 * disarm waits for it and the table outlives the give. */
static void hist_thread_exit(struct xpl_tls *t)
{
	struct xpl_agent_cap *c;
	uint32_t k = t->agent_hslot;
	bool nested;

	t->agent_hslot = 0;
	if (!k || k == UINT32_MAX)
		return;
	c = xpl_agent_enter(t, &nested);
	if (!c)
		return;
	if (!nested && c->hist && c->gen == t->agent_gen)
		xpl_hist_stack_give(c->hist, k);
	xpl_agent_leave(t, nested);
}

int xpl_capture_new(const struct xprobe_agent_req *req, struct xpl_agent_cap **out)
{
	struct xpl_agent_cap *c;
	void *p = NULL;

	*out = NULL;
	if (posix_memalign(&p, 64, sizeof(*c)) != 0)
		return -ENOMEM;
	c = memset(p, 0, sizeof(*c));
	c->capacity = req->capacity;
	c->mode = req->mode;
	filters_set(c, req);
	if (c->mode == XPROBE_AGENT_MODE_AGGREGATE) {
		/* groups, no records: the table is the capture */
		if (xpl_agg_new(req->capacity, &c->agg) != 0) {
			free(c);
			return -ENOMEM;
		}
		goto clock;
	}
	if (c->mode == XPROBE_AGENT_MODE_HISTOGRAM) {
		/* histograms, no records; offset carries the in-flight bound */
		if (xpl_hist_new(req->capacity, req->by, req->offset, &c->hist) != 0) {
			free(c);
			return -ENOMEM;
		}
		atomic_store_explicit(&xpl_slot_exit_hook, hist_thread_exit, memory_order_release);
		goto clock;
	}
	c->rec_max = c->device ? XPROBE_RECORD_MAX_SIZE : XPROBE_RECORD_NAMED_MAX_SIZE;
	c->buf_bytes = req->capacity * c->rec_max;
	c->buf = mmap(NULL, c->buf_bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (c->buf == MAP_FAILED) {
		free(c);
		return -ENOMEM;
	}
clock:
	if (!tsc_state)
		tsc_state = xpl_tsc_usable() ? 1 : 2;
	c->tsc = tsc_state == 1;
	if (c->hist && c->tsc)
		c->ns_per_tick = ns_per_tick();
	c->prefaulted = c->buf_bytes < PREFAULT_FIRST ? c->buf_bytes : PREFAULT_FIRST;
	prefault(c, 0, c->prefaulted);
	*out = c;
	return 0;
}

void xpl_capture_arm(struct xpl_agent_cap *c)
{
	xpl_trace_fences(); /* before producers may see the capture */
	c->gen = next_gen();
	c->seq_at_arm = atomic_load(&xpl_nvtx_range_seq);
	xpl_calib_now(&c->arm_cal, c->tsc);
	c->arm_ns = c->arm_cal.ns;
	c->end_cal = c->arm_cal;
	c->armed = true;
	atomic_store(&xpl_agent_hot.gen, c->gen);
	atomic_store_explicit(&xpl_agent_hot.cap, c, memory_order_release);
}

void xpl_capture_disarm(struct xpl_agent_cap *c)
{
	unsigned stuck;

	if (!c || !c->armed)
		return;
	/* the device feed's last records (a final flush) land while still
	 * armed; called once (the hook the Agent set, agent_capture.h) */
	if (c->device_stop) {
		void (*stop)(struct xpl_agent_cap *c) = c->device_stop;

		c->device_stop = NULL;
		stop(c);
	}
	atomic_store(&xpl_agent_hot.cap, NULL);
	atomic_store(&xpl_agent_hot.gen, next_gen());
	stuck = xpl_slots_quiesce(QUIESCE_WAIT_NS);
	if (stuck) {
		/* a thread may still write into it: never unmapped (a leak
		 * beats a write into freed memory) */
		c->leak = true;
		pr_warn("agent: %u thread(s) still inside a record %llu ms after the capture "
			"was disarmed; its buffer is kept",
			stuck, QUIESCE_WAIT_NS / 1000000ull);
	}
	xpl_calib_now(&c->end_cal, c->tsc);
	c->armed = false;
	c->stopped = true;
}

void xpl_capture_free(struct xpl_agent_cap *c)
{
	if (!c)
		return;
	xpl_capture_disarm(c);
	if (c->leak)
		return;
	if (c->buf)
		munmap(c->buf, c->buf_bytes);
	xpl_agg_free(c->agg);
	xpl_hist_free(c->hist);
	free(c);
}

static uint64_t window_end(const struct xpl_agent_cap *c)
{
	uint64_t end = used_bytes(c) + PREFAULT_WINDOW;

	return end < c->buf_bytes ? end : c->buf_bytes;
}

int xpl_capture_prefault_pending(const struct xpl_agent_cap *c)
{
	if (!c || !c->armed || c->prefaulted >= c->buf_bytes)
		return 0;
	return c->prefaulted < window_end(c) ? 1 : 2;
}

bool xpl_capture_prefault_step(struct xpl_agent_cap *c)
{
	uint64_t end = window_end(c), used = used_bytes(c) & ~4095ull, to;

	if (c->prefaulted < used) /* the writers got ahead: skip what they touched */
		c->prefaulted = used;
	if (c->prefaulted >= end)
		return false;
	to = c->prefaulted + PREFAULT_STEP < end ? c->prefaulted + PREFAULT_STEP : end;
	prefault(c, c->prefaulted, to);
	c->prefaulted = to;
	return to < end;
}

void xpl_capture_stats(const struct xpl_agent_cap *c, struct xpl_capture_stats *st)
{
	uint64_t reserved;
	bool full;

	memset(st, 0, sizeof(*st));
	if (!c)
		return; /* IDLE */
	st->capacity = c->capacity;
	st->dropped = atomic_load(&c->dropped);
	if (c->hist) {
		/* never full: a pair without a group is still in the total */
		full = false;
		st->capacity = c->capacity + 1; /* histograms: the total and the groups */
		st->retained = xpl_hist_count_all(c->hist);
		st->observed = xpl_hist_pairs(c->hist);
	} else if (c->agg) {
		full = xpl_agg_full(c->agg);
		st->retained = xpl_agg_groups(c->agg);
		st->observed = xpl_agg_grouped(c->agg) + st->dropped;
	} else {
		reserved = atomic_load(&c->resv) >> 32;
		full = atomic_load(&c->full);
		st->retained = reserved < c->capacity ? reserved : c->capacity;
		st->observed = st->retained + st->dropped;
	}
	st->unknown = atomic_load(&c->unknown);
	if (c->stopped)
		st->state = XPROBE_AGENT_STOPPED;
	else
		st->state = full ? XPROBE_AGENT_LIMIT_REACHED : XPROBE_AGENT_ACTIVE;
	if (full)
		st->stop_reason = XPROBE_AGENT_STOP_RECORD_LIMIT;
	else if (c->stopped)
		st->stop_reason = XPROBE_AGENT_STOP_REQUESTED;
}

/* The size of the committed record at @pos, 0 when it is not committed. */
static uint32_t committed_size(const struct xpl_agent_cap *c, uint64_t pos)
{
	uint64_t w0;
	uint32_t size;

	if (pos + XPROBE_RECORD_HDR_SIZE > c->buf_bytes)
		return 0;
	w0 = __atomic_load_n((const uint64_t *)(c->buf + pos), __ATOMIC_ACQUIRE);
	size = (uint32_t)(w0 & 0xffff);
	/* written by us: a bad size means corrupted memory; stop there */
	if (NEVER(size && (size < XPROBE_RECORD_HDR_SIZE || size > c->rec_max || size % 8 ||
			   pos + size > c->buf_bytes)))
		return 0;
	return size;
}

/* Groups per record packet of an AGGREGATE capture. */
static uint64_t agg_per_chunk(const struct xpl_capture_read *rd)
{
	return rd->chunk_max / sizeof(struct xprobe_agent_group);
}

/* An AGGREGATE capture's read: groups [offset, groups in use now). */
static int agg_read_begin(struct xpl_agent_cap *c, uint64_t offset, struct xpl_capture_read *rd)
{
	uint64_t ng = xpl_agg_groups(c->agg), per = agg_per_chunk(rd);

	if (offset > ng || NEVER(!per))
		return -XPROBE_E_INVALID_ARGUMENT;
	rd->idx = offset;
	rd->end_idx = ng;
	rd->nrecords = ng - offset;
	rd->bytes = rd->nrecords * sizeof(struct xprobe_agent_group);
	rd->nchunks = (uint32_t)((rd->nrecords + per - 1) / per);
	return 0;
}

static size_t agg_read_chunk(struct xpl_capture_read *rd, uint8_t *out, size_t cap)
{
	uint64_t per = cap / sizeof(struct xprobe_agent_group), n;

	if (per > agg_per_chunk(rd))
		per = agg_per_chunk(rd);
	if (per > rd->end_idx - rd->idx)
		per = rd->end_idx - rd->idx;
	xpl_agg_lock(rd->c->agg);
	n = xpl_agg_copy(rd->c->agg, rd->idx, per, (struct xprobe_agent_group *)(void *)out);
	xpl_agg_unlock(rd->c->agg);
	rd->idx += n;
	return n * sizeof(struct xprobe_agent_group);
}

/* Histograms per record packet of a HISTOGRAM capture. */
static uint64_t hist_per_chunk(const struct xpl_capture_read *rd)
{
	return rd->chunk_max / sizeof(struct xprobe_agent_hist);
}

/* A HISTOGRAM capture's read: histograms [offset, 1 + groups now). */
static int hist_read_begin(struct xpl_agent_cap *c, uint64_t offset, struct xpl_capture_read *rd)
{
	uint64_t all = xpl_hist_count_all(c->hist), per = hist_per_chunk(rd);

	if (offset > all || NEVER(!per))
		return -XPROBE_E_INVALID_ARGUMENT;
	rd->idx = offset;
	rd->end_idx = all;
	rd->nrecords = all - offset;
	rd->bytes = rd->nrecords * sizeof(struct xprobe_agent_hist);
	rd->nchunks = (uint32_t)((rd->nrecords + per - 1) / per);
	return 0;
}

static size_t hist_read_chunk(struct xpl_capture_read *rd, uint8_t *out, size_t cap)
{
	uint64_t per = cap / sizeof(struct xprobe_agent_hist), n;

	if (per > hist_per_chunk(rd))
		per = hist_per_chunk(rd);
	if (per > rd->end_idx - rd->idx)
		per = rd->end_idx - rd->idx;
	n = xpl_hist_copy(rd->c->hist, rd->idx, per, (struct xprobe_agent_hist *)(void *)out);
	rd->idx += n;
	return n * sizeof(struct xprobe_agent_hist);
}

/* Host records carry raw TSC while in the buffer; CUDA activity records
 * carry CLOCK_MONOTONIC ns from the backend already. */
static bool raw_ts(uint16_t type)
{
	return type != XPROBE_EV_CUDA_KERNEL && type != XPROBE_EV_CUDA_MEMCPY &&
	       type != XPROBE_EV_CUDA_MEMSET;
}

int xpl_capture_read_begin(struct xpl_agent_cap *c, uint64_t offset, size_t chunk_max,
			   struct xpl_capture_read *rd)
{
	uint64_t reserved = atomic_load(&c->resv) >> 32, idx, pos;
	size_t in_chunk = 0;
	struct xpl_calib now;
	uint32_t size;

	if (reserved > c->capacity)
		reserved = c->capacity;
	memset(rd, 0, sizeof(*rd));
	rd->c = c;
	rd->chunk_max = chunk_max;
	if (c->agg)
		return agg_read_begin(c, offset, rd);
	if (c->hist)
		return hist_read_begin(c, offset, rd);
	if (offset >= c->cur_idx) {
		idx = c->cur_idx;
		pos = c->cur_pos;
	} else {
		idx = 0;
		pos = 0;
	}
	while (idx < offset) {
		if (idx >= reserved || !(size = committed_size(c, pos)))
			return -XPROBE_E_INVALID_ARGUMENT;
		pos += size;
		idx++;
	}
	rd->idx = idx;
	rd->pos = pos;
	while (idx < reserved && (size = committed_size(c, pos))) {
		if (!in_chunk || in_chunk + size > chunk_max) {
			rd->nchunks++;
			in_chunk = 0;
		}
		in_chunk += size;
		rd->bytes += size;
		rd->nrecords++;
		pos += size;
		idx++;
	}
	rd->end_idx = idx;
	rd->end_pos = pos;
	c->cur_idx = idx;
	c->cur_pos = pos;
	if (c->armed)
		xpl_calib_now(&now, c->tsc);
	else
		now = c->end_cal;
	xpl_conv_init(&rd->conv, &c->arm_cal, &now, c->tsc);
	return 0;
}

size_t xpl_capture_read_chunk(struct xpl_capture_read *rd, uint8_t *out, size_t cap)
{
	size_t filled = 0;

	if (cap > rd->chunk_max)
		cap = rd->chunk_max;
	if (rd->c->agg)
		return agg_read_chunk(rd, out, cap);
	if (rd->c->hist)
		return hist_read_chunk(rd, out, cap);
	while (rd->idx < rd->end_idx) {
		const uint8_t *p = rd->c->buf + rd->pos;
		uint32_t size = committed_size(rd->c, rd->pos);
		struct xprobe_record *o;

		if (NEVER(!size)) { /* was committed when the read began */
			rd->idx = rd->end_idx;
			break;
		}
		if (filled + size > cap)
			break;
		o = (struct xprobe_record *)(out + filled);
		memcpy(o, p, size);
		if (raw_ts(o->type))
			o->ts = xpl_conv_ns(&rd->conv, o->ts);
		filled += size;
		rd->pos += size;
		rd->idx++;
	}
	return filled;
}
