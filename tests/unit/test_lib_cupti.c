/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_cupti.c - the CUPTI device backend (lib/device/cupti*.c) and
 * the Agent's CUDA captures, end to end: a real client
 * (tests/lib/agent_peer.h) over the real control socket against
 * tests/fixtures/cupti_double/cupti_fixture, a "CUDA program" whose
 * runtime, driver and CUPTI are the TEST DOUBLE (libcudart.so.13,
 * libcuda.so.1, libcupti.so.13 of the build tree, found through
 * LD_LIBRARY_PATH as NVIDIA's would be), libxprobe preloaded.  The double
 * writes records in CUPTI's struct layouts as lib/device/cupti_abi.h
 * transcribes them (checked against NVIDIA's headers where a toolkit is
 * installed: lib/device/cupti_abi_check.c), so the backend's real code
 * walks them.  Every count is compared with what the fixture says it did.
 *
 *   layouts      which structs each CUPTI version emits; the fields read
 *                sit at one offset in all of them; the decoder on
 *                hand-built records (each layout, truncated, unknown kind);
 *                the walker refuses records outside the buffer;
 *   loading      nothing of CUPTI is mapped before a CUDA ARM (NVTX-only
 *                ARM included); after it: DEVICE_BACKEND, majors 13/13;
 *   kernels      name rules (exact, prefix, suffix, contains, any), a
 *                200-byte name cut at 127, grid/block/stream/device,
 *                durations exact, timestamps within [ARM, STOP];
 *   API          runtime / driver callbacks by name (_v<N> stripped; the
 *                ptsz variant is another name), entry/exit pairs, the
 *                correlation id of API records on kernels, copies (driver
 *                id + runtime id) and sets; unknown names refused;
 *   <<<>>>       CUDA 13's __cudaLaunchKernel callback (what nvcc 13 makes
 *                of a chevron launch): armed by name, its kernels
 *                correlated, unseen by cudaLaunchKernel; CUDA 12 has no
 *                such callback (refused) and its chevrons are
 *                cudaLaunchKernel;
 *   before ARM   an API call in flight at ARM leaves no exit; a kernel
 *                that began before ARM is excluded (and, begun over 1 s
 *                before, clears HOST_MONOTONIC);
 *   clocks       the timestamp callback; the calibrated offset (no
 *                callback); timestamps skewed ahead, behind, and a kernel
 *                before its API entry: HOST_MONOTONIC cleared;
 *   drops        buffers held until a flush with a dry pool: CUPTI's drops
 *                counted; the capture's own limit;
 *   unknown      activity kinds not read are counted;
 *   aggregate    groups by name / kind / device, counts and durations,
 *                bytes, a cut name, offsets, a full table;
 *   refusals     another subscriber, CUDA 11, conflicting majors, a CUPTI
 *                newer than our transcription (activity refused, API allowed),
 *                CUDA 12 (Kernel9 layout, Memcpy5/Memset3 before 12.8);
 *   threads      four threads launch while SNAPSHOTs run and the double's
 *                worker completes buffers (TSan runs this binary).
 */
#include "../../lib/device/cupti_abi.h"

#if !XPL_CUPTI_ABI
/* A platform without CUPTI: the backend is compiled out and says so. */
#include "../../lib/device/backend.h"
#include "../../lib/device/cupti.h"
#include "testlib.h"

int main(void)
{
	const struct xpl_backend_ops *ops;
	char why[256];

	CHECK(!xpl_cupti_built());
	CHECK(xpl_backend_find("cupti", &ops) == -XPROBE_E_BACKEND_UNAVAILABLE);
	CHECK(xpl_cupti_agent_prepare(NULL, NULL, why, sizeof(why)) ==
	      -XPROBE_E_BACKEND_UNAVAILABLE);
	CHECK(strstr(why, "64-bit Linux only") != NULL);
	TEST_MAIN_END();
}
#else
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../../lib/device/cupti.h"
#include "../lib/agent_peer.h"
#include "../lib/libtest.h"
#include "testlib.h"

#define ARRAY_N(a) (sizeof(a) / sizeof((a)[0]))
#define MS 1000000ull

__attribute__((used)) const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}

static char scratch[PATH_MAX], libso[PATH_MAX], fixture_exe[PATH_MAX], double_dir[PATH_MAX];

/* --- layouts and the decoder (in process) ------------------------------------------ */

#define SAME_OFF(A, B, f) CHECK(offsetof(A, f) == offsetof(B, f))

static void test_layouts(void)
{
	struct xpl_cupti_layout L;

	CHECK(xpl_cupti_layout_for(19, &L) == 0 && L.major == 12 && L.kernel == 9 &&
	      L.memcpy == 5 && L.memset == 3);
	CHECK(xpl_cupti_layout_for(26, &L) == 0 && L.major == 12 && L.kernel == 9 &&
	      L.memcpy == 6 && L.memset == 4);
	CHECK(xpl_cupti_layout_for(28, &L) == 0 && L.major == 12);
	CHECK(xpl_cupti_layout_for(130000, &L) == 0 && L.major == 13 && L.kernel == 10 &&
	      L.kernel_bytes == sizeof(xpl_CUpti_ActivityKernel10));
	CHECK(xpl_cupti_layout_for(XPL_CUPTI_ABI_VERSION, &L) == 0 && L.major == 13);
	/* a 13.x minor newer than the transcription: refused, major known */
	CHECK(xpl_cupti_layout_for(130500, &L) == -2 && L.major == 13);
	CHECK(xpl_cupti_layout_for(130100, &L) == -2 && L.major == 13);
	CHECK(xpl_cupti_layout_for(130099, &L) == 0 && L.kernel == 10);
	CHECK(xpl_cupti_layout_for(18, &L) == -1 && L.major == 11);
	CHECK(xpl_cupti_layout_for(140000, &L) == -1 && L.major == 14);
	CHECK(xpl_cupti_layout_for(120500, &L) == -1);
	CHECK(xpl_cupti_layout_for(0, &L) == -1);

	/* every field the decoder reads sits at one offset in each struct */
	SAME_OFF(xpl_CUpti_ActivityKernel9, xpl_CUpti_ActivityKernel10, start);
	SAME_OFF(xpl_CUpti_ActivityKernel9, xpl_CUpti_ActivityKernel10, end);
	SAME_OFF(xpl_CUpti_ActivityKernel9, xpl_CUpti_ActivityKernel10, deviceId);
	SAME_OFF(xpl_CUpti_ActivityKernel9, xpl_CUpti_ActivityKernel10, contextId);
	SAME_OFF(xpl_CUpti_ActivityKernel9, xpl_CUpti_ActivityKernel10, streamId);
	SAME_OFF(xpl_CUpti_ActivityKernel9, xpl_CUpti_ActivityKernel10, correlationId);
	SAME_OFF(xpl_CUpti_ActivityKernel9, xpl_CUpti_ActivityKernel10, gridX);
	SAME_OFF(xpl_CUpti_ActivityKernel9, xpl_CUpti_ActivityKernel10, blockZ);
	SAME_OFF(xpl_CUpti_ActivityKernel9, xpl_CUpti_ActivityKernel10, name);
	SAME_OFF(xpl_CUpti_ActivityMemcpy5, xpl_CUpti_ActivityMemcpy6, copyKind);
	SAME_OFF(xpl_CUpti_ActivityMemcpy5, xpl_CUpti_ActivityMemcpy6, bytes);
	SAME_OFF(xpl_CUpti_ActivityMemcpy5, xpl_CUpti_ActivityMemcpy6, runtimeCorrelationId);
	SAME_OFF(xpl_CUpti_ActivityMemset3, xpl_CUpti_ActivityMemset4, value);
	SAME_OFF(xpl_CUpti_ActivityMemset3, xpl_CUpti_ActivityMemset4, correlationId);

	CHECK(xpl_cupti_memcpy_kind(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOD) ==
	      XPROBE_AGENT_MEMCPY_HTOD);
	CHECK(xpl_cupti_memcpy_kind(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOA) ==
	      XPROBE_AGENT_MEMCPY_HTOD);
	CHECK(xpl_cupti_memcpy_kind(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_ATOH) ==
	      XPROBE_AGENT_MEMCPY_DTOH);
	CHECK(xpl_cupti_memcpy_kind(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_DTOD) ==
	      XPROBE_AGENT_MEMCPY_DTOD);
	CHECK(xpl_cupti_memcpy_kind(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOH) ==
	      XPROBE_AGENT_MEMCPY_HTOH);
	CHECK(xpl_cupti_memcpy_kind(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_PTOP) ==
	      XPROBE_AGENT_MEMCPY_PTOP);
	CHECK(xpl_cupti_memcpy_kind(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN) == 0);
	CHECK(xpl_cupti_memcpy_kind(200) == 0);
}

