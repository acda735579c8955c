/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_doctor.c - the CapabilityReport document (schemas/capability.schema.json)
 * and its human summary.
 *
 * The contract's CapabilityReport is closed: JSON carries exactly its six
 * capabilities, six environment fields and nine checks, in its order.
 * Nothing of ours is dropped, it moves:
 *   - each of our checks is appended to the detail of the contract check
 *     it refines (xp_check_reported_under) as "; <name>: <status>
 *     (<detail>)", e.g. ebpf_permissions "...; bpf_probe: available (...)";
 *   - the user namespace joins ebpf_permissions' detail, the mount
 *     namespace ptrace_scope's (injection needs the target's);
 *   - the CUPTI list is cupti's detail already ("CUDA 13: /path");
 *   - our capabilities (usdt, named_tracepoint, cpu_sampling), the kernel
 *     version, CapEff, container hints and tracefs root are in the human
 *     view, which prints every check on its own line.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "../../common/json.h"
#include "../checks/doctor_checks.h"
#include "report.h"

/* A detail is at most 512 bytes; a contract check reports at most 3 of ours
 * plus a namespace note. */
#define XP_DOCTOR_DETAIL_MAX 2560

static void append(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Append to a NUL-terminated @buf, truncating at @size. */
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

/* The detail of contract check @id with what it reports of ours; NULL when
 * there is nothing at all (JSON null). */
static const char *contract_detail(const struct xp_doctor *d, enum xp_check_id id, char *buf,
				   size_t size)
{
	const struct xp_check *c = &d->checks[id];
	size_t i;

	snprintf(buf, size, "%s", c->has_detail ? c->detail : "");
	for (i = XP_CHK__CONTRACT; i < XP_CHK__COUNT; i++) {
		const struct xp_check *o = &d->checks[i];

		if (xp_check_reported_under((enum xp_check_id)i) != id)
			continue;
		append(buf, size, "%s%s: %s", buf[0] ? "; " : "",
		       xp_check_name((enum xp_check_id)i), xp_check_status_name(o->status));
		if (o->has_detail)
			append(buf, size, " (%s)", o->detail);
	}
	if (id == XP_CHK_EBPF_PERMISSIONS)
		append(buf, size, "%suser_namespace: %s%s", buf[0] ? "; " : "",
		       d->env.user_namespace, d->env.initial_user_namespace ? " (initial)" : "");
	else if (id == XP_CHK_PTRACE_SCOPE)
		append(buf, size, "%smount_namespace: %s", buf[0] ? "; " : "",
		       d->env.mount_namespace);
	return buf[0] ? buf : NULL;
}

void xp_render_doctor_json(struct xpc_json *w, const struct xp_doctor *d)
{
	const struct {
		const char *key;
		bool value;
	} caps[] = {
		{ "uprobe", d->caps.uprobe },
		{ "uretprobe", d->caps.uretprobe },
		{ "tracepoint", d->caps.tracepoint },
		{ "cuda_callback", d->caps.cuda_callback },
		{ "cuda_activity", d->caps.cuda_activity },
		{ "runtime_injection", d->caps.runtime_injection },
	};
	char detail[XP_DOCTOR_DETAIL_MAX];
	size_t i;

	xp_render_doc_begin(w);
	xpc_json_kobj_begin(w, "capabilities");
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		xpc_json_kbool(w, caps[i].key, caps[i].value);
	xpc_json_obj_end(w);

	xpc_json_kobj_begin(w, "environment");
	xpc_json_kstr(w, "operating_system", d->env.operating_system);
	xpc_json_kstr(w, "architecture", d->env.architecture);
	xpc_json_kstr(w, "kernel_release", d->env.kernel_release);
	xpc_json_ku64(w, "effective_uid", d->env.effective_uid);
	xpc_json_kstr(w, "container", d->env.has_container ? d->env.container : NULL);
	xpc_json_kstr(w, "pid_namespace", d->env.pid_namespace);
	xpc_json_obj_end(w);

	xpc_json_kobj_begin(w, "checks");
	for (i = 0; i < XP_CHK__CONTRACT; i++) {
		xpc_json_kobj_begin(w, xp_check_name((enum xp_check_id)i));
		xpc_json_kstr(w, "status", xp_check_status_name(d->checks[i].status));
		xpc_json_kstr(w, "detail",
			      contract_detail(d, (enum xp_check_id)i, detail, sizeof(detail)));
		xpc_json_obj_end(w);
	}
	xpc_json_obj_end(w);
	xpc_json_key(w, "warnings");
	xp_warnings_render(&d->warnings, w);
	xpc_json_obj_end(w);
}

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

void xp_render_doctor_human(FILE *out, const struct xp_doctor *d)
{
	size_t i;

	fprintf(out, "xprobe doctor: %s %s (%s), euid %u%s%s\n", d->env.operating_system,
		d->env.kernel_release, d->env.architecture, d->env.effective_uid,
		d->env.has_container ? ", container " : "",
		d->env.has_container ? d->env.container : "");
	fprintf(out, "kernel %s; CapEff %016" PRIx64 "\n", d->env.kernel_version, d->env.cap_eff);
	fprintf(out, "namespaces: %s, %s, %s%s\n", d->env.pid_namespace, d->env.mount_namespace,
		d->env.user_namespace, d->env.initial_user_namespace ? " (initial)" : "");
	for (i = 0; i < d->env.ncontainer_hints; i++)
		fprintf(out, "container hint: %s\n", d->env.container_hints[i]);
	fprintf(out, "tracefs root: %s\n", d->env.tracefs_root);
	fprintf(out,
		"capabilities: uprobe %s, uretprobe %s, tracepoint %s, named tracepoint %s, usdt %s, cpu sampling %s,\n"
		"  CUDA callback %s, CUDA activity %s, injection %s\n",
		yes(d->caps.uprobe), yes(d->caps.uretprobe), yes(d->caps.tracepoint),
		yes(d->caps.named_tracepoint), yes(d->caps.usdt), yes(d->caps.cpu_sampling),
		yes(d->caps.cuda_callback), yes(d->caps.cuda_activity),
		yes(d->caps.runtime_injection));
	for (i = 0; i < XP_CHK__COUNT; i++)
		fprintf(out, "  %-20s %-11s %s\n", xp_check_name((enum xp_check_id)i),
			xp_check_status_name(d->checks[i].status),
			d->checks[i].has_detail ? d->checks[i].detail : "");
	xp_render_warnings_human(out, &d->warnings);
}

/* The document type the commands emit (output.h). */
XP_DOC_TYPE(xp_doc_doctor, "capability", struct xp_doctor, xp_render_doctor_json,
	    xp_render_doctor_human);
