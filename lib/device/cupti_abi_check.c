/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cupti_abi_check.c - compile-time proof that lib/device/cupti_abi.h, our
 * transcription of the CUPTI ABI (so that libxprobe and the CUPTI test
 * double build without a CUDA toolkit), matches NVIDIA's headers: every
 * value, every struct size and field offset, every entry point's type.
 * Built as an object (never linked) wherever CMake finds cupti.h
 * (lib/CMakeLists.txt, XPL_CUPTI_INCLUDE); a mismatch fails the build of
 * libxprobe.  It compiles against the headers of any CUDA 12 or 13
 * toolkit: what a toolkit's headers do not define yet (Kernel10 and
 * __cudaLaunchKernel before 13.0, Memcpy6/Memset4 and, to be safe, the
 * timestamp callback before 12.8) is checked only where they do.
 */
#include <cupti.h> /* cupti_result, _callbacks, _activity, _version, the cbid tables */
#include <stddef.h>

#include "cupti_abi.h"

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a " == " #b)
#define SAME_SIZE(A, B) SAME(sizeof(A), sizeof(B))
#define SAME_ALIGN(A, B) SAME(_Alignof(A), _Alignof(B))
#define SAME_OFF(A, B, f) SAME(offsetof(A, f), offsetof(B, f))
/* a field of ours is the real one: place and width */
#define SAME_FIELD(A, B, f) \
	SAME_OFF(A, B, f);  \
	SAME(sizeof(((A *)0)->f), sizeof(((B *)0)->f))
/* two types C treats as the same (an enum is its underlying unsigned int;
 * the opaque handles share their struct tags) */
#define SAME_TYPE(A, B) _Static_assert(__builtin_types_compatible_p(A, B), #A " is " #B)

_Static_assert(XPL_CUPTI_ABI, "CUPTI's headers on a platform cupti_abi.h does not cover");

/* results */
SAME_TYPE(xpl_CUptiResult, CUptiResult);
SAME(XPL_CUPTI_SUCCESS, CUPTI_SUCCESS);
SAME(XPL_CUPTI_ERROR_INVALID_PARAMETER, CUPTI_ERROR_INVALID_PARAMETER);
SAME(XPL_CUPTI_ERROR_MAX_LIMIT_REACHED, CUPTI_ERROR_MAX_LIMIT_REACHED);
SAME(XPL_CUPTI_ERROR_INVALID_KIND, CUPTI_ERROR_INVALID_KIND);
SAME(XPL_CUPTI_ERROR_NOT_SUPPORTED, CUPTI_ERROR_NOT_SUPPORTED);
SAME(XPL_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
     CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);

/* handles */
SAME_TYPE(xpl_CUcontext, CUcontext);
SAME_TYPE(xpl_CUpti_SubscriberHandle, CUpti_SubscriberHandle);

/* callbacks */
SAME_TYPE(xpl_CUpti_CallbackDomain, CUpti_CallbackDomain);
SAME(XPL_CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_DRIVER_API);
SAME(XPL_CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_RUNTIME_API);
SAME_TYPE(xpl_CUpti_ApiCallbackSite, CUpti_ApiCallbackSite);
SAME(XPL_CUPTI_API_ENTER, CUPTI_API_ENTER);
SAME(XPL_CUPTI_API_EXIT, CUPTI_API_EXIT);
SAME_TYPE(xpl_CUpti_CallbackId, CUpti_CallbackId);
SAME_TYPE(xpl_CUpti_CallbackFunc, CUpti_CallbackFunc);
SAME_SIZE(xpl_CUpti_CallbackData, CUpti_CallbackData);
SAME_ALIGN(xpl_CUpti_CallbackData, CUpti_CallbackData);
SAME_FIELD(xpl_CUpti_CallbackData, CUpti_CallbackData, callbackSite);
SAME_FIELD(xpl_CUpti_CallbackData, CUpti_CallbackData, functionName);
SAME_FIELD(xpl_CUpti_CallbackData, CUpti_CallbackData, correlationData);
SAME_FIELD(xpl_CUpti_CallbackData, CUpti_CallbackData, correlationId);
/* what reserved0 stands for lies between functionName and correlationData */
SAME(offsetof(xpl_CUpti_CallbackData, reserved0), offsetof(CUpti_CallbackData, functionParams));
SAME(offsetof(CUpti_CallbackData, contextUid) + sizeof(uint32_t) <=
	     offsetof(CUpti_CallbackData, correlationData),
     1);

