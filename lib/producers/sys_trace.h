/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sys_trace.h - sys_trace, the host event rings: the recording hot path
 * (inline here, so NVTX callbacks and the xprobe_trace_* calls compile to
 * straight stores) and the session-side calls that create, quiesce, fetch
 * from and harvest the rings (sys_trace.c).
 *
 * Ownership and the one protocol that makes it safe without a lock:
 *
 *   per thread (TLS)   the producer state: ring pointers, private head,
 *                      write limit, NVTX push level.  Only its thread.
 *   per thread slot    struct xpl_slot in a static array (process
 *                      lifetime, never freed): `busy` is 1 while the thread
 *                      is inside a record.  Reused when the thread exits.
 *   per session        struct xpl_rings: the mapping (file or anonymous),
 *                      one ring and one control block per attached thread.
 *   global             struct xpl_hot: event-type mask, generation, rings.
 *
 * A producer sets slot->busy, then (after a compiler barrier) compares its
 * TLS generation with xpl_hot.gen; only on a match does it touch the ring.
 * The stopper clears the mask, bumps the generation, and issues
 * membarrier(PRIVATE_EXPEDITED), which puts a full barrier on every running
 * thread: afterwards each producer either had its busy store visible (the
 * stopper waits for it to clear) or will load the new generation and never
 * touch the rings.  So the stopper may read, convert and unmap the rings
 * once every slot is idle.  The producer pays two plain stores and a load;
 * the expensive half is on the stopper (docs/libxprobe.md, "Performance").
 * Where membarrier is unavailable, and under ThreadSanitizer (which does
 * not model membarrier), both sides use seq_cst fences instead.
 *
 * Ring positions (head, tail) are byte counts that only grow; a record
 * never straddles the ring's end: the producer writes a pad record there
 * and wraps.  A full ring drops the new record and counts it.
 */
#ifndef XPL_SYS_TRACE_H
#define XPL_SYS_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../internal.h"
#include "../xtf/xtf_internal.h"
#include "clock.h"

#define XPL_MAX_SLOTS 4096 /* live threads that can record at once */

#if defined(__SANITIZE_THREAD__)
#define XPL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define XPL_TSAN 1
#endif
#endif

struct xpl_slot {
	_Atomic uint32_t busy; /* 1 while the owning thread is inside a record */
	_Atomic uint32_t state; /* 0 free, 1 owned */
	uint32_t tid; /* owner (valid while owned) */
	uint32_t pad[13];
};

/* The session's rings (producer and consumer side). */
struct xpl_rings {
	uint8_t *map; /* the whole mapping */
	size_t map_len;
	struct xpl_ringfile_hdr *hdr; /* page 0 of the mapping */
	struct xpl_ring_ctl *ctl; /* max_rings controls */
	uint8_t *data; /* ring 0 */
	uint64_t ring_bytes; /* power of two */
	uint32_t max_rings;
	uint32_t gen; /* generation these rings are live in */
	bool tsc; /* ring timestamps are raw TSC */
	bool file_backed;
	int fd; /* the ring file, open for the session's reservations; -1 anonymous */
	int dirfd; /* the session directory holding it (borrowed), -1 anonymous */
	/* what fd and dirfd are: a number the program closed and reused is
	 * never reserved through, unlinked in or closed (internal.h) */
	struct xpl_fdid fd_id, dir_id;
	bool linked; /* host_rings.live still exists (not yet unlinked) */
	_Atomic int reserve_err; /* first failed reservation of a ring (-errno), 0 none */
	_Atomic uint32_t calib_lock; /* one writer of hdr->latest at a time */
	uint64_t fetched; /* records handed out by fetch */
	uint32_t fetch_cursor; /* ring fetch starts from (round robin) */
};

/* What the hot path reads on every record: one cache line. */
struct xpl_hot {
	_Atomic uint64_t type_mask; /* enabled types of the live session; 0 = none */
	_Atomic uint32_t gen; /* bumped at every activation and quiesce */
	_Atomic uint32_t need_fence; /* no membarrier: producers fence */
	struct xpl_rings *_Atomic rings; /* live rings, NULL when none */
	uint32_t tsc; /* timestamps are rdtsc (else clock_gettime) */
	_Atomic uint64_t noslot_drops; /* records of threads beyond XPL_MAX_SLOTS */
	_Atomic uint64_t reentrant_drops; /* records refused while the thread was mid-record
					    and had no ring to count them in */
} __attribute__((aligned(64)));

