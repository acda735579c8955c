/* SPDX-License-Identifier: Apache-2.0 */
/*
 * monitor.c - the /proc sampler thread (monitor.h).
 *
 * Sources: /proc/self/stat fields 14-15 (utime, stime in clock ticks),
 * /proc/stat's first line (machine jiffies: busy = total - idle - iowait),
 * /proc/self/statm (pages), /proc/meminfo (MemTotal, MemAvailable).  One
 * sample is taken at start, then every period, and one at a normal stop.
 *
 * The original controller's sampler (docs/seed-mapping.md) runs only for
 * cpu_util; its host-memory activity armed nothing.  Here either activity
 * starts the thread and each writes its own file.
 *
 * Concurrency: the thread is the only writer of the arrays; it publishes a
 * sample by a release store of `n` after writing it.  Readers (the stop
 * path, normal or from a signal) load `n` with acquire and read below it.
 * A sample being overwritten during a signal-path read is the one race
 * left; the thread is told to stop first, so it finishes at most the
 * sample in progress.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../internal.h"
#include "clock.h"
#include "monitor.h"
#include "sys_trace.h"

#define XPL_MONITOR_CAP 65536 /* samples kept per kind (18 h at 1 s) */

struct xpl_monitor {
	pthread_t thread;
	bool started;
	uint32_t period_ms;
	bool cpu, mem;
	struct xprobe_cpu_sample *cpu_s;
	struct xprobe_mem_sample *mem_s;
	_Atomic uint64_t n; /* samples taken (index n % CAP is next) */
	_Atomic(struct xpl_rings *) rings;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	_Atomic bool stop;
	uint64_t tick_ns; /* ns per clock tick */
	uint64_t page;
};

static const char *skip_num(const char *p, uint64_t *v)
{
	uint64_t x = 0;

	while (*p == ' ')
		p++;
	while (*p >= '0' && *p <= '9')
		x = x * 10 + (uint64_t)(*p++ - '0');
	*v = x;
	return p;
}

static uint64_t meminfo_kb(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	uint64_t v = 0;

	if (p)
		skip_num(p + strlen(key), &v);
	return v;
}

static void take_sample(struct xpl_monitor *m)
{
	uint64_t n = atomic_load_explicit(&m->n, memory_order_relaxed);
	uint64_t idx = n % XPL_MONITOR_CAP, now = xpl_mono_ns();
	char buf[4096];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (m->cpu) {
		struct xprobe_cpu_sample *s = &m->cpu_s[idx];
		uint64_t v[10] = { 0 }, total = 0;
		const char *p;

		memset(s, 0, sizeof(*s));
		s->hdr.size = sizeof(*s);
		s->hdr.type = XPROBE_EV_CPU_SAMPLE;
		s->hdr.ts = now;
		s->hdr.aux = cpus > 0 ? (uint32_t)cpus : 0;
		if (xpl_read_small("/proc/self/stat", buf, sizeof(buf)) &&
		    (p = strrchr(buf, ')'))) {
			/* after ')' field 3 starts; utime is field 14 */
			int field = 2;
			uint64_t ut = 0, st = 0;

			for (; *p && field < 14; p++)
				if (*p == ' ')
					field++;
			p = skip_num(p, &ut);
			skip_num(p, &st);
			s->proc_user_ns = ut * m->tick_ns;
			s->proc_system_ns = st * m->tick_ns;
		}
		if (xpl_read_small("/proc/stat", buf, sizeof(buf)) && !strncmp(buf, "cpu ", 4)) {
			p = buf + 4;
			for (int i = 0; i < 8; i++) {
				p = skip_num(p, &v[i]);
				total += v[i];
			}
			s->host_total_ns = total * m->tick_ns;
			s->host_busy_ns = (total - v[3] - v[4]) * m->tick_ns;
		}
	}
	if (m->mem) {
		struct xprobe_mem_sample *s = &m->mem_s[idx];
		uint64_t size = 0, rss = 0;

		memset(s, 0, sizeof(*s));
		s->hdr.size = sizeof(*s);
		s->hdr.type = XPROBE_EV_MEM_SAMPLE;
		s->hdr.ts = now;
		if (xpl_read_small("/proc/self/statm", buf, sizeof(buf))) {
			const char *p = skip_num(buf, &size);

			skip_num(p, &rss);
			s->proc_vm_bytes = size * m->page;
			s->proc_rss_bytes = rss * m->page;
		}
		if (xpl_read_small("/proc/meminfo", buf, sizeof(buf))) {
			s->host_total_bytes = meminfo_kb(buf, "MemTotal:") * 1024;
			s->host_avail_bytes = meminfo_kb(buf, "MemAvailable:") * 1024;
		}
	}
	atomic_store_explicit(&m->n, n + 1, memory_order_release);
}

