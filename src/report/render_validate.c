/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_validate.c - the ValidationResult document (schemas/validate.schema.json)
 * and its human summary, and the InventoryValidationResult of the two
 * inventory checks (schemas/inventory-validation.schema.json, mode
 * "cpu_sample" / "syscall_aggregate": a type the contract does not define).
 *
 * The pair form is the contract's closed ValidationResult, field for
 * field, in its struct order; nullable fields are always present.  What
 * is ours moves where the contract leaves room:
 *   - a python:gc_* endpoint's USDT marker is its "host" ResolvedProbe
 *     with probe_kind "usdt" (the contract's HostProbeKind has it): symbol
 *     = marker name, symbol_virtual_address = the note's address; the
 *     provider, semaphore, argument spec and call-site count are in the
 *     human view;
 *   - a named tracepoint's tracefs id is in the human view;
 *   - the mapped CUDA majors are in the TARGET_PROCESS_WILL_BE_MODIFIED
 *     warning's details (src/checks/validate_checks.c) and, with the
 *     mapped Agent's path, in the human view.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "../../common/json.h"
#include "../checks/validate_checks.h"
#include "report.h"

/* The fields of a ResolvedProbe record, from a uprobe or a USDT marker. */
struct probe_record {
	const char *selector, *binary_path, *build_id, *probe_kind;
	const char *symbol, *symbol_demangled;
	enum xp_object_kind object_kind;
	bool has_address, has_size;
	uint64_t symbol_virtual_address, symbol_size, file_offset, runtime_address;
	const struct xp_mapping *mapping;
};

/* ResolvedProbe, the reference resolve record (schemas/resolve.schema.json). */
static void render_probe_record(struct xpc_json *w, const struct xp_target *t,
				const struct probe_record *r)
{
	xp_render_doc_begin(w);
	xp_render_identity(w, "target", t->pid, t->start_time);
	xpc_json_kstr(w, "selector", r->selector);
	xpc_json_kstr(w, "binary_path", r->binary_path);
	xpc_json_kstr(w, "build_id", r->build_id);
	xpc_json_kstr(w, "object_kind", xp_object_kind_name(r->object_kind));
	xpc_json_kstr(w, "probe_kind", r->probe_kind);
	xpc_json_kstr(w, "symbol", r->symbol);
	xpc_json_kstr(w, "symbol_demangled", r->symbol_demangled);
	xpc_json_kopt_u64(w, "symbol_virtual_address", r->has_address, r->symbol_virtual_address);
	xpc_json_kopt_u64(w, "symbol_size", r->has_size, r->symbol_size);
	xpc_json_ku64(w, "file_offset", r->file_offset);
	xpc_json_ku64(w, "runtime_address", r->runtime_address);
	xpc_json_kobj_begin(w, "mapping");
	xpc_json_ku64(w, "start_address", r->mapping->start_address);
	xpc_json_ku64(w, "end_address", r->mapping->end_address);
	xpc_json_ku64(w, "file_offset", r->mapping->file_offset);
	xpc_json_obj_end(w);
	xpc_json_obj_end(w);
}

void xp_render_resolved_probe_json(struct xpc_json *w, const struct xp_target *t,
				   const struct xp_resolved_probe *p)
{
	const struct probe_record r = {
		.selector = p->selector,
		.binary_path = p->binary_path,
		.build_id = p->build_id,
		.probe_kind = p->is_return ? "uretprobe" : "uprobe",
		.symbol = p->symbol,
		.symbol_demangled = p->symbol_demangled,
		.object_kind = p->object_kind,
		.has_address = p->has_symbol,
		.has_size = p->has_symbol,
		.symbol_virtual_address = p->symbol_virtual_address,
		.symbol_size = p->symbol_size,
		.file_offset = p->file_offset,
		.runtime_address = p->runtime_address,
		.mapping = &p->mapping,
	};

	render_probe_record(w, t, &r);
}

/* A python:gc_* endpoint's marker as the contract's ResolvedProbe. */
static void render_usdt_probe(struct xpc_json *w, const struct xp_target *t, const char *selector,
			      const struct xp_usdt_marker *m)
{
	const struct probe_record r = {
		.selector = selector,
		.binary_path = m->binary_path,
		.build_id = m->build_id,
		.probe_kind = "usdt",
		.symbol = m->name,
		.object_kind = m->object_kind,
		.has_address = true,
		.symbol_virtual_address = m->pc,
		.file_offset = m->file_offset,
		.runtime_address = m->runtime_address,
		.mapping = &m->mapping,
	};

	render_probe_record(w, t, &r);
}

static bool cuda_kind(const struct xp_selector *s)
{
	return s->kind == XP_SEL_CUDA_API || s->kind == XP_SEL_KERNEL || s->kind == XP_SEL_MEMCPY ||
	       s->kind == XP_SEL_MEMSET || s->kind == XP_SEL_NVTX;
}

static void render_endpoint(struct xpc_json *w, const char *key, const struct xp_target *t,
			    const struct xp_endpoint_check *ep)
{
	const struct xp_selector *s = ep->sel;

	xpc_json_kobj_begin(w, key);
	xpc_json_kstr(w, "selector", s->text);
	xpc_json_kstr(w, "source", cuda_kind(s) ? "cuda" : "host");
	xpc_json_kstr(w, "event_type", xp_event_type_name(s->event_type));
	xpc_json_kbool(w, "collectable", ep->collectable);
	xpc_json_key(w, "host");
	if (ep->has_probe)
		xp_render_resolved_probe_json(w, t, &ep->probe);
	else if (ep->has_usdt)
		render_usdt_probe(w, t, s->text, &ep->usdt);
	else
		xpc_json_null(w);
	xpc_json_key(w, "linux");
	if (s->kind == XP_SEL_SYSCALL || s->kind == XP_SEL_TRACEPOINT) {
		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "event_type", xp_event_type_name(s->event_type));
		xpc_json_kstr(w, "probe_kind",
			      s->kind == XP_SEL_SYSCALL ? "syscall" : "tracepoint");
		xpc_json_kstr(w, "category", s->kind == XP_SEL_SYSCALL ? "syscalls" : s->category);
		xpc_json_kstr(w, "name", s->name);
		xpc_json_kopt_u64(w, "syscall_number",
				  s->kind == XP_SEL_SYSCALL && s->syscall_nr >= 0,
				  (uint64_t)s->syscall_nr);
		xpc_json_obj_end(w);
	} else {
		xpc_json_null(w);
	}
	xpc_json_key(w, "cuda");
	if (cuda_kind(s)) {
		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "event_type", xp_event_type_name(s->event_type));
		xpc_json_kstr(w, "api_domain", s->kind == XP_SEL_CUDA_API ? s->category : NULL);
		xpc_json_kstr(w, "api_name", s->kind == XP_SEL_CUDA_API ? s->name : NULL);
		xpc_json_kstr(w, "kernel_name_regex", s->kind == XP_SEL_KERNEL ? s->regex : NULL);
		xpc_json_kstr(w, "nvtx_name_regex", s->kind == XP_SEL_NVTX ? s->regex : NULL);
		xpc_json_kstr(w, "memcpy_kind",
			      s->kind == XP_SEL_MEMCPY && s->has_memcpy_kind ?
				      xp_memcpy_kind_name(s->memcpy_kind) :
				      NULL);
		xpc_json_obj_end(w);
	} else {
		xpc_json_null(w);
	}
	xpc_json_obj_end(w);
}

