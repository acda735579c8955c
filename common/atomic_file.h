/* SPDX-License-Identifier: Apache-2.0 */
/*
 * atomic_file.h - write a file so that readers see either the old file or
 * the complete new one, never a partial one.
 *
 * A temporary ".<base>.xprobe-<pid>-<seq>.tmp" is created beside the target
 * with O_CREAT|O_EXCL and mode 0600, filled, fsync'ed, renamed over the
 * target, and the directory is fsync'ed.  Any failure removes the
 * temporary.  The target keeps mode 0600 whatever the umask.
 */
#ifndef XPC_ATOMIC_FILE_H
#define XPC_ATOMIC_FILE_H

#include <stddef.h>

struct xpc_atomic_file {
	char *path;     /* final path (owned) */
	char *tmp_path; /* temporary path (owned), NULL once committed */
	int fd;         /* open temporary, or -1 */
};

/* Create the temporary.  Return 0 or -errno. */
int xpc_atomic_open(struct xpc_atomic_file *f, const char *path);
/* fsync, rename, fsync the directory.  Return 0 or -errno (temp removed). */
int xpc_atomic_commit(struct xpc_atomic_file *f);
/* Remove the temporary if still there and free; safe after commit and on
 * a zeroed struct. */
void xpc_atomic_abort(struct xpc_atomic_file *f);
/* Convenience: whole buffer in one go. */
int xpc_atomic_write(const char *path, const void *data, size_t len);

/* Test hook (sqlite3FaultSim style): when set, commit fails with this
 * -errno after writing, before the rename.  0 in production. */
extern int xpc_atomic_fault_before_rename;

#endif /* XPC_ATOMIC_FILE_H */
