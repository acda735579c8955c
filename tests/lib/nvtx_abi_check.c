/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvtx_abi_check.c - compile-time proof that the two transcriptions of the
 * NVTX v3 ABI made so that nothing needs the CUDA toolkit match the
 * installed NVTX headers: lib/nvtx/nvtx_abi.h (libxprobe's injection side)
 * and tests/lib/nvtx_loader.h (the application side the test fixture and
 * the benchmark use): every id, every struct size and offset.  Built as an
 * object whenever the headers exist; a mismatch fails the build.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h> /* includes nvtxDetail/nvtxTypes.h */
#include <stddef.h>

#include "nvtx/nvtx_abi.h"
#define TL_NVTX_NO_API_NAMES
#include "nvtx_loader.h"

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a " == " #b)

SAME(XPL_NVTX_ETID_CALLBACKS, NVTX_ETID_CALLBACKS);
SAME(XPL_NVTX_ETID_VERSIONINFO, NVTX_ETID_VERSIONINFO);
SAME(XPL_NVTX_CB_MODULE_CORE, NVTX_CB_MODULE_CORE);
SAME(XPL_NVTX_CBID_CORE_MarkEx, NVTX_CBID_CORE_MarkEx);
SAME(XPL_NVTX_CBID_CORE_MarkA, NVTX_CBID_CORE_MarkA);
SAME(XPL_NVTX_CBID_CORE_RangeStartEx, NVTX_CBID_CORE_RangeStartEx);
SAME(XPL_NVTX_CBID_CORE_RangeStartA, NVTX_CBID_CORE_RangeStartA);
SAME(XPL_NVTX_CBID_CORE_RangeEnd, NVTX_CBID_CORE_RangeEnd);
SAME(XPL_NVTX_CBID_CORE_RangePushEx, NVTX_CBID_CORE_RangePushEx);
SAME(XPL_NVTX_CBID_CORE_RangePushA, NVTX_CBID_CORE_RangePushA);
SAME(XPL_NVTX_CBID_CORE_RangePop, NVTX_CBID_CORE_RangePop);
SAME(XPL_NVTX_MESSAGE_TYPE_ASCII, NVTX_MESSAGE_TYPE_ASCII);

SAME(sizeof(xpl_NvtxExportTableCallbacks), sizeof(NvtxExportTableCallbacks));
SAME(offsetof(xpl_NvtxExportTableCallbacks, GetModuleFunctionTable),
     offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable));
SAME(sizeof(xpl_NvtxExportTableVersionInfo), sizeof(NvtxExportTableVersionInfo));
SAME(offsetof(xpl_NvtxExportTableVersionInfo, SetInjectionNvtxVersion),
     offsetof(NvtxExportTableVersionInfo, SetInjectionNvtxVersion));

SAME(sizeof(xpl_nvtxEventAttributes_t), sizeof(nvtxEventAttributes_t));
SAME(offsetof(xpl_nvtxEventAttributes_t, size), offsetof(nvtxEventAttributes_t, size));
SAME(offsetof(xpl_nvtxEventAttributes_t, payload), offsetof(nvtxEventAttributes_t, payload));
SAME(offsetof(xpl_nvtxEventAttributes_t, messageType),
     offsetof(nvtxEventAttributes_t, messageType));
SAME(offsetof(xpl_nvtxEventAttributes_t, message), offsetof(nvtxEventAttributes_t, message));
SAME(sizeof(nvtxRangeId_t), sizeof(uint64_t));

