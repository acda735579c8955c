/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cupti.c - `cupti`, the CUDA device backend: CUDA API calls, kernels,
 * copies and sets recorded through NVIDIA's CUPTI, for the Agent's
 * captures (`xprobe measure`) and for sessions' device profiles.
 * docs/agent.md ("The CUPTI backend") is the design as a user sees it.
 *
 * Nothing of CUDA is included either: CUPTI's types, values and record
 * layouts are our own transcription (cupti_abi.h, checked against the
 * real headers wherever a toolkit is installed), so every 64-bit Linux
 * build has this backend; a 32-bit one compiles it out (the #else at the
 * end: BACKEND_UNAVAILABLE).
 *
 * Loading.  Nothing of CUDA is linked: the first ARM naming a CUDA kind
 * (or a session asking for device_profile with backend "cupti") finds
 * the CUDA runtime this process maps (libcudart.so.<N>, from the loader's
 * list; else the driver's cuDriverGetVersion), refuses a major outside 12
 * and 13 or two majors at once, dlopens libcupti.so.<N> (next to the
 * runtime, in its toolkit's extras/CUPTI/lib64, then by the loader's
 * search), resolves the entry points below, checks that CUPTI's own
 * version is of the same major, reads the callback names, subscribes
 * (another subscriber: an error, nothing else touched), registers the
 * timestamp callback where CUPTI has one and the buffer callbacks.  The
 * library stays loaded (RTLD_NODELETE: CUPTI calls into us from its
 * threads); a failed load is retried by the next request.
 *
 * API callbacks.  Enabled with cuptiEnableCallback for exactly the
 * callback ids whose names (CUPTI's, a trailing _v<N> stripped) pass an
 * ARM's CUDA_API filter; our callback first tests the id in a bitmap
 * (cbmask, published at ARM), before any timestamp is read; the record is
 * then written as the NVTX callbacks write theirs
 * (lib/producers/agent_capture.h).  An entry recorded in capture
 * generation g stores g in CUPTI's per-call correlationData, and the exit
 * is admitted only when it finds g there: a call that entered before ARM
 * never leaves an exit in the capture.
 *
 * Activity.  CONCURRENT_KERNEL, MEMCPY and MEMSET are enabled while an
 * Agent capture or a session's armed device wants them, and disabled when
 * none does.  Buffers come from a pool allocated once, on the first
 * ARM/start (POOL_BUFS x POOL_BUF_BYTES, never freed: CUPTI may hold one
 * at any time), handed out by the buffer-requested callback; an empty pool
 * answers "no buffer" and CUPTI counts what it could not record
 * (cuptiActivityGetNumDroppedRecords, added to the capture's drops).  A
 * completed buffer is walked (cupti_walk.c) on whichever thread completes
 * it, each activity normalized to CLOCK_MONOTONIC and offered to the armed
 * Agent capture (its filters; activity that began before ARM excluded;
 * groups in AGGREGATE mode) and to the session sink (armed devices,
 * execution windows), then the buffer goes back to the pool.
 *
 * Clocks.  CUPTI stamps activity with CLOCK_REALTIME by default.  Where
 * it has cuptiActivityRegisterTimestampCallback, ours returns
 * CLOCK_MONOTONIC ns (registered before any kind is enabled) and no
 * conversion is needed; otherwise an offset (CLOCK_MONOTONIC midpoint
 * minus cuptiGetTimestamp, the tightest of five reads) is calibrated at
 * each ARM/start and added.  Each admitted activity is checked: one that
 * starts or ends over 1 s in the future, a kernel that starts over 1 ms
 * before the API entry with its correlation id, or (when this capture
 * enabled the kind itself, so nothing older can be in a buffer) one that
 * starts over 1 s before ARM marks the capture clock_bad and the Agent
 * stops claiming XPROBE_AGENT_F_HOST_MONOTONIC.
 *
 * Locking.  cu.lock (a mutex) guards loading, the enable state, the armed
 * capture and the pool's creation; it is held across CUPTI calls made
 * from the server thread (enable, flush), so CUPTI's callbacks never take
 * it.  The API callback reads only atomics and what load() wrote before
 * the first cbmask bit was published (acquire).  Buffer completion takes
 * the capture through agent_capture.h's busy protocol (so a disarm waits
 * for it) and the session sink under sink_lock; it takes nothing else.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "../internal.h"
#include "../producers/agent_group_table.h"
#include "../producers/agent_hist_table.h"
#include "../producers/agent_capture.h"
#include "backend.h"
#include "cupti.h"
#include "cupti_abi.h"

#if XPL_CUPTI_ABI

#define MAX_CBID 2048 /* callback ids we can filter (13.0: 523 runtime, 807 driver) */
#define CB_WORDS (MAX_CBID / 64)
#define POOL_BUFS 16
#define POOL_BUF_BYTES (1u << 20)
#define CORR_SLOTS 4096
#define STAGE_BYTES (64u * 1024u)
#define NSEC 1000000000ull
#define NWIN 256

#define K_KERNEL 1u
#define K_MEMCPY 2u
#define K_MEMSET 4u

/* The entry points, resolved with dlsym (cupti_abi.h has their types). */
struct fns {
	xpl_cuptiGetVersion_t GetVersion;
	xpl_cuptiSubscribe_t Subscribe;
	xpl_cuptiUnsubscribe_t Unsubscribe;
	xpl_cuptiEnableCallback_t EnableCallback;
	xpl_cuptiGetCallbackName_t GetCallbackName;
	xpl_cuptiActivityEnable_t ActivityEnable;
	xpl_cuptiActivityDisable_t ActivityDisable;
	xpl_cuptiActivityRegisterCallbacks_t ActivityRegisterCallbacks;
	xpl_cuptiActivityFlushAll_t ActivityFlushAll;
	xpl_cuptiActivityGetNextRecord_t ActivityGetNextRecord;
	xpl_cuptiActivityGetNumDroppedRecords_t ActivityGetNumDroppedRecords;
	xpl_cuptiGetTimestamp_t GetTimestamp;
	/* optional */
	xpl_cuptiActivityRegisterTimestampCallback_t ActivityRegisterTimestampCallback;
	xpl_cuptiGetResultString_t GetResultString;
};

struct cbname {
	const char *s; /* CUPTI's string (static in CUPTI) */
	uint16_t len; /* bytes kept: the name without its _v<N> suffix */
};

/* Execution windows the engine told us about (session attribution). */
struct win {
	uint64_t id, begin, end;
};

struct stage {
	size_t len;
	uint8_t buf[STAGE_BYTES] __attribute__((aligned(8)));
};

/* The session side: what the engine armed. */
struct sink {
	struct xpl_backend *be;
	uint32_t ndev;
	uint32_t narmed;
	uint8_t armed[XPROBE_MAX_DEVICES];
	struct stage *stage[XPROBE_MAX_DEVICES]; /* allocated at the device's first record */
	struct win wins[NWIN];
	uint32_t nwin; /* windows ever added (wins[nwin % NWIN] is the next) */
	uint64_t unknown, dropped, other_device;
};

static struct {
	pthread_mutex_t lock;
	bool loaded;
	void *lib;
	struct fns f;
	struct xpl_cupti_layout L;
	int layout_rc; /* xpl_cupti_layout_for(): 0, or -2 (activity unreadable) */
	uint32_t cuda_major, cupti_major;
	xpl_CUpti_SubscriberHandle sub;
	bool ts_callback;
	struct cbname names[2][MAX_CBID]; /* [domain - 1][cbid] */
	uint64_t want[2][CB_WORDS]; /* callback ids the next ARM enables */
	uint64_t cb_on[2][CB_WORDS]; /* callback ids enabled now */
	uint32_t act_agent, act_engine, act_on; /* K_* kinds wanted / enabled */
	struct xpl_agent_cap *cap; /* the Agent capture fed now */
	bool fresh; /* cap's kinds were off before its ARM */
	uint8_t *_Atomic pool;
	_Atomic uint64_t pool_free; /* bit i: buffer i is ours */
	_Atomic uint64_t pool_refused;
	_Atomic int64_t offset; /* CLOCK_MONOTONIC - CUPTI time (offset mode) */
	pthread_mutex_t sink_lock;
	struct sink *sink; /* the session backend, while open */
} cu = { .lock = PTHREAD_MUTEX_INITIALIZER, .sink_lock = PTHREAD_MUTEX_INITIALIZER };

/* The hot filter of the API callback: bit cbid of domain d-1 set while an
 * armed capture admits that callback. */
static _Atomic uint64_t cbmask[2][CB_WORDS];

/* API entries recorded (correlation id -> raw entry timestamp), for the
 * clock check of kernels.  Benign races: a slot is checked by its id. */
static struct {
	_Atomic uint32_t corr;
	_Atomic uint64_t ts;
} corr_tab[CORR_SLOTS];

/*
 * A CUPTI result as a person reads it: its name (CUPTI's own string, or
 * ours for the codes this backend meets when CUPTI cannot say), its
 * number, and for the codes whose cause is outside the program what the
 * cause usually is.  Never a bare number.
 */
static const char *res_name(xpl_CUptiResult r)
{
	switch ((int)r) {
	case 1: return "CUPTI_ERROR_INVALID_PARAMETER";
	case 2: return "CUPTI_ERROR_INVALID_DEVICE";
	case 3: return "CUPTI_ERROR_INVALID_CONTEXT";
	case 7: return "CUPTI_ERROR_INVALID_OPERATION";
	case 8: return "CUPTI_ERROR_OUT_OF_MEMORY";
	case 9: return "CUPTI_ERROR_HARDWARE";
	case 11: return "CUPTI_ERROR_API_NOT_IMPLEMENTED";
	case 14: return "CUPTI_ERROR_NOT_COMPATIBLE";
	case 15: return "CUPTI_ERROR_NOT_INITIALIZED";
	case 21: return "CUPTI_ERROR_INVALID_KIND";
	case 23: return "CUPTI_ERROR_DISABLED";
	case 26: return "CUPTI_ERROR_HARDWARE_BUSY";
	case 27: return "CUPTI_ERROR_NOT_SUPPORTED";
	case 33: return "CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED";
	case 35: return "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
	case 39: return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
	case 40: return "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES";
	case 41: return "CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED";
	case 42: return "CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED";
	case 43: return "CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED";
	case 45: return "CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED";
	case 999: return "CUPTI_ERROR_UNKNOWN";
	}
	return NULL;
}

static const char *res_cause(xpl_CUptiResult r)
{
	switch ((int)r) {
	case 999:
	case 15:
		return "CUPTI could not reach a GPU: usually no NVIDIA driver is loaded on this "
		       "machine, or this process never initialized CUDA (xprobe doctor: "
		       "nvidia_driver, cuda_driver)";
	case 35:
	case 40:
		return "the driver restricts profiling to administrators "
		       "(NVreg_RestrictProfilingToAdminUsers=1): run the target as root, or load "
		       "the driver with that option 0";
	case 26:
		return "another profiler holds the GPU's counters";
	case 39:
		return "another CUPTI client (Nsight Systems, Nsight Compute, another tool) is "
		       "subscribed in this process";
	case 41:
	case 42:
	case 43:
	case 45:
	case 33:
		return "this kind of GPU or environment does not support CUPTI tracing";
	}
	return NULL;
}

static const char *res_str(xpl_CUptiResult r)
{
	static __thread char buf[512];
	const char *s = NULL, *name = res_name(r), *cause = res_cause(r);

	if (name)
		s = name;
	else if (!cu.f.GetResultString || cu.f.GetResultString(r, &s) != XPL_CUPTI_SUCCESS || !s)
		s = "a CUPTI error";
	snprintf(buf, sizeof(buf), "%s (CUPTI result %d)%s%s", s, (int)r, cause ? ": " : "",
		 cause ? cause : "");
	return buf;
}

/* --- which CUDA the process maps ------------------------------------------------------ */

struct maps_scan {
	uint64_t cudart; /* bit N: libcudart.so.N mapped */
	char cudart_path[PATH_MAX]; /* of the first one */
	bool cuda; /* libcuda.so.1 */
};

/* "libX.so.<digits>[...]" at the end of @path: the major, else -1. */
static int soname_major(const char *path, const char *stem)
{
	const char *b = strrchr(path, '/');
	size_t n = strlen(stem);
	int v = 0, d = 0;

	b = b ? b + 1 : path;
	if (strncmp(b, stem, n))
		return -1;
	for (b += n; *b >= '0' && *b <= '9' && d < 4; b++, d++)
		v = v * 10 + (*b - '0');
	if (!d || (*b && *b != '.'))
		return -1;
	return v;
}

static int scan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct maps_scan *m = arg;
	int v;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	v = soname_major(info->dlpi_name, "libcudart.so.");
	if (v >= 0 && v < 64) {
		if (!m->cudart)
			snprintf(m->cudart_path, sizeof(m->cudart_path), "%s", info->dlpi_name);
		m->cudart |= 1ull << v;
	}
	if (soname_major(info->dlpi_name, "libcuda.so.") >= 0)
		m->cuda = true;
	return 0;
}

static void maps_scan(struct maps_scan *m)
{
	memset(m, 0, sizeof(*m));
	dl_iterate_phdr(scan_cb, m);
}

static int first_bit(uint64_t m)
{
	return m ? __builtin_ctzll(m) : -1;
}

/* The driver's CUDA major (cuDriverGetVersion of the mapped libcuda), 0
 * when it cannot say. */
static uint32_t driver_major(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	int (*get)(int *);
	int v = 0;

	if (!h)
		return 0;
	get = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
	if (!get || get(&v) != 0 || v <= 0)
		v = 0;
	dlclose(h);
	return (uint32_t)v / 1000;
}

/* The CUDA major of this process.  @need: refuse a process without CUDA
 * (an ARM); a session may begin before its program maps CUDA. */
static int cuda_major_of(bool need, struct maps_scan *m, uint32_t *major, char *why, size_t whylen)
{
	int a = first_bit(m->cudart), b;

	*major = 0;
	if (m->cudart & (m->cudart - 1)) {
		b = first_bit(m->cudart & ~(1ull << a));
		return xpl_errf(
			why, whylen, -XPROBE_E_UNSUPPORTED_CUDA_VERSION,
			"libcudart.so.%d and libcudart.so.%d are both mapped in this process: "
			"CUDA majors conflict, and one CUPTI cannot serve both",
			a, b);
	}
	if (a >= 0)
		*major = (uint32_t)a;
	else if (m->cuda)
		*major = driver_major();
	if (!*major) {
		if (!need)
			return 0;
		return xpl_errf(
			why, whylen, -XPROBE_E_CUDA_CONTEXT_NOT_FOUND,
			"no CUDA runtime (libcudart.so.<N>) or driver (libcuda.so.1) is mapped in "
			"this process: it has no CUDA to observe");
	}
	if (*major != 12 && *major != 13)
		return xpl_errf(
			why, whylen, -XPROBE_E_UNSUPPORTED_CUDA_VERSION,
			"this process uses CUDA %u (%s); xprobe's CUPTI backend supports CUDA 12 "
			"and 13",
			*major, a >= 0 ? "libcudart.so" : "the driver's version");
	return 0;
}

/* --- loading ------------------------------------------------------------------------------ */

static void *open_cupti(const struct maps_scan *m, uint32_t major, char *tried, size_t tlen)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	const char *slash;
	void *h;
	int flags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;

	tried[0] = '\0';
	if (m->cudart && (slash = strrchr(m->cudart_path, '/'))) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - m->cudart_path), m->cudart_path);
		snprintf(path, sizeof(path), "%s/libcupti.so.%u", dir, major);
		if ((h = dlopen(path, flags)))
			return h;
		snprintf(path, sizeof(path), "%s/../extras/CUPTI/lib64/libcupti.so.%u", dir, major);
		if ((h = dlopen(path, flags)))
			return h;
	}
	snprintf(path, sizeof(path), "libcupti.so.%u", major);
	h = dlopen(path, flags);
	if (!h) {
		const char *e = dlerror();

		snprintf(tried, tlen, "%s", e ? e : path);
	}
	return h;
}

