/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cupti_abi.h - the part of NVIDIA's CUPTI (and CUDA) ABI that the CUPTI
 * device backend (cupti.c, cupti_walk.c) and its test double
 * (tests/fixtures/cupti_double/) use, transcribed from CUPTI's documented
 * interface (cupti_result.h, cupti_callbacks.h, cupti_activity.h,
 * cupti_version.h, cupti_runtime_cbid.h, cupti_driver_cbid.h of CUDA 13.0
 * Update 1, CUPTI API version 130001) so that libxprobe and the double
 * build without a CUDA toolkit.  Nothing here is NVIDIA's text: only the
 * entry points we resolve with dlsym, the values we compare with, and the
 * offsets of the record fields we read or (the double) write.  Bytes we
 * never touch are `reserved*` arrays that keep the structs their real
 * size.
 *
 * Two checks keep this honest.  Below, the offsets and sizes are asserted
 * against the documented layouts (independent of any header), so an edit
 * here cannot move a field by accident.  lib/device/cupti_abi_check.c,
 * compiled wherever CMake finds the real headers (lib/CMakeLists.txt),
 * static-asserts every value, size, offset and entry-point type below
 * against them: a transcription error fails that build.
 *
 * The layouts are those of LP64 Linux, the only platforms CUPTI is
 * published for (x86_64, aarch64): XPL_CUPTI_ABI is 1 there, and the
 * backend is compiled; elsewhere it is 0 and the backend answers
 * BACKEND_UNAVAILABLE (cupti.c).
 *
 * Extending: a new record struct (CUpti_ActivityKernel11 of a later 13.x)
 * is transcribed here, asserted in cupti_abi_check.c under the version of
 * the headers that define it, and XPL_CUPTI_ABI_VERSION raised; until
 * then a CUPTI newer than XPL_CUPTI_ABI_VERSION is refused for activity
 * (xpl_cupti_layout_for() returns -2), never read through a guess.
 */
#ifndef XPL_CUPTI_ABI_H
#define XPL_CUPTI_ABI_H

#include <stddef.h>
#include <stdint.h>

#if defined(__linux__) && defined(__LP64__)
#define XPL_CUPTI_ABI 1
#else
#define XPL_CUPTI_ABI 0
#endif

/* --- versions (cuptiGetVersion) ------------------------------------------------------ */

/* CUPTI API versions: CUDA 12.x counts 19 (12.0) .. 28 (12.9 Update 1);
 * CUDA 13 reports 13mmpp (13.0 = 130000, 13.0 Update 1 = 130001). */
#define XPL_CUPTI_VERSION_12_0 19
#define XPL_CUPTI_VERSION_12_8 26 /* Memcpy6 and Memset4 from here */
#define XPL_CUPTI_VERSION_13_0 130000
/* The newest CUPTI API version whose record layouts are transcribed
 * here: the version of the headers this file was written from. */
#define XPL_CUPTI_ABI_VERSION 130001

/* --- results (CUptiResult) ----------------------------------------------------------- */

/* CUptiResult: an enum of non-negative values (an unsigned int) */
typedef uint32_t xpl_CUptiResult;
enum {
	XPL_CUPTI_SUCCESS = 0,
	XPL_CUPTI_ERROR_INVALID_PARAMETER = 1,
	XPL_CUPTI_ERROR_MAX_LIMIT_REACHED = 12, /* GetNextRecord: no more records */
	XPL_CUPTI_ERROR_INVALID_KIND = 21,
	XPL_CUPTI_ERROR_NOT_SUPPORTED = 27,
	XPL_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39,
};

/* --- handles ------------------------------------------------------------------------- */

/* Opaque handles, under the tags CUDA and CUPTI give them. */
typedef struct CUctx_st *xpl_CUcontext;
typedef struct CUpti_Subscriber_st *xpl_CUpti_SubscriberHandle;

/* --- callbacks (cupti_callbacks.h) ----------------------------------------------------- */