/* tests/lib/nvtx_loader.h */
SAME(TL_NVTX_ETID_CALLBACKS, NVTX_ETID_CALLBACKS);
SAME(TL_NVTX_ETID_VERSIONINFO, NVTX_ETID_VERSIONINFO);
SAME(TL_NVTX_CB_MODULE_CORE, NVTX_CB_MODULE_CORE);
SAME(TL_NVTX_CBID_CORE_MarkEx, NVTX_CBID_CORE_MarkEx);
SAME(TL_NVTX_CBID_CORE_MarkA, NVTX_CBID_CORE_MarkA);
SAME(TL_NVTX_CBID_CORE_MarkW, NVTX_CBID_CORE_MarkW);
SAME(TL_NVTX_CBID_CORE_RangeStartEx, NVTX_CBID_CORE_RangeStartEx);
SAME(TL_NVTX_CBID_CORE_RangeStartA, NVTX_CBID_CORE_RangeStartA);
SAME(TL_NVTX_CBID_CORE_RangeStartW, NVTX_CBID_CORE_RangeStartW);
SAME(TL_NVTX_CBID_CORE_RangeEnd, NVTX_CBID_CORE_RangeEnd);
SAME(TL_NVTX_CBID_CORE_RangePushEx, NVTX_CBID_CORE_RangePushEx);
SAME(TL_NVTX_CBID_CORE_RangePushA, NVTX_CBID_CORE_RangePushA);
SAME(TL_NVTX_CBID_CORE_RangePushW, NVTX_CBID_CORE_RangePushW);
SAME(TL_NVTX_CBID_CORE_RangePop, NVTX_CBID_CORE_RangePop);
SAME(TL_NVTX_CBID_CORE_NameCategoryA, NVTX_CBID_CORE_NameCategoryA);
SAME(TL_NVTX_CBID_CORE_NameCategoryW, NVTX_CBID_CORE_NameCategoryW);
SAME(TL_NVTX_CBID_CORE_NameOsThreadA, NVTX_CBID_CORE_NameOsThreadA);
SAME(TL_NVTX_CBID_CORE_NameOsThreadW, NVTX_CBID_CORE_NameOsThreadW);
SAME(TL_NVTX_CBID_CORE_SIZE, NVTX_CBID_CORE_SIZE);
SAME(TL_NVTX_VERSION, NVTX_VERSION);
SAME(TL_NVTX_MESSAGE_TYPE_ASCII, NVTX_MESSAGE_TYPE_ASCII);
SAME(TL_NVTX_MESSAGE_TYPE_UNICODE, NVTX_MESSAGE_TYPE_UNICODE);
SAME(TL_NVTX_MESSAGE_TYPE_REGISTERED, NVTX_MESSAGE_TYPE_REGISTERED);
SAME(TL_NVTX_NO_PUSH_POP_TRACKING, NVTX_NO_PUSH_POP_TRACKING);
SAME(TL_NVTX_EVENT_ATTRIB_STRUCT_SIZE, NVTX_EVENT_ATTRIB_STRUCT_SIZE);
SAME(sizeof(tl_nvtxEventAttributes_t), sizeof(nvtxEventAttributes_t));
SAME(offsetof(tl_nvtxEventAttributes_t, category), offsetof(nvtxEventAttributes_t, category));
SAME(offsetof(tl_nvtxEventAttributes_t, payload), offsetof(nvtxEventAttributes_t, payload));
SAME(offsetof(tl_nvtxEventAttributes_t, messageType), offsetof(nvtxEventAttributes_t, messageType));
SAME(offsetof(tl_nvtxEventAttributes_t, message), offsetof(nvtxEventAttributes_t, message));
SAME(sizeof(tl_nvtxRangeId_t), sizeof(nvtxRangeId_t));
SAME(sizeof(tl_NvtxExportTableCallbacks), sizeof(NvtxExportTableCallbacks));
SAME(offsetof(tl_NvtxExportTableCallbacks, GetModuleFunctionTable),
     offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable));
SAME(sizeof(tl_NvtxExportTableVersionInfo), sizeof(NvtxExportTableVersionInfo));
SAME(offsetof(tl_NvtxExportTableVersionInfo, version),
     offsetof(NvtxExportTableVersionInfo, version));
SAME(offsetof(tl_NvtxExportTableVersionInfo, SetInjectionNvtxVersion),
     offsetof(NvtxExportTableVersionInfo, SetInjectionNvtxVersion));
