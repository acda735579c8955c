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
 * so they stay unique across threads and thread-id reuse: an id is
 * seq << 1 | recorded, the low bit saying that the Agent's armed capture
 * recorded the range's start (lib/producers/agent_capture.h), so
 * nvtxRangeEnd knows whether to admit the end without a table.
 *
 * A HISTOGRAM capture (agent.h, MODE_HISTOGRAM) keeps no records: the
 * same admission decides, then a push stores its time and group in the
 * thread's stack (agent_hist_table.h) and its pop counts the latency; a
 * range start stores them in the in-flight table under its sequence
 * number and its end, on any thread, takes them back and counts.  No
 * allocation, no I/O, no lock but the first sight of a new group key.
 *
 * Two sinks, one call: an inspect session's host rings (the XPROBE_INSPECT_*
 * door, sys_trace.h) and the Agent's capture while `xprobe measure` has one
 * armed (the control socket, lib/agent/).  Each is checked on its own, so
 * both record when both are active.  Unarmed, the Agent costs a push or a
 * range start one relaxed load and a predictable branch, a pop one test of
 * a thread-local word, a range end one test of the id's low bit; marks
 * never reach it.  Armed, its filters run before a timestamp is read or a
 * record reserved.
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
#include "../producers/agent_capture.h"
#include "../producers/agent_hist_table.h"
#include "../producers/sys_trace.h"
#include "nvtx_abi.h"

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

/* --- the Agent's side (armed paths, out of line) --------------------------- */

/* An Ex attribute struct the Agent cannot read: counted while armed. */
static __attribute__((noinline)) void agent_malformed(void)
{
	struct xpl_tls *t = &xpl_tls;
	struct xpl_agent_cap *c;
	bool nested;

	c = xpl_agent_enter(t, &nested);
	if (!c)
		return;
	atomic_fetch_add_explicit(&c->unknown, 1, memory_order_relaxed);
	xpl_agent_leave(t, nested);
}

static bool ex_malformed(const xpl_nvtxEventAttributes_t *a)
{
	return !a || a->size < offsetof(xpl_nvtxEventAttributes_t, message) + sizeof(void *);
}

/* HISTOGRAM: this thread's stack in the armed capture @c (taken at its
 * first use), or NULL when --max-inflight stacks are taken. */
static struct xpl_hist_stack *hist_stack(struct xpl_tls *t, struct xpl_agent_cap *c)
{
	if (!t->agent_hslot) {
		uint32_t k = xpl_hist_stack_take(c->hist);

		t->agent_hslot = k ? k : UINT32_MAX;
	}
	if (t->agent_hslot == UINT32_MAX)
		return NULL;
	return &c->hist->stacks[t->agent_hslot - 1];
}

/* The flags a histogram group keeps of a name. */
static inline uint16_t hist_name_flags(bool complete)
{
	return complete ? XPROBE_AGENT_HIST_F_NAME_COMPLETE : 0;
}

/* HISTOGRAM push at @level (admitted): its time and group on the thread's
 * stack, the level's bit set for the pop.  A signal handler's push inside
 * a push of its thread is fine here: it has a level of its own. */
static void hist_push(struct xpl_tls *t, struct xpl_agent_cap *c, const char *message, int level,
		      uint64_t bit)
{
	struct xpl_hist_stack *st;
	uint32_t kept;
	bool complete;
	int64_t g;

	if (!bit) {
		xpl_hist_count(c->hist, XPROBE_AGENT_HC_DEPTH_OVERFLOW);
		return;
	}
	st = hist_stack(t, c);
	if (!st)
		return;
	xpl_agent_name_len(message, &kept, &complete);
	g = xpl_hist_group(c->hist, XPROBE_AGENT_KIND_NVTX_RANGE, t->tid, message, kept,
			   hist_name_flags(complete));
	st->grp[level] = g;
	st->ts[level] = xpl_agent_hist_now(c);
	t->agent_mask |= bit;
}

/* A push at @level: recorded when its name passes the rules; the level's
 * bit says so for the pop. */
static __attribute__((noinline)) void agent_push(const char *message, int level)
{
	struct xpl_tls *t = &xpl_tls;
	struct xpl_agent_cap *c;
	uint64_t bit = level < XPL_AGENT_LEVELS ? 1ull << level : 0;
	bool nested;

	c = xpl_agent_enter(t, &nested);
	if (!c)
		return;
	if (t->agent_gen != c->gen) {
		t->agent_mask = 0;
		t->agent_gen = c->gen;
		t->agent_hslot = 0;
	}
	t->agent_mask &= ~bit;
	if (c->hist) {
		if (message && xpl_agent_name_ok(c, message))
			hist_push(t, c, message, level, bit);
	} else if (message && xpl_agent_name_ok(c, message)) {
		uint32_t kept;
		bool complete;

		xpl_agent_name_len(message, &kept, &complete);
		if (nested || !bit)
			xpl_agent_drop(c);
		else if (xpl_agent_put(t, c, XPROBE_EV_NVTX_PUSH, message, kept,
				       complete ? XPROBE_RECF_NAME_COMPLETE : 0, (uint32_t)level,
				       0))
			t->agent_mask |= bit;
	}
	xpl_agent_leave(t, nested);
}