/* Producer state of one thread. */
struct xpl_tls {
	uint8_t *data; /* this thread's ring in the live rings */
	struct xpl_ring_ctl *ctl; /* its control block; NULL: no ring this generation */
	struct xpl_slot *slot; /* NULL until the thread's first record */
	struct xpl_rings *rings; /* rings of generation `gen` */
	uint64_t mask; /* ring_bytes - 1 */
	uint64_t head; /* private copy of ctl->head */
	uint64_t limit; /* records may end at or below this position */
	uint64_t tid_hi; /* (uint64_t)tid << 32, for the first word of a record */
	uint32_t gen; /* generation the pointers above belong to */
	uint32_t tid;
	int32_t nvtx_level; /* NVTX push depth, kept even when not recording */
	uint32_t range_seq; /* process range ids handed out by this thread */
	/* the Agent's capture (agent_capture.h): bit L set = the push at
	 * level L (< 64) was recorded in capture generation agent_gen */
	uint64_t agent_mask;
	uint32_t agent_gen;
	/* a HISTOGRAM capture (agent_hist_table.h): this thread's stack
	 * number + 1 in capture agent_gen; 0 none yet, UINT32_MAX none to be
	 * had (--max-inflight) */
	uint32_t agent_hslot;
};

extern struct xpl_hot xpl_hot;
extern __thread struct xpl_tls xpl_tls __attribute__((tls_model("initial-exec")));

/* Slow paths (sys_trace.c): attach a ring, handle wrap / full / no ring.  Both
 * return a slot to write with busy held, or NULL with busy released. */
struct xprobe_record *xpl_rec_slow(struct xpl_tls *t, uint32_t size);
struct xprobe_record *xpl_rec_room(struct xpl_tls *t, uint32_t size);
void xpl_rec_reentrant(struct xpl_tls *t);

static inline void xpl_light_fence(void)
{
#ifdef XPL_TSAN
	atomic_thread_fence(memory_order_seq_cst);
#else
	barrier();
	if (unlikely(atomic_load_explicit(&xpl_hot.need_fence, memory_order_relaxed)))
		atomic_thread_fence(memory_order_seq_cst);
#endif
}

static inline uint64_t xpl_ts(void)
{
	return likely(xpl_hot.tsc) ? xpl_rdtsc() : xpl_mono_ns();
}

/*
 * Reserve @size bytes (a multiple of 8, <= XPROBE_RECORD_MAX_SIZE) for a
 * record of @type in the calling thread's ring: the general path (slot
 * acquisition, ring attach, wrap, full ring).  NULL: not recording (type
 * filtered, no session), or dropped (counted).  Otherwise the caller fills
 * the record and calls xpl_rec_commit.
 */
static inline __attribute__((always_inline)) struct xprobe_record *
xpl_rec_begin(struct xpl_tls *t, uint32_t type, uint32_t size)
{
	struct xpl_slot *s = t->slot;
	uint64_t h, off;

	if (!(atomic_load_explicit(&xpl_hot.type_mask, memory_order_relaxed) & (1ull << type)))
		return NULL;
	if (unlikely(!s))
		return xpl_rec_slow(t, size);
	if (unlikely(atomic_load_explicit(&s->busy, memory_order_relaxed))) {
		xpl_rec_reentrant(t);
		return NULL;
	}
	atomic_store_explicit(&s->busy, 1, memory_order_relaxed);
	xpl_light_fence();
	if (unlikely(t->gen != atomic_load_explicit(&xpl_hot.gen, memory_order_relaxed)))
		return xpl_rec_slow(t, size);
	h = t->head;
	off = h & t->mask;
	if (unlikely(h + size > t->limit || off + size > t->mask + 1))
		return xpl_rec_room(t, size);
	return (struct xprobe_record *)(t->data + off);
}

/*
 * The fast reservation: only when the thread's ring is attached for the
 * live generation and @size fits before the limit and the ring's end.
 * Calls nothing out of line, so the recording functions built on it need
 * no stack frame; anything else returns NULL (busy released) and the
 * caller tail-calls its general version.
 */
static inline __attribute__((always_inline)) struct xprobe_record *xpl_rec_fast(struct xpl_tls *t,
										uint32_t size)
{
	struct xpl_slot *s = t->slot;
	uint64_t h = t->head, off = h & t->mask;

	if (unlikely(!s || atomic_load_explicit(&s->busy, memory_order_relaxed)))
		return NULL;
	atomic_store_explicit(&s->busy, 1, memory_order_relaxed);
	xpl_light_fence();
	if (likely(t->gen == atomic_load_explicit(&xpl_hot.gen, memory_order_relaxed) &&
		   h + size <= t->limit && off + size <= t->mask + 1))
		return (struct xprobe_record *)(t->data + off);
	atomic_store_explicit(&s->busy, 0, memory_order_release);
	return NULL;
}

static inline __attribute__((always_inline)) void xpl_rec_commit(struct xpl_tls *t, uint32_t size)
{
	t->head += size;
	__atomic_store_n(&t->ctl->head, t->head, __ATOMIC_RELEASE);
	atomic_store_explicit(&t->slot->busy, 0, memory_order_release);
}

