/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doctor_checks.h - diagnose this machine for xprobe: kernel identity, BTF,
 * effective BPF/perf permission (capabilities, sysctls, and real probes),
 * lockdown, ptrace policy, tracefs, NVIDIA driver / CUDA driver / toolkit
 * / CUPTI / NVML, namespaces and container hints, and the conservative
 * capability booleans derived from them.
 *
 * Every check is data: available / restricted / unavailable / unknown
 * with a detail; a file that cannot be read or parsed makes its check
 * "unknown", never the diagnosis fail.  The check helpers take their
 * paths as arguments so unit tests feed them synthetic files.
 *
 * The contract's checks and their rules (docs/contract.md, "doctor's checks")
 * come first and keep their names; ours follow (bpf_probe, perf_event_open,
 * unprivileged_bpf, tracefs, nvml).  The contract's document is closed, so
 * each of ours is reported inside the detail of the contract check it refines
 * (xp_check_reported_under); our extra capabilities and environment facts are
 * shown by the human view only.  Docs: docs/doctor.md.
 */
#ifndef XP_CHECKS_DOCTOR_CHECKS_H
#define XP_CHECKS_DOCTOR_CHECKS_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "cudalibs.h"

enum xp_check_status {
	XP_CHECK_AVAILABLE = 0,
	XP_CHECK_RESTRICTED,
	XP_CHECK_UNAVAILABLE,
	XP_CHECK_UNKNOWN,
};
const char *xp_check_status_name(enum xp_check_status s);

struct xp_check {
	enum xp_check_status status;
	bool has_detail;
	char detail[512];
};

/* Order = JSON order: the reference's nine checks, then ours. */
enum xp_check_id {
	XP_CHK_BTF = 0,
	XP_CHK_EBPF_PERMISSIONS,
	XP_CHK_KERNEL_LOCKDOWN,
	XP_CHK_PERF_EVENT_PARANOID,
	XP_CHK_PTRACE_SCOPE,
	XP_CHK_NVIDIA_DRIVER,
	XP_CHK_CUDA_DRIVER,
	XP_CHK_CUDA_TOOLKIT,
	XP_CHK_CUPTI,
	XP_CHK__CONTRACT, /* the checks above are the contract's */
	XP_CHK_BPF_PROBE = XP_CHK__CONTRACT,
	XP_CHK_PERF_EVENT_OPEN,
	XP_CHK_UNPRIVILEGED_BPF,
	XP_CHK_TRACEFS,
	XP_CHK_NVML,
	XP_CHK__COUNT
};
const char *xp_check_name(enum xp_check_id id);
/*
 * The contract check whose detail reports @id: a contract check reports
 * itself; bpf_probe, unprivileged_bpf and tracefs -> ebpf_permissions,
 * perf_event_open -> perf_event_paranoid, nvml -> nvidia_driver.
 */
enum xp_check_id xp_check_reported_under(enum xp_check_id id);

#define XP_DOCTOR_MAX_HINTS 8

struct xp_doctor {
	struct {
		/* the contract's six */
		bool uprobe, uretprobe, tracepoint, cuda_callback, cuda_activity;
		bool runtime_injection;
		/* ours (human view only) */
		bool usdt, named_tracepoint, cpu_sampling;
	} caps;
	struct {
		/* the contract's: operating_system, architecture, kernel_release,
		 * effective_uid, container, pid_namespace; the rest are ours
		 * (in check details and the human view) */
		char operating_system[32];
		char architecture[64];
		char kernel_release[128];
		char kernel_version[256];
		uint32_t effective_uid;
		bool has_container;
		char container[32];
		char container_hints[XP_DOCTOR_MAX_HINTS][128];
		size_t ncontainer_hints;
		char pid_namespace[64];
		char mount_namespace[64];
		char user_namespace[64];
		bool initial_user_namespace;
		uint64_t cap_eff;
		char tracefs_root[256];
	} env;
	struct xp_check checks[XP_CHK__COUNT];
	struct xp_cupti_install cupti[2];
	size_t ncupti;
	struct xp_warnings warnings;
};

/* Run every check.  Errors only for what makes a diagnosis impossible
 * (uname fails): INTERNAL. */
int xp_doctor_run(struct xp_doctor *d, struct xp_error *err);
void xp_doctor_free(struct xp_doctor *d);

/*
 * The host eBPF rule shared with validate: euid 0, or CAP_BPF and
 * CAP_PERFMON, or CAP_SYS_ADMIN; and kernel lockdown not restricting.
 * Cheap (two small files); no probe.  @why (optional, 256 bytes) says
 * what is missing.
 */
bool xp_host_ebpf_capable(char *why, size_t size);

/* ---- check helpers (exposed for unit tests) ---------------------------- */

/* A sysctl holding one integer: available when <= @max, restricted
 * above, unknown when absent or malformed.  @note is appended to the
 * detail (may be NULL). */
void xp_check_sysctl_max(const char *path, int64_t max, const char *note, struct xp_check *c);
/* /sys/kernel/security/lockdown: "[none]" selected -> available. */
void xp_check_lockdown(const char *path, struct xp_check *c);
/* BTF: the file exists. */
void xp_check_file_exists(const char *path, struct xp_check *c);
/*
 * Container detection from a root prefix ("" for the real machine):
 * <root>/.dockerenv -> "docker", <root>/run/.containerenv -> "podman",
 * the first of kubepods/containerd/docker/lxc/libpod in <root>/proc/1/cgroup,
 * container=<x> in <root>/proc/1/environ.  Evidence goes to the hints.
 */
void xp_detect_container(const char *root, struct xp_doctor *d);
/* "CUDA_VERSION 13000" in cuda.h -> "13.0"; 0 or -EINVAL. */
int xp_cuda_h_version(const char *text, char *out, size_t size);

#endif /* XP_CHECKS_DOCTOR_CHECKS_H */
