/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_capture.h - the Agent's bounded capture: what ARM allocates, what
 * the NVTX callbacks (lib/nvtx/inject.c) record into while it is armed,
 * and what SNAPSHOT and STOP read back (agent_capture.c).  The hot path is
 * inline here so the callbacks compile it in; everything else is
 * agent_capture.c.
 *
 * Layering.  A producer-side table beside the host rings: the Agent
 * (lib/agent/), the CUPTI backend (lib/device/) and NVTX (lib/nvtx/) sit
 * above it and include it; it includes only producers/, xtf/ and core.
 * The one call it makes back up, the device feed's last flush at disarm,
 * goes through the capture's device_stop hook, which the Agent sets.
 *
 * Ownership.
 *   xpl_agent_hot    global: the armed capture (NULL = none) and its
 *                    generation.  Written by the server thread only (ARM,
 *                    disarm); read by every producer.
 *   struct xpl_agent_cap
 *                    one capture: filters and bounds fixed at ARM (read by
 *                    producers while it is published), the reservation
 *                    word and counters (producers, atomics), the rest the
 *                    server's.  Freed by the server after it was
 *                    unpublished and every producer left it.
 *   xpl_tls.agent_*  per thread: which push levels were recorded in which
 *                    capture generation, so a pop is admitted only when its
 *                    push was.
 *
 * Producers and the server use the host rings' busy protocol
 * (producers/sys_trace.h): a producer sets its slot's busy flag, then
 * (after the light fence) loads the capture pointer, and touches the
 * capture only while busy; the server unpublishes the pointer, runs
 * xpl_slots_quiesce (membarrier, wait for every busy flag) and only then
 * reads the last records or frees the buffer.  A signal handler that
 * records while its thread is already inside a record finds busy set: it
 * may still read the capture (the interrupted record holds busy, so the
 * server cannot free it) but only counts a drop.
 *
 * Device records.  With a CUDA filter (`device`) the CUPTI backend
 * (lib/device/cupti.c) feeds the capture too: API records from its
 * callback on the calling thread (xpl_agent_put_api, the same protocol as
 * NVTX), activity records from CUPTI's buffer-completion callback on
 * whatever thread completes the buffer (xpl_agent_put_act, which enters
 * and leaves like any producer).  Activity records carry CLOCK_MONOTONIC
 * ns already: the read path converts only host records' raw TSC.  An
 * AGGREGATE capture holds no records: its activities go to the group table
 * (agent_group_table.h), under its own lock, and replies read groups.  A
 * HISTOGRAM capture holds none either: producers pair starts and ends
 * themselves and count each latency into agent_hist_table.h's histograms
 * (entered and left like any record, so a disarm waits for them), and
 * replies read histograms.
 *
 * The buffer.  capacity x rec_max bytes of anonymous memory (rec_max:
 * XPROBE_RECORD_NAMED_MAX_SIZE without a CUDA filter, XPROBE_RECORD_MAX_SIZE
 * with one), so any capacity records fit.  A record is reserved with one
 * fetch_add on `resv` = index << 32 | byte position, which hands out the
 * record's index since ARM and its place together; records are packed
 * (size = 40 + the name rounded to 8).  The producer writes the record and
 * publishes its first 8 bytes (size, type, tid) last, with a release store:
 * a zero size means "reserved, not written yet", so readers take the
 * committed records as the prefix of non-zero sizes.  Index >= capacity:
 * the capture is full (LIMIT_REACHED), the record is dropped and counted,
 * and later records are counted as dropped without touching `resv`.
 *
 * Filters run before anything is reserved or a timestamp read: a push or
 * range start is admitted when its ASCII name passes one of the ARM's NVTX
 * name rules (xpl_agent_name_ok below); a pop when the push at its
 * level was recorded in this capture (xpl_tls.agent_mask stamped with the
 * generation); a range end when its id says its start was recorded in
 * this capture: ids are seq << 1 | recorded, and a start is recorded only
 * when seq is past the capture's seq_at_arm, so the end of a range begun
 * before ARM, or in an earlier capture, is never admitted, with no table.
 */
#ifndef XPL_AGENT_CAPTURE_H
#define XPL_AGENT_CAPTURE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../internal.h"
#include "clock.h"
#include "sys_trace.h"
#include "xprobe/agent.h"

/* Push levels tracked for admission (a deeper admitted push is dropped and
 * counted). */