/* One 8-byte store into a record (memcpy: no aliasing games; one mov). */
static inline void xpl_st64(void *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* The first 8 bytes of a record: size, type, tid. */
static inline uint64_t xpl_rec_word0(const struct xpl_tls *t, uint32_t type, uint32_t size)
{
	return t->tid_hi | (uint64_t)type << 16 | size;
}

/*
 * The 40-byte header of a record: word 0 (size, type, tid), timestamp, the
 * aux word (aux | flags << 32 | name_len << 48), a0, a1.
 */
static inline __attribute__((always_inline)) void
xpl_rec_fill(const struct xpl_tls *t, struct xprobe_record *r, uint32_t type, uint32_t size,
	     uint64_t ts, uint64_t auxword, uint64_t a0, uint64_t a1)
{
	xpl_st64(r, xpl_rec_word0(t, type, size));
	r->ts = ts;
	xpl_st64(&r->aux, auxword);
	r->a0 = a0;
	r->a1 = a1;
}

static inline bool xpl_type_on(uint32_t type)
{
	return atomic_load_explicit(&xpl_hot.type_mask, memory_order_relaxed) & (1ull << type);
}

/* Copy @n bytes of a name into a record, 8 at a time: no call (the fast
 * paths here and the Agent's capture, agent_capture.h, inline it). */
static inline __attribute__((always_inline)) void xpl_copy_name(uint8_t *dst, const char *name,
								uint32_t n)
{
	uint32_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, name + i, 8);
		memcpy(dst + i, &w, 8);
	}
	for (; i < n; i++)
		dst[i] = (uint8_t)name[i];
}

/*
 * Fast paths of a plain and a named record: 1 recorded, 0 the type is not
 * being recorded, -1 take the general path (nothing was written).  Inline,
 * no calls: a short name is measured and copied here with plain loops
 * (names over XPROBE_NAME_MAX bytes go to the general path, which cuts them
 * on a UTF-8 boundary), and the timestamp is rdtsc (sessions on the
 * clock_gettime fallback record through the general path).
 */
static inline __attribute__((always_inline)) int
xpl_fast_plain(struct xpl_tls *t, uint32_t type, uint32_t aux, uint64_t a0, uint64_t a1)
{
	struct xprobe_record *r;

	if (!xpl_type_on(type))
		return 0;
	if (unlikely(!xpl_hot.tsc)) /* clock_gettime is a call: general path */
		return -1;
	r = xpl_rec_fast(t, XPROBE_RECORD_HDR_SIZE);
	if (unlikely(!r))
		return -1;
	xpl_rec_fill(t, r, type, XPROBE_RECORD_HDR_SIZE, xpl_rdtsc(), aux, a0, a1);
	xpl_rec_commit(t, XPROBE_RECORD_HDR_SIZE);
	return 1;
}

static inline __attribute__((always_inline)) int xpl_fast_named(struct xpl_tls *t, uint32_t type,
								const char *name, uint32_t aux,
								uint64_t a0, uint64_t a1)
{
	struct xprobe_record *r;
	uint32_t n = 0, size;

	if (!xpl_type_on(type))
		return 0;
	if (unlikely(!name || !xpl_hot.tsc))
		return -1;
	while (n <= XPROBE_NAME_MAX && name[n])
		n++;
	if (unlikely(n > XPROBE_NAME_MAX))
		return -1;
	size = (uint32_t)XPL_ALIGN8(XPROBE_RECORD_HDR_SIZE + n);
	r = xpl_rec_fast(t, size);
	if (unlikely(!r))
		return -1;
	xpl_rec_fill(t, r, type, size, xpl_rdtsc(),
		     (uint64_t)aux | (uint64_t)XPROBE_RECF_NAME_COMPLETE << 32 | (uint64_t)n << 48,
		     a0, a1);
	if (size > XPROBE_RECORD_HDR_SIZE)
		xpl_st64((uint8_t *)r + size - 8, 0); /* zero the padding first */
	xpl_copy_name((uint8_t *)r + XPROBE_RECORD_HDR_SIZE, name, n);
	xpl_rec_commit(t, size);
	return 1;
}

/*
 * The general paths (sys_trace.c): record a named event (NVTX push/start/mark,
 * executions; @name NULL sets NAME_UNSUPPORTED) or a plain one.  True when
 * recorded.
 */
bool xpl_rec_named(uint32_t type, const char *name, uint32_t aux, uint64_t a0, uint64_t a1);
bool xpl_rec_plain(uint32_t type, uint32_t aux, uint64_t a0, uint64_t a1);

/* --- session side (sys_trace.c) --------------------------------------------- */

