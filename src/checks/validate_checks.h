/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate_checks.h - the read-only check of a measurement against a live
 * process: resolve both endpoints, derive what collection needs
 * (requirements, Agent activation, CUDA majors), judge the policy, and
 * collect issues and warnings.  `validate` renders the result; `measure`
 * runs the same check before it attaches.  Also the two inventory
 * checks (validate --cpu-sample, validate --syscall-aggregate).
 *
 * Hard errors versus issues (docs/contract.md, "Validation issues"): a
 * selector that cannot be resolved (no such symbol, binary not mapped, no GC
 * markers, no such tracepoint), a target that is gone, and permission to read
 * the target are errors with their codes; everything that makes a resolvable
 * measurement impossible to run here is an issue, and `valid` is false.
 *
 * Issue order (the contract's, same section): INVALID_EVENT_SELECTOR (an
 * offset that is no instruction boundary), PERMISSION_DENIED (no eBPF),
 * CUPTI_AGENT_NOT_LOADED (NVTX without a mapped Agent: startup_required,
 * naming the Agent library of agent_path.h), UNSUPPORTED_CUDA_VERSION,
 * INVALID_CORRELATION_POLICY.  Every recognized endpoint is collectable (host
 * ones by eBPF, cuda: ones by the Agent).
 *
 * Policy compatibility here is stricter than the correlator's, and the
 * caller may narrow it further with the correlator's own mask
 * (opts.correlator_mask), so validate never calls a policy compatible
 * that measure would then refuse.
 */
#ifndef XP_CHECKS_VALIDATE_CHECKS_H
#define XP_CHECKS_VALIDATE_CHECKS_H

#include <stdbool.h>
#include <stdint.h>

#include "../correlate/correlate.h"
#include "../model/error_record.h"
#include "../selector/selector.h"
#include "bpfprobe.h"
#include "cudalibs.h"
#include "../process/identity.h"
#include "../resolve/probe_site.h"
#include "../resolve/resolve.h"
#include "../process/namespaces.h"

enum xp_agent_activation {
	XP_AGENT_NOT_REQUIRED = 0,
	XP_AGENT_ALREADY_LOADED,
	XP_AGENT_INJECTION_REQUIRED,
	XP_AGENT_STARTUP_REQUIRED,
};
const char *xp_checks_activation_name(enum xp_agent_activation a);

enum xp_policy_reason {
	XP_REASON_DETERMINISTIC_KEY = 0, /* "deterministic_correlation_key" */
	XP_REASON_HOST_CALL_FRAME, /* "host_call_frame" */
	XP_REASON_STREAM_ORDER, /* "cuda_stream_order" */
	XP_REASON_TEMPORAL, /* "temporal_order_only" */
};
const char *xp_policy_reason_name(enum xp_policy_reason r);

/* Whether this build collects an endpoint kind live: every kind (host
 * endpoints through eBPF, cuda: ones through the in-process Agent). */
bool xp_endpoint_collectable(const struct xp_selector *sel);

struct xp_endpoint_check {
	const struct xp_selector *sel;
	bool collectable;
	bool has_probe; /* uprobe: the resolved probe */
	struct xp_resolved_probe probe;
	bool has_usdt; /* python GC: the marker */
	struct xp_usdt_marker usdt;
	bool has_tracepoint_id; /* tracepoint: its tracefs id */
	uint64_t tracepoint_id;
};

#define XP_MAX_ISSUES 8

struct xp_issue {
	int code; /* enum xprobe_err */
	char message[512];
	/* a hint for measure's error ("" = the generic one); validate does
	 * not render it: the contract's ValidationIssue is code + message */
	char hint[256];
};

