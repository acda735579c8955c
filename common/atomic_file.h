/* SPDX-License-Identifier: Apache-2.0 */
/*
 * atomic_file.h - write a file so that readers see either the old file or
 * the complete new one, never a partial one.
 *
 * The content goes into an unnamed temporary (O_TMPFILE, mode 0600) in
 * the target's directory, is fsync'ed, and is linked under the target's
 * name when nothing has it, or linked as ".<base>.xprobe-<pid>-<seq>.tmp"
 * and renamed over a regular file; then the directory is fsync'ed.  A
 * writer killed while writing leaves nothing: the unnamed inode goes with
 * its descriptor.  Where the filesystem has no O_TMPFILE, the named
 * temporary is created with O_CREAT|O_EXCL instead and filled there.
 * Any failure removes the temporary.  Named temporaries of xprobe
 * processes that died (SIGKILL between link and rename, or mid-write
 * without O_TMPFILE) are removed by the next write into that directory
 * (a pid no process holds, a file of our own uid).  The target keeps
 * mode 0600 whatever the umask.
 *
 * Only a regular file is ever replaced.  rename() replaces whatever
 * directory entry has the name -- a FIFO, a device node, a socket, a
 * symlink (to /proc/self/fd/1, or anywhere) -- and xprobe runs as root, so
 * `--events-out /dev/null` would replace the system's /dev/null.  A
 * destination that exists and is not a regular file (by lstat: a symlink
 * is refused, whatever it points to) is refused at open, before anything
 * is written, and again just before the rename; -ELOOP for a symlink,
 * -EISDIR for a directory, -XPC_EFTYPE (common/readfile.h) otherwise,
 * with its st_mode in dest_mode.  A destination absent at commit is
 * created with renameat2(RENAME_NOREPLACE), so one that appears in
 * between is checked again instead of replaced blindly.  What remains is
 * a race in a directory another user can write to: a regular file there
 * swapped for something else between the last check and the rename.
 */
#ifndef XPC_ATOMIC_FILE_H
#define XPC_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>

struct xpc_atomic_file {
	char *path;     /* final path (owned) */
	char *tmp_path; /* temporary name (owned), NULL once committed */
	int fd;         /* open temporary, or -1 */
	bool unnamed;   /* fd is an O_TMPFILE inode: tmp_path is used only to
			   rename it over an existing file */
	unsigned dest_mode; /* st_mode of a refused destination, else 0 */
};

/*
 * Whether @path can be written: its directory exists and we may create
 * files in it, and the destination is absent or a regular file (not a
 * directory, FIFO, device, socket or symbolic link).  For refusing an
 * output before a measurement starts; the write checks again.  0, or
 * -ENOENT / -ENOTDIR (the directory), -EACCES / -EROFS (not writable),
 * -EISDIR, -ELOOP, -XPC_EFTYPE (*mode the type) for the destination.
 */
int xpc_atomic_check(const char *path, unsigned *mode);

/* Check the destination, create the temporary.  Return 0 or -errno
 * (-ELOOP, -EISDIR, -XPC_EFTYPE: see above; f->dest_mode is kept). */
int xpc_atomic_open(struct xpc_atomic_file *f, const char *path);
/* fsync, check the destination again, rename, fsync the directory.
 * Return 0 or -errno (temp removed). */
int xpc_atomic_commit(struct xpc_atomic_file *f);
/* Remove the temporary if still there and free; safe after commit and on
 * a zeroed struct. */
void xpc_atomic_abort(struct xpc_atomic_file *f);
/*
 * Unlink every temporary that exists now (opened, not yet committed or
 * aborted).  Async-signal-safe: for the handler that ends the process on
 * a second SIGINT/SIGTERM/SIGHUP (cancel.h); a cancelled write otherwise
 * stops at its next check and aborts, which removes its temporary.
 */
void xpc_atomic_unlink_inflight(void);
/*
 * Whether two paths name the same file: the same inode when both exist;
 * neither existing, the same name in the same directory (the directories
 * resolved by realpath; raw text where one cannot be resolved).  One
 * existing and the other not: different.  For refusing an output that
 * would replace an input or another output of the same run.
 */
int xpc_same_file(const char *a, const char *b);
/* Convenience: whole buffer in one go. */
int xpc_atomic_write(const char *path, const void *data, size_t len);
/* The same with the file's mode @mode instead of 0600: a file another
 * user's reader takes (a Prometheus textfile, 0644). */
int xpc_atomic_write_mode(const char *path, const void *data, size_t len, unsigned mode);

/* Test hook (sqlite3FaultSim style): when set, commit fails with this
 * -errno after writing, before the rename.  0 in production. */
extern int xpc_atomic_fault_before_rename;
/* Test hook: when set, no O_TMPFILE (the named temporary, as on a
 * filesystem without it).  0 in production. */
extern int xpc_atomic_no_tmpfile;

#endif /* XPC_ATOMIC_FILE_H */
