/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_doctor.c - the CapabilityReport document (schemas/capability.schema.json)
 * and its human summary.  The reference's keys come first in its order;
 * ours (extra capabilities, environment fields, checks, the CUPTI list)
 * follow within each object.
 */
#include <inttypes.h>

#include "../../common/json.h"
#include "../checks/doctor_checks.h"
#include "report.h"

void xp_render_doctor_json(struct xpc_json *w, const struct xp_doctor *d)
{
	char caps[24];
	size_t i;

	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "schema_version", "2.0");
	xpc_json_kbool(w, "ok", true);
	xpc_json_kobj_begin(w, "capabilities");
	xpc_json_kbool(w, "uprobe", d->caps.uprobe);
	xpc_json_kbool(w, "uretprobe", d->caps.uretprobe);
	xpc_json_kbool(w, "tracepoint", d->caps.tracepoint);
	xpc_json_kbool(w, "cuda_callback", d->caps.cuda_callback);
	xpc_json_kbool(w, "cuda_activity", d->caps.cuda_activity);
	xpc_json_kbool(w, "runtime_injection", d->caps.runtime_injection);
	xpc_json_kbool(w, "usdt", d->caps.usdt);
	xpc_json_kbool(w, "named_tracepoint", d->caps.named_tracepoint);
	xpc_json_kbool(w, "cpu_sampling", d->caps.cpu_sampling);
	xpc_json_obj_end(w);

	xpc_json_kobj_begin(w, "environment");
	xpc_json_kstr(w, "operating_system", d->env.operating_system);
	xpc_json_kstr(w, "architecture", d->env.architecture);
	xpc_json_kstr(w, "kernel_release", d->env.kernel_release);
	xpc_json_ku64(w, "effective_uid", d->env.effective_uid);
	xpc_json_kstr(w, "container", d->env.has_container ? d->env.container : NULL);
	xpc_json_kstr(w, "pid_namespace", d->env.pid_namespace);
	xpc_json_kstr(w, "kernel_version", d->env.kernel_version);
	xpc_json_kstr(w, "mount_namespace", d->env.mount_namespace);
	xpc_json_kstr(w, "user_namespace", d->env.user_namespace);
	xpc_json_kbool(w, "initial_user_namespace", d->env.initial_user_namespace);
	snprintf(caps, sizeof(caps), "%016" PRIx64, d->env.cap_eff);
	xpc_json_kstr(w, "effective_capabilities", caps);
	xpc_json_karr_begin(w, "container_hints");
	for (i = 0; i < d->env.ncontainer_hints; i++)
		xpc_json_str(w, d->env.container_hints[i]);
	xpc_json_arr_end(w);
	xpc_json_kstr(w, "tracefs_root", d->env.tracefs_root);
	xpc_json_obj_end(w);

	xpc_json_kobj_begin(w, "checks");
	for (i = 0; i < XP_CHK__COUNT; i++) {
		const struct xp_check *c = &d->checks[i];

		xpc_json_kobj_begin(w, xp_check_name((enum xp_check_id)i));
		xpc_json_kstr(w, "status", xp_check_status_name(c->status));
		xpc_json_kstr(w, "detail", c->has_detail ? c->detail : NULL);
		xpc_json_obj_end(w);
	}
	xpc_json_obj_end(w);
	xpc_json_karr_begin(w, "cupti_libraries");
	for (i = 0; i < d->ncupti; i++) {
		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "major", (uint64_t)d->cupti[i].major);
		xpc_json_kstr(w, "path", d->cupti[i].path);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xpc_json_key(w, "warnings");
	xp_warnings_render(&d->warnings, w);
	xpc_json_obj_end(w);
}

void xp_render_doctor_human(FILE *out, const struct xp_doctor *d)
{
	size_t i;

	fprintf(out, "xprobe doctor: %s %s (%s), euid %u%s%s\n", d->env.operating_system,
		d->env.kernel_release, d->env.architecture, d->env.effective_uid,
		d->env.has_container ? ", container " : "",
		d->env.has_container ? d->env.container : "");
	fprintf(out,
		"capabilities: uprobe %s, tracepoint %s, usdt %s, cpu sampling %s, CUDA %s, injection %s\n",
		d->caps.uprobe ? "yes" : "no", d->caps.tracepoint ? "yes" : "no",
		d->caps.usdt ? "yes" : "no", d->caps.cpu_sampling ? "yes" : "no",
		d->caps.cuda_callback ? "yes" : "no", d->caps.runtime_injection ? "yes" : "no");
	for (i = 0; i < XP_CHK__COUNT; i++)
		fprintf(out, "  %-20s %-11s %s\n", xp_check_name((enum xp_check_id)i),
			xp_check_status_name(d->checks[i].status),
			d->checks[i].has_detail ? d->checks[i].detail : "");
	for (i = 0; i < d->warnings.n; i++)
		fprintf(out, "warning %s: %s\n", d->warnings.v[i].code, d->warnings.v[i].message);
}
