/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvtx_loader.h - the application side of the NVTX v3 injection protocol,
 * written for libxprobe's tests and benchmarks from the protocol as NVTX
 * documents it, so that an "ordinary NVTX program" can be built on a
 * machine without the CUDA toolkit (tests/lib/nvtx_fixture.c,
 * bench/lib/bench_nvtx.c).  No NVIDIA header is copied here; where the
 * headers are installed, tests/lib/nvtx_abi_check.c checks every value and
 * layout below against them at build time.
 *
 * The protocol (what a program's NVTX calls do):
 *   - each API function calls through a function-pointer slot; every slot
 *     starts at an initialization stub;
 *   - the first call of any of them initializes, once for the process: if
 *     NVTX_INJECTION64_PATH names a library, it is dlopen'ed and its
 *     InitializeInjectionNvtx2(getExportTable) is called;
 *   - getExportTable(id) hands the injection the export tables: id 1
 *     (callbacks) has GetModuleFunctionTable(module, &table, &size), where
 *     the CORE module's table is an array, indexed by callback id, of
 *     pointers to the program's slots (entry 0 unused), which the injection
 *     overwrites with its own functions; id 3 (version info) has
 *     SetInjectionNvtxVersion;
 *   - when the injection returns 0 (or there is none), it is unloaded;
 *     every slot still at its stub then becomes a no-op: push and pop
 *     answer -2 (no push/pop tracking), a range start answers id 0.
 *
 * Only the CORE module's functions are provided (what the tests and the
 * benchmark call); the W (wide) forms exist as slots only.
 *
 * Included as is, the standard names (nvtxRangePushA, nvtxEventAttributes_t,
 * NVTX_VERSION ...) map to the tl_ ones, so a program written against
 * <nvtx3/nvToolsExt.h> builds unchanged; define TL_NVTX_NO_API_NAMES to get
 * only the tl_ names (beside the real headers).
 */
#ifndef XPL_TL_NVTX_LOADER_H
#define XPL_TL_NVTX_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/* Export table ids. */
#define TL_NVTX_ETID_CALLBACKS 1
#define TL_NVTX_ETID_VERSIONINFO 3
/* Callback modules. */
#define TL_NVTX_CB_MODULE_CORE 1
/* Callback ids of the CORE module: indexes of its function table. */
enum tl_nvtx_cbid_core {
	TL_NVTX_CBID_CORE_INVALID = 0,
	TL_NVTX_CBID_CORE_MarkEx = 1,
	TL_NVTX_CBID_CORE_MarkA = 2,
	TL_NVTX_CBID_CORE_MarkW = 3,
	TL_NVTX_CBID_CORE_RangeStartEx = 4,
	TL_NVTX_CBID_CORE_RangeStartA = 5,
	TL_NVTX_CBID_CORE_RangeStartW = 6,
	TL_NVTX_CBID_CORE_RangeEnd = 7,
	TL_NVTX_CBID_CORE_RangePushEx = 8,
	TL_NVTX_CBID_CORE_RangePushA = 9,
	TL_NVTX_CBID_CORE_RangePushW = 10,
	TL_NVTX_CBID_CORE_RangePop = 11,
	TL_NVTX_CBID_CORE_NameCategoryA = 12,
	TL_NVTX_CBID_CORE_NameCategoryW = 13,
	TL_NVTX_CBID_CORE_NameOsThreadA = 14,
	TL_NVTX_CBID_CORE_NameOsThreadW = 15,
	TL_NVTX_CBID_CORE_SIZE = 16,
};
/* The API version the attribute structs carry, their message types. */
#define TL_NVTX_VERSION 3
#define TL_NVTX_MESSAGE_TYPE_UNKNOWN 0
#define TL_NVTX_MESSAGE_TYPE_ASCII 1
#define TL_NVTX_MESSAGE_TYPE_UNICODE 2
#define TL_NVTX_MESSAGE_TYPE_REGISTERED 3
/* What push and pop answer when no injection tracks them. */
#define TL_NVTX_NO_PUSH_POP_TRACKING (-2)

typedef uint64_t tl_nvtxRangeId_t;

/* Event attributes, version 2 of the struct. */
typedef struct tl_nvtxEventAttributes {
	uint16_t version; /* TL_NVTX_VERSION */
	uint16_t size; /* sizeof(this struct) */
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
} tl_nvtxEventAttributes_t;
#define TL_NVTX_EVENT_ATTRIB_STRUCT_SIZE ((uint16_t)sizeof(tl_nvtxEventAttributes_t))

/* The export tables the program hands to the injection. */
typedef void (*tl_NvtxFunctionPointer)(void);
typedef tl_NvtxFunctionPointer **tl_NvtxFunctionTable;

typedef struct tl_NvtxExportTableCallbacks {
	size_t struct_size;
	int (*GetModuleFunctionTable)(int module, tl_NvtxFunctionTable *out_table,
				      unsigned int *out_size);
} tl_NvtxExportTableCallbacks;

typedef struct tl_NvtxExportTableVersionInfo {
	size_t struct_size;
	uint32_t version;
	uint32_t reserved0;
	void (*SetInjectionNvtxVersion)(uint32_t version);
} tl_NvtxExportTableVersionInfo;

typedef const void *(*tl_NvtxGetExportTableFunc_t)(uint32_t exportTableId);
typedef int (*tl_InitializeInjectionNvtx2_t)(tl_NvtxGetExportTableFunc_t getExportTable);

/* The CORE API (nvtx_loader.c). */
void tl_nvtxMarkEx(const tl_nvtxEventAttributes_t *a);
void tl_nvtxMarkA(const char *message);
tl_nvtxRangeId_t tl_nvtxRangeStartEx(const tl_nvtxEventAttributes_t *a);
tl_nvtxRangeId_t tl_nvtxRangeStartA(const char *message);
void tl_nvtxRangeEnd(tl_nvtxRangeId_t id);
int tl_nvtxRangePushEx(const tl_nvtxEventAttributes_t *a);
int tl_nvtxRangePushA(const char *message);
int tl_nvtxRangePop(void);

#ifndef TL_NVTX_NO_API_NAMES
#define nvtxEventAttributes_t tl_nvtxEventAttributes_t
#define nvtxRangeId_t tl_nvtxRangeId_t
#define NVTX_VERSION TL_NVTX_VERSION
#define NVTX_EVENT_ATTRIB_STRUCT_SIZE TL_NVTX_EVENT_ATTRIB_STRUCT_SIZE
#define NVTX_MESSAGE_TYPE_ASCII TL_NVTX_MESSAGE_TYPE_ASCII
#define NVTX_MESSAGE_TYPE_UNICODE TL_NVTX_MESSAGE_TYPE_UNICODE
#define nvtxMarkEx tl_nvtxMarkEx
#define nvtxMarkA tl_nvtxMarkA
#define nvtxRangeStartEx tl_nvtxRangeStartEx
#define nvtxRangeStartA tl_nvtxRangeStartA
#define nvtxRangeEnd tl_nvtxRangeEnd
#define nvtxRangePushEx tl_nvtxRangePushEx
#define nvtxRangePushA tl_nvtxRangePushA
#define nvtxRangePop tl_nvtxRangePop
#endif

#endif /* XPL_TL_NVTX_LOADER_H */