#define XPL_AGENT_LEVELS 64

/* An NVTX name rule, decided at ARM. */
struct xpl_agent_rule {
	uint32_t match; /* enum xprobe_agent_name_match */
	uint32_t len; /* 0 with ANY, else 1..XPROBE_NAME_MAX */
	char name[XPROBE_NAME_MAX + 1];
};

struct xpl_agent_agg;
struct xpl_agent_hist;

struct xpl_agent_cap {
	/* fixed at ARM, read by producers */
	uint32_t gen; /* capture generation, never 0 */
	uint32_t nrules; /* NVTX name rules (0: no NVTX filter) */
	bool tsc; /* timestamps are raw TSC (converted on the way out) */
	uint64_t capacity; /* records (AGGREGATE: groups) */
	uint8_t *buf; /* capacity x rec_max bytes (NULL in AGGREGATE mode) */
	uint64_t buf_bytes;
	uint32_t rec_max; /* largest record this capture may hold */
	uint64_t seq_at_arm; /* process range sequence when armed */
	struct xpl_agent_rule rules[XPROBE_AGENT_MAX_FILTERS];
	/* CUDA filters (the CUPTI backend's), fixed at ARM */
	uint32_t mode; /* enum xprobe_agent_mode */
	bool device; /* some filter names a CUDA kind */
	bool api; /* a CUDA_API filter (its callback ids live in the backend) */
	bool kernel, memset; /* a KERNEL / MEMSET filter */
	uint32_t memcpy_mask; /* bit k: memcpy kind k admitted (ANY: every bit) */
	uint32_t nkrules; /* KERNEL name rules */
	struct xpl_agent_rule krules[XPROBE_AGENT_MAX_FILTERS];
	struct xpl_agent_agg *agg; /* AGGREGATE: the group table */
	struct xpl_agent_hist *hist; /* HISTOGRAM: the histograms (agent_hist_table.h) */
	uint64_t ns_per_tick; /* HISTOGRAM with tsc: ns per TSC tick, 32.32 fixed point
				 (NVTX pairs are timed with rdtsc, xpl_agent_hist_now) */

	/* producers */
	_Atomic uint64_t resv __attribute__((aligned(64))); /* index << 32 | bytes */
	_Atomic uint32_t full; /* an index reached capacity */
	_Atomic uint64_t dropped __attribute__((aligned(64))); /* admitted, not recorded */
	_Atomic uint64_t unknown; /* malformed NVTX attribute structs, CUPTI activity
				     kinds not read, while armed */
	_Atomic uint32_t clock_bad; /* an activity record failed the clock check */
	_Atomic uint64_t early; /* activity records excluded: began before ARM */

	/* the server's */
	struct xpl_calib arm_cal __attribute__((aligned(64))); /* at ARM */
	struct xpl_calib end_cal; /* at disarm */
	uint64_t arm_ns; /* CLOCK_MONOTONIC at ARM */
	bool armed; /* published (ACTIVE or LIMIT_REACHED) */
	bool stopped; /* STOP, CLOSE or a closed connection ended it */
	bool leak; /* a producer never left it: the buffer is never unmapped */
	uint64_t prefaulted; /* bytes of buf prefaulted so far */
	uint64_t cur_idx, cur_pos; /* a committed record's index and position
				      (where the last read ended) */
	/*
	 * The device feed's stop, set by whoever attached one (the Agent,
	 * to the CUPTI backend's xpl_cupti_agent_stop) before the capture is
	 * armed: xpl_capture_disarm calls it once, while the capture is still
	 * published, so the backend's last records land; then clears it.
	 * NULL: no device feed, nothing called.  Server thread only.
	 */
	void (*device_stop)(struct xpl_agent_cap *c);
};

struct xpl_agent_hot {
	struct xpl_agent_cap *_Atomic cap; /* the armed capture, NULL = none */
	_Atomic uint32_t gen; /* cap->gen while armed, another value otherwise */
} __attribute__((aligned(64)));

extern struct xpl_agent_hot xpl_agent_hot;
/* Process range sequence (lib/nvtx/inject.c hands out ids seq << 1 | bit). */
extern _Atomic uint64_t xpl_nvtx_range_seq;

/* --- agent_capture.c ------------------------------------------------------ */

/*
 * Allocate a capture for @req (a decoded ARM of NVTX filters) and
 * prefault its first bytes.  Not yet published.  0 or -ENOMEM.
 */