static void test_decoder(void)
{
	struct xpl_cupti_layout L13, L12, L12old;
	xpl_CUpti_ActivityKernel10 k10;
	xpl_CUpti_ActivityKernel9 k9;
	xpl_CUpti_ActivityMemcpy5 m5;
	xpl_CUpti_ActivityMemset4 s4;
	xpl_CUpti_ActivityAPI api;
	struct xpl_cupti_act a;

	xpl_cupti_layout_for(130001, &L13);
	xpl_cupti_layout_for(28, &L12);
	xpl_cupti_layout_for(22, &L12old);
	memset(&k10, 0, sizeof(k10));
	k10.kind = XPL_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k10.start = 100;
	k10.end = 250;
	k10.deviceId = 3;
	k10.streamId = 9;
	k10.correlationId = 77;
	k10.gridX = 4;
	k10.blockX = 128;
	k10.name = "k";
	CHECK(xpl_cupti_decode(&L13, &k10, sizeof(k10), &a) == XPROBE_EV_CUDA_KERNEL);
	CHECK(a.start == 100 && a.end == 250 && a.device == 3 && a.stream == 9 && a.corr == 77 &&
	      a.grid[0] == 4 && a.block[0] == 128 && !strcmp(a.name, "k"));
	/* the same through CUDA 12's struct */
	memset(&k9, 0, sizeof(k9));
	k9.kind = XPL_CUPTI_ACTIVITY_KIND_KERNEL;
	k9.start = 5;
	k9.end = 6;
	k9.correlationId = 8;
	k9.name = "nine";
	CHECK(xpl_cupti_decode(&L12, &k9, sizeof(k9), &a) == XPROBE_EV_CUDA_KERNEL);
	CHECK(a.start == 5 && a.end == 6 && a.corr == 8 && !strcmp(a.name, "nine"));
	/* a record cut before the name pointer is refused; the kind alone too */
	CHECK(xpl_cupti_decode(&L13, &k10, offsetof(xpl_CUpti_ActivityKernel10, name), &a) == -1);
	CHECK(xpl_cupti_decode(&L13, &k10, 2, &a) == -1);
	memset(&m5, 0, sizeof(m5));
	m5.kind = XPL_CUPTI_ACTIVITY_KIND_MEMCPY;
	m5.copyKind = XPL_CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	m5.bytes = 4096;
	m5.start = 10;
	m5.end = 20;
	m5.correlationId = 1;
	m5.runtimeCorrelationId = 2;
	CHECK(xpl_cupti_decode(&L12old, &m5, sizeof(m5), &a) == XPROBE_EV_CUDA_MEMCPY);
	CHECK(a.bytes == 4096 && a.memcpy_kind == XPROBE_AGENT_MEMCPY_DTOH &&
	      a.raw_copy_kind == 2 && a.corr == 1 && a.rcorr == 2);
	memset(&s4, 0, sizeof(s4));
	s4.kind = XPL_CUPTI_ACTIVITY_KIND_MEMSET;
	s4.value = 0xab;
	s4.bytes = 64;
	s4.start = 1;
	s4.end = 2;
	CHECK(xpl_cupti_decode(&L13, &s4, sizeof(s4), &a) == XPROBE_EV_CUDA_MEMSET);
	CHECK(a.memset_value == 0xab && a.bytes == 64);
	/* a kind we do not read: 0, never guessed */
	memset(&api, 0, sizeof(api));
	api.kind = XPL_CUPTI_ACTIVITY_KIND_RUNTIME;
	CHECK(xpl_cupti_decode(&L13, &api, sizeof(api), &a) == 0);
	api.kind = (xpl_CUpti_ActivityKind)0x7fff;
	CHECK(xpl_cupti_decode(&L13, &api, sizeof(api), &a) == 0);
}

/* A stand-in for cuptiActivityGetNextRecord over a list of offsets. */
static const size_t *walk_offs;
static size_t walk_n;

static int walk_next(uint8_t *buf, size_t valid, void **rec)
{
	static size_t i;

	(void)valid;
	if (!*rec)
		i = 0;
	if (i >= walk_n)
		return XPL_CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = walk_offs[i] == (size_t)-1 ? NULL : buf + walk_offs[i];
	i++;
	return XPL_CUPTI_SUCCESS;
}

static uint64_t walk_kernels, walk_unknown;

static void walk_sink(void *arg, int type, const struct xpl_cupti_act *a)
{
	(void)arg;
	(void)a;
	if (type == XPROBE_EV_CUDA_KERNEL)
		walk_kernels++;
	else if (type == 0)
		walk_unknown++;
}

static void test_walker(void)
{
	static uint8_t buf[1024] __attribute__((aligned(8)));
	struct xpl_cupti_layout L;
	xpl_CUpti_ActivityKernel10 k;
	xpl_CUpti_ActivityAPI api;
	uint64_t bad = 0, n;
	size_t ok[] = { 0, 256, 512 }, outside[] = { 0, 2048 }, cut[] = { 0, 1024 - 64 },
	       odd[] = { 0, 4 };

	xpl_cupti_layout_for(130001, &L);
	memset(&k, 0, sizeof(k));
	k.kind = XPL_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1;
	k.end = 2;
	k.name = "w";
	memset(&api, 0, sizeof(api));
	api.kind = XPL_CUPTI_ACTIVITY_KIND_DRIVER;
	memcpy(buf, &k, sizeof(k));
	memcpy(buf + 256, &api, sizeof(api));
	memcpy(buf + 512, &k, sizeof(k));
	memcpy(buf + 1024 - 64, &k, 64);
	walk_offs = ok;
	walk_n = ARRAY_N(ok);
	n = xpl_cupti_walk(&L, walk_next, buf, sizeof(buf), walk_sink, NULL, &bad);
	CHECK(n == 3 && walk_kernels == 2 && walk_unknown == 1 && bad == 0);
	/* a record handed out past the valid bytes ends the walk */
	walk_offs = outside;
	walk_n = ARRAY_N(outside);
	walk_kernels = walk_unknown = bad = 0;
	n = xpl_cupti_walk(&L, walk_next, buf, sizeof(buf), walk_sink, NULL, &bad);
	CHECK(n == 1 && walk_kernels == 1 && bad == 1);
	/* one whose struct does not fit before the end */
	walk_offs = cut;
	walk_n = ARRAY_N(cut);
	walk_kernels = bad = 0;
	n = xpl_cupti_walk(&L, walk_next, buf, sizeof(buf), walk_sink, NULL, &bad);
	CHECK(n == 1 && walk_kernels == 1 && bad == 1);
	/* a misaligned one */
	walk_offs = odd;
	walk_n = ARRAY_N(odd);
	walk_kernels = bad = 0;
	n = xpl_cupti_walk(&L, walk_next, buf, sizeof(buf), walk_sink, NULL, &bad);
	CHECK(n == 1 && bad == 1);
	/* no buffer */
	CHECK(xpl_cupti_walk(&L, walk_next, NULL, 10, walk_sink, NULL, &bad) == 0);
}

/* --- the fixture ----------------------------------------------------------------------- */

struct cx {
	struct ap_fixture fx;
	char path[256];
	int fd;
};

/* Start the fixture with the CUDA @major double (0: no CUDA at all) and
 * @extra environment (NULL-terminated), "init", connect.  0 or -1. */
static int cx_start(struct cx *x, int major, const char *const *extra)
{
	static char env_pre[PATH_MAX + 16], env_ld[PATH_MAX + 32], env_major[32];
	const char *env[16];
	char line[512];
	long pid = 0;
	int n = 0;

	memset(x, 0, sizeof(*x));
	x->fd = -1;
	snprintf(env_pre, sizeof(env_pre), "LD_PRELOAD=%s", libso);
	snprintf(env_ld, sizeof(env_ld), "LD_LIBRARY_PATH=%s/%d", double_dir, major);
	snprintf(env_major, sizeof(env_major), "CUPTI_FIXTURE_MAJOR=%d", major);
	env[n++] = env_pre;
	env[n++] = env_ld;
	env[n++] = env_major;
	env[n++] = "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0";
	env[n++] = "TSAN_OPTIONS=halt_on_error=1:exitcode=66";
	for (size_t i = 0; extra && extra[i] && n < 15; i++)
		env[n++] = extra[i];
	env[n] = NULL;
	if (ap_fixture_start(&x->fx, fixture_exe, env) != 0 ||
	    ap_cmd(&x->fx, "init", line, sizeof(line)))
		return -1;
	if (sscanf(line, "READY %ld %255s", &pid, x->path) != 2 || pid != x->fx.pid) {
		fprintf(stderr, "fixture said: %s\n", line);
		return -1;
	}
	x->fd = ap_connect(x->path);
	return x->fd >= 0 ? 0 : -1;
}