static void render_issues(struct xpc_json *w, const struct xp_issue *v, size_t n)
{
	size_t i;

	xpc_json_karr_begin(w, "issues");
	for (i = 0; i < n; i++) {
		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "code", xprobe_errname(v[i].code));
		xpc_json_kstr(w, "message", v[i].message);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
}

void xp_render_validation_json(struct xpc_json *w, const struct xp_validation *v)
{
	static const enum xp_policy order[] = { XP_POLICY_STACK_NESTED, XP_POLICY_EXACT,
						XP_POLICY_STREAM_ORDER, XP_POLICY_FIRST_AFTER,
						XP_POLICY_NEAREST };
	size_t i;

	xp_render_doc_begin(w);
	xpc_json_kbool(w, "valid", v->nissues == 0);
	xp_render_identity(w, "target", v->target.pid, v->target.start_time);
	render_endpoint(w, "start", &v->target, &v->start);
	render_endpoint(w, "end", &v->target, &v->end);
	xpc_json_kstr(w, "match_policy", xp_policy_snake(v->policy));
	xpc_json_kobj_begin(w, "policy_recommendation");
	xpc_json_kstr(w, "policy", xp_policy_snake(v->recommended));
	xpc_json_kstr(w, "reason", xp_policy_reason_name(v->reason));
	xpc_json_karr_begin(w, "compatible_policies");
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (v->compatible & (1u << order[i]))
			xpc_json_str(w, xp_policy_snake(order[i]));
	xpc_json_arr_end(w);
	xpc_json_obj_end(w);
	xpc_json_kobj_begin(w, "requirements");
	xpc_json_kbool(w, "needs_ebpf", v->needs_ebpf);
	xpc_json_kbool(w, "needs_cupti", v->needs_cupti);
	xpc_json_kbool(w, "needs_cupti_callback", v->needs_cupti_callback);
	xpc_json_kbool(w, "needs_cupti_activity", v->needs_cupti_activity);
	xpc_json_kbool(w, "needs_nvtx", v->needs_nvtx);
	xpc_json_kbool(w, "needs_clock_alignment", v->needs_clock_alignment);
	xpc_json_kstr(w, "agent_activation", xp_checks_activation_name(v->activation));
	xpc_json_kbool(w, "target_mutation", v->target_mutation);
	xpc_json_obj_end(w);
	render_issues(w, v->issues, v->nissues);
	xpc_json_key(w, "warnings");
	xp_warnings_render(&v->warnings, w);
	xpc_json_obj_end(w);
}