int xpl_capture_new(const struct xprobe_agent_req *req, struct xpl_agent_cap **out);
/* Publish @c: producers start admitting into it. */
void xpl_capture_arm(struct xpl_agent_cap *c);
/* Unpublish @c and wait until no producer is inside it; its last
 * calibration point is taken.  Idempotent. */
void xpl_capture_disarm(struct xpl_agent_cap *c);
/* Free a disarmed capture (NULL accepted). */
void xpl_capture_free(struct xpl_agent_cap *c);
/* Prefault the next stretch of @c's buffer ahead of its writers; true when
 * more remains to do (the server calls it between polls while armed). */
bool xpl_capture_prefault_step(struct xpl_agent_cap *c);
/* Prefaulting still to do: 0 done, 1 soon (within its window), 2 later. */
int xpl_capture_prefault_pending(const struct xpl_agent_cap *c);

/* Counters as a reply reports them (agent.h). */
struct xpl_capture_stats {
	uint32_t state; /* enum xprobe_agent_state */
	uint32_t stop_reason;
	uint64_t capacity, observed, retained, dropped, unknown;
};
void xpl_capture_stats(const struct xpl_agent_cap *c, struct xpl_capture_stats *st);

/*
 * A read of committed records [offset, end): xpl_capture_read_begin finds
 * @offset (index since ARM) and fixes the end at the records committed now;
 * -XPROBE_E_INVALID_ARGUMENT when @offset is past them.  Then
 * xpl_capture_read_chunk fills @out (@cap >= XPROBE_RECORD_MAX_SIZE) with
 * whole records, timestamps CLOCK_MONOTONIC ns, and returns the bytes (0 at
 * the end).  nrecords, bytes and nchunks say in advance what the chunks of
 * at most @chunk_max bytes will be.
 */
struct xpl_capture_read {
	struct xpl_agent_cap *c;
	uint64_t idx, pos, end_idx, end_pos;
	uint64_t nrecords, bytes;
	uint32_t nchunks;
	size_t chunk_max;
	struct xpl_conv conv;
};
int xpl_capture_read_begin(struct xpl_agent_cap *c, uint64_t offset, size_t chunk_max,
			   struct xpl_capture_read *rd);
size_t xpl_capture_read_chunk(struct xpl_capture_read *rd, uint8_t *out, size_t cap);

/* --- the hot path ------------------------------------------------------------ */

static inline __attribute__((always_inline)) bool xpl_agent_armed(void)
{
	return atomic_load_explicit(&xpl_agent_hot.cap, memory_order_relaxed) != NULL;
}

/*
 * Enter the armed capture: busy held and the capture returned, or NULL
 * (not armed, or no slot for this thread).  *nested is set when the thread
 * was already inside a record (a signal handler): the capture may be read
 * but nothing recorded, and busy is not taken (xpl_agent_leave skips it).
 */
static inline __attribute__((always_inline)) struct xpl_agent_cap *
xpl_agent_enter(struct xpl_tls *t, bool *nested)
{
	struct xpl_slot *s = t->slot;
	struct xpl_agent_cap *c;

	*nested = false;
	if (unlikely(!s)) {
		s = xpl_slot_attach(t);
		if (!s)
			return NULL;
	}
	if (unlikely(atomic_load_explicit(&s->busy, memory_order_relaxed))) {
		*nested = true;
		return atomic_load_explicit(&xpl_agent_hot.cap, memory_order_acquire);
	}
	atomic_store_explicit(&s->busy, 1, memory_order_relaxed);
	xpl_light_fence();
	c = atomic_load_explicit(&xpl_agent_hot.cap, memory_order_acquire);
	if (unlikely(!c))
		atomic_store_explicit(&s->busy, 0, memory_order_release);
	return c;
}

static inline __attribute__((always_inline)) void xpl_agent_leave(struct xpl_tls *t, bool nested)
{
	if (!nested)
		atomic_store_explicit(&t->slot->busy, 0, memory_order_release);
}

static inline void xpl_agent_drop(struct xpl_agent_cap *c)
{
	atomic_fetch_add_explicit(&c->dropped, 1, memory_order_relaxed);
}

/* Reserve @size bytes for one record: the record, or NULL when the capture
 * is full (the drop counted). */