static void cx_stop(struct cx *x)
{
	int st;

	if (x->fd >= 0)
		close(x->fd);
	st = ap_fixture_stop(&x->fx);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Send a command; the number after "DONE <cmd>" (-1 when it failed). */
static long cx_cmd(struct cx *x, const char *c)
{
	char line[512], word[64];
	long n = -1;

	if (ap_cmd(&x->fx, c, line, sizeof(line)) != 0)
		return -1;
	if (sscanf(line, "DONE %63s %ld", word, &n) != 2)
		return -1;
	return n;
}

static int cx_maps(struct cx *x)
{
	char line[64];
	int v = -1;

	if (ap_cmd(&x->fx, "maps", line, sizeof(line)) == 0)
		sscanf(line, "MAPS %d", &v);
	return v;
}

struct dstats {
	unsigned long long subscribed, callbacks, records, dropped, requested, refused, completed,
		kinds, flushes, tscb;
	bool loaded;
};

static void cx_stats(struct cx *x, struct dstats *s)
{
	char line[512];

	memset(s, 0, sizeof(*s));
	if (ap_cmd(&x->fx, "stats", line, sizeof(line)) == 0)
		s->loaded = sscanf(line, "STATS %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
				   &s->subscribed, &s->callbacks, &s->records, &s->dropped,
				   &s->requested, &s->refused, &s->completed, &s->kinds,
				   &s->flushes, &s->tscb) == 10;
}

/* An ARM request (mode, capacity) without filters. */
static void arm_req(struct xprobe_agent_req *q, uint32_t mode, uint64_t capacity)
{
	ap_arm(q, capacity);
	q->mode = mode;
}

static struct xprobe_agent_filter *add(struct xprobe_agent_req *q, uint32_t kind, uint32_t match,
				       const char *name)
{
	ap_filter(q, kind, match, name);
	return &q->filters[q->nfilters - 1];
}

static int rpc(struct cx *x, const struct xprobe_agent_req *q, struct ap_reply *r)
{
	if (ap_rpc(x->fd, q, r))
		return -100000;
	return r->h.status;
}

/* Records of @type in @r. */
static uint64_t count(const struct ap_reply *r, uint32_t type)
{
	const struct xprobe_record *rec;
	uint64_t n = 0;

	AP_FOR_EACH(r, rec)
	n += rec->type == type;
	return n;
}

static const struct xprobe_cuda_activity *act(const struct xprobe_record *rec)
{
	return (const struct xprobe_cuda_activity *)rec;
}

/* The kernel name of an activity record (NUL-terminated copy). */
static const char *kname(const struct xprobe_record *rec, char *buf, size_t size)
{
	size_t n = rec->name_len < size - 1 ? rec->name_len : size - 1;

	memcpy(buf, (const char *)rec + XPROBE_CUDA_ACTIVITY_SIZE, n);
	buf[n] = '\0';
	return buf;
}

/* --- loading -------------------------------------------------------------------------- */

static void test_loading(void)
{
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	struct dstats ds;
	struct cx x;

	if (cx_start(&x, 13, NULL)) {
		CHECK(!"fixture started");
		return;
	}
	/* CUDA mapped, calls made: still no CUPTI */
	CHECK(cx_cmd(&x, "launch 3 k_early 1000") == 3);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_HELLO, 0, &r) == 0);
	CHECK(!(r.h.features & XPROBE_AGENT_F_DEVICE_BACKEND));
	CHECK(r.h.cuda_major == 0 && r.h.cupti_major == 0);
	CHECK(cx_maps(&x) == 0);
	/* an NVTX-only capture does not load it either */
	ap_arm(&q, 10);
	ap_filter(&q, XPROBE_AGENT_KIND_NVTX_RANGE, XPROBE_AGENT_NAME_ANY, NULL);
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK(cx_maps(&x) == 0);
	cx_stats(&x, &ds);
	CHECK(!ds.loaded);
	/* a kernel filter does */
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 100);
	add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(r.h.features & XPROBE_AGENT_F_DEVICE_BACKEND);
	CHECK(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC);
	CHECK(r.h.cuda_major == 13 && r.h.cupti_major == 13);
	CHECK(cx_maps(&x) == 1);
	cx_stats(&x, &ds);
	CHECK(ds.loaded && ds.subscribed == 1 && ds.tscb == 1);
	CHECK(ds.kinds == 1ull << XPL_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	/* kernels before ARM were never recorded: activity was off */
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 0);
	cx_stats(&x, &ds);
	CHECK(ds.kinds == 0); /* disabled at STOP */
	/* HELLO after: the backend stays loaded */
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_HELLO, 0, &r) == 0);
	CHECK((r.h.features & XPROBE_AGENT_F_DEVICE_BACKEND) && r.h.cuda_major == 13);
	ap_reply_free(&r);
	cx_stop(&x);
}

/* --- kernels ---------------------------------------------------------------------------- */

/* ARM one kernel rule, run @cmd, STOP: the reply. */
static int kernel_run(struct cx *x, uint32_t match, const char *name, const char *const *cmds,
		      struct ap_reply *r)
{
	struct xprobe_agent_req q;
	int rc;

	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
	add(&q, XPROBE_AGENT_KIND_KERNEL, match, name);
	rc = rpc(x, &q, r);
	if (rc)
		return rc;
	for (size_t i = 0; cmds[i]; i++)
		CHECK(cx_cmd(x, cmds[i]) >= 0);
	return ap_simple(x->fd, XPROBE_AGENT_OP_STOP, 0, r);
}

static uint64_t kernels_named(const struct ap_reply *r, const char *name)
{
	const struct xprobe_record *rec;
	uint64_t n = 0;
	char buf[256];

	AP_FOR_EACH(r, rec)
	n += rec->type == XPROBE_EV_CUDA_KERNEL && !strcmp(kname(rec, buf, sizeof(buf)), name);
	return n;
}

static void test_kernels(void)
{
	static const char *const mix[] = { "launch 5 k_gemm 20000 4 2 1 128 1 1 3",
					   "launch 3 k_gemm_tail 1000", "launch 2 xk_gemm 1000",
					   "sync 2", NULL };
	char longname[201], cmd[300], buf[256];
	const char *const longcmd[] = { cmd, NULL };
	const struct xprobe_record *rec;
	struct ap_reply r = { 0 };
	uint64_t before, after, n;
	struct cx x;

	if (cx_start(&x, 13, NULL)) {
		CHECK(!"fixture started");
		return;
	}
	before = ap_now_ns();
	CHECK(kernel_run(&x, XPROBE_AGENT_NAME_EXACT, "k_gemm", mix, &r) == 0);
	after = ap_now_ns();
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_KERNEL), 5);
	CHECK_EQ_U64(r.h.nrecords, 5);
	CHECK(r.h.observed == 5 && r.h.retained == 5 && r.h.dropped == 0 && r.h.unknown == 0);
	CHECK(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC);
	CHECK(r.chunks_ok);
	n = 0;
	AP_FOR_EACH(&r, rec)
	{
		const struct xprobe_cuda_activity *a = act(rec);

		CHECK(rec->size == XPROBE_CUDA_ACTIVITY_SIZE + 8);
		CHECK(rec->tid == 0 && rec->flags == XPROBE_RECF_NAME_COMPLETE);
		CHECK_STR(kname(rec, buf, sizeof(buf)), "k_gemm");
		CHECK_EQ_U64(rec->a0 - rec->ts, 20000);
		CHECK(rec->ts >= before && rec->ts >= r.h.arm_ns && rec->a0 <= after);
		CHECK(rec->aux == 0 && rec->a1 == 0);
		CHECK(a->grid_x == 4 && a->grid_y == 2 && a->grid_z == 1 && a->block_x == 128 &&
		      a->block_y == 1 && a->block_z == 1);
		CHECK(a->stream_id == 3 && a->context_id == 1 && a->correlation_id != 0);
		CHECK(a->bytes == 0 && a->memcpy_kind == 0 && a->reserved == 0);
		n++;
	}
	CHECK_EQ_U64(n, 5);
	CHECK(kernel_run(&x, XPROBE_AGENT_NAME_PREFIX, "k_gemm", mix, &r) == 0);
	CHECK(kernels_named(&r, "k_gemm") == 5 && kernels_named(&r, "k_gemm_tail") == 3 &&
	      r.h.nrecords == 8);
	CHECK(kernel_run(&x, XPROBE_AGENT_NAME_SUFFIX, "gemm", mix, &r) == 0);
	CHECK(kernels_named(&r, "k_gemm") == 5 && kernels_named(&r, "xk_gemm") == 2 &&
	      r.h.nrecords == 7);
	CHECK(kernel_run(&x, XPROBE_AGENT_NAME_CONTAINS, "_gemm_", mix, &r) == 0);
	CHECK(r.h.nrecords == 3 && r.h.observed == 3);
	CHECK(kernel_run(&x, XPROBE_AGENT_NAME_ANY, NULL, mix, &r) == 0);
	CHECK(r.h.nrecords == 10 && count(&r, XPROBE_EV_CUDA_API_ENTRY) == 0);
	/* a 200-byte name: kept 127 bytes, not complete; exact never, prefix does */
	memset(longname, 'q', 200);
	longname[200] = '\0';
	snprintf(cmd, sizeof(cmd), "launch 2 %s 500", longname);
	CHECK(kernel_run(&x, XPROBE_AGENT_NAME_EXACT, longname + 73, longcmd, &r) == 0);
	CHECK(r.h.nrecords == 0);
	CHECK(kernel_run(&x, XPROBE_AGENT_NAME_PREFIX, "qqqq", longcmd, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 2);
	AP_FOR_EACH(&r, rec)
	{
		CHECK(rec->name_len == XPROBE_NAME_MAX && rec->flags == 0);
		CHECK(rec->size == XPROBE_RECORD_MAX_SIZE);
	}
	ap_reply_free(&r);
	cx_stop(&x);
}