typedef uint32_t xpl_CUpti_CallbackDomain; /* CUpti_CallbackDomain */
enum {
	XPL_CUPTI_CB_DOMAIN_DRIVER_API = 1,
	XPL_CUPTI_CB_DOMAIN_RUNTIME_API = 2,
};

typedef uint32_t xpl_CUpti_ApiCallbackSite; /* CUpti_ApiCallbackSite */
enum {
	XPL_CUPTI_API_ENTER = 0,
	XPL_CUPTI_API_EXIT = 1,
};

typedef uint32_t xpl_CUpti_CallbackId;

/* CUpti_CallbackData: what a driver or runtime API callback receives. */
typedef struct {
	xpl_CUpti_ApiCallbackSite callbackSite;
	const char *functionName; /* the double sets it; we read the id's name */
	/* functionParams, functionReturnValue, symbolName: not used */
	uint8_t reserved0[24];
	void *context; /* CUcontext: not used */
	uint32_t contextUid; /* the context's id, as activity records name it */
	uint64_t *correlationData; /* shared by one call's entry and exit */
	uint32_t correlationId; /* the call's activity correlation id */
} xpl_CUpti_CallbackData;

typedef void (*xpl_CUpti_CallbackFunc)(void *userdata, xpl_CUpti_CallbackDomain domain,
				       xpl_CUpti_CallbackId cbid, const void *cbdata);

/*
 * Callback ids.  The backend never names one (it reads every id's name
 * with cuptiGetCallbackName and filters by name); these are the ones the
 * test double plays and its tests compare with.
 *
 * __cudaLaunchKernel is new in CUDA 13: nvcc 13 compiles `kernel<<<...>>>`
 * to a call of __cudaLaunchKernel (crt/host_runtime.h), which CUPTI reports
 * under its own id, not cudaLaunchKernel's; CUDA 12 compiles it to
 * cudaLaunchKernel (docs/cuda.md, "Which API a launch is").
 */
enum {
	XPL_CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020 = 20,
	XPL_CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020 = 22,
	XPL_CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 = 31,
	XPL_CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020 = 41,
	XPL_CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020 = 49,
	XPL_CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020 = 165,
	XPL_CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 = 211,
	XPL_CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 = 214,
	XPL_CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 = 505, /* CUDA 13 */
	XPL_CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000 = 506, /* CUDA 13 */
};
enum {
	XPL_CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize = 17,
	XPL_CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2 = 249,
	XPL_CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2 = 276,
	XPL_CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel = 307,
	XPL_CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds = 397,
	XPL_CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2 = 800,
};

/* --- activity (cupti_activity.h) --------------------------------------------------------- */

typedef uint32_t xpl_CUpti_ActivityKind; /* CUpti_ActivityKind */
enum {
	XPL_CUPTI_ACTIVITY_KIND_MEMCPY = 1,
	XPL_CUPTI_ACTIVITY_KIND_MEMSET = 2,
	XPL_CUPTI_ACTIVITY_KIND_KERNEL = 3,
	XPL_CUPTI_ACTIVITY_KIND_DRIVER = 4,
	XPL_CUPTI_ACTIVITY_KIND_RUNTIME = 5,
	XPL_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
};

/* CUpti_ActivityMemcpyKind: a memcpy record's copyKind */
enum {
	XPL_CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN = 0,
	XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOD = 1,
	XPL_CUPTI_ACTIVITY_MEMCPY_KIND_DTOH = 2,
	XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOA = 3,
	XPL_CUPTI_ACTIVITY_MEMCPY_KIND_ATOH = 4,
	XPL_CUPTI_ACTIVITY_MEMCPY_KIND_ATOA = 5,
	XPL_CUPTI_ACTIVITY_MEMCPY_KIND_ATOD = 6,
	XPL_CUPTI_ACTIVITY_MEMCPY_KIND_DTOA = 7,
	XPL_CUPTI_ACTIVITY_MEMCPY_KIND_DTOD = 8,
	XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOH = 9,
	XPL_CUPTI_ACTIVITY_MEMCPY_KIND_PTOP = 10,
};

