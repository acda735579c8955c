/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_validate.c - the ValidationResult document (schemas/validate.schema.json)
 * and its human summary: the pair form (reference shape, plus a "usdt"
 * endpoint part for python:gc_* and "tracepoint_id" in the linux part),
 * and the two inventory forms (mode "cpu_sample" / "syscall_aggregate").
 * Key order follows the reference's struct order; nullable fields are
 * always present.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "../../common/json.h"
#include "../checks/validate_checks.h"
#include "report.h"

static void render_target(struct xpc_json *w, const struct xp_target *t)
{
	xpc_json_kobj_begin(w, "target");
	xpc_json_ku64(w, "pid", t->pid);
	xpc_json_ku64(w, "process_start_time", t->start_time);
	xpc_json_obj_end(w);
}

static void render_mapping(struct xpc_json *w, const struct xp_mapping *m)
{
	xpc_json_kobj_begin(w, "mapping");
	xpc_json_ku64(w, "start_address", m->start_address);
	xpc_json_ku64(w, "end_address", m->end_address);
	xpc_json_ku64(w, "file_offset", m->file_offset);
	xpc_json_obj_end(w);
}

/* ResolvedProbe, the reference resolve record (schemas/resolve.schema.json). */
void xp_render_resolved_probe_json(struct xpc_json *w, const struct xp_target *t,
				   const struct xp_resolved_probe *p)
{
	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "schema_version", "2.0");
	xpc_json_kbool(w, "ok", true);
	render_target(w, t);
	xpc_json_kstr(w, "selector", p->selector);
	xpc_json_kstr(w, "binary_path", p->binary_path);
	xpc_json_kstr(w, "build_id", p->build_id);
	xpc_json_kstr(w, "object_kind", xp_object_kind_name(p->object_kind));
	xpc_json_kstr(w, "probe_kind", p->is_return ? "uretprobe" : "uprobe");
	xpc_json_kstr(w, "symbol", p->symbol);
	xpc_json_kstr(w, "symbol_demangled", p->symbol_demangled);
	xpc_json_kopt_u64(w, "symbol_virtual_address", p->has_symbol, p->symbol_virtual_address);
	xpc_json_kopt_u64(w, "symbol_size", p->has_symbol, p->symbol_size);
	xpc_json_ku64(w, "file_offset", p->file_offset);
	xpc_json_ku64(w, "runtime_address", p->runtime_address);
	render_mapping(w, &p->mapping);
	xpc_json_obj_end(w);
}

static void render_usdt(struct xpc_json *w, const struct xp_usdt_marker *m)
{
	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "event_type", "usdt");
	xpc_json_kstr(w, "probe_kind", "usdt");
	xpc_json_kstr(w, "provider", m->provider);
	xpc_json_kstr(w, "name", m->name);
	xpc_json_kstr(w, "binary_path", m->binary_path);
	xpc_json_kstr(w, "build_id", m->build_id);
	xpc_json_kstr(w, "object_kind", xp_object_kind_name(m->object_kind));
	xpc_json_ku64(w, "virtual_address", m->pc);
	xpc_json_ku64(w, "file_offset", m->file_offset);
	xpc_json_ku64(w, "runtime_address", m->runtime_address);
	render_mapping(w, &m->mapping);
	xpc_json_kopt_u64(w, "semaphore_address", m->semaphore_address != 0, m->semaphore_address);
	xpc_json_kopt_u64(w, "semaphore_offset", m->semaphore_address != 0, m->semaphore_offset);
	xpc_json_kopt_u64(w, "semaphore_runtime_address", m->semaphore_address != 0,
			  m->semaphore_runtime_address);
	xpc_json_kstr(w, "arguments", m->arguments);
	xpc_json_ku64(w, "locations", m->locations);
	xpc_json_obj_end(w);
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
		xpc_json_kopt_u64(w, "tracepoint_id", ep->has_tracepoint_id, ep->tracepoint_id);
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
	xpc_json_key(w, "usdt");
	if (ep->has_usdt)
		render_usdt(w, &ep->usdt);
	else
		xpc_json_null(w);
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

	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "schema_version", "2.0");
	xpc_json_kbool(w, "ok", true);
	xpc_json_kbool(w, "valid", v->nissues == 0);
	render_target(w, &v->target);
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
	xpc_json_kstr(w, "agent_activation", xp_agent_activation_name(v->activation));
	xpc_json_kbool(w, "target_mutation", v->target_mutation);
	xpc_json_kopt_u64(w, "cuda_major", v->has_cuda_major, (uint64_t)v->cuda_major);
	xpc_json_karr_begin(w, "mapped_cuda_majors");
	for (i = 0; i < v->cuda.nmajors; i++)
		xpc_json_u64(w, (uint64_t)v->cuda.majors[i]);
	xpc_json_arr_end(w);
	xpc_json_kstr(w, "agent_path", v->cuda.agent ? v->cuda.agent_path : NULL);
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
		fprintf(out,
			"       usdt %s:%s in %s: file offset 0x%" PRIx64
			", runtime address 0x%" PRIx64 "%s\n",
			ep->usdt.provider, ep->usdt.name, ep->usdt.binary_path,
			ep->usdt.file_offset, ep->usdt.runtime_address,
			ep->usdt.semaphore_address ? " (semaphore)" : "");
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

