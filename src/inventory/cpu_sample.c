/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_sample.c - the perf-event collector of `measure --cpu-sample`
 * (see cpu_sample.h for the design and the choice of event).
 *
 * Owns: thread enumeration (/proc/<pid>/task, lowest TIDs first, so the
 * main thread is always among the sampled ones), one perf event and one
 * mmap'ed ring per sampled thread, the drain loop, and the per-record
 * accounting into the stack table and counters.
 *
 * Hot path and memory: the target pays one cpu-clock hrtimer interrupt
 * per period and the kernel's frame-pointer walk; we ask for a wakeup
 * only every half ring (watermark) and drain every XP_CPU_DRAIN_MS on our
 * own timer, so no per-sample wakeup reaches the target's CPU.  Records
 * are parsed in place (a wrapped record is copied to one fixed scratch
 * area); the only allocation after setup is a new stack group.
 *
 * Cleanup: every event and ring is released on every return path
 * (collector_close accepts partial state).  A thread that exits while
 * sampled simply stops producing samples; its ring is still drained.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../common/monotonic.h"
#include "../../common/parse.h"
#include "../process/procfs.h"
#include "cpu_sample.h"

#define XP_CPU_DRAIN_MS 50 /* drain period */
#define XP_CPU_RING_MS 250 /* a ring holds this much full-depth sampling */
#define XP_CPU_RING_MAX_PAGES 256 /* per thread, data pages */
#define XP_CPU_SCRATCH 65536 /* perf_event_header.size is a u16 */

const char *xp_inv_cpu_stop_reason_name(enum xp_inv_cpu_stop_reason r)
{
	switch (r) {
	case XP_CPU_STOP_DURATION:
		return "duration";
	case XP_CPU_STOP_MAX_SAMPLES:
		return "max_samples";
	case XP_CPU_STOP_CANCELLED:
		return "cancelled";
	}
	return "duration";
}

static int read_sysctl_u64(const char *path, uint64_t *out)
{
	size_t n;
	char *buf;
	int rc;

	rc = xp_read_file(path, 64, &buf, &n);
	if (rc)
		return rc;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	rc = xpc_parse_u64(buf, 0, UINT64_MAX, out);
	free(buf);
	return rc;
}