static inline __attribute__((always_inline)) struct xprobe_record *
xpl_agent_reserve(struct xpl_agent_cap *c, uint32_t size)
{
	uint64_t old;

	if (unlikely(atomic_load_explicit(&c->full, memory_order_relaxed)))
		goto drop;
	old = atomic_fetch_add_explicit(&c->resv, (1ull << 32) | size, memory_order_relaxed);
	if (unlikely((old >> 32) >= c->capacity)) {
		atomic_store_explicit(&c->full, 1, memory_order_relaxed);
		goto drop;
	}
	return (struct xprobe_record *)(c->buf + (uint32_t)old);
drop:
	xpl_agent_drop(c);
	return NULL;
}

/*
 * A CUDA API record (XPROBE_EV_CUDA_API_ENTRY/EXIT) of the calling thread:
 * @name/@n the stripped callback name, @cbid, @corr, @domain.  The raw
 * timestamp it got goes to *@ts.  True when recorded.
 */
static inline __attribute__((always_inline)) bool
xpl_agent_put_api(struct xpl_tls *t, struct xpl_agent_cap *c, uint32_t type, const char *name,
		  uint32_t n, uint32_t cbid, uint64_t corr, uint64_t domain, uint32_t context,
		  uint64_t *ts)
{
	uint64_t flags = XPROBE_RECF_NAME_COMPLETE | (context ? XPROBE_RECF_CONTEXT : 0);
	uint32_t size = (uint32_t)XPL_ALIGN8(XPROBE_RECORD_HDR_SIZE + n);
	struct xprobe_record *r = xpl_agent_reserve(c, size);

	if (!r)
		return false;
	r->ts = *ts = likely(c->tsc) ? xpl_rdtsc() : xpl_mono_ns();
	xpl_st64(&r->aux, (uint64_t)cbid | flags << 32 | (uint64_t)n << 48);
	r->a0 = corr;
	r->a1 = domain | (uint64_t)context << 32;
	xpl_copy_name((uint8_t *)r + XPROBE_RECORD_HDR_SIZE, name, n);
	__atomic_store_n((uint64_t *)r, xpl_rec_word0(t, type, size), __ATOMIC_RELEASE);
	return true;
}

/*
 * A CUDA activity record: @a's fixed part (header fields set but size,
 * type and tid, which are written here last) and @n bytes of @name after
 * it.  Called with the capture entered.  True when recorded.
 */
static inline bool xpl_agent_put_act(struct xpl_agent_cap *c, uint32_t type,
				     const struct xprobe_cuda_activity *a, const char *name,
				     uint32_t n)
{
	uint32_t size = (uint32_t)XPL_ALIGN8(XPROBE_CUDA_ACTIVITY_SIZE + n);
	struct xprobe_record *r = xpl_agent_reserve(c, size);

	if (!r)
		return false;
	memcpy((uint8_t *)r + 8, (const uint8_t *)a + 8, XPROBE_CUDA_ACTIVITY_SIZE - 8);
	xpl_copy_name((uint8_t *)r + XPROBE_CUDA_ACTIVITY_SIZE, name, n);
	__atomic_store_n((uint64_t *)r, (uint64_t)type << 16 | size, __ATOMIC_RELEASE);
	return true;
}

/*
 * Reserve and write one record: @n name bytes (0 for plain records; a
 * named record without a name is never admitted), @flags its name flags.
 * True when recorded; false when the capture is full (the drop counted).
 */
static inline __attribute__((always_inline)) bool
xpl_agent_put(struct xpl_tls *t, struct xpl_agent_cap *c, uint32_t type, const char *name,
	      uint32_t n, uint32_t flags, uint32_t aux, uint64_t a0)
{
	uint32_t size = (uint32_t)XPL_ALIGN8(XPROBE_RECORD_HDR_SIZE + n);
	struct xprobe_record *r = xpl_agent_reserve(c, size);

	if (!r)
		return false;
	/* the buffer is zero where it was never written: padding stays 0 */
	r->ts = likely(c->tsc) ? xpl_rdtsc() : xpl_mono_ns();
	xpl_st64(&r->aux, (uint64_t)aux | (uint64_t)flags << 32 | (uint64_t)n << 48);
	r->a0 = a0;
	xpl_copy_name((uint8_t *)r + XPROBE_RECORD_HDR_SIZE, name, n);
	/* size, type, tid last: the record is committed */
	__atomic_store_n((uint64_t *)r, xpl_rec_word0(t, type, size), __ATOMIC_RELEASE);
	return true;
}