/* --- API callbacks and correlation ------------------------------------------------------ */

/* The API entry records' correlation ids in @r (up to @max). */
static size_t entries(const struct ap_reply *r, const char *name, uint32_t domain, uint64_t *ids,
		      size_t max)
{
	const struct xprobe_record *rec;
	size_t n = 0;
	char buf[256];

	AP_FOR_EACH(r, rec)
	{
		if (rec->type != XPROBE_EV_CUDA_API_ENTRY ||
		    strcmp(ap_name(rec, buf, sizeof(buf)), name) || (uint32_t)rec->a1 != domain)
			continue;
		/* the call's context, as its activity records name it (the double's: 1) */
		CHECK(rec->a1 >> 32 == 1 && (rec->flags & XPROBE_RECF_CONTEXT));
		if (n < max)
			ids[n] = rec->a0;
		n++;
	}
	return n;
}

static const struct xprobe_record *by_corr(const struct ap_reply *r, uint32_t type, uint64_t id,
					   bool runtime)
{
	const struct xprobe_record *rec;

	AP_FOR_EACH(r, rec)
	if (rec->type == type &&
	    (runtime ? act(rec)->runtime_correlation_id : act(rec)->correlation_id) == id)
		return rec;
	return NULL;
}

static const struct xprobe_record *api_rec(const struct ap_reply *r, uint32_t type, uint64_t id)
{
	const struct xprobe_record *rec;

	AP_FOR_EACH(r, rec)
	if (rec->type == type && rec->a0 == id)
		return rec;
	return NULL;
}

static void test_api(void)
{
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	struct xprobe_agent_filter *f;
	uint64_t ids[64];
	size_t n;
	struct cx x;

	if (cx_start(&x, 13, NULL)) {
		CHECK(!"fixture started");
		return;
	}
	/* runtime cudaLaunchKernel (exact: not the _ptsz variant) + kernels */
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
	f = add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cudaLaunchKernel");
	f->api_domain = XPROBE_AGENT_API_RUNTIME;
	add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "launch 4 k_a 3000") == 4);
	CHECK(cx_cmd(&x, "ptsz 2 k_b 3000") == 2);
	CHECK(cx_cmd(&x, "drv 1 k_c 3000") == 1);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	n = entries(&r, "cudaLaunchKernel", XPROBE_CUDA_DOMAIN_RUNTIME, ids, ARRAY_N(ids));
	CHECK_EQ_U64(n, 4);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_API_ENTRY), 4);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_API_EXIT), 4);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_KERNEL), 7);
	for (size_t i = 0; i < n && i < ARRAY_N(ids); i++) {
		const struct xprobe_record *k = by_corr(&r, XPROBE_EV_CUDA_KERNEL, ids[i], false);
		const struct xprobe_record *en = api_rec(&r, XPROBE_EV_CUDA_API_ENTRY, ids[i]);
		const struct xprobe_record *ex = api_rec(&r, XPROBE_EV_CUDA_API_EXIT, ids[i]);
		char buf[64];

		CHECK(k && en && ex);
		if (!k || !en || !ex)
			continue;
		CHECK_STR(kname(k, buf, sizeof(buf)), "k_a");
		CHECK(en->ts <= k->ts && en->ts <= ex->ts && en->tid == ex->tid && en->tid != 0);
		CHECK(en->aux == XPL_CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
		CHECK(en->flags == (XPROBE_RECF_NAME_COMPLETE | XPROBE_RECF_CONTEXT) && en->name_len == 16);
	}
	CHECK(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC);

	/* driver cuLaunchKernel; any domain "cuCtxSynchronize" matches
	 * cuCtxSynchronize and cuCtxSynchronize_v2 once stripped */
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
	f = add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cuLaunchKernel");
	f->api_domain = XPROBE_AGENT_API_DRIVER;
	add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cuCtxSynchronize");
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "drv 3 d_k 1000") == 3);
	CHECK(cx_cmd(&x, "launch 2 r_k 1000") == 2);
	CHECK(cx_cmd(&x, "sync 2") == 2);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(entries(&r, "cuLaunchKernel", XPROBE_CUDA_DOMAIN_DRIVER, ids, ARRAY_N(ids)),
		     3);
	CHECK_EQ_U64(entries(&r, "cuCtxSynchronize", XPROBE_CUDA_DOMAIN_DRIVER, ids, ARRAY_N(ids)),
		     2);
	{
		const struct xprobe_record *s = api_rec(&r, XPROBE_EV_CUDA_API_ENTRY, ids[0]);

		CHECK(s && s->aux == XPL_CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2);
	}
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_KERNEL), 0);
	CHECK_EQ_U64(r.h.nrecords, 10);

	/* a prefix admits every launch form */
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
	add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_PREFIX, "cudaLaunchKernel");
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "launch 1 k 100") == 1 && cx_cmd(&x, "ptsz 1 k 100") == 1);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_API_ENTRY), 2);

	/* copies: the runtime call's id is the record's runtime_correlation_id,
	 * the driver call's its correlation_id; HtoD only (HtoA is HtoD) */
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
	add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_PREFIX, "cu");
	f = add(&q, XPROBE_AGENT_KIND_MEMCPY, XPROBE_AGENT_NAME_ANY, NULL);
	f->memcpy_kind = XPROBE_AGENT_MEMCPY_HTOD;
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "memcpy 2 1 4194304 7000") == 2);
	CHECK(cx_cmd(&x, "memcpy 1 2 4194304 7000") == 1);
	CHECK(cx_cmd(&x, "memcpy 1 3 512 100") == 1);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_MEMCPY), 3);
	n = entries(&r, "cudaMemcpy", XPROBE_CUDA_DOMAIN_RUNTIME, ids, ARRAY_N(ids));
	CHECK_EQ_U64(n, 4);
	for (size_t i = 0; i < 2 && i < n; i++) {
		const struct xprobe_record *m = by_corr(&r, XPROBE_EV_CUDA_MEMCPY, ids[i], true);

		CHECK(m != NULL);
		if (!m)
			continue;
		CHECK(act(m)->memcpy_kind == XPROBE_AGENT_MEMCPY_HTOD &&
		      act(m)->raw_copy_kind == 1);
		CHECK(act(m)->bytes == 4194304 && m->a0 - m->ts == 7000 && m->name_len == 0);
		CHECK(m->size == XPROBE_CUDA_ACTIVITY_SIZE && m->flags == 0);
		/* its correlation id is the driver call's, recorded too */
		CHECK(api_rec(&r, XPROBE_EV_CUDA_API_ENTRY, act(m)->correlation_id) != NULL);
		CHECK(act(m)->correlation_id != act(m)->runtime_correlation_id);
	}
	CHECK_EQ_U64(entries(&r, "cuMemcpyHtoD", XPROBE_CUDA_DOMAIN_DRIVER, ids, ARRAY_N(ids)), 4);

	/* sets */
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
	f = add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cudaMemset");
	add(&q, XPROBE_AGENT_KIND_MEMSET, XPROBE_AGENT_NAME_ANY, NULL);
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "memset 2 7 1024 300") == 2);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_MEMSET), 2);
	n = entries(&r, "cudaMemset", XPROBE_CUDA_DOMAIN_RUNTIME, ids, ARRAY_N(ids));
	CHECK_EQ_U64(n, 2);
	for (size_t i = 0; i < n && i < 2; i++) {
		const struct xprobe_record *m = by_corr(&r, XPROBE_EV_CUDA_MEMSET, ids[i], false);

		CHECK(m && act(m)->memset_value == 7 && act(m)->bytes == 1024 &&
		      m->a0 - m->ts == 300);
	}

	/* names no callback has: refused, nothing armed */
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 10);
	add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cudaNoSuchCall");
	CHECK(rpc(&x, &q, &r) == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(r.h.state == XPROBE_AGENT_FAILED && strstr(r.h.message, "cudaNoSuchCall"));
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 10);
	f = add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cuLaunchKernel");
	f->api_domain = XPROBE_AGENT_API_RUNTIME;
	CHECK(rpc(&x, &q, &r) == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(strstr(r.h.message, "runtime") != NULL);
	/* the refusals left nothing enabled: a fresh ARM works */
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 10);
	add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cudaDeviceSynchronize");
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "sync 1") == 1);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 2);
	ap_reply_free(&r);
	cx_stop(&x);
}