int xp_inv_cpu_sample_limits(uint64_t *max_sample_rate, uint32_t *max_stack)
{
	uint64_t rate = 100000, stack = 127;
	int rc;

	/* Defaults of the kernel when the sysctls are unreadable. */
	rc = read_sysctl_u64("/proc/sys/kernel/perf_event_max_sample_rate", &rate);
	if (rc && rc != -ENOENT)
		return rc;
	rc = read_sysctl_u64("/proc/sys/kernel/perf_event_max_stack", &stack);
	if (rc && rc != -ENOENT)
		return rc;
	*max_sample_rate = rate;
	*max_stack = stack > UINT16_MAX ? UINT16_MAX : (uint32_t)stack;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Ring draining and record accounting                                     */

size_t xp_inv_perf_ring_drain(struct perf_event_mmap_page *meta, const uint8_t *data, uint64_t size,
			      uint8_t *scratch, size_t scratch_size, uint64_t *oversized,
			      void (*fn)(void *ctx, const void *rec, size_t len), void *ctx)
{
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail, mask = size - 1;
	size_t nrec = 0;

	while (tail < head) {
		struct perf_event_header hdr;
		uint64_t off = tail & mask;
		const void *rec;

		if (head - tail < sizeof(hdr))
			break; /* never expected: records are written whole */
		if (off + sizeof(hdr) <= size) {
			memcpy(&hdr, data + off, sizeof(hdr));
		} else {
			size_t first = (size_t)(size - off);

			memcpy(&hdr, data + off, first);
			memcpy((uint8_t *)&hdr + first, data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail) {
			/* corrupt ring: skip everything we have */
			(*oversized)++;
			tail = head;
			break;
		}
		if (off + hdr.size <= size) {
			rec = data + off;
		} else if (hdr.size <= scratch_size) {
			size_t first = (size_t)(size - off);

			memcpy(scratch, data + off, first);
			memcpy(scratch + first, data, hdr.size - first);
			rec = scratch;
		} else {
			(*oversized)++;
			tail += hdr.size;
			continue;
		}
		fn(ctx, rec, hdr.size);
		nrec++;
		tail += hdr.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return nrec;
}

int xp_inv_cpu_sample_account(struct xp_inv_cpu_sample_result *r, const void *rec, size_t len,
			      uint64_t max_samples, uint32_t stack_depth, uint64_t *frames)
{
	struct perf_event_header hdr;
	const uint8_t *p = rec;
	uint64_t nr, i, ctx = 0;
	uint32_t nuser = 0, cap_user;
	bool truncated;
	int rc;

	if (len < sizeof(hdr)) {
		r->counts.malformed_records++;
		return 0;
	}
	memcpy(&hdr, p, sizeof(hdr));
	switch (hdr.type) {
	case PERF_RECORD_LOST: {
		uint64_t lost;

		if (len < sizeof(hdr) + 16) {
			r->counts.malformed_records++;
			return 0;
		}
		memcpy(&lost, p + sizeof(hdr) + 8, sizeof(lost));
		r->counts.lost_records++;
		r->counts.lost_samples += lost;
		return 0;
	}
	case PERF_RECORD_THROTTLE:
		r->counts.throttle_events++;
		return 0;
	case PERF_RECORD_SAMPLE:
		break;
	default:
		return 0; /* UNTHROTTLE and anything we did not ask for */
	}
	/* PERF_SAMPLE_TID | TIME | CALLCHAIN: u32 pid, tid; u64 time; u64 nr; u64 ips[nr] */
	if (len < sizeof(hdr) + 24) {
		r->counts.malformed_records++;
		return 0;
	}
	memcpy(&nr, p + sizeof(hdr) + 16, sizeof(nr));
	if (nr > (len - sizeof(hdr) - 24) / 8) {
		r->counts.malformed_records++;
		return 0;
	}
	if (r->counts.observed_samples >= max_samples) {
		r->counts.samples_beyond_limit++;
		return 0;
	}
	r->counts.observed_samples++;
	if ((hdr.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
		r->counts.kernel_mode_samples++;

	/* The kernel's max_stack counts user frames, not the context marker
	 * (measured on 6.18: max_stack N gives nr = N + 1). */
	cap_user = r->requested_depth;
	for (i = 0; i < nr; i++) {
		uint64_t ip;

		memcpy(&ip, p + sizeof(hdr) + 24 + 8 * i, sizeof(ip));
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = ip;
			continue;
		}
		if (ctx != (uint64_t)PERF_CONTEXT_USER)
			continue;
		if (nuser < stack_depth)
			frames[nuser] = nuser ? ip - 1 : ip; /* callers: inside the call */
		nuser++;
	}
	if (!nuser) {
		r->counts.samples_without_user_stack++;
		return 0;
	}
	/* Exact when the kernel was asked for more than we keep; otherwise a
	 * stack that filled the kernel's capacity may have been cut. */
	truncated = nuser > stack_depth || (cap_user <= stack_depth && nuser >= cap_user);
	if (truncated)
		r->counts.truncated_stacks++;
	rc = xp_inv_stack_table_add(&r->stacks, frames, nuser > stack_depth ? stack_depth : nuser,
				    truncated, 1);
	return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------------- */
/* Threads                                                                 */

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The target's TIDs, ascending. 0, -ENOENT (gone), -errno, -ENOMEM. */
static int list_tids(uint32_t pid, uint32_t **out, size_t *n)
{
	char path[64];
	struct dirent *de;
	uint32_t *v = NULL;
	size_t cap = 0, len = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t tid;

		if (xpc_parse_u64(de->d_name, 1, UINT32_MAX, &tid))
			continue;
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			uint32_t *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
			cap = ncap;
		}
		v[len++] = (uint32_t)tid;
	}
	closedir(d);
	if (len)
		qsort(v, len, sizeof(*v), u32_cmp);
	*out = v;
	*n = len;
	return 0;
}

static bool tid_in(const uint32_t *v, size_t n, uint32_t tid)
{
	return n && bsearch(&tid, v, n, sizeof(*v), u32_cmp) != NULL;
}

/* ---------------------------------------------------------------------- */
/* Collector                                                               */

struct thread_ring {
	int fd;
	uint32_t tid;
	void *base; /* mmap: control page + data */
	size_t map_len;
	bool sampled; /* produced at least one sample record */
};

struct collector {
	const struct xp_inv_cpu_sample_opts *o;
	struct xp_inv_cpu_sample_result *r;
	struct thread_ring *rings;
	size_t nrings;
	size_t page;
	uint64_t data_size;
	uint8_t *scratch;
	uint64_t *frames;
	uint64_t oversized;
	int err; /* first accounting error (-ENOMEM) */
	struct thread_ring *cur;
};

static void on_record(void *ctx, const void *rec, size_t len)
{
	struct collector *c = ctx;
	const struct perf_event_header *h = rec;
	int rc;

	if (h->type == PERF_RECORD_SAMPLE)
		c->cur->sampled = true;
	rc = xp_inv_cpu_sample_account(c->r, rec, len, c->o->max_samples, c->o->stack_depth,
				       c->frames);
	if (rc && !c->err)
		c->err = rc;
}

static void drain_all(struct collector *c)
{
	size_t i;

	for (i = 0; i < c->nrings; i++) {
		struct thread_ring *t = &c->rings[i];

		c->cur = t;
		xp_inv_perf_ring_drain(t->base, (const uint8_t *)t->base + c->page, c->data_size,
				       c->scratch, XP_CPU_SCRATCH, &c->oversized, on_record, c);
	}
}

static void collector_close(struct collector *c)
{
	size_t i;

	for (i = 0; i < c->nrings; i++) {
		if (c->rings[i].base)
			munmap(c->rings[i].base, c->rings[i].map_len);
		if (c->rings[i].fd >= 0)
			close(c->rings[i].fd);
	}
	free(c->rings);
	free(c->scratch);
	free(c->frames);
	c->rings = NULL;
	c->nrings = 0;
}

static void init_attr(struct perf_event_attr *a, const struct xp_inv_cpu_sample_result *r,
		      uint64_t data_size, bool exclude_kernel)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = r->sample_period_ns;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
	a->disabled = 1;
	a->exclude_kernel = exclude_kernel;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = 1;
	a->sample_max_stack = (uint16_t)r->requested_depth;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(data_size / 2);
}

/* Raise the soft fd limit toward what @need descriptors require. */
static void ensure_fd_room(size_t need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need + 64) {
		rl.rlim_cur = need + 64;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
			rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int open_threads(struct collector *c, const uint32_t *tids, size_t ntids,
			struct xp_error *err)
{
	struct xp_inv_cpu_sample_result *r = c->r;
	size_t i, want = ntids < c->o->max_threads ? ntids : (size_t)c->o->max_threads;
	bool exclude_kernel = false;
	int first_errno = 0;

	c->rings = calloc(want ? want : 1, sizeof(*c->rings));
	if (!c->rings)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	ensure_fd_room(want);
	r->counts.threads_over_bound = ntids - want;
	for (i = 0; i < want; i++) {
		struct thread_ring *t = &c->rings[c->nrings];
		struct perf_event_attr a;
		int fd;

		init_attr(&a, r, c->data_size, exclude_kernel);
		fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)tids[i], -1, -1,
				  PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && (errno == EACCES || errno == EPERM) && !exclude_kernel) {
			/* kernel-mode samples need privilege; keep user time only */
			exclude_kernel = true;
			init_attr(&a, r, c->data_size, exclude_kernel);
			fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)tids[i], -1, -1,
					  PERF_FLAG_FD_CLOEXEC);
		}
		if (fd < 0) {
			if (!first_errno)
				first_errno = errno;
			r->counts.threads_open_failed++;
			continue;
		}
		t->fd = fd;
		t->tid = tids[i];
		t->map_len = c->page + c->data_size;
		t->base = mmap(NULL, t->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (t->base == MAP_FAILED) {
			if (!first_errno)
				first_errno = errno;
			t->base = NULL;
			close(fd);
			r->counts.threads_open_failed++;
			continue;
		}
		c->nrings++;
	}
	r->kernel_time_included = !exclude_kernel;
	r->open_errno = first_errno;
	r->counts.threads_sampled = c->nrings;
	if (c->nrings)
		return 0;
	xp_error_detail_u64(err, "pid", c->o->pid);
	xp_error_detail_u64(err, "threads_seen", ntids);
	xp_error_detail_str(err, "errno", strerror(first_errno));
	if (first_errno == ESRCH || first_errno == ENOENT)
		return xp_error_set(err, XPROBE_E_TARGET_EXITED, true,
				    "target process %u exited before its threads could be sampled",
				    c->o->pid);
	if (first_errno == EACCES || first_errno == EPERM) {
		xp_error_hint(err, "run as root or lower kernel.perf_event_paranoid");
		return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
				    "perf_event_open was denied for every thread of %u", c->o->pid);
	}
	if (first_errno == EMFILE || first_errno == ENFILE) {
		xp_error_hint(err, "raise the open-file limit (ulimit -n) or lower --max-threads");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "out of file descriptors for per-thread sampling events");
	}
	return xp_error_set(err, XPROBE_E_INTERNAL, false,
			    "perf_event_open failed for every thread of %u: %s", c->o->pid,
			    strerror(first_errno));
}