static void human_endpoint(FILE *out, const char *label, const struct xp_endpoint_check *ep)
{
	const struct xp_selector *s = ep->sel;

	fprintf(out, "%-6s %s\n", label, s->text);
	if (ep->has_probe) {
		const struct xp_resolved_probe *p = &ep->probe;

		fprintf(out,
			"       %s %s in %s (%s): file offset 0x%" PRIx64
			", runtime address 0x%" PRIx64 "\n",
			p->is_return ? "uretprobe" : "uprobe",
			p->symbol_demangled ? p->symbol_demangled :
			p->symbol	    ? p->symbol :
					      "(offset)",
			p->binary_path, xp_object_kind_name(p->object_kind), p->file_offset,
			p->runtime_address);
	} else if (ep->has_usdt) {
		const struct xp_usdt_marker *m = &ep->usdt;

		fprintf(out,
			"       usdt %s:%s in %s (%s): address 0x%" PRIx64
			", file offset 0x%" PRIx64 ", runtime address 0x%" PRIx64
			"; arguments \"%s\"; %u call site%s\n",
			m->provider, m->name, m->binary_path, xp_object_kind_name(m->object_kind),
			m->pc, m->file_offset, m->runtime_address, m->arguments, m->locations,
			m->locations == 1 ? "" : "s");
		if (m->semaphore_address)
			fprintf(out,
				"       semaphore at 0x%" PRIx64 " (file offset 0x%" PRIx64
				", runtime address 0x%" PRIx64
				"): the kernel counts it up while attached\n",
				m->semaphore_address, m->semaphore_offset,
				m->semaphore_runtime_address);
		else
			fprintf(out, "       no semaphore\n");
	} else if (s->kind == XP_SEL_SYSCALL) {
		fprintf(out, "       syscall %s (x86_64 number %d), raw tracepoint\n", s->name,
			s->syscall_nr);
	} else if (s->kind == XP_SEL_TRACEPOINT) {
		fprintf(out, "       tracepoint %s:%s (tracefs id %" PRIu64 ")\n", s->category,
			s->name, ep->tracepoint_id);
	} else {
		fprintf(out, "       CUDA endpoint%s\n",
			ep->collectable ? "" : ", not collected by this build");
	}
}

/* "issue CODE: message" lines, then the warnings. */
static void human_findings(FILE *out, const struct xp_issue *v, size_t n,
			   const struct xp_warnings *ws)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(out, "issue %s: %s\n", xprobe_errname(v[i].code), v[i].message);
	xp_render_warnings_human(out, ws);
}

