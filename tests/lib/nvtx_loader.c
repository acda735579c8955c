/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvtx_loader.c - the application side of the NVTX v3 injection protocol
 * (nvtx_loader.h says what it is and why): function-pointer slots that
 * start at initialization stubs, the one-time load of
 * NVTX_INJECTION64_PATH, the export tables handed to its
 * InitializeInjectionNvtx2, and the no-op answers when nothing injected.
 *
 * Initialization runs once (pthread_once), from whichever thread calls NVTX
 * first; the others wait for it, as NVTX's own loader makes them.  After
 * it, a call is one indirect call through its slot, as in a real NVTX
 * program, so bench/lib/bench_nvtx.c measures what an application pays.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "nvtx_loader.h"

typedef void (*mark_ex_fn)(const tl_nvtxEventAttributes_t *);
typedef void (*mark_a_fn)(const char *);
typedef tl_nvtxRangeId_t (*start_ex_fn)(const tl_nvtxEventAttributes_t *);
typedef tl_nvtxRangeId_t (*start_a_fn)(const char *);
typedef void (*end_fn)(tl_nvtxRangeId_t);
typedef int (*push_ex_fn)(const tl_nvtxEventAttributes_t *);
typedef int (*push_a_fn)(const char *);
typedef int (*pop_fn)(void);

static void init_MarkEx(const tl_nvtxEventAttributes_t *a);
static void init_MarkA(const char *m);
static tl_nvtxRangeId_t init_RangeStartEx(const tl_nvtxEventAttributes_t *a);
static tl_nvtxRangeId_t init_RangeStartA(const char *m);
static void init_RangeEnd(tl_nvtxRangeId_t id);
static int init_RangePushEx(const tl_nvtxEventAttributes_t *a);
static int init_RangePushA(const char *m);
static int init_RangePop(void);

/*
 * The CORE module's slots, indexed by callback id.  Each holds a function
 * of its own type, stored as tl_NvtxFunctionPointer (all function pointers
 * share one representation here): the injection writes its functions into
 * them through the table below.  The W forms and the naming calls have no
 * API here; their slots exist so the table has the protocol's size.
 */
static tl_NvtxFunctionPointer slots[TL_NVTX_CBID_CORE_SIZE] = {
	[TL_NVTX_CBID_CORE_MarkEx] = (tl_NvtxFunctionPointer)init_MarkEx,
	[TL_NVTX_CBID_CORE_MarkA] = (tl_NvtxFunctionPointer)init_MarkA,
	[TL_NVTX_CBID_CORE_RangeStartEx] = (tl_NvtxFunctionPointer)init_RangeStartEx,
	[TL_NVTX_CBID_CORE_RangeStartA] = (tl_NvtxFunctionPointer)init_RangeStartA,
	[TL_NVTX_CBID_CORE_RangeEnd] = (tl_NvtxFunctionPointer)init_RangeEnd,
	[TL_NVTX_CBID_CORE_RangePushEx] = (tl_NvtxFunctionPointer)init_RangePushEx,
	[TL_NVTX_CBID_CORE_RangePushA] = (tl_NvtxFunctionPointer)init_RangePushA,
	[TL_NVTX_CBID_CORE_RangePop] = (tl_NvtxFunctionPointer)init_RangePop,
};
/* The stubs, to tell an untouched slot after the injection returned. */
static const tl_NvtxFunctionPointer stubs[TL_NVTX_CBID_CORE_SIZE] = {
	[TL_NVTX_CBID_CORE_MarkEx] = (tl_NvtxFunctionPointer)init_MarkEx,
	[TL_NVTX_CBID_CORE_MarkA] = (tl_NvtxFunctionPointer)init_MarkA,
	[TL_NVTX_CBID_CORE_RangeStartEx] = (tl_NvtxFunctionPointer)init_RangeStartEx,
	[TL_NVTX_CBID_CORE_RangeStartA] = (tl_NvtxFunctionPointer)init_RangeStartA,
	[TL_NVTX_CBID_CORE_RangeEnd] = (tl_NvtxFunctionPointer)init_RangeEnd,
	[TL_NVTX_CBID_CORE_RangePushEx] = (tl_NvtxFunctionPointer)init_RangePushEx,
	[TL_NVTX_CBID_CORE_RangePushA] = (tl_NvtxFunctionPointer)init_RangePushA,
	[TL_NVTX_CBID_CORE_RangePop] = (tl_NvtxFunctionPointer)init_RangePop,
};
/* The CORE function table: pointers to the slots, entry 0 unused. */
static tl_NvtxFunctionPointer *core_table[TL_NVTX_CBID_CORE_SIZE];

static uint32_t injection_version;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int get_module_table(int module, tl_NvtxFunctionTable *out_table, unsigned int *out_size)
{
	if (module != TL_NVTX_CB_MODULE_CORE || !out_table || !out_size)
		return 0;
	*out_table = core_table;
	*out_size = TL_NVTX_CBID_CORE_SIZE;
	return 1;
}

