/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_cupti.c - what the CUPTI backend (lib/device/cupti.c) costs, on
 * the CUPTI TEST DOUBLE (tests/fixtures/cupti_double: no GPU needed), side
 * by side with the same loop and no Agent.  A "CUDA program" that dlopens
 * the fake runtime libcudart.so.13 (LD_LIBRARY_PATH=<build>/tests/
 * cupti_double/13) and, with libxprobe preloaded, drives its own Agent
 * over the real control socket as `xprobe measure` would
 * (tests/lib/agent_peer.h).  bench/lib/bench_cupti.sh runs it.
 *
 *   bench_cupti cb_base N       no libxprobe: the program subscribes an
 *                               empty callback to the double itself, every
 *                               callback delivered (XPD_DELIVER_ALL=1); N x
 *                               cudaDeviceSynchronize = 2N callbacks.  The
 *                               floor: the double's delivery alone.
 *   bench_cupti cb_filtered N   libxprobe's callback, ARM for another API
 *                               (cudaLaunchKernel), every callback
 *                               delivered: 2N callbacks refused by the
 *                               bitmap test, before any clock read
 *   bench_cupti cb_retained N   ARM for cudaDeviceSynchronize: 2N records
 *   bench_cupti act_base N      no libxprobe: the program's own buffer
 *                               callbacks walk N kernel records with
 *                               cuptiActivityGetNextRecord and count them
 *   bench_cupti act_exact N     libxprobe: ARM KERNEL (any), N kernel
 *                               records harvested into the capture
 *   bench_cupti act_agg N       the same into an AGGREGATE capture (8 names)
 *   bench_cupti act_hist N      the same folded into a HISTOGRAM capture's
 *                               buckets, --by name (8 names)
 *   bench_cupti arm N           the first CUDA ARM (CUPTI loaded by it),
 *                               then N ARM/STOP cycles
 *
 * The capture is left 200 ms after ARM for the Agent to prefault its
 * first 32 MiB; the counts bench_cupti.sh uses keep the timed records
 * within that, so the rows are the recording cost, not page faults.
 * Activity is generated with XPD_HOLD=1 (the double keeps full buffers
 * until a flush) in batches that fit the backend's buffer pool, and only
 * cuptiActivityFlushAll is timed: the walk, decode, normalization, filter
 * and record of each activity, on the flushing thread.
 *
 * Prints one line: "<ns per callback>" (cb_*), "<ns per record>
 * <records/s>" (act_*), "<first ARM ms> <ARM ms median>" (arm).  Exits 1
 * when the capture does not hold what the loop did, 2 for bad arguments or
 * no Agent/double.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_peer.h"
#include "bench_util.h"

#define BATCH 40000 /* kernel records per flush: within the backend's pool */
#define POOL 16
#define POOL_BYTES (1u << 20)

typedef int (*sync_fn)(void);
typedef int (*launch_fn)(const char *, const uint32_t *, const uint32_t *, uint64_t, uint32_t);
typedef void (*cb_fn)(void *, int, uint32_t, const void *);
typedef void (*req_fn)(uint8_t **, size_t *, size_t *);
typedef void (*done_fn)(void *, uint32_t, uint8_t *, size_t, size_t);

static struct {
	sync_fn sync;
	launch_fn launch;
	int (*subscribe)(void **, cb_fn, void *);
	int (*enable_cb)(uint32_t, void *, int, uint32_t);
	int (*act_enable)(int);
	int (*act_register)(req_fn, done_fn);
	int (*flush)(uint32_t);
	int (*next)(uint8_t *, size_t, void **);
} f;

static void *need(void *h, const char *name)
{
	void *p = h ? dlsym(h, name) : NULL;

	if (!p) {
		fprintf(stderr, "bench_cupti: %s missing\n", name);
		exit(2);
	}
	return p;
}

static void load_runtime(void)
{
	void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "bench_cupti: %s (LD_LIBRARY_PATH=<build>/tests/cupti_double/13)\n",
			dlerror());
		exit(2);
	}
	*(void **)&f.sync = need(h, "cudaDeviceSynchronize");
	*(void **)&f.launch = need(h, "cudaLaunchKernel");
}

/* The double's own entry points (the baselines use them directly, and the
 * act_* modes time its cuptiActivityFlushAll). */
