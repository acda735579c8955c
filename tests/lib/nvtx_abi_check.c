/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvtx_abi_check.c - compile-time proof that lib/nvtx/nvtx_abi.h (the NVTX
 * ABI libxprobe transcribes so that it builds without CUDA) matches the
 * installed NVTX v3 headers: every id, every struct size and offset.
 * Built as an object whenever the headers exist; a mismatch fails the build.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h> /* includes nvtxDetail/nvtxTypes.h */
#include <stddef.h>

#include "nvtx/nvtx_abi.h"

#define SAME(a, b) _Static_assert((a) == (b), #a " == " #b)

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