struct xpl_rings_params {
	int dirfd; /* session directory for host_rings.live (borrowed for the rings'
		      life); -1 = anonymous memory */
	uint64_t ring_bytes; /* power of two >= 4096 */
	uint32_t max_rings;
	uint32_t pid;
	uint64_t process_start_time;
	uint64_t session_start_ns;
	const char *instance_id;
	const char *backend;
	bool simulated;
	bool tsc;
	const struct xpl_calib *begin;
	const struct xpl_calib *latest;
};

/*
 * Create the rings.  File-backed rings reserve their space in the file
 * system before any page of the mapping is touched (a store into a hole
 * of a full file system is a SIGBUS, not an error): the header and
 * controls and one ring here, so a session that begins has room for at
 * least one thread; every further ring when its thread attaches.  A ring
 * that cannot be reserved then is not used: its thread records nothing,
 * its records are counted as dropped, hdr->unreserved_rings and
 * reserve_err say so.  Return 0 or -errno (-ENOSPC, -EDQUOT: no space for
 * the header and one ring).
 */
int xpl_rings_create(const struct xpl_rings_params *p, struct xpl_rings **out);
/* Publish: recording of the types in @mask starts on every thread. */
void xpl_rings_activate(struct xpl_rings *r, uint64_t mask);
/*
 * Stop recording and wait (at most @max_wait_ns) until no thread is inside
 * a record.  From a signal handler, the calling thread's own busy slot (it
 * was interrupted mid-record) is not waited for.  Returns the number of
 * slots still busy when the wait gave up (0 normally).  Async-signal-safe.
 */
unsigned xpl_rings_quiesce(uint64_t max_wait_ns, bool from_signal);
/* Store a fresh calibration point in the ring file (skipped if another
 * thread is storing one).  Async-signal-safe. */
void xpl_rings_calibrate(struct xpl_rings *r);
/* Unmap; unlink the ring file when @unlink_file.  NULL accepted. */
void xpl_rings_destroy(struct xpl_rings *r, bool unlink_file);
/* Remove host_rings.live (harvested: ntrace.pb holds it all).  Async-
 * signal-safe. */
void xpl_rings_unlink(struct xpl_rings *r);
/* Mark the ring file harvested (recovery then refers to ntrace.pb). */
void xpl_rings_mark_harvested(struct xpl_rings *r);

/*
 * Source of one ring's records for the writer: whole records, timestamps
 * converted, read from the ring without modifying it.
 */
struct xpl_ring_reader {
	const struct xpl_rings *r;
	uint32_t ring;
	uint64_t pos, end; /* [tail, head) */
	const struct xpl_conv *conv;
};
/* Fill @buf (>= XPROBE_RECORD_MAX_SIZE) with whole converted records;
 * pads are copied as pads.  Returns bytes filled, 0 at the end. */
size_t xpl_ring_read(void *ctx, uint8_t *buf, size_t cap);
/* Count the non-pad records in [pos, end); *valid_end receives where the
 * walk ended (end, unless memory was corrupted). */
uint64_t xpl_ring_count(const struct xpl_rings *r, uint32_t ring, uint64_t pos, uint64_t end,
			uint64_t *valid_end);

/*
 * Fetch whole records into @buf as records (converted) or JSON lines.
 * Caller holds the controller lock (one consumer).  See xprobe_inspect_fetch.
 */
int xpl_rings_fetch(struct xpl_rings *r, int format, uint32_t max_events, void *buf, size_t size,
		    size_t *len, size_t *events);

/* pthread_atfork child: this process records nothing more of the parent's
 * session (its mapping is shared with the parent). */
void xpl_trace_atfork_child(void);

/*
 * The slot protocol for another producer (the Agent's capture,
 * agent_capture.h), which guards its own buffer with the same busy
 * flags:
 *   xpl_slot_attach    the calling thread's slot (acquired on first use),
 *                      NULL when every slot is taken;
 *   xpl_trace_fences   before publishing what producers will guard with
 *                      busy: register membarrier once and set need_fence
 *                      where it is unavailable (xpl_rings_activate does it
 *                      too);
 *   xpl_slots_quiesce  after unpublishing it: the membarrier (or a fence),
 *                      then wait (at most @max_wait_ns) until no slot is
 *                      busy; returns the slots still busy.
 */
struct xpl_slot *xpl_slot_attach(struct xpl_tls *t);
void xpl_trace_fences(void);
/* Run on a thread's exit while it still holds its slot (so it may enter
 * the Agent's capture as a producer): what the thread holds in a capture
 * goes back (the Agent's histogram stacks, agent_capture.c).  Set once by
 * the Agent, never cleared. */
extern void (*_Atomic xpl_slot_exit_hook)(struct xpl_tls *t);
unsigned xpl_slots_quiesce(uint64_t max_wait_ns);

#endif /* XPL_SYS_TRACE_H */