static void load_cupti(void)
{
	void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);

	*(void **)&f.subscribe = need(h, "cuptiSubscribe");
	*(void **)&f.enable_cb = need(h, "cuptiEnableCallback");
	*(void **)&f.act_enable = need(h, "cuptiActivityEnable");
	*(void **)&f.act_register = need(h, "cuptiActivityRegisterCallbacks");
	*(void **)&f.flush = need(h, "cuptiActivityFlushAll");
	*(void **)&f.next = need(h, "cuptiActivityGetNextRecord");
}

/* --- the baselines: no libxprobe -------------------------------------------------- */

static volatile uint64_t sink;

static void noop_cb(void *ud, int dom, uint32_t cbid, const void *data)
{
	(void)ud;
	(void)dom;
	(void)data;
	sink += cbid;
}

static uint8_t *pool;
static uint64_t pool_free = (1ull << POOL) - 1;
static uint64_t walked;

static void base_req(uint8_t **b, size_t *size, size_t *max)
{
	*max = 0;
	*b = NULL;
	*size = 0;
	if (pool_free) {
		int i = __builtin_ctzll(pool_free);

		pool_free &= ~(1ull << i);
		*b = pool + (size_t)i * POOL_BYTES;
		*size = POOL_BYTES;
	}
}

static void base_done(void *ctx, uint32_t stream, uint8_t *b, size_t size, size_t valid)
{
	void *rec = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	while (f.next(b, valid, &rec) == 0)
		walked++;
	pool_free |= 1ull << ((size_t)(b - pool) / POOL_BYTES);
}

/* --- the Agent ------------------------------------------------------------------- */

static int agent_fd(void)
{
	int (*sock_path)(char *, size_t) =
		(int (*)(char *, size_t))dlsym(RTLD_DEFAULT, "xprobe_agent_socket_path");
	struct ap_reply r = { 0 };
	char path[256];
	int fd;

	if (!sock_path || sock_path(path, sizeof(path)) != 0) {
		fprintf(stderr, "bench_cupti: no Agent (LD_PRELOAD=libxprobe.so)\n");
		exit(2);
	}
	fd = ap_connect(path);
	if (fd < 0 || ap_simple(fd, XPROBE_AGENT_OP_HELLO, 0, &r) != 0)
		exit(2);
	ap_reply_free(&r);
	return fd;
}

static void arm(int fd, uint32_t mode, uint64_t cap, uint32_t kind, uint32_t match,
		const char *name, struct ap_reply *r)
{
	struct xprobe_agent_req q;

	ap_arm(&q, cap);
	q.mode = mode;
	if (mode == XPROBE_AGENT_MODE_HISTOGRAM) {
		q.offset = 64; /* in-flight slots */
		q.by = XPROBE_AGENT_BY_NAME;
	}
	ap_filter(&q, kind, match, name);
	if (ap_rpc(fd, &q, r) != 0 || r->h.status != 0) {
		fprintf(stderr, "bench_cupti: ARM failed: %s\n", r->h.message);
		exit(2);
	}
}

/* Let the Agent's server thread prefault the capture's first 32 MiB (what
 * it keeps ahead of the writers): the timed loops then measure recording,
 * not the kernel's first touch of fresh pages, which a loop writing a
 * gigabyte a second outruns on a loaded machine. */
static void settle(void)
{
	usleep(200000);
}

/* N kernel records generated, flushed in batches; the flush time. */
static double harvest(long n, int names)
{
	static const uint32_t one[3] = { 1, 1, 1 };
	static const char *const nm[8] = { "gemm_a",  "gemm_b",	   "conv_fwd", "conv_bwd",
					   "softmax", "layernorm", "reduce",   "copy_kernel" };
	double t = 0;

	for (long done = 0; done < n;) {
		long b = n - done < BATCH ? n - done : BATCH;
		double t0;

		for (long i = 0; i < b; i++)
			f.launch(nm[(done + i) % names], one, one, 1000, 0);
		t0 = bench_now_ns();
		f.flush(0);
		t += bench_now_ns() - t0;
		done += b;
	}
	return t;
}