/* Every callback delivered (as if the whole domain were enabled): the
 * bitmap admits only the ARM's callback ids. */
static void test_filter_all_delivered(void)
{
	static const char *const all[] = { "XPD_DELIVER_ALL=1", NULL };
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	struct dstats ds;
	uint64_t ids[8];
	struct cx x;

	if (cx_start(&x, 13, all)) {
		CHECK(!"fixture started");
		return;
	}
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
	add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cudaLaunchKernel");
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "sync 3") == 3);
	CHECK(cx_cmd(&x, "launch 2 k 10") == 2);
	CHECK(cx_cmd(&x, "memcpy 1 1 64 10") == 1);
	cx_stats(&x, &ds);
	CHECK(ds.callbacks == 2 * (6 + 2 + 2)); /* every one reached our callback */
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 4);
	CHECK_EQ_U64(r.h.observed, 4);
	CHECK(entries(&r, "cudaLaunchKernel", XPROBE_CUDA_DOMAIN_RUNTIME, ids, 8) == 2);
	/* after STOP nothing is admitted, though CUPTI still calls */
	CHECK(cx_cmd(&x, "launch 2 k 10") == 2);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_HELLO, 0, &r) == 0);
	CHECK(r.h.state == XPROBE_AGENT_STOPPED && r.h.observed == 4);
	ap_reply_free(&r);
	cx_stop(&x);
}

/* --- <<<>>> launches ---------------------------------------------------------------------- */

/* API entries of @r whose kernel (by correlation id) is named @kernel. */
static uint64_t entries_with_kernel(const struct ap_reply *r, const char *kernel)
{
	const struct xprobe_record *rec;
	uint64_t n = 0;
	char buf[64];

	AP_FOR_EACH(r, rec)
	{
		const struct xprobe_record *k;

		if (rec->type != XPROBE_EV_CUDA_API_ENTRY)
			continue;
		k = by_corr(r, XPROBE_EV_CUDA_KERNEL, rec->a0, false);
		n += k && !strcmp(kname(k, buf, sizeof(buf)), kernel);
	}
	return n;
}

/* nvcc 13 compiles kernel<<<>>>() to __cudaLaunchKernel, which CUPTI
 * reports under its own callback id; nvcc 12 to cudaLaunchKernel. */
static void test_chevron(void)
{
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	struct xprobe_agent_filter *f;
	const struct xprobe_record *rec;
	uint64_t ids[8];
	struct cx x;

	if (cx_start(&x, 13, NULL) == 0) {
		/* the runtime's __cudaLaunchKernel, by its stripped name */
		arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
		f = add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT,
			"__cudaLaunchKernel");
		f->api_domain = XPROBE_AGENT_API_RUNTIME;
		add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
		CHECK(rpc(&x, &q, &r) == 0);
		CHECK(cx_cmd(&x, "chevron 3 k_chev 2000") == 3);
		CHECK(cx_cmd(&x, "launch 2 k_call 2000") == 2);
		CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
		CHECK_EQ_U64(entries(&r, "__cudaLaunchKernel", XPROBE_CUDA_DOMAIN_RUNTIME, ids,
				     ARRAY_N(ids)),
			     3);
		CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_API_ENTRY), 3);
		CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_API_EXIT), 3);
		CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_KERNEL), 5);
		/* each entry's correlation id is its kernel's */
		CHECK_EQ_U64(entries_with_kernel(&r, "k_chev"), 3);
		AP_FOR_EACH(&r, rec)
		if (rec->type == XPROBE_EV_CUDA_API_ENTRY)
			CHECK(rec->aux == XPL_CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 &&
			      rec->name_len == 18 &&
			      rec->flags == (XPROBE_RECF_NAME_COMPLETE | XPROBE_RECF_CONTEXT));

		/* cudaLaunchKernel sees the explicit calls only, no chevron */
		arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
		f = add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT,
			"cudaLaunchKernel");
		f->api_domain = XPROBE_AGENT_API_RUNTIME;
		add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
		CHECK(rpc(&x, &q, &r) == 0);
		CHECK(cx_cmd(&x, "chevron 3 k_chev 2000") == 3);
		CHECK(cx_cmd(&x, "launch 2 k_call 2000") == 2);
		CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
		CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_API_ENTRY), 2);
		CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_KERNEL), 5);
		CHECK_EQ_U64(entries_with_kernel(&r, "k_call"), 2);
		CHECK_EQ_U64(entries_with_kernel(&r, "k_chev"), 0);

		/* a suffix rule reaches both */
		arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
		add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_SUFFIX, "cudaLaunchKernel");
		CHECK(rpc(&x, &q, &r) == 0);
		CHECK(cx_cmd(&x, "chevron 1 k_chev 10") == 1 && cx_cmd(&x, "launch 1 k 10") == 1);
		CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
		CHECK_EQ_U64(entries(&r, "__cudaLaunchKernel", XPROBE_CUDA_DOMAIN_RUNTIME, ids, 8),
			     1);
		CHECK_EQ_U64(entries(&r, "cudaLaunchKernel", XPROBE_CUDA_DOMAIN_RUNTIME, ids, 8),
			     1);
		cx_stop(&x);
	} else {
		CHECK(!"fixture started");
	}

	/* CUDA 12: no __cudaLaunchKernel callback; a chevron is cudaLaunchKernel */
	if (cx_start(&x, 12, NULL) == 0) {
		arm_req(&q, XPROBE_AGENT_MODE_EXACT, 10);
		add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "__cudaLaunchKernel");
		CHECK(rpc(&x, &q, &r) == -XPROBE_E_INVALID_EVENT_SELECTOR);
		CHECK(strstr(r.h.message, "__cudaLaunchKernel") != NULL);
		arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
		add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cudaLaunchKernel");
		add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
		CHECK(rpc(&x, &q, &r) == 0);
		CHECK(cx_cmd(&x, "chevron 2 k_chev 2000") == 2);
		CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
		CHECK_EQ_U64(entries(&r, "cudaLaunchKernel", XPROBE_CUDA_DOMAIN_RUNTIME, ids, 8),
			     2);
		CHECK_EQ_U64(entries_with_kernel(&r, "k_chev"), 2);
		AP_FOR_EACH(&r, rec)
		if (rec->type == XPROBE_EV_CUDA_API_ENTRY)
			CHECK(rec->aux == XPL_CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
		cx_stop(&x);
	} else {
		CHECK(!"fixture started");
	}
	ap_reply_free(&r);
}

/* --- before ARM -------------------------------------------------------------------------- */

static void test_before_arm(void)
{
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	struct cx x;

	if (cx_start(&x, 13, NULL)) {
		CHECK(!"fixture started");
		return;
	}
	/* load the backend first, so the in-flight call sees CUPTI */
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 10);
	add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	/* a call entered before ARM and left after: no record at all */
	CHECK(cx_cmd(&x, "bg_slow_sync 300") == 1);
	usleep(50000);
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 100);
	add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cudaDeviceSynchronize");
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "join") == 1);
	CHECK(cx_cmd(&x, "sync 2") == 2);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_API_ENTRY), 2);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_API_EXIT), 2);
	CHECK_EQ_U64(r.h.observed, 4);

	/* kernels that began before ARM: excluded, not observed; 0.5 s before
	 * keeps the clock trusted, 1.5 s before (the kind was off until this
	 * ARM: nothing that old can be real) does not */
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 100);
	add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "backdate k_old 1000 500000000") == 1);
	CHECK(cx_cmd(&x, "launch 2 k_new 1000") == 2);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK(r.h.nrecords == 2 && kernels_named(&r, "k_new") == 2 && r.h.observed == 2);
	CHECK(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC);
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "backdate k_old 1000 1500000000") == 1);
	CHECK(cx_cmd(&x, "launch 1 k_new 1000") == 1);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK(r.h.nrecords == 1 && kernels_named(&r, "k_new") == 1);
	CHECK(!(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC));
	/* the next capture starts trusted again */
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	ap_reply_free(&r);
	cx_stop(&x);
}

/* --- clocks -------------------------------------------------------------------------------- */

/* ARM API + kernels, launch, STOP under @env: the reply. */
static void clock_run(const char *const *env, struct ap_reply *r, struct dstats *ds)
{
	struct xprobe_agent_req q;
	struct cx x;

	if (cx_start(&x, 13, env)) {
		CHECK(!"fixture started");
		return;
	}
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 100);
	add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cudaLaunchKernel");
	add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
	CHECK(rpc(&x, &q, r) == 0);
	usleep(20000);
	CHECK(cx_cmd(&x, "launch 3 k_t 40000") == 3);
	cx_stats(&x, ds);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, r) == 0);
	cx_stop(&x);
}