/* Append an issue (at most XP_MAX_ISSUES are kept, in order). */
void xp_issue_add(struct xp_issue *v, size_t *n, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The issue code of a failed BPF step: PERMISSION_DENIED when the kernel
 * refused it (EPERM, EACCES), else INTERNAL. */
int xp_bpf_step_code(const struct xp_bpf_step *s);

struct xp_validation {
	struct xp_target target;
	struct xp_endpoint_check start, end;
	enum xp_policy policy;
	unsigned compatible; /* 1u << enum xp_policy */
	enum xp_policy recommended;
	enum xp_policy_reason reason;
	bool needs_ebpf, needs_cupti, needs_cupti_callback, needs_cupti_activity;
	bool needs_nvtx, needs_clock_alignment, target_mutation;
	enum xp_agent_activation activation;
	struct xp_cuda_mapped cuda; /* read when needs_cupti */
	/* the Agent library measure would inject, or name in the
	 * NVTX_INJECTION64_PATH hint (agent_path.h); "" = none found */
	char agent_library[PATH_MAX];
	bool has_cuda_major; /* exactly one supported major mapped */
	int cuda_major;
	struct xp_issue issues[XP_MAX_ISSUES];
	size_t nissues;
	struct xp_warnings warnings;
};

struct xp_validate_opts {
	/* the correlator's mask for the pair; NULL = no narrowing */
	unsigned (*correlator_mask)(const struct xp_selector *start, const struct xp_selector *end);
	/* --unsafe-offset: a +0x offset whose instruction boundary cannot be
	 * checked (resolve/insn.h) is accepted with an
	 * UNVERIFIED_INSTRUCTION_BOUNDARY warning instead of an issue */
	bool unsafe_offset;
	/* --agent (measure), or NULL: the Agent library is looked up
	 * (agent_path.h) when the pair needs the Agent */
	const char *agent_path;
	/* the cost of a probe pair on this machine, asked only when a uprobe
	 * endpoint's instruction is single-stepped (src/live/probe_cost.h:
	 * xp_live_probe_cost); NULL: the warning carries no figure */
	int (*probe_cost)(struct xp_probe_cost *out);
};

#define XP_WARN_UNVERIFIED_BOUNDARY "UNVERIFIED_INSTRUCTION_BOUNDARY"
/* A uprobe endpoint whose probed instruction the kernel single-steps out
 * of line (probe_warnings.c; details: the site, the measured cost, an
 * emulated offset nearby). */
#define XP_WARN_UPROBE_SINGLE_STEP "UPROBE_SINGLE_STEP"

/* Add the UPROBE_SINGLE_STEP warnings of @v's uprobe endpoints. */
void xp_probe_warnings(struct xp_validation *v, const struct xp_validate_opts *opts);

/*
 * Validate a pair.  @t must come from xp_target_identify.  Errors (hard):
 * resolution codes prefixed "failed to resolve start|end selector: ",
 * TARGET_*, PERMISSION_DENIED, INTERNAL.  @out needs xp_validation_free
 * either way.
 */
int xp_validate_pair(const struct xp_target *t, const struct xp_selector *start,
		     const struct xp_selector *end, enum xp_policy policy,
		     const struct xp_validate_opts *opts, struct xp_validation *out,
		     struct xp_error *err);
void xp_validation_free(struct xp_validation *v);

/* The pure parts, exposed for unit tests. */
unsigned xp_validate_policy_mask(const struct xp_endpoint_check *start,
				 const struct xp_endpoint_check *end);
void xp_validate_recommend(unsigned mask, enum xp_policy *policy, enum xp_policy_reason *reason);

/* ---- inventories ----------------------------------------------------------- */

enum xp_python_status {
	XP_PY_NOT_PYTHON = 0, /* "not_python": no mapped CPython runtime */
	XP_PY_PERF_MAP_PRESENT, /* "perf_map_present": /tmp/perf-<pid>.map exists */
	XP_PY_PERF_MAP_POSSIBLE, /* "perf_map_possible": CPython >= 3.12 can write one */
	XP_PY_NATIVE_ONLY, /* "native_only": CPython < 3.12, native frames only */
};
const char *xp_python_status_name(enum xp_python_status s);

struct xp_cpu_sample_check {
	struct xp_target target;
	size_t threads; /* threads of the target now */
	uint32_t tested_tid; /* the thread perf was opened on */
	bool perf_ok;
	int perf_errno;
	char perf_detail[256];
	bool has_paranoid;
	int64_t paranoid; /* kernel.perf_event_paranoid */
	enum xp_python_status python_status;
	char python_binary[4096]; /* the object exporting the CPython API */
	bool has_python_version;
	unsigned python_major, python_minor;
	char perf_map_path[64]; /* target-side /tmp/perf-<nspid>.map */
	bool perf_map_present;
	uint64_t perf_map_size;
	struct xp_issue issues[XP_MAX_ISSUES];
	size_t nissues;
	struct xp_warnings warnings;
};

/* Errors: TARGET_*, PERMISSION_DENIED (reading the target), INTERNAL. */
int xp_validate_cpu_sample(const struct xp_target *t, struct xp_cpu_sample_check *out,
			   struct xp_error *err);

struct xp_syscall_agg_check {
	struct xp_target target;
	size_t threads;
	struct xp_target_ns ns;
	struct xp_bpf_probe probe; /* the aggregate path, for real */
	bool probe_ok;
	/* the real syscall_agg object loaded (not attached); filled by the
	 * caller, which can reach src/collect (xp_inv_sa_load_check) */
	struct xp_bpf_step object_load;
	unsigned map_entries; /* inflight map size probed */
	size_t syscall_names; /* entries of the x86_64 name table */
	struct xp_issue issues[XP_MAX_ISSUES];
	size_t nissues;
	struct xp_warnings warnings;
};

int xp_validate_syscall_aggregate(const struct xp_target *t, struct xp_syscall_agg_check *out,
				  struct xp_error *err);
void xp_inventory_check_free(struct xp_warnings *w);

#endif /* XP_CHECKS_VALIDATE_CHECKS_H */