/*
 * A HISTOGRAM capture's clock for NVTX pairs: the raw TSC where the capture
 * uses it (7 ns, where clock_gettime costs 23: clock.h), else
 * CLOCK_MONOTONIC ns; xpl_agent_hist_ns turns a difference of two into ns.
 */
static inline __attribute__((always_inline)) uint64_t
xpl_agent_hist_now(const struct xpl_agent_cap *c)
{
	return likely(c->tsc) ? xpl_rdtsc() : xpl_mono_ns();
}

/* @now - @start, 0 when the end's CPU read a TSC a few ticks behind the
 * start's (a process range ended on another CPU) */
static inline __attribute__((always_inline)) uint64_t xpl_agent_hist_since(uint64_t start,
									   uint64_t now)
{
	return now > start ? now - start : 0;
}

static inline __attribute__((always_inline)) uint64_t
xpl_agent_hist_ns(const struct xpl_agent_cap *c, uint64_t d)
{
	return likely(c->tsc) ? (uint64_t)(((unsigned __int128)d * c->ns_per_tick) >> 32) : d;
}

/* The name's length (XPROBE_NAME_MAX + 1 when longer) and the bytes a
 * record keeps of it. */
static inline __attribute__((always_inline)) uint32_t
xpl_agent_name_len(const char *name, uint32_t *kept, bool *complete)
{
	uint32_t n = 0;

	while (n <= XPROBE_NAME_MAX && name[n])
		n++;
	*complete = n <= XPROBE_NAME_MAX;
	*kept = likely(*complete) ? n : (uint32_t)xpl_name_cut(name, complete);
	return n;
}

static inline __attribute__((always_inline)) bool xpl_agent_eq(const char *a, const char *b,
							       uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/*
 * Does @name pass one of @c's rules?  exact: the whole name (so never a
 * cut one); prefix: the bytes a record keeps start with the rule; suffix:
 * a whole name (<= XPROBE_NAME_MAX bytes) ends with it; contains: the kept
 * bytes hold it.  So whatever is admitted can be checked again against the
 * record's own name.  Exact and prefix rules compare the rule's bytes
 * first (a rule holds no NUL, so a shorter name differs at its end and
 * nothing past it is read) and measure the name only when they must; the
 * usual rejection is one byte compare.  Nothing past the first
 * XPROBE_NAME_MAX + 1 bytes of @name is read.
 */
static inline __attribute__((always_inline)) bool
xpl_agent_rules_ok(const struct xpl_agent_rule *rules, uint32_t nrules, const char *name)
{
	uint32_t n = UINT32_MAX, kept = 0;
	bool complete;

	for (uint32_t i = 0; i < nrules; i++) {
		const struct xpl_agent_rule *r = &rules[i];

		if (r->match == XPROBE_AGENT_NAME_EXACT) {
			if (name[0] == r->name[0] && xpl_agent_eq(name, r->name, r->len) &&
			    !name[r->len])
				return true;
			continue;
		}
		if (r->match == XPROBE_AGENT_NAME_ANY)
			return true;
		if (r->match == XPROBE_AGENT_NAME_PREFIX) {
			if (name[0] != r->name[0] || !xpl_agent_eq(name, r->name, r->len))
				continue;
			/* a cut keeps at least XPROBE_NAME_MAX - 3 bytes */
			if (r->len <= XPROBE_NAME_MAX - 3)
				return true;
		}
		if (n == UINT32_MAX)
			n = xpl_agent_name_len(name, &kept, &complete);
		switch (r->match) {
		case XPROBE_AGENT_NAME_PREFIX:
			if (kept >= r->len)
				return true;
			break;
		case XPROBE_AGENT_NAME_SUFFIX:
			if (n <= XPROBE_NAME_MAX && n >= r->len &&
			    xpl_agent_eq(name + n - r->len, r->name, r->len))
				return true;
			break;
		case XPROBE_AGENT_NAME_CONTAINS:
			if (memmem(name, kept, r->name, r->len))
				return true;
			break;
		}
	}
	return false;
}

/* Does @name pass one of @c's NVTX rules? */
static inline __attribute__((always_inline)) bool xpl_agent_name_ok(const struct xpl_agent_cap *c,
								    const char *name)
{
	return xpl_agent_rules_ok(c->rules, c->nrules, name);
}

#endif /* XPL_AGENT_CAPTURE_H */