void xp_render_validation_human(FILE *out, const struct xp_validation *v)
{
	bool cupti;
	size_t i;

	fprintf(out, "%s: pid %u (start time %" PRIu64 ")\n", v->nissues ? "NOT VALID" : "valid",
		v->target.pid, v->target.start_time);
	human_endpoint(out, "start", &v->start);
	human_endpoint(out, "end", &v->end);
	fprintf(out, "policy %s; recommended %s (%s); compatible:", xp_policy_kebab(v->policy),
		xp_policy_kebab(v->recommended), xp_policy_reason_name(v->reason));
	for (i = 0; i < XP_POLICY__COUNT; i++)
		if (v->compatible & (1u << i))
			fprintf(out, " %s", xp_policy_kebab((enum xp_policy)i));
	/* NVTX ranges come through the Agent's NVTX injection, not CUPTI: the
	 * contract's needs_cupti_callback counts them, a person is told what
	 * they need */
	cupti = v->needs_cupti_activity || v->start.sel->kind == XP_SEL_CUDA_API ||
		v->end.sel->kind == XP_SEL_CUDA_API;
	fprintf(out, "\nneeds:%s%s%s%s; agent %s%s\n", v->needs_ebpf ? " eBPF" : "",
		cupti ? " CUPTI" : "", v->needs_nvtx ? " NVTX (the Agent, loaded at start)" : "",
		v->needs_clock_alignment ? " clock-alignment" : "",
		xp_checks_activation_name(v->activation),
		v->target_mutation ? " (the target will be modified)" : "");
	if (v->needs_cupti) {
		fprintf(out, "CUDA: mapped majors [");
		for (i = 0; i < v->cuda.nmajors; i++)
			fprintf(out, "%s%d", i ? ", " : "", v->cuda.majors[i]);
		fprintf(out, "]");
		if (v->has_cuda_major)
			fprintf(out, ", major %d", v->cuda_major);
		if (v->cuda.agent)
			fprintf(out, ", Agent mapped: %s", v->cuda.agent_path);
		else if (v->agent_library[0])
			fprintf(out, ", Agent library: %s", v->agent_library);
		fprintf(out, "\n");
	}
	human_findings(out, v->issues, v->nissues, &v->warnings);
}

/* ---- inventories ----------------------------------------------------------- */

static const char *errno_status(int e)
{
	if (e == 0)
		return "available";
	return e == EPERM || e == EACCES ? "restricted" : "unavailable";
}

/* InventoryValidationResult head, up to the open "inventory" object. */
static void inventory_begin(struct xpc_json *w, const char *mode, bool valid,
			    const struct xp_target *t)
{
	xp_render_doc_begin(w);
	xpc_json_kbool(w, "valid", valid);
	xpc_json_kstr(w, "mode", mode);
	xp_render_identity(w, "target", t->pid, t->start_time);
	xpc_json_kobj_begin(w, "inventory");
}

/* ... and its tail, from the end of "inventory" to the end of the document. */
static void inventory_end(struct xpc_json *w, bool needs_ebpf, const struct xp_issue *issues,
			  size_t nissues, const struct xp_warnings *ws)
{
	xpc_json_obj_end(w);
	xpc_json_kobj_begin(w, "requirements");
	xpc_json_kbool(w, "needs_ebpf", needs_ebpf);
	xpc_json_kbool(w, "needs_perf_events", !needs_ebpf);
	xpc_json_kbool(w, "target_mutation", false);
	xpc_json_obj_end(w);
	render_issues(w, issues, nissues);
	xpc_json_key(w, "warnings");
	xp_warnings_render(ws, w);
	xpc_json_obj_end(w);
}

void xp_render_cpu_sample_check_json(struct xpc_json *w, const struct xp_cpu_sample_check *c)
{
	inventory_begin(w, "cpu_sample", c->nissues == 0, &c->target);
	xpc_json_ku64(w, "threads", c->threads);
	xpc_json_kobj_begin(w, "perf_event");
	xpc_json_kstr(w, "status", errno_status(c->perf_errno));
	xpc_json_ku64(w, "tested_tid", c->tested_tid);
	xpc_json_kstr(w, "detail", c->perf_detail);
	xpc_json_kopt_i64(w, "perf_event_paranoid", c->has_paranoid, c->paranoid);
	xpc_json_obj_end(w);
	xpc_json_kobj_begin(w, "python");
	xpc_json_kstr(w, "status", xp_python_status_name(c->python_status));
	xpc_json_kstr(w, "binary_path", c->python_binary[0] ? c->python_binary : NULL);
	xpc_json_key(w, "version");
	if (c->has_python_version) {
		char v[32];

		snprintf(v, sizeof(v), "%u.%u", c->python_major, c->python_minor);
		xpc_json_str(w, v);
	} else {
		xpc_json_null(w);
	}
	xpc_json_kstr(w, "perf_map_path", c->perf_map_path);
	xpc_json_kbool(w, "perf_map_present", c->perf_map_present);
	xpc_json_kopt_u64(w, "perf_map_size", c->perf_map_present, c->perf_map_size);
	xpc_json_obj_end(w);
	inventory_end(w, false, c->issues, c->nissues, &c->warnings);
}