int main(int argc, char **argv)
{
	struct ap_reply r = { 0 };
	long n;
	int fd, rc = 0;
	double t0, t;

	if (argc != 3 || (n = bench_count(argv[2])) < 0)
		return 2;
	load_runtime();
	if (!strcmp(argv[1], "cb_base")) {
		void *sub;

		load_cupti(); /* the double attaches the runtime at load */
		if (f.subscribe(&sub, noop_cb, NULL) != 0)
			return 2;
		for (int i = 0; i < 1000; i++)
			f.sync();
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			f.sync();
		printf("%.2f\n", (bench_now_ns() - t0) / (2.0 * n));
		return 0;
	}
	if (!strcmp(argv[1], "act_base")) {
		load_cupti();
		pool = aligned_alloc(4096, (size_t)POOL * POOL_BYTES);
		if (!pool || f.act_register(base_req, base_done) != 0 || f.act_enable(10) != 0)
			return 2;
		harvest(BATCH, 8); /* warm */
		walked = 0;
		t = harvest(n, 8);
		printf("%.2f %.0f\n", t / n, n / t * 1e9);
		return walked == (uint64_t)n ? 0 : 1;
	}
	fd = agent_fd();
	if (!strcmp(argv[1], "cb_filtered") || !strcmp(argv[1], "cb_retained")) {
		bool keep = argv[1][3] == 'r';

		arm(fd, XPROBE_AGENT_MODE_EXACT, 2 * (uint64_t)n + 4000, XPROBE_AGENT_KIND_CUDA_API,
		    XPROBE_AGENT_NAME_EXACT, keep ? "cudaDeviceSynchronize" : "cudaLaunchKernel",
		    &r);
		for (int i = 0; i < 1000; i++)
			f.sync();
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			f.sync();
		t = bench_now_ns() - t0;
		if (ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) != 0)
			return 2;
		printf("%.2f\n", t / (2.0 * n));
		if (keep ? r.h.retained != 2 * (uint64_t)n + 2000 || r.h.dropped :
			   r.h.observed != 0)
			rc = 1;
	} else if (!strcmp(argv[1], "act_exact") || !strcmp(argv[1], "act_agg") ||
		   !strcmp(argv[1], "act_hist")) {
		bool agg = argv[1][4] == 'a', hist = argv[1][4] == 'h';

		load_cupti();
		arm(fd,
		    hist ? XPROBE_AGENT_MODE_HISTOGRAM :
		    agg	 ? XPROBE_AGENT_MODE_AGGREGATE :
			   XPROBE_AGENT_MODE_EXACT,
		    agg || hist ? 64 : (uint64_t)n + BATCH, XPROBE_AGENT_KIND_KERNEL,
		    XPROBE_AGENT_NAME_ANY, NULL, &r);
		settle();
		harvest(BATCH, 8); /* warm: the pool, the names */
		t = harvest(n, 8);
		if (ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) != 0)
			return 2;
		printf("%.2f %.0f\n", t / n, n / t * 1e9);
		/* a histogram capture: observed = pairs counted, retained = the
		 * total and the 8 name groups */
		if (r.h.observed != (uint64_t)n + BATCH || r.h.dropped ||
		    (hist ? r.h.retained != 9 :
		     agg  ? r.h.retained != 8 :
			    r.h.retained != (uint64_t)n + BATCH))
			rc = 1;
	} else if (!strcmp(argv[1], "arm")) {
		double first, ms[64];
		long k = n < 64 ? n : 64;

		t0 = bench_now_ns();
		arm(fd, XPROBE_AGENT_MODE_EXACT, 100000, XPROBE_AGENT_KIND_KERNEL,
		    XPROBE_AGENT_NAME_PREFIX, "gemm", &r);
		first = (bench_now_ns() - t0) / 1e6;
		ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r);
		for (long i = 0; i < k; i++) {
			t0 = bench_now_ns();
			arm(fd, XPROBE_AGENT_MODE_EXACT, 100000, XPROBE_AGENT_KIND_KERNEL,
			    XPROBE_AGENT_NAME_PREFIX, "gemm", &r);
			ms[i] = (bench_now_ns() - t0) / 1e6;
			ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r);
		}
		for (long i = 1; i < k; i++) /* insertion sort: the median */
			for (long j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
				double x = ms[j];

				ms[j] = ms[j - 1];
				ms[j - 1] = x;
			}
		printf("%.3f %.3f\n", first, ms[k / 2]);
	} else {
		return 2;
	}
	ap_reply_free(&r);
	close(fd);
	return rc;
}