#define SYM(field, name, required)                                                            \
	do {                                                                                  \
		*(void **)(&cu.f.field) = dlsym(cu.lib, name);                                \
		if ((required) && !cu.f.field)                                                \
			return xpl_errf(                                                      \
				why, whylen, -XPROBE_E_CUPTI_NOT_AVAILABLE,                   \
				"libcupti.so.%u has no %s: not a CUPTI this backend can use", \
				major, name);                                                 \
	} while (0)

static int resolve(uint32_t major, char *why, size_t whylen)
{
	memset(&cu.f, 0, sizeof(cu.f));
	SYM(GetVersion, "cuptiGetVersion", true);
	SYM(Subscribe, "cuptiSubscribe", true);
	SYM(Unsubscribe, "cuptiUnsubscribe", true);
	SYM(EnableCallback, "cuptiEnableCallback", true);
	SYM(GetCallbackName, "cuptiGetCallbackName", true);
	SYM(ActivityEnable, "cuptiActivityEnable", true);
	SYM(ActivityDisable, "cuptiActivityDisable", true);
	SYM(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks", true);
	SYM(ActivityFlushAll, "cuptiActivityFlushAll", true);
	SYM(ActivityGetNextRecord, "cuptiActivityGetNextRecord", true);
	SYM(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", true);
	SYM(GetTimestamp, "cuptiGetTimestamp", true);
	SYM(ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback", false);
	SYM(GetResultString, "cuptiGetResultString", false);
	return 0;
}

/* The bytes of @s without a trailing "_v<digits>". */
static uint16_t strip_version(const char *s)
{
	size_t n = strnlen(s, XPROBE_NAME_MAX + 1), i = n;

	if (n > XPROBE_NAME_MAX)
		return 0; /* never a CUPTI callback name: not filterable */
	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (i < n && i >= 3 && s[i - 1] == 'v' && s[i - 2] == '_')
		return (uint16_t)(i - 2);
	return (uint16_t)n;
}

static void read_names(void)
{
	for (uint32_t d = 0; d < 2; d++)
		for (uint32_t id = 1; id < MAX_CBID; id++) {
			const char *s = NULL;

			cu.names[d][id].s = NULL;
			cu.names[d][id].len = 0;
			if (cu.f.GetCallbackName(d + 1, id, &s) != XPL_CUPTI_SUCCESS || !s ||
			    !strcmp(s, "INVALID"))
				continue;
			cu.names[d][id].len = strip_version(s);
			if (cu.names[d][id].len)
				cu.names[d][id].s = s;
		}
}

static uint64_t mono_ts(void)
{
	return xpl_mono_ns();
}

static void api_cb(void *ud, xpl_CUpti_CallbackDomain dom, xpl_CUpti_CallbackId cbid,
		   const void *data);
static void buf_requested(uint8_t **buffer, size_t *size, size_t *max_records);
static void buf_completed(xpl_CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
			  size_t valid);

/* Load the backend (cu.lock held).  @need_cuda: see cuda_major_of(). */
static int load(bool need_cuda, char *why, size_t whylen)
{
	struct maps_scan m;
	char tried[512];
	uint32_t major, version = 0;
	xpl_CUptiResult r;
	int rc;

	maps_scan(&m);
	if (cu.loaded) {
		/* a runtime of another major mapped since */
		if (m.cudart & ~(1ull << cu.cuda_major))
			return xpl_errf(
				why, whylen, -XPROBE_E_UNSUPPORTED_CUDA_VERSION,
				"libcudart.so.%d is mapped now, but CUPTI %u was loaded for CUDA "
				"%u: conflicting CUDA majors",
				first_bit(m.cudart & ~(1ull << cu.cuda_major)), cu.cupti_major,
				cu.cuda_major);
		return 0;
	}
	rc = cuda_major_of(need_cuda, &m, &major, why, whylen);
	if (rc)
		return rc;
	if (major) {
		cu.lib = open_cupti(&m, major, tried, sizeof(tried));
	} else {
		/* a session begun before CUDA is mapped: the CUPTI installed */
		major = 13;
		cu.lib = open_cupti(&m, major, tried, sizeof(tried));
		if (!cu.lib) {
			major = 12;
			cu.lib = open_cupti(&m, major, tried, sizeof(tried));
		}
	}
	if (!cu.lib)
		return xpl_errf(
			why, whylen, -XPROBE_E_CUPTI_NOT_AVAILABLE,
			"libcupti.so.%u cannot be loaded (%s): install the CUDA %u toolkit's "
			"CUPTI or put its directory in LD_LIBRARY_PATH",
			major, tried, major);
	rc = resolve(major, why, whylen);
	if (rc)
		return rc;
	r = cu.f.GetVersion(&version);
	if (r != XPL_CUPTI_SUCCESS)
		return xpl_errf(why, whylen, -XPROBE_E_CUPTI_NOT_AVAILABLE,
				"cuptiGetVersion failed: %s", res_str(r));
	cu.layout_rc = xpl_cupti_layout_for(version, &cu.L);
	if (cu.layout_rc == -1 || cu.L.major != major)
		return xpl_errf(
			why, whylen, -XPROBE_E_UNSUPPORTED_CUDA_VERSION,
			"libcupti.so.%u reports CUPTI API version %u (CUDA %u), not CUDA %u: "
			"conflicting majors (xprobe supports CUDA 12 and 13)",
			major, version, cu.L.major, major);
	read_names();
	r = cu.f.Subscribe(&cu.sub, api_cb, NULL);
	if (r == XPL_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return xpl_errf(
			why, whylen, -XPROBE_E_CUPTI_NOT_AVAILABLE,
			"another tool already holds this process's CUPTI subscriber (Nsight, "
			"another profiler, or a CUPTI-based library): CUPTI allows one; "
			"stop that tool to measure CUDA with xprobe");
	if (r != XPL_CUPTI_SUCCESS)
		return xpl_errf(why, whylen, -XPROBE_E_CUPTI_NOT_AVAILABLE,
				"cuptiSubscribe failed: %s", res_str(r));
	/* before any activity kind is enabled (CUPTI's rule) */
	cu.ts_callback = cu.f.ActivityRegisterTimestampCallback &&
			 cu.f.ActivityRegisterTimestampCallback(mono_ts) == XPL_CUPTI_SUCCESS;
	r = cu.f.ActivityRegisterCallbacks(buf_requested, buf_completed);
	if (r != XPL_CUPTI_SUCCESS) {
		cu.f.Unsubscribe(cu.sub);
		return xpl_errf(why, whylen, -XPROBE_E_CUPTI_NOT_AVAILABLE,
				"cuptiActivityRegisterCallbacks failed: %s", res_str(r));
	}
	cu.cuda_major = major;
	cu.cupti_major = cu.L.major;
	cu.loaded = true;
	pr_info("cupti: CUPTI %u (API version %u) loaded for CUDA %u; timestamps %s", major,
		version, major, cu.ts_callback ? "by our callback" : "by calibrated offset");
	return 0;
}

bool xpl_cupti_loaded(uint32_t *cuda_major, uint32_t *cupti_major)
{
	bool on;

	pthread_mutex_lock(&cu.lock);
	on = cu.loaded;
	*cuda_major = on ? cu.cuda_major : 0;
	*cupti_major = on ? cu.cupti_major : 0;
	pthread_mutex_unlock(&cu.lock);
	return on;
}

bool xpl_cupti_built(void)
{
	return true;
}

/* --- clocks ------------------------------------------------------------------------------ */

static void calibrate(void)
{
	uint64_t best = UINT64_MAX;
	int64_t off = 0;

	if (cu.ts_callback)
		return;
	for (int i = 0; i < 5; i++) {
		uint64_t m0 = xpl_mono_ns(), c = 0, m1;

		if (cu.f.GetTimestamp(&c) != XPL_CUPTI_SUCCESS)
			continue;
		m1 = xpl_mono_ns();
		if (m1 - m0 < best) {
			best = m1 - m0;
			off = (int64_t)(m0 + (m1 - m0) / 2) - (int64_t)c;
		}
	}
	atomic_store(&cu.offset, off);
}

static inline uint64_t norm(uint64_t t, int64_t off)
{
	return t ? (uint64_t)((int64_t)t + off) : 0;
}

/* --- the pool ---------------------------------------------------------------------------- */

static int pool_create(char *why, size_t whylen)
{
	uint8_t *p;

	if (atomic_load(&cu.pool))
		return 0;
	p = mmap(NULL, (size_t)POOL_BUFS * POOL_BUF_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return xpl_errf(why, whylen, -XPROBE_E_INTERNAL,
				"cannot map the CUPTI buffer pool (%u x %u bytes)", POOL_BUFS,
				POOL_BUF_BYTES);
	atomic_store(&cu.pool_free, POOL_BUFS == 64 ? ~0ull : (1ull << POOL_BUFS) - 1);
	atomic_store(&cu.pool, p);
	return 0;
}

static void buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *p = atomic_load_explicit(&cu.pool, memory_order_acquire);
	uint64_t m = atomic_load(&cu.pool_free);

	*max_records = 0;
	*buffer = NULL;
	*size = 0;
	while (p && m) {
		int i = __builtin_ctzll(m);

		if (atomic_compare_exchange_weak(&cu.pool_free, &m, m & ~(1ull << i))) {
			*buffer = p + (size_t)i * POOL_BUF_BYTES;
			*size = POOL_BUF_BYTES;
			return;
		}
	}
	atomic_fetch_add(&cu.pool_refused, 1);
}

static void pool_give(uint8_t *buffer)
{
	uint8_t *p = atomic_load_explicit(&cu.pool, memory_order_acquire);
	size_t off;

	if (!p || buffer < p || buffer >= p + (size_t)POOL_BUFS * POOL_BUF_BYTES)
		return; /* not one of ours */
	off = (size_t)(buffer - p);
	if (off % POOL_BUF_BYTES)
		return;
	atomic_fetch_or(&cu.pool_free, 1ull << (off / POOL_BUF_BYTES));
}

/* --- API callbacks ------------------------------------------------------------------------- */

static void corr_note(uint32_t corr, uint64_t ts)
{
	uint32_t i = corr % CORR_SLOTS;

	atomic_store_explicit(&corr_tab[i].corr, 0, memory_order_relaxed);
	atomic_store_explicit(&corr_tab[i].ts, ts, memory_order_relaxed);
	atomic_store_explicit(&corr_tab[i].corr, corr, memory_order_release);
}

/* The raw entry timestamp of API call @corr, 0 when not known. */
static uint64_t corr_find(uint32_t corr)
{
	uint32_t i = corr % CORR_SLOTS;
	uint64_t ts;

	if (!corr || atomic_load_explicit(&corr_tab[i].corr, memory_order_acquire) != corr)
		return 0;
	ts = atomic_load_explicit(&corr_tab[i].ts, memory_order_relaxed);
	return atomic_load_explicit(&corr_tab[i].corr, memory_order_acquire) == corr ? ts : 0;
}

/*
 * A HISTOGRAM capture's API call: the entry's CLOCK_MONOTONIC time goes
 * into the call's correlationData (CUPTI's per-call word, the same for the
 * entry and the exit of one call on its thread: the pair is exact with no
 * table), the exit counts now - entry.  An entry taken before this capture
 * was armed (an earlier capture's, or none) is older than arm_ns and not
 * paired.  The group: the API name (stripped of _v<N>) or the thread.
 */
static void api_hist(struct xpl_tls *t, struct xpl_agent_cap *c, const struct cbname *nm,
		     const xpl_CUpti_CallbackData *cd)
{
	uint64_t now = xpl_mono_ns(), ts;
	int64_t g;

	if (!cd->correlationData) { /* nowhere to keep the entry */
		if (cd->callbackSite == XPL_CUPTI_API_ENTER)
			xpl_hist_count(c->hist, XPROBE_AGENT_HC_INFLIGHT_OVERFLOW);
		return;
	}
	if (cd->callbackSite == XPL_CUPTI_API_ENTER) {
		*cd->correlationData = now | 1; /* never 0; 1 ns is below the bucket's width */
		return;
	}
	if (cd->callbackSite != XPL_CUPTI_API_EXIT)
		return;
	ts = *cd->correlationData;
	*cd->correlationData = 0;
	if (!ts || ts < c->arm_ns || ts > now)
		return;
	g = xpl_hist_group(c->hist, XPROBE_AGENT_KIND_CUDA_API, t->tid, nm->s, nm->len,
			   XPROBE_AGENT_HIST_F_NAME_COMPLETE);
	xpl_hist_add(c->hist, g, now - ts);
}

static __attribute__((noinline)) void api_record(uint32_t d, uint32_t cbid,
						 const xpl_CUpti_CallbackData *cd)
{
	struct xpl_tls *t = &xpl_tls;
	const struct cbname *nm = &cu.names[d][cbid];
	struct xpl_agent_cap *c;
	uint64_t ts;
	bool nested;

	c = xpl_agent_enter(t, &nested);
	if (!c)
		return;
	if (!c->api || !nm->s)
		goto out;
	if (c->hist) {
		api_hist(t, c, nm, cd);
		goto out;
	}
	if (cd->callbackSite == XPL_CUPTI_API_ENTER) {
		if (cd->correlationData)
			*cd->correlationData = 0;
		if (nested) {
			xpl_agent_drop(c);
			goto out;
		}
		if (xpl_agent_put_api(t, c, XPROBE_EV_CUDA_API_ENTRY, nm->s, nm->len, cbid,
				      cd->correlationId, d + 1, cd->contextUid, &ts)) {
			if (cd->correlationData)
				*cd->correlationData = c->gen;
			if (c->kernel) /* for the clock check of its kernel */
				corr_note(cd->correlationId, ts);
		}
	} else if (cd->callbackSite == XPL_CUPTI_API_EXIT) {
		/* only the exit of an entry this capture recorded */
		if (cd->correlationData && *cd->correlationData != c->gen)
			goto out;
		if (nested)
			xpl_agent_drop(c);
		else
			xpl_agent_put_api(t, c, XPROBE_EV_CUDA_API_EXIT, nm->s, nm->len, cbid,
					  cd->correlationId, d + 1, cd->contextUid, &ts);
	}
out:
	xpl_agent_leave(t, nested);
}

static void api_cb(void *ud, xpl_CUpti_CallbackDomain dom, xpl_CUpti_CallbackId cbid,
		   const void *data)
{
	uint32_t d = (uint32_t)dom - 1u;

	(void)ud;
	if (unlikely(d > 1 || cbid >= MAX_CBID))
		return;
	/* the filter, before anything else (no clock read, no slot) */
	if (!((atomic_load_explicit(&cbmask[d][cbid / 64], memory_order_acquire) >> (cbid % 64)) &
	      1))
		return;
	api_record(d, cbid, data);
}

/* --- completed buffers ------------------------------------------------------------------ */

#define HCACHE 16

struct proc {
	struct xpl_tls *t;
	struct xpl_agent_cap *c; /* entered, or NULL */
	bool nested;
	bool fresh;
	struct xpl_conv conv; /* raw host timestamps of c -> ns */
	uint64_t now;
	int64_t off;
	uint64_t unknown, early;
	struct sink *sink; /* sink_lock held */
	/* the last kernel name seen in this buffer: CUPTI shares one string
	 * per kernel across its records, so a pointer seen again within one
	 * buffer is the same name (valid until the buffer is handed back) */
	const char *name;
	uint32_t name_kept;
	bool name_complete, name_pass;
	/* its aggregate group, by (name, device) of the last kernel grouped */
	const char *g_name;
	uint32_t g_dev;
	int64_t g_idx;
	/* a HISTOGRAM capture --by name: the groups of the last kernel-name
	 * pointers seen in this buffer, direct-mapped by pointer (kernels of a
	 * few names interleave; one entry would miss on every record) */
	const char *h_name[HCACHE];
	int64_t h_idx[HCACHE];
	/* kernel_name's cache of the names seen in this buffer */
	const char *n_name[HCACHE];
	uint32_t n_kept[HCACHE];
	bool n_complete[HCACHE], n_pass[HCACHE];
};

static uint32_t agent_kind(uint32_t type)
{
	return type == XPROBE_EV_CUDA_KERNEL ? XPROBE_AGENT_KIND_KERNEL :
	       type == XPROBE_EV_CUDA_MEMCPY ? XPROBE_AGENT_KIND_MEMCPY :
					       XPROBE_AGENT_KIND_MEMSET;
}

/* The record of @a (start/end normalized) with @a1; the name's kept bytes
 * in *n, its flag in the header. */
static void fill(struct xprobe_cuda_activity *r, int type, const struct xpl_cupti_act *a,
		 uint64_t start, uint64_t end, uint64_t a1, uint32_t *n)
{
	bool complete = true;

	memset(r, 0, sizeof(*r));
	*n = type == XPROBE_EV_CUDA_KERNEL ? xpl_cupti_name_kept(a->name, &complete) : 0;
	r->hdr.ts = start;
	r->hdr.a0 = end;
	r->hdr.a1 = a1;
	r->hdr.aux = a->device;
	r->hdr.name_len = (uint16_t)*n;
	r->hdr.flags = type == XPROBE_EV_CUDA_KERNEL && complete ? XPROBE_RECF_NAME_COMPLETE : 0;
	r->bytes = a->bytes;
	r->context_id = a->context;
	r->stream_id = a->stream;
	r->correlation_id = a->corr;
	r->runtime_correlation_id = type == XPROBE_EV_CUDA_MEMCPY ? a->rcorr : 0;
	r->memcpy_kind = a->memcpy_kind;
	r->raw_copy_kind = a->raw_copy_kind;
	r->memset_value = a->memset_value;
	if (type == XPROBE_EV_CUDA_KERNEL) {
		r->bytes = 0;
		r->grid_x = a->grid[0];
		r->grid_y = a->grid[1];
		r->grid_z = a->grid[2];
		r->block_x = a->block[0];
		r->block_y = a->block[1];
		r->block_z = a->block[2];
	}
}

static bool agent_wants(const struct xpl_agent_cap *c, int type, const struct xpl_cupti_act *a)
{
	switch (type) {
	case XPROBE_EV_CUDA_KERNEL:
		return c->kernel &&
		       xpl_agent_rules_ok(c->krules, c->nkrules, a->name ? a->name : "");
	case XPROBE_EV_CUDA_MEMCPY:
		return (c->memcpy_mask >> a->memcpy_kind) & 1;
	case XPROBE_EV_CUDA_MEMSET:
		return c->memset;
	}
	return false;
}

/* Kernel @name: its kept bytes and whether @c's rules pass it, from the
 * per-buffer cache: the last name seen, then a 16-entry direct-mapped
 * cache by pointer (kernels of a few names interleave in a buffer). */
static bool kernel_name(struct proc *p, const struct xpl_agent_cap *c, const char *name)
{
	uint32_t k = (uint32_t)((uintptr_t)name >> 4) % HCACHE;

	if (name == p->name && name)
		return p->name_pass;
	p->name = name;
	if (name && p->n_name[k] == name) {
		p->name_kept = p->n_kept[k];
		p->name_complete = p->n_complete[k];
		p->name_pass = p->n_pass[k];
		return p->name_pass;
	}
	p->name_kept = xpl_cupti_name_kept(name, &p->name_complete);
	p->name_pass = xpl_agent_rules_ok(c->krules, c->nkrules, name ? name : "");
	if (name) {
		p->n_name[k] = name;
		p->n_kept[k] = p->name_kept;
		p->n_complete[k] = p->name_complete;
		p->n_pass[k] = p->name_pass;
	}
	return p->name_pass;
}

/* Group one activity (aggregate lock held); false when the table is full. */
static bool to_group(struct proc *p, struct xpl_agent_cap *c, int type,
		     const struct xpl_cupti_act *a, uint64_t dur)
{
	bool kernel = type == XPROBE_EV_CUDA_KERNEL;
	int64_t g;

	if (kernel && a->name && a->name == p->g_name && a->device == p->g_dev && p->g_idx >= 0) {
		xpl_agg_bump(c->agg, p->g_idx, dur, 0);
		return true;
	}
	g = xpl_agg_add(c->agg, agent_kind((uint32_t)type), a->device,
			type == XPROBE_EV_CUDA_MEMCPY ? a->memcpy_kind : 0,
			kernel && p->name_complete ? XPROBE_RECF_NAME_COMPLETE : 0,
			kernel && a->name ? a->name : "", kernel ? p->name_kept : 0, dur,
			kernel ? 0 : a->bytes);
	if (kernel && a->name) {
		p->g_name = a->name;
		p->g_dev = a->device;
		p->g_idx = g;
	}
	return g >= 0;
}

/*
 * Count one activity of a HISTOGRAM capture (no lock: the histograms are
 * atomic counters; agent_hist_table.h).  One record is one pair: its
 * latency is end - start.  The group is the table's `by` of the record:
 * the kernel's name (cached per buffer by the name pointer, as to_group
 * does), the stream or the device.
 */
static void to_hist(struct proc *p, struct xpl_agent_cap *c, int type,
		    const struct xpl_cupti_act *a, uint64_t dur)
{
	struct xpl_agent_hist *h = c->hist;
	bool kernel = type == XPROBE_EV_CUDA_KERNEL;
	uint64_t key = h->by == XPROBE_AGENT_BY_STREAM ? a->stream : a->device;
	int64_t g;

	uint32_t k = (uint32_t)((uintptr_t)a->name >> 4) % HCACHE;

	if (h->by == XPROBE_AGENT_BY_NONE) {
		xpl_hist_add(h, XPL_HIST_NO_GROUP, dur);
		return;
	}
	if (h->by == XPROBE_AGENT_BY_NAME && kernel && a->name && a->name == p->h_name[k] &&
	    p->h_idx[k] >= 0) {
		xpl_hist_add(h, p->h_idx[k], dur);
		return;
	}
	g = xpl_hist_group(h, agent_kind((uint32_t)type), key, kernel && a->name ? a->name : "",
			   kernel ? p->name_kept : 0,
			   kernel && p->name_complete ? XPROBE_AGENT_HIST_F_NAME_COMPLETE : 0);
	if (h->by == XPROBE_AGENT_BY_NAME && kernel && a->name) {
		p->h_name[k] = a->name;
		p->h_idx[k] = g;
	}
	xpl_hist_add(h, g, dur);
}

/* Write @a as a record of @c: reserved, filled in place (the buffer is
 * zero where nothing was written), committed. */
static void to_record(struct proc *p, struct xpl_agent_cap *c, int type,
		      const struct xpl_cupti_act *a, uint64_t start, uint64_t end)
{
	uint32_t n = type == XPROBE_EV_CUDA_KERNEL ? p->name_kept : 0;
	uint32_t size = (uint32_t)XPL_ALIGN8(XPROBE_CUDA_ACTIVITY_SIZE + n);
	struct xprobe_cuda_activity *r = (void *)xpl_agent_reserve(c, size);

	if (!r)
		return;
	r->hdr.ts = start;
	r->hdr.a0 = end;
	r->hdr.aux = a->device;
	r->hdr.name_len = (uint16_t)n;
	r->context_id = a->context;
	r->stream_id = a->stream;
	r->correlation_id = a->corr;
	switch (type) {
	case XPROBE_EV_CUDA_KERNEL:
		r->hdr.flags = p->name_complete ? XPROBE_RECF_NAME_COMPLETE : 0;
		r->grid_x = a->grid[0];
		r->grid_y = a->grid[1];
		r->grid_z = a->grid[2];
		r->block_x = a->block[0];
		r->block_y = a->block[1];
		r->block_z = a->block[2];
		xpl_copy_name((uint8_t *)r + XPROBE_CUDA_ACTIVITY_SIZE, a->name, n);
		break;
	case XPROBE_EV_CUDA_MEMCPY:
		r->bytes = a->bytes;
		r->runtime_correlation_id = a->rcorr;
		r->memcpy_kind = a->memcpy_kind;
		r->raw_copy_kind = a->raw_copy_kind;
		break;
	case XPROBE_EV_CUDA_MEMSET:
		r->bytes = a->bytes;
		r->memset_value = a->memset_value;
		break;
	}
	__atomic_store_n((uint64_t *)r, (uint64_t)type << 16 | size, __ATOMIC_RELEASE);
}

static void to_agent(struct proc *p, int type, const struct xpl_cupti_act *a, uint64_t start,
		     uint64_t end, bool incomplete)
{
	struct xpl_agent_cap *c = p->c;

	if (type == XPROBE_EV_CUDA_KERNEL) {
		if (!c->kernel || !kernel_name(p, c, a->name))
			return;
	} else if (!agent_wants(c, type, a)) {
		return;
	}
	if (incomplete) {
		xpl_agent_drop(c); /* CUPTI never finished it: admitted, lost */
		return;
	}
	if (start < c->arm_ns) {
		p->early++;
		if (p->fresh && start + NSEC < c->arm_ns)
			atomic_store_explicit(&c->clock_bad, 1, memory_order_relaxed);
		return;
	}
	if (start > p->now + NSEC || end > p->now + NSEC)
		atomic_store_explicit(&c->clock_bad, 1, memory_order_relaxed);
	if (type == XPROBE_EV_CUDA_KERNEL && c->api) {
		uint64_t raw = corr_find(a->corr);

		if (raw && start + NSEC / 1000 < xpl_conv_ns(&p->conv, raw))
			atomic_store_explicit(&c->clock_bad, 1, memory_order_relaxed);
	}
	if (c->hist)
		to_hist(p, c, type, a, end - start);
	else if (!c->agg)
		to_record(p, c, type, a, start, end);
	else if (!to_group(p, c, type, a, end - start))
		xpl_agent_drop(c);
}

static uint64_t window_of(const struct sink *s, uint64_t start)
{
	uint32_t k = s->nwin < NWIN ? s->nwin : NWIN;

	for (uint32_t i = 0; i < k; i++) {
		const struct win *w = &s->wins[(s->nwin - 1 - i) % NWIN];

		if (start >= w->begin && start <= w->end)
			return w->id;
	}
	return 0;
}

static void stage_flush(struct sink *s, uint32_t dev)
{
	struct stage *g = s->stage[dev];

	if (g && g->len) {
		xpl_backend_complete(s->be, dev, g->buf, g->len);
		g->len = 0;
	}
}

static void to_sink(struct proc *p, int type, const struct xpl_cupti_act *a, uint64_t start,
		    uint64_t end)
{
	struct sink *s = p->sink;
	struct xprobe_cuda_activity r;
	struct stage *g;
	uint32_t n, size;

	if (a->device >= s->ndev || !s->armed[a->device]) {
		s->other_device++;
		return;
	}
	/* staged per device, allocated at its first record (here, on
	 * CUPTI's completing thread: never an application's call) */
	if (!s->stage[a->device] && !(s->stage[a->device] = calloc(1, sizeof(struct stage)))) {
		s->dropped++;
		return;
	}
	fill(&r, type, a, start, end, window_of(s, start), &n);
	r.hdr.type = (uint16_t)type;
	size = (uint32_t)XPL_ALIGN8(XPROBE_CUDA_ACTIVITY_SIZE + n);
	r.hdr.size = (uint16_t)size;
	g = s->stage[a->device];
	if (g->len + size > STAGE_BYTES)
		stage_flush(s, a->device);
	memcpy(g->buf + g->len, &r, sizeof(r));
	memset(g->buf + g->len + sizeof(r), 0, size - sizeof(r));
	if (n)
		memcpy(g->buf + g->len + sizeof(r), a->name, n);
	g->len += size;
}

static void on_act(void *arg, int type, const struct xpl_cupti_act *a)
{
	struct proc *p = arg;
	uint64_t start, end;
	bool incomplete;

	if (type <= 0) {
		p->unknown++;
		return;
	}
	start = norm(a->start, p->off);
	end = norm(a->end, p->off);
	incomplete = !a->start || !a->end || end < start;
	if (p->c)
		to_agent(p, type, a, start, end, incomplete);
	if (p->sink) {
		if (incomplete)
			p->sink->dropped++;
		else
			to_sink(p, type, a, start, end);
	}
}

static int next_rec(uint8_t *buf, size_t valid, void **rec)
{
	xpl_CUpti_Activity *a = *rec; /* in: the previous record (NULL: the first) */
	xpl_CUptiResult r = cu.f.ActivityGetNextRecord(buf, valid, &a);

	*rec = a;
	return r == XPL_CUPTI_SUCCESS ? 0 : 1;
}

static void process(uint8_t *buffer, size_t valid, xpl_CUcontext ctx, uint32_t stream)
{
	struct proc p = { .t = &xpl_tls, .g_idx = -1 };
	size_t dropped = 0;
	uint64_t bad = 0;

	p.c = xpl_agent_enter(p.t, &p.nested);
	if (p.c && (!p.c->device || p.nested)) {
		xpl_agent_leave(p.t, p.nested);
		p.c = NULL;
	}
	p.now = xpl_mono_ns();
	p.off = atomic_load(&cu.offset);
	if (p.c) {
		struct xpl_calib now;

		p.fresh = __atomic_load_n(&cu.fresh, __ATOMIC_RELAXED);
		xpl_calib_now(&now, p.c->tsc);
		xpl_conv_init(&p.conv, &p.c->arm_cal, &now, p.c->tsc);
		if (p.c->agg)
			xpl_agg_lock(p.c->agg);
	}
	pthread_mutex_lock(&cu.sink_lock);
	p.sink = cu.sink && cu.sink->narmed ? cu.sink : NULL;
	xpl_cupti_walk(&cu.L, next_rec, buffer, valid, on_act, &p, &bad);
	p.unknown += bad;
	if (cu.f.ActivityGetNumDroppedRecords(ctx, stream, &dropped) != XPL_CUPTI_SUCCESS)
		dropped = 0;
	if (p.sink) {
		for (uint32_t d = 0; d < p.sink->ndev; d++)
			stage_flush(p.sink, d);
		p.sink->unknown += p.unknown;
		p.sink->dropped += dropped;
	}
	pthread_mutex_unlock(&cu.sink_lock);
	if (p.c) {
		if (p.c->agg)
			xpl_agg_unlock(p.c->agg);
		if (p.unknown)
			atomic_fetch_add_explicit(&p.c->unknown, p.unknown, memory_order_relaxed);
		if (dropped)
			atomic_fetch_add_explicit(&p.c->dropped, dropped, memory_order_relaxed);
		if (p.early)
			atomic_fetch_add_explicit(&p.c->early, p.early, memory_order_relaxed);
		xpl_agent_leave(p.t, p.nested);
	}
}

static void buf_completed(xpl_CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
			  size_t valid)
{
	(void)size;
	if (!buffer)
		return;
	if (valid)
		process(buffer, valid, ctx, stream);
	pool_give(buffer);
}

/* --- enabling ---------------------------------------------------------------------------- */

static const xpl_CUpti_ActivityKind act_kinds[3] = { XPL_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
						     XPL_CUPTI_ACTIVITY_KIND_MEMCPY,
						     XPL_CUPTI_ACTIVITY_KIND_MEMSET };

/* Make the enabled kinds what the Agent and the sessions want (cu.lock). */
static int act_update(char *why, size_t whylen)
{
	uint32_t want = cu.act_agent | cu.act_engine;

	for (uint32_t i = 0; i < 3; i++) {
		uint32_t bit = 1u << i;
		xpl_CUptiResult r;

		if ((want & bit) && !(cu.act_on & bit)) {
			r = cu.f.ActivityEnable(act_kinds[i]);
			if (r != XPL_CUPTI_SUCCESS)
				return xpl_errf(why, whylen, -XPROBE_E_CUPTI_NOT_AVAILABLE,
						"cuptiActivityEnable(%d) failed: %s",
						(int)act_kinds[i], res_str(r));
			cu.act_on |= bit;
		} else if (!(want & bit) && (cu.act_on & bit)) {
			cu.f.ActivityDisable(act_kinds[i]);
			cu.act_on &= ~bit;
		}
	}
	return 0;
}

static uint32_t cap_kinds(const struct xpl_agent_cap *c)
{
	return (c->kernel ? K_KERNEL : 0) | (c->memcpy_mask ? K_MEMCPY : 0) |
	       (c->memset ? K_MEMSET : 0);
}

static void callbacks_off(void)
{
	for (uint32_t d = 0; d < 2; d++)
		for (uint32_t w = 0; w < CB_WORDS; w++) {
			atomic_store(&cbmask[d][w], 0);
			for (uint64_t m = cu.cb_on[d][w]; m; m &= m - 1)
				cu.f.EnableCallback(0, cu.sub, (xpl_CUpti_CallbackDomain)(d + 1),
						    w * 64 + (uint32_t)__builtin_ctzll(m));
			cu.cb_on[d][w] = 0;
		}
}

static const char *domain_name(uint32_t d)
{
	return d == XPROBE_AGENT_API_DRIVER  ? "driver" :
	       d == XPROBE_AGENT_API_RUNTIME ? "runtime" :
					       "driver or runtime";
}

/* @c's CUDA_API filters -> cu.want.  Every filter must name a callback. */
static int api_filters(const struct xprobe_agent_req *q, char *why, size_t whylen)
{
	memset(cu.want, 0, sizeof(cu.want));
	for (uint32_t i = 0; i < q->nfilters && i < XPROBE_AGENT_MAX_FILTERS; i++) {
		const struct xprobe_agent_filter *f = &q->filters[i];
		struct xpl_agent_rule rule = { .match = f->name_match, .len = f->name_len };
		uint32_t hits = 0;

		if (f->kind != XPROBE_AGENT_KIND_CUDA_API)
			continue;
		memcpy(rule.name, f->name, f->name_len);
		for (uint32_t d = 0; d < 2; d++) {
			if (f->api_domain && f->api_domain != d + 1)
				continue;
			for (uint32_t id = 1; id < MAX_CBID; id++) {
				const struct cbname *nm = &cu.names[d][id];
				char name[XPROBE_NAME_MAX + 1];

				if (!nm->s)
					continue;
				memcpy(name, nm->s, nm->len);
				name[nm->len] = '\0';
				if (!xpl_agent_rules_ok(&rule, 1, name))
					continue;
				cu.want[d][id / 64] |= 1ull << (id % 64);
				hits++;
			}
		}
		if (!hits)
			return xpl_errf(
				why, whylen, -XPROBE_E_INVALID_EVENT_SELECTOR,
				"no CUDA %s API callback of this CUPTI is named '%.*s' (after "
				"its _v<N> suffix is stripped)",
				domain_name(f->api_domain), (int)f->name_len, f->name);
	}
	return 0;
}

int xpl_cupti_agent_prepare(struct xpl_agent_cap *c, const struct xprobe_agent_req *req, char *why,
			    size_t whylen)
{
	int rc;

	pthread_mutex_lock(&cu.lock);
	if (cu.cap) {
		rc = xpl_errf(why, whylen, -XPROBE_E_ALREADY_ACTIVE,
			      "the CUPTI backend is still feeding another capture");
		goto out;
	}
	rc = load(true, why, whylen);
	if (rc)
		goto out;
	if (cap_kinds(c) && cu.layout_rc) {
		rc = xpl_errf(
			why, whylen, -XPROBE_E_UNSUPPORTED_CUDA_VERSION,
			"this process's CUPTI reports API version %u, newer than CUPTI %u (%u.%u), "
			"the newest whose activity records libxprobe knows: its records may "
			"use structs this build cannot read (CUDA API callbacks still work)",
			cu.L.version, XPL_CUPTI_ABI_VERSION, XPL_CUPTI_ABI_VERSION / 10000,
			XPL_CUPTI_ABI_VERSION / 100 % 100);
		goto out;
	}
	rc = api_filters(req, why, whylen);
	if (rc)
		goto out;
	if (cap_kinds(c))
		rc = pool_create(why, whylen);
out:
	pthread_mutex_unlock(&cu.lock);
	return rc;
}

int xpl_cupti_agent_start(struct xpl_agent_cap *c, char *why, size_t whylen)
{
	int rc = 0;

	pthread_mutex_lock(&cu.lock);
	for (uint32_t d = 0; d < 2 && !rc; d++)
		for (uint32_t w = 0; w < CB_WORDS && !rc; w++)
			for (uint64_t m = cu.want[d][w]; m; m &= m - 1) {
				uint32_t id = w * 64 + (uint32_t)__builtin_ctzll(m);
				xpl_CUptiResult r = cu.f.EnableCallback(
					1, cu.sub, (xpl_CUpti_CallbackDomain)(d + 1), id);

				if (r != XPL_CUPTI_SUCCESS) {
					rc = xpl_errf(why, whylen, -XPROBE_E_CUPTI_NOT_AVAILABLE,
						      "cuptiEnableCallback(%u, %u) failed: %s",
						      d + 1, id, res_str(r));
					break;
				}
				cu.cb_on[d][w] |= 1ull << (id % 64);
			}
	if (rc) {
		callbacks_off();
		goto out;
	}
	/* published: the callback may now record (the names were read first) */
	for (uint32_t d = 0; d < 2; d++)
		for (uint32_t w = 0; w < CB_WORDS; w++)
			atomic_store_explicit(&cbmask[d][w], cu.cb_on[d][w], memory_order_release);
	__atomic_store_n(&cu.fresh, (cu.act_on & cap_kinds(c)) == 0, __ATOMIC_RELAXED);
	cu.cap = c;
	cu.act_agent = cap_kinds(c);
	calibrate();
	rc = act_update(why, whylen);
	if (rc) {
		callbacks_off();
		cu.act_agent = 0;
		act_update(NULL, 0);
		cu.cap = NULL;
	}
out:
	pthread_mutex_unlock(&cu.lock);
	return rc;
}

void xpl_cupti_agent_flush(struct xpl_agent_cap *c)
{
	pthread_mutex_lock(&cu.lock);
	if (cu.cap == c && cu.act_on)
		cu.f.ActivityFlushAll(0);
	pthread_mutex_unlock(&cu.lock);
}

void xpl_cupti_agent_stop(struct xpl_agent_cap *c)
{
	pthread_mutex_lock(&cu.lock);
	if (cu.cap != c) {
		pthread_mutex_unlock(&cu.lock);
		return;
	}
	callbacks_off();
	if (cu.act_on) {
		cu.f.ActivityFlushAll(0);
		cu.act_agent = 0;
		act_update(NULL, 0);
		/* what the disabled kinds still hold, incomplete records too */
		cu.f.ActivityFlushAll(XPL_CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	}
	cu.cap = NULL;
	pthread_mutex_unlock(&cu.lock);
}

/* --- the session backend --------------------------------------------------------------------- */

/* Devices of this machine: the driver's count when it answers (the
 * driver loaded for it: a session asking for CUDA profiling is a CUDA
 * program's; a driver not initialized yet does not answer), else
 * /proc/driver/nvidia/gpus, else every id a record may carry. */
static uint32_t device_count(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	int n = 0;
	DIR *d;

	if (h) {
		int (*count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");

		if (!count || count(&n) != 0)
			n = 0;
		dlclose(h);
	}
	if (n <= 0 && (d = opendir("/proc/driver/nvidia/gpus"))) {
		struct dirent *e;

		while ((e = readdir(d)))
			n += e->d_name[0] != '.';
		closedir(d);
	}
	if (n <= 0 || n > XPROBE_MAX_DEVICES)
		n = XPROBE_MAX_DEVICES;
	return (uint32_t)n;
}

static int be_open(struct xpl_backend *b, const struct xprobe_backend_opts *o)
{
	char why[256];
	struct sink *s;
	int rc;

	(void)o;
	pthread_mutex_lock(&cu.lock);
	if (cu.sink) {
		pthread_mutex_unlock(&cu.lock);
		return xpl_fail(-XPROBE_E_ALREADY_ACTIVE,
				"the cupti backend already serves a session or continuous profile");
	}
	rc = load(false, why, sizeof(why));
	if (!rc && cu.layout_rc)
		rc = xpl_errf(why, sizeof(why), -XPROBE_E_UNSUPPORTED_CUDA_VERSION,
			      "this process's CUPTI (API version %u) is newer than CUPTI %u, the "
			      "newest whose activity records libxprobe knows; they cannot be read",
			      cu.L.version, XPL_CUPTI_ABI_VERSION);
	if (!rc)
		rc = pool_create(why, sizeof(why));
	if (rc) {
		pthread_mutex_unlock(&cu.lock);
		return xpl_fail(rc, "cupti backend: %s", why);
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		pthread_mutex_unlock(&cu.lock);
		return -ENOMEM;
	}
	s->be = b;
	s->ndev = device_count();
	b->ndev = s->ndev;
	b->priv = s;
	pthread_mutex_lock(&cu.sink_lock);
	cu.sink = s;
	pthread_mutex_unlock(&cu.sink_lock);
	pthread_mutex_unlock(&cu.lock);
	return 0;
}

static void be_close(struct xpl_backend *b)
{
	struct sink *s = b->priv;

	if (!s)
		return;
	pthread_mutex_lock(&cu.lock);
	cu.act_engine = 0;
	act_update(NULL, 0);
	pthread_mutex_lock(&cu.sink_lock);
	cu.sink = NULL;
	pthread_mutex_unlock(&cu.sink_lock);
	pthread_mutex_unlock(&cu.lock);
	for (uint32_t d = 0; d < XPROBE_MAX_DEVICES; d++)
		free(s->stage[d]);
	free(s);
	b->priv = NULL;
}

static int be_start(struct xpl_backend *b, uint32_t dev)
{
	struct sink *s = b->priv;
	int rc = 0;

	pthread_mutex_lock(&cu.lock);
	pthread_mutex_lock(&cu.sink_lock);
	if (!s->armed[dev]) {
		s->armed[dev] = 1;
		s->narmed++;
	}
	pthread_mutex_unlock(&cu.sink_lock);
	if (!cu.act_engine) {
		cu.act_engine = K_KERNEL | K_MEMCPY | K_MEMSET;
		calibrate();
		rc = act_update(NULL, 0);
	}
	pthread_mutex_unlock(&cu.lock);
	return rc ? -XPROBE_E_DEVICE_FAILED : 0;
}

static int be_harvest(struct xpl_backend *b, uint32_t dev)
{
	xpl_CUptiResult r = XPL_CUPTI_SUCCESS;

	(void)b;
	(void)dev;
	pthread_mutex_lock(&cu.lock);
	if (cu.act_on)
		r = cu.f.ActivityFlushAll(XPL_CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_unlock(&cu.lock);
	return r == XPL_CUPTI_SUCCESS ? 0 : -XPROBE_E_DEVICE_FAILED;
}

static void be_stop(struct xpl_backend *b, uint32_t dev)
{
	struct sink *s = b->priv;

	pthread_mutex_lock(&cu.lock);
	pthread_mutex_lock(&cu.sink_lock);
	if (s->armed[dev]) {
		s->armed[dev] = 0;
		s->narmed--;
	}
	pthread_mutex_unlock(&cu.sink_lock);
	if (!s->narmed && cu.act_engine) {
		cu.act_engine = 0;
		act_update(NULL, 0);
	}
	pthread_mutex_unlock(&cu.lock);
}

static void be_drop(struct xpl_backend *b, uint32_t dev)
{
	struct sink *s = b->priv;

	pthread_mutex_lock(&cu.sink_lock);
	if (s->stage[dev])
		s->stage[dev]->len = 0;
	pthread_mutex_unlock(&cu.sink_lock);
}

static void be_execution(struct xpl_backend *b, uint32_t dev, const struct xpl_exec_info *e)
{
	struct sink *s = b->priv;
	struct win *w;

	(void)dev;
	pthread_mutex_lock(&cu.sink_lock);
	/* one window per execution, whatever the number of devices told */
	if (!s->nwin || s->wins[(s->nwin - 1) % NWIN].id != e->id) {
		w = &s->wins[s->nwin % NWIN];
		w->id = e->id;
		w->begin = e->begin_ns;
		w->end = e->end_ns;
		s->nwin++;
	}
	pthread_mutex_unlock(&cu.sink_lock);
}

const struct xpl_backend_ops xpl_cupti_backend = {
	.name = "cupti",
	.simulated = false,
	.open = be_open,
	.close = be_close,
	.start = be_start,
	.harvest = be_harvest,
	.stop = be_stop,
	.drop = be_drop,
	.execution = be_execution,
};

#else /* !XPL_CUPTI_ABI: a platform CUPTI is not published for */

static int unavailable(char *why, size_t whylen)
{
	if (why && whylen)
		snprintf(why, whylen,
			 "CUPTI exists for 64-bit Linux only (x86_64, aarch64): this libxprobe, "
			 "built for another platform, has no CUDA device backend (CUDA API, "
			 "kernel, memcpy and memset records need it)");
	return -XPROBE_E_BACKEND_UNAVAILABLE;
}

int xpl_cupti_agent_prepare(struct xpl_agent_cap *c, const struct xprobe_agent_req *req, char *why,
			    size_t whylen)
{
	(void)c;
	(void)req;
	return unavailable(why, whylen);
}

int xpl_cupti_agent_start(struct xpl_agent_cap *c, char *why, size_t whylen)
{
	(void)c;
	return unavailable(why, whylen);
}

void xpl_cupti_agent_flush(struct xpl_agent_cap *c)
{
	(void)c;
}

void xpl_cupti_agent_stop(struct xpl_agent_cap *c)
{
	(void)c;
}

bool xpl_cupti_loaded(uint32_t *cuda_major, uint32_t *cupti_major)
{
	*cuda_major = *cupti_major = 0;
	return false;
}

bool xpl_cupti_built(void)
{
	return false;
}

static int be_open(struct xpl_backend *b, const struct xprobe_backend_opts *o)
{
	(void)b;
	(void)o;
	return -XPROBE_E_BACKEND_UNAVAILABLE;
}

static void be_close(struct xpl_backend *b)
{
	(void)b;
}

const struct xpl_backend_ops xpl_cupti_backend = {
	.name = "cupti",
	.open = be_open,
	.close = be_close,
};

#endif
