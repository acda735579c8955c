/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces.h - the PID and mount namespaces of a target, compared with
 * xprobe's own: BPF filters a target in another PID namespace by the
 * namespace's device/inode and the target's PID inside it, and a target
 * in another mount namespace has its files reached through /proc/<pid>/root.
 */
#ifndef XP_PROCESS_NAMESPACES_H
#define XP_PROCESS_NAMESPACES_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "identity.h"

/* The target's namespaces as needed to filter it in BPF. */
struct xp_target_ns {
	uint64_t pidns_dev; /* st_dev of /proc/<pid>/ns/pid */
	uint64_t pidns_ino; /* st_ino of /proc/<pid>/ns/pid */
	uint32_t ns_pid; /* the target's PID inside its own namespace (NSpid last) */
	bool same_pidns; /* xprobe and the target share a PID namespace */
	bool same_mntns; /* ... and a mount namespace */
	uint64_t mntns_ino;
};
int xp_target_namespaces(const struct xp_target *t, struct xp_target_ns *out, struct xp_error *err);

#endif /* XP_PROCESS_NAMESPACES_H */