static void test_clocks(void)
{
	static const char *const no_cb[] = { "XPD_NO_TSCB=1", NULL };
	static const char *const ahead[] = { "XPD_SKEW_NS=5000000000", NULL };
	static const char *const behind[] = { "XPD_NO_TSCB=1", "XPD_SKEW_NS=-5000000000", NULL };
	static const char *const early[] = { "XPD_SKEW_NS=-5000000", NULL };
	const struct xprobe_record *rec;
	struct ap_reply r = { 0 };
	struct dstats ds;
	uint64_t stop;

	/* the timestamp callback: CLOCK_MONOTONIC, exact */
	clock_run(NULL, &r, &ds);
	stop = ap_now_ns();
	CHECK(ds.tscb == 1);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_KERNEL), 3);
	CHECK(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC);
	AP_FOR_EACH(&r, rec)
	if (rec->type == XPROBE_EV_CUDA_KERNEL)
		CHECK(rec->ts >= r.h.arm_ns + 20 * MS && rec->a0 <= stop &&
		      rec->a0 - rec->ts == 40000);
	/* no callback (CUPTI's CLOCK_REALTIME): the calibrated offset */
	clock_run(no_cb, &r, &ds);
	stop = ap_now_ns();
	CHECK(ds.tscb == 0);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_KERNEL), 3);
	CHECK(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC);
	AP_FOR_EACH(&r, rec)
	if (rec->type == XPROBE_EV_CUDA_KERNEL) {
		/* within a millisecond of where the launch was */
		CHECK(rec->ts + MS >= r.h.arm_ns + 20 * MS && rec->ts <= stop + MS);
		CHECK_EQ_U64(rec->a0 - rec->ts, 40000);
	}
	/* activity 5 s in the future: kept, the clock not trusted */
	clock_run(ahead, &r, &ds);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_KERNEL), 3);
	CHECK(!(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC));
	/* 5 s in the past: nothing is after ARM, and the clock is not trusted */
	clock_run(behind, &r, &ds);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_KERNEL), 0);
	CHECK(!(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC));
	/* kernels 5 ms before the API entries that launched them */
	clock_run(early, &r, &ds);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_KERNEL), 3);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_API_ENTRY), 3);
	CHECK(!(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC));
	ap_reply_free(&r);
}

/* --- drops, limits, unknown kinds ----------------------------------------------------------------- */

static void test_drops(void)
{
	static const char *const hold[] = { "XPD_HOLD=1", "XPD_RECS_PER_BUFFER=10", NULL };
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	struct dstats ds;
	struct cx x;

	if (cx_start(&x, 13, hold)) {
		CHECK(!"fixture started");
		return;
	}
	/* 16 pool buffers of 10 records, none handed back before a flush:
	 * 160 recorded, 140 dropped by CUPTI and counted */
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 1000);
	add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "launch 300 k 100") == 300);
	cx_stats(&x, &ds);
	CHECK(ds.records == 160 && ds.dropped == 140 && ds.refused > 0);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_SNAPSHOT, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 160);
	CHECK(r.h.retained == 160 && r.h.dropped == 140 && r.h.observed == 300);
	/* the flush gave the buffers back: recording goes on */
	CHECK(cx_cmd(&x, "launch 5 k 100") == 5);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 160, &r) == 0);
	CHECK(r.h.nrecords == 5 && r.h.offset == 160 && r.h.retained == 165);
	ap_reply_free(&r);
	cx_stop(&x);
}

static void test_limit_unknown(void)
{
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	struct cx x;

	if (cx_start(&x, 13, NULL)) {
		CHECK(!"fixture started");
		return;
	}
	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 10);
	add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cudaLaunchKernel");
	add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "launch 25 k 100") == 25);
	CHECK(cx_cmd(&x, "unknown 4") == 4);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK(r.h.state == XPROBE_AGENT_STOPPED &&
	      r.h.stop_reason == XPROBE_AGENT_STOP_RECORD_LIMIT);
	/* 5 entry/exit pairs fit; the other 20 entries and the 25 kernels
	 * (delivered at STOP) find no room; the exits of entries that found
	 * none are not admitted (as the end of an NVTX range whose start was
	 * not), so they are not counted */
	CHECK(r.h.retained == 10 && r.h.nrecords == 10);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_API_ENTRY), 5);
	CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_API_EXIT), 5);
	CHECK_EQ_U64(r.h.dropped, 20 + 25);
	CHECK_EQ_U64(r.h.observed, 55);
	CHECK_EQ_U64(r.h.unknown, 4);
	ap_reply_free(&r);
	cx_stop(&x);
}

/* --- aggregate ---------------------------------------------------------------------------------- */

static const struct xprobe_agent_group *group(const struct ap_reply *r, uint32_t kind,
					      uint32_t device, const char *name)
{
	const struct xprobe_agent_group *g = (const void *)r->recs;
	size_t n = r->len / sizeof(*g);

	for (size_t i = 0; i < n; i++)
		if (g[i].kind == kind && g[i].device == device &&
		    (!name ||
		     (g[i].name_len == strlen(name) && !memcmp(g[i].name, name, g[i].name_len))))
			return &g[i];
	return NULL;
}

static void test_aggregate(void)
{
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	const struct xprobe_agent_group *g;
	char longname[201], cmd[300];
	struct cx x;

	if (cx_start(&x, 13, NULL)) {
		CHECK(!"fixture started");
		return;
	}
	memset(longname, 'z', 200);
	longname[200] = '\0';
	arm_req(&q, XPROBE_AGENT_MODE_AGGREGATE, 8);
	add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
	add(&q, XPROBE_AGENT_KIND_MEMCPY, XPROBE_AGENT_NAME_ANY, NULL);
	CHECK(rpc(&x, &q, &r) == 0);
	CHECK(cx_cmd(&x, "launch 5 ka 1000") == 5);
	CHECK(cx_cmd(&x, "launch 3 kb 3000") == 3);
	snprintf(cmd, sizeof(cmd), "launch 2 %s 10", longname);
	CHECK(cx_cmd(&x, cmd) == 2);
	CHECK(cx_cmd(&x, "memcpy 2 1 4194304 500") == 2);
	CHECK(cx_cmd(&x, "memcpy 1 2 100 50") == 1);
	CHECK(cx_cmd(&x, "device 1") == 1);
	CHECK(cx_cmd(&x, "launch 1 ka 7000") == 1);
	CHECK(cx_cmd(&x, "memset 4 0 8 8") == 4); /* not a filter's: ignored */
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_SNAPSHOT, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 6);
	CHECK(r.len == 6 * sizeof(struct xprobe_agent_group) && r.h.bytes == r.len);
	CHECK(r.h.retained == 6 && r.h.observed == 14 && r.h.dropped == 0 && r.h.capacity == 8);
	g = group(&r, XPROBE_AGENT_KIND_KERNEL, 0, "ka");
	CHECK(g && g->count == 5 && g->total_ns == 5000 && g->min_ns == 1000 && g->max_ns == 1000 &&
	      g->bytes == 0 && g->flags == XPROBE_RECF_NAME_COMPLETE);
	g = group(&r, XPROBE_AGENT_KIND_KERNEL, 1, "ka");
	CHECK(g && g->count == 1 && g->total_ns == 7000);
	g = group(&r, XPROBE_AGENT_KIND_KERNEL, 0, "kb");
	CHECK(g && g->count == 3 && g->total_ns == 9000);
	longname[XPROBE_NAME_MAX] = '\0';
	g = group(&r, XPROBE_AGENT_KIND_KERNEL, 0, longname);
	CHECK(g && g->count == 2 && g->flags == 0 && g->name_len == XPROBE_NAME_MAX);
	g = group(&r, XPROBE_AGENT_KIND_MEMCPY, 0, "");
	CHECK(g && g->memcpy_kind == XPROBE_AGENT_MEMCPY_HTOD && g->count == 2 &&
	      g->bytes == 8388608 && g->total_ns == 1000);
	/* the groups in the order first seen: ka is group 0, offsets select */
	CHECK(r.len >= sizeof(*g) &&
	      ((const struct xprobe_agent_group *)(void *)r.recs)->name[0] == 'k');
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_SNAPSHOT, 4, &r) == 0);
	CHECK(r.h.nrecords == 2 && r.h.offset == 4);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_SNAPSHOT, 7, &r) == -XPROBE_E_INVALID_ARGUMENT);
	/* a full table: new keys dropped, known ones still grow */
	CHECK(cx_cmd(&x, "device 0") == 0);
	CHECK(cx_cmd(&x, "launch 1 kc 1") == 1 && cx_cmd(&x, "launch 1 kd 1") == 1);
	CHECK(cx_cmd(&x, "launch 2 ke 1") == 2 && cx_cmd(&x, "launch 1 ka 1000") == 1);
	CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK(r.h.state == XPROBE_AGENT_STOPPED &&
	      r.h.stop_reason == XPROBE_AGENT_STOP_RECORD_LIMIT);
	CHECK(r.h.retained == 8 && r.h.nrecords == 8 && r.h.dropped == 2);
	CHECK_EQ_U64(r.h.observed, 14 + 5);
	g = group(&r, XPROBE_AGENT_KIND_KERNEL, 0, "ka");
	CHECK(g && g->count == 6);
	CHECK(group(&r, XPROBE_AGENT_KIND_KERNEL, 0, "ke") == NULL);
	ap_reply_free(&r);
	cx_stop(&x);
}