/* callback ids */
#define RT(n) SAME(XPL_CUPTI_RUNTIME_TRACE_CBID_##n, CUPTI_RUNTIME_TRACE_CBID_##n)
#define DRV(n) SAME(XPL_CUPTI_DRIVER_TRACE_CBID_##n, CUPTI_DRIVER_TRACE_CBID_##n)
RT(cudaMalloc_v3020);
RT(cudaFree_v3020);
RT(cudaMemcpy_v3020);
RT(cudaMemcpyAsync_v3020);
RT(cudaMemset_v3020);
RT(cudaDeviceSynchronize_v3020);
RT(cudaLaunchKernel_v7000);
RT(cudaLaunchKernel_ptsz_v7000);
#if CUPTI_API_VERSION >= XPL_CUPTI_VERSION_13_0
RT(__cudaLaunchKernel_v13000);
RT(__cudaLaunchKernel_ptsz_v13000);
#endif
DRV(cuCtxSynchronize);
DRV(cuMemsetD8_v2);
DRV(cuMemcpyHtoD_v2);
DRV(cuLaunchKernel);
DRV(cuMemcpyHtoD_v2_ptds);
DRV(cuCtxSynchronize_v2);

/* activity kinds, copy kinds, flags */
SAME_TYPE(xpl_CUpti_ActivityKind, CUpti_ActivityKind);
SAME(XPL_CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY);
SAME(XPL_CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET);
SAME(XPL_CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_KERNEL);
SAME(XPL_CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_DRIVER);
SAME(XPL_CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_RUNTIME);
SAME(XPL_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
SAME(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN);
SAME(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
SAME(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
SAME(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, CUPTI_ACTIVITY_MEMCPY_KIND_HTOA);
SAME(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, CUPTI_ACTIVITY_MEMCPY_KIND_ATOH);
SAME(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, CUPTI_ACTIVITY_MEMCPY_KIND_ATOA);
SAME(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, CUPTI_ACTIVITY_MEMCPY_KIND_ATOD);
SAME(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, CUPTI_ACTIVITY_MEMCPY_KIND_DTOA);
SAME(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
SAME(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
SAME(XPL_CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
SAME(XPL_CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);

/* records: size, alignment, and every field we name */
SAME_SIZE(xpl_CUpti_Activity, CUpti_Activity);
SAME_ALIGN(xpl_CUpti_Activity, CUpti_Activity);
SAME_FIELD(xpl_CUpti_Activity, CUpti_Activity, kind);

#define KERNEL(A, B)                     \
	SAME_SIZE(A, B);                 \
	SAME_ALIGN(A, B);                \
	SAME_FIELD(A, B, kind);          \
	SAME_FIELD(A, B, start);         \
	SAME_FIELD(A, B, end);           \
	SAME_FIELD(A, B, completed);     \
	SAME_FIELD(A, B, deviceId);      \
	SAME_FIELD(A, B, contextId);     \
	SAME_FIELD(A, B, streamId);      \
	SAME_FIELD(A, B, gridX);         \
	SAME_FIELD(A, B, gridY);         \
	SAME_FIELD(A, B, gridZ);         \
	SAME_FIELD(A, B, blockX);        \
	SAME_FIELD(A, B, blockY);        \
	SAME_FIELD(A, B, blockZ);        \
	SAME_FIELD(A, B, correlationId); \
	SAME_FIELD(A, B, gridId);        \
	SAME_FIELD(A, B, name);          \
	SAME(offsetof(A, reserved1), offsetof(B, staticSharedMemory))
KERNEL(xpl_CUpti_ActivityKernel9, CUpti_ActivityKernel9);
#if CUPTI_API_VERSION >= XPL_CUPTI_VERSION_13_0
KERNEL(xpl_CUpti_ActivityKernel10, CUpti_ActivityKernel10);
#endif

#define MEMCPY(A, B)                            \
	SAME_SIZE(A, B);                        \
	SAME_ALIGN(A, B);                       \
	SAME_FIELD(A, B, kind);                 \
	SAME_FIELD(A, B, copyKind);             \
	SAME_FIELD(A, B, bytes);                \
	SAME_FIELD(A, B, start);                \
	SAME_FIELD(A, B, end);                  \
	SAME_FIELD(A, B, deviceId);             \
	SAME_FIELD(A, B, contextId);            \
	SAME_FIELD(A, B, streamId);             \
	SAME_FIELD(A, B, correlationId);        \
	SAME_FIELD(A, B, runtimeCorrelationId); \
	SAME(offsetof(A, reserved0), offsetof(B, srcKind))
MEMCPY(xpl_CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy5);

#define MEMSET(A, B)                 \
	SAME_SIZE(A, B);             \
	SAME_ALIGN(A, B);            \
	SAME_FIELD(A, B, kind);      \
	SAME_FIELD(A, B, value);     \
	SAME_FIELD(A, B, bytes);     \
	SAME_FIELD(A, B, start);     \
	SAME_FIELD(A, B, end);       \
	SAME_FIELD(A, B, deviceId);  \
	SAME_FIELD(A, B, contextId); \
	SAME_FIELD(A, B, streamId);  \
	SAME_FIELD(A, B, correlationId)
MEMSET(xpl_CUpti_ActivityMemset3, CUpti_ActivityMemset3);

#if CUPTI_API_VERSION >= XPL_CUPTI_VERSION_12_8
MEMCPY(xpl_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6);
MEMSET(xpl_CUpti_ActivityMemset4, CUpti_ActivityMemset4);
#endif

SAME_SIZE(xpl_CUpti_ActivityAPI, CUpti_ActivityAPI);
SAME_ALIGN(xpl_CUpti_ActivityAPI, CUpti_ActivityAPI);
SAME_FIELD(xpl_CUpti_ActivityAPI, CUpti_ActivityAPI, kind);
SAME_FIELD(xpl_CUpti_ActivityAPI, CUpti_ActivityAPI, cbid);
SAME_FIELD(xpl_CUpti_ActivityAPI, CUpti_ActivityAPI, start);
SAME_FIELD(xpl_CUpti_ActivityAPI, CUpti_ActivityAPI, end);
SAME_FIELD(xpl_CUpti_ActivityAPI, CUpti_ActivityAPI, processId);
SAME_FIELD(xpl_CUpti_ActivityAPI, CUpti_ActivityAPI, threadId);
SAME_FIELD(xpl_CUpti_ActivityAPI, CUpti_ActivityAPI, correlationId);
SAME_FIELD(xpl_CUpti_ActivityAPI, CUpti_ActivityAPI, returnValue);

/* buffer and timestamp callbacks */
SAME_TYPE(xpl_CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackRequestFunc);
SAME_TYPE(xpl_CUpti_BuffersCallbackCompleteFunc, CUpti_BuffersCallbackCompleteFunc);
/* older headers may lack it (the backend resolves it as optional) */
#if CUPTI_API_VERSION >= XPL_CUPTI_VERSION_12_8
SAME_TYPE(xpl_CUpti_TimestampCallbackFunc, CUpti_TimestampCallbackFunc);
#endif

/* entry points: our pointer types are the real functions' */
#define ENTRY(f) SAME_TYPE(xpl_##f##_t, __typeof__(&f))
ENTRY(cuptiGetVersion);
ENTRY(cuptiGetResultString);
ENTRY(cuptiSubscribe);
ENTRY(cuptiUnsubscribe);
ENTRY(cuptiEnableCallback);
ENTRY(cuptiGetCallbackName);
ENTRY(cuptiActivityEnable);
ENTRY(cuptiActivityDisable);
ENTRY(cuptiActivityRegisterCallbacks);
#if CUPTI_API_VERSION >= XPL_CUPTI_VERSION_12_8
ENTRY(cuptiActivityRegisterTimestampCallback);
#endif
ENTRY(cuptiActivityFlushAll);
ENTRY(cuptiActivityGetNumDroppedRecords);
ENTRY(cuptiGetTimestamp);
/* GetNextRecord hands out CUpti_Activity *, an untagged struct whose
 * layout is asserted above: each side's shape, then the same parameters */
SAME_TYPE(__typeof__(&cuptiActivityGetNextRecord),
	  CUptiResult (*)(uint8_t *, size_t, CUpti_Activity **));
SAME_TYPE(xpl_cuptiActivityGetNextRecord_t,
	  xpl_CUptiResult (*)(uint8_t *, size_t, xpl_CUpti_Activity **));
