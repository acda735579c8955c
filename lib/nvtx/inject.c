/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inject.c - NVTX without CUDA: libxprobe as an NVTX v3 injection library.
 *
 * The loader protocol (nvtx3/nvtxDetail/nvtxInit.h): at an application's
 * first NVTX call, the NVTX headers compiled into it read
 * NVTX_INJECTION64_PATH, dlopen that library and call its exported
 * InitializeInjectionNvtx2(getExportTable).  The injection asks the export
 * table for the callback table (NVTX_ETID_CALLBACKS) and, per module,
 * GetModuleFunctionTable() gives an array of pointers to the application's
 * function-pointer slots; writing our functions there routes the calls to
 * us.  Slots we leave alone become no-ops.  Returning 0 makes the loader
 * unload us and turn everything into no-ops.
 *
 * What is handled (CORE module): nvtxMarkA/MarkEx, nvtxRangeStartA/
 * StartEx, nvtxRangeEnd, nvtxRangePushA/PushEx, nvtxRangePop.  Ex forms
 * with an ASCII message record the name; with a wide or registered message
 * the range is still tracked (push levels stay right) with the
 * NAME_UNSUPPORTED flag and no name, and readers skip it.  Domain variants
 * (CORE2), categories, payloads and colours are not collected (the CLI
 * contract's data-minimisation rule).
 *
 * Push levels are kept per thread whether or not a session is recording,
 * so a session that begins inside nested ranges still reports the right
 * levels.  Process range ids come from one process-wide counter (never 0),
 * so they stay unique across threads and thread-id reuse.
 *
 * The ABI below is transcribed from nvtx3/nvtxDetail/nvtxTypes.h and
 * nvToolsExt.h (stable across NVTX v3); tests/lib/nvtx_abi_check.c checks
 * it against the installed headers at build time.  Building libxprobe needs
 * no CUDA.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../internal.h"
#include "../producers/sys_trace.h"
#include "nvtx_abi.h"

static _Atomic uint64_t range_ids;
static _Atomic int nvtx_routed;

/* The ASCII message of an Ex attribute struct, or NULL (wide, registered,
 * malformed).  Reads only within the size the caller declared. */
static const char *ex_ascii(const xpl_nvtxEventAttributes_t *a)
{
	if (!a || a->size < offsetof(xpl_nvtxEventAttributes_t, message) + sizeof(void *))
		return NULL;
	if (a->messageType != XPL_NVTX_MESSAGE_TYPE_ASCII)
		return NULL;
	return a->message.ascii;
}

/*
 * Each callback tries the inline fast path (sys_trace.h) and tail-calls its
 * general version only when that cannot record (first record of a thread,
 * a ring about to wrap or full, a name over 127 bytes, no message), so the
 * common call needs no stack frame.
 */
static __attribute__((noinline)) void mark_slow(const char *message)
{
	xpl_rec_named(XPROBE_EV_NVTX_MARK, message, 0, 0, 0);
}

static void NVTX_CB x_MarkA(const char *message)
{
	if (unlikely(xpl_fast_named(&xpl_tls, XPROBE_EV_NVTX_MARK, message, 0, 0, 0) < 0) &&
	    message)
		mark_slow(message);
}

static void NVTX_CB x_MarkEx(const xpl_nvtxEventAttributes_t *a)
{
	const char *m = ex_ascii(a);

	if (a && xpl_fast_named(&xpl_tls, XPROBE_EV_NVTX_MARK, m, 0, 0, 0) < 0)
		mark_slow(m);
}

static __attribute__((noinline)) uint64_t start_slow(const char *message, uint64_t id)
{
	xpl_rec_named(XPROBE_EV_NVTX_START, message, 0, id, 0);
	return id;
}

static uint64_t NVTX_CB x_RangeStartA(const char *message)
{
	uint64_t id = atomic_fetch_add_explicit(&range_ids, 1, memory_order_relaxed) + 1;

	if (unlikely(xpl_fast_named(&xpl_tls, XPROBE_EV_NVTX_START, message, 0, id, 0) < 0))
		return start_slow(message, id);
	return id;
}

static uint64_t NVTX_CB x_RangeStartEx(const xpl_nvtxEventAttributes_t *a)
{
	uint64_t id = atomic_fetch_add_explicit(&range_ids, 1, memory_order_relaxed) + 1;
	const char *m = ex_ascii(a);

	if (unlikely(xpl_fast_named(&xpl_tls, XPROBE_EV_NVTX_START, m, 0, id, 0) < 0))
		return start_slow(m, id);
	return id;
}

static __attribute__((noinline)) void end_slow(uint64_t id)
{
	xpl_rec_plain(XPROBE_EV_NVTX_END, 0, id, 0);
}

static void NVTX_CB x_RangeEnd(uint64_t id)
{
	if (id && unlikely(xpl_fast_plain(&xpl_tls, XPROBE_EV_NVTX_END, 0, id, 0) < 0))
		end_slow(id);
}

static __attribute__((noinline)) int push_slow(const char *message, int level)
{
	xpl_rec_named(XPROBE_EV_NVTX_PUSH, message, (uint32_t)level, 0, 0);
	return level;
}

static int NVTX_CB x_RangePushA(const char *message)
{
	struct xpl_tls *t = &xpl_tls;
	int level = t->nvtx_level++;

	if (unlikely(xpl_fast_named(t, XPROBE_EV_NVTX_PUSH, message, (uint32_t)level, 0, 0) < 0))
		return push_slow(message, level);
	return level;
}

static int NVTX_CB x_RangePushEx(const xpl_nvtxEventAttributes_t *a)
{
	struct xpl_tls *t = &xpl_tls;
	int level = t->nvtx_level++;
	const char *m = ex_ascii(a);

	if (unlikely(xpl_fast_named(t, XPROBE_EV_NVTX_PUSH, m, (uint32_t)level, 0, 0) < 0))
		return push_slow(m, level);
	return level;
}

static __attribute__((noinline)) int pop_slow(int level)
{
	xpl_rec_plain(XPROBE_EV_NVTX_POP, (uint32_t)level, 0, 0);
	return level;
}

static int NVTX_CB x_RangePop(void)
{
	struct xpl_tls *t = &xpl_tls;
	int level;

	if (t->nvtx_level <= 0)
		return -1; /* NVTX: a negative value reports an error (no open range) */
	level = --t->nvtx_level;
	if (unlikely(xpl_fast_plain(t, XPROBE_EV_NVTX_POP, (uint32_t)level, 0, 0) < 0))
		return pop_slow(level);
	return level;
}

static bool hook(xpl_NvtxFunctionTable table, unsigned size, unsigned idx,
		 xpl_NvtxFunctionPointer fn)
{
	if (idx == 0 || idx >= size || !table[idx])
		return false;
	*table[idx] = fn;
	return true;
}

XPROBE_API int NVTX_CB InitializeInjectionNvtx2(xpl_NvtxGetExportTableFunc_t get)
{
	const xpl_NvtxExportTableCallbacks *cb;
	const xpl_NvtxExportTableVersionInfo *vi;
	xpl_NvtxFunctionTable table = NULL;
	unsigned size = 0;
	bool ok = true;

	if (!get)
		return 0;
	cb = get(XPL_NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		return 0;
	if (!cb->GetModuleFunctionTable(XPL_NVTX_CB_MODULE_CORE, &table, &size) || !table)
		return 0;
	ok &= hook(table, size, XPL_NVTX_CBID_CORE_MarkEx, (xpl_NvtxFunctionPointer)x_MarkEx);
	ok &= hook(table, size, XPL_NVTX_CBID_CORE_MarkA, (xpl_NvtxFunctionPointer)x_MarkA);
	ok &= hook(table, size, XPL_NVTX_CBID_CORE_RangeStartEx,
		   (xpl_NvtxFunctionPointer)x_RangeStartEx);
	ok &= hook(table, size, XPL_NVTX_CBID_CORE_RangeStartA,
		   (xpl_NvtxFunctionPointer)x_RangeStartA);
	ok &= hook(table, size, XPL_NVTX_CBID_CORE_RangeEnd, (xpl_NvtxFunctionPointer)x_RangeEnd);
	ok &= hook(table, size, XPL_NVTX_CBID_CORE_RangePushEx,
		   (xpl_NvtxFunctionPointer)x_RangePushEx);
	ok &= hook(table, size, XPL_NVTX_CBID_CORE_RangePushA,
		   (xpl_NvtxFunctionPointer)x_RangePushA);
	ok &= hook(table, size, XPL_NVTX_CBID_CORE_RangePop, (xpl_NvtxFunctionPointer)x_RangePop);
	if (!ok) {
		pr_warn("NVTX injection: the application's core callback table is smaller than "
			"expected; some NVTX calls are not routed");
	}
	vi = get(XPL_NVTX_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(3);
	atomic_store(&nvtx_routed, 1);
	pr_info("NVTX injection: ranges and marks are routed to libxprobe");
	return 1;
}

/* For tests and trace_info: did the NVTX loader attach us? */
int xpl_nvtx_routed(void)
{
	return atomic_load(&nvtx_routed);
}