/* CUpti_ActivityFlag, for cuptiActivityFlushAll */
#define XPL_CUPTI_ACTIVITY_FLAG_FLUSH_FORCED 1u

/* Records are packed and 8-aligned (CUPTI's PACKED_ALIGNMENT). */
#define XPL_CUPTI_RECORD __attribute__((__packed__, aligned(8)))

/* CUpti_Activity: the head of every record */
typedef struct XPL_CUPTI_RECORD {
	xpl_CUpti_ActivityKind kind;
} xpl_CUpti_Activity;

/*
 * CUpti_ActivityKernel9 (CUDA 12) and CUpti_ActivityKernel10 (CUDA 13.0):
 * the same fields up to `name`; Kernel10 has 8 more bytes at the end.
 */
typedef struct XPL_CUPTI_RECORD {
	xpl_CUpti_ActivityKind kind;
	uint8_t reserved0[12]; /* cache, shared-memory and register configuration */
	uint64_t start;
	uint64_t end;
	uint64_t completed;
	uint32_t deviceId;
	uint32_t contextId;
	uint32_t streamId;
	int32_t gridX, gridY, gridZ;
	int32_t blockX, blockY, blockZ;
	uint8_t reserved1[16]; /* shared and local memory sizes */
	uint32_t correlationId;
	int64_t gridId;
	const char *name;
	uint8_t reserved2[96];
} xpl_CUpti_ActivityKernel9;

typedef struct XPL_CUPTI_RECORD {
	xpl_CUpti_ActivityKind kind;
	uint8_t reserved0[12];
	uint64_t start;
	uint64_t end;
	uint64_t completed;
	uint32_t deviceId;
	uint32_t contextId;
	uint32_t streamId;
	int32_t gridX, gridY, gridZ;
	int32_t blockX, blockY, blockZ;
	uint8_t reserved1[16];
	uint32_t correlationId;
	int64_t gridId;
	const char *name;
	uint8_t reserved2[104];
} xpl_CUpti_ActivityKernel10;

/* CUpti_ActivityMemcpy5 (CUDA 12.0 .. 12.7) and Memcpy6 (12.8 on, 13):
 * the same fields up to runtimeCorrelationId. */
typedef struct XPL_CUPTI_RECORD {
	xpl_CUpti_ActivityKind kind;
	uint8_t copyKind; /* CUpti_ActivityMemcpyKind */
	uint8_t reserved0[3]; /* srcKind, dstKind, flags */
	uint64_t bytes;
	uint64_t start;
	uint64_t end;
	uint32_t deviceId;
	uint32_t contextId;
	uint32_t streamId;
	uint32_t correlationId;
	uint32_t runtimeCorrelationId;
	uint8_t reserved1[36];
} xpl_CUpti_ActivityMemcpy5;

typedef struct XPL_CUPTI_RECORD {
	xpl_CUpti_ActivityKind kind;
	uint8_t copyKind;
	uint8_t reserved0[3];
	uint64_t bytes;
	uint64_t start;
	uint64_t end;
	uint32_t deviceId;
	uint32_t contextId;
	uint32_t streamId;
	uint32_t correlationId;
	uint32_t runtimeCorrelationId;
	uint8_t reserved1[44];
} xpl_CUpti_ActivityMemcpy6;

/* CUpti_ActivityMemset3 (CUDA 12.0 .. 12.7) and Memset4 (12.8 on, 13) */
typedef struct XPL_CUPTI_RECORD {
	xpl_CUpti_ActivityKind kind;
	uint32_t value;
	uint64_t bytes;
	uint64_t start;
	uint64_t end;
	uint32_t deviceId;
	uint32_t contextId;
	uint32_t streamId;
	uint32_t correlationId;
	uint8_t reserved0[32];
} xpl_CUpti_ActivityMemset3;