static void *monitor_main(void *arg)
{
	struct xpl_monitor *m = arg;
	struct timespec until;

	pthread_mutex_lock(&m->lock);
	while (!atomic_load(&m->stop)) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += m->period_ms / 1000;
		until.tv_nsec += (long)(m->period_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!atomic_load(&m->stop) &&
		       pthread_cond_timedwait(&m->cond, &m->lock, &until) != ETIMEDOUT)
			;
		if (atomic_load(&m->stop))
			break;
		take_sample(m);
		xpl_rings_calibrate(atomic_load(&m->rings));
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

int xpl_monitor_start(uint32_t period_ms, bool cpu, bool mem, struct xpl_rings *rings,
		      struct xpl_monitor **out)
{
	struct xpl_monitor *m = calloc(1, sizeof(*m));
	pthread_condattr_t ca;
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	int err;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->period_ms = period_ms;
	m->cpu = cpu;
	m->mem = mem;
	m->tick_ns = 1000000000ull / (uint64_t)(tick > 0 ? tick : 100);
	m->page = page > 0 ? (uint64_t)page : 4096;
	atomic_store(&m->rings, rings);
	if (cpu)
		m->cpu_s = calloc(XPL_MONITOR_CAP, sizeof(*m->cpu_s));
	if (mem)
		m->mem_s = calloc(XPL_MONITOR_CAP, sizeof(*m->mem_s));
	if ((cpu && !m->cpu_s) || (mem && !m->mem_s)) {
		xpl_monitor_free(m);
		return -ENOMEM;
	}
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	take_sample(m);
	err = pthread_create(&m->thread, NULL, monitor_main, m);
	if (err) {
		xpl_monitor_free(m);
		return -err;
	}
	m->started = true;
	*out = m;
	return 0;
}

void xpl_monitor_stop_async(struct xpl_monitor *m)
{
	if (m)
		atomic_store(&m->stop, true); /* no cond signal: not async-signal-safe */
}

void xpl_monitor_stop(struct xpl_monitor *m)
{
	if (!m || !m->started)
		return;
	pthread_mutex_lock(&m->lock);
	atomic_store(&m->stop, true);
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	m->started = false;
	take_sample(m);
}

void xpl_monitor_forget_rings(struct xpl_monitor *m)
{
	if (m)
		atomic_store(&m->rings, NULL);
}

void xpl_monitor_free(struct xpl_monitor *m)
{
	if (!m)
		return;
	xpl_monitor_stop(m);
	free(m->cpu_s);
	free(m->mem_s);
	free(m);
}

void xpl_monitor_view(const struct xpl_monitor *m, bool cpu, struct xpl_monitor_view *v)
{
	uint64_t n = atomic_load_explicit(&((struct xpl_monitor *)m)->n, memory_order_acquire);
	const uint8_t *base = cpu ? (const uint8_t *)m->cpu_s : (const uint8_t *)m->mem_s;
	size_t rec = cpu ? sizeof(struct xprobe_cpu_sample) : sizeof(struct xprobe_mem_sample);

	memset(v, 0, sizeof(*v));
	if (!base)
		return;
	if (n <= XPL_MONITOR_CAP) {
		v->p[0] = base;
		v->len[0] = n * rec;
		v->count = n;
		return;
	}
	/* wrapped: oldest is at n % CAP */
	v->p[0] = base + (n % XPL_MONITOR_CAP) * rec;
	v->len[0] = (XPL_MONITOR_CAP - n % XPL_MONITOR_CAP) * rec;
	v->p[1] = base;
	v->len[1] = (n % XPL_MONITOR_CAP) * rec;
	v->count = XPL_MONITOR_CAP;
	v->dropped = n - XPL_MONITOR_CAP;
}

uint32_t xpl_monitor_period(const struct xpl_monitor *m)
{
	return m->period_ms;
}