/* A pop whose push was recorded in the armed capture (bit @level set). */
static __attribute__((noinline)) void agent_pop(int level)
{
	struct xpl_tls *t = &xpl_tls;
	struct xpl_agent_cap *c;
	uint64_t bit = (uint32_t)level < XPL_AGENT_LEVELS ? 1ull << level : 0;
	uint64_t now;
	bool nested;

	if (!(t->agent_mask & bit))
		return;
	now = xpl_rdtsc(); /* a histogram's end, before anything else (raw TSC) */
	t->agent_mask &= ~bit;
	if (t->agent_gen != atomic_load_explicit(&xpl_agent_hot.gen, memory_order_relaxed))
		return; /* pushed in an earlier capture */
	c = xpl_agent_enter(t, &nested);
	if (!c)
		return;
	if (c->gen == t->agent_gen) {
		if (c->hist) {
			/* the bit was set with the stack in hand */
			const struct xpl_hist_stack *st = &c->hist->stacks[t->agent_hslot - 1];

			if (!c->tsc)
				now = xpl_mono_ns();
			xpl_hist_add(c->hist, st->grp[level],
				     xpl_agent_hist_ns(c, xpl_agent_hist_since(st->ts[level], now)));
		} else if (nested)
			xpl_agent_drop(c);
		else
			xpl_agent_put(t, c, XPROBE_EV_NVTX_POP, NULL, 0, 0, (uint32_t)level, 0);
	}
	xpl_agent_leave(t, nested);
}

/* A process range start while armed: the id, its low bit set when the
 * capture recorded the start.  The sequence is taken after the capture
 * was seen, so it is past the capture's seq_at_arm. */
static __attribute__((noinline)) uint64_t agent_start(const char *message)
{
	struct xpl_tls *t = &xpl_tls;
	struct xpl_agent_cap *c;
	uint64_t seq, id;
	bool nested;

	c = xpl_agent_enter(t, &nested);
	seq = atomic_fetch_add_explicit(&xpl_nvtx_range_seq, 1, memory_order_relaxed) + 1;
	id = seq << 1;
	if (!c)
		return id;
	if (message && seq > c->seq_at_arm && xpl_agent_name_ok(c, message)) {
		uint32_t kept;
		bool complete;
		int64_t g;

		xpl_agent_name_len(message, &kept, &complete);
		if (c->hist) {
			g = xpl_hist_group(c->hist, XPROBE_AGENT_KIND_NVTX_RANGE, t->tid, message,
					   kept, hist_name_flags(complete));
			if (xpl_hist_open_put(c->hist, seq, xpl_agent_hist_now(c), g))
				id |= 1;
		} else if (nested)
			xpl_agent_drop(c);
		else if (xpl_agent_put(t, c, XPROBE_EV_NVTX_START, message, kept,
				       complete ? XPROBE_RECF_NAME_COMPLETE : 0, 0, id | 1))
			id |= 1;
	}
	xpl_agent_leave(t, nested);
	return id;
}

/* The end of a range whose start some capture recorded (id bit 0): admitted
 * when that capture is the armed one. */
static __attribute__((noinline)) void agent_end(uint64_t id)
{
	struct xpl_tls *t = &xpl_tls;
	struct xpl_agent_cap *c;
	uint64_t now, ts;
	int64_t g;
	bool nested;

	if (!xpl_agent_armed())
		return;
	now = xpl_rdtsc(); /* a histogram's end (raw TSC; the clock is the capture's) */
	c = xpl_agent_enter(t, &nested);
	if (!c)
		return;
	if ((id >> 1) > c->seq_at_arm) {
		if (c->hist) {
			if (!c->tsc)
				now = xpl_mono_ns();
			if (xpl_hist_open_take(c->hist, id >> 1, &ts, &g))
				xpl_hist_add(c->hist, g,
					     xpl_agent_hist_ns(c, xpl_agent_hist_since(ts, now)));
		} else if (nested)
			xpl_agent_drop(c);
		else
			xpl_agent_put(t, c, XPROBE_EV_NVTX_END, NULL, 0, 0, 0, id);
	}
	xpl_agent_leave(t, nested);
}

static inline uint64_t new_range_id(const char *message)
{
	if (unlikely(xpl_agent_armed()))
		return agent_start(message);
	return (atomic_fetch_add_explicit(&xpl_nvtx_range_seq, 1, memory_order_relaxed) + 1) << 1;
}

/* --- ranges --------------------------------------------------------------------- */

static __attribute__((noinline)) uint64_t start_slow(const char *message, uint64_t id)
{
	xpl_rec_named(XPROBE_EV_NVTX_START, message, 0, id, 0);
	return id;
}

static uint64_t NVTX_CB x_RangeStartA(const char *message)
{
	uint64_t id = new_range_id(message);

	if (unlikely(xpl_fast_named(&xpl_tls, XPROBE_EV_NVTX_START, message, 0, id, 0) < 0))
		return start_slow(message, id);
	return id;
}

static uint64_t NVTX_CB x_RangeStartEx(const xpl_nvtxEventAttributes_t *a)
{
	const char *m = ex_ascii(a);
	uint64_t id;

	if (unlikely(xpl_agent_armed()) && ex_malformed(a))
		agent_malformed();
	id = new_range_id(m);
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
	if (unlikely(id & 1))
		agent_end(id);
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

	if (unlikely(xpl_agent_armed()))
		agent_push(message, level);
	if (unlikely(xpl_fast_named(t, XPROBE_EV_NVTX_PUSH, message, (uint32_t)level, 0, 0) < 0))
		return push_slow(message, level);
	return level;
}

static int NVTX_CB x_RangePushEx(const xpl_nvtxEventAttributes_t *a)
{
	struct xpl_tls *t = &xpl_tls;
	int level = t->nvtx_level++;
	const char *m = ex_ascii(a);

	if (unlikely(xpl_agent_armed())) {
		if (ex_malformed(a))
			agent_malformed();
		agent_push(m, level);
	}
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
	if (unlikely(t->agent_mask))
		agent_pop(level);
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
