/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvtx_abi.h - the part of the NVTX v3 injection ABI libxprobe uses,
 * transcribed from nvtx3/nvtxDetail/nvtxTypes.h and nvtx3/nvToolsExt.h so
 * that libxprobe builds without the CUDA toolkit.  tests/lib/
 * nvtx_abi_check.c static-asserts every value and offset here against the
 * installed headers.
 */
#ifndef XPL_NVTX_ABI_H
#define XPL_NVTX_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#define NVTX_CB /* NVTX_API: the default calling convention on Linux */

/* NvtxExportTableID */
#define XPL_NVTX_ETID_CALLBACKS 1
#define XPL_NVTX_ETID_VERSIONINFO 3
/* NvtxCallbackModule */
#define XPL_NVTX_CB_MODULE_CORE 1
/* NvtxCallbackIdCore */
#define XPL_NVTX_CBID_CORE_MarkEx 1
#define XPL_NVTX_CBID_CORE_MarkA 2
#define XPL_NVTX_CBID_CORE_RangeStartEx 4
#define XPL_NVTX_CBID_CORE_RangeStartA 5
#define XPL_NVTX_CBID_CORE_RangeEnd 7
#define XPL_NVTX_CBID_CORE_RangePushEx 8
#define XPL_NVTX_CBID_CORE_RangePushA 9
#define XPL_NVTX_CBID_CORE_RangePop 11
/* nvtxMessageType_t */
#define XPL_NVTX_MESSAGE_TYPE_ASCII 1

typedef void (*xpl_NvtxFunctionPointer)(void);
typedef xpl_NvtxFunctionPointer **xpl_NvtxFunctionTable;

typedef struct {
	size_t struct_size;
	int (*GetModuleFunctionTable)(int callback_module, xpl_NvtxFunctionTable *out_table,
				      unsigned int *out_size);
} xpl_NvtxExportTableCallbacks;

typedef struct {
	size_t struct_size;
	uint32_t version;
	uint32_t reserved0;
	void (*SetInjectionNvtxVersion)(uint32_t version);
} xpl_NvtxExportTableVersionInfo;

typedef const void *(*xpl_NvtxGetExportTableFunc_t)(uint32_t exportTableId);

/* nvtxEventAttributes_v2 */
typedef struct {
	uint16_t version;
	uint16_t size;
	uint32_t category;
	int32_t colorType;
	uint32_t color;
	int32_t payloadType;
	int32_t reserved0;
	union {
		uint64_t ullValue;
		int64_t llValue;
		double dValue;
		uint32_t uiValue;
		int32_t iValue;
		float fValue;
	} payload;
	int32_t messageType;
	union {
		const char *ascii;
		const wchar_t *unicode;
		const void *registered;
	} message;
} xpl_nvtxEventAttributes_t;

/* Exported from libxprobe.so for the NVTX loader. */
int InitializeInjectionNvtx2(xpl_NvtxGetExportTableFunc_t getExportTable);
/* Whether the loader attached us (nvtx/inject.c). */
int xpl_nvtx_routed(void);

#endif /* XPL_NVTX_ABI_H */
