/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpfprobe.h - prove, for real, that this process can use eBPF: create a
 * map, load a program, attach it.  Raw bpf(2) calls, no libbpf object,
 * nothing pinned, every fd closed before returning; the only attachment
 * (a raw tracepoint, for the syscall aggregate path) is detached at once
 * and runs a program that only looks a key up.  doctor and validate use
 * these; the collectors (src/collect) do the real work.
 */
#ifndef XP_CHECKS_BPFPROBE_H
#define XP_CHECKS_BPFPROBE_H

#include <stdbool.h>
#include <stddef.h>

/* One step of a probe: 0 = it worked, else the errno it failed with. */
struct xp_bpf_step {
	bool tried;
	int err; /* positive errno, 0 = success */
	char detail[256]; /* what was done, or why it failed (verifier log head) */
};

struct xp_bpf_probe {
	struct xp_bpf_step map_create; /* BPF_MAP_CREATE (hash, u32 -> u64) */
	struct xp_bpf_step prog_load; /* BPF_PROG_LOAD (raw tracepoint type) */
	struct xp_bpf_step attach; /* BPF_RAW_TRACEPOINT_OPEN sys_enter */
};

/*
 * doctor's probe: a one-entry array map and a two-instruction raw
 * tracepoint program (r0 = 0; exit).  Returns true when both worked.
 */
bool xp_bpf_probe_basic(struct xp_bpf_probe *out);

/*
 * The syscall aggregate path: a hash map of @max_entries, a program that
 * looks a key up in it (so the map reference is verified), attached to
 * raw tracepoint sys_enter and detached.  Returns true when all worked.
 */
bool xp_bpf_probe_aggregate(unsigned max_entries, struct xp_bpf_probe *out);

#endif /* XP_CHECKS_BPFPROBE_H */