/* --- refusals, majors, CUDA 12 ------------------------------------------------------------------ */

static int arm_kernels(struct cx *x, struct ap_reply *r)
{
	struct xprobe_agent_req q;

	arm_req(&q, XPROBE_AGENT_MODE_EXACT, 100);
	add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
	return rpc(x, &q, r);
}

static void test_refusals(void)
{
	static const char *const busy[] = { "XPD_BUSY=1", NULL };
	static const char *const v11[] = { "XPD_VERSION=18", NULL };
	static const char *const newer[] = { "XPD_VERSION=130500", NULL };
	static const char *const nodriver[] = { "XPD_SUBSCRIBE_RESULT=999", NULL };
	static const char *const privs[] = { "XPD_SUBSCRIBE_RESULT=35", NULL };
	static const char *const odd[] = { "XPD_SUBSCRIBE_RESULT=4242", NULL };
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	struct dstats ds;
	char cmd[PATH_MAX + 16];
	struct cx x;

	/* another subscriber: an explicit error, nothing enabled */
	if (cx_start(&x, 13, busy) == 0) {
		CHECK(arm_kernels(&x, &r) == -XPROBE_E_CUPTI_NOT_AVAILABLE);
		CHECK(r.h.state == XPROBE_AGENT_FAILED && strstr(r.h.message, "another tool"));
		CHECK(!(r.h.features & XPROBE_AGENT_F_DEVICE_BACKEND));
		cx_stats(&x, &ds);
		CHECK(ds.loaded && ds.kinds == 0 && ds.subscribed == 0);
		/* retried, still refused */
		CHECK(arm_kernels(&x, &r) == -XPROBE_E_CUPTI_NOT_AVAILABLE);
		cx_stop(&x);
	} else {
		CHECK(!"fixture started");
	}
	/* CUPTI's refusals by name, number and usual cause, never a bare number */
	if (cx_start(&x, 13, nodriver) == 0) {
		CHECK(arm_kernels(&x, &r) == -XPROBE_E_CUPTI_NOT_AVAILABLE);
		CHECK(strstr(r.h.message, "CUPTI_ERROR_UNKNOWN (CUPTI result 999)") != NULL);
		CHECK(strstr(r.h.message, "no NVIDIA driver") != NULL);
		cx_stop(&x);
	}
	if (cx_start(&x, 13, privs) == 0) {
		CHECK(arm_kernels(&x, &r) == -XPROBE_E_CUPTI_NOT_AVAILABLE);
		CHECK(strstr(r.h.message, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (CUPTI result 35)"));
		CHECK(strstr(r.h.message, "NVreg_RestrictProfilingToAdminUsers") != NULL);
		cx_stop(&x);
	}
	if (cx_start(&x, 13, odd) == 0) {
		CHECK(arm_kernels(&x, &r) == -XPROBE_E_CUPTI_NOT_AVAILABLE);
		CHECK(strstr(r.h.message, "(CUPTI result 4242)") != NULL);
		cx_stop(&x);
	}
	/* a CUPTI of CUDA 11 behind libcupti.so.13 */
	if (cx_start(&x, 13, v11) == 0) {
		CHECK(arm_kernels(&x, &r) == -XPROBE_E_UNSUPPORTED_CUDA_VERSION);
		CHECK(strstr(r.h.message, "CUDA 11") != NULL);
		cx_stop(&x);
	}
	/* a CUPTI newer than our headers: activity refused, API callbacks fine */
	if (cx_start(&x, 13, newer) == 0) {
		CHECK(arm_kernels(&x, &r) == -XPROBE_E_UNSUPPORTED_CUDA_VERSION);
		CHECK(strstr(r.h.message, "130500") != NULL);
		arm_req(&q, XPROBE_AGENT_MODE_EXACT, 100);
		add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cudaLaunchKernel");
		CHECK(rpc(&x, &q, &r) == 0);
		CHECK(cx_cmd(&x, "launch 2 k 10") == 2);
		CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
		CHECK_EQ_U64(r.h.nrecords, 4);
		cx_stop(&x);
	}
	/* a runtime of CUDA 11 */
	if (cx_start(&x, 11, NULL) == 0) {
		CHECK(arm_kernels(&x, &r) == -XPROBE_E_UNSUPPORTED_CUDA_VERSION);
		CHECK(strstr(r.h.message, "CUDA 11") != NULL);
		CHECK(cx_maps(&x) == 0);
		cx_stop(&x);
	}
	/* two runtimes of two majors */
	if (cx_start(&x, 13, NULL) == 0) {
		snprintf(cmd, sizeof(cmd), "load %s/12", double_dir);
		CHECK(cx_cmd(&x, cmd) == 1);
		CHECK(arm_kernels(&x, &r) == -XPROBE_E_UNSUPPORTED_CUDA_VERSION);
		CHECK(strstr(r.h.message, "both mapped") != NULL);
		CHECK(cx_maps(&x) == 0);
		cx_stop(&x);
	}
	/* loaded for 13, then a 12 runtime appears: the next ARM is refused */
	if (cx_start(&x, 13, NULL) == 0) {
		CHECK(arm_kernels(&x, &r) == 0);
		CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
		snprintf(cmd, sizeof(cmd), "load %s/12", double_dir);
		CHECK(cx_cmd(&x, cmd) == 1);
		CHECK(arm_kernels(&x, &r) == -XPROBE_E_UNSUPPORTED_CUDA_VERSION);
		cx_stop(&x);
	}
	ap_reply_free(&r);
}

static void test_cuda12(void)
{
	static const char *const v22[] = { "XPD_VERSION=22", NULL };
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	const struct xprobe_record *rec;
	struct cx x;

	for (int k = 0; k < 2; k++) {
		if (cx_start(&x, 12, k ? v22 : NULL)) {
			CHECK(!"fixture started");
			continue;
		}
		arm_req(&q, XPROBE_AGENT_MODE_EXACT, 100);
		add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_EXACT, "k12");
		add(&q, XPROBE_AGENT_KIND_MEMSET, XPROBE_AGENT_NAME_ANY, NULL);
		CHECK(rpc(&x, &q, &r) == 0);
		CHECK(r.h.cuda_major == 12 && r.h.cupti_major == 12);
		CHECK(cx_cmd(&x, "launch 3 k12 900 2 2 2 32 4 1") == 3);
		CHECK(cx_cmd(&x, "memset 2 9 77 30") == 2);
		CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
		CHECK_EQ_U64(kernels_named(&r, "k12"), 3);
		CHECK_EQ_U64(count(&r, XPROBE_EV_CUDA_MEMSET), 2);
		AP_FOR_EACH(&r, rec)
		{
			if (rec->type == XPROBE_EV_CUDA_KERNEL)
				CHECK(rec->a0 - rec->ts == 900 && act(rec)->grid_z == 2 &&
				      act(rec)->block_x == 32 && act(rec)->block_y == 4);
			else
				CHECK(act(rec)->memset_value == 9 && act(rec)->bytes == 77);
		}
		cx_stop(&x);
	}
	ap_reply_free(&r);
}

/* --- threads ---------------------------------------------------------------------------------- */

static void test_threads(void)
{
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	const struct xprobe_record *rec;
	uint64_t got = 0, offset = 0, kern = 0, paired = 0;
	char line[256];
	struct cx x;

	if (cx_start(&x, 13, NULL)) {
		CHECK(!"fixture started");
		return;
	}
	for (int cycle = 0; cycle < 3; cycle++) {
		arm_req(&q, XPROBE_AGENT_MODE_EXACT, 100000);
		add(&q, XPROBE_AGENT_KIND_CUDA_API, XPROBE_AGENT_NAME_EXACT, "cudaLaunchKernel");
		add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_ANY, NULL);
		CHECK(rpc(&x, &q, &r) == 0);
		got = offset = 0;
		/* the fixture launches on 4 threads while we read */
		CHECK(write(x.fx.in, "threads 4 3000 k_thr 100\n", 25) == 25);
		for (int i = 0; i < 20; i++) {
			CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_SNAPSHOT, offset, &r) == 0);
			offset += r.h.nrecords;
			got += r.h.nrecords;
			usleep(2000);
		}
		CHECK(fgets(line, sizeof(line), x.fx.out) != NULL);
		CHECK(!strncmp(line, "DONE threads 12000", 18));
		CHECK(ap_simple(x.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
		CHECK_EQ_U64(r.h.nrecords, 36000);
		CHECK(r.h.dropped == 0 && r.h.observed == 36000 && got <= 36000);
		kern = paired = 0;
		AP_FOR_EACH(&r, rec)
		if (rec->type == XPROBE_EV_CUDA_KERNEL) {
			kern++;
			paired += api_rec(&r, XPROBE_EV_CUDA_API_ENTRY, act(rec)->correlation_id) !=
				  NULL;
			if (kern >= 200)
				break; /* a sample: the lookup is linear */
		}
		CHECK(kern == 200 && paired == 200);
	}
	ap_reply_free(&r);
	cx_stop(&x);
}