static void set_injection_version(uint32_t v)
{
	injection_version = v;
}

static const tl_NvtxExportTableCallbacks callbacks = {
	sizeof(tl_NvtxExportTableCallbacks),
	get_module_table,
};
static const tl_NvtxExportTableVersionInfo version_info = {
	sizeof(tl_NvtxExportTableVersionInfo),
	TL_NVTX_VERSION,
	0,
	set_injection_version,
};

static const void *get_export_table(uint32_t id)
{
	switch (id) {
	case TL_NVTX_ETID_CALLBACKS:
		return &callbacks;
	case TL_NVTX_ETID_VERSIONINFO:
		return &version_info;
	}
	return NULL;
}

static void initialize(void)
{
	const char *path = getenv("NVTX_INJECTION64_PATH");
	tl_InitializeInjectionNvtx2_t init = NULL;
	void *h = NULL;
	int ok = 0;

	for (int i = 1; i < TL_NVTX_CBID_CORE_SIZE; i++)
		core_table[i] = &slots[i];
	if (path && path[0])
		h = dlopen(path, RTLD_LAZY);
	if (h)
		*(void **)&init = dlsym(h, "InitializeInjectionNvtx2");
	if (init)
		ok = init(get_export_table) != 0;
	if (!ok && h)
		dlclose(h);
	/* what nobody took over becomes a no-op (all of it, without injection) */
	for (int i = 1; i < TL_NVTX_CBID_CORE_SIZE; i++)
		if (!ok || slots[i] == stubs[i])
			slots[i] = NULL;
}

static void init_MarkEx(const tl_nvtxEventAttributes_t *a)
{
	pthread_once(&once, initialize);
	tl_nvtxMarkEx(a);
}

static void init_MarkA(const char *m)
{
	pthread_once(&once, initialize);
	tl_nvtxMarkA(m);
}

static tl_nvtxRangeId_t init_RangeStartEx(const tl_nvtxEventAttributes_t *a)
{
	pthread_once(&once, initialize);
	return tl_nvtxRangeStartEx(a);
}

static tl_nvtxRangeId_t init_RangeStartA(const char *m)
{
	pthread_once(&once, initialize);
	return tl_nvtxRangeStartA(m);
}

static void init_RangeEnd(tl_nvtxRangeId_t id)
{
	pthread_once(&once, initialize);
	tl_nvtxRangeEnd(id);
}

static int init_RangePushEx(const tl_nvtxEventAttributes_t *a)
{
	pthread_once(&once, initialize);
	return tl_nvtxRangePushEx(a);
}

static int init_RangePushA(const char *m)
{
	pthread_once(&once, initialize);
	return tl_nvtxRangePushA(m);
}

static int init_RangePop(void)
{
	pthread_once(&once, initialize);
	return tl_nvtxRangePop();
}

/* --- the API: one call through the slot, or the no-op answer --------------- */

#define SLOT(type, id) ((type)__atomic_load_n(&slots[id], __ATOMIC_ACQUIRE))

void tl_nvtxMarkEx(const tl_nvtxEventAttributes_t *a)
{
	mark_ex_fn f = SLOT(mark_ex_fn, TL_NVTX_CBID_CORE_MarkEx);

	if (f)
		f(a);
}

void tl_nvtxMarkA(const char *message)
{
	mark_a_fn f = SLOT(mark_a_fn, TL_NVTX_CBID_CORE_MarkA);

	if (f)
		f(message);
}

tl_nvtxRangeId_t tl_nvtxRangeStartEx(const tl_nvtxEventAttributes_t *a)
{
	start_ex_fn f = SLOT(start_ex_fn, TL_NVTX_CBID_CORE_RangeStartEx);

	return f ? f(a) : 0;
}

tl_nvtxRangeId_t tl_nvtxRangeStartA(const char *message)
{
	start_a_fn f = SLOT(start_a_fn, TL_NVTX_CBID_CORE_RangeStartA);

	return f ? f(message) : 0;
}

void tl_nvtxRangeEnd(tl_nvtxRangeId_t id)
{
	end_fn f = SLOT(end_fn, TL_NVTX_CBID_CORE_RangeEnd);

	if (f)
		f(id);
}

int tl_nvtxRangePushEx(const tl_nvtxEventAttributes_t *a)
{
	push_ex_fn f = SLOT(push_ex_fn, TL_NVTX_CBID_CORE_RangePushEx);

	return f ? f(a) : TL_NVTX_NO_PUSH_POP_TRACKING;
}

int tl_nvtxRangePushA(const char *message)
{
	push_a_fn f = SLOT(push_a_fn, TL_NVTX_CBID_CORE_RangePushA);

	return f ? f(message) : TL_NVTX_NO_PUSH_POP_TRACKING;
}

int tl_nvtxRangePop(void)
{
	pop_fn f = SLOT(pop_fn, TL_NVTX_CBID_CORE_RangePop);

	return f ? f() : TL_NVTX_NO_PUSH_POP_TRACKING;
}
