/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate_checks.c - the read-only validation of a measurement (validate.h):
 * resolution of each endpoint, requirements, Agent activation, CUDA
 * majors, policy compatibility and recommendation, issues, warnings;
 * and the --cpu-sample / --syscall-aggregate inventory checks.
 *
 * Steps of xp_validate_pair (numbers repeated below):
 *   1. verify identity;
 *   2. resolve start, then end (uprobe, python GC, tracepoint); CUDA
 *      selectors were fully checked by the parser;
 *   3. requirements, and for CUDA endpoints the target's mapped CUDA
 *      libraries -> activation and majors;
 *   4. issues in the reference order;
 *   5. policy mask (strict, narrowed by the correlator's), the
 *      recommendation, and the policy issue;
 *   6. warnings (UPROBE_SINGLE_STEP: probe_warnings.c); verify identity
 *      again.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../common/json.h"
#include "../../common/parse.h"
#include "../selector/syscall_table.h"
#include "doctor_checks.h"
#include "../resolve/target_files.h"
#include "../process/procfs.h"
#include "validate_checks.h"
#include "agent_path.h"
#include "../resolve/xelf.h"
#include "../process/perf_map_file.h"
#include "../resolve/tracefs.h"
#include "../model/names.h"

#define P(x) (1u << (x))

const char *xp_checks_activation_name(enum xp_agent_activation a)
{
	static const char *const names[] = {
		[XP_AGENT_NOT_REQUIRED] = "not_required",
		[XP_AGENT_ALREADY_LOADED] = "already_loaded",
		[XP_AGENT_INJECTION_REQUIRED] = "injection_required",
		[XP_AGENT_STARTUP_REQUIRED] = "startup_required",
	};

	return XP_NAME_OF(names, a, "not_required");
}

const char *xp_policy_reason_name(enum xp_policy_reason r)
{
	static const char *const names[] = {
		[XP_REASON_DETERMINISTIC_KEY] = "deterministic_correlation_key",
		[XP_REASON_HOST_CALL_FRAME] = "host_call_frame",
		[XP_REASON_STREAM_ORDER] = "cuda_stream_order",
		[XP_REASON_TEMPORAL] = "temporal_order_only",
	};

	return XP_NAME_OF(names, r, "temporal_order_only");
}

const char *xp_python_status_name(enum xp_python_status s)
{
	static const char *const names[] = {
		[XP_PY_NOT_PYTHON] = "not_python",
		[XP_PY_PERF_MAP_PRESENT] = "perf_map_present",
		[XP_PY_PERF_MAP_POSSIBLE] = "perf_map_possible",
		[XP_PY_NATIVE_ONLY] = "native_only",
	};

	return XP_NAME_OF(names, s, "not_python");
}

bool xp_endpoint_collectable(const struct xp_selector *sel)
{
	/* host endpoints: the eBPF collectors (src/live); NVTX, CUDA API
	 * and activity endpoints: the in-process Agent (src/agent/
	 * agent_source.c), activated as requirements.agent_activation says.
	 * Whether the Agent then has a device backend for CUDA API and
	 * activity records is known only at ARM (CUPTI_NOT_AVAILABLE), never
	 * by a read-only validation. */
	(void)sel;
	return true;
}

void xp_issue_add(struct xp_issue *v, size_t *n, int code, const char *fmt, ...)
{
	va_list ap;

	if (*n == XP_MAX_ISSUES)
		return;
	v[*n].code = code;
	va_start(ap, fmt);
	vsnprintf(v[*n].message, sizeof(v[*n].message), fmt, ap);
	va_end(ap);
	(*n)++;
}

/* ---- policy ---------------------------------------------------------------- */

/*
 * The APIs that launch exactly one kernel, whose CUPTI correlation id the
 * kernel's activity record carries: an exact API <-> kernel pair.  The
 * reference allows cudaLaunchKernel and cuLaunchKernel only; CUDA 13
 * compiles kernel<<<>>>() to __cudaLaunchKernel (a callback id of its
 * own), and per-thread-default-stream builds call the _ptsz forms, whose
 * kernels carry the call's correlation id just the same (docs/cuda.md,
 * "Which API a launch is").  Graph launches start many kernels under one
 * id and are not in the list.
 */
static bool launch_api(const struct xp_selector *s)
{
	static const char *const runtime[] = {
		"cudaLaunchKernel",	      "cudaLaunchKernel_ptsz",
		"__cudaLaunchKernel",	      "__cudaLaunchKernel_ptsz",
		"cudaLaunchKernelExC",	      "cudaLaunchKernelExC_ptsz",
		"cudaLaunchCooperativeKernel", "cudaLaunchCooperativeKernel_ptsz",
	};
	static const char *const driver[] = {
		"cuLaunchKernel",	      "cuLaunchKernel_ptsz",
		"cuLaunchKernelEx",	      "cuLaunchKernelEx_ptsz",
		"cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz",
	};
	const char *const *names;
	size_t n, i;

	if (s->kind != XP_SEL_CUDA_API || !s->category || !s->name)
		return false;
	if (strcmp(s->category, "runtime_api") == 0) {
		names = runtime;
		n = sizeof(runtime) / sizeof(runtime[0]);
	} else if (strcmp(s->category, "driver_api") == 0) {
		names = driver;
		n = sizeof(driver) / sizeof(driver[0]);
	} else {
		return false;
	}
	for (i = 0; i < n; i++)
		if (strcmp(s->name, names[i]) == 0)
			return true;
	return false;
}

/*
 * Exact matching, strictly: the correlator's lifecycles (a syscall's or
 * a GC collection's entry then exit: correlate/policy.c decides those),
 * or a CUPTI correlation key both endpoints really share.
 */
static bool exact_ok(const struct xp_selector *a, const struct xp_selector *b)
{
	enum xp_exact_kind k = xp_exact_kind(a, b);

	if (k == XP_EXACT_SYSCALL || k == XP_EXACT_PYTHON_GC)
		return true;
	if (a->kind == XP_SEL_CUDA_API && b->kind == XP_SEL_CUDA_API)
		return xp_str_same(a->category, b->category) && xp_str_same(a->name, b->name);
	if (a->kind == XP_SEL_KERNEL && b->kind == XP_SEL_KERNEL)
		return true;
	if (a->kind == XP_SEL_MEMCPY && b->kind == XP_SEL_MEMCPY)
		return true;
	if (a->kind == XP_SEL_MEMSET && b->kind == XP_SEL_MEMSET)
		return true;
	if (a->kind == XP_SEL_NVTX && b->kind == XP_SEL_NVTX)
		return xp_str_same(a->regex, b->regex);
	return (launch_api(a) && b->kind == XP_SEL_KERNEL) ||
	       (a->kind == XP_SEL_KERNEL && launch_api(b));
}

unsigned xp_validate_policy_mask(const struct xp_endpoint_check *start,
				 const struct xp_endpoint_check *end)
{
	const struct xp_selector *a = start->sel, *b = end->sel;
	unsigned m = P(XP_POLICY_FIRST_AFTER) | P(XP_POLICY_NEAREST);

	if (exact_ok(a, b))
		m |= P(XP_POLICY_EXACT);
	if (a->kind == XP_SEL_UPROBE && b->kind == XP_SEL_UPROBE && !a->is_end && b->is_end &&
	    start->has_probe && end->has_probe &&
	    strcmp(start->probe.binary_path, end->probe.binary_path) == 0 &&
	    start->probe.file_offset == end->probe.file_offset)
		m |= P(XP_POLICY_STACK_NESTED);
	if (xp_selector_is_activity(a) && xp_selector_is_activity(b))
		m |= P(XP_POLICY_STREAM_ORDER);
	return m;
}

/* The correlator's recommendation order (xp_policy_recommend), with the
 * reason validate reports for it. */
void xp_validate_recommend(unsigned mask, enum xp_policy *policy, enum xp_policy_reason *reason)
{
	*policy = xp_policy_recommend(mask);
	switch (*policy) {
	case XP_POLICY_STACK_NESTED:
		*reason = XP_REASON_HOST_CALL_FRAME;
		break;
	case XP_POLICY_EXACT:
		*reason = XP_REASON_DETERMINISTIC_KEY;
		break;
	case XP_POLICY_STREAM_ORDER:
		*reason = XP_REASON_STREAM_ORDER;
		break;
	default:
		*reason = XP_REASON_TEMPORAL;
		break;
	}
}

static const char *policy_issue_text(enum xp_policy p)
{
	const char *t = xp_policy_requirement(p);

	return t ? t : "the policy is not compatible with these endpoints";
}

/* ---- endpoints ------------------------------------------------------------------ */

static int dup_marker(struct xp_usdt_marker *d, const struct xp_usdt_marker *s)
{
	*d = *s;
	d->binary_path = strdup(s->binary_path);
	d->access_path = strdup(s->access_path);
	d->provider = strdup(s->provider);
	d->name = strdup(s->name);
	d->arguments = strdup(s->arguments);
	d->build_id = s->build_id ? strdup(s->build_id) : NULL;
	if (!d->binary_path || !d->access_path || !d->provider || !d->name || !d->arguments ||
	    (s->build_id && !d->build_id)) {
		xp_usdt_marker_free(d);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Resolve one endpoint.  Python GC endpoints share one resolution: the
 * first of them resolves both markers into @gc (kept by the caller).
 */
static int resolve_endpoint(const struct xp_target *t, struct xp_endpoint_check *ep, bool is_start,
			    struct xp_usdt_marker gc[2], bool *gc_done, struct xp_error *err)
{
	const struct xp_selector *s = ep->sel;
	int rc = 0;

	ep->collectable = xp_endpoint_collectable(s);
	switch (s->kind) {
	case XP_SEL_UPROBE:
		rc = xp_resolve_uprobe(t, s, &ep->probe, err);
		ep->has_probe = rc == 0;
		break;
	case XP_SEL_PYTHON_GC:
		if (!*gc_done) {
			rc = xp_resolve_python_gc(t, &gc[0], &gc[1], err);
			if (rc)
				break;
			*gc_done = true;
		}
		rc = dup_marker(&ep->usdt, &gc[s->is_end ? 1 : 0]);
		if (rc)
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		ep->has_usdt = rc == 0;
		break;
	case XP_SEL_TRACEPOINT:
		rc = xp_tracefs_check(s->category, s->name, &ep->tracepoint_id, err);
		ep->has_tracepoint_id = rc == 0;
		break;
	default:
		break; /* syscalls and CUDA selectors: the parser checked them */
	}
	if (rc) {
		xp_error_detail_str(err, "selector", s->text);
		xp_error_prefix(err, "failed to resolve %s selector", is_start ? "start" : "end");
	}
	return rc;
}

static void endpoint_free(struct xp_endpoint_check *ep)
{
	if (ep->has_probe)
		xp_resolved_probe_free(&ep->probe);
	if (ep->has_usdt)
		xp_usdt_marker_free(&ep->usdt);
	ep->has_probe = ep->has_usdt = false;
}

void xp_validation_free(struct xp_validation *v)
{
	endpoint_free(&v->start);
	endpoint_free(&v->end);
	xp_warnings_free(&v->warnings);
}

/*
 * The instruction-boundary verdict of a +0x uprobe endpoint (resolve/
 * insn.h) as an issue: a mid-instruction offset and a return probe off a
 * function entry always; an unverified offset unless --unsafe-offset
 * (then offset_warning() reports it).  The issue carries measure's hint:
 * the nearest boundaries, or the flag.
 */
static void offset_issue(struct xp_validation *v, const struct xp_endpoint_check *ep,
			 const char *which, bool unsafe_offset)
{
	const struct xp_offset_info *in = &ep->probe.insn;
	const struct xp_selector *s = ep->sel;
	const char *kind = s->is_end ? "return" : "entry";
	unsigned long long off = ep->probe.file_offset;
	struct xp_issue *is = &v->issues[v->nissues];
	size_t before = v->nissues;

	if (s->kind != XP_SEL_UPROBE || s->uprobe_target != XP_UPROBE_OFFSET || !ep->has_probe)
		return;
	switch (in->check) {
	case XP_OFFSET_MID_INSN:
		xp_issue_add(v->issues, &v->nissues, XPROBE_E_INVALID_EVENT_SELECTOR,
			     "%s selector %s is not on an instruction boundary: file offset 0x%llx lies inside the instruction at 0x%llx of %s, and a probe there would corrupt the target (use +0x%llx or +0x%llx)",
			     which, s->text, off, (unsigned long long)in->before, in->function,
			     (unsigned long long)in->before, (unsigned long long)in->after);
		if (v->nissues > before)
			snprintf(is->hint, sizeof(is->hint),
				 "probe an instruction boundary: uprobe:%s:+0x%llx:%s (the instruction's start) or uprobe:%s:+0x%llx:%s (the next one)",
				 s->binary, (unsigned long long)in->before, kind, s->binary,
				 (unsigned long long)in->after, kind);
		break;
	case XP_OFFSET_NOT_ENTRY:
		xp_issue_add(v->issues, &v->nissues, XPROBE_E_INVALID_EVENT_SELECTOR,
			     "%s selector %s is a return probe inside function %s but not at its entry (+0x%llx): a uretprobe there would overwrite a word of the target's stack",
			     which, s->text, in->function, (unsigned long long)in->function_offset);
		if (v->nissues > before)
			snprintf(is->hint, sizeof(is->hint),
				 "put return probes on a function entry: uprobe:%s:+0x%llx:return",
				 s->binary, (unsigned long long)in->function_offset);
		break;
	case XP_OFFSET_UNVERIFIED:
		if (unsafe_offset)
			break; /* offset_warning() */
		xp_issue_add(v->issues, &v->nissues, XPROBE_E_INVALID_EVENT_SELECTOR,
			     "%s selector %s: file offset 0x%llx cannot be checked for an instruction boundary (%s); pass --unsafe-offset to probe it anyway",
			     which, s->text, off, in->reason);
		if (v->nissues > before)
			snprintf(is->hint, sizeof(is->hint),
				 "only if 0x%llx is known to start an instruction, rerun with --unsafe-offset: a probe inside an instruction corrupts the target",
				 off);
		break;
	default:
		break;
	}
}

/* --unsafe-offset: an unverified +0x offset is probed, with a warning. */
static void offset_warning(struct xp_validation *v, const struct xp_endpoint_check *ep,
			   const char *which)
{
	const struct xp_offset_info *in = &ep->probe.insn;
	const struct xp_selector *s = ep->sel;
	unsigned long long off = ep->probe.file_offset;
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;
	char msg[512];

	if (s->kind != XP_SEL_UPROBE || s->uprobe_target != XP_UPROBE_OFFSET || !ep->has_probe ||
	    in->check != XP_OFFSET_UNVERIFIED)
		return;
	xpc_json_init_buf(&w, &b, 0);
	xpc_json_obj_begin(&w);
	xpc_json_kstr(&w, "binary_path", ep->probe.binary_path);
	xpc_json_kstr(&w, "endpoint", which);
	xpc_json_ku64(&w, "file_offset", off);
	xpc_json_kstr(&w, "reason", in->reason);
	xpc_json_kstr(&w, "selector", s->text);
	xpc_json_obj_end(&w);
	snprintf(msg, sizeof(msg),
		 "%s selector offset 0x%llx was not checked for an instruction boundary (%s); probed because of --unsafe-offset",
		 which, off, in->reason);
	xp_warnings_add(&v->warnings, XP_WARN_UNVERIFIED_BOUNDARY, msg,
			xpc_json_finish(&w) ? NULL : xpc_buf_str(&b));
	xpc_buf_free(&b);
}

/*
 * TARGET_PROCESS_WILL_BE_MODIFIED.  The contract's requirements object is
 * closed, so what measure would inject travels in this warning's details:
 * agent_path (the Agent library, agent_path.h; null when none is found),
 * cuda_major (the one supported major, or null) and mapped_cuda_majors
 * (sorted keys).
 */
static void injection_warning(struct xp_validation *v)
{
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;
	size_t i;

	xpc_json_init_buf(&w, &b, 0);
	xpc_json_obj_begin(&w);
	xpc_json_kstr(&w, "agent_path", v->agent_library[0] ? v->agent_library : NULL);
	xpc_json_kopt_u64(&w, "cuda_major", v->has_cuda_major, (uint64_t)v->cuda_major);
	xpc_json_karr_begin(&w, "mapped_cuda_majors");
	for (i = 0; i < v->cuda.nmajors; i++)
		xpc_json_u64(&w, (uint64_t)v->cuda.majors[i]);
	xpc_json_arr_end(&w);
	xpc_json_obj_end(&w);
	xp_warnings_add(&v->warnings, "TARGET_PROCESS_WILL_BE_MODIFIED",
			"measure must inject the xprobe CUPTI agent into the target process",
			xpc_json_finish(&w) ? NULL : xpc_buf_str(&b));
	xpc_buf_free(&b);
}

/* A CUDA endpoint of a process that has not loaded CUDA (yet): measure
 * would refuse to inject into it (CUDA_CONTEXT_NOT_FOUND) and sees
 * nothing until it does. */
static void no_cuda_warning(struct xp_validation *v)
{
	char msg[256], det[64];

	snprintf(msg, sizeof(msg),
		 "target PID %u maps no CUDA runtime (libcudart.so.<N>) or driver (libcuda.so.1) "
		 "yet: its CUDA endpoints see nothing until it loads CUDA, and measure will not "
		 "modify it before then",
		 v->target.pid);
	snprintf(det, sizeof(det), "{\"pid\":%u}", v->target.pid);
	xp_warnings_add(&v->warnings, "NO_CUDA_MAPPED", msg, det);
}

/* The Agent library for the hint and the warning ("" when none is found:
 * measure then says where it looked). */
static void agent_library(struct xp_validation *v, const struct xp_validate_opts *opts)
{
	enum xp_agent_origin origin;
	struct xp_error lerr = { 0 };

	if (xp_checks_agent_library(opts ? opts->agent_path : NULL, v->agent_library,
				    sizeof(v->agent_library), &origin, &lerr))
		v->agent_library[0] = '\0';
	xp_error_clear(&lerr);
}

static bool broad_kernel(const struct xp_selector *s)
{
	return s->kind == XP_SEL_KERNEL &&
	       (!s->regex || strcmp(s->regex, ".*") == 0 || strcmp(s->regex, "^.*$") == 0);
}

int xp_validate_pair(const struct xp_target *t, const struct xp_selector *start,
		     const struct xp_selector *end, enum xp_policy policy,
		     const struct xp_validate_opts *opts, struct xp_validation *v,
		     struct xp_error *err)
{
	const struct xp_selector *sels[2] = { start, end };
	struct xp_usdt_marker gc[2];
	bool gc_done = false;
	char why[256];
	size_t i;
	int rc;

	memset(v, 0, sizeof(*v));
	v->target = *t;
	v->start.sel = start;
	v->end.sel = end;
	v->policy = policy;
	/* 1. */
	rc = xp_target_verify(t, err);
	if (rc)
		return rc;
	/* 2. */
	rc = resolve_endpoint(t, &v->start, true, gc, &gc_done, err);
	if (!rc)
		rc = resolve_endpoint(t, &v->end, false, gc, &gc_done, err);
	if (gc_done) {
		xp_usdt_marker_free(&gc[0]);
		xp_usdt_marker_free(&gc[1]);
	}
	if (rc)
		return rc;
	/* 3. */
	for (i = 0; i < 2; i++) {
		const struct xp_selector *s = sels[i];

		v->needs_ebpf |= xp_selector_is_host(s);
		v->needs_cupti_callback |= s->kind == XP_SEL_CUDA_API || s->kind == XP_SEL_NVTX;
		v->needs_cupti_activity |= xp_selector_is_activity(s);
		v->needs_nvtx |= s->kind == XP_SEL_NVTX;
	}
	v->needs_cupti = v->needs_cupti_callback || v->needs_cupti_activity;
	v->needs_clock_alignment = xp_selector_uses_host_clock(start) !=
				   xp_selector_uses_host_clock(end);
	v->activation = XP_AGENT_NOT_REQUIRED;
	if (v->needs_cupti) {
		struct xp_maps maps;

		rc = xp_maps_read(t, &maps, err);
		if (rc)
			return rc;
		xp_cuda_mapped_scan(&maps, &v->cuda);
		xp_maps_free(&maps);
		agent_library(v, opts);
		if (v->cuda.agent)
			v->activation = XP_AGENT_ALREADY_LOADED;
		else if (v->needs_nvtx)
			v->activation = XP_AGENT_STARTUP_REQUIRED;
		else
			v->activation = XP_AGENT_INJECTION_REQUIRED;
		if (v->cuda.nmajors == 1 && xp_cuda_major_supported(v->cuda.majors[0])) {
			v->has_cuda_major = true;
			v->cuda_major = v->cuda.majors[0];
		}
	}
	v->target_mutation = v->activation == XP_AGENT_INJECTION_REQUIRED;
	/* 4. */
	for (i = 0; i < 2; i++) {
		const struct xp_endpoint_check *ep = i == 0 ? &v->start : &v->end;

		offset_issue(v, ep, i == 0 ? "start" : "end", opts && opts->unsafe_offset);
	}
	if (v->needs_ebpf && !xp_host_ebpf_capable(why, sizeof(why)))
		xp_issue_add(v->issues, &v->nissues, XPROBE_E_PERMISSION_DENIED,
		      "required eBPF probe capability is unavailable (%s)", why);
	if (v->activation == XP_AGENT_STARTUP_REQUIRED) {
		const char *lib = v->agent_library[0] ? v->agent_library : "<path of libxprobe.so>";
		struct xp_issue *is = &v->issues[v->nissues];
		size_t before = v->nissues;

		xp_issue_add(v->issues, &v->nissues, XPROBE_E_CUPTI_AGENT_NOT_LOADED,
		      "NVTX ranges cannot be enabled by online attach after NVTX initialization, and no xprobe Agent is mapped in the target; restart the target with NVTX_INJECTION64_PATH=%s set before its first NVTX call",
		      lib);
		if (v->nissues > before)
			snprintf(is->hint, sizeof(is->hint),
				 "restart the target with NVTX_INJECTION64_PATH=%s in its environment", lib);
	}
	if (v->needs_cupti && v->cuda.nmajors > 1) {
		char list[64] = "";
		size_t off = 0;

		for (i = 0; i < v->cuda.nmajors; i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%d",
						i ? ", " : "", v->cuda.majors[i]);
		xp_issue_add(v->issues, &v->nissues, XPROBE_E_UNSUPPORTED_CUDA_VERSION,
		      "target maps conflicting CUDA/CUPTI majors [%s]", list);
	} else if (v->needs_cupti && v->cuda.nmajors == 1 &&
		   !xp_cuda_major_supported(v->cuda.majors[0])) {
		xp_issue_add(v->issues, &v->nissues, XPROBE_E_UNSUPPORTED_CUDA_VERSION,
		      "CUDA/CUPTI major %d is unsupported; expected 12 or 13", v->cuda.majors[0]);
	}
	/* 5. */
	v->compatible = xp_validate_policy_mask(&v->start, &v->end);
	if (opts && opts->correlator_mask)
		v->compatible &= opts->correlator_mask(start, end) | P(XP_POLICY_FIRST_AFTER) |
				 P(XP_POLICY_NEAREST);
	xp_validate_recommend(v->compatible, &v->recommended, &v->reason);
	if (!(v->compatible & P(policy)))
		xp_issue_add(v->issues, &v->nissues, XPROBE_E_INVALID_CORRELATION_POLICY, "%s",
		      policy_issue_text(policy));
	/* 6. */
	if (v->activation == XP_AGENT_INJECTION_REQUIRED)
		injection_warning(v);
	if ((xp_selector_is_activity(start) || start->kind == XP_SEL_CUDA_API ||
	     xp_selector_is_activity(end) || end->kind == XP_SEL_CUDA_API) &&
	    !v->cuda.libcudart && !v->cuda.libcuda)
		no_cuda_warning(v); /* NVTX ranges need no CUDA */
	if (policy == XP_POLICY_FIRST_AFTER)
		xp_warnings_add(&v->warnings, "HEURISTIC_CORRELATION",
				"first-after matching does not prove request-level causality",
				NULL);
	else if (policy == XP_POLICY_NEAREST)
		xp_warnings_add(&v->warnings, "HEURISTIC_CORRELATION",
				"nearest-event matching does not prove request-level causality",
				NULL);
	for (i = 0; i < 2; i++)
		if (broad_kernel(sels[i]))
			xp_warnings_add(
				&v->warnings, "BROAD_EVENT_SELECTOR",
				i == 0 ? "start selector matches every CUDA kernel activity" :
					 "end selector matches every CUDA kernel activity",
				NULL);
	if (opts && opts->unsafe_offset) {
		offset_warning(v, &v->start, "start");
		offset_warning(v, &v->end, "end");
	}
	xp_probe_warnings(v, opts);
	return xp_target_verify(t, err);
}

/* ---- --cpu-sample ------------------------------------------------------------- */

static int perf_open_thread(uint32_t tid)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = 99;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	a.disabled = 1; /* never enabled: nothing is sampled */
	a.exclude_kernel = 1;
	fd = syscall(__NR_perf_event_open, &a, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

/* Version from a file name: python3.12, libpython3.12.so.1.0. */
static bool py_version_from_name(const char *path, unsigned *maj, unsigned *min)
{
	const char *b = strrchr(path, '/') + 1, *p;
	unsigned a = 0, c = 0;

	p = strstr(b, "python");
	if (!p)
		return false;
	p += 6;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		a = a * 10 + (unsigned)(*p++ - '0');
	if (*p++ != '.' || *p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		c = c * 10 + (unsigned)(*p++ - '0');
	*maj = a;
	*min = c;
	return a >= 2 && a < 10;
}

/* Find the mapped CPython runtime: an object that exports Py_Initialize. */
static void find_python(const struct xp_target *t, struct xp_cpu_sample_check *out)
{
	struct xp_error err = { 0 };
	struct xp_target_fs fs;
	struct xp_maps maps;
	size_t *files = NULL, i;
	ssize_t nf;
	int r;

	if (xp_maps_read(t, &maps, &err)) {
		xp_error_clear(&err);
		return;
	}
	if (xp_target_fs_open(t, &fs, &err)) {
		xp_error_clear(&err);
		xp_maps_free(&maps);
		return;
	}
	nf = xp_maps_files(&maps, &files);
	for (r = 0; r < 3 && out->python_status == XP_PY_NOT_PYTHON; r++) {
		for (i = 0; nf > 0 && i < (size_t)nf; i++) {
			const struct xp_map_entry *f = &maps.v[files[i]];
			struct xp_elf elf;
			uint64_t va, size, ver = 0;
			char *access;

			if (xp_target_fs_python_rank(&fs, f) != r ||
			    xp_target_fs_access(&fs, f, &access))
				continue;
			if (xp_elf_open(access, &elf)) {
				free(access);
				continue;
			}
			if (xp_elf_lookup_any(&elf, "Py_Initialize", &va, &size) == 0) {
				snprintf(out->python_binary, sizeof(out->python_binary), "%s",
					 f->path);
				out->python_status = XP_PY_NATIVE_ONLY;
				/* 3.11+: const unsigned long Py_Version = PY_VERSION_HEX */
				if (xp_elf_lookup_any(&elf, "Py_Version", &va, &size) == 0 &&
				    size >= 4 && size <= 8 &&
				    xp_elf_read_va(&elf, va, &ver, size) == 0) {
					out->has_python_version = true;
					out->python_major = (unsigned)(ver >> 24) & 0xff;
					out->python_minor = (unsigned)(ver >> 16) & 0xff;
				} else if (py_version_from_name(f->path, &out->python_major,
								&out->python_minor)) {
					out->has_python_version = true;
				}
			}
			xp_elf_close(&elf);
			free(access);
			if (out->python_status != XP_PY_NOT_PYTHON)
				break;
		}
	}
	free(files);
	xp_target_fs_close(&fs);
	xp_maps_free(&maps);
}

int xp_validate_cpu_sample(const struct xp_target *t, struct xp_cpu_sample_check *out,
			   struct xp_error *err)
{
	struct xp_proc_status st;
	struct xp_check paranoid;
	uint32_t *tids = NULL;
	size_t n = 0, total = 0, i;
	struct xp_perf_map_owners owners;
	struct xp_perf_map_file pm;
	char path[160], base[64];
	int rc, fd;

	memset(out, 0, sizeof(*out));
	out->target = *t;
	rc = xp_target_verify(t, err);
	if (rc)
		return rc;
	rc = xp_proc_threads(t->pid, 64, &tids, &n, &total);
	if (rc)
		return xp_proc_fail(t, "task", rc, err);
	out->threads = total;
	/* perf access on a real thread of the target: the main thread, or
	 * the next one if it exits under us */
	out->perf_errno = ESRCH;
	for (i = 0; i < n; i++) {
		rc = perf_open_thread(tids[i]);
		out->tested_tid = tids[i];
		out->perf_errno = -rc;
		if (rc != -ESRCH)
			break;
	}
	free(tids);
	out->perf_ok = out->perf_errno == 0;
	if (out->perf_ok)
		snprintf(
			out->perf_detail, sizeof(out->perf_detail),
			"opened (disabled) a cpu-clock sampling event with callchains on thread %u",
			out->tested_tid);
	else
		snprintf(out->perf_detail, sizeof(out->perf_detail),
			 "perf_event_open on thread %u failed: %s", out->tested_tid,
			 strerror(out->perf_errno));
	xp_check_sysctl_max("/proc/sys/kernel/perf_event_paranoid", 1, NULL, &paranoid);
	if (paranoid.status != XP_CHECK_UNKNOWN) {
		int64_t v;
		char num[32];

		snprintf(num, sizeof(num), "%.*s", (int)strcspn(paranoid.detail, " "),
			 paranoid.detail);
		if (xpc_parse_i64(num, INT64_MIN, INT64_MAX, &v) == 0) {
			out->has_paranoid = true;
			out->paranoid = v;
		}
	}
	/* Python symbolization */
	find_python(t, out);
	rc = xp_proc_status_read(t->pid, &st);
	if (rc)
		return xp_proc_fail(t, "status", rc, err);
	snprintf(out->perf_map_path, sizeof(out->perf_map_path), "/tmp/perf-%u.map",
		 st.n_nspid ? st.nspid[st.n_nspid - 1] : t->pid);
	xp_proc_base(t->pid, base, sizeof(base)); /* a zombie leader: a live thread's root */
	snprintf(path, sizeof(path), "%s/root%s", base, out->perf_map_path);
	/* present only when measure would read it: the same open and rules */
	xp_perf_map_owners_of(t->pid, &owners);
	fd = xp_perf_map_open(path, &owners, &pm);
	if (fd >= 0) {
		close(fd);
		out->perf_map_present = true;
		out->perf_map_size = pm.size;
		out->python_status = XP_PY_PERF_MAP_PRESENT;
	} else if (out->python_status == XP_PY_NATIVE_ONLY && out->has_python_version &&
		   (out->python_major > 3 || (out->python_major == 3 && out->python_minor >= 12))) {
		out->python_status = XP_PY_PERF_MAP_POSSIBLE;
	}
	if (fd == -EPERM &&
	    xp_perf_map_refused_warning(&out->warnings, out->perf_map_path, &pm, &owners,
					"measure --cpu-sample would not read it either: JIT and Python frames would be unresolved"))
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	if (!out->perf_ok)
		xp_issue_add(out->issues, &out->nissues,
		      out->perf_errno == EACCES || out->perf_errno == EPERM ?
			      XPROBE_E_PERMISSION_DENIED :
			      XPROBE_E_INTERNAL,
		      "%s", out->perf_detail);
	/* "does not write one" is wrong of a refused map: PERF_MAP_REFUSED */
	if (out->python_status == XP_PY_PERF_MAP_POSSIBLE && fd != -EPERM)
		xp_warnings_add(
			&out->warnings, "PYTHON_FRAMES_NATIVE_ONLY",
			"CPython can write /tmp/perf-<pid>.map but this target does not; restart it with -X perf or PYTHONPERFSUPPORT=1 (or call sys.activate_stack_trampoline(\"perf\")) to name Python frames",
			NULL);
	else if (out->python_status == XP_PY_NATIVE_ONLY)
		xp_warnings_add(
			&out->warnings, "PYTHON_FRAMES_NATIVE_ONLY",
			"this CPython (before 3.12) cannot write a perf map; Python frames appear as interpreter frames (_PyEval_EvalFrameDefault)",
			NULL);
	return xp_target_verify(t, err);
}

/* ---- --syscall-aggregate ---------------------------------------------------- */

int xp_validate_syscall_aggregate(const struct xp_target *t, struct xp_syscall_agg_check *out,
				  struct xp_error *err)
{
	uint32_t *tids = NULL;
	size_t n = 0, total = 0;
	char why[256];
	int rc;

	memset(out, 0, sizeof(*out));
	out->target = *t;
	rc = xp_target_verify(t, err);
	if (rc)
		return rc;
	rc = xp_proc_threads(t->pid, 1, &tids, &n, &total);
	free(tids);
	if (rc)
		return xp_proc_fail(t, "task", rc, err);
	out->threads = total;
	rc = xp_target_namespaces(t, &out->ns, err);
	if (rc)
		return rc;
	out->syscall_names = xp_syscall_count();
	out->map_entries = 1024; /* --max-inflight default */
	out->probe_ok = xp_bpf_probe_aggregate(out->map_entries, &out->probe);
	if (!xp_host_ebpf_capable(why, sizeof(why)))
		xp_issue_add(out->issues, &out->nissues, XPROBE_E_PERMISSION_DENIED,
		      "required eBPF probe capability is unavailable (%s)", why);
	if (!out->probe_ok) {
		const struct xp_bpf_step *s = out->probe.map_create.err ? &out->probe.map_create :
					      out->probe.prog_load.err	? &out->probe.prog_load :
									  &out->probe.attach;

		xp_issue_add(out->issues, &out->nissues, xp_bpf_step_code(s),
		      "the eBPF syscall aggregate path cannot load here: %s", s->detail);
	}
	return xp_target_verify(t, err);
}

int xp_bpf_step_code(const struct xp_bpf_step *s)
{
	return s->err == EPERM || s->err == EACCES ? XPROBE_E_PERMISSION_DENIED :
						     XPROBE_E_INTERNAL;
}

void xp_inventory_check_free(struct xp_warnings *w)
{
	xp_warnings_free(w);
}
