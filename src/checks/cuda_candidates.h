/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuda_candidates.h - CUDA compute processes (from NVML) that are a given root
 * process or its descendants, each with its identity, parent, executable,
 * command line and GPU UUIDs.  Nothing is attached; the caller picks a
 * candidate and validates it.
 *
 * Steps of xp_discover (numbers repeated in discover.c):
 *   1. identify the root (TARGET_NOT_FOUND / PERMISSION_DENIED);
 *   2. limit must be positive (SESSION_LIMIT_EXCEEDED);
 *   3. NVML compute processes on every GPU (no NVML: CUPTI_NOT_AVAILABLE,
 *      never an empty list), grouped by PID, UUIDs sorted and unique;
 *   4. keep the root and its descendants (xp_proctree_filter);
 *   5. for each: identity, parent, executable, command line; a candidate
 *      that exits meanwhile is dropped with a CANDIDATE_EXITED warning;
 *   6. sort by PID, count, truncate to the limit; verify the root again.
 */
#ifndef XP_CHECKS_CUDA_CANDIDATES_H
#define XP_CHECKS_CUDA_CANDIDATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "../process/identity.h"
#include "../process/procfs.h"

/* The parent of @pid: 0 and *ppid, -ENOENT when @pid is gone. */
typedef int (*xp_ppid_fn)(uint32_t pid, uint32_t *ppid, void *ctx);

/* /proc/<pid>/stat's ppid (ctx unused). */
int xp_proc_ppid(uint32_t pid, uint32_t *ppid, void *ctx);

/*
 * For each of @n candidate PIDs, keep[i] = it is @root or descends from
 * it, following parents through @fn.  The walk stops at PID 0, at a
 * repeated PID (a cycle in synthetic input) and after 4096 steps;
 * gone[i] = the candidate itself had vanished.  An ancestor that vanished
 * mid-walk ends that walk (not kept).  Returns 0 or -ENOMEM.
 */
int xp_proctree_filter(uint32_t root, const uint32_t *cands, size_t n, xp_ppid_fn fn, void *ctx,
		       bool *keep, bool *gone);

struct xp_candidate {
	struct xp_target target;
	uint32_t parent_pid;
	char *executable; /* owned */
	struct xp_argv argv;
	char **gpu_uuids; /* owned, sorted, unique */
	size_t ngpu_uuids;
};

struct xp_discovery {
	struct xp_target root;
	uint64_t limit;
	uint64_t total_candidates;
	bool truncated;
	struct xp_candidate *v; /* sorted by pid, at most limit */
	size_t n;
	struct xp_warnings warnings;
};

int xp_discover(uint32_t root_pid, uint64_t limit, struct xp_discovery *out, struct xp_error *err);
void xp_discovery_free(struct xp_discovery *d);

#endif /* XP_CHECKS_CUDA_CANDIDATES_H */
