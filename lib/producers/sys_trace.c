/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sys_trace.c - sys_trace, the host event rings: slow paths of recording
 * (a thread's first record, a wrapping or full ring), the rings' lifecycle
 * (create, activate, quiesce, destroy), the consumer side (fetch, the
 * harvest reader the stop path writes from) and the public recording calls
 * of xprobe/trace.h.  The protocol between producers and the stopper is
 * written in producers/sys_trace.h; this file implements both halves.
 *
 * Memory: one mapping per session: page 0 the file header, then the ring
 * controls, then max_rings rings of ring_bytes.  With the default file
 * backing it is MAP_SHARED over <session dir>/host_rings.live, so records
 * outlive a killed process (lib/xtf/rings_recover.c reads them back); the
 * file is sparse, pages are only allocated for rings that threads attach,
 * and a thread's ring is prefaulted when it attaches so the hot path never
 * takes a page fault (first-touch faults on a file mapping cost ~1 us per
 * 4 KiB, i.e. ~20 ns per 48-byte record, which would double the cost).
 *
 * Locks: none on the producer side.  The session calls (activate, quiesce,
 * fetch, destroy) are called under the controller lock, except quiesce and
 * the harvest reader from the fatal-signal path, which take nothing.
 */
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>

#include "../internal.h"
#include "sys_trace.h"
#include "xprobe/inspect.h"
#include "xprobe/trace.h"
#include "xprobe/xtf.h"
#include "json.h"

struct xpl_hot xpl_hot;
__thread struct xpl_tls xpl_tls __attribute__((tls_model("initial-exec")));

static struct xpl_slot xpl_slots[XPL_MAX_SLOTS] __attribute__((aligned(64)));
static _Atomic uint32_t slot_hwm; /* slots ever handed out: quiesce scans [0, hwm) */
static pthread_key_t slot_key;
static pthread_once_t slot_key_once = PTHREAD_ONCE_INIT;
static _Atomic int membarrier_ready; /* 1 registered, -1 unavailable, 0 not tried */
void (*_Atomic xpl_slot_exit_hook)(struct xpl_tls *t);

/* --- slots ----------------------------------------------------------------- */

static void slot_release(void *p)
{
	struct xpl_slot *s = p;
	void (*on_exit)(struct xpl_tls *t) =
		atomic_load_explicit(&xpl_slot_exit_hook, memory_order_acquire);

	if (on_exit && xpl_tls.slot == s)
		on_exit(&xpl_tls);
	/* The thread is gone: nobody can be inside a record on this slot. */
	atomic_store_explicit(&s->busy, 0, memory_order_relaxed);
	atomic_store_explicit(&s->state, 0, memory_order_release);
	xpl_tls.slot = NULL;
}

static void slot_key_make(void)
{
	if (pthread_key_create(&slot_key, slot_release) != 0)
		slot_key = (pthread_key_t)-1;
}

static struct xpl_slot *slot_acquire(struct xpl_tls *t)
{
	uint32_t hwm = atomic_load(&slot_hwm);

	pthread_once(&slot_key_once, slot_key_make);
	for (uint32_t i = 0; i < XPL_MAX_SLOTS; i++) {
		struct xpl_slot *s = &xpl_slots[i];
		uint32_t free_state = 0;

		if (i >= hwm) {
			/* extend the scanned range first, so quiesce sees this slot */
			while (hwm <= i && !atomic_compare_exchange_weak(&slot_hwm, &hwm, i + 1))
				;
		}
		if (!atomic_compare_exchange_strong(&s->state, &free_state, 1))
			continue;
		t->tid = (uint32_t)syscall(SYS_gettid);
		t->tid_hi = (uint64_t)t->tid << 32;
		s->tid = t->tid;
		t->slot = s;
		if (slot_key != (pthread_key_t)-1)
			pthread_setspecific(slot_key, s);
		return s;
	}
	return NULL;
}

/* --- recording slow paths ------------------------------------------------- */

void xpl_rec_reentrant(struct xpl_tls *t)
{
	(void)t;
	atomic_fetch_add_explicit(&xpl_hot.reentrant_drops, 1, memory_order_relaxed);
}

/*
 * Fault the ring in before the first record.  MADV_POPULATE_WRITE fills the
 * page tables in one call, but under shadow paging (our PVM guests) the
 * first access of each page from user space still traps to the hypervisor:
 * ~4.7 us a page, 47 ns on each 40-byte record of a fresh ring (a bare
 * rdtsc + 40-byte write loop: 11.7 ns after memset, 58.9 ns after populate
 * alone, 11.6 ns after populate and one read a page).  So every page is also
 * read once here.
 */
static void prefault(void *p, size_t len)
{
	size_t o;

#ifdef MADV_POPULATE_WRITE
	if (madvise(p, len, MADV_POPULATE_WRITE) == 0) {
		for (o = 0; o < len; o += 4096)
			(void)*(volatile const uint8_t *)((uint8_t *)p + o);
		return;
	}
#endif
	/* older kernels: touch every page (the ring is zero; writing zero is
	 * harmless even if another reader looks) */
	for (o = 0; o < len; o += 4096)
		__atomic_store_n((uint8_t *)p + o, 0, __ATOMIC_RELAXED);
}

/*
 * Reserve ring @idx's blocks in the ring file before any store into it: a
 * store into a hole the file system cannot fill raises SIGBUS in the
 * recording thread, a failed fallocate is only a ring this thread does not
 * get.  Anonymous rings need nothing.  0 or -errno (counted in the header,
 * the first errno kept for the stop's note).  Async-signal-safe
 * (posix_fallocate is fallocate(2), or pread/pwrite where the file system
 * has no fallocate).
 */
static int ring_reserve(struct xpl_rings *r, uint32_t idx)
{
	int e, zero = 0;

	if (r->fd < 0)
		return 0;
	/* the program closed the ring file's descriptor and reused the number:
	 * growing its file would be writing into it */
	e = xpl_fd_same(r->fd, &r->fd_id) ?
		    posix_fallocate(r->fd,
				    (off_t)(r->hdr->data_offset + (uint64_t)idx * r->ring_bytes),
				    (off_t)r->ring_bytes) :
		    EBADF;
	if (!e)
		return 0;
	__atomic_fetch_add(&r->hdr->unreserved_rings, 1, __ATOMIC_RELAXED);
	atomic_compare_exchange_strong(&r->reserve_err, &zero, -e);
	return -e;
}

struct xprobe_record *xpl_rec_slow(struct xpl_tls *t, uint32_t size)
{
	struct xpl_slot *s = t->slot;
	struct xpl_rings *r;
	uint32_t gen;
	uint64_t h, off;

	if (!s) {
		s = slot_acquire(t);
		if (!s) {
			atomic_fetch_add_explicit(&xpl_hot.noslot_drops, 1, memory_order_relaxed);
			return NULL;
		}
		atomic_store_explicit(&s->busy, 1, memory_order_relaxed);
		xpl_light_fence();
	}
	/* busy is held from here */
	gen = atomic_load_explicit(&xpl_hot.gen, memory_order_acquire);
	r = atomic_load_explicit(&xpl_hot.rings, memory_order_acquire);
	if (!r || r->gen != gen) {
		atomic_store_explicit(&s->busy, 0, memory_order_release);
		return NULL;
	}
	if (t->gen != gen) {
		uint32_t idx = __atomic_fetch_add(&r->hdr->rings_used, 1, __ATOMIC_RELAXED);

		t->rings = r;
		t->gen = gen;
		t->mask = r->ring_bytes - 1;
		t->head = 0;
		if (idx >= r->max_rings) {
			t->ctl = NULL;
			t->data = NULL;
			t->limit = 0;
		} else {
			struct xpl_ring_ctl *c = &r->ctl[idx];

			if (ring_reserve(r, idx) == 0) {
				t->ctl = c;
				t->data = r->data + (uint64_t)idx * r->ring_bytes;
				c->tid = t->tid;
				__atomic_store_n(&c->in_use, 1, __ATOMIC_RELEASE);
				t->limit = r->ring_bytes;
				prefault(t->data, r->ring_bytes);
				xpl_rings_calibrate(r);
			} else {
				t->ctl = NULL; /* records are counted as unattached drops */
				t->data = NULL;
				t->limit = 0;
			}
		}
	}
	h = t->head;
	off = h & t->mask;
	if (h + size > t->limit || off + size > t->mask + 1)
		return xpl_rec_room(t, size);
	return (struct xprobe_record *)(t->data + off);
}

struct xprobe_record *xpl_rec_room(struct xpl_tls *t, uint32_t size)
{
	uint64_t ring = t->mask + 1, h, off;

	if (!t->ctl) {
		__atomic_fetch_add(&t->rings->hdr->unattached_drops, 1, __ATOMIC_RELAXED);
		goto out_busy;
	}
	t->limit = __atomic_load_n(&t->ctl->tail, __ATOMIC_ACQUIRE) + ring;
	h = t->head;
	off = h & t->mask;
	if (off + size > ring) {
		uint64_t pad = ring - off; /* < size <= XPROBE_RECORD_MAX_SIZE */

		testcase(pad == 8);
		if (h + pad + size > t->limit)
			goto drop;
		xpl_st64(t->data + off, pad | (uint64_t)XPROBE_EV_PAD << 16);
		h += pad;
		t->head = h;
		off = 0;
	}
	if (h + size > t->limit)
		goto drop;
	return (struct xprobe_record *)(t->data + off);
drop:
	testcase(h + size == t->limit + 8); /* ring exactly full */
	__atomic_store_n(&t->ctl->dropped, t->ctl->dropped + 1, __ATOMIC_RELAXED);
out_busy:
	atomic_store_explicit(&t->slot->busy, 0, memory_order_release);
	return NULL;
}

/* --- the general recording paths ------------------------------------------ */

bool xpl_rec_named(uint32_t type, const char *name, uint32_t aux, uint64_t a0, uint64_t a1)
{
	struct xpl_tls *t = &xpl_tls;
	struct xprobe_record *r;
	bool complete = false;
	size_t n = name ? xpl_name_cut(name, &complete) : 0;
	uint32_t flags, size;

	flags = !name ? XPROBE_RECF_NAME_UNSUPPORTED : complete ? XPROBE_RECF_NAME_COMPLETE : 0;
	size = (uint32_t)XPL_ALIGN8(XPROBE_RECORD_HDR_SIZE + n);
	r = xpl_rec_begin(t, type, size);
	if (!r)
		return false;
	xpl_rec_fill(t, r, type, size, xpl_ts(),
		     (uint64_t)aux | (uint64_t)flags << 32 | (uint64_t)n << 48, a0, a1);
	if (size > XPROBE_RECORD_HDR_SIZE) {
		xpl_st64((uint8_t *)r + size - 8, 0); /* zero the padding first */
		memcpy((uint8_t *)r + XPROBE_RECORD_HDR_SIZE, name, n);
	}
	xpl_rec_commit(t, size);
	return true;
}

bool xpl_rec_plain(uint32_t type, uint32_t aux, uint64_t a0, uint64_t a1)
{
	struct xpl_tls *t = &xpl_tls;
	struct xprobe_record *r = xpl_rec_begin(t, type, XPROBE_RECORD_HDR_SIZE);

	if (!r)
		return false;
	xpl_rec_fill(t, r, type, XPROBE_RECORD_HDR_SIZE, xpl_ts(), aux, a0, a1);
	xpl_rec_commit(t, XPROBE_RECORD_HDR_SIZE);
	return true;
}

/* --- public recording calls ----------------------------------------------- */

static int rec_result(bool ok, uint32_t type)
{
	if (ok)
		return 0;
	if (!xpl_type_on(type))
		return -XPROBE_E_NOT_ACTIVE;
	return -XPROBE_E_EVENTS_DROPPED;
}

static __attribute__((noinline)) int trace_record_slow(uint32_t user_type, uint64_t a0, uint64_t a1)
{
	return rec_result(xpl_rec_plain(XPROBE_EV_USER, user_type, a0, a1), XPROBE_EV_USER);
}

XPROBE_API int xprobe_trace_record(uint32_t user_type, uint64_t a0, uint64_t a1)
{
	int rc = xpl_fast_plain(&xpl_tls, XPROBE_EV_USER, user_type, a0, a1);

	if (likely(rc > 0))
		return 0;
	if (rc == 0)
		return -XPROBE_E_NOT_ACTIVE;
	return trace_record_slow(user_type, a0, a1); /* tail call: no frame on the fast path */
}

XPROBE_API int xprobe_trace_mark(const char *name)
{
	if (!name)
		return -XPROBE_E_INVALID_ARGUMENT;
	return rec_result(xpl_rec_named(XPROBE_EV_NVTX_MARK, name, 0, 0, 0), XPROBE_EV_NVTX_MARK);
}

/* --- rings lifecycle -------------------------------------------------------- */

int xpl_rings_create(const struct xpl_rings_params *p, struct xpl_rings **out)
{
	struct xpl_rings *r;
	uint64_t ctl_bytes, total;
	int fd = -1, err = 0;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = -1;
	r->dirfd = -1;
	r->ring_bytes = p->ring_bytes;
	r->max_rings = p->max_rings;
	r->tsc = p->tsc;
	ctl_bytes = ((uint64_t)p->max_rings * sizeof(struct xpl_ring_ctl) + 4095) & ~4095ull;
	total = 4096 + ctl_bytes + (uint64_t)p->max_rings * p->ring_bytes;
	r->map_len = total;
	if (p->dirfd >= 0) {
		fd = openat(p->dirfd, XPL_RINGFILE_NAME,
			    O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			err = -errno;
			goto fail;
		}
		r->dirfd = p->dirfd;
		xpl_fdid_take(r->dirfd, &r->dir_id);
		r->linked = true;
		if (ftruncate(fd, (off_t)total) != 0) {
			err = -errno;
			goto fail;
		}
		/* the header, the controls and one ring: the session's minimum */
		err = -posix_fallocate(fd, 0, (off_t)(4096 + ctl_bytes + p->ring_bytes));
		if (err)
			goto fail;
		r->map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		r->file_backed = true;
	} else {
		r->map = mmap(NULL, total, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	}
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		err = -errno;
		goto fail;
	}
	r->fd = fd; /* kept: rings are reserved as threads attach */
	fd = -1;
	xpl_fdid_take(r->fd, &r->fd_id);
	r->hdr = (struct xpl_ringfile_hdr *)r->map;
	r->ctl = (struct xpl_ring_ctl *)(r->map + 4096);
	r->data = r->map + 4096 + ctl_bytes;
	memcpy(r->hdr->magic, XPL_RINGFILE_MAGIC, 8);
	r->hdr->version = XPL_RINGFILE_VERSION;
	r->hdr->hdr_size = sizeof(*r->hdr);
	r->hdr->ring_bytes = p->ring_bytes;
	r->hdr->max_rings = p->max_rings;
	r->hdr->clock_source = p->tsc ? 1 : 2;
	r->hdr->data_offset = 4096 + ctl_bytes;
	r->hdr->pid = p->pid;
	r->hdr->process_start_time = p->process_start_time;
	r->hdr->session_start_ns = p->session_start_ns;
	r->hdr->begin = *p->begin;
	r->hdr->latest = *p->latest;
	snprintf(r->hdr->instance_id, sizeof(r->hdr->instance_id), "%s", p->instance_id);
	snprintf(r->hdr->backend, sizeof(r->hdr->backend), "%s", p->backend);
	r->hdr->simulated = p->simulated;
	__atomic_store_n(&r->hdr->state, XPL_RING_STATE_LIVE, __ATOMIC_RELEASE);
	*out = r;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	xpl_rings_unlink(r);
	free(r);
	return err;
}

static long membarrier_cmd(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

void xpl_trace_fences(void)
{
	if (!atomic_load(&membarrier_ready)) {
		long ok = membarrier_cmd(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);

		atomic_store(&membarrier_ready, ok == 0 ? 1 : -1);
	}
#ifdef XPL_TSAN
	atomic_store(&xpl_hot.need_fence, 1);
#else
	atomic_store(&xpl_hot.need_fence, atomic_load(&membarrier_ready) < 0);
#endif
}

struct xpl_slot *xpl_slot_attach(struct xpl_tls *t)
{
	if (t->slot)
		return t->slot;
	return slot_acquire(t);
}

void xpl_rings_activate(struct xpl_rings *r, uint64_t mask)
{
	uint32_t gen;

	xpl_trace_fences();
	xpl_hot.tsc = r->tsc;
	gen = atomic_load(&xpl_hot.gen) + 1;
	r->gen = gen;
	atomic_store_explicit(&xpl_hot.rings, r, memory_order_release);
	atomic_store_explicit(&xpl_hot.gen, gen, memory_order_release);
	atomic_store_explicit(&xpl_hot.type_mask, mask, memory_order_release);
}

/* The stopper's half of the busy protocol: a barrier on every thread, then
 * wait for every slot but @own to be idle.  Returns the slots still busy. */
static unsigned slots_wait(struct xpl_slot *own, uint64_t max_wait_ns)
{
	uint32_t hwm = atomic_load(&slot_hwm);
	uint64_t deadline;
	unsigned stuck = 0;

	if (atomic_load(&xpl_hot.need_fence) || atomic_load(&membarrier_ready) <= 0 ||
	    membarrier_cmd(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
		atomic_thread_fence(memory_order_seq_cst);
	deadline = xpl_mono_ns() + max_wait_ns;
	for (uint32_t i = 0; i < hwm && i < XPL_MAX_SLOTS; i++) {
		struct xpl_slot *s = &xpl_slots[i];

		if (s == own)
			continue;
		while (atomic_load_explicit(&s->busy, memory_order_acquire)) {
			if (xpl_mono_ns() > deadline) {
				stuck++;
				break;
			}
			sched_yield();
		}
	}
	return stuck;
}

unsigned xpl_rings_quiesce(uint64_t max_wait_ns, bool from_signal)
{
	atomic_store(&xpl_hot.type_mask, 0);
	atomic_store(&xpl_hot.rings, NULL);
	atomic_fetch_add(&xpl_hot.gen, 1);
	return slots_wait(from_signal ? xpl_tls.slot : NULL, max_wait_ns);
}

unsigned xpl_slots_quiesce(uint64_t max_wait_ns)
{
	return slots_wait(NULL, max_wait_ns);
}

void xpl_rings_calibrate(struct xpl_rings *r)
{
	struct xpl_calib c;
	uint32_t seq;

	if (!r || atomic_exchange(&r->calib_lock, 1))
		return;
	xpl_calib_now(&c, r->tsc);
	seq = __atomic_load_n(&r->hdr->latest_seq, __ATOMIC_RELAXED);
	__atomic_store_n(&r->hdr->latest_seq, seq + 1, __ATOMIC_RELAXED);
	atomic_thread_fence(memory_order_release);
	__atomic_store_n(&r->hdr->latest.tsc, c.tsc, __ATOMIC_RELAXED);
	__atomic_store_n(&r->hdr->latest.ns, c.ns, __ATOMIC_RELAXED);
	__atomic_store_n(&r->hdr->latest_seq, seq + 2, __ATOMIC_RELEASE);
	atomic_store(&r->calib_lock, 0);
}

void xpl_rings_mark_harvested(struct xpl_rings *r)
{
	if (r)
		__atomic_store_n(&r->hdr->state, XPL_RING_STATE_HARVESTED, __ATOMIC_RELEASE);
}

void xpl_rings_unlink(struct xpl_rings *r)
{
	if (r && r->linked && r->dirfd >= 0 && xpl_fd_same(r->dirfd, &r->dir_id))
		unlinkat(r->dirfd, XPL_RINGFILE_NAME, 0);
	if (r)
		r->linked = false;
}

void xpl_rings_destroy(struct xpl_rings *r, bool unlink_file)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->map_len);
	if (unlink_file)
		xpl_rings_unlink(r);
	if (r->fd >= 0)
		xpl_close_same(r->fd, &r->fd_id);
	free(r);
}

/* --- consumer side ---------------------------------------------------------- */

static inline const uint8_t *ring_at(const struct xpl_rings *r, uint32_t ring, uint64_t pos)
{
	return r->data + (uint64_t)ring * r->ring_bytes + (pos & (r->ring_bytes - 1));
}

/* A record the producer wrote is sane unless memory was corrupted; the
 * walk stops at the first insane one rather than trusting its size. */
static inline bool rec_sane(const uint8_t *p, uint64_t pos, uint64_t end, uint64_t ring_bytes)
{
	uint16_t size = xpl_get_u16(p);

	return size >= 8 && size <= XPROBE_RECORD_MAX_SIZE && size % 8 == 0 && pos + size <= end &&
	       (pos & (ring_bytes - 1)) + size <= ring_bytes;
}

uint64_t xpl_ring_count(const struct xpl_rings *r, uint32_t ring, uint64_t pos, uint64_t end,
			uint64_t *valid_end)
{
	uint64_t n = 0;

	while (pos < end) {
		const uint8_t *p = ring_at(r, ring, pos);

		if (!rec_sane(p, pos, end, r->ring_bytes))
			break;
		if (xpl_get_u16(p + 2) != XPROBE_EV_PAD)
			n++;
		pos += xpl_get_u16(p);
	}
	*valid_end = pos;
	return n;
}

size_t xpl_ring_read(void *ctx, uint8_t *buf, size_t cap)
{
	struct xpl_ring_reader *rr = ctx;
	size_t filled = 0;

	while (rr->pos < rr->end) {
		const uint8_t *p = ring_at(rr->r, rr->ring, rr->pos);
		uint16_t size;

		if (!rec_sane(p, rr->pos, rr->end, rr->r->ring_bytes)) {
			rr->pos =
				rr->end; /* cannot happen; the length check in the writer notices */
			break;
		}
		size = xpl_get_u16(p);
		if (filled + size > cap)
			break;
		if (xpl_get_u16(p + 2) == XPROBE_EV_PAD) {
			memset(buf + filled, 0, size);
			xpl_st64(buf + filled, size);
		} else {
			struct xprobe_record *o = (struct xprobe_record *)(buf + filled);

			memcpy(o, p, size);
			o->ts = xpl_conv_ns(rr->conv, o->ts);
		}
		filled += size;
		rr->pos += size;
	}
	return filled;
}

static bool fetch_json(struct xpc_buf *b, const struct xprobe_record *rec, uint64_t ts)
{
	struct xpc_json w;
	const char *tn = xprobe_event_type_name(rec->type);

	xpc_buf_reset(b);
	xpc_json_init_buf(&w, b, 0);
	xpc_json_obj_begin(&w);
	xpc_json_kstr(&w, "type", tn ? tn : "unknown");
	xpc_json_ku64(&w, "ts_ns", ts);
	xpc_json_ku64(&w, "tid", rec->tid);
	xpc_json_ku64(&w, "aux", rec->aux);
	xpc_json_ku64(&w, "a0", rec->a0);
	xpc_json_ku64(&w, "a1", rec->a1);
	xpc_json_key(&w, "name");
	if (rec->name_len || (rec->flags & XPROBE_RECF_NAME_COMPLETE))
		xpc_json_strn(&w, (const char *)rec + XPROBE_RECORD_HDR_SIZE, rec->name_len);
	else
		xpc_json_null(&w);
	xpc_json_kbool(&w, "name_complete", rec->flags & XPROBE_RECF_NAME_COMPLETE);
	xpc_json_obj_end(&w);
	xpc_json_line_end(&w);
	return xpc_json_finish(&w) == 0;
}

int xpl_rings_fetch(struct xpl_rings *r, int format, uint32_t max_events, void *buf, size_t size,
		    size_t *len, size_t *events)
{
	struct xpc_buf line = XPC_BUF_INIT;
	struct xpl_calib latest;
	struct xpl_conv conv;
	uint32_t used = __atomic_load_n(&r->hdr->rings_used, __ATOMIC_ACQUIRE);
	size_t out = 0, n = 0;
	bool full = false;
	int err = 0;

	if (used > r->max_rings)
		used = r->max_rings;
	xpl_rings_calibrate(r);
	latest.tsc = __atomic_load_n(&r->hdr->latest.tsc, __ATOMIC_RELAXED);
	latest.ns = __atomic_load_n(&r->hdr->latest.ns, __ATOMIC_RELAXED);
	xpl_conv_init(&conv, &r->hdr->begin, &latest, r->tsc);
	for (uint32_t k = 0; k < used && !full; k++) {
		uint32_t i = (r->fetch_cursor + k) % used;
		struct xpl_ring_ctl *c = &r->ctl[i];
		uint64_t pos, head;

		if (!__atomic_load_n(&c->in_use, __ATOMIC_ACQUIRE))
			continue;
		pos = c->tail;
		head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
		while (pos < head) {
			const uint8_t *p = ring_at(r, i, pos);
			struct xprobe_record rec;
			uint16_t rsize;

			if (!rec_sane(p, pos, head, r->ring_bytes)) {
				pos = head;
				break;
			}
			rsize = xpl_get_u16(p);
			if (xpl_get_u16(p + 2) == XPROBE_EV_PAD) {
				pos += rsize;
				continue;
			}
			if (max_events && n == max_events) {
				full = true;
				break;
			}
			memcpy(&rec, p, sizeof(rec));
			if (format == XPROBE_FETCH_RECORDS) {
				if (out + rsize > size) {
					full = true;
					break;
				}
				memcpy((uint8_t *)buf + out, p, rsize);
				xpl_st64((uint8_t *)buf + out + 8, xpl_conv_ns(&conv, rec.ts));
				out += rsize;
			} else {
				if (!fetch_json(&line, (const struct xprobe_record *)p,
						xpl_conv_ns(&conv, rec.ts))) {
					err = -ENOMEM;
					full = true;
					break;
				}
				if (out + line.len > size) {
					full = true;
					break;
				}
				memcpy((uint8_t *)buf + out, line.data, line.len);
				out += line.len;
			}
			n++;
			pos += rsize;
		}
		__atomic_store_n(&c->tail, pos, __ATOMIC_RELEASE);
		if (full)
			r->fetch_cursor = i; /* resume here: this ring was cut short */
	}
	if (!full && used)
		r->fetch_cursor = (r->fetch_cursor + 1) % used;
	xpc_buf_free(&line);
	r->fetched += n;
	*len = out;
	if (events)
		*events = n;
	if (err)
		return err;
	if (full && n == 0 && !(max_events && n == max_events))
		return -XPROBE_E_TRUNCATED;
	return 0;
}

void xpl_trace_atfork_child(void)
{
	uint32_t hwm = atomic_load(&slot_hwm);

	/* The child must never write into the parent's (shared) ring file. */
	atomic_store(&xpl_hot.type_mask, 0);
	atomic_store(&xpl_hot.rings, NULL);
	atomic_fetch_add(&xpl_hot.gen, 1);
	/* Only the forking thread exists here: free every other slot. */
	for (uint32_t i = 0; i < hwm && i < XPL_MAX_SLOTS; i++)
		if (&xpl_slots[i] != xpl_tls.slot) {
			atomic_store(&xpl_slots[i].busy, 0);
			atomic_store(&xpl_slots[i].state, 0);
		}
	if (xpl_tls.slot) {
		/* the child has its own tid */
		xpl_tls.tid = (uint32_t)syscall(SYS_gettid);
		xpl_tls.tid_hi = (uint64_t)xpl_tls.tid << 32;
		xpl_tls.slot->tid = xpl_tls.tid;
	}
}