/* --- sessions ------------------------------------------------------------------------------ */

/* Kernel records of @x: how many, how many named @name with duration
 * @dur and execution id @exec (-1: any) on device @dev. */
static uint64_t xtf_kernels(const struct xprobe_xtf *x, const char *name, uint64_t dur,
			    int64_t exec, uint32_t dev, uint64_t *all)
{
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	uint64_t n = 0;
	char buf[256];

	*all = 0;
	if (!x || xprobe_xtf_get_info(x, &in))
		return 0;
	for (size_t i = 0; i < in.streams; i++) {
		struct xprobe_xtf_stream st;
		const struct xprobe_record *r;
		size_t cur = 0;

		xprobe_xtf_get_stream(x, i, &st);
		while ((r = xprobe_xtf_next_record(&st, &cur))) {
			if (r->type != XPROBE_EV_CUDA_KERNEL)
				continue;
			(*all)++;
			n += !strcmp(kname(r, buf, sizeof(buf)), name) && r->a0 - r->ts == dur &&
			     (exec < 0 || r->a1 == (uint64_t)exec) && r->aux == dev && r->tid == 0;
		}
	}
	return n;
}

static int open_session(const char *base, struct xprobe_session **s)
{
	char dir[PATH_MAX], err[256];

	if (lt_find_session(base, dir, sizeof(dir)))
		return -1;
	if (xprobe_session_open(dir, s, err, sizeof(err))) {
		fprintf(stderr, "session %s: %s\n", dir, err);
		return -1;
	}
	return 0;
}

static void test_sessions(void)
{
	static char model_out[PATH_MAX + 40], sess_out[PATH_MAX + 40];
	const char *const model_env[] = { "XPROBE_INSPECT_ENABLE=1",
					  "XPROBE_INSPECT_ACTIVITIES=device_profile",
					  "XPROBE_INSPECT_DEVICE_PROFILE=model",
					  "XPROBE_INSPECT_BACKEND=cupti",
					  model_out,
					  NULL };
	const char *const sess_env[] = { "XPROBE_INSPECT_ENABLE=1",
					 "XPROBE_INSPECT_ACTIVITIES=device_profile",
					 "XPROBE_INSPECT_DEVICE_PROFILE=session",
					 "XPROBE_INSPECT_DEVICES=0,1",
					 "XPROBE_INSPECT_BACKEND=cupti",
					 sess_out,
					 NULL };
	char base[PATH_MAX + 16], name[64];
	struct xprobe_session *s = NULL;
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	const struct xprobe_xtf *x;
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	long e1, e2, e3;
	uint64_t all;
	struct cx c;

	/* MODEL: one file per execution, its kernels attributed to it */
	snprintf(base, sizeof(base), "%s/model", scratch);
	snprintf(model_out, sizeof(model_out), "XPROBE_INSPECT_OUTPUT_DIR=%s", base);
	if (cx_start(&c, 13, model_env) == 0) {
		CHECK(cx_maps(&c) == 1); /* the session loaded CUPTI at its start */
		e1 = cx_cmd(&c, "exec 3 m1 k_m 5000");
		e2 = cx_cmd(&c, "exec 2 m1 k_m 5000");
		CHECK(cx_cmd(&c, "launch 4 k_outside 10") == 4); /* in no execution */
		CHECK(cx_cmd(&c, "device 1") == 1);
		e3 = cx_cmd(&c, "exec 1 m1 k_d1 7000");
		CHECK(e1 > 0 && e2 > 0 && e3 > 0);
		CHECK(cx_cmd(&c, "stop_session") == 0);
		cx_stop(&c);
		CHECK(open_session(base, &s) == 0);
		snprintf(name, sizeof(name), "m1_exec_%ld.xtf", e1);
		x = lt_file(s, name);
		CHECK(xtf_kernels(x, "k_m", 5000, e1, 0, &all) == 3 && all == 3);
		CHECK(x && xprobe_xtf_get_info(x, &in) == 0 && !strcmp(in.backend, "cupti") &&
		      !in.simulated);
		snprintf(name, sizeof(name), "m1_exec_%ld.xtf", e2);
		CHECK(xtf_kernels(lt_file(s, name), "k_m", 5000, e2, 0, &all) == 2 && all == 2);
		snprintf(name, sizeof(name), "m1_exec_%ld.xtf", e3);
		CHECK(xtf_kernels(lt_file(s, name), "k_d1", 7000, e3, 1, &all) == 1 && all == 1);
		if (s)
			xprobe_session_close(s);
		s = NULL;
	} else {
		CHECK(!"fixture started");
	}

	/* SESSION (the driver says 2 devices): every kernel of each device,
	 * with an Agent capture on top */
	snprintf(base, sizeof(base), "%s/session", scratch);
	snprintf(sess_out, sizeof(sess_out), "XPROBE_INSPECT_OUTPUT_DIR=%s", base);
	if (cx_start(&c, 13, sess_env) == 0) {
		CHECK(cx_cmd(&c, "launch 2 k_s 100") == 2);
		arm_req(&q, XPROBE_AGENT_MODE_EXACT, 100);
		add(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_EXACT, "k_s");
		CHECK(rpc(&c, &q, &r) == 0);
		CHECK(cx_cmd(&c, "launch 3 k_s 100") == 3);
		CHECK(cx_cmd(&c, "launch 1 k_t 100") == 1);
		CHECK(ap_simple(c.fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
		CHECK_EQ_U64(r.h.nrecords, 3);
		/* the Agent's STOP left the session's activity on */
		CHECK(cx_cmd(&c, "launch 4 k_s 100") == 4);
		CHECK(cx_cmd(&c, "device 1") == 1);
		CHECK(cx_cmd(&c, "launch 5 k_s1 200") == 5);
		CHECK(cx_cmd(&c, "stop_session") == 0);
		cx_stop(&c);
		CHECK(open_session(base, &s) == 0);
		{
			char dir[PATH_MAX];

			/* the driver's 2 devices, not a fallback count */
			CHECK(lt_find_session(base, dir, sizeof(dir)) == 0 &&
			      lt_count_names(dir, "profile_dev_") == 2);
		}
		x = lt_file(s, "profile_dev_0_session_1.xtf");
		CHECK(xtf_kernels(x, "k_s", 100, 0, 0, &all) == 9 && all == 10);
		x = lt_file(s, "profile_dev_1_session_1.xtf");
		CHECK(xtf_kernels(x, "k_s1", 200, 0, 1, &all) == 5 && all == 5);
		if (s)
			xprobe_session_close(s);
	} else {
		CHECK(!"fixture started");
	}
	ap_reply_free(&r);
}

/* A program that only does host work under a session without device
 * profiling never maps CUPTI. */
static void test_host_only_session(void)
{
	static char out[PATH_MAX + 40];
	const char *const env[] = { "XPROBE_INSPECT_ENABLE=1",
				    "XPROBE_INSPECT_ACTIVITIES=system_profile", out, NULL };
	struct cx c;

	snprintf(out, sizeof(out), "XPROBE_INSPECT_OUTPUT_DIR=%s/host", scratch);
	if (cx_start(&c, 13, env)) {
		CHECK(!"fixture started");
		return;
	}
	CHECK(cx_cmd(&c, "launch 3 k 10") == 3);
	CHECK(cx_maps(&c) == 0);
	cx_stop(&c);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	lt_build_path(libso, sizeof(libso), "lib/libxprobe.so");
	lt_build_path(double_dir, sizeof(double_dir), "tests/cupti_double");
	lt_build_path(fixture_exe, sizeof(fixture_exe), "tests/cupti_double/cupti_fixture");
	if (access(fixture_exe, X_OK) != 0 || access(libso, R_OK) != 0) {
		fprintf(stderr, "%s or %s missing: build cupti_double and libxprobe\n", fixture_exe,
			libso);
		return 1;
	}
	lt_scratch(scratch, sizeof(scratch), "cupti");
	test_layouts();
	test_decoder();
	test_walker();
	test_loading();
	test_kernels();
	test_api();
	test_filter_all_delivered();
	test_chevron();
	test_before_arm();
	test_clocks();
	test_drops();
	test_limit_unknown();
	test_aggregate();
	test_refusals();
	test_cuda12();
	test_threads();
	test_sessions();
	test_host_only_session();
	if (chdir("/") == 0)
		lt_rm_rf(scratch);
	TEST_MAIN_END();
}
#endif /* XPL_CUPTI_ABI */