static uint64_t next_pow2(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

int xp_inv_cpu_sample_collect(const struct xp_inv_cpu_sample_opts *o,
			      struct xp_inv_cpu_sample_result *r, struct xp_error *err)
{
	struct collector c;
	uint32_t *tids = NULL, *end_tids = NULL;
	size_t ntids = 0, nend = 0, i;
	uint64_t max_rate, t0, deadline, rec_max, want;
	uint32_t max_stack;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&c, 0, sizeof(c));
	c.o = o;
	c.r = r;
	if (!o->frequency_hz || !o->max_samples || !o->max_groups || !o->stack_depth ||
	    !o->max_threads || !o->duration_ms || o->max_groups > XP_CPU_MAX_GROUPS_LIMIT)
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "cpu sampling bounds must be positive");
	rc = xp_inv_cpu_sample_limits(&max_rate, &max_stack);
	if (rc)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "cannot read the perf sysctls: %s", strerror(-rc));
	if (o->frequency_hz > max_rate || o->stack_depth > max_stack) {
		xp_error_detail_u64(err, "perf_event_max_sample_rate", max_rate);
		xp_error_detail_u64(err, "perf_event_max_stack", max_stack);
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "sampling bounds exceed the kernel's perf limits");
	}
	r->kernel_stack_max = max_stack;
	r->frequency_hz = o->frequency_hz;
	r->max_samples = o->max_samples;
	r->max_threads = o->max_threads;
	r->stack_depth = o->stack_depth;
	/* One frame more than kept, to see truncation exactly. */
	r->requested_depth = o->stack_depth + 1 <= max_stack ? o->stack_depth + 1 : max_stack;
	r->sample_period_ns = 1000000000ull / o->frequency_hz;
	if (!r->sample_period_ns)
		r->sample_period_ns = 1;

	rc = xp_inv_stack_table_init(&r->stacks, o->max_groups);
	if (rc)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	c.page = (size_t)sysconf(_SC_PAGESIZE);
	rec_max = sizeof(struct perf_event_header) + 24 + 8ull * (r->requested_depth + 2);
	want = rec_max * o->frequency_hz * XP_CPU_RING_MS / 1000;
	if (want < 2 * c.page)
		want = 2 * c.page;
	c.data_size = next_pow2(want);
	if (c.data_size > (uint64_t)XP_CPU_RING_MAX_PAGES * c.page)
		c.data_size = (uint64_t)XP_CPU_RING_MAX_PAGES * c.page;
	r->ring_bytes = c.data_size;
	c.scratch = malloc(XP_CPU_SCRATCH);
	c.frames = calloc(r->requested_depth + 1, sizeof(*c.frames));
	if (!c.scratch || !c.frames) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}

	rc = list_tids(o->pid, &tids, &ntids);
	if (rc || !ntids) {
		xp_error_detail_u64(err, "pid", o->pid);
		if (!rc || rc == -ENOENT || rc == -ESRCH)
			rc = xp_error_set(err, XPROBE_E_TARGET_EXITED, true,
					  "target process %u exited", o->pid);
		else if (rc == -EACCES || rc == -EPERM)
			rc = xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
					  "cannot list the threads of %u", o->pid);
		else
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
					  "cannot list the threads of %u: %s", o->pid,
					  strerror(-rc));
		goto out;
	}
	r->counts.threads_seen = ntids;
	rc = open_threads(&c, tids, ntids, err);
	if (rc)
		goto out;

	for (i = 0; i < c.nrings; i++)
		ioctl(c.rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
	t0 = xpc_mono_ns();
	deadline = t0 + o->duration_ms * 1000000ull;
	r->stop_reason = XP_CPU_STOP_DURATION;
	for (;;) {
		uint64_t now = xpc_mono_ns(), wake;

		if (o->stop && *o->stop) {
			r->stop_reason = XP_CPU_STOP_CANCELLED;
			break;
		}
		if (r->counts.observed_samples >= o->max_samples) {
			r->stop_reason = XP_CPU_STOP_MAX_SAMPLES;
			break;
		}
		if (now >= deadline)
			break;
		wake = now + XP_CPU_DRAIN_MS * 1000000ull;
		if (wake > deadline)
			wake = deadline;
		xpc_sleep_until_ns(wake); /* EINTR: loop */
		drain_all(&c);
		if (c.err)
			break;
		if (o->progress)
			o->progress(o->progress_ctx, xpc_mono_ns() - t0,
				    r->counts.observed_samples);
	}
	for (i = 0; i < c.nrings; i++)
		ioctl(c.rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	r->window_ns = xpc_mono_ns() - t0;
	drain_all(&c);
	if (c.err) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
				  "out of memory grouping sampled stacks");
		goto out;
	}
	r->counts.malformed_records += c.oversized;
	for (i = 0; i < c.nrings; i++)
		if (c.rings[i].sampled)
			r->counts.threads_with_samples++;

	/* Thread coverage at the end of the window. */
	if (list_tids(o->pid, &end_tids, &nend) == 0) {
		for (i = 0; i < ntids; i++)
			if (!tid_in(end_tids, nend, tids[i]))
				r->counts.threads_exited++;
		for (i = 0; i < nend; i++)
			if (!tid_in(tids, ntids, end_tids[i]))
				r->counts.threads_started++;
	} else {
		/* the whole process is gone: the caller's identity check says so */
		r->counts.threads_exited = ntids;
	}
	rc = 0;
out:
	collector_close(&c);
	free(tids);
	free(end_tids);
	if (rc)
		xp_inv_cpu_sample_result_free(r);
	return rc;
}

void xp_inv_cpu_sample_result_free(struct xp_inv_cpu_sample_result *r)
{
	xp_inv_stack_table_free(&r->stacks);
}