typedef struct XPL_CUPTI_RECORD {
	xpl_CUpti_ActivityKind kind;
	uint32_t value;
	uint64_t bytes;
	uint64_t start;
	uint64_t end;
	uint32_t deviceId;
	uint32_t contextId;
	uint32_t streamId;
	uint32_t correlationId;
	uint8_t reserved0[40];
} xpl_CUpti_ActivityMemset4;

/* CUpti_ActivityAPI (kinds DRIVER and RUNTIME): never read by the
 * backend; the double writes one as "a kind nobody reads". */
typedef struct XPL_CUPTI_RECORD {
	xpl_CUpti_ActivityKind kind;
	xpl_CUpti_CallbackId cbid;
	uint64_t start;
	uint64_t end;
	uint32_t processId;
	uint32_t threadId;
	uint32_t correlationId;
	uint32_t returnValue;
} xpl_CUpti_ActivityAPI;

typedef void (*xpl_CUpti_BuffersCallbackRequestFunc)(uint8_t **buffer, size_t *size,
						     size_t *maxNumRecords);
typedef void (*xpl_CUpti_BuffersCallbackCompleteFunc)(xpl_CUcontext context, uint32_t streamId,
						      uint8_t *buffer, size_t size,
						      size_t validSize);
typedef uint64_t (*xpl_CUpti_TimestampCallbackFunc)(void);

/* --- the entry points (resolved with dlsym from libcupti.so.<N>) ------------------------- */

typedef xpl_CUptiResult (*xpl_cuptiGetVersion_t)(uint32_t *version);
typedef xpl_CUptiResult (*xpl_cuptiGetResultString_t)(xpl_CUptiResult result, const char **str);
typedef xpl_CUptiResult (*xpl_cuptiSubscribe_t)(xpl_CUpti_SubscriberHandle *subscriber,
						xpl_CUpti_CallbackFunc callback, void *userdata);
typedef xpl_CUptiResult (*xpl_cuptiUnsubscribe_t)(xpl_CUpti_SubscriberHandle subscriber);
typedef xpl_CUptiResult (*xpl_cuptiEnableCallback_t)(uint32_t enable,
						     xpl_CUpti_SubscriberHandle subscriber,
						     xpl_CUpti_CallbackDomain domain,
						     xpl_CUpti_CallbackId cbid);
typedef xpl_CUptiResult (*xpl_cuptiGetCallbackName_t)(xpl_CUpti_CallbackDomain domain,
						      uint32_t cbid, const char **name);
typedef xpl_CUptiResult (*xpl_cuptiActivityEnable_t)(xpl_CUpti_ActivityKind kind);
typedef xpl_CUptiResult (*xpl_cuptiActivityDisable_t)(xpl_CUpti_ActivityKind kind);
typedef xpl_CUptiResult (*xpl_cuptiActivityRegisterCallbacks_t)(
	xpl_CUpti_BuffersCallbackRequestFunc funcBufferRequested,
	xpl_CUpti_BuffersCallbackCompleteFunc funcBufferCompleted);
typedef xpl_CUptiResult (*xpl_cuptiActivityRegisterTimestampCallback_t)(
	xpl_CUpti_TimestampCallbackFunc funcTimestamp);
typedef xpl_CUptiResult (*xpl_cuptiActivityFlushAll_t)(uint32_t flag);
typedef xpl_CUptiResult (*xpl_cuptiActivityGetNextRecord_t)(uint8_t *buffer,
							    size_t validBufferSizeBytes,
							    xpl_CUpti_Activity **record);
typedef xpl_CUptiResult (*xpl_cuptiActivityGetNumDroppedRecords_t)(xpl_CUcontext context,
								   uint32_t streamId,
								   size_t *dropped);
typedef xpl_CUptiResult (*xpl_cuptiGetTimestamp_t)(uint64_t *timestamp);

/* --- the documented layouts, asserted ------------------------------------------------- */

