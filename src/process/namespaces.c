/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces.c - the target's PID and mount namespaces, as a BPF filter
 * needs them: the PID namespace's device and inode (the arguments of
 * bpf_get_ns_current_pid_tgid), the target's PID inside its namespace
 * (the last NSpid entry), and whether xprobe shares either namespace.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "procfs.h"
#include "namespaces.h"

int xp_target_namespaces(const struct xp_target *t, struct xp_target_ns *out, struct xp_error *err)
{
	struct xp_proc_status status;
	struct stat tp, sp, tm, sm;
	char base[64], path[96];
	int rc;

	memset(out, 0, sizeof(*out));
	rc = xp_target_verify(t, err);
	if (rc)
		return rc;
	xp_proc_base(t->pid, base, sizeof(base)); /* a zombie leader: a live thread's */
	snprintf(path, sizeof(path), "%s/ns/pid", base);
	if (stat(path, &tp) < 0)
		return xp_proc_fail(t, "ns/pid", -errno, err);
	snprintf(path, sizeof(path), "%s/ns/mnt", base);
	if (stat(path, &tm) < 0)
		return xp_proc_fail(t, "ns/mnt", -errno, err);
	if (stat("/proc/self/ns/pid", &sp) < 0 || stat("/proc/self/ns/mnt", &sm) < 0)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "cannot stat xprobe's own namespaces: %s", strerror(errno));
	rc = xp_proc_status_read(t->pid, &status);
	if (rc)
		return xp_proc_fail(t, "status", rc, err);
	if (status.n_nspid == 0) {
		/* kernels before 4.1 have no NSpid: only a shared namespace works */
		out->ns_pid = t->pid;
	} else {
		out->ns_pid = status.nspid[status.n_nspid - 1];
	}
	out->pidns_dev = (uint64_t)tp.st_dev;
	out->pidns_ino = (uint64_t)tp.st_ino;
	out->mntns_ino = (uint64_t)tm.st_ino;
	out->same_pidns = tp.st_dev == sp.st_dev && tp.st_ino == sp.st_ino;
	out->same_mntns = tm.st_dev == sm.st_dev && tm.st_ino == sm.st_ino;
	return xp_target_verify(t, err);
}