void xp_render_validation_human(FILE *out, const struct xp_validation *v)
{
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
	fprintf(out, "\nneeds:%s%s%s; agent %s%s\n", v->needs_ebpf ? " eBPF" : "",
		v->needs_cupti ? " CUPTI" : "", v->needs_clock_alignment ? " clock-alignment" : "",
		xp_agent_activation_name(v->activation),
		v->target_mutation ? " (the target will be modified)" : "");
	for (i = 0; i < v->nissues; i++)
		fprintf(out, "issue %s: %s\n", xprobe_errname(v->issues[i].code),
			v->issues[i].message);
	for (i = 0; i < v->warnings.n; i++)
		fprintf(out, "warning %s: %s\n", v->warnings.v[i].code, v->warnings.v[i].message);
}

/* ---- inventories ----------------------------------------------------------- */

static const char *errno_status(int e)
{
	if (e == 0)
		return "available";
	return e == EPERM || e == EACCES ? "restricted" : "unavailable";
}

void xp_render_cpu_sample_check_json(struct xpc_json *w, const struct xp_cpu_sample_check *c)
{
	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "schema_version", "2.0");
	xpc_json_kbool(w, "ok", true);
	xpc_json_kbool(w, "valid", c->nissues == 0);
	xpc_json_kstr(w, "mode", "cpu_sample");
	render_target(w, &c->target);
	xpc_json_kobj_begin(w, "inventory");
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
	xpc_json_obj_end(w);
	xpc_json_kobj_begin(w, "requirements");
	xpc_json_kbool(w, "needs_ebpf", false);
	xpc_json_kbool(w, "needs_perf_events", true);
	xpc_json_kbool(w, "target_mutation", false);
	xpc_json_obj_end(w);
	render_issues(w, c->issues, c->nissues);
	xpc_json_key(w, "warnings");
	xp_warnings_render(&c->warnings, w);
	xpc_json_obj_end(w);
}

void xp_render_cpu_sample_check_human(FILE *out, const struct xp_cpu_sample_check *c)
{
	size_t i;

	fprintf(out, "%s: --cpu-sample on pid %u (start time %" PRIu64 ")\n",
		c->nissues ? "NOT VALID" : "valid", c->target.pid, c->target.start_time);
	fprintf(out, "threads: %zu\nperf events: %s\n", c->threads, c->perf_detail);
	fprintf(out, "python: %s%s%s; perf map %s %s\n", xp_python_status_name(c->python_status),
		c->python_binary[0] ? " in " : "", c->python_binary, c->perf_map_path,
		c->perf_map_present ? "present" : "absent");
	for (i = 0; i < c->nissues; i++)
		fprintf(out, "issue %s: %s\n", xprobe_errname(c->issues[i].code),
			c->issues[i].message);
	for (i = 0; i < c->warnings.n; i++)
		fprintf(out, "warning %s: %s\n", c->warnings.v[i].code, c->warnings.v[i].message);
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
	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "schema_version", "2.0");
	xpc_json_kbool(w, "ok", true);
	xpc_json_kbool(w, "valid", c->nissues == 0);
	xpc_json_kstr(w, "mode", "syscall_aggregate");
	render_target(w, &c->target);
	xpc_json_kobj_begin(w, "inventory");
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
	xpc_json_obj_end(w);
	xpc_json_kobj_begin(w, "requirements");
	xpc_json_kbool(w, "needs_ebpf", true);
	xpc_json_kbool(w, "needs_perf_events", false);
	xpc_json_kbool(w, "target_mutation", false);
	xpc_json_obj_end(w);
	render_issues(w, c->issues, c->nissues);
	xpc_json_key(w, "warnings");
	xp_warnings_render(&c->warnings, w);
	xpc_json_obj_end(w);
}

void xp_render_syscall_agg_check_human(FILE *out, const struct xp_syscall_agg_check *c)
{
	size_t i;

	fprintf(out, "%s: --syscall-aggregate on pid %u (start time %" PRIu64 ")\n",
		c->nissues ? "NOT VALID" : "valid", c->target.pid, c->target.start_time);
	fprintf(out, "threads: %zu; pid namespace: %s (pid %u inside)\n", c->threads,
		c->ns.same_pidns ? "shared" : "own", c->ns.ns_pid);
	fprintf(out, "bpf: %s; %s; %s; %s\n", c->probe.map_create.detail, c->probe.prog_load.detail,
		c->probe.attach.detail, c->object_load.detail);
	for (i = 0; i < c->nissues; i++)
		fprintf(out, "issue %s: %s\n", xprobe_errname(c->issues[i].code),
			c->issues[i].message);
	for (i = 0; i < c->warnings.n; i++)
		fprintf(out, "warning %s: %s\n", c->warnings.v[i].code, c->warnings.v[i].message);
}