void xp_render_cpu_sample_check_human(FILE *out, const struct xp_cpu_sample_check *c)
{
	fprintf(out, "%s: --cpu-sample on pid %u (start time %" PRIu64 ")\n",
		c->nissues ? "NOT VALID" : "valid", c->target.pid, c->target.start_time);
	fprintf(out, "threads: %zu\nperf events: %s\n", c->threads, c->perf_detail);
	fprintf(out, "python: %s%s%s; perf map %s %s\n", xp_python_status_name(c->python_status),
		c->python_binary[0] ? " in " : "", c->python_binary, c->perf_map_path,
		c->perf_map_present ? "present" : "absent");
	human_findings(out, c->issues, c->nissues, &c->warnings);
}

static void render_step(struct xpc_json *w, const char *key, const struct xp_bpf_step *s)
{
	xpc_json_kobj_begin(w, key);
	xpc_json_kstr(w, "status", s->tried ? errno_status(s->err) : "unknown");
	xpc_json_kstr(w, "detail", s->tried ? s->detail : "not tried: an earlier step failed");
	xpc_json_obj_end(w);
}

void xp_render_syscall_agg_check_json(struct xpc_json *w, const struct xp_syscall_agg_check *c)
{
	inventory_begin(w, "syscall_aggregate", c->nissues == 0, &c->target);
	xpc_json_ku64(w, "threads", c->threads);
	xpc_json_kobj_begin(w, "namespace");
	xpc_json_kbool(w, "same_pid_namespace", c->ns.same_pidns);
	xpc_json_ku64(w, "namespace_pid", c->ns.ns_pid);
	xpc_json_ku64(w, "pid_namespace_inode", c->ns.pidns_ino);
	xpc_json_obj_end(w);
	xpc_json_kobj_begin(w, "bpf");
	render_step(w, "map_create", &c->probe.map_create);
	render_step(w, "program_load", &c->probe.prog_load);
	render_step(w, "raw_tracepoint_attach", &c->probe.attach);
	render_step(w, "aggregate_object_load", &c->object_load);
	xpc_json_obj_end(w);
	xpc_json_ku64(w, "inflight_map_entries", c->map_entries);
	xpc_json_ku64(w, "syscall_names", c->syscall_names);
	inventory_end(w, true, c->issues, c->nissues, &c->warnings);
}

void xp_render_syscall_agg_check_human(FILE *out, const struct xp_syscall_agg_check *c)
{
	fprintf(out, "%s: --syscall-aggregate on pid %u (start time %" PRIu64 ")\n",
		c->nissues ? "NOT VALID" : "valid", c->target.pid, c->target.start_time);
	fprintf(out, "threads: %zu; pid namespace: %s (pid %u inside)\n", c->threads,
		c->ns.same_pidns ? "shared" : "own", c->ns.ns_pid);
	fprintf(out, "bpf: %s; %s; %s; %s\n", c->probe.map_create.detail, c->probe.prog_load.detail,
		c->probe.attach.detail, c->object_load.detail);
	human_findings(out, c->issues, c->nissues, &c->warnings);
}

/* The document types the commands emit (output.h). */
XP_DOC_TYPE(xp_doc_validation, "validate", struct xp_validation, xp_render_validation_json,
	    xp_render_validation_human);
XP_DOC_TYPE(xp_doc_cpu_sample_check, "inventory-validation", struct xp_cpu_sample_check,
	    xp_render_cpu_sample_check_json, xp_render_cpu_sample_check_human);
XP_DOC_TYPE(xp_doc_syscall_agg_check, "inventory-validation", struct xp_syscall_agg_check,
	    xp_render_syscall_agg_check_json, xp_render_syscall_agg_check_human);