#if XPL_CUPTI_ABI
#define XPL_CUPTI_AT(T, f, off) _Static_assert(offsetof(T, f) == (off), #T "." #f " at " #off)
#define XPL_CUPTI_SIZE(T, n) _Static_assert(sizeof(T) == (n), "sizeof(" #T ") == " #n)

XPL_CUPTI_SIZE(xpl_CUpti_CallbackData, 72);
XPL_CUPTI_AT(xpl_CUpti_CallbackData, functionName, 8);
XPL_CUPTI_AT(xpl_CUpti_CallbackData, contextUid, 48);
XPL_CUPTI_AT(xpl_CUpti_CallbackData, correlationData, 56);
XPL_CUPTI_AT(xpl_CUpti_CallbackData, correlationId, 64);

XPL_CUPTI_SIZE(xpl_CUpti_Activity, 8);

#define XPL_CUPTI_KERNEL_AT(T)              \
	XPL_CUPTI_AT(T, start, 16);         \
	XPL_CUPTI_AT(T, end, 24);           \
	XPL_CUPTI_AT(T, deviceId, 40);      \
	XPL_CUPTI_AT(T, contextId, 44);     \
	XPL_CUPTI_AT(T, streamId, 48);      \
	XPL_CUPTI_AT(T, gridX, 52);         \
	XPL_CUPTI_AT(T, blockX, 64);        \
	XPL_CUPTI_AT(T, blockZ, 72);        \
	XPL_CUPTI_AT(T, correlationId, 92); \
	XPL_CUPTI_AT(T, name, 104)
XPL_CUPTI_KERNEL_AT(xpl_CUpti_ActivityKernel9);
XPL_CUPTI_KERNEL_AT(xpl_CUpti_ActivityKernel10);
XPL_CUPTI_SIZE(xpl_CUpti_ActivityKernel9, 208);
XPL_CUPTI_SIZE(xpl_CUpti_ActivityKernel10, 216);

#define XPL_CUPTI_MEMCPY_AT(T)              \
	XPL_CUPTI_AT(T, copyKind, 4);       \
	XPL_CUPTI_AT(T, bytes, 8);          \
	XPL_CUPTI_AT(T, start, 16);         \
	XPL_CUPTI_AT(T, end, 24);           \
	XPL_CUPTI_AT(T, deviceId, 32);      \
	XPL_CUPTI_AT(T, streamId, 40);      \
	XPL_CUPTI_AT(T, correlationId, 44); \
	XPL_CUPTI_AT(T, runtimeCorrelationId, 48)
XPL_CUPTI_MEMCPY_AT(xpl_CUpti_ActivityMemcpy5);
XPL_CUPTI_MEMCPY_AT(xpl_CUpti_ActivityMemcpy6);
XPL_CUPTI_SIZE(xpl_CUpti_ActivityMemcpy5, 88);
XPL_CUPTI_SIZE(xpl_CUpti_ActivityMemcpy6, 96);

#define XPL_CUPTI_MEMSET_AT(T)         \
	XPL_CUPTI_AT(T, value, 4);     \
	XPL_CUPTI_AT(T, bytes, 8);     \
	XPL_CUPTI_AT(T, start, 16);    \
	XPL_CUPTI_AT(T, end, 24);      \
	XPL_CUPTI_AT(T, deviceId, 32); \
	XPL_CUPTI_AT(T, streamId, 40); \
	XPL_CUPTI_AT(T, correlationId, 44)
XPL_CUPTI_MEMSET_AT(xpl_CUpti_ActivityMemset3);
XPL_CUPTI_MEMSET_AT(xpl_CUpti_ActivityMemset4);
XPL_CUPTI_SIZE(xpl_CUpti_ActivityMemset3, 80);
XPL_CUPTI_SIZE(xpl_CUpti_ActivityMemset4, 88);

XPL_CUPTI_SIZE(xpl_CUpti_ActivityAPI, 40);
XPL_CUPTI_AT(xpl_CUpti_ActivityAPI, correlationId, 32);
#endif /* XPL_CUPTI_ABI */

#endif /* XPL_CUPTI_ABI_H */
